/* The co-simulation run loop shared by split mode (src/cosim/cosim.c,
 * hymo_cosim_run) and system files (src/cosim/cosim_system.c): a front end
 * builds the subsystems, the master and the power bonds; hymo_cosim_drive
 * runs the master steps with the power bonds, instability checks, output
 * rows (read through the subsystems' variables), verdict and HDF5 output.
 * Internal header. */
#ifndef HYMO_COSIM_DRIVER_H
#define HYMO_COSIM_DRIVER_H

#include "cosim_internal.h"
#include "hymo/reference.h"

/* A power bond (seed 000 Eqs. 20-24): subsystem `sub` (the mechanical
 * side) receives the effort through its inputs eff_in and returns the flow
 * sd as output flow_out; the other side delivers the effort through the
 * outputs driving those inputs and publishes the flow it used, sd~, as
 * variable sdt_vr of subsystem sdt_sub.
 *   F~ = sum_k eff_w[k] u_{eff_in[k]}(t + H)   (the master's polynomials)
 *   F  = sum_k eff_w[k] y_{eff_src[k]}
 *   dP = F~ sd - F sd~ */
typedef struct {
    char name[HYMO_REF_TEXT_MAX];
    char eff_name[2][HYMO_REF_TEXT_MAX]; /* names of the effort columns in the file */
    int sub, n_eff;                      /* n_eff 1 (a force) or 2 (piston, rod pressure) */
    int eff_in[2];
    double eff_w[2];
    int eff_src_sub[2], eff_src_out[2];
    int flow_out, sdd_out; /* outputs of sub: sd, sdd (-1: none) */
    int sdt_sub, sdt_vr;
    /* A TLM bond (tlm = 1; docs/cosimulation.md "TLM coupling"): the
     * efforts are the waves of the two lines (eff_in the ones sub receives,
     * eff_src the other side's outputs, weights unused), wave_out[k] the
     * outputs of sub that send its waves; dP = the power the lines deliver
     * to sub (its variable line_vr) minus the power the other side pushes
     * into them (variable line_other_vr of subsystem line_other_sub), and
     * the residual energy also counts the change of the energy in transit,
     * H c^2 / (4 Z_c) per line end, with Z_c and the parasitic mass L A^2
     * read from sub's variables zc_vr[k], mass_vr[k]. */
    int tlm;
    int line_vr, line_other_sub, line_other_vr;
    int wave_out[2], zc_vr[2], mass_vr[2];
} hymo_cosim_bond;

/* Root attributes and names of a run without a model (a system file). */
typedef struct {
    const char *name, *source_text, *sha256, *path;
} hymo_cosim_source;

typedef struct hymo_cosim_driver hymo_cosim_driver;
typedef hymo_status (*hymo_cosim_attrs_fn)(const void *ctx, hymo_ref_writer *w, hymo_error *err);

/* What a front end gives the loop.  The driver owns nothing of it. */
typedef struct {
    hymo_subsystem *const *subs;
    int nsub;
    hymo_master *m;
    const hymo_link *links;
    int n_links;
    const hymo_cosim_bond *bonds;
    int n_bonds;
    const hymo_cosim_options *opt; /* H, mech.t_end, verdict limits and thresholds (and the split's options) */
    int rectangle;                 /* residual energy by the rectangle rule (Lagrange order 0) */
    int mech;                      /* the subsystem whose variables fill the SPEC §8 rows, or -1 */
    /* energy-controlled steps (opt->H_control): the order in H of the
     * residual energy of a step (input approximation order + 2) */
    double control_order;
    /* split: the model (dimensions, names, header; every row variable
     * required); NULL: dimensions counted from the variables, names from
     * their descriptions, header from src */
    const hymo_model *model;
    const hymo_cosim_source *src;
    int record_outputs;            /* also /cosim/outputs/<subsystem> */
    const char *(*output_name)(const hymo_subsystem *sub, int i); /* column names there (may be NULL) */
    hymo_cosim_attrs_fn attrs;     /* the front end's /cosim attributes */
    const void *attrs_ctx;
    /* a subsystem failing with this status ends the run with an error
     * (0: every failure is "unstable") */
    hymo_status abort_status;
    /* the front end's own instability test after each communication step
     * (NULL: none): 1 and the reason when the run is unstable at t (step) */
    int (*unstable)(void *ctx, double t, long step, char *reason, size_t len);
    void *unstable_ctx;
} hymo_cosim_setup;

/* Checks of the verdict fields of opt (limits, thresholds). */
hymo_status hymo_cosim_verdict_options_check(const hymo_cosim_options *opt, hymo_error *err);

/* Runs from 0 to opt->mech.t_end (a multiple of H, checked by the front
 * end); see hymo_cosim_run. */
hymo_status hymo_cosim_drive(const hymo_cosim_setup *setup, const hymo_reference *ref, const char *out_path,
                             hymo_cosim_summary *summary, hymo_error *err);

/* The summary lines after the front end's header lines. */
void hymo_cosim_summary_print_results(FILE *out, const hymo_cosim_options *opt, const hymo_cosim_summary *s);

#endif
