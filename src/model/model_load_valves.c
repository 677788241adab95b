/* hymo — model file loader, flow elements: pumps, flow control valves, valve edges
 * (docs/model-format.md "Pumps", "Flow control valves", "Directional valve
 * edges, overlap and leakage"):
 *   hydraulics.pumps[]                fixed-displacement pumps
 *   hydraulics.flow_control_valves[]  pressure-compensated flow control
 *   hydraulics.valves[].edges/overlap/leakage  4/3 valve edges
 *
 * This file is part of model_load.c's translation unit (included by
 * model_load_hydraulics.inc, before the valve loader) so that it uses the loader's context and field
 * readers; compiled on its own (the library's source glob) it is empty. */
#ifdef HYMO_MODEL_LOAD_UNIT

static const char *const k_edge_key[4] = {"PA", "BT", "PB", "AT"};

/* `edges: {PA, BT, PB, AT}` or `overlap: u0 | {PA, BT, PB, AT}` (any
 * subset of edges, the others 0): one number per edge. */
static hymo_status rd_edge_map(ctx_t *c, hymo_ynode *vn, const char *key, range_t r, int all_required,
                               double out[4], int *present)
{
    hymo_ynode *n = map_get(c, vn, key);
    *present = n != NULL;
    if (!n) return HYMO_OK;
    size_t o = push_key(c, key);
    hymo_status st = HYMO_OK;
    if (n->type == YAML_MAPPING_NODE) {
        static const char *const keys[] = {"PA", "BT", "PB", "AT", NULL};
        st = check_map(c, n, keys);
        for (int e = 0; e < 4 && !st; ++e) st = f_number(c, n, k_edge_key[e], all_required, 0.0, r, &out[e], NULL);
    } else if (all_required) {
        st = fail(c, n, HYMO_ERR_MODEL, "expected a mapping {PA: ..., BT: ..., PB: ..., AT: ...}, got %s",
                  kind_name(n));
    } else {
        double v;
        st = rd_number(c, n, &v);
        if (!st) st = check_range(c, n, v, r);
        for (int e = 0; e < 4 && !st; ++e) out[e] = v;
    }
    pop(c, o);
    return st;
}

/* The flow law of valve va (hymo_model.valve_edges[v]): `flow_coefficient`
 * (one Cv for all edges) or `edges`, optional `overlap` and `leakage`.
 * Without edges, overlap and leakage the valve is the plain law (on = 0). */
static hymo_status load_valve_edges(ctx_t *c, hymo_ynode *vn, hymo_model *m, hymo_valve *va, int v)
{
    hymo_valve_edges *ve = &m->valve_edges[v];
    int has_cv, has_edges, has_overlap, has_leak;
    TRY(f_number(c, vn, "flow_coefficient", 0, 0, R_POSITIVE, &va->Cv, &has_cv));
    TRY(rd_edge_map(c, vn, "edges", R_POSITIVE, 1, ve->C, &has_edges));
    TRY(rd_edge_map(c, vn, "overlap", R_NONNEGATIVE, 0, ve->u0, &has_overlap));
    TRY(f_number(c, vn, "leakage", 0, 0, R_NONNEGATIVE, &ve->leakage, &has_leak));
    if (has_cv && has_edges) {
        return fail_field(c, vn, "edges", HYMO_ERR_MODEL, "give either flow_coefficient or edges, not both");
    }
    if (!has_cv && !has_edges) {
        return fail(c, vn, HYMO_ERR_MODEL,
                    "missing required field: flow_coefficient (or edges: {PA, BT, PB, AT})");
    }
    ve->on = has_edges || has_overlap || has_leak;
    if (!ve->on) return HYMO_OK;
    if (!has_edges)
        for (int e = 0; e < 4; ++e) ve->C[e] = va->Cv;
    else { /* the largest edge stands for the valve (reported as its Cv) */
        va->Cv = ve->C[0];
        for (int e = 1; e < 4; ++e)
            if (ve->C[e] > va->Cv) va->Cv = ve->C[e];
    }
    return HYMO_OK;
}

/* The optional factor signal `key` of a pump's speed
 * or a flow control valve's set flow (docs/model-format.md, "pumps"):
 * *out the signal's index, -1 without the key.  The factor must not be
 * negative: the signal's smallest table value through its dead zone and
 * clamp (both monotone; the period repeats the table and the filter stays
 * within the table's values) is a lower bound of s(t), and it must be
 * >= 0. */
static hymo_status f_factor_signal(ctx_t *c, hymo_ynode *map, hymo_model *m, const char *key, const char *what,
                                   int *out)
{
    const char *name;
    *out = -1;
    TRY(f_ref(c, map, key, 0, &name));
    if (!name) return HYMO_OK;
    for (int i = 0; i < m->n_signals; i++)
        if (strcmp(m->signals[i].name, name) == 0) *out = i;
    if (*out < 0) {
        char names[256];
        size_t used = 0;
        names[0] = '\0';
        for (int i = 0; i < m->n_signals && used < sizeof names; ++i)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", m->signals[i].name);
        return fail_field(c, map, key, HYMO_ERR_MODEL, "unknown signal '%s' (signals: %s)", name,
                          m->n_signals ? names : "none");
    }
    const hymo_signal *sg = &m->signals[*out];
    double lo = sg->v[0];
    for (int i = 1; i < sg->n_points; ++i)
        if (sg->v[i] < lo) lo = sg->v[i];
    const hymo_signal_shape *sh = sg->shape;
    if (sh && sh->has_dead_zone) lo = lo > sh->dead_hi ? lo - sh->dead_hi : lo < sh->dead_lo ? lo - sh->dead_lo : 0.0;
    if (sh && sh->has_clamp) lo = lo < sh->clamp_lo ? sh->clamp_lo : lo > sh->clamp_hi ? sh->clamp_hi : lo;
    if (lo < 0.0)
        return fail_field(c, map, key, HYMO_ERR_MODEL,
                          "signal '%s' goes down to %g: it multiplies the %s and must not be negative (clamp it, "
                          "e.g. clamp: [0, 1])",
                          name, lo, what);
    return HYMO_OK;
}

static hymo_status load_pump(ctx_t *c, hymo_ynode *pn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_pumps: items are appended as they load */
    static const char *const keys[] = {"name",      "from", "to", "displacement", "speed", "speed_rpm",
                                       "volumetric_efficiency", "leakage", "speed_signal", NULL};
    hymo_pump *pu = &m->pumps[m->n_pumps];
    TRY(check_map(c, pn, keys));
    TRY(f_two_port(c, pn, m, pu->name, &pu->node_in, &pu->node_out, "a pump"));
    if (m->nodes[pu->node_in].kind != HYMO_NODE_VOLUME && m->nodes[pu->node_out].kind != HYMO_NODE_VOLUME) {
        return fail_field(c, pn, "to", HYMO_ERR_MODEL, "'%s' and '%s' are both sources: the pump would act on no volume",
                          m->nodes[pu->node_in].name, m->nodes[pu->node_out].name);
    }
    TRY(f_number(c, pn, "displacement", 1, 0, R_POSITIVE, &pu->displacement, NULL));
    int has_n, has_rpm;
    double rpm;
    TRY(f_number(c, pn, "speed", 0, 0, R_NONNEGATIVE, &pu->speed, &has_n));
    TRY(f_number(c, pn, "speed_rpm", 0, 0, R_NONNEGATIVE, &rpm, &has_rpm));
    if (has_n && has_rpm) {
        return fail_field(c, pn, "speed_rpm", HYMO_ERR_MODEL, "give either speed (rev/s) or speed_rpm, not both");
    }
    if (!has_n && !has_rpm) return fail(c, pn, HYMO_ERR_MODEL, "missing required field: speed (rev/s) or speed_rpm");
    if (has_rpm) pu->speed = rpm / 60.0;
    TRY(f_number(c, pn, "volumetric_efficiency", 0, 1.0, R_EFFICIENCY, &pu->eta_v, NULL));
    TRY(f_number(c, pn, "leakage", 0, 0, R_NONNEGATIVE, &pu->leakage, NULL));
    TRY(f_factor_signal(c, pn, m, "speed_signal", "pump speed", &pu->speed_signal));
    m->n_pumps++;
    return HYMO_OK;
}

static hymo_status load_flow_control(ctx_t *c, hymo_ynode *fn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_flow_controls */
    static const char *const keys[] = {"name", "from", "to", "set_flow", "compensator_pressure", "set_flow_signal",
                                       NULL};
    hymo_flow_control *fc = &m->flow_controls[m->n_flow_controls];
    TRY(check_map(c, fn, keys));
    TRY(f_two_port(c, fn, m, fc->name, &fc->node_a, &fc->node_b, "a flow control valve"));
    if (m->nodes[fc->node_a].kind != HYMO_NODE_VOLUME && m->nodes[fc->node_b].kind != HYMO_NODE_VOLUME) {
        return fail_field(c, fn, "to", HYMO_ERR_MODEL,
                          "'%s' and '%s' are both sources: the valve would act on no volume", m->nodes[fc->node_a].name,
                          m->nodes[fc->node_b].name);
    }
    TRY(f_number(c, fn, "set_flow", 1, 0, R_POSITIVE, &fc->q_set, NULL));
    TRY(f_number(c, fn, "compensator_pressure", 1, 0, R_POSITIVE, &fc->dp_c, NULL));
    TRY(f_factor_signal(c, fn, m, "set_flow_signal", "set flow", &fc->set_flow_signal));
    m->n_flow_controls++;
    return HYMO_OK;
}

/* hydraulics.valves' edge table (before the valves load) */
static hymo_status valves_alloc_edges(ctx_t *c, hymo_model *m, int nva)
{
    if (nva > 0 && !(m->valve_edges = calloc((size_t)nva, sizeof *m->valve_edges))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    return HYMO_OK;
}

/* hydraulics.pumps and hydraulics.flow_control_valves (after every node) */
static hymo_status load_valves_branch(ctx_t *c, hymo_ynode *hn, hymo_model *m)
{
    hymo_ynode *pum, *fcv;
    TRY(f_seq(c, hn, "pumps", 0, &pum));
    TRY(f_seq(c, hn, "flow_control_valves", 0, &fcv));
    const int npu = pum ? seq_len(pum) : 0, nfc = fcv ? seq_len(fcv) : 0;
    if (npu > 0 && !(m->pumps = calloc((size_t)npu, sizeof *m->pumps))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (nfc > 0 && !(m->flow_controls = calloc((size_t)nfc, sizeof *m->flow_controls))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    TRY(each_item(c, pum, "pumps", load_pump, m));
    TRY(each_item(c, fcv, "flow_control_valves", load_flow_control, m));
    return HYMO_OK;
}

#else
typedef int hymo_model_load_valves_unit_only; /* not a translation unit of its own */
#endif
