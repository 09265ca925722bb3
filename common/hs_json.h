/* hs_json.h - the strictness cJSON lacks, for every JSON file the tools read (trace headers,
 * profiles, sweep grids): one value and nothing after it but white space, and no object
 * with the same key twice (cJSON keeps both and lookups take the first, so a file could
 * say two things and be read as one of them). Works on the text, so that errors can name
 * a byte offset; needs no cJSON. */
#ifndef HS_JSON_H
#define HS_JSON_H

#include <stddef.h>

/* Check text[0..len) (syntax already accepted by a JSON parser): 0 when it holds one value,
 * only white space after it and no duplicate key in any object; else -1 with why set to
 * "duplicate key 'K' at byte offset N" (N: the second occurrence's opening quote) or
 * "trailing data after the JSON value at byte offset N" (a NUL byte counts as data). Keys
 * compare as a JSON parser sees them (escapes decoded, up to a \u0000). Malformed text
 * gives -1 with a reason too; never reads outside text[0..len). */
int hs_json_strict_check(const char *text, size_t len, char *why, size_t whylen);

/* The raw text of member key of the object text[0..len) starts with (white space first
 * allowed; text already accepted by a parser): 0 with its value's byte offset and length,
 * -1 when text is not an object or has no such member (the first one when repeated).
 * Lets a reader keep a value verbatim instead of re-printing it. */
int hs_json_member_span(const char *text, size_t len, const char *key, size_t *off,
                        size_t *n);

/* Remove the white space outside strings from JSON text of len bytes, in place; returns
 * the new length. Never makes text longer, changes no value. */
size_t hs_json_minify(char *text, size_t len);

#endif
