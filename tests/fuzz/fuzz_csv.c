/* libFuzzer target: results of other tools (CSV, src/model/foreign.c) and
 * their comparison with a reference, as `hymo compare REF.h5 RUN.csv
 * [--map MAP]` does.  The reference is a short run of HYMO_FUZZ_CSV_MODEL
 * made once at start-up.  The input is the CSV file; after its first NUL
 * byte, if any, the map file. */
#include "fuzz_common.h"

#include "hymo/foreign.h"
#include "hymo/compare.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"

#ifndef HYMO_FUZZ_CSV_MODEL
#error "HYMO_FUZZ_CSV_MODEL: the model of the reference"
#endif

static hymo_reference *ref;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    hymo_model *m = NULL;
    hymo_error err;
    char path[1024];
    snprintf(path, sizeof path, "%s/ref.h5", fz_dir());
    hymo_run_options opt;
    if (hymo_model_load_file(HYMO_FUZZ_CSV_MODEL, &m, &err) == HYMO_OK) {
        hymo_run_options_default(&opt, m);
        opt.t_end = 20 * opt.dt;
        opt.error_estimate = 0;
        hymo_run_summary sum;
        if (hymo_run(m, &opt, path, &sum, &err) == HYMO_OK) hymo_ref_read(path, &ref, &err);
    }
    hymo_model_free(m);
    if (!ref) {
        fprintf(stderr, "fuzz_csv: no reference: %s\n", err.message);
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    const size_t n_csv = nul ? (size_t)(nul - data) : size;
    char csv[1024], map[1024];
    if (fz_write("run.csv", data, n_csv, csv, sizeof csv) != 0) return 0;
    if (nul && fz_write("map.yaml", nul + 1, size - n_csv - 1, map, sizeof map) != 0) return 0;
    hymo_reference *run = NULL;
    unsigned char *present = NULL;
    hymo_error err;
    if (hymo_foreign_read_csv(csv, nul ? map : NULL, ref, &run, &present, &err) == HYMO_OK) {
        const int n = hymo_compare_component_offset(ref, HYMO_CMP_SIGNALS);
        double *buf = malloc(3 * (size_t)(n > 0 ? n : 1) * sizeof *buf);
        if (!buf) abort();
        hymo_compare_result res;
        hymo_compare_components(ref, run, present, &res, buf, buf + n, buf + 2 * n, &err);
        hymo_compare_components_in(ref, run, present, 0.0, 0.5 * ref->t_end, &res, buf, buf + n, buf + 2 * n,
                                   &err);
        free(buf);
    }
    free(present);
    hymo_ref_free(run);
    return 0;
}
