/* calib_job.h - one `hintsim calibrate` run as a library call: measure a live device
 * (calib_run.h: single messages, streams at several depths and sizes, forced switches, a
 * mixed replay, through validate's own live replay), fit the profile's link and path costs
 * by least squares on relative error with the model engine replaying each trace as it was
 * replayed (calib_fit.h), set the switch drain from the measured forced switches, check the
 * fitted profile on the held-out figures per class against documented bounds, and write the
 * profile JSON with a "meta" block recording device, firmware, host, peer, date and every
 * figure (calib/README.md).
 */
#ifndef HS_CALIB_JOB_H
#define HS_CALIB_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "calib/calib_fit.h"
#include "calib/calib_run.h"
#include "common/hs_opt.h"
#include "model/profile/profile.h"

/* What a calibration found; release with calib_outcome_release (also after a failure). */
typedef struct {
    calib_param_t params[CALIB_NTERMS];
    calib_result_t res;
    double held_median, *held_err, *fit_err; /* per figure: predicted / measured - 1 */
    calib_held_class_t cls[CALIB_NCLASSES];
    size_t nover; /* held-out classes over their bound */
    profile_t *start, *fitted;
    calib_meas_t meas;
    char date[32];
    char eff_changes[512]; /* the live paths' effective configuration applied to the start
                            * profile, "key old->new; ..." */
    uint64_t seed;
} calib_outcome_t;

/* Load profile (built-in or file) with each "KEY=VALUE" of set, measure with o, fit, check
 * and write the fitted profile to out atomically. Logs on error; *c holds what was done. */
hs_status_t calib_calibrate(const calib_run_opts_t *o, const char *profile,
                            const hs_strlist_t *set, const char *out, calib_outcome_t *c);
void calib_outcome_release(calib_outcome_t *c);

/* The "calibration" block of the profile's "meta" (the caller owns it). */
struct cJSON *calib_outcome_json(const calib_outcome_t *c);

/* The value of the profile parameter key (a known key) in p. */
double calib_param_value(const profile_t *p, const char *key);

#endif
