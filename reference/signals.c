/* hymo — the table of per-step signals (reference/signals.h). */
#include "signals.h"

#include <stdio.h>
#include <string.h>

const char *const hymo_ref_groups[HYMO_GROUP_COUNT] = {
    [HYMO_GROUP_STATES] = "states",
    [HYMO_GROUP_ACTUATORS] = "actuators",
    [HYMO_GROUP_ENERGY] = "energy",
    [HYMO_GROUP_CONSTRAINTS] = "constraints",
    [HYMO_GROUP_SOLVER] = "solver",
};

/* The data field of a signal: `field` in hymo_ref_block and hymo_reference,
 * `rows_field` in hymo_rows. */
#define AT(field, rows_field)                                                                      \
    offsetof(hymo_ref_block, field), offsetof(hymo_reference, field), offsetof(hymo_rows, rows_field)
#define G(name) HYMO_GROUP_##name
#define C(name) HYMO_COLS_##name
#define F64 HYMO_SIG_F64
#define I32 HYMO_SIG_I32
/* one `units` string; or per column, the coordinate's unit + suffix */
#define UNITS(text) HYMO_UNITS_FIXED, text
#define COORD_UNITS(suffix) HYMO_UNITS_PER_COORD, suffix

/* clang-format off */
const hymo_ref_signal hymo_ref_signals[HYMO_SIGNAL_COUNT] = {
/*   id                      path                          group           cols     type  data fields (block+ref, rows)  units */
    [HYMO_SIG_TIME]       = {"/time",                      G(ROOT),        C(ONE),  F64,  AT(time, time),             UNITS("s")},
    [HYMO_SIG_Z]          = {"/states/z",                  G(STATES),      C(NZ),   F64,  AT(z, z),                   COORD_UNITS("")},
    [HYMO_SIG_ZD]         = {"/states/zd",                 G(STATES),      C(NZ),   F64,  AT(zd, zd),                 COORD_UNITS("/s")},
    [HYMO_SIG_ZDD]        = {"/states/zdd",                G(STATES),      C(NZ),   F64,  AT(zdd, zdd),               COORD_UNITS("/s^2")},
    [HYMO_SIG_P]          = {"/states/p",                  G(STATES),      C(NP),   F64,  AT(p, p),                   UNITS("Pa")},
    [HYMO_SIG_U]          = {"/states/U",                  G(STATES),      C(NU),   F64,  AT(u, u),                   UNITS("V")},
    [HYMO_SIG_S]          = {"/actuators/s",               G(ACTUATORS),   C(NA),   F64,  AT(s, s),                   UNITS("m")},
    [HYMO_SIG_SD]         = {"/actuators/sd",              G(ACTUATORS),   C(NA),   F64,  AT(sd, sd),                 UNITS("m/s")},
    [HYMO_SIG_FORCE]      = {"/actuators/force",           G(ACTUATORS),   C(NA),   F64,  AT(force, force),           UNITS("N")},
    [HYMO_SIG_WORK]       = {"/actuators/work",            G(ACTUATORS),   C(NA),   F64,  AT(work, work),             UNITS("J")},
    [HYMO_SIG_KINETIC]    = {"/energy/kinetic",            G(ENERGY),      C(ONE),  F64,  AT(kinetic, kin),           UNITS("J")},
    [HYMO_SIG_POTENTIAL]  = {"/energy/potential",          G(ENERGY),      C(ONE),  F64,  AT(potential, pot),         UNITS("J")},
    [HYMO_SIG_DRIFT]      = {"/energy/drift",              G(ENERGY),      C(ONE),  F64,  AT(drift, drift),           UNITS("J")},
    [HYMO_SIG_C_POS]      = {"/constraints/position",      G(CONSTRAINTS), C(NCUT), F64,  AT(c_pos, cpos),            UNITS("m or rad, Euclidean norm per cut joint")},
    [HYMO_SIG_C_VEL]      = {"/constraints/velocity",      G(CONSTRAINTS), C(NCUT), F64,  AT(c_vel, cvel),            UNITS("m/s")},
    [HYMO_SIG_C_ACC]      = {"/constraints/acceleration",  G(CONSTRAINTS), C(NCUT), F64,  AT(c_acc, cacc),            UNITS("m/s^2")},
    [HYMO_SIG_ITERATIONS] = {"/solver/iterations",         G(SOLVER),      C(ONE),  I32,  AT(iterations, iterations), UNITS("1")},
    [HYMO_SIG_RESIDUAL]   = {"/solver/residual",           G(SOLVER),      C(ONE),  F64,  AT(residual, residual),     UNITS("scaled residual norm (see docs)")},
};
/* clang-format on */

#undef AT
#undef G
#undef C
#undef F64
#undef I32
#undef UNITS
#undef COORD_UNITS

#define DIM(count, names)                                                                          \
    {#names, offsetof(hymo_ref_dims, count), offsetof(hymo_ref_dims, names),                       \
     offsetof(hymo_reference, count), offsetof(hymo_reference, names), offsetof(hymo_rows, count)}

const hymo_ref_dimension hymo_ref_dimensions[HYMO_COLS_COUNT] = {
    [HYMO_COLS_NZ] = DIM(nz, z_names),
    [HYMO_COLS_NP] = DIM(np, p_names),
    [HYMO_COLS_NU] = DIM(nu, u_names),
    [HYMO_COLS_NA] = DIM(na, actuator_names),
    [HYMO_COLS_NCUT] = DIM(ncut, cut_names),
};

#undef DIM

const char *hymo_ref_signal_name(const hymo_ref_signal *s)
{
    return strrchr(s->path, '/') + 1;
}

size_t hymo_ref_signal_elem_size(const hymo_ref_signal *s)
{
    return s->type == HYMO_SIG_I32 ? sizeof(int) : sizeof(double);
}

void hymo_ref_signal_coord_unit(const hymo_ref_signal *s, const char *coord,
                                char out[HYMO_REF_TEXT_MAX])
{
    snprintf(out, HYMO_REF_TEXT_MAX, "%s%s", coord, s->unit_rule == HYMO_UNITS_PER_COORD ? s->units : "");
}

const char *hymo_ref_signal_coord_unit_static(const hymo_ref_signal *s, const char *coord)
{
    static const char *const known[] = {"rad", "rad/s", "rad/s^2", "m", "m/s", "m/s^2"};
    if (s->unit_rule != HYMO_UNITS_PER_COORD || !coord) return "";
    const size_t len = strlen(coord);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (!strncmp(known[i], coord, len) && !strcmp(known[i] + len, s->units)) return known[i];
    }
    return "";
}

/* counts[k] = the count field of dimension k in obj (at hymo_ref_dimensions[k].member). */
#define COUNTS(obj, member)                                                                        \
    do {                                                                                           \
        counts[HYMO_COLS_ONE] = 1;                                                                 \
        for (int k_ = HYMO_COLS_ONE + 1; k_ < HYMO_COLS_COUNT; k_++) {                             \
            counts[k_] = *(const int *)(const void *)((const char *)(obj) +                        \
                                                      hymo_ref_dimensions[k_].member);                \
        }                                                                                          \
    } while (0)

void hymo_ref_counts_dims(const hymo_ref_dims *d, int counts[HYMO_COLS_COUNT])
{
    COUNTS(d, dims_count);
}

void hymo_ref_counts_ref(const hymo_reference *r, int counts[HYMO_COLS_COUNT])
{
    COUNTS(r, ref_count);
}

void hymo_ref_counts_rows(const hymo_rows *b, int counts[HYMO_COLS_COUNT])
{
    COUNTS(b, rows_count);
}
