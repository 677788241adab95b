/* SSP 1.0 archives of FMUs (docs/cosimulation.md "SSP files"): the reader
 * turns an archive's SystemStructure.ssd into the equivalent co-simulation
 * system file (YAML, docs/cosimulation.md "System files") over the FMUs it
 * extracts, which src/cosim/cosim_system.c then loads. */
#ifndef HYMO_SSP_H
#define HYMO_SSP_H

#include <stddef.h>

#include "hymo/error.h"

/* The annotation type of hymo's co-simulation settings in an SSD. */
#define HYMO_SSP_ANNOTATION "de.hymo.cosim"
/* The namespace of its element (hymo:CoSimulation, hymo:Component). */
#define HYMO_SSP_NAMESPACE "https://hymo.de/ssp/cosim/1.0"
/* The SSD in an archive. */
#define HYMO_SSP_SSD "SystemStructure.ssd"

/* 1 when path ends in ".ssp" or is a zip archive holding SystemStructure.ssd. */
int hymo_ssp_file(const char *path);

/* A read archive.  yaml: the system file (FMU and model paths relative to
 * dir, the fresh temporary directory holding the files it extracted); ssd:
 * the SSD's text; line[i]: the SSD line of the element YAML line i + 1
 * stands for, label[i] its name (e.g. "ssd:Connection[2]"). */
typedef struct {
    char dir[4096];
    char *yaml, *ssd;
    int n_lines;
    int *line;
    char (*label)[96];
} hymo_ssp;

/* Reads the archive at path into ssp (free with hymo_ssp_free, which also
 * removes ssp->dir).  Errors are one line naming the archive, the file in
 * it and the element or attribute. */
hymo_status hymo_ssp_read(const char *path, hymo_ssp *ssp, hymo_error *err);

/* Rewrites err->message of an error about the system file at yaml_origin
 * ("ORIGIN:LINE: ...") into one about the SSD element at that line, and
 * every path below ssp->dir into "ARCHIVE:PATH". */
void hymo_ssp_error_message(const hymo_ssp *ssp, const char *archive, const char *yaml_origin, hymo_error *err);

/* path (below ssp->dir) as "ARCHIVE:REST" into out; other paths copied. */
void hymo_ssp_archive_path(const hymo_ssp *ssp, const char *archive, const char *path, char *out, size_t cap);

void hymo_ssp_free(hymo_ssp *ssp);

#endif
