/* FMU export (docs/fmi.md): one part of a model -- the split's mechanics,
 * one hydraulic circuit, or the whole monolithic engine -- as a
 * hymo_subsystem with the FMI variable list of its modelDescription.xml.
 * Shared by `hymo fmu` (src/cli/fmu_cli.c, which writes the archive) and the
 * FMU binary (src/fmu/fmu_binary.c, the fmi2* functions), so that both see the
 * same variables in the same order. */
#ifndef HYMO_FMU_INTERNAL_H
#define HYMO_FMU_INTERNAL_H

#include "hymo/cosim.h"
#include "hymo/sim.h"
#include "hymo/subsystem.h"

/* The resources of an FMU (resources/ in the archive). */
#define HYMO_FMU_MODEL_FILE "model.yaml"
#define HYMO_FMU_OPTIONS_FILE "options.txt"
/* Most options an FMU stores. */
#define HYMO_FMU_MAX_OPTIONS 128

typedef enum { HYMO_FMU_MECHANICS = 0, HYMO_FMU_CIRCUIT = 1, HYMO_FMU_WHOLE = 2 } hymo_fmu_part_kind;
typedef enum { HYMO_FMU_INPUT = 0, HYMO_FMU_OUTPUT = 1, HYMO_FMU_LOCAL = 2 } hymo_fmu_causality;

/* One FMI ScalarVariable; its value reference is its index. */
typedef struct {
    char name[160];
    char description[160];
    const char *unit; /* static string */
    hymo_fmu_causality causality;
    hymo_var_type type;
    int index;    /* input/output: index in the subsystem's inputs/outputs; local: subsystem variable */
    double start; /* inputs: start value (the value at t = 0) */
    int nonnegative; /* inputs: a factor (min="0"; fmi2SetReal refuses a negative value) */
} hymo_fmu_var;

typedef struct hymo_fmu_part {
    hymo_model *model; /* owned */
    hymo_fmu_part_kind kind;
    hymo_split *split;   /* mechanics, circuit: the whole split (owned) */
    hymo_subsystem *sub; /* the part: a subsystem of split, or the whole-model subsystem (owned) */
    int owns_sub;
    int n_vars, n_inputs, n_outputs; /* inputs first, then outputs, then locals */
    hymo_fmu_var *vars;
    /* whole: inputs follow the model's signal tables until a master sets them */
    int inputs_default_to_model;
    char part_name[96];      /* "mechanics", "circuit:circuit1(cyl1)", "whole" */
    char identifier[64];     /* modelIdentifier: a C identifier, e.g. crane1_mechanics */
    char guid[48];           /* {8-4-4-4-12} from the physics hash, the part and the options */
    char options_text[4096]; /* the options, one "--name<TAB>value" per line (options.txt) */
    double step;             /* the internal step of the part (h_m, h_h or dt): DefaultExperiment stepSize */
    double t_end;
} hymo_fmu_part;

/* Builds the part of the model file at model_path described by the
 * options argv[0..argc-1] ("--part" "mechanics" "--coupling" "..." ...;
 * --part is required; --set overrides, co-simulation options, and for
 * whole the run options of `hymo run`).  Errors name the option or the
 * model (HYMO_ERR_ARGUMENT, HYMO_ERR_MODEL, ...); at most
 * HYMO_FMU_SET_MAX --set overrides. */
#define HYMO_FMU_SET_MAX 64
hymo_status hymo_fmu_part_create(const char *model_path, int argc, char **argv, hymo_fmu_part **out,
                                 hymo_error *err);
void hymo_fmu_part_free(hymo_fmu_part *part);

/* The whole-model subsystem (src/fmu/fmu_whole.c): hymo_sim with opt; inputs
 * are the signals that drive valves (a NaN value at the step start: the
 * model's signal table), outputs z, zd (joints), s, sd, F (cylinders), p
 * (volumes), u (spools). */
hymo_status hymo_fmu_whole_create(const hymo_model *model, const hymo_run_options *opt, hymo_subsystem **out,
                                  hymo_error *err);

/* The modelDescription.xml of part into a malloc'd string (NULL: out of memory). */
char *hymo_fmu_model_description(const hymo_fmu_part *part);

/* An SSP 1.0 archive of a split model (src/fmu/fmu_ssp.c,
 * docs/cosimulation.md "SSP files"): the mechanics and every circuit as
 * parts, component k named names[k] (its FMU resources/NAME.fmu), and
 * SystemStructure.ssd: every component with its inputs and outputs as
 * connectors, one connection from the output of each input's name in
 * another component (exactly one must exist), the stop time, and hymo's
 * settings (annotation de.hymo.cosim: H, scheme and order, extrapolation,
 * the model resources/model.yaml). */
#define HYMO_FMU_SSP_MAX 64
typedef struct {
    int n;
    hymo_fmu_part *parts[HYMO_FMU_SSP_MAX];
    char names[HYMO_FMU_SSP_MAX][64];
    char *ssd;
    double H, t_end;
    int ordered, extrapolation; /* scheme gauss-seidel (else jacobi); the system's Lagrange order */
} hymo_fmu_ssp;

/* Builds the SSP of the model file at model_path from the options of
 * hymo_fmu_part_create ("--part" "ssp" among them; --scheme is the
 * system's, not given to the FMUs; --set is refused). */
hymo_status hymo_fmu_ssp_create(const char *model_path, int argc, char **argv, hymo_fmu_ssp **out, hymo_error *err);
void hymo_fmu_ssp_free(hymo_fmu_ssp *s);

#endif
