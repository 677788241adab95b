/* hymo — comparison of a run against a reference trajectory
 * (include/hymo/compare.h, docs/compare.md).
 *
 * One pass over the reference rows inside the common time range with a
 * moving index into the run's rows: O(n_ref + n_run).  Each reference
 * time t is bracketed by run rows j, j+1 with t_run[j] <= t < t_run[j+1]
 * (or t_run[j] == t), so the interpolation never divides by zero, also
 * when the run has repeated times. */
#include "hymo/compare.h"
#include "signals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The compared signals: index k of the result arrays -> hymo_ref_signals[]
 * (names, units and data come from that table). */
static const int compared[HYMO_CMP_SIGNALS] = {
    [HYMO_CMP_Z] = HYMO_SIG_Z,   [HYMO_CMP_ZD] = HYMO_SIG_ZD, [HYMO_CMP_S] = HYMO_SIG_S,
    [HYMO_CMP_SD] = HYMO_SIG_SD, [HYMO_CMP_P] = HYMO_SIG_P,   [HYMO_CMP_U] = HYMO_SIG_U,
    [HYMO_CMP_FORCE] = HYMO_SIG_FORCE,
};

const char *hymo_compare_signal_name(int k)
{
    return k >= 0 && k < HYMO_CMP_SIGNALS ? hymo_ref_signal_name(&hymo_ref_signals[compared[k]]) : NULL;
}

const char *hymo_compare_signal_unit(const hymo_reference *ref, int k, int component)
{
    if (k < 0 || k >= HYMO_CMP_SIGNALS) return "";
    const hymo_ref_signal *sg = &hymo_ref_signals[compared[k]];
    if (sg->unit_rule == HYMO_UNITS_FIXED) return sg->units;
    /* per coordinate: "rad" or "m" (+ "/s", "/s^2") from ref->z_units; without a
     * reference (a figure over all components) both */
    if (!ref) return k == HYMO_CMP_Z ? "rad or m" : k == HYMO_CMP_ZD ? "rad/s or m/s" : "";
    if (!ref->z_units || component < 0 || component >= ref->nz) return "";
    return hymo_ref_signal_coord_unit_static(sg, ref->z_units[component]);
}

int hymo_compare_signal_find(const char *name)
{
    if (!name) return -1;
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        if (!strcmp(name, hymo_compare_signal_name(k))) return k;
    }
    if (!strcmp(name, "u")) return HYMO_CMP_U;
    return -1;
}

/* Data and column count of signal k. */
static const double *signal_data(const hymo_reference *r, int k, int *cols)
{
    const hymo_ref_signal *sg = &hymo_ref_signals[compared[k]];
    int counts[HYMO_COLS_COUNT];
    hymo_ref_counts_ref(r, counts);
    *cols = counts[sg->cols];
    return hymo_ref_signal_get(sg, r, sg->ref);
}

static hymo_status check_times(const hymo_reference *r, const char *what,
                               const unsigned char *present, hymo_error *err)
{
    if (r->n <= 0) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "compare: the %s has no rows", what);
    }
    if (!r->time) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "compare: the %s has no time vector (NULL)",
                              what);
    }
    for (int i = 0; i < r->n; i++) {
        if (!isfinite(r->time[i])) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "compare: the %s's time is not finite in row %d", what, i);
        }
        if (i > 0 && r->time[i] < r->time[i - 1]) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "compare: the %s's time decreases in row %d (%.17g < %.17g)",
                                  what, i, r->time[i], r->time[i - 1]);
        }
    }
    for (int k = 0, off = 0; k < HYMO_CMP_SIGNALS; k++) {
        int cols = 0;
        const double *d = signal_data(r, k, &cols);
        int used = 0;
        for (int c = 0; c < cols; c++) used |= !present || present[off + c];
        off += cols;
        if (used && !d) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "compare: the %s has no data for signal '%s' (NULL, %d "
                                  "components)",
                                  what, hymo_compare_signal_name(k), cols);
        }
    }
    return HYMO_OK;
}

/* a + w (b - a); exactly a when w == 0 (also if b is not finite). */
static double lerp(double a, double b, double w)
{
    return w == 0.0 ? a : a + w * (b - a);
}

/* |e|, with NaN and Inf counted as +Inf. */
static double abs_error(double e)
{
    double a = fabs(e);
    return isfinite(a) ? a : INFINITY;
}

int hymo_compare_component_offset(const hymo_reference *ref, int k)
{
    if (!ref || k < 0) return 0;
    if (k > HYMO_CMP_SIGNALS) k = HYMO_CMP_SIGNALS;
    int off = 0;
    for (int i = 0; i < k; i++) {
        int cols = 0;
        signal_data(ref, i, &cols);
        off += cols;
    }
    return off;
}

static hymo_status compare_core(const hymo_reference *ref, const hymo_reference *run,
                                const unsigned char *present, double t_from, double t_to,
                                hymo_compare_result *out, double *comp_rms, double *comp_max,
                                double *comp_t, hymo_error *err);

hymo_status hymo_compare_trajectories(const hymo_reference *ref, const hymo_reference *run,
                                      hymo_compare_result *out, hymo_error *err)
{
    return compare_core(ref, run, NULL, -INFINITY, INFINITY, out, NULL, NULL, NULL, err);
}

hymo_status hymo_compare_components(const hymo_reference *ref, const hymo_reference *run,
                                    const unsigned char *present, hymo_compare_result *out,
                                    double *comp_rms, double *comp_max, double *comp_t_max,
                                    hymo_error *err)
{
    return compare_core(ref, run, present, -INFINITY, INFINITY, out, comp_rms, comp_max,
                        comp_t_max, err);
}

hymo_status hymo_compare_components_in(const hymo_reference *ref, const hymo_reference *run,
                                       const unsigned char *present, double t_from, double t_to,
                                       hymo_compare_result *out, double *comp_rms,
                                       double *comp_max, double *comp_t_max, hymo_error *err)
{
    if (isnan(t_from) || isnan(t_to) || t_from > t_to) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "compare: the window %g .. %g s is empty or not a number", t_from,
                              t_to);
    }
    return compare_core(ref, run, present, t_from, t_to, out, comp_rms, comp_max, comp_t_max,
                        err);
}

static hymo_status compare_core(const hymo_reference *ref, const hymo_reference *run,
                                const unsigned char *present, double t_from, double t_to,
                                hymo_compare_result *out, double *comp_rms, double *comp_max,
                                double *comp_t, hymo_error *err)
{
    if (!ref || !run || !out) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_compare_trajectories: NULL argument");
    }
    memset(out, 0, sizeof *out);
    static const char *const dim_names[4] = {"nz (joint coordinates)", "np (pressures)",
                                             "nu (valves)", "na (actuators)"};
    const int dref[4] = {ref->nz, ref->np, ref->nu, ref->na};
    const int drun[4] = {run->nz, run->np, run->nu, run->na};
    for (int i = 0; i < 4; i++) {
        if (dref[i] < 0 || drun[i] < 0) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "compare: negative dimension %s",
                                  dim_names[i]);
        }
        if (dref[i] != drun[i]) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "compare: dimension mismatch: %s is %d in the reference, %d "
                                  "in the run",
                                  dim_names[i], dref[i], drun[i]);
        }
    }
    hymo_status st = check_times(ref, "reference", present, err);
    if (st == HYMO_OK) st = check_times(run, "run", present, err);
    if (st != HYMO_OK) return st;

    const int n = ref->n, m = run->n;
    const double *rt = ref->time, *qt = run->time;
    double t_lo = rt[0] > qt[0] ? rt[0] : qt[0];
    double t_hi = rt[n - 1] < qt[m - 1] ? rt[n - 1] : qt[m - 1];
    if (t_lo > t_hi) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "compare: no common time range (reference %g .. %g s, run %g .. "
                              "%g s)",
                              rt[0], rt[n - 1], qt[0], qt[m - 1]);
    }
    if (t_from > t_lo) t_lo = t_from;
    if (t_to < t_hi) t_hi = t_to;
    if (t_lo > t_hi) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "compare: the window %g .. %g s and the common time range "
                              "(reference %g .. %g s, run %g .. %g s) do not overlap",
                              t_from, t_to, rt[0], rt[n - 1], qt[0], qt[m - 1]);
    }

    /* Column offsets of each signal in the per-component sums. */
    int cols[HYMO_CMP_SIGNALS], off[HYMO_CMP_SIGNALS + 1];
    const double *a[HYMO_CMP_SIGNALS], *b[HYMO_CMP_SIGNALS];
    off[0] = 0;
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        a[k] = signal_data(ref, k, &cols[k]);
        b[k] = signal_data(run, k, &cols[k]);
        off[k + 1] = off[k] + cols[k];
    }
    const int ncomp = off[HYMO_CMP_SIGNALS];
    double *sumsq = calloc(ncomp > 0 ? (size_t)ncomp : 1, sizeof *sumsq);
    if (!sumsq) return hymo_error_set(err, HYMO_ERR_NOMEM, "compare: out of memory");

    if (comp_max) {
        for (int i = 0; i < ncomp; i++) {
            comp_max[i] = -1.0;
            comp_t[i] = t_lo;
        }
    }
    const double *eref = ref->has_cosim ? ref->residual_energy_total : NULL;
    const double *erun = run->has_cosim ? run->residual_energy_total : NULL;
    double e_sumsq = 0.0;
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        out->max[k] = -1.0;
        out->worst_max[k] = -1;
        out->worst_rms[k] = -1;
    }

    int j = 0, samples = 0;
    for (int i = 0; i < n; i++) {
        const double t = rt[i];
        if (t < t_lo) continue;
        if (t > t_hi) break;
        while (j + 1 < m && qt[j + 1] <= t) j++;
        /* qt[j] <= t (t >= qt[0]); qt[j + 1] > t if it exists */
        int j1 = j;
        double w = 0.0;
        if (qt[j] < t && j + 1 < m) {
            j1 = j + 1;
            w = (t - qt[j]) / (qt[j1] - qt[j]);
        }
        for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
            const int c = cols[k];
            /* a signal without components, or one the run lacks entirely
             * (present[] all 0 for it, data NULL): nothing to index */
            if (c == 0 || !a[k] || !b[k]) continue;
            const double *ra = a[k] + (size_t)i * (size_t)c;
            const double *q0 = b[k] + (size_t)j * (size_t)c;
            const double *q1 = b[k] + (size_t)j1 * (size_t)c;
            for (int col = 0; col < c; col++) {
                const int idx = off[k] + col;
                if (present && !present[idx]) continue;
                const double e = abs_error(lerp(q0[col], q1[col], w) - ra[col]);
                sumsq[idx] += e * e;
                if (comp_max && e > comp_max[idx]) {
                    comp_max[idx] = e;
                    comp_t[idx] = t;
                }
                if (e > out->max[k]) {
                    out->max[k] = e;
                    out->worst_max[k] = col;
                    out->t_worst_max[k] = t;
                }
            }
        }
        if (erun) {
            const double e = abs_error(lerp(erun[j], erun[j1], w) - (eref ? eref[i] : 0.0));
            e_sumsq += e * e;
        }
        samples++;
    }
    if (samples == 0) {
        free(sumsq);
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "compare: no reference sample inside the common time range %g .. "
                              "%g s",
                              t_lo, t_hi);
    }
    out->n_samples = samples;
    out->t_start = t_lo;
    out->t_end = t_hi;
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        double best = -1.0;
        for (int col = 0; col < cols[k]; col++) {
            const int idx = off[k] + col;
            if (present && !present[idx]) {
                if (comp_rms) comp_rms[idx] = comp_max[idx] = comp_t[idx] = NAN;
                continue;
            }
            const double r = sqrt(sumsq[idx] / samples);
            if (comp_rms) comp_rms[idx] = r;
            if (r > best) {
                best = r;
                out->worst_rms[k] = col;
            }
        }
        out->rms[k] = best > 0.0 ? best : 0.0;
        if (out->worst_max[k] < 0) {
            out->max[k] = 0.0;
            out->t_worst_max[k] = t_lo;
        }
    }
    free(sumsq);

    if (erun) {
        out->has_residual_energy = 1;
        out->residual_energy_final = erun[m - 1];
        double mx = 0.0;
        for (int i = 0; i < m; i++) {
            const double e = abs_error(erun[i]);
            if (e > mx) mx = e;
        }
        out->residual_energy_max_abs = mx;
        out->residual_energy_rms_diff = sqrt(e_sumsq / samples);
    }
    return HYMO_OK;
}
