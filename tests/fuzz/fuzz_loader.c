/* libFuzzer target: model files.  The input is YAML text through the
 * loader (hymo_model_load_string: parse, checks, physics hash) and the
 * compilation of the model's constants and initial state. */
#include "fuzz_common.h"

#include "hymo/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_string(data, size);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_model_load_string(text, "fuzz.yaml", &m, &err);
    hymo_model_free(m);
    free(text);
    return 0;
}
