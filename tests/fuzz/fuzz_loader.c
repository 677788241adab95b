/* libFuzzer target: model files.  The input is YAML text through the
 * loader (hymo_model_load_string: parse, checks, physics hash) and the
 * compilation of the model's constants and initial state; then the same
 * text (up to its first NUL) from a file through
 * hymo_model_load_file_flags with HYMO_LOAD_NO_SOURCE (the loader owns the
 * text and frees it once parsed), which must give the same status, the
 * same message after the origin, and the same hashes (abort otherwise). */
#include "fuzz_common.h"

#include "hymo/model.h"

/* msg without its leading origin (and the ':' after it) */
static const char *after_origin(const char *msg, const char *origin)
{
    const size_t n = strlen(origin);
    return strncmp(msg, origin, n) == 0 ? msg + n : msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_string(data, size);
    hymo_model *m = NULL;
    hymo_error err;
    const hymo_status st = hymo_model_load_string(text, "fuzz.yaml", &m, &err);
    char path[600];
    if (fz_write("fuzz.yaml", (const uint8_t *)text, strlen(text), path, sizeof path) == 0) {
        hymo_model *f = NULL;
        hymo_error ferr;
        const hymo_status fst = hymo_model_load_file_flags(path, NULL, 0, HYMO_LOAD_NO_SOURCE, &f, &ferr);
        if (fst != st) abort();
        if (st != HYMO_OK) {
            /* the same message after the origin (a longer origin cuts the end sooner) */
            const char *a = after_origin(err.message, "fuzz.yaml"), *b = after_origin(ferr.message, path);
            const size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;
            if (strncmp(a, b, n) != 0) abort();
        } else if (f->source_text || !m->source_text || strcmp(f->sha256, m->sha256) != 0 ||
                   strcmp(f->physics_sha256, m->physics_sha256) != 0) {
            abort();
        }
        hymo_model_free(f);
    }
    hymo_model_free(m);
    free(text);
    return 0;
}
