/* Per-step output rows (the datasets of SPEC §8) buffered for the HDF5
 * writer; shared by the monolithic run and the co-simulation driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rows.h"

void hymo_rows_free(hymo_rows *b)
{
    double *arr[] = {b->time, b->z, b->zd, b->zdd, b->p, b->u, b->s, b->sd, b->force,
                     b->work, b->kin, b->pot, b->drift, b->cpos, b->cvel, b->cacc, b->residual};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    free(b->iterations);
}

int hymo_rows_alloc(hymo_rows *b, const hymo_sim *sim, long capacity)
{
    memset(b, 0, sizeof *b);
    b->nz = sim->nz, b->np = sim->np, b->nu = sim->nu, b->na = sim->na, b->ncut = sim->ncut;
#define RA(ptr, w) ((ptr) = calloc((size_t)capacity * (size_t)((w) > 0 ? (w) : 1), sizeof *(ptr)))
    RA(b->time, 1), RA(b->z, b->nz), RA(b->zd, b->nz), RA(b->zdd, b->nz), RA(b->p, b->np), RA(b->u, b->nu);
    RA(b->s, b->na), RA(b->sd, b->na), RA(b->force, b->na), RA(b->work, b->na);
    RA(b->kin, 1), RA(b->pot, 1), RA(b->drift, 1), RA(b->cpos, b->ncut), RA(b->cvel, b->ncut);
    RA(b->cacc, b->ncut), RA(b->residual, 1), RA(b->iterations, 1);
#undef RA
    return b->time && b->z && b->zd && b->zdd && b->p && b->u && b->s && b->sd && b->force && b->work &&
           b->kin && b->pot && b->drift && b->cpos && b->cvel && b->cacc && b->residual && b->iterations;
}

void hymo_rows_push(hymo_rows *b, const hymo_sim *sim)
{
    long i = b->n++;
#define CP(dst, src, w) memcpy((dst) + (size_t)i * (w), (src), (size_t)(w) * sizeof(double))
    b->time[i] = sim->t;
    CP(b->z, sim->mb.z, b->nz), CP(b->zd, sim->mb.zd, b->nz), CP(b->zdd, sim->mb.zdd, b->nz);
    CP(b->p, sim->p, b->np), CP(b->u, sim->u, b->nu);
    CP(b->s, sim->act.s, b->na), CP(b->sd, sim->act.sd, b->na), CP(b->force, sim->force, b->na);
    CP(b->work, sim->work, b->na);
    CP(b->cpos, sim->c_pos, b->ncut), CP(b->cvel, sim->c_vel, b->ncut), CP(b->cacc, sim->c_acc, b->ncut);
#undef CP
    b->kin[i] = sim->kinetic;
    b->pot[i] = sim->potential;
    b->drift[i] = sim->drift;
    b->iterations[i] = sim->last_iterations;
    b->residual[i] = sim->residual_norm;
}

hymo_status hymo_rows_flush(hymo_rows *b, hymo_ref_writer *w, hymo_error *err)
{
    if (b->n == 0 || !w) {
        b->n = 0;
        return HYMO_OK;
    }
    hymo_ref_block blk = {(int)b->n,     b->time, b->z,   b->zd,    b->zdd,  b->p,    b->u,
                          b->s,     b->sd,   b->force, b->work, b->kin,  b->pot,  b->drift,
                          b->cpos,  b->cvel, b->cacc, b->iterations, b->residual};
    b->n = 0;
    return hymo_ref_writer_append(w, &blk, err);
}


typedef char name_t[HYMO_REF_TEXT_MAX];

hymo_status hymo_rows_open_writer(const hymo_sim *sim, const char *path, const char *formulation,
                                  const char *integrator, double dt,
                                  hymo_ref_writer **writer, void **names_out, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const hymo_run_options *opt = &sim->opt;
    int nz = sim->nz, np = sim->np, nu = sim->nu, na = sim->na, nc = sim->ncut;
    name_t *names = calloc((size_t)(2 * nz + np + nu + na + nc + 1), sizeof *names);
    *names_out = names;
    if (!names) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    name_t *zn = names, *zu = zn + nz, *pn = zu + nz, *un = pn + np, *an = un + nu, *cn = an + na;
    for (int j = 0; j < nz; ++j) {
        snprintf(zn[j], sizeof zn[j], "%s", model->bodies[j].joint_name);
        snprintf(zu[j], sizeof zu[j], "%s", model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE ? "rad" : "m");
    }
    for (int k = 0; k < np; ++k) snprintf(pn[k], sizeof pn[k], "%s", model->nodes[sim->cm->circ.vol_node[k]].name);
    for (int v = 0; v < nu; ++v) snprintf(un[model->valves[v].state], sizeof un[0], "%s", model->valves[v].name);
    for (int a = 0; a < na; ++a) snprintf(an[a], sizeof an[a], "%s", model->cylinders[a].name);
    for (int c = 0; c < nc; ++c) snprintf(cn[c], sizeof cn[c], "%s", model->cuts[c].name);
    hymo_ref_dims dims = {nz, np, nu, na, nc, (const name_t *)zn, (const name_t *)zu, (const name_t *)pn,
                          (const name_t *)un, (const name_t *)an, (const name_t *)cn};
    hymo_ref_header hdr = {model->name,
                           model->source_text ? model->source_text : "",
                           model->sha256,
                           formulation ? formulation : sim->form.ops->name,
                           integrator,
                           sim->jacobian->name,
                           hymo_linsol_name(opt->linear_solver),
                           dt,
                           opt->t_end,
                           opt->tol_position,
                           opt->tol_pressure,
                           opt->tol_spool,
                           opt->max_iter,
                           sim->form.ops->penalty_factor(&sim->form, &sim->mb)};
    return hymo_ref_writer_open(writer, path, &hdr, &dims, err);
}
