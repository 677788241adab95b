/* The split of a model into co-simulation subsystems (hymo_split, layout
 * in hymo/cosim.h): the mechanics, the hydraulic circuits, the links
 * between them and the master configuration of the options. */
#include <stdlib.h>
#include <string.h>

#include "cosim_split.h"
#include "cosim_tables.h"
#include "engine.h"

void hymo_split_free(hymo_split *sp)
{
    if (!sp) return;
    if (sp->subsystems) /* the hydraulics first: they use the mechanics' circuit constants */
        for (int k = sp->n_subsystems - 1; k >= 0; --k)
            if (sp->subsystems[k]) sp->subsystems[k]->ops->destroy(sp->subsystems[k]);
    free(sp->subsystems);
    free(sp->links);
    free(sp->stage);
    free(sp->order);
    free(sp->at_start);
    free(sp);
}

static void add_link(hymo_split *sp, int from, int output, int to, int input)
{
    sp->links[sp->n_links++] = (hymo_link){from, output, to, input};
}

/* Links of hydraulic subsystem k whose local cylinder i is model actuator
 * cyl[i] (nc of them: cylinders, and motors as actuator n_cylinders + k). */
static void link_hydraulics(hymo_split *sp, int k, const int *cyl, int nc, int na, int per, int interface_model,
                            int tlm)
{
    for (int i = 0; i < nc; ++i) {
        const int c = cyl[i];
        for (int r = 0; r < per; ++r) add_link(sp, k, per * i + r, 0, per * c + r); /* F or p_pist, p_rod */
        add_link(sp, 0, c, k, 2 * i);                                                /* s */
        add_link(sp, 0, na + c, k, 2 * i + 1);                                       /* sd */
    }
    if (tlm) /* the mechanical ends' waves */
        for (int i = 0; i < nc; ++i)
            for (int r = 0; r < 2; ++r) add_link(sp, 0, 3 * na + 2 * cyl[i] + r, k, 2 * nc + 2 * i + r);
    if (!interface_model) return;
    for (int i = 0; i < nc; ++i) {
        for (int j = 0; j < nc; ++j) add_link(sp, 0, 3 * na + cyl[i] * na + cyl[j], k, 2 * nc + i * nc + j); /* G */
        add_link(sp, 0, 3 * na + na * na + cyl[i], k, 2 * nc + nc * nc + i);                               /* a0 */
    }
}

/* TLM: every actuator port's node (a cylinder chamber, a motor port) must
 * be a volume holding that port and no other (each line's mechanical end
 * is one piston face or one motor port). */
static hymo_status tlm_check(const hymo_model *model, hymo_error *err)
{
    const char *src = model->source_path ? model->source_path : model->name;
    for (int a = 0; a < hymo_coupled_actuators(model); ++a)
        for (int r = 0; r < 2; ++r) {
            int node0, node1;
            double w0, w1;
            hymo_actuator_ports(model, a, &node0, &node1, &w0, &w1);
            const int node = r ? node1 : node0;
            const hymo_node *nd = &model->nodes[node];
            int ports = 0; /* chambers and motor ports at the node */
            for (int q = 0; nd->kind == HYMO_NODE_VOLUME && q < nd->n_parts; ++q)
                ports += model->subvolumes[nd->first_part + q].cylinder >= 0;
            for (int k = 0; k < model->n_motors; ++k)
                ports += (model->motors[k].node_a == node) + (model->motors[k].node_b == node);
            if (nd->kind != HYMO_NODE_VOLUME || ports != 1)
                return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                      "%s: TLM coupling: the %s of %s %s is at node %s, which %s; a TLM line needs a "
                                      "volume holding exactly this one chamber or motor port",
                                      src, a < model->n_cylinders ? (r ? "rod chamber" : "piston chamber")
                                                                  : (r ? "port b" : "port a"),
                                      a < model->n_cylinders ? "cylinder" : "motor", hymo_actuator_name(model, a),
                                      nd->name,
                                      nd->kind != HYMO_NODE_VOLUME ? "is not a volume" : "holds several such ports");
        }
    return HYMO_OK;
}

hymo_status hymo_split_create(const hymo_model *model, const hymo_cosim_options *opt, hymo_split **out,
                              hymo_error *err)
{
    *out = NULL;
    hymo_status st = hymo_cosim_options_check(opt, err);
    if (st != HYMO_OK) return st;
    /* the compiled model: circuit constants, circuits and initial state, shared */
    const hymo_compiled *cm;
    st = hymo_compiled_initial(model, &cm, err);
    if (st != HYMO_OK) return st;
    if (cm->parts_status != HYMO_OK) {
        if (err) *err = cm->parts_err;
        return cm->parts_status;
    }
    const hymo_circuit_part *parts = cm->parts;
    const int nparts = cm->n_parts;
    const hymo_cosim_tables tb = hymo_cosim_tables_of(opt);
    const int na = hymo_coupled_actuators(model), im = tb.approx->interface_model;
    const int per = tb.coupling->per_actuator;
    if (na == 0) {
        return hymo_error_set(err, HYMO_ERR_MODEL, "%s: no cylinders or motors: nothing to split for co-simulation",
                              model->source_path ? model->source_path : model->name);
    }
    const int tlm = tb.coupling->tlm;
    if (tlm && (st = tlm_check(model, err)) != HYMO_OK) return st;
    /* a driven joint's motion stays in the mechanics; the options that cannot carry it */
    if (model->n_drivers > 0 && (im || !tb.mech->prescribed_motion))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "%s: driven_joints[0] (%s): %s is not supported with a prescribed joint motion (%s); "
                              "use %s",
                              model->source_path ? model->source_path : model->name, model->drivers[0].name,
                              im ? "--extrapolation interface-model" : "--mech-integrator index1",
                              im ? "the reduced model has no driver constraints"
                                 : "only the trapezoidal mechanics imposes it",
                              im ? "Lagrange extrapolation (0-3) or quadratic" : "--mech-integrator trapezoidal");
    hymo_split *sp = calloc(1, sizeof *sp);
    const int nsub = 1 + (im ? 1 : nparts),
              max_links = per * na + 2 * na + (im ? na * na + na : 0) + (tlm ? 2 * na : 0);
    int *all = calloc((size_t)na, sizeof(int));
    if (sp) {
        sp->n_subsystems = nsub;
        sp->subsystems = calloc((size_t)nsub, sizeof *sp->subsystems);
        sp->links = calloc((size_t)max_links, sizeof *sp->links);
        sp->stage = calloc((size_t)nsub, sizeof(int));
        sp->order = calloc((size_t)nsub, sizeof(int));
        sp->at_start = calloc((size_t)nsub, sizeof(int));
    }
    if (!sp || !all || !sp->subsystems || !sp->links || !sp->stage || !sp->order || !sp->at_start) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (co-simulation subsystems)");
        goto done;
    }
    st = hymo_cosim_mech_create(model, opt, &sp->subsystems[0], err);
    if (st != HYMO_OK) goto done;
    const hymo_circuit *circ = &cm->circ;
    const double *p0 = cm->p0, *u0 = cm->u0;

    if (im) { /* one subsystem: the reduced model couples all circuits */
        st = hymo_cosim_hyd_create(model, opt, circ, parts, nparts, 1, p0, u0, &sp->subsystems[1], err);
        if (st != HYMO_OK) goto done;
        for (int c = 0; c < na; ++c) all[c] = c;
        link_hydraulics(sp, 1, all, na, na, per, 1, 0);
    } else {
        for (int q = 0; q < nparts; ++q) {
            st = hymo_cosim_hyd_create(model, opt, circ, &parts[q], 1, 0, p0, u0, &sp->subsystems[1 + q], err);
            if (st != HYMO_OK) goto done;
            for (int j = 0; j < parts[q].n_cylinders + parts[q].n_motors; ++j) /* cylinders, then motors */
                all[j] = j < parts[q].n_cylinders ? parts[q].cylinders[j]
                                                  : model->n_cylinders + parts[q].motors[j - parts[q].n_cylinders];
            link_hydraulics(sp, 1 + q, all, parts[q].n_cylinders + parts[q].n_motors, na, per, 0, tlm);
        }
    }
    /* master configuration */
    for (int k = 0; k < nsub; ++k) sp->stage[k] = tb.scheme->stage(k, nsub);
    sp->order[0] = tb.mech_inputs->hold ? 0 : tb.approx->order;
    sp->at_start[0] = tlm; /* TLM: the waves of t - H, sent up to t */
    for (int k = 1; k < nsub; ++k) {
        sp->order[k] = tb.approx->hyd_order;
        sp->at_start[k] = tb.approx->hyd_at_start || tlm;
    }
    /* the interface model's hydraulics advancing after the mechanics */
    if (im && sp->stage[1] > sp->stage[0]) sp->im_interpolate = 2 * na;
done:
    free(all);
    if (st != HYMO_OK) {
        hymo_split_free(sp);
        return st;
    }
    *out = sp;
    return HYMO_OK;
}

hymo_status hymo_split_master_create(const hymo_split *sp, double H, hymo_master **out, hymo_error *err)
{
    const hymo_master_options mopt = {HYMO_MASTER_JACOBI, 0, H};
    hymo_status st = hymo_master_create(sp->subsystems, sp->n_subsystems, sp->links, sp->n_links, &mopt, out, err);
    for (int k = 0; k < sp->n_subsystems && st == HYMO_OK; ++k) {
        st = hymo_master_set_stage(*out, k, sp->stage[k], err);
        if (st == HYMO_OK) st = hymo_master_set_input_approx(*out, k, -1, sp->order[k], sp->at_start[k], err);
    }
    if (st == HYMO_OK && sp->im_interpolate) /* inputs G, a0 of the one hydraulic subsystem (hymo/cosim.h) */
        for (int i = sp->im_interpolate; i < sp->subsystems[1]->n_inputs && st == HYMO_OK; ++i)
            st = hymo_master_set_input_approx(*out, 1, i, 1, 0, err);
    if (st != HYMO_OK) {
        hymo_master_free(*out);
        *out = NULL;
    }
    return st;
}
