/* hymo — the HDF5 file driver of the reference writer: POSIX pread/pwrite
 * like HDF5's "sec2" driver, plus one thing sec2 lacks: after the first
 * failed write or truncate (disk full, file-size limit, I/O error) the file
 * is "failed": the error is reported once (errno text on HDF5's error
 * stack, errno in io->failed) and every later write and truncate is
 * dropped and reported as done.  While the writer closes the file
 * (io->quiet), even the first failure is only recorded, not returned.
 *
 * Why: with sec2, HDF5 1.10 cannot close a file whose writes fail.
 * H5Fclose fails, but the file's id stays registered while the file
 * structure has been freed, and HDF5's shutdown at exit (H5_term_library ->
 * H5F__close_cb) then dereferences it: a segfault after the correct error
 * message.  With this driver the close of a failed file succeeds (the
 * dropped writes only concern a file the writer deletes), every id is
 * released, and the process exits cleanly.  The writer checks io->failed
 * after the close and never renames a failed file to its final name.
 *
 * Files written with it are ordinary HDF5 files (no driver info in the
 * superblock); readers use the default driver. */
#define _POSIX_C_SOURCE 200809L

#include "h5util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

/* The H5FD_class_t layout below is the one of HDF5 1.10 and 1.12; later
 * versions changed it (a version field, new callbacks): there the writer
 * uses the default driver (and inherits its behaviour on write failures). */
#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR <= 12
#define HYMO_HAVE_VFD 1
#else
#define HYMO_HAVE_VFD 0
#endif

#if HYMO_HAVE_VFD

typedef struct {
    hymo_h5_io *io; /* the writer's status (may be NULL) */
} vfd_info;

typedef struct {
    H5FD_t pub; /* must be first */
    int fd;
    haddr_t eoa, eof;
    int failed; /* errno of the first failed write/truncate, 0 if none */
    vfd_info info;
    dev_t dev;
    ino_t ino;
} vfd_file;

static hid_t vfd_id = -1;

static void push(const char *func, int line, hid_t min, const char *what, int e)
{
    H5Epush2(H5E_DEFAULT, __FILE__, func, (unsigned)line, H5E_ERR_CLS, H5E_VFL, min, "%s: %s",
             what, strerror(e));
}

static void *vfd_fapl_get(H5FD_t *file)
{
    vfd_info *copy = malloc(sizeof *copy);
    if (copy) *copy = ((vfd_file *)(void *)file)->info;
    return copy;
}

static void *vfd_fapl_copy(const void *info)
{
    vfd_info *copy = malloc(sizeof *copy);
    if (copy && info) *copy = *(const vfd_info *)info;
    return copy;
}

static herr_t vfd_fapl_free(void *info)
{
    free(info);
    return 0;
}

static H5FD_t *vfd_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)maxaddr;
    int o = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
    if (flags & H5F_ACC_TRUNC) o |= O_TRUNC;
    if (flags & H5F_ACC_CREAT) o |= O_CREAT;
    if (flags & H5F_ACC_EXCL) o |= O_EXCL;
    int fd = open(name, o, 0666);
    if (fd < 0) {
        push(__func__, __LINE__, H5E_CANTOPENFILE, name, errno);
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        push(__func__, __LINE__, H5E_CANTOPENFILE, name, errno);
        close(fd);
        return NULL;
    }
    vfd_file *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        return NULL;
    }
    f->fd = fd;
    f->eof = (haddr_t)sb.st_size;
    f->dev = sb.st_dev;
    f->ino = sb.st_ino;
    const vfd_info *info = H5Pget_driver_info(fapl);
    if (info) f->info = *info;
    return &f->pub;
}

static herr_t vfd_close(H5FD_t *file)
{
    vfd_file *f = (vfd_file *)(void *)file;
    int rc = close(f->fd);
    int e = errno;
    if (rc != 0 && !f->failed) {
        f->failed = e;
        if (f->info.io && !f->info.io->failed) f->info.io->failed = e;
    }
    free(f);
    return 0; /* the failure is in *info.failed; a failing close must not
                 leave HDF5 with a half-closed file */
}

static int vfd_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const vfd_file *x = (const vfd_file *)(const void *)a, *y = (const vfd_file *)(const void *)b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return 0;
}

static herr_t vfd_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    /* SUPPORTS_SWMR_IO: every write goes straight to the file with
     * pwrite(2), in the order HDF5 issues them, nothing is cached or
     * reordered here, so HDF5's SWMR ordering of metadata writes holds
     * (the same I/O as the sec2 driver, which sets this flag too). */
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_SUPPORTS_SWMR_IO;
    return 0;
}

static haddr_t vfd_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const vfd_file *)(const void *)file)->eoa;
}

static herr_t vfd_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    ((vfd_file *)(void *)file)->eoa = addr;
    return 0;
}

static haddr_t vfd_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const vfd_file *)(const void *)file)->eof;
}

static herr_t vfd_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = &((vfd_file *)(void *)file)->fd;
    return 0;
}

/* Records the first failure (errno e) of f and pushes it on HDF5's stack;
 * -1, or 0 while the writer closes the file (io->quiet): a failure inside
 * H5Fclose would leave HDF5 with a half-closed file. */
static herr_t failure(vfd_file *f, const char *func, int line, hid_t min, const char *what, int e)
{
    if (!f->failed) {
        f->failed = e ? e : EIO;
        if (f->info.io && !f->info.io->failed) f->info.io->failed = f->failed;
    }
    if (f->info.io && f->info.io->quiet) return 0;
    push(func, line, min, what, e ? e : EIO);
    return -1;
}

static herr_t vfd_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                       void *buf)
{
    (void)type;
    (void)dxpl;
    vfd_file *f = (vfd_file *)(void *)file;
    if (addr == HADDR_UNDEF || addr + size < addr || addr + size > f->eoa) {
        push(__func__, __LINE__, H5E_OVERFLOW, "read beyond the end of the allocated space", EINVAL);
        return -1;
    }
    unsigned char *p = buf;
    off_t off = (off_t)addr;
    while (size > 0) {
        ssize_t n = pread(f->fd, p, size, off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            push(__func__, __LINE__, H5E_READERROR, "read failed", errno);
            return -1;
        }
        if (n == 0) { /* beyond the end of the file: zeros, like sec2 */
            memset(p, 0, size);
            break;
        }
        p += n;
        off += n;
        size -= (size_t)n;
    }
    return 0;
}

static herr_t vfd_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                        const void *buf)
{
    (void)type;
    (void)dxpl;
    vfd_file *f = (vfd_file *)(void *)file;
    if (f->failed) return 0; /* a failed file is deleted: drop the write */
    if (addr == HADDR_UNDEF || addr + size < addr || addr + size > f->eoa) {
        return failure(f, __func__, __LINE__, H5E_OVERFLOW,
                       "write beyond the end of the allocated space", EINVAL);
    }
    const unsigned char *p = buf;
    off_t off = (off_t)addr;
    const haddr_t end = addr + size;
    while (size > 0) {
        ssize_t n = pwrite(f->fd, p, size, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return failure(f, __func__, __LINE__, H5E_WRITEERROR, "write failed", n < 0 ? errno : ENOSPC);
        p += n;
        off += n;
        size -= (size_t)n;
    }
    if (end > f->eof) f->eof = end;
    return 0;
}

static herr_t vfd_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl;
    (void)closing;
    vfd_file *f = (vfd_file *)(void *)file;
    if (f->eoa == f->eof) return 0;
    if (!f->failed && ftruncate(f->fd, (off_t)f->eoa) != 0) {
        return failure(f, __func__, __LINE__, H5E_SEEKERROR, "cannot set the file size", errno);
    }
    f->eof = f->eoa;
    return 0;
}

static herr_t vfd_lock(H5FD_t *file, hbool_t rw)
{
    (void)file; /* the writer's file has a name of its own (O_EXCL) */
    (void)rw;
    return 0;
}

static herr_t vfd_unlock(H5FD_t *file)
{
    (void)file;
    return 0;
}

static herr_t vfd_terminate(void)
{
    vfd_id = -1;
    return 0;
}

static const H5FD_class_t vfd_class = {
    .name = "hymo_posix",
    .maxaddr = (haddr_t)1 << 62,
    .fc_degree = H5F_CLOSE_WEAK,
    .terminate = vfd_terminate,
    .fapl_size = sizeof(vfd_info),
    .fapl_get = vfd_fapl_get,
    .fapl_copy = vfd_fapl_copy,
    .fapl_free = vfd_fapl_free,
    .open = vfd_open,
    .close = vfd_close,
    .cmp = vfd_cmp,
    .query = vfd_query,
    .get_eoa = vfd_get_eoa,
    .set_eoa = vfd_set_eoa,
    .get_eof = vfd_get_eof,
    .get_handle = vfd_get_handle,
    .read = vfd_read,
    .write = vfd_write,
    .truncate = vfd_truncate,
    .lock = vfd_lock,
    .unlock = vfd_unlock,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

int hymo_h5_set_writer_driver(hid_t fapl, hymo_h5_io *io)
{
    if (vfd_id < 0 || H5Iis_valid(vfd_id) <= 0) {
        vfd_id = H5FDregister(&vfd_class);
        if (vfd_id < 0) return -1;
    }
    vfd_info info = {io};
    return H5Pset_driver(fapl, vfd_id, &info) < 0 ? -1 : 0;
}

#else

int hymo_h5_set_writer_driver(hid_t fapl, hymo_h5_io *io)
{
    (void)fapl;
    (void)io;
    return 0; /* the default driver */
}

#endif
