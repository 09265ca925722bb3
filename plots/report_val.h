/* report_val.h - the visual report of `validate -o DIR`: one call from the command. */
#ifndef HS_REPORT_VAL_H
#define HS_REPORT_VAL_H

#include <cjson/cJSON.h>

#include "common/hs_opt.h"
#include "plots/report_html.h"

/* Figures (predicted against measured among them) and dir/report.html from the JSON
 * report of cap_validate_run. The profile is loaded again from profile (name or file) with
 * the same sets, the trace from the report's "trace.path". Logs errors (HS_ERR_INVALID
 * naming the key when the report lacks one). Without gnuplot the page has tables only and
 * a warning names the package, but the result is HS_OK: the live measurements, the
 * expensive part, are saved and nothing needs to run again but the plots. */
hs_status_t rep_write_validate(const char *dir, const cJSON *report, const char *profile,
                               const hs_strlist_t *sets);

/* validate -o DIR: DIR/validate.json (json_text, the report as printed) with report.html
 * and the figures of rep_write_validate, written into a stage and moved into DIR whole
 * (hs_stage_open, common/hs_util.h): a run that fails leaves an earlier run's files as
 * they were, and an earlier run's figures this one did not draw are removed
 * (rep_validate_owns); other files in DIR are left alone. Logs errors; HS_OK without
 * gnuplot as rep_write_validate. */
hs_status_t rep_write_validate_dir(const char *dir, const char *json_text, const cJSON *report,
                                   const char *profile, const hs_strlist_t *sets);

/* Whether a file name is one validate -o writes (validate.json, report.html and the
 * figures' files), for hs_stage_commit. */
int rep_validate_owns(const char *name);

/* Fill r from one "predicted" or "measured" object of that report (missing keys are 0).
 * Internal to plots/, exposed for tests. */
void rep_result_from_json(const cJSON *j, uint64_t hint, pred_result_t *r);

#endif
