/* hs_field.h - the kinds of a field in an X-macro table of result fields.
 *
 * A table lists each field once as X(member, KIND); the KIND (F64 or U64) gives the member's
 * C type, its text form in CSV (%.17g: a value read back is the value computed) and how a
 * JSON number is read back into it. Tables: PRED_FIGURES and friends (model/predict/predict.h),
 * SWEEP_RESULT_FIGURES (sweep/sweep_eval.h).
 */
#ifndef HS_FIELD_H
#define HS_FIELD_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#define HS_FIELD_CTYPE_F64 double
#define HS_FIELD_CTYPE_U64 uint64_t
/* The member a table entry declares: HS_FIELD_MEMBER(p50_us, F64) -> double p50_us; */
#define HS_FIELD_MEMBER(member, kind) HS_FIELD_CTYPE_##kind member;

#define HS_FIELD_FMT_F64 "%.17g"
#define HS_FIELD_FMT_U64 "%" PRIu64

/* A JSON number read back into a field: an F64 takes a finite number (a figure is one: a
 * non-finite one is written as null, and a file holding one is damaged); a U64 needs a
 * number >= 0. 0 when it cannot. */
static inline int hs_field_from_F64(double v, double *out)
{
    if (!isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static inline int hs_field_from_U64(double v, uint64_t *out)
{
    if (!(v >= 0) || v >= 18446744073709551616.0)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

#endif
