/* profile_builtin.h - the built-in profiles (internal to model/): values that differ from
 * the defaults of profile.h, each with the passage it comes from. */
#ifndef HS_PROFILE_BUILTIN_H
#define HS_PROFILE_BUILTIN_H

#include <stddef.h>

#include "model/profile/profile.h"

typedef struct {
    const char *key;
    double value;
    const char *source;
} prof_builtin_val_t;

typedef struct {
    const char *name;
    const char *summary;          /* one line for `profile list` */
    const char *notes;            /* disagreements, what could not be fit */
    const char *default_source;   /* source string of parameters left at their default */
    const prof_builtin_val_t *vals; /* terminated by key == NULL */
    const prof_factor_t *factors;
    size_t nfactors;
} prof_builtin_t;

/* NULL-terminated array of every built-in profile, and of their names (same order). */
const prof_builtin_t *const *profile_builtins(void);
const char *const *profile_builtin_name_list(void);

/* Internal helpers shared by profile.c and profile_json.c. */
profile_t *profile_alloc_defaults(void);
hs_status_t profile_set_src(profile_t *p, size_t id, const char *source);
hs_status_t profile_check_factors(const char *ctx, const profile_t *p);

#endif
