/* hs_util.c - parsing, time, hashing and atomic output files. */
#include "common/hs_util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_mem.h"

hs_status_t hs_parse_u64(const char *text, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!text || !isdigit((unsigned char)text[0]))
        return HS_ERR_INVALID;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno || *end != '\0')
        return HS_ERR_INVALID;
    *out = v;
    return HS_OK;
}

static int size_suffix_shift(const char *s, unsigned *shift)
{
    char c = (char)toupper((unsigned char)s[0]);

    *shift = 0;
    if (c == 'K')
        *shift = 10;
    else if (c == 'M')
        *shift = 20;
    else if (c == 'G')
        *shift = 30;
    else if (c != 'B' && c != '\0')
        return -1;
    if (*shift)
        s++;
    if (s[0] == 'i' && s[1] == 'B')
        s += 2;
    else if (s[0] == 'B' || s[0] == 'b')
        s++;
    return *s == '\0' ? 0 : -1;
}

hs_status_t hs_parse_size(const char *text, uint64_t *out)
{
    char *end;
    unsigned long long v;
    unsigned shift;

    if (!text || !isdigit((unsigned char)text[0]))
        return HS_ERR_INVALID;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno)
        return HS_ERR_INVALID;
    if (size_suffix_shift(end, &shift) != 0)
        return HS_ERR_INVALID;
    if (shift && v > (UINT64_MAX >> shift))
        return HS_ERR_INVALID;
    *out = (uint64_t)v << shift;
    return HS_OK;
}

hs_status_t hs_parse_size_list(const char *text, uint64_t **out, size_t *n_out)
{
    size_t n = 1, i = 0;
    uint64_t *vals;
    char *copy, *tok, *save = NULL;
    hs_status_t st = HS_OK;

    if (!text || !*text)
        return HS_ERR_INVALID;
    for (const char *p = text; *p; p++)
        n += (*p == ',');
    vals = calloc(n, sizeof(*vals));
    copy = strdup(text);
    if (!vals || !copy) {
        st = HS_ERR_NOMEM;
        goto out;
    }
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        st = hs_parse_size(tok, &vals[i++]);
        if (st != HS_OK)
            goto out;
    }
    if (i != n) { /* empty item: ",," or leading/trailing comma */
        st = HS_ERR_INVALID;
        goto out;
    }
    *out = vals;
    *n_out = n;
    vals = NULL;
out:
    free(vals);
    free(copy);
    return st;
}

hs_status_t hs_parse_double(const char *text, double *out)
{
    char *end;
    double v;

    if (!text || !*text || isspace((unsigned char)*text)) /* as a trailing space is refused */
        return HS_ERR_INVALID;
    errno = 0;
    v = strtod(text, &end);
    if (errno || *end != '\0' || !isfinite(v))
        return HS_ERR_INVALID;
    *out = v == 0 ? 0.0 : v; /* "-0" is 0 (shown as "-0" otherwise) */
    return HS_OK;
}

void hs_size_class_bounds(unsigned k, uint64_t *lo, uint64_t *hi)
{
    *lo = k == 0 ? 0 : k == 1 ? 2 : (1ULL << (k - 1)) + 1;
    *hi = k == 0 ? 1 : k >= 64 ? UINT64_MAX : 1ULL << k;
}

size_t hs_fputs_plain(FILE *fp, const char *s)
{
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(fp, "\\x%02x", *p);
            n += 4;
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            fprintf(fp, "\\xc2\\x%02x", *++p);
            n += 8;
        } else {
            fputc(*p, fp);
            n++;
        }
    }
    return n;
}

void hs_format_size(uint64_t bytes, char *buf, size_t buflen)
{
    static const char units[] = "BKMGT";
    int u = 0;

    while (u < 4 && bytes >> (10 * (u + 1)))
        u++;
    uint64_t unit = 1ull << (10 * u);
    if (bytes % unit == 0) { /* exact, in integers: 16K, 3T, 16777216T */
        snprintf(buf, buflen, "%llu%c", (unsigned long long)(bytes / unit), units[u]);
        return;
    }
    /* a short form only when it is exact (1.5M); else the bytes (4093 B is not "4K") */
    snprintf(buf, buflen, "%.3g%c", (double)bytes / (double)unit, units[u]);
    double back = ldexp(strtod(buf, NULL), 10 * u);
    if (bytes >= (1ull << 53) || back != (double)bytes)
        snprintf(buf, buflen, "%lluB", (unsigned long long)bytes);
}

int hs_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int hs_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double hs_median_double(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), hs_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
    if (a > b)
        swap_u64(&a, &b);
    return c <= a ? a : (c >= b ? b : c);
}

/* Quickselect with a three-way partition (runs of equal values, as a trace's few sizes,
 * end it at once); past 2 log2(n) rounds the rest is sorted (the O(n log n) bound). */
uint64_t hs_select_u64(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    unsigned rounds = 2 * (unsigned)(64 - __builtin_clzll((unsigned long long)n | 1));

    while (hi - lo > 16 && rounds-- > 0) {
        uint64_t pivot = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (v[i] < pivot)
                swap_u64(&v[lt++], &v[i++]);
            else if (v[i] > pivot)
                swap_u64(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    qsort(v + lo, hi - lo, sizeof(*v), hs_cmp_u64);
    return v[k];
}

#define RADIX_BITS 11
#define RADIX_BUCKETS (1u << RADIX_BITS)

/* One stable counting pass of a radix sort of n 32-bit patterns from src to dst, on the
 * 11 bits from shift up (elements moved with memcpy: floats read as their bits). */
static void radix_pass(const unsigned char *src, unsigned char *dst, size_t n, unsigned shift,
                       size_t *count)
{
    uint32_t k;

    memset(count, 0, RADIX_BUCKETS * sizeof(*count));
    for (size_t i = 0; i < n; i++) {
        memcpy(&k, src + 4 * i, 4);
        count[(k >> shift) & (RADIX_BUCKETS - 1)]++;
    }
    for (size_t b = 0, sum = 0; b < RADIX_BUCKETS; b++) {
        size_t c = count[b];
        count[b] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(&k, src + 4 * i, 4);
        memcpy(dst + 4 * count[(k >> shift) & (RADIX_BUCKETS - 1)]++, &k, 4);
    }
}

/* Three passes of 11 bits, least significant first: v -> scratch -> v -> scratch, then
 * copied back. */
hs_status_t hs_sort_pos_floats(float *v, size_t n)
{
    _Static_assert(sizeof(float) == 4, "32-bit floats");
    size_t count[RADIX_BUCKETS];
    unsigned char *scratch;

    if (n < 2)
        return HS_OK;
    if (!(scratch = hs_alloc_big(n * sizeof(*v))))
        return HS_ERR_NOMEM;
    radix_pass((const unsigned char *)v, scratch, n, 0, count);
    radix_pass(scratch, (unsigned char *)v, n, RADIX_BITS, count);
    radix_pass((const unsigned char *)v, scratch, n, 2 * RADIX_BITS, count);
    memcpy(v, scratch, n * sizeof(*v));
    free(scratch);
    return HS_OK;
}

uint64_t hs_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t hs_hash64(const void *buf, size_t len, uint64_t seed)
{
    const unsigned char *p = buf;
    uint64_t h = seed;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

struct hs_afile {
    FILE *fp;
    char *path;
    char *tmp;
    int direct; /* written in place: "-" (stdout) or a FIFO, a device (no rename, no fsync) */
};

/* "-", or a path naming something that is not a regular file (a FIFO, /dev/stdout, a
 * terminal): written in place, since a temporary renamed over it would replace it. */
static hs_status_t afile_open_direct(hs_afile_t *af, const char *path)
{
    af->direct = 1;
    af->fp = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
    if (af->fp)
        return HS_OK;
    hs_log_error("%s: cannot open for writing: %s", path, strerror(errno));
    return HS_ERR_IO;
}

static int afile_is_direct(const char *path)
{
    struct stat sb;

    return strcmp(path, "-") == 0 || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
                                      !S_ISDIR(sb.st_mode));
}

#define AFILE_TMP ".tmp." /* hs_afile_open's temporary: "<path>.tmp.<pid>" */

long hs_afile_tmp_pid(const char *name, size_t *path_len)
{
    const char *tag = NULL, *p = name, *digits;
    char *end;

    while ((p = strstr(p, AFILE_TMP)) != NULL)
        tag = p++;
    if (!tag)
        return 0;
    digits = tag + strlen(AFILE_TMP);
    long pid = strtol(digits, &end, 10);
    if (end == digits || *end || pid <= 0)
        return 0;
    *path_len = (size_t)(tag - name);
    return pid;
}

hs_status_t hs_afile_open(const char *path, hs_afile_t **out)
{
    hs_afile_t *af = calloc(1, sizeof(*af));
    size_t len = strlen(path) + 32;

    if (!af)
        return HS_ERR_NOMEM;
    af->path = strdup(path);
    if (af->path && afile_is_direct(path)) {
        if (afile_open_direct(af, path) != HS_OK) {
            hs_afile_abort(af);
            return HS_ERR_IO;
        }
        *out = af;
        return HS_OK;
    }
    af->tmp = malloc(len);
    if (!af->path || !af->tmp) {
        hs_afile_abort(af);
        return HS_ERR_NOMEM;
    }
    snprintf(af->tmp, len, "%s" AFILE_TMP "%ld", path, (long)getpid());
    af->fp = fopen(af->tmp, "wb");
    if (!af->fp) {
        hs_log_error("%s: cannot create output: %s", path, strerror(errno));
        free(af->tmp);
        af->tmp = NULL;
        hs_afile_abort(af);
        return HS_ERR_IO;
    }
    *out = af;
    return HS_OK;
}

/* mode 0666 less this process's umask (read without changing it for good). */
static mode_t afile_mode(void)
{
    mode_t m = umask(022);

    umask(m);
    return 0666 & ~m;
}

hs_status_t hs_afile_open_owned(const char *path, const char *owner, hs_afile_t **out)
{
    hs_afile_t *af = calloc(1, sizeof(*af));
    size_t len = strlen(path) + strlen(owner) + 16;
    int fd;

    if (!af)
        return HS_ERR_NOMEM;
    af->path = strdup(path);
    af->tmp = malloc(len);
    if (!af->path || !af->tmp) {
        hs_afile_abort(af);
        return HS_ERR_NOMEM;
    }
    snprintf(af->tmp, len, "%s" AFILE_TMP "%s.XXXXXX", path, owner);
    fd = mkstemp(af->tmp); /* O_CREAT | O_EXCL in path's folder */
    if (fd < 0) {
        free(af->tmp);
        af->tmp = NULL;
        goto fail;
    }
    if (fchmod(fd, afile_mode()) != 0 || !(af->fp = fdopen(fd, "wb"))) {
        close(fd);
        goto fail;
    }
    *out = af;
    return HS_OK;
fail:
    hs_log_error("%s: cannot create output: %s", path, strerror(errno));
    hs_afile_abort(af);
    return HS_ERR_IO;
}

FILE *hs_afile_stream(hs_afile_t *af) { return af->fp; }

hs_status_t hs_afile_commit(hs_afile_t *af)
{
    hs_status_t st = HS_OK;
    int bad = ferror(af->fp) || fflush(af->fp) != 0 || (!af->direct && fsync(fileno(af->fp)) != 0);

    if (af->direct) {
        if ((af->fp != stdout && fclose(af->fp) != 0) || bad) {
            hs_log_error("%s: cannot write output: %s", af->path, strerror(errno));
            st = HS_ERR_IO;
        }
        af->fp = NULL;
        hs_afile_abort(af);
        return st;
    }
    if (fclose(af->fp) != 0)
        bad = 1;
    af->fp = NULL;
    if (bad || rename(af->tmp, af->path) != 0) {
        hs_log_error("%s: cannot write output: %s", af->path, strerror(errno));
        st = HS_ERR_IO;
        goto remove_tmp;
    }
    free(af->tmp); /* in place: nothing for hs_afile_abort to remove */
    af->tmp = NULL;
remove_tmp:
    hs_afile_abort(af);
    return st;
}

void hs_afile_abort(hs_afile_t *af)
{
    if (!af)
        return;
    if (af->fp && af->fp != stdout)
        fclose(af->fp);
    else if (af->fp)
        fflush(af->fp);
    if (af->tmp)
        unlink(af->tmp);
    free(af->tmp);
    free(af->path);
    free(af);
}

hs_status_t hs_write_file_atomic(const char *path, const char *text)
{
    hs_afile_t *af;
    hs_status_t st = hs_afile_open(path, &af);

    if (st != HS_OK)
        return st;
    fputs(text, hs_afile_stream(af));
    return hs_afile_commit(af);
}

hs_status_t hs_hash_file(const char *path, uint64_t seed, uint64_t *hash_out, size_t *len_out)
{
    enum { PIECE = 1 << 20 };
    FILE *fp = fopen(path, "rb");
    unsigned char *buf = malloc(PIECE);
    uint64_t h = seed;
    size_t len = 0, n;
    hs_status_t st = HS_OK;

    if (!fp || !buf) {
        st = fp ? HS_ERR_NOMEM : HS_ERR_IO;
        if (!fp)
            hs_log_error("%s: cannot open: %s", path, strerror(errno));
        goto out;
    }
    while ((n = fread(buf, 1, PIECE, fp)) > 0) {
        h = hs_hash64(buf, n, h);
        len += n;
    }
    if (ferror(fp)) {
        hs_log_error("%s: read error: %s", path, strerror(errno));
        st = HS_ERR_IO;
        goto out;
    }
    *hash_out = h;
    *len_out = len;
out:
    if (fp)
        fclose(fp);
    free(buf);
    return st;
}

hs_status_t hs_check_out_path(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    struct stat sb;

    if (afile_is_direct(path)) /* "-", a FIFO, a device: written in place (hs_afile) */
        return HS_OK;
    if (!*path || (slash && slash[1] == '\0') || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))) {
        hs_log_error("%s: cannot write the output there: it is a directory, not a file name",
                     path);
        return HS_ERR_IO;
    }
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    const char *why = NULL;
    if (stat(dir, &sb) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(sb.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = strerror(errno);
    if (why) {
        hs_log_error("%s: cannot write the output there: %s: %s", path, dir, why);
        return HS_ERR_IO;
    }
    return HS_OK;
}

/* Open path for hs_read_file without blocking on a FIFO that has no writer: opened
 * non-blocking, then blocking again, so a read returns what a writer sends, or end of file
 * at once when there is none. Devices, sockets and directories are refused. "-" is
 * standard input. */
static FILE *read_open(const char *path)
{
    int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO)
                                    : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    const char *why = NULL;
    FILE *fp;

    if (fd < 0) {
        hs_log_error("%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0)
        why = strerror(errno);
    else if (S_ISDIR(sb.st_mode))
        why = "is a directory";
    else if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode))
        why = "not a regular file or a pipe";
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        why = strerror(errno);
    if (why || !(fp = fdopen(fd, "rb"))) {
        hs_log_error("%s: cannot read: %s", path, why ? why : strerror(errno));
        close(fd);
        return NULL;
    }
    return fp;
}

hs_status_t hs_read_file(const char *path, char **out, size_t *len_out)
{
    FILE *fp = read_open(path);
    char *buf = NULL;
    size_t cap = 0, len = 0, n;
    hs_status_t st = HS_OK;

    if (!fp)
        return HS_ERR_IO;
    do {
        if (len > HS_READ_FILE_MAX) {
            hs_log_error("%s: larger than %u MiB: not a file this tool reads whole", path,
                         (unsigned)(HS_READ_FILE_MAX >> 20));
            st = HS_ERR_INVALID;
            goto out;
        }
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap ? cap * 2 : 65536);
            if (!nb) {
                st = HS_ERR_NOMEM;
                goto out;
            }
            buf = nb;
            cap = cap ? cap * 2 : 65536;
        }
        n = fread(buf + len, 1, cap - len - 1, fp);
        len += n;
    } while (n > 0);
    if (ferror(fp)) {
        hs_log_error("%s: read error: %s", path, strerror(errno));
        st = HS_ERR_IO;
        goto out;
    }
    buf[len] = '\0';
    *out = buf;
    if (len_out)
        *len_out = len;
    buf = NULL;
out:
    free(buf);
    fclose(fp);
    return st;
}

hs_status_t hs_mkdir_p(const char *path)
{
    char *p = strdup(path);
    hs_status_t st = HS_OK;

    if (!p)
        return HS_ERR_NOMEM;
    for (char *s = p + 1; ; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            hs_log_error("%s: cannot create directory: %s", p, strerror(errno));
            st = HS_ERR_IO;
            break;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    free(p);
    return st;
}

/* ---- staging a set of outputs --------------------------------------------------------- */

void hs_stage_abort(const char *stage)
{
    char path[4400];
    DIR *d = opendir(stage);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", stage, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(stage);
}

#define HS_STAGE_PREFIX ".hintsim-stage." /* + host + "." + PID space + "." + pid */

/* This process's PID space: a hash of its PID namespace (/proc/self/ns/pid), so that two
 * containers sharing a host name (and a DIR) do not test each other's PIDs; 0 where /proc
 * cannot tell (the host name alone then). Not the boot id: a stage a killed run left before
 * a reboot is still this namespace's (the initial one keeps its number), and is swept. */
static uint32_t stage_pid_space(void)
{
    char ns[64] = "";
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
    uint32_t h = 2166136261u; /* FNV-1a */

    if (n <= 0)
        return 0;
    ns[n] = '\0';
    for (const char *c = ns; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return h;
}

/* ".hintsim-stage.HOST.SPACE." for this process, HOST the host name with every character but
 * letters, digits and '-' made '-' (so that the pid after the last '.' parses back). */
static void stage_host_prefix(char *buf, size_t len)
{
    char host[256] = "";

    if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
        snprintf(host, sizeof(host), "localhost");
    for (char *c = host; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-')
            *c = '-';
    snprintf(buf, len, HS_STAGE_PREFIX "%s.%08" PRIx32 ".", host, stage_pid_space());
}

void hs_stage_name(char *buf, size_t len, long pid)
{
    char prefix[300];

    stage_host_prefix(prefix, sizeof(prefix));
    snprintf(buf, len, "%s%ld", prefix, pid);
}

/* The pid of a stage folder's name, exactly prefix (this host's) then digits; 0 for any
 * other, a stage of another host's included. */
static pid_t stage_name_pid(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    const char *digits = name + n;
    long pid = 0;

    if (strncmp(name, prefix, n) != 0 || !*digits)
        return 0;
    for (const char *c = digits; *c; c++) {
        if (!isdigit((unsigned char)*c))
            return 0;
        pid = pid * 10 + (*c - '0');
        if (pid > INT_MAX) /* no pid: not one of ours */
            return 0;
    }
    return (pid_t)pid;
}

/* Remove the stage folders in dir of this host's runs that are no longer alive (killed
 * before commit or abort): kill(pid, 0) says ESRCH. A live pid's is left (a concurrent run,
 * or a process that took a dead run's pid over: its stage stays until that one ends too),
 * so is another host's (a shared file system: its pids are not ours to test) and anything
 * not a real directory (a symlink is not followed). */
static void stage_sweep_dead(const char *dir)
{
    char path[4400], prefix[300];
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat sb;

    if (!d)
        return;
    stage_host_prefix(prefix, sizeof(prefix));
    while ((e = readdir(d)) != NULL) {
        pid_t pid = stage_name_pid(e->d_name, prefix);
        if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            hs_stage_abort(path);
    }
    closedir(d);
}

hs_status_t hs_stage_open(const char *dir, char *stage, size_t len)
{
    hs_status_t st = hs_mkdir_p(dir);
    struct stat sb;

    stage[0] = '\0'; /* nothing staged until the folder exists */
    if (st != HS_OK)
        return st;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) { /* mkdir_p takes a file as there */
        hs_log_error("%s: not a directory", dir);
        return HS_ERR_IO;
    }
    char name[320];
    hs_stage_name(name, sizeof(name), (long)getpid());
    snprintf(stage, len, "%s/%s", dir, name);
    hs_stage_abort(stage);   /* a stage this pid left (a killed run) */
    stage_sweep_dead(dir);   /* and those of killed runs with other pids */
    if (mkdir(stage, 0755) != 0) {
        hs_log_error("%s: cannot create the staging folder: %s", stage, strerror(errno));
        stage[0] = '\0';
        return HS_ERR_IO;
    }
    return HS_OK;
}

/* Whether name is one of the n names. */
static int name_in(char (*names)[256], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

/* Remove dir's files that owns() claims and that are not among the n names: an earlier
 * run's files of the set that this one did not write. */
static void drop_earlier(const char *dir, int (*owns)(const char *name), char (*names)[256],
                         size_t n)
{
    char to[4400];
    struct dirent *e;
    DIR *d = opendir(dir);

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!owns(e->d_name) || name_in(names, n, e->d_name))
            continue;
        snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
        if (unlink(to) != 0 && errno != ENOENT)
            hs_log_warn("%s: an earlier run's, not removed: %s", to, strerror(errno));
    }
    closedir(d);
}

#define HS_STAGE_MAX 256 /* files a stage holds at most */

hs_status_t hs_stage_commit(const char *stage, const char *dir, int (*owns)(const char *name))
{
    char from[4400], to[4400], (*names)[256] = calloc(HS_STAGE_MAX, 256);
    hs_status_t st = HS_OK;
    struct dirent *e;
    size_t n = 0;
    DIR *d = names ? opendir(stage) : NULL;

    if (!d) {
        hs_log_error("%s: cannot read the staging folder: %s", stage,
                     names ? strerror(errno) : "out of memory");
        free(names);
        return names ? HS_ERR_IO : HS_ERR_NOMEM;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(from, sizeof(from), "%s/%s", stage, e->d_name);
        snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
        if (n < HS_STAGE_MAX)
            snprintf(names[n++], 256, "%s", e->d_name);
        if (rename(from, to) != 0) {
            hs_log_error("%s: cannot put it in place from %s: %s", to, from, strerror(errno));
            st = HS_ERR_IO;
            goto close_stage;
        }
    }
    if (owns && n < HS_STAGE_MAX)
        drop_earlier(dir, owns, names, n);
close_stage:
    closedir(d);
    free(names);
    hs_stage_abort(stage);
    return st;
}
