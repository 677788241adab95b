/* libFuzzer target: --set overrides (docs/overrides.md) on a shipped model
 * (HYMO_FUZZ_SET_MODEL).  Each input line (at most 8) is one override
 * "PATH=VALUE" (an empty input: none), applied by hymo_model_load_file_set, which then loads and
 * compiles the changed model. */
#include "fuzz_common.h"

#include "hymo/model.h"

#ifndef HYMO_FUZZ_SET_MODEL
#error "HYMO_FUZZ_SET_MODEL: the model file the overrides apply to"
#endif

enum { MAX_SET = 8 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_string(data, size);
    const char *set[MAX_SET];
    int n = 0;
    for (char *p = text; n < MAX_SET && *p;) { /* a final newline ends the last line */
        set[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    hymo_model *m = NULL;
    hymo_error err;
    hymo_model_load_file_set(HYMO_FUZZ_SET_MODEL, set, n, &m, &err);
    hymo_model_free(m);
    free(text);
    return 0;
}
