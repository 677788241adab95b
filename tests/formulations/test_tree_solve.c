/* The O(n) articulated-body solve of M' + diag(e) (hymo_kin_tree_factor,
 * hymo_kin_tree_solve, formulations/kinematics.c), which the KLU backend
 * uses for the mechanical block of open trees (src/solvers/linsol.c,
 * hymo_linsol_set_tree), against a dense LU of M' + diag(e) formed from
 * hymo_kin_mass:
 *
 * - the kinematic trees of every shipped model (planar and spatial, chains
 *   and branched trees: the excavator's and the crane's, whose cut joints
 *   do not enter M'), at random positions and rates, with random positive
 *   and negative diagonal terms e: relative error <= 1e-10;
 * - a negligible pivot (e_k = -b_k^T P_k b_k) is refused (1), so that the
 *   caller falls back to the dense LU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "hymo/linalg.h"
#include "kinematics.h"
#include "test_util.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static const char *const MODELS[] = {"fourbar.yaml", "quickreturn.yaml", "crane1.yaml",         "crane2.yaml",
                                     "bennett.yaml", "excavator.yaml",   "forestry_crane.yaml", "spatial_fourbar.yaml"};
#define N_MODELS (sizeof MODELS / sizeof MODELS[0])

static double check_model(const char *file, int trial)
{
    hymo_model *m = test_load_model(file);
    const int nb = m->n_bodies;
    hymo_kin kin;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    double *z = calloc((size_t)nb, sizeof(double)), *zd = calloc((size_t)nb, sizeof(double)),
           *e = calloc((size_t)nb, sizeof(double)), *f = calloc((size_t)nb, sizeof(double)),
           *x = calloc((size_t)nb, sizeof(double)), *a = calloc((size_t)nb * nb, sizeof(double)),
           *w = calloc((size_t)HYMO_KIN_TREE_W * nb, sizeof(double)), *s = calloc((size_t)12 * nb, sizeof(double));
    int *piv = calloc((size_t)nb, sizeof(int));
    assert_non_null(piv);
    for (int k = 0; k < nb; ++k) {
        z[k] = 0.5 * test_urand_pm1(&rng);
        zd[k] = test_urand_pm1(&rng);
    }
    hymo_kin_positions(&kin, m, z);
    hymo_kin_velocities(&kin, m, zd);
    hymo_kin_forces_begin(&kin, m);
    hymo_kin_mass(&kin);
    double mmax = 0.0;
    for (int k = 0; k < nb; ++k) mmax = fmax(mmax, fabs(kin.M[k * nb + k]));
    for (int k = 0; k < nb; ++k) {
        /* positive (stiffness, damping) or negative (a Schur complement) terms */
        e[k] = (trial % 2 ? 0.3 : -0.3) * mmax * (0.5 + 0.5 * test_urand_pm1(&rng)) * (trial > 1);
        f[k] = x[k] = test_urand_pm1(&rng);
    }
    memcpy(a, kin.M, (size_t)nb * nb * sizeof(double));
    for (int k = 0; k < nb; ++k) a[k * nb + k] += e[k];
    assert_int_equal(hymo_lu_factor(nb, a, piv), 0);
    hymo_lu_solve(nb, a, piv, f);
    double err_rel = 0.0, fn = 0.0;
    if (hymo_kin_tree_factor(&kin, e, w) == 0) {
        hymo_kin_tree_solve(&kin, w, x, s);
        for (int k = 0; k < nb; ++k) {
            err_rel = fmax(err_rel, fabs(x[k] - f[k]));
            fn = fmax(fn, fabs(f[k]));
        }
        err_rel /= fn;
    } else {
        err_rel = INFINITY;
    }
    print_message("%-22s nb = %d, trial %d: relative error %.3g\n", file, nb, trial, err_rel);
    /* a negligible pivot is refused: e_k = -(b^T P b) of the last body */
    if (trial == 0) {
        hymo_kin_tree_factor(&kin, e, w);
        const double *P = &w[HYMO_KIN_TREE_W * (nb - 1)];
        double bPb = P[42] - e[nb - 1];
        e[nb - 1] = -bPb;
        assert_int_equal(hymo_kin_tree_factor(&kin, e, w), 1);
    }
    free(z), free(zd), free(e), free(f), free(x), free(a), free(w), free(s), free(piv);
    hymo_kin_free(&kin);
    hymo_model_free(m);
    return err_rel;
}

static void test_shipped_trees(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_MODELS; ++i)
        for (int trial = 0; trial < 4; ++trial) assert_true(check_model(MODELS[i], trial) <= 1e-10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
