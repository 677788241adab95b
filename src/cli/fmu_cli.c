/* `hymo fmu MODEL.yaml --part mechanics|circuit:NAME|whole [options] -o
 * OUT.fmu` (docs/fmi.md): writes an FMI 2.0 co-simulation FMU, a zip of
 * modelDescription.xml, binaries/linux64/<modelIdentifier>.so (a copy of
 * the FMU binary libhymo_fmu.so) and resources/model.yaml +
 * resources/options.txt; `--part ssp -o OUT.ssp`: an SSP 1.0 archive of the
 * split's FMUs (src/fmu/fmu_ssp.c).  Linked into the hymo executable only
 * (libzip). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fmu_internal.h"
#include "hymo/reference.h"
#include "ssp.h"
#include "zipxml.h"

#ifndef HYMO_FMU_LIBDIR_REL
#define HYMO_FMU_LIBDIR_REL "lib/hymo"
#endif
#define HYMO_FMU_BINARY_NAME "libhymo_fmu.so"

static void usage_fmu(FILE *out)
{
    fputs("usage: hymo fmu MODEL.yaml --part mechanics|circuit:NAME|whole [options] -o OUT.fmu\n"
          "       hymo fmu MODEL.yaml --part ssp [co-simulation options] -o OUT.ssp\n"
          "\n"
          "Writes an FMI 2.0 co-simulation FMU of one part of the model (docs/fmi.md):\n"
          "  mechanics       the mechanical subsystem of split mode (inputs: cylinder pressures\n"
          "                  or forces; outputs: cylinder lengths, rates, accelerations)\n"
          "  circuit:NAME    one hydraulic circuit of split mode (NAME: circuit1, the full name\n"
          "                  as hymo cosim prints it, or a cylinder of the circuit; all with the\n"
          "                  interface model)\n"
          "  whole           the monolithic engine (inputs: the signals of valve references,\n"
          "                  pump speeds and set flows;\n"
          "                  outputs: joints, cylinders, pressures, spools)\n"
          "  ssp             an SSP 1.0 archive of the mechanics and every circuit as FMUs,\n"
          "                  wired in SystemStructure.ssd with H, --scheme, --extrapolation,\n"
          "                  t_end and the model (docs/cosimulation.md, \"SSP files\";\n"
          "                  hymo cosim OUT.ssp runs it; no --set)\n"
          "\n"
          "options stored in the FMU (resources/options.txt):\n"
          "  mechanics, circuit: the co-simulation options of hymo cosim: --coupling,\n"
          "    --extrapolation (interface-model changes the variables), --hyd-integrator,\n"
          "    --mech-integrator, --formulation, --jacobian, --H, --hm, --hh, ...\n"
          "  whole: the options of hymo run: --integrator trapezoidal|ida, --dt, --formulation,\n"
          "    --jacobian, --linear-solver, --newton-test, --rtol, --atol, --alpha, --max-iter\n"
          "  --set PATH=VALUE       override one value of the model file (repeatable)\n"
          "  -o, --output OUT.fmu   the FMU (written atomically)\n"
          "  -q, --quiet            no summary on stdout\n"
          "\n"
          "The FMU binary is libhymo_fmu.so next to the hymo executable (build tree) or in\n"
          "PREFIX/" HYMO_FMU_LIBDIR_REL " (installed); HYMO_FMU_BINARY overrides.\n"
          "exit status: 0 written, 2 bad input\n",
          out);
}

static int fail(const char *msg)
{
    fprintf(stderr, "hymo: error: %s\n", msg);
    return EXIT_BAD_INPUT;
}

/* The FMU binary: $HYMO_FMU_BINARY, next to the executable, or in the
 * install prefix; 0 and path set, or -1. */
static int find_binary(char *path, size_t cap)
{
    const char *env = getenv("HYMO_FMU_BINARY");
    if (env && env[0]) {
        snprintf(path, cap, "%s", env);
        return access(path, R_OK) == 0 ? 0 : -1;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    const char *dir = dirname(exe);
    snprintf(path, cap, "%s/%s", dir, HYMO_FMU_BINARY_NAME);
    if (access(path, R_OK) == 0) return 0;
    snprintf(path, cap, "%s/../%s/%s", dir, HYMO_FMU_LIBDIR_REL, HYMO_FMU_BINARY_NAME);
    if (access(path, R_OK) == 0) return 0;
    return -1;
}

static int add_buffer(zip_t *z, const char *name, const char *data, char *msg, size_t len)
{
    zip_source_t *src = zip_source_buffer(z, data, strlen(data), 0);
    if (!src || zip_file_add(z, name, src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) < 0) {
        if (src) zip_source_free(src);
        snprintf(msg, len, "zip: cannot add %s: %s", name, zip_strerror(z));
        return -1;
    }
    return 0;
}

/* Writes a zip archive atomically (a temporary file in out_path's directory,
 * renamed): n_text entries from strings, n_files from files.  0, or -1 with
 * msg set. */
static int write_zip(const char *out_path, int n_text, const char *const *text_names, const char *const *texts,
                     int n_files, const char *const *file_names, const char *const *files, char *msg, size_t len)
{
    if (hymo_zipxml_load(msg, len) != 0) return -1;
    const size_t tl = strlen(out_path) + 32;
    char *tmp = malloc(tl);
    if (!tmp) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    const int te = hymo_cli_temp_create(out_path, tmp, tl); /* PATH.XXXXXX.partial, exclusively */
    if (te != 0) {
        snprintf(msg, len, "%s: cannot write: %s", out_path, strerror(te));
        free(tmp);
        return -1;
    }
    int zerr = 0, r = -1;
    zip_t *z = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!z) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        snprintf(msg, len, "%s: cannot write: %s", out_path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        goto done;
    }
    for (int k = 0; k < n_text; ++k)
        if (add_buffer(z, text_names[k], texts[k], msg, len)) goto done;
    for (int k = 0; k < n_files; ++k) {
        zip_source_t *src = zip_source_file(z, files[k], 0, -1);
        if (!src || zip_file_add(z, file_names[k], src, ZIP_FL_OVERWRITE) < 0) {
            if (src) zip_source_free(src);
            snprintf(msg, len, "zip: cannot add %.300s: %s", files[k], zip_strerror(z));
            goto done;
        }
    }
    if (zip_close(z) < 0) {
        snprintf(msg, len, "%s: cannot write: %s", out_path, zip_strerror(z));
        goto done;
    }
    z = NULL;
    if (rename(tmp, out_path)) {
        snprintf(msg, len, "%s: cannot write: %s", out_path, strerror(errno));
        goto done;
    }
    r = 0;
done:
    if (z) zip_discard(z);
    if (r) remove(tmp);
    free(tmp);
    return r;
}

/* The FMU of part at out_path (bin: the FMU binary).  0, or -1 with msg set. */
static int write_fmu(const hymo_fmu_part *part, const char *bin, const char *out_path, char *msg, size_t len)
{
    char *xml = hymo_fmu_model_description(part);
    if (!xml) {
        snprintf(msg, len, "out of memory (modelDescription.xml)");
        return -1;
    }
    char so_name[128];
    snprintf(so_name, sizeof so_name, "binaries/linux64/%s.so", part->identifier);
    const char *names[3] = {"modelDescription.xml", "resources/" HYMO_FMU_MODEL_FILE, "resources/" HYMO_FMU_OPTIONS_FILE},
               *texts[3] = {xml, part->model->source_text, part->options_text}, *so[1] = {so_name}, *bins[1] = {bin};
    const int r = write_zip(out_path, 3, names, texts, 1, so, bins, msg, len);
    free(xml);
    return r;
}

/* `--part ssp`: the archive of hymo_fmu_ssp_create's FMUs, its
 * SystemStructure.ssd and the model file.  0, or -1 with msg set. */
static int write_ssp(const char *model_path, int n_opts, char **opts, const char *bin, const char *out_path, int quiet,
                     char *msg, size_t len)
{
    hymo_fmu_ssp *s = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_fmu_ssp_create(model_path, n_opts, opts, &s, &err) != HYMO_OK) {
        snprintf(msg, len, "%s", err.message);
        return -1;
    }
    char dir[4096], files[HYMO_FMU_SSP_MAX][4200], entries[HYMO_FMU_SSP_MAX][96];
    const char *file_p[HYMO_FMU_SSP_MAX], *entry_p[HYMO_FMU_SSP_MAX];
    int r = -1, made = 0;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    snprintf(dir, sizeof dir, "%s/hymo-ssp-export-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        snprintf(msg, len, "cannot create a temporary directory in %s: %s", tmp, strerror(errno));
        hymo_fmu_ssp_free(s);
        return -1;
    }
    for (; made < s->n; ++made) {
        snprintf(files[made], sizeof files[made], "%s/%s.fmu", dir, s->names[made]);
        snprintf(entries[made], sizeof entries[made], "resources/%s.fmu", s->names[made]);
        file_p[made] = files[made], entry_p[made] = entries[made];
        if (write_fmu(s->parts[made], bin, files[made], msg, len)) goto done;
    }
    const char *tnames[2] = {HYMO_SSP_SSD, "resources/" HYMO_FMU_MODEL_FILE},
               *texts[2] = {s->ssd, s->parts[0]->model->source_text};
    if (write_zip(out_path, 2, tnames, texts, s->n, entry_p, file_p, msg, len)) goto done;
    if (!quiet) {
        printf("ssp          %s\ncomponents  ", s->parts[0]->model->name);
        for (int k = 0; k < s->n; ++k) printf(" %s", s->names[k]);
        printf("\nsettings     H = %g s, t_end = %g s, scheme %s, extrapolation %d\noutput       %s\n", s->H, s->t_end,
               s->ordered ? "gauss-seidel" : "jacobi", s->extrapolation, out_path);
    }
    r = 0;
done:
    for (int k = 0; k < made + (made < s->n); ++k) remove(files[k]);
    rmdir(dir);
    hymo_fmu_ssp_free(s);
    return r;
}

int hymo_cli_fmu(int argc, char **argv)
{
    const char *model_path = NULL, *out_path = NULL;
    int quiet = 0;
    char msg[HYMO_ERROR_MSG_MAX + 512];
    /* the options go on to hymo_fmu_part_create as name, value pairs;
     * --name=value is split into names[] (getopt_long's form, as every
     * command accepts it) */
    char **opts = calloc(2 * (size_t)argc + 1, sizeof *opts), **names = calloc((size_t)argc + 1, sizeof *names);
    int n_opts = 0, n_names = 0;
    if (!opts || !names) {
        free(opts);
        free(names);
        return fail("out of memory");
    }
    int status = EXIT_BAD_INPUT;
    hymo_fmu_part *part = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_fmu(stdout);
            status = 0;
            goto done;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (!strcmp(a, "--")) { /* ends the options */
            for (++i; i < argc && !model_path; ++i) model_path = argv[i];
            if (i < argc) {
                snprintf(msg, sizeof msg, "unexpected argument '%s' (see hymo fmu --help)", argv[i]);
                fail(msg);
                goto done;
            }
            break;
        }
        const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        if (eq) {
            char *name = strndup(a, (size_t)(eq - a));
            if (!name) {
                fail("out of memory");
                goto done;
            }
            names[n_names++] = name;
            if (!strcmp(name, "--output"))
                out_path = eq + 1;
            else {
                opts[n_opts++] = name;
                opts[n_opts++] = (char *)(eq + 1);
            }
            continue;
        }
        if (a[0] == '-' && a[1]) {
            if (i + 1 >= argc) {
                snprintf(msg, sizeof msg, "%s needs a value (see hymo fmu --help)", a);
                fail(msg);
                goto done;
            }
            if (!strcmp(a, "-o") || !strcmp(a, "--output"))
                out_path = argv[++i];
            else {
                opts[n_opts++] = argv[i];
                opts[n_opts++] = argv[++i];
            }
            continue;
        }
        if (model_path) {
            snprintf(msg, sizeof msg, "unexpected argument '%s' (see hymo fmu --help)", a);
            fail(msg);
            goto done;
        }
        model_path = a;
    }
    if (!model_path) {
        fail("fmu: missing MODEL file (see hymo fmu --help)");
        goto done;
    }
    if (!out_path) {
        fail("fmu: missing -o OUT.fmu (see hymo fmu --help)");
        goto done;
    }
    hymo_error err;
    hymo_error_clear(&err);
    char bin[4200];
    if (find_binary(bin, sizeof bin)) {
        fail("the FMU binary libhymo_fmu.so was not found next to hymo or in PREFIX/" HYMO_FMU_LIBDIR_REL
             " (build the hymo_fmu target, or set HYMO_FMU_BINARY)");
        goto done;
    }
    /* the FMU is written from the model file and the FMU binary */
    const char *inputs[2] = {model_path, bin};
    if (hymo_cli_outputs_check(NULL, &out_path, 1, inputs, 2) >= 0) goto done;
    for (int i = 0; i < n_opts; i += 2)
        if (!strcmp(opts[i], "--part") && !strcmp(opts[i + 1], "ssp")) {
            if (write_ssp(model_path, n_opts, opts, bin, out_path, quiet, msg, sizeof msg)) {
                fail(msg);
                goto done;
            }
            status = 0;
            goto done;
        }
    if (hymo_fmu_part_create(model_path, n_opts, opts, &part, &err) != HYMO_OK) {
        fail(err.message);
        goto done;
    }
    if (write_fmu(part, bin, out_path, msg, sizeof msg)) {
        fail(msg);
        goto done;
    }
    if (!quiet) {
        int nl = part->n_vars - part->n_inputs - part->n_outputs;
        printf("fmu          %s\npart         %s\nidentifier   %s\nguid         %s\n"
               "variables    %d inputs, %d outputs, %d locals\noutput       %s\n",
               part->model->name, part->part_name, part->identifier, part->guid, part->n_inputs, part->n_outputs, nl,
               out_path);
    }
    status = 0;
done:
    hymo_fmu_part_free(part);
    for (int k = 0; k < n_names; ++k) free(names[k]);
    free(names);
    free(opts);
    return status;
}
