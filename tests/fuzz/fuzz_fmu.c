/* libFuzzer target: FMU archives (src/fmi/fmu_import.c) up to the point
 * where the binary would be loaded, as hymo_fmu_subsystem_create does
 * before dlopen.  Two kinds of input:
 * - a zip archive (starts with "PK"): the .fmu file, unzipped into a fresh
 *   directory (libzip: entry names, directories, extraction), then its
 *   modelDescription.xml;
 * - anything else: modelDescription.xml itself, written into a fresh
 *   directory as unzip would (libzip's CRC check stops most changes to a
 *   file inside an archive before the XML is read).
 * Then the XML is parsed (expat: attributes, variables, types,
 * causalities) and the variable tables built.  The import's static
 * functions are reached by including its source; this file then stands
 * for fmu_import.c in the link. */
#include "fuzz_common.h"

#include "fmu_import.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024];
    const int archive = size >= 2 && data[0] == 'P' && data[1] == 'K';
    if (archive && fz_write("in.fmu", data, size, path, sizeof path) != 0) return 0;
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    fmu_impl *fi = calloc(1, sizeof *fi);
    if (!sub || !fi) abort();
    sub->ops = &fmu_ops;
    sub->impl = fi;
    snprintf(fi->path, sizeof fi->path, "%s", archive ? path : "in.fmu");
    snprintf(fi->dir, sizeof fi->dir, "%s/fmu-XXXXXX", fz_dir());
    if (!mkdtemp(fi->dir)) abort();
    fi->dir_made = 1;
    hymo_error err;
    hymo_status st = HYMO_OK;
    if (archive) {
        st = unzip(fi, &err);
    } else {
        char xml[PATH_MAX + 32];
        snprintf(xml, sizeof xml, "%s/modelDescription.xml", fi->dir);
        FILE *f = fopen(xml, "wb");
        if (!f || (size && fwrite(data, 1, size, f) != size)) abort();
        fclose(f);
    }
    if (st == HYMO_OK && parse_description(fi, &err) == HYMO_OK) build_tables(fi, sub, &err);
    fmu_destroy(sub);
    return 0;
}
