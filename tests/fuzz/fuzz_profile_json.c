/* fuzz_profile_json.c - libFuzzer target for profile files (model/MODEL.md section 9):
 * arbitrary bytes through profile_json_parse, and a profile it accepts printed and parsed
 * again, which must succeed (profile save and load agree). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/hs_status.h"
#include "model/profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *again;
    profile_t *p = NULL, *q = NULL;
    cJSON *j;

    hs_log_set_quiet(1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (profile_json_parse("fuzz", text, &p) == HS_OK) {
        if ((j = profile_to_json(p)) && (again = cJSON_Print(j))) {
            if (profile_json_parse("fuzz-again", again, &q) != HS_OK)
                abort();
            profile_free(q);
            free(again);
        }
        cJSON_Delete(j);
        profile_free(p);
    }
    free(text);
    return 0;
}
