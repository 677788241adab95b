/* hymo — HDF5 reference trajectory writer (SPEC §8, docs/hdf5-format.md).
 *
 * The file is created under a temporary name unique to the writer,
 * "PATH.XXXXXX.partial" (created with O_EXCL in the directory of PATH), in
 * HDF5's latest file format (checksummed metadata); every dataset is 1-D
 * [N] or 2-D [N x cols], extendible along N, chunked, uncompressed (or
 * shuffled and deflated with hymo_ref_header.deflate_level > 0).  String
 * attributes are fixed-length, so they live in the (checksummed) object
 * headers, not in the global heap.
 *
 * After the open the file is in HDF5's single-writer/multiple-reader mode
 * (readers see a consistent file while rows are appended) and the writer
 * holds an advisory lock on it (readers tell a running file from a killed
 * one).  Rows are staged in a fixed buffer of one chunk of every dataset
 * (R rows, the same R for every dataset, allocated at open) and handed,
 * full, to the writer's thread (after its previous write), while a second
 * buffer fills; without the thread every write is on the caller's thread,
 * the buffer full.  So the memory the stages touch is the same in every
 * run, however far the thread lags:
 * every dataset is extended once, its chunks written whole (no chunk is
 * written twice; without deflate as stored, write_chunks), /time last, and
 * the file flushed, so a killed run leaves a readable ".partial" file with
 * complete = 0 that holds every row up to the last write.  close() writes
 * the last partial chunk, leaves SWMR mode (close and reopen), writes the
 * summary attributes, sets complete, closes and renames the file; after any
 * write failure it deletes the file instead (never a damaged file under
 * the final name). */
#define _GNU_SOURCE /* F_OFD_SETLK */
#define _POSIX_C_SOURCE 200809L

#include "h5util.h"
#include "hymo/reference.h"
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#ifndef HYMO_VERSION
#define HYMO_VERSION "unknown"
#endif

#define PARTIAL_SUFFIX ".partial"
#define CHUNK_ROWS_MAX 1024
#define CHUNK_ROWS_MIN 16
#define CHUNK_BYTES_TARGET (256 * 1024)
#define WRITER_MDC_BYTES (64 * 1024) /* the metadata cache: fixed size */
#define STAGE_ALIGN(n) (((n) + sizeof(double) - 1) / sizeof(double) * sizeof(double)) /* a block's bytes rounded up to whole doubles */

/* ------------------------------------------------------------------ */
/* Layout: the groups and datasets of hymo_ref_signals[] (signals.c)       */

struct hymo_ref_writer {
    hid_t file;
    hid_t groups[HYMO_GROUP_COUNT];
    hid_t ds[HYMO_SIGNAL_COUNT]; /* indexed like hymo_ref_signals[] */
    int cols[HYMO_SIGNAL_COUNT];
    hsize_t written;  /* rows in the file                                */
    int chunk_rows;   /* R: rows per chunk                               */
    int stage_rows;   /* S: rows of the staging buffer, R              */
    int buffered;     /* rows staged, 0 <= buffered < stage_rows         */
    unsigned char *stage[HYMO_SIGNAL_COUNT]; /* S x cols elements (NULL if cols 0) */
    unsigned char *stage_mem;
    int deflate_level; /* 0: no filters; 1..9: shuffle + deflate        */
    int direct;        /* chunks written as stored (write_chunks)        */
    unsigned char *chunk_buf; /* one stored chunk: R x widest row + checksum */
    int swmr;          /* 1 while the file is in SWMR-write mode         */
    int ds_closed;     /* the per-step datasets' handles are closed (after a reopen: opened by the next write) */
    int rows_ended;    /* hymo_ref_writer_end_rows: no more appends       */
    int lock_fd;       /* holds an OFD write lock on the temporary file  */
    hymo_status failed; /* first write failure; later appends return it   */
    hymo_h5_io io;      /* I/O failures seen by the file driver (h5vfd.c) */
    char first_error[HYMO_ERROR_MSG_MAX]; /* message of the first write failure */
    char *path;    /* final name */
    char *partial; /* PATH.XXXXXX.partial, created by this writer */
    /* further per-step datasets (hymo_ref_dims.series): handles, columns,
     * paths (for the reopen) and staging areas (stage_rows x cols) */
    int n_series;
    hid_t *series_ds;
    int *series_cols;
    char **series_path;
    double **series_stage;
    /* The writing thread (bg_main): append fills the stage above while the
     * thread writes the other one (bg_stage), handed over at a chunk
     * boundary; every HDF5 call of the writer happens on one thread at a
     * time (the functions other than append stop the thread first). */
    int bg;                                     /* the thread runs */
    pthread_t bg_thread;
    pthread_mutex_t bg_lock;
    pthread_cond_t bg_cond;
    int bg_busy;                                /* a stage is handed over, not yet written */
    int bg_quit;
    int bg_rows;                                /* its rows */
    hymo_status bg_st;                          /* the thread's first failure */
    hymo_error bg_err;
    unsigned char *bg_stage[HYMO_SIGNAL_COUNT]; /* the other stage */
    double **bg_series_stage;
    unsigned char *bg_stage_mem;
    hsize_t handed;                             /* rows handed over or written */
    /* the further datasets' rows computed by the thread that writes them
     * (hymo_ref_writer_set_derive): the function, its context, and per row
     * aux_bytes of its input besides the signals, staged like them */
    hymo_ref_derive_fn derive;
    void *derive_ctx;
    size_t aux_bytes;
    unsigned char *aux_stage, *bg_aux_stage;
};

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/* The writer's file access: no chunk cache (whole chunks are written) and
 * a small metadata cache of fixed size, so the memory of a run does not
 * grow with its length (the chunk indexes of a long run would otherwise
 * grow the adaptive cache towards its 32 MB default maximum; a write needs
 * only each dataset's header and the last block of its chunk index). */
static int writer_fapl(hid_t fapl, hymo_h5_io *io)
{
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    if (hymo_h5_set_writer_driver(fapl, io) != 0 || H5Pset_cache(fapl, 0, 0, 0, 0.75) < 0 ||
        H5Pget_mdc_config(fapl, &mdc) < 0) {
        return -1;
    }
    mdc.set_initial_size = 1;
    mdc.initial_size = WRITER_MDC_BYTES;
    mdc.min_size = WRITER_MDC_BYTES;
    mdc.max_size = WRITER_MDC_BYTES;
    mdc.incr_mode = H5C_incr__off;
    mdc.flash_incr_mode = H5C_flash_incr__off;
    mdc.decr_mode = H5C_decr__off;
    return H5Pset_mdc_config(fapl, &mdc) < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
                   H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0
               ? -1
               : 0;
}

/* Formats "<what> in '<file>': <innermost HDF5 message>". Must be called
 * right after the failing HDF5 call (any HDF5 call clears the stack). */
static hymo_status h5_fail(hymo_error *err, hymo_status code, const char *file, const char *fmt,
                           ...)
{
    char detail[HYMO_H5_DETAIL_MAX];
    hymo_h5_take_error(detail);
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (detail[0]) {
        return hymo_error_set(err, code, "%s in '%s': %s", what, file, detail);
    }
    return hymo_error_set(err, code, "%s in '%s'", what, file);
}

/* ------------------------------------------------------------------ */
/* Attributes                                                          */

/* Fixed-length, NUL-terminated UTF-8 string type of `size` bytes (>= 1). */
static hid_t fixed_str_type(size_t size)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, size > 0 ? size : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ||
        H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* Opens attribute `name` of obj for writing, creating it if absent. */
static hid_t attr_open_or_create(hid_t obj, const char *name, hid_t file_type, hid_t space)
{
    htri_t exists = H5Aexists(obj, name);
    if (exists < 0) return -1;
    if (exists > 0) {
        if (H5Adelete(obj, name) < 0) return -1;
    }
    return H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
}

static herr_t attr_write_scalar(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                                const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    if (space < 0) return -1;
    hid_t a = attr_open_or_create(obj, name, file_type, space);
    H5Sclose(space);
    if (a < 0) return -1;
    herr_t rc = H5Awrite(a, mem_type, value);
    if (H5Aclose(a) < 0) rc = -1;
    return rc;
}

static herr_t attr_double(hid_t obj, const char *name, double v)
{
    return attr_write_scalar(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

static herr_t attr_int(hid_t obj, const char *name, int v)
{
    return attr_write_scalar(obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, &v);
}

static herr_t attr_long(hid_t obj, const char *name, long v)
{
    long long ll = v;
    return attr_write_scalar(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &ll);
}

/* Scalar string: fixed length, strlen + 1 bytes (the NUL included). */
static herr_t attr_str(hid_t obj, const char *name, const char *value)
{
    const char *v = value ? value : "";
    hid_t t = fixed_str_type(strlen(v) + 1);
    if (t < 0) return -1;
    herr_t rc = attr_write_scalar(obj, name, t, t, v);
    H5Tclose(t);
    return rc;
}

static herr_t attr_str_array(hid_t obj, const char *name, const char *const *values, int n);

/* 1-D numeric array attribute of n values (n may be 0). */
static herr_t attr_num_array(hid_t obj, const char *name, hid_t file_type, hid_t mem_type, const void *values,
                             int n)
{
    hsize_t dim = (hsize_t)n;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    if (space < 0) return -1;
    hid_t a = attr_open_or_create(obj, name, file_type, space);
    H5Sclose(space);
    if (a < 0) return -1;
    herr_t rc = n > 0 ? H5Awrite(a, mem_type, values) : 0;
    if (H5Aclose(a) < 0) rc = -1;
    return rc;
}

/* Per-volume pressure ranges of the summary on /states. */
static herr_t attr_volume_ranges(hid_t obj, const hymo_run_summary *s)
{
    const int n = s->n_volume_ranges;
    double v[4][HYMO_SUMMARY_VOLUMES];
    int below[HYMO_SUMMARY_VOLUMES];
    const char *names[HYMO_SUMMARY_VOLUMES];
    char buf[HYMO_SUMMARY_VOLUMES][HYMO_REF_TEXT_MAX];
    for (int k = 0; k < n; ++k) {
        const hymo_volume_range *r = &s->volume_ranges[k];
        v[0][k] = r->p_min, v[1][k] = r->p_min_time, v[2][k] = r->p_max, v[3][k] = r->p_max_time;
        below[k] = r->below_floor;
        memcpy(buf[k], r->name, HYMO_REF_TEXT_MAX);
        buf[k][HYMO_REF_TEXT_MAX - 1] = '\0';
        names[k] = buf[k];
    }
    static const char *const keys[4] = {"volume_p_min", "volume_p_min_time", "volume_p_max", "volume_p_max_time"};
    char model[HYMO_REF_TEXT_MAX];
    memcpy(model, s->fluid_model, sizeof model);
    model[sizeof model - 1] = '\0';
    if (attr_str(obj, "fluid_model", model) < 0 || attr_double(obj, "p_floor", s->p_floor) < 0 ||
        attr_int(obj, "n_volumes_below_floor", s->n_volumes_below_floor) < 0 ||
        attr_int(obj, "n_volumes_total", s->n_volumes_total) < 0 || attr_str_array(obj, "volume_names", names, n) < 0)
        return -1;
    for (int i = 0; i < 4; ++i)
        if (attr_num_array(obj, keys[i], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v[i], n) < 0) return -1;
    return attr_num_array(obj, "volume_below_floor", H5T_STD_I32LE, H5T_NATIVE_INT, below, n);
}

/* 1-D array of n strings (n may be 0), fixed length: the longest + 1. */
static herr_t attr_str_array(hid_t obj, const char *name, const char *const *values, int n)
{
    size_t width = 1;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(values[i]) + 1;
        if (len > width) width = len;
    }
    char *buf = calloc(n > 0 ? (size_t)n : 1, width);
    if (!buf) return -1;
    for (int i = 0; i < n; i++) memcpy(buf + (size_t)i * width, values[i], strlen(values[i]));
    hsize_t dim = (hsize_t)n;
    hid_t t = fixed_str_type(width);
    hid_t space = t >= 0 ? H5Screate_simple(1, &dim, NULL) : -1;
    herr_t rc = -1;
    if (space >= 0) {
        hid_t a = attr_open_or_create(obj, name, t, space);
        if (a >= 0) {
            rc = n > 0 ? H5Awrite(a, t, buf) : 0;
            if (H5Aclose(a) < 0) rc = -1;
        }
        H5Sclose(space);
    }
    if (t >= 0) H5Tclose(t);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Open                                                                */

static void iso8601_now(char buf[32])
{
    time_t now = time(NULL);
    struct tm tm;
    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
        snprintf(buf, 32, "unknown");
    }
}

static void close_handles(hymo_ref_writer *w)
{
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        if (w->ds[i] >= 0) H5Dclose(w->ds[i]);
        w->ds[i] = -1;
    }
    for (int k = 0; k < w->n_series; k++) {
        if (w->series_ds[k] >= 0) H5Dclose(w->series_ds[k]);
        w->series_ds[k] = -1;
    }
    for (int i = 0; i < HYMO_GROUP_COUNT; i++) {
        if (w->groups[i] >= 0) H5Gclose(w->groups[i]);
        w->groups[i] = -1;
    }
}

static void bg_stop(hymo_ref_writer *w);
static void bg_start(hymo_ref_writer *w, size_t stage_bytes);

static void free_writer(hymo_ref_writer *w)
{
    bg_stop(w);
    if (w->lock_fd >= 0) close(w->lock_fd); /* releases the "being written" lock */
    free(w->stage_mem);
    free(w->bg_stage_mem);
    free(w->bg_series_stage);
    free(w->aux_stage);
    free(w->bg_aux_stage);
    free(w->chunk_buf);
    free(w->path);
    free(w->partial);
    for (int k = 0; w->series_path && k < w->n_series; k++) free(w->series_path[k]);
    free(w->series_path);
    free(w->series_ds);
    free(w->series_cols);
    free(w->series_stage);
    free(w);
}

/* Copies a possibly unterminated HYMO_REF_TEXT_MAX-wide name. */
static void copy_name(char dst[HYMO_REF_TEXT_MAX], const char src[HYMO_REF_TEXT_MAX])
{
    const char *end = memchr(src, '\0', HYMO_REF_TEXT_MAX);
    size_t len = end ? (size_t)(end - src) : HYMO_REF_TEXT_MAX - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* The filters of every dataset: shuffle + deflate at `level` when
 * deflate_ok, then HDF5's Fletcher32 checksum of each stored chunk (which
 * every reader of the file verifies when it reads the chunk). */
static herr_t set_filters(hid_t dcpl, int deflate_ok, int level)
{
    if (deflate_ok && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, (unsigned)level) < 0)) return -1;
    return H5Pset_fletcher32(dcpl);
}

static size_t elem_size(int i)
{
    return hymo_ref_signal_elem_size(&hymo_ref_signals[i]);
}

/* One chunk height for all datasets: 1024 rows, fewer for very wide
 * matrices so that a chunk stays near CHUNK_BYTES_TARGET. */
static int choose_chunk_rows(const int counts[HYMO_COLS_COUNT], int widest)
{
    if (widest < 1) widest = 1;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        int c = counts[hymo_ref_signals[i].cols];
        if (c > widest) widest = c;
    }
    long rows = CHUNK_BYTES_TARGET / (8L * widest);
    if (rows > CHUNK_ROWS_MAX) rows = CHUNK_ROWS_MAX;
    if (rows < CHUNK_ROWS_MIN) rows = CHUNK_ROWS_MIN;
    return (int)rows;
}

/* Creates dataset i of hymo_ref_signals[] with its `names` and `units`
 * attributes (counts: column count per hymo_ref_cols). */
static hymo_status create_dataset(hymo_ref_writer *w, int i, const hymo_ref_dims *dims,
                                  const int counts[HYMO_COLS_COUNT], int deflate_ok,
                                  hymo_error *err)
{
    const hymo_ref_signal *sp = &hymo_ref_signals[i];
    const int two_d = sp->cols != HYMO_COLS_ONE;
    const int cols = counts[sp->cols];
    const int per_column_units = sp->unit_rule != HYMO_UNITS_FIXED;
    const char *dpath = sp->path;
    w->cols[i] = cols;

    /* Names (and per-column units) are copied into pointer arrays for the
     * string-array attributes; freed before returning. */
    const hymo_ref_dimension *dim = &hymo_ref_dimensions[sp->cols];
    const char(*names)[HYMO_REF_TEXT_MAX] =
        two_d ? *(const char(*const *)[HYMO_REF_TEXT_MAX])(const void *)((const char *)dims +
                                                                          dim->dims_names)
              : NULL;
    if (two_d && cols > 0 && !names) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "cannot create '%s' in '%s': dims.%s is NULL with %d columns",
                              dpath, w->partial, dim->names_field, cols);
    }
    if (per_column_units && cols > 0 && !dims->z_units) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "cannot create '%s' in '%s': dims.z_units is NULL", dpath,
                              w->partial);
    }

    hsize_t cur[2] = {0, (hsize_t)cols};
    hsize_t max[2] = {H5S_UNLIMITED, (hsize_t)cols};
    hsize_t chunk[2];
    /* Chunk dimensions must be positive; a 0-column dataset gets a column
     * dimension that is unlimited too, so its chunk can be 1 wide. */
    if (cols == 0) max[1] = H5S_UNLIMITED;
    hsize_t width = cols > 0 ? (hsize_t)cols : 1;
    chunk[0] = (hsize_t)w->chunk_rows;
    chunk[1] = width;
    int rank = two_d ? 2 : 1;

    hid_t parent = sp->group != HYMO_GROUP_ROOT ? w->groups[sp->group] : w->file;
    hid_t space = H5Screate_simple(rank, cur, max);
    if (space < 0) return h5_fail(err, HYMO_ERR_HDF5, w->partial, "creating dataspace of '%s'", dpath);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 ||
        set_filters(dcpl, deflate_ok, w->deflate_level) < 0) {
        hymo_status st =
            h5_fail(err, HYMO_ERR_HDF5, w->partial, "setting chunking/compression of '%s'", dpath);
        if (dcpl >= 0) H5Pclose(dcpl);
        H5Sclose(space);
        return st;
    }
    hid_t ftype = sp->type == HYMO_SIG_I32 ? H5T_STD_I32LE : H5T_IEEE_F64LE;
    w->ds[i] = H5Dcreate2(parent, hymo_ref_signal_name(sp), ftype, space, H5P_DEFAULT, dcpl,
                          H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (w->ds[i] < 0) {
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "creating dataset '%s'", dpath);
    }

    if (!two_d) {
        if (attr_str(w->ds[i], "units", sp->units) < 0) {
            return h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'units' of '%s'",
                           dpath);
        }
        return HYMO_OK;
    }

    /* names (always an array), units (array for the COORD rules, else scalar) */
    size_t n = cols > 0 ? (size_t)cols : 1;
    char(*name_buf)[HYMO_REF_TEXT_MAX] = calloc(2 * n, sizeof *name_buf);
    const char **ptrs = calloc(2 * n, sizeof *ptrs);
    if (!name_buf || !ptrs) {
        free(name_buf);
        free(ptrs);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory creating '%s' in '%s'", dpath,
                              w->partial);
    }
    for (int c = 0; c < cols; c++) {
        copy_name(name_buf[c], names[c]);
        ptrs[c] = name_buf[c];
        if (per_column_units) {
            char base[HYMO_REF_TEXT_MAX];
            copy_name(base, dims->z_units[c]);
            hymo_ref_signal_coord_unit(sp, base, name_buf[n + (size_t)c]);
            ptrs[n + (size_t)c] = name_buf[n + (size_t)c];
        }
    }
    hymo_status st = HYMO_OK;
    if (attr_str_array(w->ds[i], "names", ptrs, cols) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'names' of '%s'", dpath);
    } else if (per_column_units ? attr_str_array(w->ds[i], "units", ptrs + n, cols) < 0
                                : attr_str(w->ds[i], "units", sp->units) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'units' of '%s'", dpath);
    }
    free(name_buf);
    free(ptrs);
    return st;
}

static hid_t intermediate_lcpl(void);

/* Checks dims->series and copies their shapes and paths into w (before
 * anything is created). */
static hymo_status series_prepare(hymo_ref_writer *w, const hymo_ref_dims *dims, const char *path,
                                  hymo_error *err)
{
    if (dims->n_series < 0 || (dims->n_series > 0 && !dims->series)) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "reference file '%s': bad series list (%d series)", path,
                              dims->n_series);
    }
    const int n = dims->n_series;
    w->series_ds = malloc((size_t)(n > 0 ? n : 1) * sizeof *w->series_ds);
    w->series_cols = calloc((size_t)(n > 0 ? n : 1), sizeof *w->series_cols);
    w->series_path = calloc((size_t)(n > 0 ? n : 1), sizeof *w->series_path);
    w->series_stage = calloc((size_t)(n > 0 ? n : 1), sizeof *w->series_stage);
    w->bg_series_stage = calloc((size_t)(n > 0 ? n : 1), sizeof *w->bg_series_stage);
    if (!w->series_ds || !w->series_cols || !w->series_path || !w->series_stage || !w->bg_series_stage) {
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory opening '%s'", path);
    }
    for (int k = 0; k < n; k++) w->series_ds[k] = -1;
    w->n_series = n;
    for (int k = 0; k < n; k++) {
        const hymo_ref_series *sr = &dims->series[k];
        if (!sr->path || sr->path[0] != '/' || !sr->path[1] || sr->cols <= 0 || !sr->names || !sr->units) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "reference file '%s': series %d ('%s') needs an absolute path, columns, "
                                  "names and units",
                                  path, k, sr->path ? sr->path : "(null)");
        }
        for (int c = 0; c < sr->cols; c++) {
            if (!sr->names[c]) {
                return hymo_error_set(err, HYMO_ERR_ARGUMENT, "reference file '%s': series '%s': column name %d is NULL",
                                      path, sr->path, c);
            }
        }
        for (int j = 0; j < k; j++) {
            if (!strcmp(w->series_path[j], sr->path)) {
                return hymo_error_set(err, HYMO_ERR_ARGUMENT, "reference file '%s': series '%s' given twice", path,
                                      sr->path);
            }
        }
        w->series_cols[k] = sr->cols;
        w->series_path[k] = malloc(strlen(sr->path) + 1);
        if (!w->series_path[k]) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory opening '%s'", path);
        strcpy(w->series_path[k], sr->path);
    }
    return HYMO_OK;
}

/* Creates further dataset k (hymo_ref_dims.series) with its missing groups,
 * chunked like the others, with its `names` and `units`. */
static hymo_status create_series(hymo_ref_writer *w, int k, const hymo_ref_series *sr, int deflate_ok,
                                 hymo_error *err)
{
    const char *dpath = w->series_path[k];
    hsize_t cur[2] = {0, (hsize_t)sr->cols};
    hsize_t max[2] = {H5S_UNLIMITED, (hsize_t)sr->cols};
    hsize_t chunk[2] = {(hsize_t)w->chunk_rows, (hsize_t)sr->cols};
    hid_t space = H5Screate_simple(2, cur, max);
    hid_t dcpl = space >= 0 ? H5Pcreate(H5P_DATASET_CREATE) : -1;
    hid_t lcpl = dcpl >= 0 ? intermediate_lcpl() : -1;
    hymo_status st = HYMO_OK;
    if (lcpl < 0 || H5Pset_chunk(dcpl, 2, chunk) < 0 ||
        set_filters(dcpl, deflate_ok, w->deflate_level) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "preparing dataset '%s'", dpath);
    }
    if (st == HYMO_OK) {
        w->series_ds[k] = H5Dcreate2(w->file, dpath + 1, H5T_IEEE_F64LE, space, lcpl, dcpl, H5P_DEFAULT);
        if (w->series_ds[k] < 0) st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "creating dataset '%s'", dpath);
    }
    if (lcpl >= 0) H5Pclose(lcpl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (st == HYMO_OK && attr_str_array(w->series_ds[k], "names", sr->names, sr->cols) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'names' of '%s'", dpath);
    }
    if (st == HYMO_OK && attr_str(w->series_ds[k], "units", sr->units) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'units' of '%s'", dpath);
    }
    return st;
}

static hymo_status write_header(hymo_ref_writer *w, const hymo_ref_header *h, hymo_error *err)
{
    char created[32];
    iso8601_now(created);
    const hid_t f = w->file;
#define STR(name, value)                                                                           \
    if (attr_str(f, name, value) < 0)                                                              \
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing root attribute '%s'", name);
#define NUM(fn, name, value)                                                                       \
    if (fn(f, name, value) < 0)                                                                    \
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing root attribute '%s'", name);
    NUM(attr_int, "format_version", HYMO_REF_FORMAT_VERSION)
    STR("hymo_version", HYMO_VERSION)
    STR("created_utc", created)
    STR("model_name", h->model_name)
    STR("model_source", h->model_source)
    STR("model_sha256", h->model_sha256)
    if (h->model_physics_sha256 && h->model_physics_sha256[0]) {
        STR("model_physics_sha256", h->model_physics_sha256)
    }
    STR("formulation", h->formulation)
    STR("integrator", h->integrator)
    STR("jacobian", h->jacobian)
    STR("linear_solver", h->linear_solver)
    NUM(attr_double, "dt", h->dt)
    NUM(attr_double, "t_end", h->t_end)
    NUM(attr_double, "tol_position", h->tol_position)
    NUM(attr_double, "tol_pressure", h->tol_pressure)
    NUM(attr_double, "tol_spool", h->tol_spool)
    NUM(attr_int, "max_iter", h->max_iter)
    NUM(attr_double, "penalty_alpha", h->penalty_alpha)
    if (h->output_every > 0) {
        NUM(attr_int, "output_every", h->output_every)
        NUM(attr_double, "output_interval", h->output_every * h->dt)
    }
    if (h->overrides && h->overrides[0]) {
        STR("overrides", h->overrides)
    }
    STR("data_checksum", "fletcher32")
    NUM(attr_int, "complete", 0)
#undef STR
#undef NUM
    return HYMO_OK;
}

/* Closes every handle and deletes the partial file (open failure path). */
static hymo_status close_file(hymo_ref_writer *w, hymo_error *err);

static void abandon(hymo_ref_writer *w)
{
    hymo_error ignored;
    close_file(w, &ignored);
    if (w->partial) remove(w->partial);
    free_writer(w);
}

/* A file as the output check compares it: its device and inode when it
 * exists, and its resolved name (the realpath of its directory and its
 * last name component; the path as given when the directory cannot be
 * resolved). */
typedef struct {
    int exists;
    dev_t dev;
    ino_t ino;
    mode_t mode;
    char name[PATH_MAX + 256];
} file_identity;

static void identify(const char *path, file_identity *id)
{
    struct stat sb;
    id->exists = stat(path, &sb) == 0;
    id->dev = id->exists ? sb.st_dev : 0;
    id->ino = id->exists ? sb.st_ino : 0;
    id->mode = id->exists ? sb.st_mode : 0;
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == path) {
        snprintf(dir, sizeof dir, "/");
    } else {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    }
    const char *base = slash ? slash + 1 : path;
    if ((size_t)(slash ? slash - path : 1) < sizeof dir && realpath(dir, real)) {
        snprintf(id->name, sizeof id->name, "%s/%s", strcmp(real, "/") ? real : "", base);
    } else {
        snprintf(id->name, sizeof id->name, "%s", path);
    }
}

/* 1 if a and b are the same file: the same device and inode when both
 * exist, else the same resolved name. */
static int same_file(const file_identity *a, const file_identity *b)
{
    if (a->exists && b->exists) return a->dev == b->dev && a->ino == b->ino;
    return !strcmp(a->name, b->name);
}

hymo_status hymo_output_paths_check(const char *const *outs, int n_outs, const char *const *inputs, int n_inputs,
                                    hymo_error *err)
{
    file_identity *out_id = calloc((size_t)(n_outs > 0 ? n_outs : 1), sizeof *out_id), in_id;
    if (!out_id) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory checking the output files");
    hymo_status st = HYMO_OK;
    for (int o = 0; o < n_outs && st == HYMO_OK; o++) {
        const char *out = outs ? outs[o] : NULL;
        if (!out || !out[0]) {
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "output file name is empty");
            break;
        }
        identify(out, &out_id[o]);
        if (out_id[o].exists && S_ISDIR(out_id[o].mode)) {
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "output '%s' is a directory; give a file name", out);
        } else if (out_id[o].exists && !S_ISREG(out_id[o].mode)) {
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                "output '%s' exists and is not a regular file (it would be replaced)", out);
        }
        /* an input that does not exist is left to the command that reads it */
        for (int i = 0; i < n_inputs && st == HYMO_OK; i++) {
            if (!inputs || !inputs[i] || !inputs[i][0]) continue;
            identify(inputs[i], &in_id);
            if (in_id.exists && same_file(&out_id[o], &in_id)) {
                st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                    "output '%s' is the input file '%s': it would be overwritten; "
                                    "choose another output name",
                                    out, inputs[i]);
            }
        }
        for (int k = 0; k < o && st == HYMO_OK; k++) {
            if (same_file(&out_id[o], &out_id[k])) {
                st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                    "outputs '%s' and '%s' are the same file: one would overwrite the other; "
                                    "choose another output name",
                                    outs[k], out);
            }
        }
    }
    free(out_id);
    return st;
}

hymo_status hymo_output_path_check(const char *out, const char *const *inputs, int n_inputs,
                                   hymo_error *err)
{
    return hymo_output_paths_check(&out, 1, inputs, n_inputs, err);
}

const char *hymo_ref_writer_temp_path(const hymo_ref_writer *w)
{
    return w ? w->partial : NULL;
}

/* Creates "PATH.XXXXXX.partial" exclusively (O_CREAT | O_EXCL, mode 0666
 * before the umask, like fopen), XXXXXX from the clock, the pid and a
 * counter; retries on a name that exists.  Returns 0 or an errno. */
static int create_temp(char *tmpl, size_t x_at)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static unsigned long counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long v = (unsigned long long)ts.tv_nsec * 2654435761ULL ^
                           ((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_sec;
    for (int attempt = 0; attempt < 1000; attempt++) {
        v += 0x9E3779B97F4A7C15ULL * (++counter);
        unsigned long long x = v;
        for (int k = 0; k < 6; k++) {
            tmpl[x_at + (size_t)k] = letters[x % 62];
            x /= 62;
        }
        int fd = open(tmpl, O_RDWR | O_CREAT | O_EXCL, 0666);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST) return errno;
    }
    return EEXIST;
}

int hymo_partial_create(const char *path, char *tmp, size_t cap)
{
    static const char suffix[] = ".XXXXXX" PARTIAL_SUFFIX;
    const size_t len = strlen(path);
    if (len + sizeof suffix > cap) return ENAMETOOLONG;
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    return create_temp(tmp, len + 1);
}


/* ------------------------------------------------------------------ */
/* Live file: SWMR mode and the writer's lock                          */

/* HDF5's single-writer/multiple-reader mode: from here on the library
 * orders its metadata writes so that a reader opening the file with
 * H5F_ACC_SWMR_READ always sees a consistent file, and the rows appear as
 * they are flushed.  Only appends are allowed in this mode (no new objects
 * or attributes): leave_swmr() ends it.  A library that refuses it leaves
 * the file in the ordinary mode (readable between flushes, as before). */
static void start_swmr(hymo_ref_writer *w)
{
    if (H5Fstart_swmr_write(w->file) >= 0) {
        w->swmr = 1;
    } else {
        H5Eclear2(H5E_DEFAULT);
    }
}

/* An advisory write lock on byte 0 of the temporary file, held by a file
 * description of its own (Linux open-file-description lock: closing the
 * HDF5 driver's descriptor does not release it), until the writer is
 * freed or the process ends.  hymo_ref_read reports a file whose lock is
 * held as being written (hymo_reference.live).  Best effort: no lock, no
 * error. */
static void lock_partial(hymo_ref_writer *w)
{
#ifdef F_OFD_SETLK
    int fd = open(w->partial, O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 1;
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        close(fd);
        return;
    }
    w->lock_fd = fd;
#else
    (void)w;
#endif
}

/* Opens the group handles of an open file (after a reopen); the per-step
 * datasets' handles are opened by the next write (open_datasets). */
static hymo_status open_handles(hymo_ref_writer *w, hymo_error *err)
{
    for (int g = 0; g < HYMO_GROUP_COUNT; g++) {
        w->groups[g] = H5Gopen2(w->file, hymo_ref_groups[g], H5P_DEFAULT);
        if (w->groups[g] < 0) {
            return h5_fail(err, HYMO_ERR_HDF5, w->partial, "reopening group '/%s'", hymo_ref_groups[g]);
        }
    }
    w->ds_closed = 1;
    return HYMO_OK;
}

/* Opens the per-step datasets' handles after a reopen. */
static hymo_status open_datasets(hymo_ref_writer *w, hymo_error *err)
{
    w->ds_closed = 0;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        w->ds[i] = H5Dopen2(w->file, hymo_ref_signals[i].path, H5P_DEFAULT);
        if (w->ds[i] < 0) {
            return h5_fail(err, HYMO_ERR_HDF5, w->partial, "reopening dataset '%s'", hymo_ref_signals[i].path);
        }
    }
    for (int k = 0; k < w->n_series; k++) {
        w->series_ds[k] = H5Dopen2(w->file, w->series_path[k], H5P_DEFAULT);
        if (w->series_ds[k] < 0) {
            return h5_fail(err, HYMO_ERR_HDF5, w->partial, "reopening dataset '%s'", w->series_path[k]);
        }
    }
    return HYMO_OK;
}

/* Marks the writer failed with the message in err (later appends and the
 * close report it; the close deletes the file). */
static hymo_status writer_failed(hymo_ref_writer *w, hymo_status st, hymo_error *err)
{
    w->failed = st;
    snprintf(w->first_error, sizeof w->first_error, "%s", err ? err->message : "write failed");
    return st;
}

/* Ends SWMR mode before anything other than appends (the summary
 * attributes, /cosim, ...): HDF5 1.10 ends it only by closing the file, so
 * the file is flushed, closed and opened again, read-write, in the
 * ordinary mode (still under its temporary name, with the same driver). */
static hymo_status leave_swmr(hymo_ref_writer *w, hymo_error *err)
{
    if (!w->swmr) return HYMO_OK;
    if (w->failed != HYMO_OK) return hymo_error_set(err, w->failed, "%s", w->first_error);
    w->swmr = 0;
    hymo_status st = close_file(w, err);
    if (st == HYMO_OK && w->io.failed) {
        st = hymo_error_set(err, HYMO_ERR_IO, "writing '%s': %s", w->partial, strerror(w->io.failed));
    }
    if (st == HYMO_OK) {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        if (fapl >= 0 && writer_fapl(fapl, &w->io) == 0) {
            w->file = H5Fopen(w->partial, H5F_ACC_RDWR, fapl);
        }
        if (w->file < 0) st = h5_fail(err, HYMO_ERR_IO, w->partial, "reopening the file after its rows");
        if (fapl >= 0) H5Pclose(fapl);
    }
    if (st == HYMO_OK) st = open_handles(w, err);
    if (st != HYMO_OK) return writer_failed(w, st, err);
    return HYMO_OK;
}

hymo_status hymo_ref_writer_open(hymo_ref_writer **writer, const char *path,
                                 const hymo_ref_header *header, const hymo_ref_dims *dims,
                                 hymo_error *err)
{
    if (writer) *writer = NULL;
    if (!writer || !path || !header || !dims) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_open: NULL argument");
    }
    if (!path[0]) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "reference file name is empty");
    }
    if (dims->nz < 0 || dims->np < 0 || dims->nu < 0 || dims->na < 0 || dims->ncut < 0) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "reference file '%s': negative dimension (nz %d, np %d, nu %d, "
                              "na %d, ncut %d)",
                              path, dims->nz, dims->np, dims->nu, dims->na, dims->ncut);
    }
    /* before anything is computed: not a directory, not the model file */
    hymo_status pst = hymo_output_path_check(path, &header->model_path, 1, err);
    if (pst != HYMO_OK) return pst;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    static const char suffix[] = ".XXXXXX" PARTIAL_SUFFIX;
    hymo_ref_writer *w = calloc(1, sizeof *w);
    size_t len = strlen(path);
    if (w) {
        w->file = -1;
        w->lock_fd = -1;
        for (int i = 0; i < HYMO_GROUP_COUNT; i++) w->groups[i] = -1;
        for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) w->ds[i] = -1;
        w->path = malloc(len + 1);
        w->partial = malloc(len + sizeof suffix);
    }
    if (!w || !w->path || !w->partial) {
        if (w) free_writer(w);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory opening '%s'", path);
    }
    memcpy(w->path, path, len + 1);
    w->partial[0] = '\0';

    hymo_status sst = series_prepare(w, dims, path, err);
    if (sst != HYMO_OK) {
        free_writer(w);
        return sst;
    }

    /* A name of its own, created exclusively: fails early with the OS
     * reason if the directory is not writable. */
    int e = hymo_partial_create(path, w->partial, len + sizeof suffix);
    if (e != 0) {
        hymo_status st = hymo_error_set(err, HYMO_ERR_IO, "cannot create a temporary file for '%s' (%s): %s",
                                        path, w->partial, strerror(e));
        free_writer(w);
        return st;
    }

    /* Latest file format: checksums on the superblock, object headers and
     * chunk indexes, so damage is detected when the file is read.
     * Attributes stay in the object headers (compact storage) up to the
     * HDF5 limit of 64 KiB per attribute. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fapl >= 0 && fcpl >= 0 && writer_fapl(fapl, &w->io) == 0 &&
        H5Pset_attr_phase_change(fcpl, 1000, 900) >= 0) {
        w->file = H5Fcreate(w->partial, H5F_ACC_TRUNC, fcpl, fapl);
    }
    if (w->file < 0) {
        hymo_status st = h5_fail(err, HYMO_ERR_IO, w->partial, "cannot create HDF5 file");
        if (fapl >= 0) H5Pclose(fapl);
        if (fcpl >= 0) H5Pclose(fcpl);
        abandon(w);
        return st;
    }
    H5Pclose(fapl);
    H5Pclose(fcpl);

    hymo_status st = write_header(w, header, err);
    for (int g = 0; st == HYMO_OK && g < HYMO_GROUP_COUNT; g++) {
        w->groups[g] =
            H5Gcreate2(w->file, hymo_ref_groups[g], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (w->groups[g] < 0) {
            st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "creating group '/%s'",
                         hymo_ref_groups[g]);
        }
    }
    size_t stage_bytes = 0; /* the staging buffer's size (the thread's stage has its layout) */
    int counts[HYMO_COLS_COUNT];
    hymo_ref_counts_dims(dims, counts);
    int widest_series = 0;
    for (int k = 0; k < w->n_series; k++)
        if (w->series_cols[k] > widest_series) widest_series = w->series_cols[k];
    w->chunk_rows = choose_chunk_rows(counts, widest_series);
    w->deflate_level = header->deflate_level < 0 ? 0 : header->deflate_level > 9 ? 9 : header->deflate_level;
    const int deflate_ok = w->deflate_level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
                           H5Zfilter_avail(H5Z_FILTER_SHUFFLE) > 0;
    for (int i = 0; st == HYMO_OK && i < HYMO_SIGNAL_COUNT; i++) {
        st = create_dataset(w, i, dims, counts, deflate_ok, err);
    }
    for (int k = 0; st == HYMO_OK && k < w->n_series; k++) {
        st = create_series(w, k, &dims->series[k], deflate_ok, err);
    }
    if (st == HYMO_OK) {
        /* staging buffer: stage_rows x cols for every dataset, one chunk */
        w->stage_rows = w->chunk_rows;
        /* each dataset's block starts at a multiple of 8 bytes: the further
         * outputs are stored there as doubles by the writer's thread */
        size_t total = 0;
        for (int i = 0; i < HYMO_SIGNAL_COUNT; i++)
            total += STAGE_ALIGN((size_t)w->stage_rows * (size_t)w->cols[i] * elem_size(i));
        for (int k = 0; k < w->n_series; k++)
            total += STAGE_ALIGN((size_t)w->stage_rows * (size_t)w->series_cols[k] * sizeof(double));
        stage_bytes = total;
        w->stage_mem = malloc(total > 0 ? total : 1);
        /* Without deflate, and where the file's types are the memory's,
         * the chunks are written as stored (write_chunks). */
        size_t widest = 0;
        for (int i = 0; i < HYMO_SIGNAL_COUNT; i++)
            if ((size_t)w->cols[i] * elem_size(i) > widest) widest = (size_t)w->cols[i] * elem_size(i);
        for (int k = 0; k < w->n_series; k++)
            if ((size_t)w->series_cols[k] * sizeof(double) > widest) widest = (size_t)w->series_cols[k] * sizeof(double);
        w->direct = !deflate_ok && H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0 &&
                    H5Tequal(H5T_NATIVE_INT, H5T_STD_I32LE) > 0;
        if (w->direct) w->chunk_buf = malloc((size_t)w->chunk_rows * widest + 4);
        if (!w->stage_mem || (w->direct && !w->chunk_buf)) {
            st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory opening '%s'", w->partial);
        } else {
            size_t off = 0;
            for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
                w->stage[i] = w->cols[i] > 0 ? w->stage_mem + off : NULL;
                off += STAGE_ALIGN((size_t)w->stage_rows * (size_t)w->cols[i] * elem_size(i));
            }
            for (int k = 0; k < w->n_series; k++) {
                w->series_stage[k] = (double *)(void *)(w->stage_mem + off);
                off += STAGE_ALIGN((size_t)w->stage_rows * (size_t)w->series_cols[k] * sizeof(double));
            }
        }
    }
    if (st == HYMO_OK && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
        st = h5_fail(err, HYMO_ERR_IO, w->partial, "flushing file");
    }
    /* Readable while it is written: HDF5's single-writer/multiple-reader
     * mode (the file driver supports it, h5vfd.c), and an advisory lock
     * that tells readers a live writer has the file. */
    if (st == HYMO_OK) {
        start_swmr(w);
        lock_partial(w);
        bg_start(w, stage_bytes);
    }
    if (st != HYMO_OK) {
        abandon(w);
        return st;
    }
    *writer = w;
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Append                                                              */

static const void *block_data(const hymo_ref_block *b, int i)
{
    return hymo_ref_signal_block_get(&hymo_ref_signals[i], b);
}

/* Rows [old_rows, new_rows) of a dataset of row_bytes per row, from data
 * (row-major), written as its stored chunks (H5Dwrite_chunk): each chunk
 * R x row_bytes, the rows past new_rows zero (the fill value HDF5 gives the
 * unwritten part of an edge chunk), then its Fletcher-32 checksum
 * (little-endian), exactly what the Fletcher32 filter would store, without
 * the filter pipeline's copies and chunk buffers.  old_rows is a multiple
 * of R (the writer writes whole chunks but the last). */
static herr_t write_chunks(hymo_ref_writer *w, hid_t ds, size_t row_bytes, hsize_t old_rows, hsize_t new_rows,
                           const unsigned char *data)
{
    const hsize_t R = (hsize_t)w->chunk_rows;
    const size_t bytes = (size_t)R * row_bytes;
    unsigned char *buf = w->chunk_buf;
    for (hsize_t r0 = old_rows; r0 < new_rows; r0 += R) {
        const size_t n = (size_t)(new_rows - r0 < R ? new_rows - r0 : R);
        memcpy(buf, data + (size_t)(r0 - old_rows) * row_bytes, n * row_bytes);
        if (n < (size_t)R) memset(buf + n * row_bytes, 0, bytes - n * row_bytes);
        const uint32_t f = hymo_fletcher32(buf, bytes);
        buf[bytes] = (unsigned char)f, buf[bytes + 1] = (unsigned char)(f >> 8);
        buf[bytes + 2] = (unsigned char)(f >> 16), buf[bytes + 3] = (unsigned char)(f >> 24);
        hsize_t off[2] = {r0, 0};
        if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, off, bytes + 4, buf) < 0) return -1;
    }
    return 0;
}

static herr_t set_rows(hymo_ref_writer *w, int i, hsize_t rows)
{
    hsize_t dims[2] = {rows, (hsize_t)w->cols[i]};
    return H5Dset_extent(w->ds[i], dims);
}

/* Extends dataset i to new_rows and writes the staged rows into its new
 * rows (one H5Dwrite of whole chunks, except the last write of a run). */
static hymo_status write_dataset_rows(hymo_ref_writer *w, int i, hsize_t old_rows, hsize_t new_rows,
                                      const unsigned char *data, hymo_error *err)
{
    if (set_rows(w, i, new_rows) < 0) {
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "extending dataset '%s'", hymo_ref_signals[i].path);
    }
    if (w->cols[i] == 0) return HYMO_OK;
    const int two_d = hymo_ref_signals[i].cols != HYMO_COLS_ONE;
    hsize_t start[2] = {old_rows, 0};
    hsize_t count[2] = {new_rows - old_rows, (hsize_t)w->cols[i]};
    herr_t rc = -1;
    hid_t fspace = -1, mspace = -1;
    if (w->direct && old_rows % (hsize_t)w->chunk_rows == 0) {
        rc = write_chunks(w, w->ds[i], (size_t)w->cols[i] * elem_size(i), old_rows, new_rows, data);
    } else if ((fspace = H5Dget_space(w->ds[i])) >= 0 && (mspace = H5Screate_simple(two_d ? 2 : 1, count, NULL)) >= 0 &&
               H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0) {
        hid_t mtype = hymo_ref_signals[i].type == HYMO_SIG_I32 ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE;
        rc = H5Dwrite(w->ds[i], mtype, mspace, fspace, H5P_DEFAULT, data);
    }
    hymo_status st = HYMO_OK;
    if (rc < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing rows %llu..%llu of '%s'",
                     (unsigned long long)old_rows, (unsigned long long)(new_rows - 1),
                     hymo_ref_signals[i].path);
    }
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
    return st;
}

/* The same for further dataset k (hymo_ref_dims.series). */
static hymo_status write_series_rows(hymo_ref_writer *w, int k, hsize_t old_rows, hsize_t new_rows,
                                     const double *data, hymo_error *err)
{
    const char *dpath = w->series_path[k];
    hsize_t dims[2] = {new_rows, (hsize_t)w->series_cols[k]};
    if (H5Dset_extent(w->series_ds[k], dims) < 0) {
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "extending dataset '%s'", dpath);
    }
    hsize_t start[2] = {old_rows, 0};
    hsize_t count[2] = {new_rows - old_rows, (hsize_t)w->series_cols[k]};
    herr_t rc = -1;
    hid_t fspace = -1, mspace = -1;
    if (w->direct && old_rows % (hsize_t)w->chunk_rows == 0) {
        rc = write_chunks(w, w->series_ds[k], (size_t)w->series_cols[k] * sizeof(double), old_rows, new_rows,
                          (const unsigned char *)data);
    } else if ((fspace = H5Dget_space(w->series_ds[k])) >= 0 && (mspace = H5Screate_simple(2, count, NULL)) >= 0 &&
               H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0) {
        rc = H5Dwrite(w->series_ds[k], H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, data);
    }
    hymo_status st = HYMO_OK;
    if (rc < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing rows %llu..%llu of '%s'",
                     (unsigned long long)old_rows, (unsigned long long)(new_rows - 1), dpath);
    }
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
    return st;
}

/* Writes n staged rows (sig: per dataset, ser: per further dataset) after
 * the file's rows (extending every dataset) and flushes the file, in two
 * phases: every dataset but /time, flush, then /time, flush.  /time
 * therefore never has rows on disk that another dataset lacks, and a
 * reader of a file being written (or killed) takes the rows of /time as N
 * (hymo_ref_read).  On failure the datasets are shrunk back (outside SWMR
 * mode, which cannot shrink; the file is deleted at the close anyway) and
 * the caller marks the writer failed. */
static hymo_status write_rows(hymo_ref_writer *w, unsigned char *const *sig, double *const *ser,
                              const unsigned char *aux, int n, hymo_error *err)
{
    if (n == 0) return HYMO_OK;
    if (w->ds_closed) {
        const hymo_status ost = open_datasets(w, err);
        if (ost != HYMO_OK) return ost;
    }
    if (w->derive) w->derive(w->derive_ctx, n, (const unsigned char *const *)sig, aux, ser);
    const hsize_t old_rows = w->written, new_rows = old_rows + (hsize_t)n;
    hymo_status st = HYMO_OK;
    for (int i = 0; st == HYMO_OK && i < HYMO_SIGNAL_COUNT; i++) {
        if (i != HYMO_SIG_TIME) st = write_dataset_rows(w, i, old_rows, new_rows, sig[i], err);
    }
    for (int k = 0; st == HYMO_OK && k < w->n_series; k++)
        st = write_series_rows(w, k, old_rows, new_rows, ser[k], err);
    if (st == HYMO_OK && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
        st = h5_fail(err, HYMO_ERR_IO, w->partial, "flushing file");
    }
    if (st == HYMO_OK) st = write_dataset_rows(w, HYMO_SIG_TIME, old_rows, new_rows, sig[HYMO_SIG_TIME], err);
    /* Make the rows durable so a killed run leaves a readable .partial. */
    if (st == HYMO_OK && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
        st = h5_fail(err, HYMO_ERR_IO, w->partial, "flushing file");
    }
    if (st != HYMO_OK) {
        /* Keep every dataset at the same row count: undo this write (a
         * no-op for the datasets not yet extended). */
        if (!w->swmr) {
            for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) set_rows(w, i, old_rows);
            for (int k = 0; k < w->n_series; k++) {
                hsize_t d2[2] = {old_rows, (hsize_t)w->series_cols[k]};
                H5Dset_extent(w->series_ds[k], d2);
            }
        }
        return st;
    }
    w->written = new_rows;
    return HYMO_OK;
}

/* The staged rows written on this thread (the writing thread stopped). */
static hymo_status write_stage(hymo_ref_writer *w, hymo_error *err)
{
    if (w->buffered == 0 || !w->stage_mem) return HYMO_OK;
    const hymo_status st = write_rows(w, w->stage, w->series_stage, w->aux_stage, w->buffered, err);
    if (st != HYMO_OK) return writer_failed(w, st, err);
    w->handed += (hsize_t)w->buffered;
    w->buffered = 0;
    return HYMO_OK;
}

/* After the last rows (the thread stopped, the stage written): the
 * staging buffers are freed, so what the end of the file allocates
 * (leaving SWMR mode, the summary, further datasets) does not add to
 * their pages. */
static void release_stages(hymo_ref_writer *w)
{
    free(w->stage_mem), free(w->bg_stage_mem), free(w->aux_stage), free(w->bg_aux_stage), free(w->chunk_buf);
    w->stage_mem = w->bg_stage_mem = w->aux_stage = w->bg_aux_stage = w->chunk_buf = NULL;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) w->stage[i] = w->bg_stage[i] = NULL;
    for (int k = 0; k < w->n_series; k++) w->series_stage[k] = w->bg_series_stage[k] = NULL;
}

/* ---- the writing thread ---- */

static void *bg_main(void *arg)
{
    hymo_ref_writer *w = arg;
    /* HDF5's error printing is per thread (Debian's HDF5 is thread-safe):
     * off here too, the failures are reported as values */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    pthread_mutex_lock(&w->bg_lock);
    for (;;) {
        if (w->bg_busy) {
            const int n = w->bg_rows;
            const hymo_status failed = w->bg_st;
            pthread_mutex_unlock(&w->bg_lock);
            hymo_error e;
            memset(&e, 0, sizeof e);
            /* after a failure the rows are dropped (the file is deleted) */
            const hymo_status st = failed == HYMO_OK ? write_rows(w, w->bg_stage, w->bg_series_stage, w->bg_aux_stage, n, &e) : failed;
            pthread_mutex_lock(&w->bg_lock);
            if (st != HYMO_OK && w->bg_st == HYMO_OK) {
                w->bg_st = st;
                w->bg_err = e;
            }
            w->bg_busy = 0;
            pthread_cond_broadcast(&w->bg_cond);
        } else if (w->bg_quit) {
            break;
        } else {
            pthread_cond_wait(&w->bg_cond, &w->bg_lock);
        }
    }
    pthread_mutex_unlock(&w->bg_lock);
    return NULL;
}

/* Starts the thread (at the open; without it the stages are written on
 * the caller's thread).  The second stage has the first one's layout. */
static void bg_start(hymo_ref_writer *w, size_t stage_bytes)
{
    w->bg_stage_mem = malloc(stage_bytes > 0 ? stage_bytes : 1);
    if (!w->bg_stage_mem) return;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++)
        w->bg_stage[i] = w->stage[i] ? w->bg_stage_mem + (w->stage[i] - w->stage_mem) : NULL;
    for (int k = 0; k < w->n_series; k++)
        w->bg_series_stage[k] =
            (double *)(void *)(w->bg_stage_mem + ((unsigned char *)(void *)w->series_stage[k] - w->stage_mem));
    if (pthread_mutex_init(&w->bg_lock, NULL) != 0) return;
    if (pthread_cond_init(&w->bg_cond, NULL) != 0) {
        pthread_mutex_destroy(&w->bg_lock);
        return;
    }
    if (pthread_create(&w->bg_thread, NULL, bg_main, w) != 0) {
        pthread_cond_destroy(&w->bg_cond);
        pthread_mutex_destroy(&w->bg_lock);
        return;
    }
    w->bg = 1;
}

/* Waits for the thread to be idle; its failure, if any, becomes the
 * writer's.  Returns w->failed. */
static hymo_status bg_wait(hymo_ref_writer *w)
{
    pthread_mutex_lock(&w->bg_lock);
    while (w->bg_busy) pthread_cond_wait(&w->bg_cond, &w->bg_lock);
    const hymo_status st = w->bg_st;
    hymo_error e = w->bg_err;
    pthread_mutex_unlock(&w->bg_lock);
    if (st != HYMO_OK && w->failed == HYMO_OK) writer_failed(w, st, &e);
    return w->failed;
}

/* Stops the thread after its last write (every function of the writer
 * but append calls this before its own HDF5 calls). */
static void bg_stop(hymo_ref_writer *w)
{
    if (!w->bg) return;
    bg_wait(w);
    pthread_mutex_lock(&w->bg_lock);
    w->bg_quit = 1;
    pthread_cond_broadcast(&w->bg_cond);
    pthread_mutex_unlock(&w->bg_lock);
    pthread_join(w->bg_thread, NULL);
    pthread_cond_destroy(&w->bg_cond);
    pthread_mutex_destroy(&w->bg_lock);
    w->bg = 0;
}

/* Hands the staged rows to the thread (after its previous write) and
 * continues in the other stage. */
static hymo_status bg_hand_over(hymo_ref_writer *w, hymo_error *err)
{
    if (bg_wait(w) != HYMO_OK) return hymo_error_set(err, w->failed, "%s", w->first_error);
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        unsigned char *t = w->stage[i];
        w->stage[i] = w->bg_stage[i], w->bg_stage[i] = t;
    }
    double **ts = w->series_stage;
    w->series_stage = w->bg_series_stage, w->bg_series_stage = ts;
    unsigned char *tm = w->stage_mem;
    w->stage_mem = w->bg_stage_mem, w->bg_stage_mem = tm;
    tm = w->aux_stage;
    w->aux_stage = w->bg_aux_stage, w->bg_aux_stage = tm;
    pthread_mutex_lock(&w->bg_lock);
    w->bg_rows = w->buffered;
    w->bg_busy = 1;
    pthread_cond_broadcast(&w->bg_cond);
    pthread_mutex_unlock(&w->bg_lock);
    w->handed += (hsize_t)w->buffered;
    w->buffered = 0;
    return HYMO_OK;
}

hymo_status hymo_ref_writer_append(hymo_ref_writer *w, const hymo_ref_block *b, hymo_error *err)
{
    return hymo_ref_writer_append_aux(w, b, NULL, err);
}

hymo_status hymo_ref_writer_set_derive(hymo_ref_writer *w, hymo_ref_derive_fn fn, void *ctx, size_t aux_bytes,
                                       hymo_error *err)
{
    if (!w || !fn) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_set_derive: NULL argument");
    if (w->handed > 0 || w->buffered > 0 || w->derive)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "'%s': the derived rows are set before the first row",
                              w->partial);
    /* the thread has nothing to write yet (no row handed): it reads none of these */
    if (aux_bytes > 0) {
        w->aux_stage = malloc((size_t)w->stage_rows * aux_bytes);
        w->bg_aux_stage = malloc((size_t)w->stage_rows * aux_bytes);
        if (!w->aux_stage || !w->bg_aux_stage) {
            free(w->aux_stage), free(w->bg_aux_stage);
            w->aux_stage = w->bg_aux_stage = NULL;
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (rows of '%s')", w->partial);
        }
    }
    w->derive = fn, w->derive_ctx = ctx, w->aux_bytes = aux_bytes;
    return HYMO_OK;
}

void hymo_ref_writer_adopt(hymo_ref_writer *w)
{
    (void)w;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

hymo_status hymo_ref_writer_end_rows(hymo_ref_writer *w, hymo_error *err)
{
    if (!w) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_end_rows: NULL writer");
    bg_stop(w);
    w->rows_ended = 1;
    if (w->failed != HYMO_OK) return hymo_error_set(err, w->failed, "%s", w->first_error);
    hymo_status st = write_stage(w, err); /* the last rows, still in SWMR mode */
    release_stages(w);
    if (st == HYMO_OK) st = leave_swmr(w, err);
    return st;
}

hymo_status hymo_ref_writer_append_aux(hymo_ref_writer *w, const hymo_ref_block *b, const void *aux,
                                       hymo_error *err)
{
    if (!w || !b) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_append: NULL argument");
    }
    if (w->rows_ended) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "append to '%s': after the last rows (hymo_ref_writer_end_rows)",
                              w->partial);
    }
    if (w->failed != HYMO_OK) {
        return hymo_error_set(err, w->failed,
                              "append to '%s': an earlier write failed; rows are no longer "
                              "recorded",
                              w->partial);
    }
    if (b->n < 0) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "append to '%s': negative row count %d",
                              w->partial, b->n);
    }
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        if (w->cols[i] > 0 && b->n > 0 && !block_data(b, i)) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "append to '%s': no data for dataset '%s' (NULL pointer)",
                                  w->partial, hymo_ref_signals[i].path);
        }
    }
    if (w->aux_bytes > 0 && b->n > 0 && !aux) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "append to '%s': no rows of the derived datasets' input",
                              w->partial);
    }
    for (int k = 0; !w->derive && k < w->n_series && b->n > 0; k++) {
        if (!b->series || !b->series[k]) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "append to '%s': no data for dataset '%s' (NULL pointer)",
                                  w->partial, w->series_path[k]);
        }
    }
    int done = 0;
    while (done < b->n) {
        /* up to the next chunk boundary */
        int k = w->chunk_rows - w->buffered % w->chunk_rows;
        if (k > b->n - done) k = b->n - done;
        for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
            if (w->cols[i] == 0) continue;
            const size_t row_bytes = (size_t)w->cols[i] * elem_size(i);
            memcpy(w->stage[i] + (size_t)w->buffered * row_bytes,
                   (const unsigned char *)block_data(b, i) + (size_t)done * row_bytes,
                   (size_t)k * row_bytes);
        }
        if (w->aux_bytes > 0)
            memcpy(w->aux_stage + (size_t)w->buffered * w->aux_bytes,
                   (const unsigned char *)aux + (size_t)done * w->aux_bytes, (size_t)k * w->aux_bytes);
        for (int j = 0; !w->derive && j < w->n_series; j++) {
            const size_t cols = (size_t)w->series_cols[j];
            memcpy(w->series_stage[j] + (size_t)w->buffered * cols, b->series[j] + (size_t)done * cols,
                   (size_t)k * cols * sizeof(double));
        }
        w->buffered += k;
        done += k;
        /* The stage full (a chunk of every dataset): to the writer's
         * thread, after its previous write; without it, written here (the
         * live file and a killed run's file stay a chunk or two behind the
         * run). */
        if (w->buffered < w->stage_rows) continue;
        const hymo_status st = w->bg ? bg_hand_over(w, err) : write_stage(w, err);
        if (st != HYMO_OK) return st;
    }
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Close / discard                                                     */

static hymo_status write_summary(hymo_ref_writer *w, const hymo_run_summary *s, hymo_error *err)
{
#define ATTR(fn, g, name, value)                                                                   \
    if (fn(w->groups[g], name, value) < 0)                                                         \
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute '%s' of '/%s'", name,   \
                       hymo_ref_groups[g]);
    ATTR(attr_double, HYMO_GROUP_SOLVER, "wall_time", s->wall_time)
    ATTR(attr_double, HYMO_GROUP_SOLVER, "mean_iterations", s->mean_iterations)
    ATTR(attr_int, HYMO_GROUP_SOLVER, "max_iterations", s->max_iterations)
    ATTR(attr_long, HYMO_GROUP_SOLVER, "jacobian_evaluations", s->jacobian_evaluations)
    char independent[HYMO_REF_TEXT_MAX];
    copy_name(independent, s->independent);
    /* the whole list when known (independent holds its first 127 characters) */
    const char *list = memchr(s->independent_list, '\0', sizeof s->independent_list) && s->independent_list[0]
                           ? s->independent_list
                           : independent;
    ATTR(attr_str, HYMO_GROUP_SOLVER, "independent", list)
    ATTR(attr_int, HYMO_GROUP_SOLVER, "n_reselections", s->n_reselections)
    ATTR(attr_long, HYMO_GROUP_SOLVER, "n_steps", s->n_steps)
    ATTR(attr_double, HYMO_GROUP_SOLVER, "t_reached", s->t_reached)
    if (s->has_pressure_range) {
        char vol[HYMO_REF_TEXT_MAX];
        ATTR(attr_double, HYMO_GROUP_STATES, "p_min", s->p_min)
        ATTR(attr_double, HYMO_GROUP_STATES, "p_min_time", s->p_min_time)
        copy_name(vol, s->p_min_volume);
        ATTR(attr_str, HYMO_GROUP_STATES, "p_min_volume", vol)
        ATTR(attr_double, HYMO_GROUP_STATES, "p_max", s->p_max)
        ATTR(attr_double, HYMO_GROUP_STATES, "p_max_time", s->p_max_time)
        copy_name(vol, s->p_max_volume);
        ATTR(attr_str, HYMO_GROUP_STATES, "p_max_volume", vol)
        ATTR(attr_int, HYMO_GROUP_STATES, "n_volumes_below_zero", s->n_volumes_below_zero)
        if (s->fluid_model[0] && attr_volume_ranges(w->groups[HYMO_GROUP_STATES], s) < 0)
            return h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing the per-volume pressure ranges of '/%s'",
                           hymo_ref_groups[HYMO_GROUP_STATES]);
    }
    ATTR(attr_double, HYMO_GROUP_SOLVER, "wall_total", s->wall_total)
    ATTR(attr_long, HYMO_GROUP_SOLVER, "n_events", s->n_events)
    ATTR(attr_long, HYMO_GROUP_SOLVER, "event_iterations", s->event_iterations)
    if (s->step_halvings > 0)
        ATTR(attr_long, HYMO_GROUP_SOLVER, "step_halvings", s->step_halvings)
    ATTR(attr_double, HYMO_GROUP_ENERGY, "peak_drift", s->peak_drift)
    ATTR(attr_double, HYMO_GROUP_ENERGY, "max_work", s->max_work)
    ATTR(attr_double, HYMO_GROUP_ENERGY, "relative_drift", s->relative_drift)
    ATTR(attr_double, HYMO_GROUP_CONSTRAINTS, "max_position", s->max_constraint_position)
    ATTR(attr_double, HYMO_GROUP_CONSTRAINTS, "max_velocity", s->max_constraint_velocity)
    ATTR(attr_double, HYMO_GROUP_CONSTRAINTS, "max_acceleration", s->max_constraint_acceleration)
    if (s->constraint_rank > 0) { /* redundant constraint equations */
        char rows[HYMO_REF_TEXT_MAX];
        copy_name(rows, s->redundant);
        ATTR(attr_int, HYMO_GROUP_CONSTRAINTS, "rank", s->constraint_rank)
        ATTR(attr_int, HYMO_GROUP_CONSTRAINTS, "n_redundant", s->n_redundant)
        ATTR(attr_str, HYMO_GROUP_CONSTRAINTS, "redundant_rows", rows)
        ATTR(attr_double, HYMO_GROUP_CONSTRAINTS, "max_redundant_violation", s->max_redundant_violation)
    }
#undef ATTR
    return HYMO_OK;
}

/* Flushes, then closes every handle and the file.  HYMO_OK, or the
 * flush's error in err.  The handles and the file are closed with the
 * driver's failures recorded, not returned (io.quiet, h5vfd.c): with a
 * failing close HDF5 1.10 keeps the file's id while freeing the file, and
 * crashes at exit in H5F__close_cb.  io.failed tells whether anything
 * failed. */
static hymo_status close_file(hymo_ref_writer *w, hymo_error *err)
{
    hymo_status st = HYMO_OK;
    if (w->file >= 0 && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
        st = h5_fail(err, HYMO_ERR_IO, w->partial, "flushing file");
    }
    w->io.quiet = 1;
    close_handles(w);
    if (w->file >= 0 && H5Fclose(w->file) < 0 && st == HYMO_OK) {
        st = h5_fail(err, HYMO_ERR_IO, w->partial, "closing file");
    }
    w->io.quiet = 0;
    w->file = -1;
    return st;
}

hymo_status hymo_ref_writer_close(hymo_ref_writer *w, const hymo_run_summary *summary,
                                  hymo_error *err)
{
    if (!w) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_close: NULL writer");
    bg_stop(w);
    hymo_status st = w->failed;
    if (st != HYMO_OK) {
        hymo_error_set(err, st, "%s", w->first_error);
    }
    if (st == HYMO_OK) st = write_stage(w, err); /* last, partial chunk */
    w->rows_ended = 1;
    release_stages(w);
    if (st == HYMO_OK) st = leave_swmr(w, err);  /* attributes: not in SWMR mode */
    if (st == HYMO_OK && summary) st = write_summary(w, summary, err);
    if (st == HYMO_OK && summary && summary->has_accuracy) { /* the run's own error estimate */
        static const char *const units[3][2] = {{"z_units", "rad or m"}, {"p_units", "Pa"}, {"s_units", "m"}};
        const double v[3] = {summary->z_max_error, summary->p_max_error, summary->s_max_error};
        static const char *const names[3] = {"z_max_error", "p_max_error", "s_max_error"};
        for (int k = 0; k < 3 && st == HYMO_OK; ++k) {
            st = hymo_ref_writer_put_attr_double(w, "accuracy", names[k], v[k], err);
            if (st == HYMO_OK) st = hymo_ref_writer_put_attr_str(w, "accuracy", units[k][0], units[k][1], err);
        }
        if (st == HYMO_OK) st = hymo_ref_writer_put_attr_str(w, "accuracy", "method", summary->accuracy_method, err);
        /* how far it can be trusted: reliable 1/0, the check, the orders observed (NaN: none) */
        if (st == HYMO_OK && summary->accuracy_reliable >= 0) {
            static const char *const orders[3] = {"z_observed_order", "p_observed_order", "s_observed_order"};
            st = hymo_ref_writer_put_attr_int(w, "accuracy", "reliable", summary->accuracy_reliable, err);
            if (st == HYMO_OK)
                st = hymo_ref_writer_put_attr_str(w, "accuracy", "check", summary->accuracy_check, err);
            for (int k = 0; k < 3 && st == HYMO_OK; ++k)
                st = hymo_ref_writer_put_attr_double(w, "accuracy", orders[k], summary->accuracy_observed_order[k],
                                                     err);
        }
    }
    if (st == HYMO_OK && summary && !summary->has_accuracy && summary->accuracy_missing_reason[0] &&
        attr_str(w->file, "accuracy_missing_reason", summary->accuracy_missing_reason) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing root attribute 'accuracy_missing_reason'");
    }
    if (st == HYMO_OK && summary && summary->initial_rates[0] &&
        attr_str(w->file, "initial_rates", summary->initial_rates) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing root attribute 'initial_rates'");
    }
    if (st == HYMO_OK && summary && summary->singular_positions[0] &&
        attr_str(w->file, "singular_positions", summary->singular_positions) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing root attribute 'singular_positions'");
    }
    if (st == HYMO_OK && attr_int(w->file, "complete", summary && summary->complete ? 1 : 0) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing root attribute 'complete'");
    }
    /* Any write failure: the file may be damaged.  It is closed and
     * deleted, never renamed (an existing file at the final path stays). */
    hymo_error cerr;
    hymo_status cst = close_file(w, &cerr);
    if (st == HYMO_OK && cst != HYMO_OK) {
        st = cst;
        if (err) *err = cerr;
    }
    if (st == HYMO_OK && w->io.failed) { /* a write failed during the close */
        st = hymo_error_set(err, HYMO_ERR_IO, "writing '%s': %s", w->partial, strerror(w->io.failed));
    }
    if (st != HYMO_OK) {
        remove(w->partial);
        char msg[HYMO_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->message : "");
        hymo_error_set(err, st, "%s; '%s' was not written (the incomplete temporary file was removed)",
                       msg, w->path);
        free_writer(w);
        return st;
    }
    /* The rows written are kept when the run failed (complete = 0). */
    if (rename(w->partial, w->path) != 0) {
        int e = errno;
        if (st == HYMO_OK) {
            st = hymo_error_set(err, HYMO_ERR_IO, "cannot rename '%s' to '%s': %s", w->partial,
                                w->path, strerror(e));
        }
        remove(w->partial);
    }
    free_writer(w);
    return st;
}

void hymo_ref_writer_discard(hymo_ref_writer *w)
{
    if (!w) return;
    bg_stop(w);
    hymo_error ignored;
    close_file(w, &ignored);
    remove(w->partial);
    free_writer(w);
}

/* ------------------------------------------------------------------ */
/* Extra data: matrices and attributes outside the per-step layout     */

/* Strips a leading '/' and checks that every component of `path` is
 * non-empty.  Returns the relative path or NULL. */
static const char *relative_path(const char *path)
{
    if (!path) return NULL;
    if (path[0] == '/') path++;
    if (!path[0]) return NULL;
    for (const char *p = path;; p++) {
        if (*p == '/' && (p == path || p[-1] == '/' || p[1] == '\0')) return NULL;
        if (*p == '\0') break;
    }
    return path;
}

/* Checks the components of rel one by one: 1 if the whole path exists,
 * 0 if some component is missing, -1 on an HDF5 error. */
static int path_exists(hid_t file, const char *rel)
{
    size_t len = strlen(rel);
    char *buf = malloc(len + 1);
    if (!buf) return -1;
    int result = 1;
    for (const char *p = strchr(rel, '/');; p = strchr(p + 1, '/')) {
        size_t n = p ? (size_t)(p - rel) : len;
        memcpy(buf, rel, n);
        buf[n] = '\0';
        htri_t ok = H5Lexists(file, buf, H5P_DEFAULT);
        if (ok <= 0) {
            result = ok < 0 ? -1 : 0;
            break;
        }
        if (!p) break;
    }
    free(buf);
    return result;
}

/* Link-creation property list that creates missing intermediate groups. */
static hid_t intermediate_lcpl(void)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        H5Pclose(lcpl);
        return -1;
    }
    return lcpl;
}

hymo_status hymo_ref_writer_put_matrix(hymo_ref_writer *w, const char *path, int rows, int cols,
                                       const double *data, const char *units,
                                       const char *const *col_names, hymo_error *err)
{
    if (!w || !path) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_put_matrix: NULL argument");
    }
    bg_stop(w);
    if (w->failed != HYMO_OK) return hymo_error_set(err, w->failed, "%s", w->first_error);
    const char *rel = relative_path(path);
    if (!rel) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "'%s': invalid dataset path '%s'",
                              w->partial, path);
    }
    if (rows < 0 || cols < 0) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "dataset '/%s' in '%s': negative shape %d x %d", rel, w->partial,
                              rows, cols);
    }
    const size_t count = (size_t)rows * (size_t)(cols > 0 ? cols : 1);
    if (count > 0 && !data) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "dataset '/%s' in '%s': no data (NULL pointer) for %d x %d values",
                              rel, w->partial, rows, cols);
    }
    if (!units) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "dataset '/%s' in '%s': units are NULL",
                              rel, w->partial);
    }
    if (col_names && cols > 0) {
        for (int c = 0; c < cols; c++) {
            if (!col_names[c]) {
                return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                      "dataset '/%s' in '%s': column name %d is NULL", rel,
                                      w->partial, c);
            }
        }
    }
    int exists = path_exists(w->file, rel);
    if (exists != 0) {
        if (exists < 0) {
            return h5_fail(err, HYMO_ERR_HDF5, w->partial, "checking dataset path '/%s'", rel);
        }
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "dataset '/%s' already exists in '%s'", rel,
                              w->partial);
    }

    const int rank = cols > 0 ? 2 : 1;
    hsize_t cur[2] = {(hsize_t)rows, (hsize_t)cols};
    hsize_t max[2] = {H5S_UNLIMITED, (hsize_t)cols};
    long chunk_rows = CHUNK_BYTES_TARGET / (8L * (cols > 0 ? cols : 1));
    if (chunk_rows > w->chunk_rows) chunk_rows = w->chunk_rows;
    if (chunk_rows < CHUNK_ROWS_MIN) chunk_rows = CHUNK_ROWS_MIN;
    hsize_t chunk[2] = {(hsize_t)chunk_rows, (hsize_t)(cols > 0 ? cols : 1)};
    const int deflate_ok = w->deflate_level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
                           H5Zfilter_avail(H5Z_FILTER_SHUFFLE) > 0;

    hymo_status st = leave_swmr(w, err); /* new objects: not in SWMR mode */
    if (st != HYMO_OK) return st;
    hid_t space = H5Screate_simple(rank, cur, max);
    hid_t dcpl = space >= 0 ? H5Pcreate(H5P_DATASET_CREATE) : -1;
    hid_t lcpl = dcpl >= 0 ? intermediate_lcpl() : -1;
    if (lcpl < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0 ||
        set_filters(dcpl, deflate_ok, w->deflate_level) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "preparing dataset '/%s'", rel);
    }
    hid_t ds = -1;
    if (st == HYMO_OK) {
        ds = H5Dcreate2(w->file, rel, H5T_IEEE_F64LE, space, lcpl, dcpl, H5P_DEFAULT);
        if (ds < 0) st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "creating dataset '/%s'", rel);
    }
    if (lcpl >= 0) H5Pclose(lcpl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (st == HYMO_OK && count > 0 &&
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing dataset '/%s'", rel);
    }
    if (st == HYMO_OK && attr_str(ds, "units", units) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'units' of '/%s'", rel);
    }
    if (st == HYMO_OK && col_names && cols > 0 &&
        attr_str_array(ds, "names", col_names, cols) < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute 'names' of '/%s'", rel);
    }
    if (ds >= 0 && H5Dclose(ds) < 0 && st == HYMO_OK) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "closing dataset '/%s'", rel);
    }
    return st;
}

hymo_status hymo_ref_writer_put_matrix_part(hymo_ref_writer *w, const char *path, int rows, int cols, int row0, int n,
                                            const double *data, const char *units, const char *const *col_names,
                                            hymo_error *err)
{
    if (!w || !path) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_put_matrix_part: NULL argument");
    bg_stop(w);
    if (row0 < 0 || n < 0 || row0 + n > rows || cols < 0) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "dataset '%s' in '%s': rows %d..%d of %d x %d", path,
                              w->partial, row0, row0 + n, rows, cols);
    }
    if (row0 == 0) { /* created with its shape and attributes, no rows written yet */
        hymo_status st = hymo_ref_writer_put_matrix(w, path, 0, cols, NULL, units, col_names, err);
        if (st != HYMO_OK) return st;
    }
    if (n == 0 && !(row0 == 0 && rows > 0)) return HYMO_OK;
    const char *rel = relative_path(path);
    hid_t ds = rel ? H5Dopen2(w->file, rel, H5P_DEFAULT) : -1;
    if (ds < 0) return h5_fail(err, HYMO_ERR_HDF5, w->partial, "opening dataset '%s'", path);
    hymo_status st = HYMO_OK;
    const int rank = cols > 0 ? 2 : 1;
    hsize_t cur[2] = {(hsize_t)rows, (hsize_t)cols};
    if (row0 == 0 && H5Dset_extent(ds, cur) < 0) st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "sizing dataset '%s'", path);
    if (st == HYMO_OK && n > 0) {
        hsize_t start[2] = {(hsize_t)row0, 0}, count[2] = {(hsize_t)n, (hsize_t)cols};
        hid_t fs = H5Dget_space(ds);
        hid_t ms = H5Screate_simple(rank, count, NULL);
        if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, data) < 0)
            st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing dataset '%s'", path);
        if (ms >= 0) H5Sclose(ms);
        if (fs >= 0) H5Sclose(fs);
    }
    if (H5Dclose(ds) < 0 && st == HYMO_OK) st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "closing dataset '%s'", path);
    return st;
}

/* Opens object `group` (created as a group if missing) for an attribute. */
static hymo_status open_attr_target(hymo_ref_writer *w, const char *group, const char *name,
                                    hid_t *obj, hymo_error *err)
{
    *obj = -1;
    if (!w || !group || !name) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_writer_put_attr: NULL argument");
    }
    if (!name[0]) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "attribute of '%s' in '%s': empty attribute name", group,
                              w->partial);
    }
    const char *rel = relative_path(group);
    if (!rel) {
        if (group[0] == '\0' || !strcmp(group, "/")) {
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "attribute '%s' in '%s': root attributes are reserved for "
                                  "the writer; use a group",
                                  name, w->partial);
        }
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "attribute '%s' in '%s': invalid group path '%s'", name,
                              w->partial, group);
    }
    hymo_status st = leave_swmr(w, err); /* new attributes: not in SWMR mode */
    if (st != HYMO_OK) return st;
    int exists = path_exists(w->file, rel);
    if (exists < 0) {
        return h5_fail(err, HYMO_ERR_HDF5, w->partial, "checking group path '/%s'", rel);
    }
    if (exists) {
        *obj = H5Oopen(w->file, rel, H5P_DEFAULT);
        if (*obj < 0) return h5_fail(err, HYMO_ERR_HDF5, w->partial, "opening '/%s'", rel);
        return HYMO_OK;
    }
    hid_t lcpl = intermediate_lcpl();
    if (lcpl >= 0) {
        *obj = H5Gcreate2(w->file, rel, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        H5Pclose(lcpl);
    }
    if (*obj < 0) return h5_fail(err, HYMO_ERR_HDF5, w->partial, "creating group '/%s'", rel);
    return HYMO_OK;
}

enum { PUT_STR, PUT_DOUBLE, PUT_INT };

static hymo_status put_attr(hymo_ref_writer *w, const char *group, const char *name, int kind,
                            const char *s, double d, int i, hymo_error *err)
{
    hid_t obj = -1;
    if (w) bg_stop(w);
    hymo_status st = open_attr_target(w, group, name, &obj, err);
    if (st != HYMO_OK) return st;
    herr_t rc = kind == PUT_STR      ? attr_str(obj, name, s)
                : kind == PUT_DOUBLE ? attr_double(obj, name, d)
                                     : attr_int(obj, name, i);
    if (rc < 0) {
        st = h5_fail(err, HYMO_ERR_HDF5, w->partial, "writing attribute '%s' of '/%s'", name,
                     relative_path(group));
    }
    H5Oclose(obj);
    return st;
}

hymo_status hymo_ref_writer_put_attr_str(hymo_ref_writer *w, const char *group, const char *name,
                                         const char *value, hymo_error *err)
{
    if (w && !value) {
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "attribute '%s' in '%s': value is NULL",
                              name ? name : "(null)", w->partial);
    }
    return put_attr(w, group, name, PUT_STR, value, 0.0, 0, err);
}

hymo_status hymo_ref_writer_put_attr_double(hymo_ref_writer *w, const char *group,
                                            const char *name, double value, hymo_error *err)
{
    return put_attr(w, group, name, PUT_DOUBLE, NULL, value, 0, err);
}

hymo_status hymo_ref_writer_put_attr_int(hymo_ref_writer *w, const char *group, const char *name,
                                         int value, hymo_error *err)
{
    return put_attr(w, group, name, PUT_INT, NULL, 0.0, value, err);
}
