/* hymo — comparison of a run against a reference trajectory
 * (docs/compare.md).
 *
 * The run is linearly interpolated onto the reference times inside the
 * common time range; errors are run - reference, per signal component. */
#ifndef HYMO_COMPARE_H
#define HYMO_COMPARE_H

#include "hymo/reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compared signals (index k of the result arrays). */
enum { HYMO_CMP_Z, HYMO_CMP_ZD, HYMO_CMP_S, HYMO_CMP_SD, HYMO_CMP_P, HYMO_CMP_U, HYMO_CMP_FORCE,
       HYMO_CMP_SIGNALS };

/* "z", "zd", "s", "sd", "p", "U", "force"; NULL for k out of range. */
const char *hymo_compare_signal_name(int k);
/* Unit of component `component` of signal k: "rad" or "m" for z (from
 * ref->z_units; "" if z_units or the component is unavailable; "rad or m"
 * when ref is NULL, for a figure over all components), "rad/s" or "m/s"
 * for zd (likewise "rad/s or m/s"), "m", "m/s", "Pa", "V", "N" for the others.
 * Never NULL ("" for k out of range). */
const char *hymo_compare_signal_unit(const hymo_reference *ref, int k, int component);
/* Index of a signal name as above ("u" is accepted for "U"); -1 if unknown
 * (e.g. "residual_energy"). */
int hymo_compare_signal_find(const char *name);

/* Errors of a run against a reference (hymo_compare and its variants),
 * per signal k = HYMO_CMP_*. */
typedef struct {
    int n_samples;         /* reference rows inside the compared range */
    double t_start, t_end; /* compared range: the common range (within the window of
                              hymo_compare_components_in) */
    double rms[HYMO_CMP_SIGNALS]; /* largest per-component RMS error over components */
    double max[HYMO_CMP_SIGNALS]; /* largest absolute error over components and time */
    int worst_rms[HYMO_CMP_SIGNALS], worst_max[HYMO_CMP_SIGNALS]; /* component index (-1 if no components) */
    double t_worst_max[HYMO_CMP_SIGNALS]; /* time of the largest error (t_start if no components) */
    int has_residual_energy; /* run has /cosim residual energy */
    double residual_energy_final, residual_energy_max_abs; /* of the run's total curve, J */
    double residual_energy_rms_diff; /* RMS of (run curve - ref curve) if ref has one, else RMS of the run curve */
} hymo_compare_result;

/* Errors of `run` against `ref`: `run` is linearly interpolated onto the
 * reference times inside the common time range [max(t0), min(t_end)].
 * Both must have the same nz, np, nu, na (else HYMO_ERR_ARGUMENT naming the
 * mismatch). Works on in-memory hymo_reference structs too (the cosim
 * driver fills n, nz, np, nu, na, time, z, zd, s, sd, p, u, force and
 * optionally has_cosim/residual_energy_total itself; any other pointer may
 * be NULL).
 *
 * Details:
 * - Cost O(ref->n + run->n): one pass with a moving index; both time
 *   vectors must be non-decreasing and finite (else HYMO_ERR_ARGUMENT).
 *   Where the run has several rows at the same time, the last one is used.
 * - A non-finite error (NaN or Inf in either trajectory, e.g. an unstable
 *   co-simulation) counts as +Inf, so it can never pass a threshold.
 * - No common time range (or n == 0 in either) is HYMO_ERR_ARGUMENT; a
 *   NULL data pointer for a signal with components is HYMO_ERR_ARGUMENT.
 * - Residual energy: taken from run->residual_energy_total when
 *   run->has_cosim and that pointer is non-NULL.  final = last row,
 *   max_abs = max over all rows of the run; rms_diff is evaluated on the
 *   same reference samples (run curve interpolated), against
 *   ref->residual_energy_total when ref has one, else against zero.
 * - *out is zeroed first; on error its content is unspecified. */
hymo_status hymo_compare_trajectories(const hymo_reference *ref, const hymo_reference *run,
                                      hymo_compare_result *out, hymo_error *err);

/* Per-component errors.  Components are numbered signal by signal in the
 * order HYMO_CMP_Z .. HYMO_CMP_FORCE, columns in file order: component c of
 * signal k is hymo_compare_component_offset(ref, k) + c, and
 * hymo_compare_component_offset(ref, HYMO_CMP_SIGNALS) is their count. */
int hymo_compare_component_offset(const hymo_reference *ref, int k);

/* hymo_compare_trajectories, plus:
 * - present (may be NULL: all): present[i] = 0 leaves component i out (a
 *   run that lacks it, e.g. a CSV file with only some columns); its data
 *   may then be absent (NULL pointer when no component of the signal is
 *   present).  The per-signal figures in *out cover the present
 *   components only; a signal without any has worst_rms = worst_max = -1.
 * - comp_rms, comp_max, comp_t_max (all NULL or all of the component
 *   count): the RMS error, the max |error| and its time of each component
 *   (NaN for components left out). */
hymo_status hymo_compare_components(const hymo_reference *ref, const hymo_reference *run,
                                    const unsigned char *present, hymo_compare_result *out,
                                    double *comp_rms, double *comp_max, double *comp_t_max,
                                    hymo_error *err);

/* hymo_compare_components on the reference samples inside the window
 * [t_from, t_to] only (the common time range intersected with it; -INFINITY,
 * INFINITY: the whole common range).  t_start and t_end of *out are the
 * compared range.  A window that is NaN or empty (t_from > t_to), or that
 * misses the common range, is HYMO_ERR_ARGUMENT.  Whether the run covers
 * the window is the caller's check (`hymo compare` refuses a run that does
 * not). */
hymo_status hymo_compare_components_in(const hymo_reference *ref, const hymo_reference *run,
                                       const unsigned char *present, double t_from, double t_to,
                                       hymo_compare_result *out, double *comp_rms,
                                       double *comp_max, double *comp_t_max, hymo_error *err);

#ifdef __cplusplus
}
#endif
#endif
