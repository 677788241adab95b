/* The states a communication step of a split maps (hymo_split_point_*):
 * per subsystem a vector that the stability prediction perturbs, and the
 * whole split put at a row of a monolithic reference. */
#include <stdlib.h>

#include "cosim_split.h"

int hymo_split_point_size(const hymo_split *sp, int k)
{
    return k == 0 ? hymo_cosim_mech_point_size(sp->subsystems[0]) : hymo_cosim_hyd_point_size(sp->subsystems[k]);
}

void hymo_split_point_get(const hymo_split *sp, int k, double *x)
{
    if (k == 0)
        hymo_cosim_mech_point_get(sp->subsystems[0], x);
    else
        hymo_cosim_hyd_point_get(sp->subsystems[k], x);
}

void hymo_split_point_set(hymo_split *sp, int k, double t, const double *x)
{
    if (k == 0)
        hymo_cosim_mech_point_set(sp->subsystems[0], t, x, NULL);
    else
        hymo_cosim_hyd_point_set(sp->subsystems[k], t, x);
}

hymo_status hymo_split_point_reference(hymo_split *sp, const hymo_model *model, const hymo_reference *ref, int row,
                                       hymo_error *err)
{
    hymo_subsystem *mech = sp->subsystems[0];
    const int nz = hymo_cosim_mech_point_size(mech) / 2;
    if (row < 0 || row >= ref->n)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "reference row %d out of range (%d rows)", row, ref->n);
    if (ref->nz != nz || ref->np != model->n_volumes || ref->nu != model->n_valves)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "reference of %d coordinates, %d pressures, %d spools; the split of %s has %d, %d, %d",
                              ref->nz, ref->np, ref->nu, model->name, nz, model->n_volumes, model->n_valves);
    const double t = ref->time[row];
    double *x = malloc((size_t)(2 * nz > 0 ? 2 * nz : 1) * sizeof *x);
    if (!x) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (reference point)");
    for (int i = 0; i < nz; ++i) {
        x[i] = ref->z[(size_t)row * nz + i];
        x[nz + i] = ref->zd[(size_t)row * nz + i];
    }
    hymo_cosim_mech_point_set(mech, t, x, ref->zdd + (size_t)row * nz);
    free(x);
    for (int k = 1; k < sp->n_subsystems; ++k)
        hymo_cosim_hyd_point_full(sp->subsystems[k], t, ref->p + (size_t)row * ref->np,
                                  ref->u + (size_t)row * ref->nu);
    return hymo_cosim_mech_point_outputs(mech, err);
}
