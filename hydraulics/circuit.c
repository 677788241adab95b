#include "circuit.h"
#include "elements.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double hymo_orifice_g(double dp, double p_tr)
{
    double dg;
    return hymo_orifice_g_d(dp, p_tr, &dg);
}

static int *index_array(int n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(int));
}

/* ---- time-dependent pump speeds and set flows ---- */

/* the element kinds with switching functions, in their order in g
 * (circuit.h); the accumulators' follow */
static const int switch_order[] = {HYMO_ELEMENT_CYLINDER, HYMO_ELEMENT_RELIEF, HYMO_ELEMENT_CHECK, HYMO_ELEMENT_VALVE,
                                   HYMO_ELEMENT_FLOW_CONTROL};
#define N_SWITCH_KINDS ((int)(sizeof switch_order / sizeof switch_order[0]))

int hymo_circuit_has_inputs(const hymo_model *model)
{
    for (int j = 0; j < model->n_pumps; ++j)
        if (model->pumps[j].speed_signal >= 0) return 1;
    for (int f = 0; f < model->n_flow_controls; ++f)
        if (model->flow_controls[f].set_flow_signal >= 0) return 1;
    return 0;
}

static double factor_at(const hymo_model *model, int s, double t, int side, double dt)
{
    if (s < 0) return 1.0;
    const hymo_signal *sig = &model->signals[s];
    if (side == 0) return hymo_signal_eval(sig, t, +1);
    return dt > 0.0 ? hymo_signal_eval_snapped(sig, t, side, dt) : hymo_signal_eval(sig, t, side);
}

void hymo_circuit_inputs(const hymo_model *model, double t, int side, double dt, double *speed, double *flow)
{
    for (int j = 0; j < model->n_pumps; ++j) {
        const hymo_pump *pu = &model->pumps[j];
        speed[j] = pu->speed_signal < 0 ? pu->speed : pu->speed * factor_at(model, pu->speed_signal, t, side, dt);
    }
    for (int f = 0; f < model->n_flow_controls; ++f) {
        const hymo_flow_control *fc = &model->flow_controls[f];
        flow[f] = fc->set_flow_signal < 0 ? fc->q_set
                                          : fc->q_set * factor_at(model, fc->set_flow_signal, t, side, dt);
    }
}

hymo_status hymo_circuit_init(hymo_circuit *circ, const hymo_model *model, const double *s0,
                              hymo_error *err)
{
    memset(circ, 0, sizeof *circ);
    circ->na = model->n_cylinders;
    circ->np = model->n_volumes;
    circ->nv = model->n_valves;
    size_t n = (size_t)(circ->na > 0 ? circ->na : 1);
    circ->s0 = calloc(n, sizeof(double));
    circ->l_pist0 = calloc(n, sizeof(double));
    circ->l_rod0 = calloc(n, sizeof(double));
    circ->vol_node = index_array(circ->np);
    const size_t np1 = (size_t)(circ->np > 0 ? circ->np : 1);
    circ->vol_V = calloc(np1, sizeof(double));
    circ->vol_C = calloc(np1, sizeof(double));
    circ->vol_fixed = calloc(np1, 1);
    circ->node_state = calloc((size_t)(model->n_nodes > 0 ? model->n_nodes : 1), sizeof(int));
    circ->thr = calloc((size_t)(model->n_throttles > 0 ? model->n_throttles : 1), sizeof *circ->thr);
    hymo_circuit_part *w = &circ->whole;
    w->volumes = index_array(circ->np);
    int lists = w->volumes != NULL;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        int *n, **list;
        hymo_part_fields(w, &hymo_element_kinds[kd], &n, &list);
        *list = index_array(hymo_element_kinds[kd].count(model));
        lists &= *list != NULL;
    }
    if (!circ->s0 || !circ->l_pist0 || !circ->l_rod0 || !circ->vol_node || !circ->vol_V || !circ->vol_C ||
        !circ->vol_fixed || !circ->node_state || !circ->thr || !lists) {
        hymo_circuit_free(circ);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit)");
    }
    /* the whole model as one part: every element in index order, volumes in
     * node order (the order hymo_circuit_eval has always used) */
    snprintf(w->name, sizeof w->name, "all");
    for (int k = 0; k < model->n_nodes; ++k)
        if (model->nodes[k].kind == HYMO_NODE_VOLUME) {
            circ->vol_node[model->nodes[k].state] = k;
            w->volumes[w->n_volumes++] = model->nodes[k].state;
        }
    circ->law = hymo_fluid_law_of(model);
    for (int k = 0; k < model->n_nodes; ++k)
        circ->node_state[k] = model->nodes[k].kind == HYMO_NODE_VOLUME ? model->nodes[k].state : -1;
    for (int t = 0; t < model->n_throttles; ++t) {
        const hymo_throttle *th = &model->throttles[t];
        circ->thr[t] = (struct hymo_circuit_throttle_s){th->node_a, th->node_b, circ->node_state[th->node_a],
                                                        circ->node_state[th->node_b]};
    }
    for (int i = 0; i < circ->np; ++i) { /* volumes without chambers: V and C once (W with the constants) */
        const int k = circ->vol_node[i];
        const hymo_node *nd = &model->nodes[k];
        int fixed = 1, acc = 0;
        for (int q = 0; q < nd->n_parts; ++q) fixed &= model->subvolumes[nd->first_part + q].cylinder < 0;
        for (int j = 0; j < model->n_accumulators; ++j) acc |= model->accumulators[j].node == k;
        if (!fixed) continue;
        double Vdot;
        hymo_volume_size(circ, model, i, NULL, NULL, &circ->vol_V[i], &circ->vol_C[i], &Vdot);
        circ->vol_fixed[i] = circ->law->pressure_independent && !acc && circ->vol_V[i] > 0.0 ? 2 : 1;
    }
    if (hymo_circuit_own_constants(circ, model, &circ->consts, err) != HYMO_OK) {
        hymo_circuit_free(circ);
        return HYMO_ERR_NOMEM;
    }
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        int *n, **list;
        hymo_part_fields(w, &hymo_element_kinds[kd], &n, &list);
        for (const int count = hymo_element_kinds[kd].count(model); *n < count; ++*n) (*list)[*n] = *n;
    }
    int sw = 0; /* the switching functions' offsets, in their order (circuit.h) */
    for (int o = 0; o < N_SWITCH_KINDS; ++o) {
        const hymo_element_kind *K = &hymo_element_kinds[switch_order[o]];
        circ->sw_base[switch_order[o]] = sw;
        sw += K->n_switches * K->count(model);
    }
    circ->sw_accumulator = sw;
    for (int c = 0; c < circ->na; ++c) {
        const hymo_cylinder *cy = &model->cylinders[c];
        circ->s0[c] = s0[c];
        if (cy->has_l_pist0) {
            circ->l_pist0[c] = cy->l_pist0;
            circ->l_rod0[c] = cy->l_rod0;
        } else { /* seed 002: l_pist0 = s0 - l, l_rod0 = l - l_pist0 */
            circ->l_pist0[c] = s0[c] - cy->length;
            circ->l_rod0[c] = cy->length - circ->l_pist0[c];
        }
        if (!(circ->l_pist0[c] > 0.0) || !(circ->l_rod0[c] > 0.0)) {
            /* file:line, the documented path and what to change */
            char at[32] = "";
            if (model->cylinder_line && model->cylinder_line[c] > 0) snprintf(at, sizeof at, ":%d", model->cylinder_line[c]);
            hymo_error_set(err, HYMO_ERR_MODEL,
                           "%s%s: hydraulics.cylinders[%d] (%s): initial chamber lengths piston %.6g m, rod %.6g m "
                           "(s0 = %.6g m, length = %.6g m) must be positive: without piston_length0 the piston "
                           "side starts at s0 - length, so the distance s0 between base and rod at the start "
                           "must lie between length and 2 length (%.6g .. %.6g m); or give piston_length0",
                           model->source_path ? model->source_path : model->name, at, c, cy->name,
                           circ->l_pist0[c], circ->l_rod0[c], s0[c], cy->length, cy->length, 2.0 * cy->length);
            hymo_circuit_free(circ);
            return HYMO_ERR_MODEL;
        }
    }
    return HYMO_OK;
}

void hymo_circuit_refresh_constants(hymo_circuit *circ, const hymo_model *model)
{
    circ->sqrt_p_tr = sqrt(model->fluid.p_transition);
    for (int k = 0; k < model->n_nodes; ++k)
        circ->node_src[k] = model->nodes[k].kind == HYMO_NODE_VOLUME ? 0.0 : model->nodes[k].pressure;
    for (int t = 0; t < model->n_throttles; ++t) circ->thr_Ct[t] = model->throttles[t].Ct;
    for (int i = 0; i < circ->np; ++i) {
        double dD_dp;
        circ->vol_W[i] = circ->vol_inv[i] = 0.0;
        if (circ->vol_fixed[i] == 2)
            circ->vol_W[i] = hymo_volume_weight(circ, model, circ->vol_node[i], 0.0, circ->vol_V[i], circ->vol_C[i],
                                                &circ->vol_inv[i], &dD_dp);
    }
}

hymo_status hymo_circuit_own_constants(hymo_circuit *circ, const hymo_model *model, double **block,
                                       hymo_error *err)
{
    const size_t n = 2 * (size_t)circ->np + (size_t)model->n_nodes + (size_t)model->n_throttles;
    double *b = calloc(n > 0 ? n : 1, sizeof(double));
    if (!b) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit constants)");
    circ->vol_W = b;
    circ->vol_inv = b + circ->np;
    circ->node_src = b + 2 * (size_t)circ->np;
    circ->thr_Ct = circ->node_src + model->n_nodes;
    hymo_circuit_refresh_constants(circ, model);
    *block = b;
    return HYMO_OK;
}

void hymo_circuit_part_free(hymo_circuit_part *part)
{
    free(part->volumes);
    part->volumes = NULL;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        int *n, **list;
        hymo_part_fields(part, &hymo_element_kinds[kd], &n, &list);
        free(*list);
        *list = NULL;
    }
}

static int *copy_ints(const int *src, int n)
{
    int *d = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (d && n > 0) memcpy(d, src, (size_t)n * sizeof(int));
    return d;
}

int hymo_circuit_part_copy(hymo_circuit_part *dst, const hymo_circuit_part *src)
{
    *dst = *src;
    dst->volumes = copy_ints(src->volumes, src->n_volumes);
    int ok = dst->volumes != NULL;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        int *n, **list;
        hymo_part_fields(dst, &hymo_element_kinds[kd], &n, &list);
        *list = copy_ints(*list, *n);
        ok &= *list != NULL;
    }
    return ok ? 0 : -1;
}

void hymo_circuit_free(hymo_circuit *circ)
{
    free(circ->s0);
    free(circ->l_pist0);
    free(circ->l_rod0);
    free(circ->vol_node);
    free(circ->vol_V);
    free(circ->vol_C);
    free(circ->vol_fixed);
    free(circ->node_state);
    free(circ->thr);
    free(circ->consts);
    hymo_circuit_part_free(&circ->whole);
    memset(circ, 0, sizeof *circ);
}

void hymo_cylinder_lengths(const hymo_circuit *circ, int c, double s, double *l_pist, double *l_rod)
{
    double ds = s - circ->s0[c];
    *l_pist = circ->l_pist0[c] + ds;
    *l_rod = circ->l_rod0[c] - ds;
}

double hymo_cylinder_damper_force(const hymo_model *model, const hymo_circuit *circ, int c, double s,
                                  double sd)
{
    const hymo_cylinder *cy = &model->cylinders[c];
    if (!cy->has_damper) return 0.0;
    double lp, lr, dF_ds, dF_dsd;
    hymo_cylinder_lengths(circ, c, s, &lp, &lr);
    return hymo_damper_force_d(circ, c, cy, lp, lr, sd, &dF_ds, &dF_dsd);
}

int hymo_circuit_n_switches(const hymo_model *model)
{
    int any = model->n_accumulators > 0, n = HYMO_CIRCUIT_SWITCHES_PER_ACCUMULATOR * model->n_accumulators;
    for (int o = 0; o < N_SWITCH_KINDS; ++o) {
        const hymo_element_kind *K = &hymo_element_kinds[switch_order[o]];
        const int count = K->count(model);
        for (int i = 0; i < count && !any; ++i) any = K->locates(model, i);
        n += K->n_switches * count;
    }
    return any ? n : 0;
}

void hymo_circuit_switching(const hymo_circuit *circ, const hymo_model *model, const double *s, const double *p,
                            const double *u, double *g)
{
    for (int o = 0; o < N_SWITCH_KINDS; ++o) {
        const hymo_element_kind *K = &hymo_element_kinds[switch_order[o]];
        const int count = K->count(model);
        double *gk = g + circ->sw_base[switch_order[o]];
        for (int i = 0; i < count; ++i) K->switching(circ, model, i, s, p, u, gk + K->n_switches * i);
    }
    for (int j = 0; j < model->n_accumulators; ++j) {
        const hymo_accumulator *ac = &model->accumulators[j];
        g[circ->sw_accumulator + j] = hymo_node_pressure(model, ac->node, p) - ac->precharge;
    }
}

double hymo_cylinder_force(const hymo_model *model, const hymo_circuit *circ, int c, double s, double sd,
                           const double *p)
{
    const hymo_cylinder *cy = &model->cylinders[c];
    double fp = hymo_node_pressure(model, cy->node_piston, p) * cy->piston_area -
                hymo_node_pressure(model, cy->node_rod, p) * cy->rod_side_area;
    /* (1 - eta) |fp| tanh(sd/v_s); without seal friction (eta = 1) the
     * product is a zero with the sign of sd/v_s, found without tanh */
    const double fr = 1.0 - cy->efficiency, x = sd / cy->friction_velocity;
    const double fmu = fr == 0.0 && isfinite(fp) && !isnan(x) ? copysign(0.0, x) : fr * fabs(fp) * tanh(x);
    return fp - cy->viscous * sd - fmu + hymo_cylinder_damper_force(model, circ, c, s, sd);
}

int hymo_volume_cache_init(hymo_volume_cache *vc, const hymo_circuit *circ, const hymo_model *model)
{
    memset(vc, 0, sizeof *vc);
    const int na = hymo_coupled_actuators(model), np = model->n_volumes;
    double *b = calloc((size_t)(2 * na + 4 * np) + 1, sizeof(double));
    unsigned char *held = calloc((size_t)np + 1, 1);
    if (!b || !held) {
        free(b);
        free(held);
        return -1;
    }
    vc->na = na, vc->np = np;
    vc->w_const = circ->law->pressure_independent && model->n_accumulators == 0;
    double dinv;
    if (vc->w_const) vc->inv_bf = circ->law->inv_bulk(model, 0.0, &dinv);
    vc->s = b, vc->sd = b + na;
    vc->V = b + 2 * (size_t)na, vc->C = vc->V + np, vc->Vdot = vc->C + np, vc->W = vc->Vdot + np;
    vc->held = held;
    return 0;
}

void hymo_volume_cache_free(hymo_volume_cache *vc)
{
    free(vc->s);
    free(vc->held);
    memset(vc, 0, sizeof *vc);
}

/* The one evaluation path of the circuit equations (whole model or part). */
int hymo_circuit_eval_part_node(const hymo_circuit *circ, const hymo_model *model,
                                const hymo_circuit_part *part, const double *s, const double *sd,
                                const double *p, const double *u, const double *u_ref, double *pdot,
                                double *udot, double *force)
{
    return hymo_circuit_eval_part_cached(circ, model, part, s, sd, p, u, u_ref, pdot, udot, force, NULL);
}

int hymo_circuit_eval_part_cached(const hymo_circuit *circ, const hymo_model *model,
                                  const hymo_circuit_part *part, const double *s, const double *sd,
                                  const double *p, const double *u, const double *u_ref, double *pdot,
                                  double *udot, double *force, hymo_volume_cache *vc)
{
    if (force) {
        for (int i = 0; i < part->n_cylinders; ++i) {
            const int c = part->cylinders[i];
            force[c] = hymo_cylinder_force(model, circ, c, s[c], sd[c], p);
        }
        for (int i = 0; i < part->n_motors; ++i) { /* actuator n_cylinders + k: s = z_j, sd = its rate */
            const int k = part->motors[i], a = model->n_cylinders + k;
            double dT_ddp, dT_dw;
            force[a] = hymo_motor_torque_d(model, k, sd[a], p, &dT_ddp, &dT_dw);
        }
    }
    if (udot) {
        for (int i = 0; i < part->n_valves; ++i) {
            const int v = part->valves[i];
            const hymo_valve *va = &model->valves[v];
            udot[va->state] = (u_ref[v] - u[va->state]) / va->tau;
        }
    }
    if (!pdot) return -1;
    if (vc) { /* sizes of another motion (other bits): dropped */
        int same = 1;
        for (int a = 0; a < vc->na && same; ++a)
            same = !memcmp(&vc->s[a], &s[a], sizeof(double)) && !memcmp(&vc->sd[a], &sd[a], sizeof(double));
        if (!same) {
            for (int a = 0; a < vc->na; ++a) vc->s[a] = s[a], vc->sd[a] = sd[a];
            for (int st = 0; st < vc->np; ++st) vc->held[st] = 0;
        }
        /* the volumes' sizes and weights before the flows (they do not
         * depend on them), into vc: W is vc->W[st] for every volume */
        for (int i = 0; i < part->n_volumes; ++i) {
            const int st = part->volumes[i];
            double inv_bf, dD_dp;
            if (vc->held[st]) {
                if (!vc->w_const)
                    vc->W[st] = hymo_volume_weight_state(circ, model, st, p[st], vc->V[st], vc->C[st], &inv_bf, &dD_dp);
                continue;
            }
            double V, Vdot, compl_sum;
            hymo_volume_size(circ, model, st, s, sd, &V, &compl_sum, &Vdot);
            if (!(V > 0.0)) return circ->vol_node[st];
            /* hymo_volume_weight_state; with w_const its expression with
             * the law's constant 1/B_f and no accumulator term */
            vc->W[st] = vc->w_const && circ->vol_fixed[st] != 2
                            ? 1.0 / (vc->inv_bf + compl_sum / V) / V
                            : hymo_volume_weight_state(circ, model, st, p[st], V, compl_sum, &inv_bf, &dD_dp);
            vc->V[st] = V, vc->C[st] = compl_sum, vc->Vdot[st] = Vdot, vc->held[st] = 1;
        }
    }
    /* net inflow minus volume rate, per volume state */
    for (int i = 0; i < part->n_volumes; ++i) pdot[part->volumes[i]] = 0.0;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) { /* the flows, in the table's order */
        const hymo_element_kind *K = &hymo_element_kinds[kd];
        if (!K->flows) continue;
        int n;
        const int *el = hymo_part_elements(part, K, &n);
        if (K->rates) {
            for (int i = 0; i < n; ++i) K->rates(circ, model, el[i], p, u, sd, pdot);
            continue;
        }
        for (int i = 0; i < n; ++i) {
            hymo_edge_flow f[HYMO_ELEMENT_EDGES_MAX];
            const int nf = K->flows(circ, model, el[i], p, u, sd, f);
            for (int e = 0; e < nf; ++e) {
                if (f[e].a >= 0) pdot[f[e].a] -= f[e].q;
                if (f[e].b >= 0) pdot[f[e].b] += f[e].q;
            }
        }
    }
    if (vc) {
        for (int i = 0; i < part->n_volumes; ++i) {
            const int st = part->volumes[i];
            pdot[st] = vc->W[st] * (pdot[st] - vc->Vdot[st]);
        }
        return -1;
    }
    for (int i = 0; i < part->n_volumes; ++i) {
        const int st = part->volumes[i], k = circ->vol_node[st];
        double V, Vdot, compl_sum, inv_bf, dD_dp;
        hymo_volume_size(circ, model, st, s, sd, &V, &compl_sum, &Vdot);
        if (!(V > 0.0)) return k;
        const double W = hymo_volume_weight_state(circ, model, st, p[st], V, compl_sum, &inv_bf, &dD_dp);
        pdot[st] = W * (pdot[st] - Vdot);
    }
    return -1;
}

int hymo_circuit_eval_part(const hymo_circuit *circ, const hymo_model *model, const hymo_circuit_part *part,
                           const double *s, const double *sd, const double *p, const double *u,
                           const double *u_ref, double *pdot, double *udot, double *force)
{
    return hymo_circuit_eval_part_node(circ, model, part, s, sd, p, u, u_ref, pdot, udot, force) >= 0 ? -1 : 0;
}

int hymo_circuit_eval(const hymo_circuit *circ, const hymo_model *model, const double *s,
                      const double *sd, const double *p, const double *u, const double *u_ref,
                      double *pdot, double *udot, double *force)
{
    return hymo_circuit_eval_part(circ, model, &circ->whole, s, sd, p, u, u_ref, pdot, udot, force);
}

hymo_status hymo_circuit_static_pressures(const hymo_circuit *circ, const hymo_model *model,
                                          const double *s, const double *f_static, double *p,
                                          hymo_error *err)
{
    const char *src = model->source_path ? model->source_path : model->name;
    int np = circ->np;
    unsigned char *known = calloc((size_t)(np > 0 ? np : 1), 1);
    if (!known) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    for (int k = 0; k < model->n_nodes; ++k) {
        const hymo_node *nd = &model->nodes[k];
        if (nd->kind == HYMO_NODE_VOLUME && nd->p0_rule == HYMO_P0_GIVEN) {
            p[nd->state] = nd->p0;
            known[nd->state] = 1;
        }
    }
    for (int c = 0; c < circ->na; ++c) {
        const hymo_cylinder *cy = &model->cylinders[c];
        const hymo_node *np_ = &model->nodes[cy->node_piston], *nr = &model->nodes[cy->node_rod];
        /* p_pist A_pist - p_rod A_rod + F_d = F (friction and viscous terms vanish at rest) */
        double f_hyd = f_static[c] - hymo_cylinder_damper_force(model, circ, c, s[c], 0.0);
        int kp = known[np_->state], kr = known[nr->state];
        if (kp && kr) continue; /* both stated by the user: nothing to solve */
        if (kr && np_->p0_rule == HYMO_P0_STATIC) {
            p[np_->state] = (f_hyd + p[nr->state] * cy->rod_side_area) / cy->piston_area;
            known[np_->state] = 1;
        } else if (kp && nr->p0_rule == HYMO_P0_STATIC) {
            p[nr->state] = (p[np_->state] * cy->piston_area - f_hyd) / cy->rod_side_area;
            known[nr->state] = 1;
        }
    }
    /* propagate through throttles and flow control valves (no flow at
     * rest: equal pressures) and motors (at rest T = D (p_a - p_b),
     * f_static[n_cylinders + k] = T) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int k = 0; k < model->n_motors; ++k) {
            const hymo_motor *mo = &model->motors[k];
            const hymo_node *a = &model->nodes[mo->node_a], *b = &model->nodes[mo->node_b];
            const double dp = f_static[circ->na + k] / mo->displacement;
            const int ka = a->kind != HYMO_NODE_VOLUME || known[a->state];
            const int kb = b->kind != HYMO_NODE_VOLUME || known[b->state];
            if (ka && !kb && b->p0_rule == HYMO_P0_STATIC) {
                p[b->state] = hymo_node_pressure(model, mo->node_a, p) - dp;
                known[b->state] = changed = 1;
            } else if (kb && !ka && a->p0_rule == HYMO_P0_STATIC) {
                p[a->state] = hymo_node_pressure(model, mo->node_b, p) + dp;
                known[a->state] = changed = 1;
            }
        }
        for (int t = 0; t < model->n_throttles + model->n_flow_controls; ++t) {
            const int fcv = t >= model->n_throttles, i = fcv ? t - model->n_throttles : t;
            const hymo_node *a = &model->nodes[fcv ? model->flow_controls[i].node_a : model->throttles[i].node_a];
            const hymo_node *b = &model->nodes[fcv ? model->flow_controls[i].node_b : model->throttles[i].node_b];
            if (a->kind != HYMO_NODE_VOLUME || b->kind != HYMO_NODE_VOLUME) continue;
            if (known[a->state] && !known[b->state] && b->p0_rule == HYMO_P0_STATIC) {
                p[b->state] = p[a->state];
                known[b->state] = changed = 1;
            } else if (known[b->state] && !known[a->state] && a->p0_rule == HYMO_P0_STATIC) {
                p[a->state] = p[b->state];
                known[a->state] = changed = 1;
            }
        }
    }
    for (int k = 0; k < model->n_nodes; ++k) {
        const hymo_node *nd = &model->nodes[k];
        /* "file:line: hydraulics.volumes[i].initial_pressure"
         * as the loader's messages (volume i is node i, pressure state i) */
        char where[HYMO_NAME_MAX + 128];
        if (nd->kind == HYMO_NODE_VOLUME) {
            const int line = model->volume_p0_line ? model->volume_p0_line[nd->state] : 0;
            if (line > 0)
                snprintf(where, sizeof where, "%s:%d: hydraulics.volumes[%d].initial_pressure (volume %s)", src,
                         line, nd->state, nd->name);
            else
                snprintf(where, sizeof where, "%s: hydraulics.volumes[%d].initial_pressure (volume %s)", src,
                         nd->state, nd->name);
        }
        if (nd->kind == HYMO_NODE_VOLUME && !known[nd->state]) {
            free(known);
            return hymo_error_set(err, HYMO_ERR_MODEL,
                                  "%s: 'static' cannot be solved: the volume is neither a cylinder chamber "
                                  "whose other chamber's pressure is given (a number) nor joined to such a "
                                  "volume through a throttle, flow control valve or motor port; give a number",
                                  where);
        }
        if (nd->kind == HYMO_NODE_VOLUME && model->fluid_air.model == HYMO_FLUID_ENTRAINED_AIR &&
            !(p[nd->state] > model->fluid_air.p_vapour)) {
            double v = p[nd->state];
            free(known);
            return hymo_error_set(err, HYMO_ERR_MODEL,
                                  "%s: initial pressure %.6g Pa is at or below the fluid's vapour "
                                  "pressure %.6g Pa (hydraulics.fluid.vapour_pressure; model: entrained_air)",
                                  where, v, model->fluid_air.p_vapour);
        }
        if (nd->kind == HYMO_NODE_VOLUME && !(p[nd->state] > 0.0)) {
            double v = p[nd->state];
            free(known);
            return hymo_error_set(err, HYMO_ERR_MODEL,
                                  "%s: static equilibrium needs a non-positive "
                                  "pressure (%.6g Pa); the mechanism cannot be held at rest",
                                  where, v);
        }
    }
    free(known);
    return HYMO_OK;
}
