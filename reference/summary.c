/* hymo — run summary block, printed by `hymo run` and `hymo info`. */
#include "hymo/reference.h"

#include <stdio.h>
#include <string.h>

/* Prints a possibly empty fixed-width text field. */
static const char *text(const char *s, const char *fallback)
{
    return s && s[0] ? s : fallback;
}

/* Display name of an integrator identifier (header attribute value). */
static const char *integrator_label(const char *id)
{
    if (!id || !id[0] || strcmp(id, "trapezoidal-newton") == 0) {
        return "trapezoidal Newton-Raphson";
    }
    return id;
}

void hymo_run_summary_print(FILE *out, const hymo_run_summary *s)
{
    if (!out || !s) return;
    /* n_steps < 0: summary recomputed from a killed run's datasets; the
     * step count, Jacobian evaluations and wall time are then unknown. */
    const int unknown = s->n_steps < 0;

    const int w = HYMO_REF_TEXT_MAX; /* fields need not be NUL-terminated */
    fprintf(out, "%-12s %.*s\n", "model", w, text(s->model_name, "?"));
    fprintf(out, "%-12s %.*s | %.*s | jacobian %.*s | solver %.*s\n", "formulation", w,
            text(s->formulation, "?"), w, integrator_label(s->integrator), w,
            text(s->jacobian, "?"), w, text(s->linear_solver, "?"));

    fprintf(out, "%-12s 0 .. %g s, dt %g s, ", "time", s->t_end, s->dt);
    if (unknown) {
        fprintf(out, "steps unknown, ");
    } else {
        fprintf(out, "%ld step%s, ", s->n_steps, s->n_steps == 1 ? "" : "s");
    }
    if (s->complete) {
        fprintf(out, "complete\n");
    } else {
        fprintf(out, "INCOMPLETE (stopped at t = %g s)\n", s->t_reached);
    }

    if (s->max_work > 0.0) {
        fprintf(out, "%-12s peak |D| %.4g J = %.4f %% of max |W_act| %.5g J\n", "energy drift",
                s->peak_drift, 100.0 * s->relative_drift, s->max_work);
    } else {
        fprintf(out, "%-12s peak |D| %.4g J (no actuator work)\n", "energy drift", s->peak_drift);
    }

    fprintf(out, "%-12s max |Phi| %.2g, |Phi_z zd| %.2g, |Phi_z zdd + dPhi_z zd| %.2g\n",
            "constraints", s->max_constraint_position, s->max_constraint_velocity,
            s->max_constraint_acceleration);

    fprintf(out, "%-12s mean %.2f, max %d, jacobian evaluations ", "iterations",
            s->mean_iterations, s->max_iterations);
    if (unknown) {
        fprintf(out, "unknown\n");
    } else {
        fprintf(out, "%ld\n", s->jacobian_evaluations);
    }

    if (s->has_pressure_range) {
        fprintf(out, "%-12s min %.4g MPa (%.*s at %.6g s), max %.4g MPa (%.*s at %.6g s)\n", "pressures",
                1e-6 * s->p_min, w, text(s->p_min_volume, "?"), s->p_min_time, 1e-6 * s->p_max, w,
                text(s->p_max_volume, "?"), s->p_max_time);
        if (s->n_volumes_below_zero > 0)
            fprintf(out, "%-12s NON-PHYSICAL: %d volume%s below 0 Pa absolute (the fluid model has no "
                         "cavitation limit; results past that point are not physical)\n",
                    "warning", s->n_volumes_below_zero, s->n_volumes_below_zero == 1 ? "" : "s");
        /* the fluid law, then each volume's range */
        if (s->fluid_model[0]) {
            if (s->p_floor > 0.0)
                fprintf(out, "%-12s %.*s, floor %.6g Pa (vapour pressure)\n", "fluid", w, s->fluid_model,
                        s->p_floor);
            else
                fprintf(out, "%-12s %.*s, floor 0 Pa absolute\n", "fluid", w, s->fluid_model);
            if (s->n_volumes_below_floor > 0 && s->p_floor > 0.0)
                fprintf(out, "%-12s NON-PHYSICAL: %d volume%s below the fluid's floor %.6g Pa (a step too long "
                             "for the expansion rate)\n",
                        "warning", s->n_volumes_below_floor, s->n_volumes_below_floor == 1 ? "" : "s", s->p_floor);
            for (int k = 0; k < s->n_volume_ranges; ++k) {
                const hymo_volume_range *vr = &s->volume_ranges[k];
                fprintf(out, "  %-10.*s min %.6g MPa at %.6g s, max %.6g MPa at %.6g s%s\n", w, vr->name,
                        1e-6 * vr->p_min, vr->p_min_time, 1e-6 * vr->p_max, vr->p_max_time,
                        vr->below_floor ? (s->p_floor > 0.0 ? "  NON-PHYSICAL (below the floor)"
                                                             : "  NON-PHYSICAL (below 0 Pa absolute)")
                                        : "");
            }
            if (s->n_volumes_total > s->n_volume_ranges)
                fprintf(out, "  (%d more volumes: see /states/p_range)\n", s->n_volumes_total - s->n_volume_ranges);
        }
    }
    if (s->n_events > 0)
        fprintf(out, "%-12s %ld located (%ld Newton iterations to locate them)\n", "events", s->n_events,
                s->event_iterations);
    if (s->step_halvings > 0)
        fprintf(out, "%-12s %ld sub-steps retried with half the size after a Newton failure (a transient faster "
                "than dt there)\n", "halvings", s->step_halvings);
    const char *indep = s->independent_list[0] && memchr(s->independent_list, '\0', sizeof s->independent_list)
                            ? s->independent_list
                            : text(s->independent, "?");
    fprintf(out, "%-12s %.*s (%d re-selection%s)\n", "independent", (int)sizeof s->independent_list, indep,
            s->n_reselections, s->n_reselections == 1 ? "" : "s");
    if (s->initial_rates[0])
        fprintf(out, "%-12s %.*s\n", "rates", (int)sizeof s->initial_rates, s->initial_rates);
    if (s->singular_positions[0])
        fprintf(out, "%-12s %.*s\n", "singular", (int)sizeof s->singular_positions, s->singular_positions);
    if (s->n_redundant > 0)
        fprintf(out, "%-12s %d of %d constraint equations (rank %d): %.*s; max |Phi| of them %.2g\n", "redundant",
                s->n_redundant, s->n_redundant + s->constraint_rank, s->constraint_rank, w, text(s->redundant, "?"),
                s->max_redundant_violation);

    if (s->has_accuracy)
        fprintf(out, "%-12s estimated max error z %.2g rad|m, p %.3g Pa, s %.2g m (%.*s)\n", "accuracy",
                s->z_max_error, s->p_max_error, s->s_max_error, w, text(s->accuracy_method, "?"));
    if (s->has_accuracy && s->accuracy_reliable == 0) /* one line: the estimate is not the run's error */
        fprintf(out, "%-12s the estimate is UNRELIABLE: %.*s\n", "accuracy", (int)sizeof s->accuracy_check,
                text(s->accuracy_check, "?"));
    else if (s->accuracy_missing_reason[0])
        fprintf(out, "%-12s not estimated: %.*s\n", "accuracy", (int)sizeof s->accuracy_missing_reason,
                s->accuracy_missing_reason);
    if (unknown) {
        fprintf(out, "%-12s unknown\n", "wall time");
    } else {
        if (s->wall_total > 0.0)
            fprintf(out, "%-12s %.3g s integration, %.3g s in all (start, file output, error estimate)\n",
                    "wall time", s->wall_time, s->wall_total);
        else
            fprintf(out, "%-12s %.3g s\n", "wall time", s->wall_time);
    }
}
