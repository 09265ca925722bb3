/* hs_json.c - duplicate keys and trailing data in JSON text (see hs_json.h).
 *
 * A small recursive scanner over text a JSON parser has already accepted: it decodes each
 * object's keys, sorts them and reports the duplicate whose second occurrence comes first
 * in the file. Depth is bounded as cJSON bounds it. */
#include "common/hs_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS_JSON_MAX_DEPTH 1000

typedef struct {
    const char *s; /* the key as a parser sees it: into the text when it has no escape */
    size_t n;      /* its bytes (up to a decoded NUL) */
    char *own;     /* s when decoded here (malloc'ed), else NULL */
    size_t off;    /* byte offset of its opening quote */
} hs_jkey_t;

#define HS_JSON_KEYS_ON_STACK 16

typedef struct {
    const char *t;
    size_t len, pos;
    int bad;            /* malformed or out of memory: msg says which */
    const char *msg;
    size_t dup_off;     /* earliest duplicate's second occurrence, SIZE_MAX for none */
    char dup_key[80];
} hs_jscan_t;

static int fail(hs_jscan_t *s, const char *msg)
{
    if (!s->bad) {
        s->bad = 1;
        s->msg = msg;
    }
    return -1;
}

static void skip_ws(hs_jscan_t *s)
{
    while (s->pos < s->len && (s->t[s->pos] == ' ' || s->t[s->pos] == '\t' ||
                               s->t[s->pos] == '\n' || s->t[s->pos] == '\r'))
        s->pos++;
}

/* After a member of an object or an array: 1 on ',' (another member follows), 0 on the
 * closing character (consumed), -1 (failed with what) on anything else. */
static int list_next(hs_jscan_t *s, char close, const char *what)
{
    skip_ws(s);
    if (s->pos < s->len && (s->t[s->pos] == ',' || s->t[s->pos] == close))
        return s->t[s->pos++] == ',';
    return fail(s, what);
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xc0 | cp >> 6);
        d[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | cp >> 12);
        d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        d[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    d[0] = (char)(0xf0 | cp >> 18);
    d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* One escape at s->t[s->pos] (after the backslash); the code point in *cp. */
static int escape(hs_jscan_t *s, unsigned *cp)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit;
    unsigned lo;

    if (s->pos >= s->len)
        return fail(s, "unterminated string");
    if (s->t[s->pos] != 'u') {
        if (!(hit = memchr(from, s->t[s->pos], sizeof(from) - 1)))
            return fail(s, "bad escape");
        *cp = (unsigned char)to[hit - from];
        s->pos++;
        return 0;
    }
    if (s->len - s->pos < 5 || hex4(s->t + s->pos + 1, cp))
        return fail(s, "bad \\u escape");
    s->pos += 5;
    if (*cp >= 0xd800 && *cp < 0xdc00 && s->len - s->pos >= 6 && s->t[s->pos] == '\\' &&
        s->t[s->pos + 1] == 'u' && hex4(s->t + s->pos + 2, &lo) == 0 && lo >= 0xdc00 &&
        lo < 0xe000) {
        *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
        s->pos += 6;
    }
    return 0;
}

/* A key at s->pos (its quote): k->s points into the text when the key has no escape and no
 * NUL byte (the usual case: no allocation), else to its decoded copy. */
static int string(hs_jscan_t *s, char **out);

static int key(hs_jscan_t *s, hs_jkey_t *k)
{
    size_t start = s->pos + 1, e = start;

    while (e < s->len && s->t[e] != '"' && s->t[e] != '\\' && s->t[e] != '\0')
        e++;
    k->off = s->pos;
    k->own = NULL;
    if (e < s->len && s->t[e] == '"') {
        k->s = s->t + start;
        k->n = e - start;
        s->pos = e + 1;
        return 0;
    }
    if (string(s, &k->own))
        return -1;
    k->s = k->own;
    k->n = strlen(k->own);
    return 0;
}

/* A string at s->pos (its quote); decoded into *out (malloc'ed) when out is non-NULL. */
static int string(hs_jscan_t *s, char **out)
{
    size_t start = ++s->pos, n = 0;
    char *d = NULL;
    int ended = 0; /* a decoded NUL ends the key as a C parser sees it */

    if (out && !(d = malloc(s->len - start + 1)))
        return fail(s, "out of memory");
    while (s->pos < s->len && s->t[s->pos] != '"') {
        unsigned cp = (unsigned char)s->t[s->pos++];
        char enc[4];
        size_t k = 1;

        if (cp == '\\') {
            if (escape(s, &cp))
                break;
            k = put_utf8(enc, cp);
        } else {
            enc[0] = (char)cp;
        }
        if (cp == 0)
            ended = 1;
        if (d && !ended) {
            memcpy(d + n, enc, k);
            n += k;
        }
    }
    if (s->bad || s->pos >= s->len) {
        free(d);
        return fail(s, "unterminated string");
    }
    s->pos++;
    if (d) {
        d[n] = '\0';
        *out = d;
    }
    return 0;
}

static int key_eq(const hs_jkey_t *x, const hs_jkey_t *y)
{
    return x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
}

static int key_cmp(const void *a, const void *b)
{
    const hs_jkey_t *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);

    if (c || x->n != y->n)
        return c ? c : (x->n > y->n) - (x->n < y->n);
    return (x->off > y->off) - (x->off < y->off);
}

static void note_dup(hs_jscan_t *s, const hs_jkey_t *k)
{
    if (k->off >= s->dup_off)
        return;
    s->dup_off = k->off;
    snprintf(s->dup_key, sizeof(s->dup_key), "%.*s", (int)(k->n < 79 ? k->n : 79), k->s);
    for (char *c = s->dup_key; *c; c++) /* no terminal controls in the message */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

/* The earliest second occurrence among an object's keys: pairwise for a few (a record's
 * seven), sorted for more. */
static void note_dups(hs_jscan_t *s, hs_jkey_t *k, size_t n)
{
    if (n <= 8) {
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (key_eq(&k[i], &k[j])) {
                    note_dup(s, &k[j]);
                    break;
                }
        return;
    }
    qsort(k, n, sizeof(*k), key_cmp);
    for (size_t i = 1; i < n; i++)
        if (key_eq(&k[i - 1], &k[i]))
            note_dup(s, &k[i]);
}

static int value(hs_jscan_t *s, int depth);

static int object_keys(hs_jscan_t *s, int depth, hs_jkey_t **keys, size_t *n, int on_stack)
{
    size_t cap = HS_JSON_KEYS_ON_STACK;

    s->pos++;
    skip_ws(s);
    if (s->pos < s->len && s->t[s->pos] == '}') {
        s->pos++;
        return 0;
    }
    for (;;) {
        skip_ws(s);
        if (s->pos >= s->len || s->t[s->pos] != '"')
            return fail(s, "expected a key");
        if (*n == cap) {
            hs_jkey_t *k = on_stack ? malloc(2 * cap * sizeof(**keys))
                                    : realloc(*keys, 2 * cap * sizeof(**keys));
            if (!k)
                return fail(s, "out of memory");
            if (on_stack)
                memcpy(k, *keys, cap * sizeof(**keys));
            on_stack = 0;
            cap *= 2;
            *keys = k;
        }
        if (key(s, &(*keys)[*n]))
            return -1;
        (*n)++;
        skip_ws(s);
        if (s->pos >= s->len || s->t[s->pos++] != ':')
            return fail(s, "expected ':'");
        if (value(s, depth + 1))
            return -1;
        int more = list_next(s, '}', "expected ',' or '}'");
        if (more <= 0)
            return more;
    }
}

static int object(hs_jscan_t *s, int depth)
{
    hs_jkey_t stack[HS_JSON_KEYS_ON_STACK], *keys = stack;
    size_t n = 0;
    int rc = object_keys(s, depth, &keys, &n, 1);

    if (rc == 0)
        note_dups(s, keys, n);
    for (size_t i = 0; i < n; i++)
        free(keys[i].own);
    if (keys != stack)
        free(keys);
    return rc;
}

static int array(hs_jscan_t *s, int depth)
{
    s->pos++;
    skip_ws(s);
    if (s->pos < s->len && s->t[s->pos] == ']') {
        s->pos++;
        return 0;
    }
    for (;;) {
        if (value(s, depth + 1))
            return -1;
        int more = list_next(s, ']', "expected ',' or ']'");
        if (more <= 0)
            return more;
    }
}

static int value(hs_jscan_t *s, int depth)
{
    size_t start;

    if (depth > HS_JSON_MAX_DEPTH)
        return fail(s, "nested too deeply");
    skip_ws(s);
    if (s->pos >= s->len)
        return fail(s, "expected a value");
    switch (s->t[s->pos]) {
    case '{':
        return object(s, depth);
    case '[':
        return array(s, depth);
    case '"':
        return string(s, NULL);
    default:
        break;
    }
    start = s->pos;
    while (s->pos < s->len && strchr("+-.0123456789eEtruefalsn", s->t[s->pos]) &&
           s->t[s->pos] != '\0')
        s->pos++;
    return s->pos > start ? 0 : fail(s, "expected a value");
}

int hs_json_strict_check(const char *text, size_t len, char *why, size_t whylen)
{
    hs_jscan_t s = {.t = text, .len = len, .dup_off = SIZE_MAX};

    if (value(&s, 0)) {
        snprintf(why, whylen, "%s at byte offset %zu", s.msg, s.pos);
        return -1;
    }
    if (s.dup_off != SIZE_MAX) {
        snprintf(why, whylen, "duplicate key '%s' at byte offset %zu", s.dup_key, s.dup_off);
        return -1;
    }
    skip_ws(&s);
    if (s.pos < s.len) {
        snprintf(why, whylen, "trailing data after the JSON value at byte offset %zu", s.pos);
        return -1;
    }
    return 0;
}

int hs_json_member_span(const char *text, size_t len, const char *key, size_t *off,
                        size_t *n)
{
    hs_jscan_t s = {.t = text, .len = len, .dup_off = SIZE_MAX};

    skip_ws(&s);
    if (s.pos >= len || text[s.pos] != '{')
        return -1;
    s.pos++;
    for (;;) {
        char *k = NULL;
        int hit;

        skip_ws(&s);
        if (s.pos >= len || text[s.pos] != '"' || string(&s, &k))
            return -1;
        hit = strcmp(k, key) == 0;
        free(k);
        skip_ws(&s);
        if (s.pos >= len || text[s.pos++] != ':')
            return -1;
        skip_ws(&s);
        *off = s.pos;
        if (value(&s, 1))
            return -1;
        if (hit) {
            *n = s.pos - *off;
            return 0;
        }
        skip_ws(&s);
        if (s.pos >= len || text[s.pos++] != ',')
            return -1;
    }
}

size_t hs_json_minify(char *text, size_t len)
{
    size_t w = 0;
    int in_str = 0;

    for (size_t r = 0; r < len; r++) {
        char c = text[r];
        if (in_str) {
            text[w++] = c;
            if (c == '\\' && r + 1 < len)
                text[w++] = text[++r];
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
            text[w++] = c;
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            text[w++] = c;
        }
    }
    return w;
}
