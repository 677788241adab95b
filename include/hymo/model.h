/* hymo — constant model description (the "mjModel" half).
 *
 * A hymo_model is loaded once from a model file and never changed by a run.
 * Everything a run changes lives in the simulation state (see sim.h).
 *
 * Conventions (SPEC §1): SI units; every body frame has its origin at the
 * body's inboard joint point; with z_j = 0 the child frame is aligned with
 * the parent frame and then rotated about / translated along the joint axis
 * by z_j.  Index -1 means "ground" wherever a body index is expected.
 * Bodies are stored in topological order: parent index < child index. */
#ifndef HYMO_MODEL_H
#define HYMO_MODEL_H

#include <stddef.h>

#include "hymo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of every name array, including the NUL: names have at most
 * HYMO_NAME_MAX - 1 characters (longer ones are a model error). */
#define HYMO_NAME_MAX 64
/* Body index that stands for the ground (the global frame). */
#define HYMO_GROUND (-1)

/* ------------------------------------------------------------------ */
/* Mechanics: bodies and their joints, points, cut joints (constraints) */

typedef enum { HYMO_JOINT_REVOLUTE = 0, HYMO_JOINT_PRISMATIC = 1 } hymo_joint_type;

/* A body of the kinematic tree, attached to its parent (or the ground)
 * by one revolute or prismatic joint with coordinate z. */
typedef struct {
    char name[HYMO_NAME_MAX];       /* body name                               */
    char joint_name[HYMO_NAME_MAX]; /* name of the inboard joint / coordinate */
    int parent;                     /* parent body index or HYMO_GROUND       */
    hymo_joint_type joint_type;
    double joint_location[3]; /* joint point in the parent frame (ground: global) */
    double joint_axis[3];     /* unit axis in the parent frame                     */
    double z0;                /* initial (or assembly guess) joint coordinate      */
    double zd0;               /* initial joint rate as given (0 if not given)      */
    int zd0_given;            /* 1 if the file gives the rate (joint.rate)         */
    double mass;              /* total mass (incl. point masses), kg               */
    double com[3];            /* centre of mass in the body frame                  */
    double inertia[9];        /* about the centre of mass, body frame, row-major   */
} hymo_body;

/* A named point fixed in a body (or ground). */
typedef struct {
    char name[HYMO_NAME_MAX];
    int body;    /* body index or HYMO_GROUND */
    double r[3]; /* coordinates in the body frame (ground: global) */
} hymo_point;

/* Kind of a cut joint and its constraint equations. */
typedef enum {
    HYMO_CUT_PLANAR_REVOLUTE = 0,      /* 2 eq: (r_A - r_B) . x, y  (plane = global XY)         */
    HYMO_CUT_PLANAR_TRANSLATIONAL = 1, /* 2 eq: (r_P - r_O) . n_b = 0, theta_a - theta_b - theta_0 */
    HYMO_CUT_SPHERICAL = 2,            /* 3 eq: r_A - r_B = 0                                   */
    HYMO_CUT_REVOLUTE = 3,             /* 5 eq: spherical + axis_a parallel to axis_b           */
    HYMO_CUT_TRANSLATIONAL = 4         /* 5 eq: P on line (O, axis_b) + no relative rotation    */
} hymo_cut_type;

/* A cut joint between bodies a and b (or the ground): n_eq constraint
 * equations Phi(z) = 0 that close a kinematic loop. */
typedef struct {
    char name[HYMO_NAME_MAX];
    hymo_cut_type type;
    int body_a;         /* body index or HYMO_GROUND */
    int body_b;         /* body index or HYMO_GROUND */
    double point_a[3];  /* A (revolute/spherical) or P (translational), frame of a */
    double point_b[3];  /* B (revolute/spherical) or O (translational), frame of b */
    double axis_a[3];   /* spatial revolute/translational: unit axis in frame of a */
    double axis_b[3];   /* revolute: unit axis in b; translational: sliding direction e in b */
    double angle0;      /* planar translational: theta_a - theta_b held constant (rad) */
    int n_eq;           /* number of constraint equations (2, 3 or 5) */
} hymo_cut_joint;

/* ------------------------------------------------------------------ */
/* Mechanical force elements (docs/model-format.md, "Force elements"):
 * generalized forces added to Q' of the multibody equations.          */

typedef enum {
    HYMO_FE_SPRING_DAMPER = 0,  /* point-to-point: T = k (l - l0) + c ldot + F0 along the line */
    HYMO_FE_JOINT_SPRING = 1,   /* on a joint: tau = -k (z - z_free) - c zdot + tau0           */
    HYMO_FE_EXTERNAL = 2,       /* force (and torque) at a body point, components from signals */
    HYMO_FE_JOINT_FRICTION = 3, /* tau = -F_c tanh(zdot / v_s) - c_v zdot                       */
    HYMO_FE_JOINT_LIMIT = 4     /* end dampers beyond lower/upper: k (z_lo - z) - c zdot, ...   */
} hymo_force_element_type;

typedef struct {
    char name[HYMO_NAME_MAX];
    hymo_force_element_type type;
    int point_a, point_b; /* spring-damper: point indices; external: point_a */
    int joint;            /* joint elements: the joint's body index */
    double stiffness;     /* k: N/m or N m/rad (limits: the end-damper stiffness) */
    double damping;       /* c: N s/m or N m s/rad */
    double free_length;   /* spring-damper: l0, m; joint spring: z_free (rad or m) */
    double preload;       /* F0 (tension, N) or tau0 (N m or N) */
    double coulomb;       /* friction: F_c */
    double friction_velocity; /* friction: v_s (rad/s or m/s) */
    double viscous;       /* friction: c_v */
    int has_lower, has_upper;
    double lower, upper;  /* limit: z_lo, z_hi */
    int sw_lower, sw_upper; /* limit: index among the elements' switching functions, -1: none */
    int body_frame;       /* external: 1 = components in the body frame, 0 = global */
    double force[3], torque[3];             /* external: component scales */
    int force_signal[3], torque_signal[3];  /* signal index multiplying each component, -1: constant */
} hymo_force_element;

/* ------------------------------------------------------------------ */
/* Actuators, in the order of a run's actuator index: cylinders, then
 * hydraulic motors, then driven joints.                               */

/* Double-acting cylinder between two points (SPEC §2). */
typedef struct {
    char name[HYMO_NAME_MAX];
    int point_base; /* point index of the cylinder end (s measured from here) */
    int point_rod;  /* point index of the rod end                            */
    double piston_area, rod_side_area; /* A_pist, A_rod (annulus), m^2 */
    double length;                     /* l, m                           */
    int has_l_pist0;                   /* 0: l_pist0 = s0 - l (seed 002)  */
    double l_pist0, l_rod0;            /* chamber lengths at s0, m        */
    double viscous;                    /* c, N s/m                        */
    double efficiency;                 /* eta (1 = no seal friction)      */
    double friction_velocity;          /* v_s, m/s                        */
    int has_damper;
    double damper_length, damper_stiffness, damper_damping; /* l_d, k_d, c_d */
    int node_piston, node_rod; /* volume nodes of the chambers */
} hymo_cylinder;

/* Hydraulic motor (docs/model-format.md, "motors") on the
 * joint of body `joint`, ports a and b: with dp = p_a - p_b and w the joint
 * rate, the joint torque (force on a prismatic joint) is
 *   T = D dp - (1 - eta_hm) D |dp| tanh(w/w_s) - c_v w
 * and the flow out of a into b through the motor is Q = D w + C_L dp. */
typedef struct {
    char name[HYMO_NAME_MAX];
    int joint;               /* body (= joint) index */
    int node_a, node_b;      /* ports: Q = D w + C_L dp flows a -> b */
    double displacement;     /* D, m^3/rad (revolute) or m^3/m (prismatic) */
    double efficiency;       /* eta_hm, hydro-mechanical (1: none) */
    double friction_velocity; /* w_s, rad/s or m/s */
    double leakage;          /* C_L, m^3/(s Pa), internal a -> b */
    double viscous;          /* c_v, N m s/rad or N s/m */
} hymo_motor;

/* A joint driven by a prescribed motion (docs/model-format.md,
 * "driven_joints"): z_j = f(t) with f the (shaped) signal; the joint leaves
 * the dynamics and the generalized force that imposes the motion (the
 * reaction) is recorded as the force of actuator n_cylinders + n_motors + k. */
typedef struct {
    char name[HYMO_NAME_MAX];
    int joint;  /* body (= joint) index */
    int signal; /* index into signals: f(t) */
} hymo_joint_driver;

/* ------------------------------------------------------------------ */
/* Hydraulics (SPEC §2): the fluid, nodes (volumes and sources) and the
 * flow elements between them                                         */

/* Properties of the hydraulic oil. */
typedef struct {
    double bulk_modulus_oil; /* B_oil, Pa        */
    double density;          /* rho, kg/m^3      */
    double p_transition;     /* laminar limit, Pa (2e5) */
} hymo_fluid;

/* Fluid law of the volumes (docs/model-format.md "Fluid model"):
 * constant bulk modulus, or oil with entrained (free) air. */
typedef enum { HYMO_FLUID_CONSTANT = 0, HYMO_FLUID_ENTRAINED_AIR = 1 } hymo_fluid_model;

typedef struct {
    hymo_fluid_model model;
    double air_fraction;     /* alpha0: free-air volume fraction at p_ref */
    double p_reference;      /* p_ref, Pa absolute (101325) */
    double p_vapour;         /* p_v, Pa absolute: the floor */
    double polytropic_index; /* n of the air */
} hymo_fluid_air;

typedef enum { HYMO_NODE_VOLUME = 0, HYMO_NODE_SOURCE = 1 } hymo_node_kind;
/* Initial pressure of a volume node: given (p0, from a number in the
 * model file) or static ("static": from static equilibrium at start). */
typedef enum { HYMO_P0_GIVEN = 0, HYMO_P0_STATIC = 1 } hymo_p0_rule;
/* Which chamber of a cylinder a sub-volume is (NONE: a fixed volume). */
typedef enum { HYMO_CHAMBER_NONE = -1, HYMO_CHAMBER_PISTON = 0, HYMO_CHAMBER_ROD = 1 } hymo_chamber;

/* One sub-volume of a lumped volume: either a fixed volume (hose, block)
 * or a cylinder chamber whose size follows the piston. */
typedef struct {
    double volume;       /* fixed volume, m^3 (0 for a chamber part)      */
    double bulk_modulus; /* bulk modulus of the container (hose/steel), Pa */
    int cylinder;        /* cylinder index for a chamber part, else -1     */
    hymo_chamber chamber;
} hymo_subvolume;

/* A hydraulic node: a lumped volume (pressure is a state) or a constant
 * pressure source (pump, tank). */
typedef struct {
    char name[HYMO_NAME_MAX];
    hymo_node_kind kind;
    /* sources */
    double pressure;
    /* volumes */
    int state;      /* index into the pressure vector p           */
    int first_part; /* into hymo_model.subvolumes                 */
    int n_parts;
    hymo_p0_rule p0_rule;
    double p0; /* HYMO_P0_GIVEN: initial pressure, Pa */
} hymo_node;

/* Gas-charged accumulator on a volume node (docs/model-format.md
 * "Accumulators"): gas volume V_g = V0 (p0/p)^(1/n) for p > p0 (charged),
 * the bladder resting on its seat (V_g = V0, no compliance) for p <= p0. */
typedef struct {
    char name[HYMO_NAME_MAX];
    int node;              /* volume node (not a source) */
    double gas_volume;     /* V0, m^3 (> 0): gas volume at the precharge */
    double precharge;      /* p0, Pa absolute (> 0) */
    double polytropic_index; /* n (1 isothermal .. 1.4 adiabatic), >= 1 */
} hymo_accumulator;

/* A throttle (orifice) between nodes node_a and node_b. */
typedef struct {
    char name[HYMO_NAME_MAX];
    int node_a, node_b; /* positive flow a -> b */
    double Ct;          /* Q = Ct g(p_a - p_b), m^3/(s sqrt(Pa)) */
} hymo_throttle;

/* 4/3 directional valve (SPEC §2): U >= 0: P->A and B->T; U < 0: A->T, P->B. */
typedef struct {
    char name[HYMO_NAME_MAX];
    int port_P, port_T, port_A, port_B; /* node indices */
    double Cv;                          /* m^3/(s sqrt(Pa) V) */
    double tau;                         /* spool time constant, s */
    int signal;                         /* index of the U_ref signal */
    int state;                          /* index into the spool vector U */
} hymo_valve;

/* Directional valve edges, pumps and flow control valves
 * (docs/model-format.md "Directional valve edges", "Pumps",
 * "Flow control valves"). */

/* Optional edges of a 4/3 valve (hymo_model.valve_edges[v], used when
 * `on`): edge e in HYMO_EDGE_PA, _BT (open for U > 0), _PB, _AT (U < 0),
 * Q_e = C[e] max(0, +-U - u0[e]) g(dp_e) + G_leak dp_e. */
enum { HYMO_EDGE_PA = 0, HYMO_EDGE_BT = 1, HYMO_EDGE_PB = 2, HYMO_EDGE_AT = 3 };
typedef struct {
    int on;         /* 0: the valve is the plain Cv |U| g(dp) law */
    double C[4];    /* edge flow coefficients, m^3/(s sqrt(Pa) V) */
    double u0[4];   /* overlap (dead band) of each edge, V (>= 0) */
    double leakage; /* G_leak of every edge, m^3/(s Pa) (0: none) */
} hymo_valve_edges;

/* Pressure-relief valve between two nodes (docs/model-format.md): with
 * dp = p_a - p_b, Q = k_g (dp - p_crack) for dp >= p_crack, else 0, plus
 * an optional linear leakage G_leak dp (Simcenter Amesim's simple relief
 * valve law: cracking pressure and flow-rate pressure gradient). */
typedef struct {
    char name[HYMO_NAME_MAX];
    int node_a, node_b; /* inlet (protected side), outlet (tank side) */
    double p_crack;     /* cracking pressure, Pa (>= 0) */
    double gradient;    /* k_g, m^3/(s Pa) */
    double leakage;     /* G_leak, m^3/(s Pa) (0: none) */
} hymo_relief_valve;

/* Check valve between two nodes, flow a -> b only: opening
 * x = (dp - p_crack)/p_open clamped to [0, 1], Q = C_max x g(dp) with the
 * orifice law g of the throttles, plus an optional linear leakage
 * G_leak dp (docs/model-format.md). */
typedef struct {
    char name[HYMO_NAME_MAX];
    int node_a, node_b; /* inlet, outlet */
    double p_crack;     /* cracking pressure, Pa (>= 0) */
    double p_open;      /* pressure rise above p_crack to full opening, Pa (> 0) */
    double Cmax;        /* flow coefficient at full opening, m^3/(s sqrt(Pa)) */
    double leakage;     /* G_leak, m^3/(s Pa) (0: none) */
} hymo_check_valve;

/* Pressure-compensated flow control valve (2-way compensator + metering
 * orifice) from node_a to node_b, dp = p_a - p_b: Q = Q_set for
 * dp >= dp_c, else Q_set g(dp)/g(dp_c) (docs/model-format.md). */
typedef struct {
    char name[HYMO_NAME_MAX];
    int node_a, node_b;
    double q_set; /* regulated flow, m^3/s */
    double dp_c;  /* compensator setting (minimum regulating drop), Pa (> 0) */
    /* index into signals of the factor s(t) >= 0 on the set flow,
     * Q_set(t) = q_set s(t); -1: constant */
    int set_flow_signal;
} hymo_flow_control;

/* Fixed-displacement pump from node_in (tank/suction) to node_out:
 * Q = eta_v D n - C_L (p_out - p_in) (docs/model-format.md "Pumps"). */
typedef struct {
    char name[HYMO_NAME_MAX];
    int node_in, node_out;
    double displacement; /* D, m^3/rev */
    double speed;        /* n, rev/s */
    double eta_v;        /* constant volumetric efficiency factor (1: none) */
    double leakage;      /* C_L, m^3/(s Pa) (0: none) */
    /* index into signals of the factor s(t) >= 0 on the speed,
     * n(t) = speed s(t); -1: constant speed */
    int speed_signal;
} hymo_pump;

/* ------------------------------------------------------------------ */
/* Input signals: piecewise-linear tables; a step is two points with the
 * same time (value before the step first). Outside the table the end
 * values are held.                                                     */

/* Shaping of a signal (docs/model-format.md, "signals"), applied in this
 * order: periodic repetition of the table, first-order filter, dead zone,
 * clamp.  Each stage is off unless its flag/parameter says otherwise. */
typedef struct hymo_signal_shape {
    double period;     /* > 0: the table from its first point repeats with this period, s */
    double filter_tau; /* > 0: first-order lag y' = (x - y)/tau, y = x before the first point, s */
    int has_dead_zone;
    double dead_lo, dead_hi; /* output 0 on [lo, hi], x - hi above, x - lo below */
    int has_clamp;
    double clamp_lo, clamp_hi; /* output limited to [lo, hi] */
    /* filter constants (hymo_signal_shape_prepare): the zero-state response
     * at each table point (n_points), at the end of a period, and the
     * decay of one period exp(-period/tau) */
    double *w;
    double w_end, rho;
    /* the kinks of the dead zone and clamp as switching functions
     * g_j = x(t) - level[j] (x: the signal before the dead zone), after the force elements' limits: n_kinks (0..4) of them
     * from index sw_first of the force elements' functions; n_kinks = 0
     * when the signal feeds no valve or external force */
    int n_kinks;
    double kink_level[4];
    int sw_first;
} hymo_signal_shape;

typedef struct {
    char name[HYMO_NAME_MAX];
    int n_points;
    double *t; /* non-decreasing, at most two equal consecutive times (a step) */
    double *v;
    /* the shaping stages, NULL for a plain table */
    hymo_signal_shape *shape;
} hymo_signal;

/* ------------------------------------------------------------------ */
/* Sensors                                                            */

/* What a sensor records (hymo_sensor.record, a bit set). */
#define HYMO_SENSOR_POSITION 1
#define HYMO_SENSOR_VELOCITY 2
#define HYMO_SENSOR_ACCELERATION 4

/* A named output point (docs/model-format.md, "Sensors"): a point fixed
 * in a body (or the ground) whose global position, velocity and/or
 * acceleration are written to the output (docs/hdf5-format.md).  Output
 * only: sensors change neither the results nor the physics hash. */
typedef struct {
    char name[HYMO_NAME_MAX];
    int body;    /* body index or HYMO_GROUND */
    double r[3]; /* coordinates in the body frame (ground: global) */
    int record;  /* HYMO_SENSOR_* bits (at least one) */
} hymo_sensor;

/* ------------------------------------------------------------------ */
/* Simulation defaults stored in the model file (overridable on the CLI) */

typedef struct {
    double dt, t_end;
    double penalty_alpha;   /* ALI3-P penalty factor */
    double tol_position;    /* Newton increment tolerances (SPEC §3) */
    double tol_pressure;
    double tol_spool;
    int max_iter;
} hymo_sim_defaults;

/* A loaded, validated model: everything a run reads and never changes
 * (hymo_model_load_file, hymo_model_free; the caller owns it).  Arrays are
 * indexed as the n_* counts say and owned by the model. */
typedef struct hymo_model {
    /* Identity: name, source, hashes and the overrides applied */
    char name[HYMO_NAME_MAX];
    char *source_path; /* as given to the loader */
    char *source_text; /* full text of the model file */
    char sha256[65];   /* hex digest of source_text */
    /* SHA-256 of the canonical form of the parsed document without the
     * `simulation` section and the `description` (docs/model-format.md,
     * "Model identity"): comments, formatting, key order and number
     * spelling do not change it. */
    char physics_sha256[65];
    /* the --set overrides applied to the parsed file, "PATH=VALUE" in
     * order (docs/overrides.md); 0/NULL without.  With overrides,
     * source_text stays the file's text, sha256 hashes that text followed
     * by one line "#hymo --set PATH=VALUE" per override, and
     * physics_sha256 is the hash of the overridden document. */
    int n_overrides;
    char **overrides;

    /* Bodies and joints: the kinematic tree under gravity, and its points */
    double gravity[3];
    int n_bodies;
    hymo_body *bodies;
    int n_points;
    hymo_point *points;
    int n_independent_hint; /* joints held at z0 during assembly / preferred independent */
    int *independent_hint;  /* body (= joint) indices */

    /* Constraints: cut joints that close kinematic loops */
    int n_cuts;
    hymo_cut_joint *cuts;

    /* Force elements and their switching functions (joint limits), after
     * the circuit's */
    int n_force_elements;
    hymo_force_element *force_elements;
    int n_force_switches;

    /* Actuators: cylinder k is actuator k of a run, motor k actuator
     * n_cylinders + k, driven joint k actuator n_cylinders + n_motors + k
     * (its force is the reaction; docs/model-format.md, "motors",
     * "driven_joints") */
    int n_cylinders;
    hymo_cylinder *cylinders;
    int n_motors;
    hymo_motor *motors;
    int n_drivers;
    hymo_joint_driver *drivers;

    /* Hydraulics: the fluid, the nodes and their sub-volumes, the
     * accumulators on volumes, and the flow elements between nodes */
    hymo_fluid fluid;
    hymo_fluid_air fluid_air; /* the fluid law of the volumes */
    int n_nodes;
    hymo_node *nodes;
    int n_subvolumes;
    hymo_subvolume *subvolumes;
    int n_volumes; /* number of pressure states (nodes of kind VOLUME) */
    int n_accumulators;
    hymo_accumulator *accumulators;
    int n_throttles;
    hymo_throttle *throttles;
    int n_valves; /* = number of spool states */
    hymo_valve *valves;
    hymo_valve_edges *valve_edges; /* the valves' optional edges (n_valves entries, NULL without valves) */
    int n_relief_valves;
    hymo_relief_valve *relief_valves;
    int n_check_valves;
    hymo_check_valve *check_valves;
    int n_flow_controls;
    hymo_flow_control *flow_controls;
    int n_pumps;
    hymo_pump *pumps;

    /* Input signals */
    int n_signals;
    hymo_signal *signals;

    /* Sensors: output points (`sensors:`, src/model/model_load_sensors.c) */
    int n_sensors;
    hymo_sensor *sensors;

    /* Simulation settings: the defaults of a run */
    hymo_sim_defaults defaults;
    /* simulation.reselect_threshold, the double-step re-selection
     * threshold (0 < r <= 1; 0 when the file does not give it: the default
     * HYMO_RESELECT_THRESHOLD_DEFAULT of sim.h applies) */
    double reselect_threshold;
    /* 1 when the penalty factor is the mass-scaled default (a format 2
     * file without simulation.penalty_alpha; docs/model-format.md
     * "Penalty factor"): defaults.penalty_alpha is then its lower bound;
     * 0 when the file gives penalty_alpha or is format 1 (1e11 as given) */
    int penalty_alpha_auto;

    /* Source lines for the messages of checks made after loading (0:
     * unknown): of each volume's initial_pressure (n_volumes entries, NULL
     * without volumes) and of `independent` */
    int *volume_p0_line;
    int independent_line;
    int *driver_line;   /* of each driven_joints item (n_drivers entries) */
    int *cylinder_line; /* of each hydraulics.cylinders item (n_cylinders entries) */

    /* Compiled form (constants and the initial state derived from the
     * above, shared by every run of the model); set by the loader.  The
     * fields above must not be changed after loading. */
    struct hymo_compiled *compiled;
} hymo_model;

/* Loads and validates a YAML model file (format: docs/model-format.md).
 * Errors name "file:line: field: problem". */
hymo_status hymo_model_load_file(const char *path, hymo_model **out, hymo_error *err);
/* Same, with `n_set` overrides "PATH=VALUE" applied to the parsed file
 * before the model is built (docs/overrides.md): PATH selects mapping
 * keys separated by '.', and in lists the item whose `name` is given in
 * brackets or the item at a numeric index, e.g.
 * "hydraulics.valves[dcv1].flow_coefficient=2e-8".  An unknown path is
 * HYMO_ERR_ARGUMENT naming the failing component and what exists there; a
 * value the model refuses is the usual "file:line: field: problem" error
 * ending "(from --set PATH=VALUE)". */
hymo_status hymo_model_load_file_set(const char *path, const char *const *set, int n_set, hymo_model **out,
                                     hymo_error *err);
/* hymo_model_load_file_set with flags (0: the same): HYMO_LOAD_NO_SOURCE
 * keeps no source_text (NULL; the text is freed once parsed, sha256 is
 * that of the text all the same), for a model that is run without being
 * written to a file (references, FMUs and system files store the text). */
#define HYMO_LOAD_NO_SOURCE 1u
hymo_status hymo_model_load_file_flags(const char *path, const char *const *set, int n_set, unsigned flags,
                                       hymo_model **out, hymo_error *err);
/* Same, from text in memory; `origin` is used in messages. */
hymo_status hymo_model_load_string(const char *text, const char *origin, hymo_model **out,
                                   hymo_error *err);
/* Frees a model from hymo_model_load* and everything it owns; NULL is a
 * no-op. */
void hymo_model_free(hymo_model *model);

/* Number of model compilations (constants, initial states) done in this
 * process: a diagnostic that shows work shared between runs. */
long hymo_model_compilations(void);

/* Total number of constraint equations of all cut joints. */
int hymo_model_n_constraints(const hymo_model *model);

/* Lookup helpers (return -1 if not found). */
int hymo_model_find_body(const hymo_model *model, const char *name);
/* Point index by name: "point" (the first point so named) or
 * "body.point" / "ground.point" (the point of that body); -1 if not
 * found or NULL. */
int hymo_model_find_point(const hymo_model *model, const char *name);

/* Input signal value with one-sided limits at steps:
 * side = +1: right limit (value just after t), side = -1: left limit. */
double hymo_signal_eval(const hymo_signal *signal, double t, int side);
/* The same for a time t of a step grid of size dt: a t within 1e-6 dt of a
 * breakpoint is taken as the breakpoint (found by bisection), so that
 * round-off in t = k dt never moves a step change of the input into the
 * neighbouring step.  NULL or an empty table gives 0. */
double hymo_signal_eval_snapped(const hymo_signal *signal, double t, int side, double dt);
/* hymo_signal_eval(signal, t, side) for dt <= 0, else
 * hymo_signal_eval_snapped(signal, t, side, dt): the same value to the
 * bit, with *seg a segment hint the caller keeps between calls (-1 at
 * first): a t strictly inside the hinted segment of a table and farther
 * than 1e-6 dt from its ends is interpolated without a search. */
double hymo_signal_eval_hint(const hymo_signal *signal, double t, int side, double dt, int *seg);
/* 1 when t lies strictly inside segment seg of a table, farther than
 * 1e-6 dt from its ends (dt > 0): hymo_signal_eval_hint with that hint
 * gives both one-sided limits at t the segment's interpolation, the same
 * bits for side +1 and -1; else 0. */
int hymo_signal_sides_agree(const hymo_signal *signal, double t, double dt, int seg);
/* Value of the (shaped) signal at t and, in d[0], d[1] (if d is not NULL),
 * its first and second time derivatives on the side `side` (one-sided at
 * breakpoints and at the kinks of the dead zone and clamp); dt > 0 snaps t
 * to the breakpoints as hymo_signal_eval_snapped, dt <= 0 is exact.  A
 * plain table has d[1] = 0 (piecewise linear); the filter's output has
 * d[0] = (x - y)/tau and d[1] = (x' - y')/tau.  NULL gives 0. */
double hymo_signal_eval_d(const hymo_signal *signal, double t, int side, double dt, double d[2]);
/* The first breakpoint of the table (repeated with the period) later than
 * t + eps; +INFINITY if none. */
double hymo_signal_next_breakpoint(const hymo_signal *signal, double t, double eps);
/* The first breakpoint in (t + eps, t_end - eps) at which the signal's
 * value jumps (its left and right limits differ: a table step, a period's
 * wrap onto a different value; never with a filter); +INFINITY if none. */
double hymo_signal_next_jump(const hymo_signal *signal, double t, double t_end, double eps);
/* The input levels x = level[j] (x the signal after the
 * period and filter stages, before the dead zone) at which the shaped
 * output has a kink: the dead zone's edges and the inputs at which the
 * dead-zoned value meets a clamp bound (distinct, at most 4); returns
 * their number (0 for a signal without dead zone or clamp). */
int hymo_signal_kink_levels(const hymo_signal *signal, double level[4]);
/* The signal before the dead zone and clamp (period and filter applied)
 * at t, one-sided and snapped as hymo_signal_eval_d. */
double hymo_signal_eval_unlimited(const hymo_signal *signal, double t, int side, double dt);

/* Turbulent orifice law with laminar region (SPEC §2):
 * g = sgn(dp) sqrt|dp| for |dp| >= p_tr, dp / sqrt(p_tr) otherwise. */
double hymo_orifice_g(double dp, double p_tr);

#ifdef __cplusplus
}
#endif
#endif
