/* Energy-controlled communication steps (cosim_internal.h,
 * docs/cosimulation.md "Energy-controlled communication steps"; Sadjina
 * et al. 2017): the error estimate of a step from the residual energy of
 * every power bond, a PI controller for the next H, rejection and retake
 * from a checkpoint of the master and every subsystem.
 *
 * Every H is q H_min, q an integer in [1, q_max]: H_min is the quantum
 * that holds whole internal steps of every subsystem.  The PI controller
 * (Gustafsson; Hairer-Wanner II §IV.2):
 *   fac = safety est^(-0.7/k) est_prev^(0.4/k), clipped to [0.2, 2]
 * (not above 1 right after a rejection), q_next = floor(q fac), at least 1;
 * a rejected step is retaken with q = floor(q max(0.2, safety est^(-1/k))),
 * less than q.  The step size is clipped so that the steps land on t_end
 * and on every point of the output grid. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"
#include "number.h"
#include "hymo/subsystem.h" /* hymo_steps_per_communication */

#define SAFETY 0.9
#define FAC_MIN 0.2
#define FAC_MAX 2.0
#define TOL_ENERGY_SHAPE "RTOL,ATOL (relative tolerance >= 0, absolute tolerance in J > 0)"

/* hymo_cosim_control_replay's schedule (NULL: none). */
static const double *replay_H;
static long replay_n;

void hymo_cosim_control_replay(const double *H, long n) { replay_H = H, replay_n = H ? n : 0; }

void hymo_cosim_control_limits(const hymo_cosim_options *opt, double *H_min, double *H_max)
{
    double lo = opt->H_min;
    if (!(lo > 0.0)) lo = opt->mech.dt > 0.0 && opt->mech.dt <= opt->H ? opt->mech.dt : opt->H;
    double hi = opt->H_max;
    if (!(hi > 0.0)) {
        hi = 20.0 * opt->H;
        if (hi > opt->mech.t_end) hi = opt->mech.t_end;
    }
    *H_min = lo, *H_max = hi;
}

hymo_status hymo_cosim_control_check(const hymo_cosim_options *opt, hymo_error *err)
{
    if (opt->H_control == HYMO_H_FIXED) return HYMO_OK;
    if (opt->H_control != HYMO_H_ENERGY)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation option out of range (H_control)");
    if (!(opt->tol_energy_rel >= 0.0) || !isfinite(opt->tol_energy_rel) || !(opt->tol_energy_abs > 0.0) ||
        !isfinite(opt->tol_energy_abs))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "--tol-energy %g,%g: the relative tolerance must be >= 0 and the absolute one (J) "
                              "positive, both finite", opt->tol_energy_rel, opt->tol_energy_abs);
    double lo, hi;
    hymo_cosim_control_limits(opt, &lo, &hi);
    const double H = opt->H, T = opt->mech.t_end;
    if (!(lo > 0.0) || !isfinite(lo) || !(hi >= lo) || !isfinite(hi))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "H_min = %g s, H_max = %g s: need 0 < H_min <= H_max", lo, hi);
    if (!(H >= lo && H <= hi))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "H = %g s (the first step) is not in [H_min, H_max] = [%g, %g] s",
                              H, lo, hi);
    if (!hymo_steps_per_communication(H, lo))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "H = %.9g s is not a multiple of H_min = %.9g s: every communication step is a "
                              "multiple of H_min", H, lo);
    if (!(T >= lo) || !hymo_steps_per_communication(T, lo))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "t_end = %.9g s is not a multiple of H_min = %.9g s: the steps would not land on t_end",
                              T, lo);
    if (opt->output_dt > 0.0 && !hymo_steps_per_communication(opt->output_dt, lo))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "output_dt = %.9g s is not a multiple of H_min = %.9g s",
                              opt->output_dt, lo);
    if (!(opt->output_dt >= 0.0) || !isfinite(opt->output_dt))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "output_dt = %g s must be >= 0 (0: no grid)", opt->output_dt);
    return HYMO_OK;
}

/* --tol-energy's parts: RTOL >= 0, ATOL (J) > 0; one message for any bad part. */
static int tol_energy_part(const char *name, const char *value, const char *part, int which, double *out,
                           hymo_error *err)
{
    double v;
    if (!hymo_parse_number(part, HYMO_NUMBER_RANGE, &v) || !(which == 0 ? v >= 0.0 : v > 0.0)) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' is not " TOL_ENERGY_SHAPE, name, value);
        return -1;
    }
    *out = v;
    return 1;
}

int hymo_cosim_tol_energy_parse(const char *name, const char *value, hymo_cosim_options *o, hymo_error *err)
{
    return hymo_cosim_tol_pair_parse(name, value, TOL_ENERGY_SHAPE, tol_energy_part, &o->tol_energy_rel,
                                     &o->tol_energy_abs, err);
}

hymo_status hymo_cosim_control_init(hymo_cosim_control *c, const hymo_cosim_options *opt, hymo_master *m, double k,
                                    hymo_error *err)
{
    memset(c, 0, sizeof *c);
    c->on = opt->H_control == HYMO_H_ENERGY;
    if (!c->on) return HYMO_OK;
    c->rtol = opt->tol_energy_rel, c->atol = opt->tol_energy_abs;
    hymo_cosim_control_limits(opt, &c->H_min, &c->H_max);
    c->k = k;
    c->q_end = lround(opt->mech.t_end / c->H_min);
    c->q_grid = opt->output_dt > 0.0 ? lround(opt->output_dt / c->H_min) : 0;
    c->q_max = (long)floor(c->H_max / c->H_min * (1.0 + 1e-12));
    if (c->q_max < 1) c->q_max = 1;
    c->H_target = opt->H;
    c->est_prev = 1.0;
    c->H_lo = HUGE_VAL;
    hymo_error e;
    if (hymo_master_checkpoint_create(m, &c->cp, &e) == HYMO_OK) {
        c->can_reject = 1;
    } else {
        c->cp = NULL;
        snprintf(c->note, sizeof c->note, "no step rejected: %.200s", e.message);
    }
    c->cap = c->q_end;
    double **arr[] = {&c->h_t, &c->h_H, &c->h_est, &c->h_rej, &c->r_t, &c->r_H, &c->r_est};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i)
        if (!(*arr[i] = calloc((size_t)c->cap, sizeof(double)))) {
            hymo_cosim_control_free(c);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (step-control history)");
        }
    return HYMO_OK;
}

void hymo_cosim_control_free(hymo_cosim_control *c)
{
    hymo_master_checkpoint_free(c->cp);
    double *arr[] = {c->h_t, c->h_H, c->h_est, c->h_rej, c->r_t, c->r_H, c->r_est};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    memset(c, 0, sizeof *c);
}

int hymo_cosim_control_done(const hymo_cosim_control *c) { return c->q_done >= c->q_end; }

double hymo_cosim_control_begin(hymo_cosim_control *c, hymo_master *m)
{
    long q = (long)floor(c->H_target / c->H_min * (1.0 + 1e-12));
    if (q > c->q_max) q = c->q_max;
    if (q < 1) q = 1;
    c->clipped = 0;
    c->replay = replay_H != NULL;
    if (c->replay) q = c->n_accepted < replay_n ? lround(replay_H[c->n_accepted] / c->H_min) : 1;
    if (q > c->q_end - c->q_done) q = c->q_end - c->q_done, c->clipped = 1;
    if (c->q_grid > 0) {
        const long to_grid = c->q_grid - c->q_done % c->q_grid;
        if (q > to_grid) q = to_grid, c->clipped = 1;
    }
    c->q_step = q;
    if (c->can_reject) hymo_master_save(m, c->cp);
    const double H = (double)q * c->H_min;
    hymo_master_set_step_size(m, H, NULL);
    return H;
}

double hymo_cosim_control_estimate(const hymo_cosim_control *c, int nb, const double *dE, const double *E_tr)
{
    double est = 0.0;
    for (int b = 0; b < nb; ++b) {
        const double e = fabs(dE[b]) / (c->rtol * fabs(E_tr[b]) + c->atol);
        if (!(e <= est)) est = e; /* NaN wins */
    }
    return est;
}

int hymo_cosim_control_end(hymo_cosim_control *c, hymo_master *m, double t, double est)
{
    const double H = (double)c->q_step * c->H_min;
    if (!(est <= 1.0) && c->can_reject && c->q_step > 1 && !c->replay) { /* reject: retake from the checkpoint */
        hymo_master_restore(m, c->cp);
        if (c->n_rej_hist < c->cap) {
            const long i = c->n_rej_hist++;
            c->r_t[i] = t, c->r_H[i] = H, c->r_est[i] = est;
        }
        c->n_rejected++, c->rej_now++;
        double fac = isfinite(est) ? SAFETY * pow(est, -1.0 / c->k) : FAC_MIN;
        if (!(fac >= FAC_MIN)) fac = FAC_MIN;
        c->H_target = H * fac;
        if (c->H_target > H - c->H_min) c->H_target = H - c->H_min; /* strictly smaller */
        c->after_reject = 1;
        return 0;
    }
    /* accepted */
    if (c->n_hist < c->cap) {
        const long i = c->n_hist++;
        c->h_t[i] = t + H, c->h_H[i] = H, c->h_est[i] = est, c->h_rej[i] = (double)c->rej_now;
    }
    c->n_accepted++;
    if (!(est <= 1.0)) c->n_over++;
    if (est > c->est_max || !isfinite(est)) c->est_max = est;
    c->H_sum += H;
    if (H < c->H_lo) c->H_lo = H;
    if (H > c->H_hi) c->H_hi = H;
    c->q_done += c->q_step;
    c->rej_now = 0;
    const double e = est > 1e-10 ? est : 1e-10, ep = c->est_prev > 1e-10 ? c->est_prev : 1e-10;
    double fac = SAFETY * pow(e, -0.7 / c->k) * pow(ep, 0.4 / c->k);
    if (!(fac >= FAC_MIN)) fac = FAC_MIN;
    const double fmax = c->after_reject ? 1.0 : FAC_MAX;
    if (fac > fmax) fac = fmax;
    /* from the target, not the step taken (floor of the target, or
     * clipped to t_end or the grid): growth below a quantum accumulates */
    c->H_target *= fac;
    if (c->H_target > c->H_max) c->H_target = c->H_max;
    if (c->H_target < c->H_min) c->H_target = c->H_min;
    c->est_prev = est;
    c->after_reject = 0;
    (void)m;
    return 1;
}
