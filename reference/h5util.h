/* Internal helpers shared by the HDF5 writer and reader, and by the other
 * writers of files (the sweep's tables, src/cli/sweep.c). */
#ifndef HYMO_H5UTIL_H
#define HYMO_H5UTIL_H

#include <stddef.h>

#define HYMO_H5_DETAIL_MAX 160

/* Copies the innermost message of the current HDF5 error stack into
 * detail (empty if none) and clears the stack. Call right after the
 * failing HDF5 call: any later HDF5 call clears the stack. */
void hymo_h5_take_error(char detail[HYMO_H5_DETAIL_MAX]);

/* Sets the writer's file driver on fapl (reference/h5vfd.c): POSIX I/O
 * whose first failed write stores its errno in io->failed and makes every
 * later write of that file a no-op, so the file can still be closed (HDF5
 * 1.10 crashes at exit after a failed H5Fclose).  With io->quiet set (the
 * writer sets it right before H5Fclose) no failure is returned to HDF5,
 * only recorded.  Returns 0, or -1 on an HDF5 error.  hid_t is int64_t in
 * HDF5 >= 1.10. */
#include <stdint.h>
typedef struct {
    int failed; /* errno of the first failed write, truncate or close; 0 if none */
    int quiet;
} hymo_h5_io;
int hymo_h5_set_writer_driver(int64_t fapl, hymo_h5_io *io);

/* Creates the empty file "PATH.XXXXXX.partial" exclusively (O_EXCL, mode
 * 0666 before the umask) in the directory of PATH, XXXXXX from the clock,
 * the process id and a counter, and stores its name in tmp (cap bytes):
 * a name no other writer of PATH uses.  The reference writer's temporary
 * files and the sweep's tables are written under such names and renamed
 * to PATH when complete.  Returns 0, or an errno (ENAMETOOLONG when the
 * name does not fit). */
int hymo_partial_create(const char *path, char *tmp, size_t cap);

/* HDF5's Fletcher-32 checksum of n bytes (the one its Fletcher32 filter
 * stores after every chunk): the sums of the big-endian 16-bit words,
 * folded to 16 bits after every 360 words, an odd last byte as the high
 * byte of a word, and a last fold; computed eight words at a time (SSE2
 * where the compiler targets it).  Equal to HDF5's own
 * H5_checksum_fletcher32 for every input (tests/reference/test_fletcher.c). */
uint32_t hymo_fletcher32(const void *data, size_t n);

#endif
