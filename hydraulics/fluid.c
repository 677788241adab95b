/* Fluid law of the lumped volumes (docs/model-format.md
 * "Fluid model") and the gas-charged accumulators' compliance.
 *
 * Every volume i obeys  pdot_i = W_i (Q_i - Vdot_i),  W_i = B_e / V with
 *   1/B_e = 1/B_f(p_i) + (C_i + A_i(p_i)) / V_i,
 * C_i = sum_s V_s/B_s (container compliance, SPEC §2), A_i the compliance
 * of the charged accumulators at the node and B_f(p) the fluid's bulk
 * modulus, given here as 1/B_f(p) and its derivative.
 *
 * constant:      1/B_f = 1/B_oil.
 * entrained air: a unit of mixture at p_ref holds (1 - a0) liquid (bulk
 *   modulus B_oil, V_l = (1 - a0) exp(-(p - p_ref)/B_oil)) and a0 free air
 *   whose partial pressure p - p_v (Dalton: the bubbles also hold vapour
 *   at p_v) follows the polytropic law, V_a = a0 ((p_ref - p_v)/(p - p_v))^(1/n).
 *   B_f = -V dp/dV with V = V_l + V_a:
 *     1/B_f = S / V,   S = V_l/B_oil + V_a/(n (p - p_v)).
 *   B_f -> n (p - p_v) -> 0 as p -> p_v: the floor is never reached by the
 *   continuous equations. Below p_v (only a Newton iterate gets there) the
 *   C1 continuation B_f = n (p - p_v) is used, whose sign pushes the
 *   pressure back up. */
#include <float.h>
#include <math.h>

#include "circuit.h"

static double inv_bulk_constant(const hymo_model *m, double p, double *dinv_dp)
{
    (void)p;
    *dinv_dp = 0.0;
    return 1.0 / m->fluid.bulk_modulus_oil;
}

static double inv_bulk_entrained_air(const hymo_model *m, double p, double *dinv_dp)
{
    const hymo_fluid_air *fa = &m->fluid_air;
    const double n = fa->polytropic_index, Bl = m->fluid.bulk_modulus_oil, x = p - fa->p_vapour;
    if (!(x > 0.0)) { /* C1 continuation below the floor */
        const double xx = x < 0.0 ? x : -DBL_MIN;
        *dinv_dp = -1.0 / (n * xx * xx);
        return 1.0 / (n * xx);
    }
    const double a = fa->air_fraction, l = 1.0 - a;
    const double L = l * exp(-(p - fa->p_reference) / Bl);      /* liquid volume */
    const double G = a * pow((fa->p_reference - fa->p_vapour) / x, 1.0 / n); /* air volume */
    const double V = L + G, S = L / Bl + G / (n * x);
    const double dS = -L / (Bl * Bl) - G * (1.0 + n) / (n * n * x * x);
    const double inv = S / V;
    *dinv_dp = dS / V + inv * inv;
    return inv;
}

static double compliance_constant(const hymo_model *m, double V, double p)
{
    (void)p;
    return V / m->fluid.bulk_modulus_oil;
}

static double compliance_entrained_air(const hymo_model *m, double V, double p)
{
    double dinv;
    return V * inv_bulk_entrained_air(m, p, &dinv);
}

/* indexed by hymo_fluid_model */
static const hymo_fluid_law k_laws[] = {
    [HYMO_FLUID_CONSTANT] = {.name = "constant",
                             .inv_bulk = inv_bulk_constant,
                             .compliance = compliance_constant,
                             .pressure_independent = 1},
    [HYMO_FLUID_ENTRAINED_AIR] = {.name = "entrained_air",
                                  .inv_bulk = inv_bulk_entrained_air,
                                  .compliance = compliance_entrained_air,
                                  .pressure_independent = 0},
};

const hymo_fluid_law *hymo_fluid_law_of(const hymo_model *model)
{
    const int k = (int)model->fluid_air.model;
    return &k_laws[k >= 0 && k < (int)(sizeof k_laws / sizeof k_laws[0]) ? k : 0];
}

double hymo_fluid_mixture_volume(const hymo_model *m, double p)
{
    const hymo_fluid_air *fa = &m->fluid_air;
    if (fa->model != HYMO_FLUID_ENTRAINED_AIR) return exp(-(p - fa->p_reference) / m->fluid.bulk_modulus_oil);
    const double a = fa->air_fraction, x = p - fa->p_vapour;
    return (1.0 - a) * exp(-(p - fa->p_reference) / m->fluid.bulk_modulus_oil) +
           (x > 0.0 ? a * pow((fa->p_reference - fa->p_vapour) / x, 1.0 / fa->polytropic_index) : INFINITY);
}

double hymo_fluid_floor(const hymo_model *m)
{
    return m->fluid_air.model == HYMO_FLUID_ENTRAINED_AIR ? m->fluid_air.p_vapour : 0.0;
}

double hymo_accumulator_gas_volume(const hymo_accumulator *ac, double p)
{
    if (!(p > ac->precharge)) return ac->gas_volume;
    return ac->gas_volume * pow(ac->precharge / p, 1.0 / ac->polytropic_index);
}

double hymo_accumulator_compliance(const hymo_circuit *circ, const hymo_model *model, int node, double p,
                                   double *dA_dp)
{
    double A = 0.0, dA = 0.0;
    for (int j = 0; j < model->n_accumulators; ++j) {
        const hymo_accumulator *ac = &model->accumulators[j];
        if (ac->node != node) continue;
        const int charged = circ->sw ? circ->sw[circ->sw_accumulator + j] : p - ac->precharge >= 0.0;
        if (!charged) continue;
        /* past p0 within a step (the state says charged): keep p > 0 */
        const double pc = p > 1e-3 * ac->precharge ? p : 1e-3 * ac->precharge, n = ac->polytropic_index;
        const double Vg = ac->gas_volume * pow(ac->precharge / pc, 1.0 / n);
        A += Vg / (n * pc); /* -dV_g/dp */
        if (p > 1e-3 * ac->precharge) dA -= Vg * (1.0 + n) / (n * n * pc * pc);
    }
    *dA_dp = dA;
    return A;
}
