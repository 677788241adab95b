/* hymo — results of other tools (CSV) read as a run for `hymo compare`
 * and hymo_compare_components (src/model/foreign.c, docs/compare.md
 * "Results of other tools (CSV)"). */
#ifndef HYMO_FOREIGN_H
#define HYMO_FOREIGN_H

#include "hymo/reference.h"

#ifdef __cplusplus
extern "C" {
#ifdef __cplusplus
}
#endif
#endif

/* Reads RUN.csv (and the optional map file, NULL if none) into *out, a
 * hymo_reference with ref's dimensions whose signals hold the CSV's columns
 * (NaN where the CSV has no column; a signal without any column is NULL),
 * and *present (one byte per component, hymo_compare_component_offset
 * numbering; free()).  Comment lines `# model: NAME`, `# model_sha256: HEX`
 * and `# model_physics_sha256: HEX` (anywhere among the comments) fill
 * model_name ("(CSV)" without one), model_sha256 and model_physics_sha256
 * ("" without one).  Errors name the file, the line and the column:
 * HYMO_ERR_IO, HYMO_ERR_PARSE, HYMO_ERR_NOMEM. */
hymo_status hymo_foreign_read_csv(const char *path, const char *map_path, const hymo_reference *ref,
                                  hymo_reference **out, unsigned char **present, hymo_error *err);

/* Component index of "SIGNAL[NAME]" in ref (see above); -1 if it names
 * none.  *signal and *column (may be NULL) get HYMO_CMP_* and the column. */
int hymo_foreign_component(const hymo_reference *ref, const char *name, int *signal, int *column);

#ifdef __cplusplus
}
#endif
#endif
