/* hymo — hydraulic motors in a run (motor branch): the per-motor state
 * that outputs (sensors) read.  The motor's equations are in
 * hydraulics/circuit.h (hymo_motor_torque_d, hymo_motor_flow); the motor is
 * actuator n_cylinders + k of the run (formulations/multibody.c). */
#include "engine.h"
#include "motor.h"

hymo_status hymo_sim_motor_state(const hymo_sim *sim, int k, hymo_motor_state *out, hymo_error *err)
{
    const hymo_model *model = sim ? sim->model : NULL;
    if (!model || k < 0 || k >= model->n_motors || !out)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_sim_motor_state: no motor %d (the model has %d)", k,
                              model ? model->n_motors : 0);
    const hymo_motor *mo = &model->motors[k];
    const int a = model->n_cylinders + k;
    const double w = sim->act.sd[a];
    const double *p = sim->state.p; /* the committed pressures (pn is the last iterate) */
    double dT_ddp, dT_dw;
    out->speed = w;
    out->dp = hymo_node_pressure(model, mo->node_a, p) - hymo_node_pressure(model, mo->node_b, p);
    out->torque = hymo_motor_torque_d(model, k, w, p, &dT_ddp, &dT_dw);
    out->flow_ideal = mo->displacement * w;
    out->flow_leakage = mo->leakage * out->dp;
    out->flow = out->flow_ideal + out->flow_leakage;
    out->power_mech = out->torque * w;
    out->power_hyd = out->dp * out->flow;
    return HYMO_OK;
}
