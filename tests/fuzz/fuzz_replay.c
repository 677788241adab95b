/* A main() for the fuzz targets without libFuzzer (any compiler): runs
 * LLVMFuzzerTestOneInput once on every file named on the command line and
 * on every regular file of every directory named (sorted by name), after
 * LLVMFuzzerInitialize when the target has one.  Exit 0 when all ran (a
 * crash or sanitizer report ends the process); 2 when a path cannot be
 * read.  ctest runs it on tests/fuzz/regressions/TARGET (fuzz_regress_*). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) return -1;
    /* an exact-size copy, so that reads past the input are caught as under libFuzzer */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) return -1;
    memcpy(exact, buf, n);
    free(buf);
    printf("%s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int bad = 0, runs = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "fuzz_replay: no such file or directory: %s\n", argv[i]);
            bad = 1;
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            bad |= run_file(argv[i]) != 0;
            ++runs;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            bad = 1;
            continue;
        }
        char **names = NULL;
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char **nn = realloc(names, (size_t)(n + 1) * sizeof *names);
            if (!nn) return 2;
            names = nn;
            names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
            if (!names[n]) return 2;
            sprintf(names[n++], "%s/%s", argv[i], e->d_name);
        }
        closedir(d);
        qsort(names, (size_t)n, sizeof *names, by_name);
        for (int k = 0; k < n; ++k) {
            if (stat(names[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
                bad |= run_file(names[k]) != 0;
                ++runs;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("fuzz_replay: %d inputs run\n", runs);
    return bad ? 2 : 0;
}
