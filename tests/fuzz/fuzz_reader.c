/* libFuzzer target: reference files.  The input is written to a file in
 * the scratch directory (tmpfs when available) and read by hymo's reader in
 * this process (hymo_ref_read), then checked (hymo_ref_validate) and its
 * summary printed, as `hymo info` does. */
#include "fuzz_common.h"

#include "hymo/reference.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024];
    if (!devnull && !(devnull = fopen("/dev/null", "w"))) abort();
    if (fz_write("ref.h5", data, size, path, sizeof path) != 0) return 0;
    hymo_reference *ref = NULL;
    hymo_error err;
    if (hymo_ref_read(path, &ref, &err) == HYMO_OK) {
        hymo_ref_validate(ref, path, &err);
        hymo_run_summary_print(devnull, &ref->summary);
    }
    hymo_ref_free(ref);
    return 0;
}
