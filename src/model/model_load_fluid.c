/* hymo model loader: the fluid law (hydraulics.fluid.model
 * and its entrained-air parameters) and the gas-charged accumulators
 * (hydraulics.accumulators), docs/model-format.md "Fluid model" and
 * "Accumulators".
 *
 * This file is part of src/model/model_load.c's translation unit (included
 * by model_load_hydraulics.inc; it uses the static readers and the loader
 * context); compiled on its own, as
 * the source glob does, it is empty. */
#ifdef HYMO_MODEL_LOAD_PARTS

/* Defaults of the entrained-air law (docs/model-format.md "Fluid model"). */
#define DEFAULT_AIR_FRACTION 1.0e-3
#define DEFAULT_P_REFERENCE 101325.0
#define DEFAULT_P_VAPOUR 1.0e3
#define DEFAULT_AIR_POLYTROPIC 1.4
#define DEFAULT_ACC_POLYTROPIC 1.4

/* The keys of hydraulics.fluid this file reads. */
#define FLUID_MODEL_KEYS "model", "air_fraction", "reference_pressure", "vapour_pressure", "polytropic_index"

/* Reads hydraulics.fluid.model and the entrained-air parameters (path at
 * hydraulics.fluid).  A file without `model` gets entrained_air with the
 * defaults above (format 2), or the constant bulk modulus (format 1: the
 * meaning such a file had before the fluid law existed). */
static hymo_status load_fluid_model(ctx_t *c, hymo_ynode *fl, hymo_model *m)
{
    hymo_fluid_air *fa = &m->fluid_air;
    const char *name;
    TRY(f_ref(c, fl, "model", 0, &name));
    if ((!name && c->format >= 2) || (name && strcmp(name, "entrained_air") == 0)) {
        fa->model = HYMO_FLUID_ENTRAINED_AIR;
    } else if (!name || strcmp(name, "constant") == 0) { /* format 1 without `model`: constant */
        fa->model = HYMO_FLUID_CONSTANT;
        static const char *const air_keys[] = {"air_fraction", "reference_pressure", "vapour_pressure",
                                               "polytropic_index", NULL};
        for (int i = 0; air_keys[i]; ++i)
            if (map_get(c, fl, air_keys[i]))
                return fail_field(c, fl, air_keys[i], HYMO_ERR_MODEL,
                                  "only with model: entrained_air (this fluid has model: constant)");
    } else {
        return fail_field(c, fl, "model", HYMO_ERR_MODEL,
                          "unknown fluid model '%s' (expected constant or entrained_air)", name);
    }
    TRY(f_number(c, fl, "air_fraction", 0, DEFAULT_AIR_FRACTION, R_POSITIVE, &fa->air_fraction, NULL));
    if (!(fa->air_fraction < 1.0))
        return fail_field(c, fl, "air_fraction", HYMO_ERR_MODEL, "must be below 1, got %g", fa->air_fraction);
    TRY(f_number(c, fl, "reference_pressure", 0, DEFAULT_P_REFERENCE, R_POSITIVE, &fa->p_reference, NULL));
    TRY(f_number(c, fl, "vapour_pressure", 0, DEFAULT_P_VAPOUR, R_NONNEGATIVE, &fa->p_vapour, NULL));
    if (!(fa->p_vapour < fa->p_reference))
        return fail_field(c, fl, "vapour_pressure", HYMO_ERR_MODEL,
                          "must be below the reference pressure %g Pa, got %g", fa->p_reference, fa->p_vapour);
    TRY(f_number(c, fl, "polytropic_index", 0, DEFAULT_AIR_POLYTROPIC, R_POSITIVE, &fa->polytropic_index, NULL));
    if (!(fa->polytropic_index >= 1.0))
        return fail_field(c, fl, "polytropic_index", HYMO_ERR_MODEL, "must be at least 1 (isothermal), got %g",
                          fa->polytropic_index);
    if (fa->model == HYMO_FLUID_CONSTANT) {
        fa->air_fraction = 0.0; /* unused; kept defined */
    }
    return HYMO_OK;
}

static hymo_status load_accumulator(ctx_t *c, hymo_ynode *an, hymo_model *m, int k)
{
    (void)k; /* equals m->n_accumulators: items are appended as they load */
    static const char *const keys[] = {"name", "node", "gas_volume", "precharge", "polytropic_index", NULL};
    hymo_accumulator *ac = &m->accumulators[m->n_accumulators];
    TRY(check_map(c, an, keys));
    TRY(f_name(c, an, "name", ac->name));
    for (int j = 0; j < m->n_accumulators; ++j)
        if (strcmp(m->accumulators[j].name, ac->name) == 0)
            return fail_field(c, an, "name", HYMO_ERR_MODEL, "duplicate accumulator name '%s'", ac->name);
    TRY(check_new_element(c, an, m, ac->name));
    TRY(f_node(c, an, "node", m, &ac->node));
    if (m->nodes[ac->node].kind != HYMO_NODE_VOLUME)
        return fail_field(c, an, "node", HYMO_ERR_MODEL,
                          "'%s' is a source: an accumulator sits on a volume (its pressure is a state)",
                          m->nodes[ac->node].name);
    TRY(f_number(c, an, "gas_volume", 1, 0, R_POSITIVE, &ac->gas_volume, NULL));
    TRY(f_number(c, an, "precharge", 1, 0, R_POSITIVE, &ac->precharge, NULL));
    TRY(f_number(c, an, "polytropic_index", 0, DEFAULT_ACC_POLYTROPIC, R_POSITIVE, &ac->polytropic_index, NULL));
    if (!(ac->polytropic_index >= 1.0))
        return fail_field(c, an, "polytropic_index", HYMO_ERR_MODEL,
                          "must be at least 1 (isothermal), got %g", ac->polytropic_index);
    m->n_accumulators++;
    return HYMO_OK;
}

/* hydraulics.accumulators (after the volumes). */
static hymo_status load_fluid_parts(ctx_t *c, hymo_ynode *hn, hymo_model *m)
{
    hymo_ynode *acc;
    TRY(f_seq(c, hn, "accumulators", 0, &acc));
    const int n = acc ? seq_len(acc) : 0;
    if (n > 0 && !(m->accumulators = calloc((size_t)n, sizeof *m->accumulators)))
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    TRY(each_item(c, acc, "accumulators", load_accumulator, m));
    return HYMO_OK;
}

#else
typedef int hymo_model_load_fluid_is_part_of_model_load_c;
#endif
