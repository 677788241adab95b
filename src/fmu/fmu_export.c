/* The entries of an exported FMU as texts (hymo/fmu.h,
 * hymo_fmu_export_texts): modelDescription.xml and the resources of one
 * part, for a caller that writes the archive itself (the Python package;
 * `hymo fmu` writes the same entries through libzip). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fmu_internal.h"
#include "hymo/fmu.h"

static const char *const entry_names[HYMO_FMU_TEXTS] = {
    "modelDescription.xml", "resources/" HYMO_FMU_MODEL_FILE, "resources/" HYMO_FMU_OPTIONS_FILE};

const char *hymo_fmu_text_name(int k) { return k >= 0 && k < HYMO_FMU_TEXTS ? entry_names[k] : NULL; }

static char *copy(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

hymo_status hymo_fmu_export_texts(const char *model_path, int n_opts, const char *const *opts,
                                  char *texts[HYMO_FMU_TEXTS], char *binary_name, size_t cap, hymo_error *err)
{
    for (int k = 0; k < HYMO_FMU_TEXTS; ++k) texts[k] = NULL;
    if (binary_name && cap) binary_name[0] = '\0';
    for (int i = 0; i < n_opts; i += 2)
        if (!strcmp(opts[i], "--part") && i + 1 < n_opts && !strcmp(opts[i + 1], "ssp"))
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "--part ssp: an SSP archive of several FMUs, not one FMU's entries");
    hymo_fmu_part *part = NULL;
    hymo_status st = hymo_fmu_part_create(model_path, n_opts, (char **)opts, &part, err);
    if (st != HYMO_OK) return st;
    texts[0] = hymo_fmu_model_description(part);
    texts[1] = copy(part->model->source_text);
    texts[2] = copy(part->options_text);
    if (!texts[0] || !texts[1] || !texts[2]) {
        hymo_fmu_texts_free(texts);
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (FMU entries of %s)", model_path);
    } else if (binary_name && cap) {
        snprintf(binary_name, cap, "binaries/linux64/%s.so", part->identifier);
    }
    hymo_fmu_part_free(part);
    return st;
}

void hymo_fmu_texts_free(char *texts[HYMO_FMU_TEXTS])
{
    for (int k = 0; k < HYMO_FMU_TEXTS; ++k) {
        free(texts[k]);
        texts[k] = NULL;
    }
}
