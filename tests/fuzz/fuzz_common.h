/* Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.c): a private
 * scratch directory (in /dev/shm when writable, else TMPDIR or /tmp; the
 * environment variable HYMO_FUZZ_TMP overrides) removed at exit, the input
 * written to a file in it, and the input as a NUL-terminated string.  Each
 * target is one translation unit: header-only, static functions. */
#ifndef HYMO_FUZZ_COMMON_H
#define HYMO_FUZZ_COMMON_H

#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char fz_dir_path[512];

static inline int fz_rm(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static inline void fz_cleanup(void)
{
    if (fz_dir_path[0]) nftw(fz_dir_path, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* The scratch directory (created on first use; exits on failure). */
static inline const char *fz_dir(void)
{
    if (fz_dir_path[0]) return fz_dir_path;
    const char *base = getenv("HYMO_FUZZ_TMP");
    if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    snprintf(fz_dir_path, sizeof fz_dir_path, "%s/hymo-fuzz-XXXXXX", base);
    if (!mkdtemp(fz_dir_path)) {
        perror("hymo fuzz: scratch directory");
        exit(2);
    }
    atexit(fz_cleanup);
    return fz_dir_path;
}

/* Writes data to fz_dir()/name; its path in path[cap].  0 on success. */
static inline int fz_write(const char *name, const uint8_t *data, size_t size, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", fz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const int bad = size && fwrite(data, 1, size, f) != size;
    return (fclose(f) != 0 || bad) ? -1 : 0;
}

/* data as a NUL-terminated string (an embedded NUL ends it); free(). */
static inline char *fz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
