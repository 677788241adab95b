/* hymo — FMI 2.0 co-simulation FMUs as co-simulation subsystems, and
 * co-simulation system files that wire them (docs/fmi.md "Import",
 * docs/cosimulation.md "System files").
 *
 * An FMU (a zip archive) is unpacked into a fresh temporary directory, its
 * modelDescription.xml is read (fmiVersion "2.0" and a CoSimulation
 * element required), binaries/linux64/MODELIDENTIFIER.so is loaded and
 * every fmi2* function the import calls is resolved before anything is
 * instantiated.  The subsystem:
 *   inputs     the Real ScalarVariables with causality "input", in the
 *              order of modelDescription.xml;
 *   outputs    the Real ScalarVariables with causality "output", likewise;
 *   variables  every ScalarVariable, in the order of modelDescription.xml
 *              (value reference of the subsystem = its position there;
 *              Integer and Boolean are read as reals, String as strings);
 *   set_inputs fmi2SetReal of the value at the step start, and, when the
 *              FMU declares canInterpolateInputs, fmi2SetRealInputDerivatives
 *              of orders 1..3 (derivative k = k! coef[k]);
 *   do_step    fmi2DoStep(t, H, noSetFMUStatePriorToCurrentPoint = false):
 *              fmi2Discard is HYMO_ERR_NUMERIC (the step failed: the
 *              co-simulation is unstable), fmi2Error / fmi2Fatal / fmi2Pending
 *              are HYMO_ERR_MODEL (a broken FMU); messages name the FMU,
 *              the time and the FMU's last logged message;
 *   get_state / set_state  fmi2GetFMUstate / fmi2SetFMUstate, the state
 *              serialized into the buffer (fmi2SerializeFMUstate) when the
 *              FMU can serialize; otherwise the buffer holds a handle to an
 *              FMUstate kept by the subsystem; state_size 0 when the FMU
 *              declares neither (canGetAndSetFMUstate false);
 *   destroy    fmi2Terminate, fmi2FreeInstance, dlclose, and the temporary
 *              directory removed. */
#ifndef HYMO_FMU_H
#define HYMO_FMU_H

#include <stdio.h>

#include "hymo/cosim.h"
#include "hymo/subsystem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A start value set before initialization (fmi2SetReal, or
 * fmi2SetInteger / fmi2SetBoolean of the rounded value): a variable of
 * causality parameter or input. */
typedef struct {
    const char *name;
    double value;
} hymo_fmu_parameter;

/* Loads, instantiates (instance name `name`, at most 63 characters; NULL:
 * the modelIdentifier) and initializes the FMU at `path`: setup experiment
 * from start_time (no stop time), the parameters set, enter and exit
 * initialization mode.  Every error is one line naming the FMU. */
hymo_status hymo_fmu_subsystem_create(const char *path, const char *name, double start_time,
                                      const hymo_fmu_parameter *params, int n_params, hymo_subsystem **out,
                                      hymo_error *err);

/* The same, but the FMU is left in initialization mode (FMI 2.0 §4.2.4:
 * inputs may be set and outputs read there), so that a master can pass the
 * connected values between several FMUs before any of them leaves it;
 * hymo_fmu_exit_initialization ends it (fmi2ExitInitializationMode, and
 * reports a failed fmi2SetReal made meanwhile).  A subsystem destroyed in
 * initialization mode is freed without fmi2Terminate. */
hymo_status hymo_fmu_subsystem_open(const char *path, const char *name, double start_time,
                                    const hymo_fmu_parameter *params, int n_params, hymo_subsystem **out,
                                    hymo_error *err);
/* Leaves initialization mode (a subsystem made by hymo_fmu_subsystem_open). */
hymo_status hymo_fmu_exit_initialization(hymo_subsystem *sub, hymo_error *err);

/* The functions below take a subsystem made by hymo_fmu_subsystem_create
 * or _open (they do not ask a subsystem which implementation it is).
 *
 * Input / output i as its variable's value reference, -1 for i out of
 * range (the subsystem interface itself has no names for inputs and
 * outputs). */
int hymo_fmu_input_variable(const hymo_subsystem *sub, int i);
/* Output i as its variable's value reference, -1 for i out of range. */
int hymo_fmu_output_variable(const hymo_subsystem *sub, int i);
/* Output i's nominal value (the Real's nominal attribute, 1 when not
 * given), NAN for i out of range. */
double hymo_fmu_output_nominal(const hymo_subsystem *sub, int i);
/* Removes input i from the subsystem's inputs (before it joins a master):
 * the master never sets it, the FMU keeps its own value (its start value,
 * or whatever the FMU does with an input nobody sets).  0, or -1 for a bad
 * i. */
int hymo_fmu_free_input(hymo_subsystem *sub, int i);
/* The temporary directory the FMU was unpacked into (for tests). */
const char *hymo_fmu_directory(const hymo_subsystem *sub);

/* ---- co-simulation system files (docs/cosimulation.md "System files") ---- */

/* Opaque loaded system file (hymo_cosim_system_load,
 * hymo_cosim_system_free). */
typedef struct hymo_cosim_system hymo_cosim_system;

/* 1 when path is a YAML file whose top level has `subsystems` or
 * `connections` (a system file rather than a model file), or an SSP 1.0
 * archive (a name ending in .ssp, or a zip holding SystemStructure.ssd;
 * docs/cosimulation.md "SSP files"), else 0. */
int hymo_cosim_system_file(const char *path);

/* Loads and checks a system file: every FMU is loaded and instantiated,
 * every connection resolved by variable names, the master created.
 * Errors name FILE:LINE: FIELD.  An SSP archive is read into the
 * equivalent system file (its FMUs extracted to a temporary directory that
 * is removed before this returns); its errors name
 * ARCHIVE:SystemStructure.ssd:LINE: ELEMENT. */
hymo_status hymo_cosim_system_load(const char *path, hymo_cosim_system **out, hymo_error *err);
/* The system file's settings (H, t_end, verdict limits and thresholds;
 * the split-mode fields are unused).  The caller may change the verdict
 * fields (command-line options) before hymo_cosim_system_run. */
hymo_cosim_options *hymo_cosim_system_options(hymo_cosim_system *sys);
/* The reference the file names (reference:, resolved against the file's
 * directory), or NULL. */
const char *hymo_cosim_system_reference(const hymo_cosim_system *sys);
/* The output the file names (output:), or NULL. */
const char *hymo_cosim_system_output(const hymo_cosim_system *sys);
/* The files the system reads, k = 0, 1, ...: the system file, the model
 * file it names (model:, if any), then the FMU of every subsystem (of an
 * SSP: the archive only); NULL past the last. */
const char *hymo_cosim_system_input(const hymo_cosim_system *sys, int k);

/* Runs the system once, with the loop, power bonds, instability checks,
 * verdicts and HDF5 output of hymo_cosim_run.  ref (may be NULL): a
 * reference with the same per-step dimensions. */
hymo_status hymo_cosim_system_run(hymo_cosim_system *sys, const hymo_reference *ref, const char *out_path,
                                  hymo_cosim_summary *summary, hymo_error *err);
/* Prints the summary of a system run to out: the system (name, file,
 * FMUs, connections, power bonds), the master settings, each subsystem's
 * FMU, stage and order, then the results as hymo_cosim_summary_print. */
void hymo_cosim_system_summary_print(FILE *out, const hymo_cosim_system *sys, const hymo_cosim_summary *s);
/* Frees the system: its master, its subsystems (the FMU instances) and
 * everything it owns; NULL is a no-op. */
void hymo_cosim_system_free(hymo_cosim_system *sys);

/* ---- FMU export: the entries of one part's FMU as texts ----
 *
 * What `hymo fmu MODEL.yaml --part mechanics|circuit:NAME|whole [options]`
 * puts in its archive, for a caller that writes the zip itself: texts[k]
 * is the entry named hymo_fmu_text_name(k) (k < HYMO_FMU_TEXTS:
 * "modelDescription.xml", "resources/model.yaml", "resources/options.txt"),
 * malloc'd (hymo_fmu_texts_free); binary_name (cap bytes, may be NULL)
 * gets the entry of the FMU binary, "binaries/linux64/IDENTIFIER.so",
 * which is the FMU binary libhymo_fmu.so under that name.  opts: n_opts
 * strings, "--part" "mechanics" "--H" "2e-3" ... as the command line of
 * `hymo fmu` without -o (--part required; --part ssp is refused: an SSP
 * holds several FMUs).  Errors as `hymo fmu` (HYMO_ERR_ARGUMENT naming the
 * option, the model's errors); every texts[k] is NULL then. */
#define HYMO_FMU_TEXTS 3
hymo_status hymo_fmu_export_texts(const char *model_path, int n_opts, const char *const *opts,
                                  char *texts[HYMO_FMU_TEXTS], char *binary_name, size_t cap, hymo_error *err);
/* Name of entry k of hymo_fmu_export_texts; NULL for k out of range. */
const char *hymo_fmu_text_name(int k);
/* Frees texts[0 .. HYMO_FMU_TEXTS - 1] and sets them NULL. */
void hymo_fmu_texts_free(char *texts[HYMO_FMU_TEXTS]);

#ifdef __cplusplus
}
#endif
#endif
