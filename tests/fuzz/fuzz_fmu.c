/* libFuzzer target: FMU archives (src/fmi/fmu_import.c) up to the point
 * where the binary would be loaded: the input is the .fmu file, unzipped
 * into a fresh directory (libzip: entry names, directories, extraction),
 * its modelDescription.xml parsed (expat: attributes, variables, types,
 * causalities) and the variable tables built, as hymo_fmu_subsystem_create
 * does before dlopen.  The import's static functions are reached by
 * including its source; this file then stands for fmu_import.c in the
 * link. */
#include "fuzz_common.h"

#include "fmu_import.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024];
    if (fz_write("in.fmu", data, size, path, sizeof path) != 0) return 0;
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    fmu_impl *fi = calloc(1, sizeof *fi);
    if (!sub || !fi) abort();
    sub->ops = &fmu_ops;
    sub->impl = fi;
    snprintf(fi->path, sizeof fi->path, "%s", path);
    snprintf(fi->dir, sizeof fi->dir, "%s/fmu-XXXXXX", fz_dir());
    if (!mkdtemp(fi->dir)) abort();
    fi->dir_made = 1;
    hymo_error err;
    if (unzip(fi, &err) == HYMO_OK && parse_description(fi, &err) == HYMO_OK) build_tables(fi, sub, &err);
    fmu_destroy(sub);
    return 0;
}
