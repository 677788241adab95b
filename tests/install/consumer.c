/* A program of a hymo user, built against an installed hymo by
 * tests/cli/cli_install.sh (CMake find_package and pkg-config): loads a model,
 * steps it 100 times and prints the version and z. */
#include <stdio.h>
#include <string.h>

#include <hymo/model.h>
#include <hymo/sim.h>
#include <hymo/version.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.yaml\n", argv[0]);
        return 2;
    }
    if (strcmp(hymo_version(), HYMO_VERSION_STRING) != 0) {
        fprintf(stderr, "header version %s, library version %s\n", HYMO_VERSION_STRING, hymo_version());
        return 1;
    }
    hymo_error err;
    hymo_error_clear(&err);
    hymo_model *model = NULL;
    if (hymo_model_load_file(argv[1], &model, &err) != HYMO_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    hymo_sim *sim = NULL;
    if (hymo_sim_create(model, &opt, &sim, &err) != HYMO_OK) {
        fprintf(stderr, "%s\n", err.message);
        hymo_model_free(model);
        return 1;
    }
    int status = 0;
    for (int k = 0; k < 100 && status == 0; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) {
            fprintf(stderr, "step %d: %s\n", k, err.message);
            status = 1;
        }
    printf("hymo %s (%d.%d.%d) t = %.17g steps %ld\n", hymo_version(), HYMO_VERSION_MAJOR, HYMO_VERSION_MINOR,
           HYMO_VERSION_PATCH, hymo_sim_time(sim), hymo_sim_steps(sim));
    const double *z = hymo_sim_z(sim);
    for (int i = 0; i < hymo_sim_nz(sim); ++i) printf("z[%d] = %.17g\n", i, z[i]);
    hymo_sim_free(sim);
    hymo_model_free(model);
    return status;
}
