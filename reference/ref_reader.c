/* hymo — HDF5 reference trajectory reader (SPEC §8, docs/hdf5-format.md).
 *
 * Loads a whole file into a hymo_reference.  Every failure becomes a
 * hymo_error naming the file and the dataset or attribute concerned; the
 * HDF5 library's own error printing is switched off. */
#define _GNU_SOURCE /* F_OFD_GETLK */
#include "h5util.h"
#include "hymo/reference.h"
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

typedef struct {
    const char *path;
    hymo_error *err;
    /* a file still being written in SWMR mode (and not complete): the
     * datasets may hold more rows than /time; the first N are read */
    int prefix_ok;
} reader;

/* Dataset size sanity (read_dataset): up to RAW_FREE_BYTES unconditionally,
 * beyond that at most MAX_COMPRESSION bytes of values per stored byte. */
#define RAW_FREE_BYTES ((hsize_t)1 << 20)
#define MAX_COMPRESSION ((hsize_t)2048)

/* "'<file>': <what>[: <innermost HDF5 message>]".  Call right after the
 * failing HDF5 call (any later HDF5 call clears the error stack). */
static hymo_status fail(reader *r, const char *fmt, ...)
{
    char detail[HYMO_H5_DETAIL_MAX];
    hymo_h5_take_error(detail);
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (detail[0]) {
        return hymo_error_set(r->err, HYMO_ERR_HDF5, "reference file '%s': %s (%s)", r->path,
                              what, detail);
    }
    return hymo_error_set(r->err, HYMO_ERR_HDF5, "reference file '%s': %s", r->path, what);
}

static int attr_present(reader *r, hid_t obj, const char *where, const char *name,
                        hymo_status *st);

static hymo_status nomem(reader *r)
{
    return hymo_error_set(r->err, HYMO_ERR_NOMEM, "reference file '%s': out of memory", r->path);
}

/* ------------------------------------------------------------------ */
/* Attributes                                                          */

/* Opens attribute `name` of obj (called `where` in messages). */
static hid_t open_attr(reader *r, hid_t obj, const char *where, const char *name,
                       hymo_status *st)
{
    htri_t exists = H5Aexists(obj, name);
    if (exists <= 0) {
        *st = exists < 0 ? fail(r, "cannot query attribute '%s' of '%s'", name, where)
                         : fail(r, "missing attribute '%s' of '%s'", name, where);
        return -1;
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) *st = fail(r, "cannot open attribute '%s' of '%s'", name, where);
    return a;
}

static hssize_t attr_npoints(hid_t a)
{
    hid_t sp = H5Aget_space(a);
    if (sp < 0) return -1;
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    return n;
}

/* Numeric scalar attribute read as mem_type (double, int or long long). */
static hymo_status attr_number(reader *r, hid_t obj, const char *where, const char *name,
                               hid_t mem_type, void *out)
{
    hymo_status st = HYMO_OK;
    hid_t a = open_attr(r, obj, where, name, &st);
    if (a < 0) return st;
    hid_t t = H5Aget_type(a);
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    if (t >= 0) H5Tclose(t);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        st = fail(r, "attribute '%s' of '%s' is not a number", name, where);
    } else if (attr_npoints(a) != 1) {
        st = fail(r, "attribute '%s' of '%s' is not a scalar", name, where);
    } else if (H5Aread(a, mem_type, out) < 0) {
        st = fail(r, "cannot read attribute '%s' of '%s'", name, where);
    }
    H5Aclose(a);
    return st;
}

static hymo_status attr_double(reader *r, hid_t obj, const char *where, const char *name,
                               double *out)
{
    return attr_number(r, obj, where, name, H5T_NATIVE_DOUBLE, out);
}

static hymo_status attr_int(reader *r, hid_t obj, const char *where, const char *name, int *out)
{
    return attr_number(r, obj, where, name, H5T_NATIVE_INT, out);
}

static hymo_status attr_long(reader *r, hid_t obj, const char *where, const char *name,
                             long *out)
{
    long long v = 0;
    hymo_status st = attr_number(r, obj, where, name, H5T_NATIVE_LLONG, &v);
    if (st == HYMO_OK) *out = (long)v;
    return st;
}

/* Reads string attribute `name` (scalar, or array of `count` strings when
 * count >= 0) into newly allocated, NUL-terminated strings: *out[i].
 * Accepts variable- and fixed-length strings. */
static hymo_status attr_strings(reader *r, hid_t obj, const char *where, const char *name,
                                long count, char ***out)
{
    *out = NULL;
    hymo_status st = HYMO_OK;
    hid_t a = open_attr(r, obj, where, name, &st);
    if (a < 0) return st;
    hid_t ftype = H5Aget_type(a), space = H5Aget_space(a), mtype = -1;
    char **strs = NULL;
    if (ftype < 0 || space < 0) {
        st = fail(r, "cannot inspect attribute '%s' of '%s'", name, where);
        goto done;
    }
    if (H5Tget_class(ftype) != H5T_STRING) {
        st = fail(r, "attribute '%s' of '%s' is not a string", name, where);
        goto done;
    }
    H5T_cset_t cset = H5Tget_cset(ftype);
    if (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8) {
        st = fail(r, "attribute '%s' of '%s' has an unknown character set", name, where);
        goto done;
    }
    int rank = H5Sget_simple_extent_ndims(space);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    if (count < 0 ? (rank != 0 || n != 1) : (rank != 1 || n != count)) {
        if (count < 0) {
            st = fail(r, "attribute '%s' of '%s' is not a single string", name, where);
        } else {
            st = fail(r, "attribute '%s' of '%s' has %lld strings, expected %ld", name, where,
                      (long long)n, count);
        }
        goto done;
    }
    strs = calloc((size_t)n + 1, sizeof *strs);
    if (!strs) {
        st = nomem(r);
        goto done;
    }
    htri_t is_vlen = H5Tis_variable_str(ftype);
    mtype = H5Tcopy(H5T_C_S1);
    if (is_vlen < 0 || mtype < 0) {
        st = fail(r, "cannot inspect attribute '%s' of '%s'", name, where);
        goto done;
    }
    /* The stored size must match the type and the count before anything
     * is read (a damaged header can declare any size): fixed-length
     * strings hold n * size bytes, variable-length ones a 16-byte global
     * heap reference each. */
    {
        const size_t tsize = H5Tget_size(ftype);
        const hsize_t stored = H5Aget_storage_size(a);
        const hsize_t want = is_vlen ? (hsize_t)n * 16u : (hsize_t)n * (hsize_t)tsize;
        if (tsize == 0 || (!is_vlen && tsize > ((size_t)1 << 26)) || stored != want) {
            st = fail(r, "attribute '%s' of '%s' is damaged (%llu bytes stored for %lld strings of "
                      "%zu bytes)",
                      name, where, (unsigned long long)stored, (long long)n, tsize);
            goto done;
        }
    }
    if (is_vlen) {
        char **raw = calloc((size_t)n + 1, sizeof *raw);
        if (!raw) {
            st = nomem(r);
            goto done;
        }
        if (H5Tset_size(mtype, H5T_VARIABLE) < 0 ||
            H5Tset_cset(mtype, cset) < 0 || H5Aread(a, mtype, raw) < 0) {
            st = fail(r, "cannot read attribute '%s' of '%s'", name, where);
            free(raw);
            goto done;
        }
        for (hssize_t i = 0; i < n && st == HYMO_OK; i++) {
            const char *s = raw[i] ? raw[i] : "";
            size_t len = strlen(s);
            strs[i] = malloc(len + 1);
            if (!strs[i]) {
                st = nomem(r);
            } else {
                memcpy(strs[i], s, len + 1);
            }
        }
        H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, raw);
        free(raw);
    } else {
        size_t size = H5Tget_size(ftype);
        char *raw = calloc((size_t)n * size + 1, 1);
        if (!raw) {
            st = nomem(r);
            goto done;
        }
        if (H5Tset_size(mtype, size) < 0 || H5Tset_strpad(mtype, H5T_STR_NULLPAD) < 0 ||
            H5Tset_cset(mtype, cset) < 0 || H5Aread(a, mtype, raw) < 0) {
            st = fail(r, "cannot read attribute '%s' of '%s'", name, where);
            free(raw);
            goto done;
        }
        for (hssize_t i = 0; i < n && st == HYMO_OK; i++) {
            const char *s = raw + (size_t)i * size;
            const char *end = memchr(s, '\0', size);
            size_t len = end ? (size_t)(end - s) : size;
            while (len > 0 && s[len - 1] == ' ') len--; /* space-padded strings */
            strs[i] = malloc(len + 1);
            if (!strs[i]) {
                st = nomem(r);
            } else {
                memcpy(strs[i], s, len);
                strs[i][len] = '\0';
            }
        }
        free(raw);
    }
done:
    if (st != HYMO_OK && strs) {
        for (size_t i = 0; strs[i]; i++) free(strs[i]);
        free(strs);
        strs = NULL;
    }
    if (mtype >= 0) H5Tclose(mtype);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    H5Aclose(a);
    *out = strs;
    return st;
}

static void free_strings(char **strs)
{
    if (!strs) return;
    for (size_t i = 0; strs[i]; i++) free(strs[i]);
    free(strs);
}

/* src into dst[cap], cut to cap - 1 characters */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Scalar string attribute into a fixed buffer (truncated to fit). */
static hymo_status attr_text(reader *r, hid_t obj, const char *where, const char *name, char *dst,
                             size_t cap)
{
    char **s = NULL;
    hymo_status st = attr_strings(r, obj, where, name, -1, &s);
    if (st == HYMO_OK) copy_text(dst, cap, s[0]);
    free_strings(s);
    return st;
}

/* Scalar string attribute, newly allocated. */
static hymo_status attr_text_alloc(reader *r, hid_t obj, const char *where, const char *name,
                                   char **dst)
{
    char **s = NULL;
    hymo_status st = attr_strings(r, obj, where, name, -1, &s);
    if (st == HYMO_OK) {
        *dst = s[0];
        free(s);
    }
    return st;
}

/* Array of `count` strings into a newly allocated name table. A scalar
 * string is accepted too when allow_scalar (repeated for every column). */
static hymo_status attr_name_table(reader *r, hid_t ds, const char *where, const char *name,
                                   int count, int allow_scalar, char (**out)[HYMO_REF_TEXT_MAX])
{
    *out = calloc(count > 0 ? (size_t)count : 1, sizeof **out);
    if (!*out) return nomem(r);
    char **s = NULL;
    hymo_status st = HYMO_OK;
    int scalar = 0;
    if (allow_scalar) {
        hymo_status st2 = HYMO_OK;
        hid_t a = open_attr(r, ds, where, name, &st2);
        if (a < 0) return st2;
        hid_t sp = H5Aget_space(a);
        scalar = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 0;
        if (sp >= 0) H5Sclose(sp);
        H5Aclose(a);
    }
    st = attr_strings(r, ds, where, name, scalar ? -1 : count, &s);
    if (st != HYMO_OK) return st;
    for (int i = 0; i < count; i++) copy_text((*out)[i], HYMO_REF_TEXT_MAX, s[scalar ? 0 : i]);
    free_strings(s);
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Datasets                                                            */

/* Opens dataset `name`, checks rank (1 or 2) and numeric type, returns
 * the row count and (for rank 2) the column count. */
static hid_t open_dataset(reader *r, hid_t file, const char *name, int rank, hsize_t *rows,
                          hsize_t *cols, hymo_status *st)
{
    /* Check each path component so that a missing group is reported as
     * the missing dataset instead of an HDF5 traversal error. */
    char partial[64];
    for (const char *p = strchr(name + 1, '/'); ; p = strchr(p + 1, '/')) {
        size_t len = p ? (size_t)(p - name) : strlen(name);
        snprintf(partial, sizeof partial, "%.*s", (int)len, name);
        htri_t ok = H5Lexists(file, partial, H5P_DEFAULT);
        if (ok <= 0) {
            *st = fail(r, "missing dataset '%s'", name);
            return -1;
        }
        if (!p) break;
    }
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) {
        *st = fail(r, "cannot open dataset '%s'", name);
        return -1;
    }
    hid_t sp = H5Dget_space(ds), t = H5Dget_type(ds);
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    hsize_t dims[2] = {0, 0};
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd == rank) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
        *st = fail(r, "dataset '%s' is not numeric", name);
    } else if (nd != rank) {
        *st = fail(r, "dataset '%s' has rank %d, expected %d", name, nd, rank);
    }
    if (*st != HYMO_OK) {
        H5Dclose(ds);
        return -1;
    }
    *rows = dims[0];
    if (cols) *cols = rank == 2 ? dims[1] : 1;
    return ds;
}

/* Reads a whole [n] or [n x cols] dataset into a new array (never NULL). */
static hymo_status read_dataset(reader *r, hid_t file, const char *name, int rank, hsize_t n,
                                int *cols, int is_int, void **out)
{
    *out = NULL;
    hymo_status st = HYMO_OK;
    hsize_t rows = 0, c = 1;
    hid_t ds = open_dataset(r, file, name, rank, &rows, &c, &st);
    if (ds < 0) return st;
    if (rows != n && !(r->prefix_ok && rows > n)) {
        H5Dclose(ds);
        return fail(r, "inconsistent row counts: '%s' has %llu rows, '/time' has %llu", name,
                    (unsigned long long)rows, (unsigned long long)n);
    }
    if (cols) {
        if (*cols >= 0 && (hsize_t)*cols != c) {
            H5Dclose(ds);
            return fail(r, "dataset '%s' has %llu columns, expected %d", name,
                        (unsigned long long)c, *cols);
        }
        if (c > (hsize_t)INT32_MAX) {
            H5Dclose(ds);
            return fail(r, "dataset '%s' has too many columns", name);
        }
        *cols = (int)c;
    }
    size_t elem = is_int ? sizeof(int) : sizeof(double);
    if (c != 0 && n > SIZE_MAX / elem / c) {
        H5Dclose(ds);
        return fail(r, "dataset '%s' declares %llu x %llu values: damaged file", name,
                    (unsigned long long)n, (unsigned long long)c);
    }
    /* Before allocating: the values must be stored.  Deflate compresses at
     * most about 1032:1, so a dataset that declares far more values than
     * its stored bytes can hold (rows that were never written, or a damaged
     * dimension) is refused instead of allocating gigabytes of zeros. */
    const hsize_t raw = n * c * (hsize_t)elem;
    if (raw > RAW_FREE_BYTES) {
        const hsize_t stored = H5Dget_storage_size(ds);
        if (raw - RAW_FREE_BYTES > stored * MAX_COMPRESSION) {
            H5Dclose(ds);
            return fail(r, "dataset '%s' declares %llu x %llu values but stores only %llu bytes: "
                        "damaged or never written",
                        name, (unsigned long long)n, (unsigned long long)c,
                        (unsigned long long)stored);
        }
    }
    size_t count = (size_t)(n * c);
    *out = calloc(count > 0 ? count : 1, elem);
    if (!*out) {
        H5Dclose(ds);
        return nomem(r);
    }
    hid_t fspace = H5S_ALL, mspace = H5S_ALL;
    if (count > 0 && rows > n) { /* the first n rows of a file being written */
        hsize_t start[2] = {0, 0}, cnt[2] = {n, c};
        fspace = H5Dget_space(ds);
        mspace = H5Screate_simple(rank, cnt, NULL);
        if (fspace < 0 || mspace < 0 ||
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0) {
            st = fail(r, "cannot select the first %llu rows of '%s'", (unsigned long long)n, name);
        }
    }
    if (st == HYMO_OK && count > 0 &&
        H5Dread(ds, is_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, *out) < 0) {
        st = fail(r, "cannot read dataset '%s'", name);
    }
    if (mspace != H5S_ALL && mspace >= 0) H5Sclose(mspace);
    if (fspace != H5S_ALL && fspace >= 0) H5Sclose(fspace);
    H5Dclose(ds);
    return st;
}

/* ------------------------------------------------------------------ */
/* Summary                                                             */

static hid_t open_group(reader *r, hid_t file, const char *name, hymo_status *st)
{
    htri_t ok = H5Lexists(file, name, H5P_DEFAULT);
    if (ok <= 0) {
        *st = fail(r, "missing group '%s'", name);
        return -1;
    }
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    if (g < 0) *st = fail(r, "cannot open group '%s'", name);
    return g;
}

/* 1-D numeric array attribute of exactly n values, read as mem_type. */
static hymo_status attr_num_array(reader *r, hid_t obj, const char *where, const char *name, hid_t mem_type,
                                  void *out, int n)
{
    hymo_status st = HYMO_OK;
    hid_t a = open_attr(r, obj, where, name, &st);
    if (a < 0) return st;
    if (attr_npoints(a) != n) {
        st = fail(r, "attribute '%s' of '%s' does not have %d values", name, where, n);
    } else if (n > 0 && H5Aread(a, mem_type, out) < 0) {
        st = fail(r, "cannot read attribute '%s' of '%s'", name, where);
    }
    H5Aclose(a);
    return st;
}

/* The fluid law and per-volume pressure ranges on /states
 * (absent in older files: fluid_model stays ""). */
#define TRY(expr)                                                                                  \
    if (st == HYMO_OK) st = (expr)
static hymo_status read_volume_ranges(reader *r, hid_t states, hymo_run_summary *s)
{
    hymo_status st = HYMO_OK;
    s->fluid_model[0] = '\0';
    s->n_volume_ranges = s->n_volumes_total = s->n_volumes_below_floor = 0;
    s->p_floor = 0.0;
    if (H5Aexists(states, "fluid_model") <= 0) return HYMO_OK;
    TRY(attr_text(r, states, "/states", "fluid_model", s->fluid_model, sizeof s->fluid_model));
    TRY(attr_double(r, states, "/states", "p_floor", &s->p_floor));
    TRY(attr_int(r, states, "/states", "n_volumes_below_floor", &s->n_volumes_below_floor));
    TRY(attr_int(r, states, "/states", "n_volumes_total", &s->n_volumes_total));
    int n = 0;
    if (st == HYMO_OK) {
        hid_t a = H5Aopen(states, "volume_p_min", H5P_DEFAULT);
        if (a < 0) return fail(r, "cannot open attribute 'volume_p_min' of '/states'");
        hssize_t np = attr_npoints(a);
        H5Aclose(a);
        if (np < 0 || np > HYMO_SUMMARY_VOLUMES)
            return fail(r, "attribute 'volume_p_min' of '/states' has %ld values (at most %d)", (long)np,
                        HYMO_SUMMARY_VOLUMES);
        n = (int)np;
    }
    double v[4][HYMO_SUMMARY_VOLUMES];
    int below[HYMO_SUMMARY_VOLUMES];
    static const char *const keys[4] = {"volume_p_min", "volume_p_min_time", "volume_p_max", "volume_p_max_time"};
    for (int i = 0; i < 4; ++i) TRY(attr_num_array(r, states, "/states", keys[i], H5T_NATIVE_DOUBLE, v[i], n));
    TRY(attr_num_array(r, states, "/states", "volume_below_floor", H5T_NATIVE_INT, below, n));
    char(*names)[HYMO_REF_TEXT_MAX] = NULL;
    if (st == HYMO_OK && n > 0) st = attr_name_table(r, states, "/states", "volume_names", n, 0, &names);
    if (st != HYMO_OK) {
        free(names);
        return st;
    }
    for (int k = 0; k < n; ++k) {
        hymo_volume_range *vr = &s->volume_ranges[k];
        copy_text(vr->name, sizeof vr->name, names[k]);
        vr->p_min = v[0][k], vr->p_min_time = v[1][k], vr->p_max = v[2][k], vr->p_max_time = v[3][k];
        vr->below_floor = below[k];
    }
    free(names);
    s->n_volume_ranges = n;
    return HYMO_OK;
}
#undef TRY

static hymo_status read_summary_attrs(reader *r, hid_t file, hymo_run_summary *s)
{
    hymo_status st = HYMO_OK;
    hid_t solver = open_group(r, file, "/solver", &st);
    if (solver < 0) return st;
    hid_t energy = open_group(r, file, "/energy", &st);
    hid_t cons = energy >= 0 ? open_group(r, file, "/constraints", &st) : -1;
#define TRY(expr)                                                                                  \
    if (st == HYMO_OK) st = (expr)
    TRY(attr_double(r, solver, "/solver", "wall_time", &s->wall_time));
    TRY(attr_double(r, solver, "/solver", "mean_iterations", &s->mean_iterations));
    TRY(attr_int(r, solver, "/solver", "max_iterations", &s->max_iterations));
    TRY(attr_long(r, solver, "/solver", "jacobian_evaluations", &s->jacobian_evaluations));
    TRY(attr_text(r, solver, "/solver", "independent", s->independent_list, sizeof s->independent_list));
    copy_text(s->independent, sizeof s->independent, s->independent_list);
    TRY(attr_int(r, solver, "/solver", "n_reselections", &s->n_reselections));
    TRY(attr_long(r, solver, "/solver", "n_steps", &s->n_steps));
    TRY(attr_double(r, solver, "/solver", "t_reached", &s->t_reached));
    s->has_pressure_range = 0;
    hid_t states = st == HYMO_OK ? open_group(r, file, "/states", &st) : -1;
    if (states >= 0 && H5Aexists(states, "p_min") > 0) {
        TRY(attr_double(r, states, "/states", "p_min", &s->p_min));
        TRY(attr_double(r, states, "/states", "p_min_time", &s->p_min_time));
        TRY(attr_text(r, states, "/states", "p_min_volume", s->p_min_volume, sizeof s->p_min_volume));
        TRY(attr_double(r, states, "/states", "p_max", &s->p_max));
        TRY(attr_double(r, states, "/states", "p_max_time", &s->p_max_time));
        TRY(attr_text(r, states, "/states", "p_max_volume", s->p_max_volume, sizeof s->p_max_volume));
        TRY(attr_int(r, states, "/states", "n_volumes_below_zero", &s->n_volumes_below_zero));
        TRY(read_volume_ranges(r, states, s));
        s->has_pressure_range = st == HYMO_OK;
    }
    if (states >= 0) H5Gclose(states);
    s->wall_total = 0.0;
    if (st == HYMO_OK && H5Aexists(solver, "wall_total") > 0)
        TRY(attr_double(r, solver, "/solver", "wall_total", &s->wall_total));
    s->n_events = s->event_iterations = 0; /* files before events were located */
    if (st == HYMO_OK && H5Aexists(solver, "n_events") > 0) {
        TRY(attr_long(r, solver, "/solver", "n_events", &s->n_events));
        TRY(attr_long(r, solver, "/solver", "event_iterations", &s->event_iterations));
    }
    s->step_halvings = 0; /* written only when > 0 */
    if (st == HYMO_OK && H5Aexists(solver, "step_halvings") > 0)
        TRY(attr_long(r, solver, "/solver", "step_halvings", &s->step_halvings));
    TRY(attr_double(r, energy, "/energy", "peak_drift", &s->peak_drift));
    TRY(attr_double(r, energy, "/energy", "max_work", &s->max_work));
    TRY(attr_double(r, energy, "/energy", "relative_drift", &s->relative_drift));
    TRY(attr_double(r, cons, "/constraints", "max_position", &s->max_constraint_position));
    TRY(attr_double(r, cons, "/constraints", "max_velocity", &s->max_constraint_velocity));
    TRY(attr_double(r, cons, "/constraints", "max_acceleration",
                    &s->max_constraint_acceleration));
    if (st == HYMO_OK && cons >= 0 && H5Aexists(cons, "rank") > 0) {
        TRY(attr_int(r, cons, "/constraints", "rank", &s->constraint_rank));
        TRY(attr_int(r, cons, "/constraints", "n_redundant", &s->n_redundant));
        TRY(attr_text(r, cons, "/constraints", "redundant_rows", s->redundant, sizeof s->redundant));
        TRY(attr_double(r, cons, "/constraints", "max_redundant_violation", &s->max_redundant_violation));
    }
#undef TRY
    if (cons >= 0) H5Gclose(cons);
    if (energy >= 0) H5Gclose(energy);
    H5Gclose(solver);
    return st;
}

static double max_row_norm(const double *m, int n, int cols)
{
    double best = 0.0;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < cols; j++) s += m[(size_t)i * cols + j] * m[(size_t)i * cols + j];
        if (sqrt(s) > best) best = sqrt(s);
    }
    return best;
}

/* The optional /accuracy group (the run's own error estimate). */
static hymo_status read_accuracy(reader *r, hid_t file, hymo_run_summary *s)
{
    s->has_accuracy = 0;
    htri_t has = H5Lexists(file, "/accuracy", H5P_DEFAULT);
    if (has < 0) H5Eclear2(H5E_DEFAULT);
    if (has <= 0) return HYMO_OK;
    hymo_status st = HYMO_OK;
    hid_t g = open_group(r, file, "/accuracy", &st);
    if (g < 0) return st;
    if (st == HYMO_OK) st = attr_double(r, g, "/accuracy", "z_max_error", &s->z_max_error);
    if (st == HYMO_OK) st = attr_double(r, g, "/accuracy", "p_max_error", &s->p_max_error);
    if (st == HYMO_OK) st = attr_double(r, g, "/accuracy", "s_max_error", &s->s_max_error);
    if (st == HYMO_OK)
        st = attr_text(r, g, "/accuracy", "method", s->accuracy_method, sizeof s->accuracy_method);
    H5Gclose(g);
    s->has_accuracy = st == HYMO_OK;
    return st;
}

/* The optional root attribute accuracy_missing_reason ("" when absent). */
static hymo_status read_accuracy_missing(reader *r, hid_t file, hymo_run_summary *s)
{
    s->accuracy_missing_reason[0] = '\0';
    hymo_status st = HYMO_OK;
    if (!attr_present(r, file, "/", "accuracy_missing_reason", &st)) return st;
    return attr_text(r, file, "/", "accuracy_missing_reason", s->accuracy_missing_reason,
                     sizeof s->accuracy_missing_reason);
}

/* Summary of a killed run (no summary attributes), from the datasets. */
static void derive_summary(hymo_reference *ref)
{
    hymo_run_summary *s = &ref->summary;
    const int n = ref->n;
    s->t_reached = n > 0 ? ref->time[n - 1] : 0.0;
    s->n_steps = -1;
    s->peak_drift = 0.0;
    s->max_work = 0.0;
    long iter_sum = 0;
    s->max_iterations = 0;
    for (int i = 0; i < n; i++) {
        if (fabs(ref->drift[i]) > s->peak_drift) s->peak_drift = fabs(ref->drift[i]);
        double w = 0.0;
        for (int a = 0; a < ref->na; a++) w += ref->work[(size_t)i * ref->na + a];
        if (fabs(w) > s->max_work) s->max_work = fabs(w);
        iter_sum += ref->iterations[i];
        if (ref->iterations[i] > s->max_iterations) s->max_iterations = ref->iterations[i];
    }
    s->relative_drift = s->max_work > 0.0 ? s->peak_drift / s->max_work : 0.0;
    s->mean_iterations = n > 0 ? (double)iter_sum / n : 0.0;
    s->max_constraint_position = max_row_norm(ref->c_pos, n, ref->ncut);
    s->max_constraint_velocity = max_row_norm(ref->c_vel, n, ref->ncut);
    s->max_constraint_acceleration = max_row_norm(ref->c_acc, n, ref->ncut);
    s->jacobian_evaluations = 0;
    copy_text(s->independent, sizeof s->independent, "unknown");
    s->n_reselections = 0;
    s->wall_time = 0.0;
}

/* ------------------------------------------------------------------ */
/* Read                                                                */

static hymo_status read_root(reader *r, hid_t f, hymo_reference *ref)
{
    hymo_status st = HYMO_OK;
    st = attr_int(r, f, "/", "format_version", &ref->format_version);
    if (st != HYMO_OK) return st;
    if (ref->format_version != HYMO_REF_FORMAT_VERSION) {
        return hymo_error_set(r->err, HYMO_ERR_HDF5,
                              "reference file '%s': format_version %d is not supported (this "
                              "hymo reads format_version %d)",
                              r->path, ref->format_version, HYMO_REF_FORMAT_VERSION);
    }
#define TRY(expr)                                                                                  \
    if (st == HYMO_OK) st = (expr)
#define TEXT(name, dst) TRY(attr_text(r, f, "/", name, dst, sizeof dst))
    TEXT("hymo_version", ref->hymo_version);
    TEXT("created_utc", ref->created_utc);
    TEXT("model_name", ref->model_name);
    TRY(attr_text_alloc(r, f, "/", "model_source", &ref->model_source));
    TEXT("model_sha256", ref->model_sha256);
    TEXT("formulation", ref->formulation);
    TEXT("integrator", ref->integrator);
    TEXT("jacobian", ref->jacobian);
    TEXT("linear_solver", ref->linear_solver);
    TRY(attr_double(r, f, "/", "dt", &ref->dt));
    TRY(attr_double(r, f, "/", "t_end", &ref->t_end));
    TRY(attr_double(r, f, "/", "tol_position", &ref->tol_position));
    TRY(attr_double(r, f, "/", "tol_pressure", &ref->tol_pressure));
    TRY(attr_double(r, f, "/", "tol_spool", &ref->tol_spool));
    TRY(attr_int(r, f, "/", "max_iter", &ref->max_iter));
    TRY(attr_double(r, f, "/", "penalty_alpha", &ref->penalty_alpha));
    TRY(attr_int(r, f, "/", "complete", &ref->complete));
    /* optional */
    if (st == HYMO_OK && attr_present(r, f, "/", "model_physics_sha256", &st)) {
        TEXT("model_physics_sha256", ref->model_physics_sha256);
        if (st == HYMO_OK && strlen(ref->model_physics_sha256) != 64) {
            return fail(r, "root attribute 'model_physics_sha256' is not a SHA-256 digest");
        }
    }
    if (st == HYMO_OK && attr_present(r, f, "/", "overrides", &st)) {
        TRY(attr_text_alloc(r, f, "/", "overrides", &ref->overrides));
    }
    if (st == HYMO_OK && attr_present(r, f, "/", "output_every", &st)) {
        TRY(attr_int(r, f, "/", "output_every", &ref->output_every));
        if (st == HYMO_OK && ref->output_every < 1) {
            return fail(r, "root attribute 'output_every' is %d, expected >= 1", ref->output_every);
        }
    }
#undef TEXT
#undef TRY
    if (st == HYMO_OK && ref->complete != 0 && ref->complete != 1) {
        return fail(r, "root attribute 'complete' is %d, expected 0 or 1", ref->complete);
    }
    if (st == HYMO_OK && !(isfinite(ref->dt) && ref->dt > 0.0 && isfinite(ref->t_end))) {
        return fail(r, "root attributes dt = %g, t_end = %g are not a positive step and a finite end",
                    ref->dt, ref->t_end);
    }
    return st;
}

static hymo_status read_datasets(reader *r, hid_t f, hymo_reference *ref)
{
    hymo_status st = HYMO_OK;
    hsize_t n = 0;
    const char *time_path = hymo_ref_signals[HYMO_SIG_TIME].path; /* its rows are N */
    hid_t t = open_dataset(r, f, time_path, 1, &n, NULL, &st);
    if (t < 0) return st;
    H5Dclose(t);
    if (n > (hsize_t)INT32_MAX) return fail(r, "dataset '%s' has too many rows", time_path);
    /* Before anything is allocated: a complete file's rows are bounded by
     * its own step count (row 0 + one per step at most). */
    if (ref->complete) {
        htri_t has = H5Aexists_by_name(f, "/solver", "n_steps", H5P_DEFAULT);
        if (has < 0) H5Eclear2(H5E_DEFAULT);
        if (has > 0) {
            hid_t g = H5Gopen2(f, "/solver", H5P_DEFAULT);
            if (g < 0) return fail(r, "cannot open group '/solver'");
            long n_steps = 0;
            st = attr_long(r, g, "/solver", "n_steps", &n_steps);
            H5Gclose(g);
            if (st != HYMO_OK) return st;
            if (n_steps < 0 || n > (hsize_t)n_steps + 1) {
                return fail(r, "'%s' has %llu rows but the file says n_steps = %ld (at most n_steps + 1 "
                            "rows): damaged file",
                            time_path, (unsigned long long)n, n_steps);
            }
        }
    }
    ref->n = (int)n;
    /* -1: the column count comes from the first dataset of that dimension */
    for (int k = HYMO_COLS_ONE + 1; k < HYMO_COLS_COUNT; k++) {
        *(int *)(void *)((char *)ref + hymo_ref_dimensions[k].ref_count) = -1;
    }

    /* The data of every signal, in table order. */
    for (int i = 0; st == HYMO_OK && i < HYMO_SIGNAL_COUNT; i++) {
        const hymo_ref_signal *sg = &hymo_ref_signals[i];
        const int two_d = sg->cols != HYMO_COLS_ONE;
        int *cols = two_d ? (int *)(void *)((char *)ref + hymo_ref_dimensions[sg->cols].ref_count)
                          : NULL;
        void *data = NULL;
        st = read_dataset(r, f, sg->path, two_d ? 2 : 1, n, cols, sg->type == HYMO_SIG_I32,
                          &data);
        hymo_ref_signal_set(sg, ref, sg->ref, data);
    }

    /* Column names from the first dataset of each dimension; the units of
     * the joint coordinates (z_units) from the signal whose per-column units
     * are those units themselves (suffix "": /states/z). */
    int named[HYMO_COLS_COUNT] = {0};
    int have_units = 0;
    for (int i = 0; st == HYMO_OK && i < HYMO_SIGNAL_COUNT; i++) {
        const hymo_ref_signal *sg = &hymo_ref_signals[i];
        const int want_units =
            sg->unit_rule == HYMO_UNITS_PER_COORD && !sg->units[0] && !have_units;
        if (sg->cols == HYMO_COLS_ONE || (named[sg->cols] && !want_units)) continue;
        const hymo_ref_dimension *dim = &hymo_ref_dimensions[sg->cols];
        const int count = *(const int *)(const void *)((const char *)ref + dim->ref_count);
        hid_t ds = H5Dopen2(f, sg->path, H5P_DEFAULT);
        if (ds < 0) return fail(r, "cannot open dataset '%s'", sg->path);
        if (!named[sg->cols]) {
            char(**names)[HYMO_REF_TEXT_MAX] = (void *)((char *)ref + dim->ref_names);
            st = attr_name_table(r, ds, sg->path, "names", count, 0, names);
            named[sg->cols] = 1;
        }
        if (st == HYMO_OK && want_units) {
            st = attr_name_table(r, ds, sg->path, "units", count, 1, &ref->z_units);
            have_units = 1;
        }
        H5Dclose(ds);
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* Optional /cosim group (co-simulation runs)                          */

/* Optional attributes: absent -> *st untouched and 0 returned; present ->
 * read with the usual type checks. */
static int attr_present(reader *r, hid_t obj, const char *where, const char *name,
                        hymo_status *st)
{
    if (*st != HYMO_OK) return 0;
    htri_t has = H5Aexists(obj, name);
    if (has < 0) *st = fail(r, "cannot query attribute '%s' of '%s'", name, where);
    return has > 0;
}

static hymo_status read_cosim(reader *r, hid_t f, hymo_reference *ref)
{
    hymo_status st = HYMO_OK;
    htri_t has = H5Lexists(f, "/cosim", H5P_DEFAULT);
    if (has < 0) return fail(r, "cannot query group '/cosim'");
    if (has == 0) return HYMO_OK;
    hid_t g = H5Oopen(f, "/cosim", H5P_DEFAULT);
    if (g < 0) return fail(r, "cannot open group '/cosim'");
    if (H5Iget_type(g) != H5I_GROUP) {
        H5Oclose(g);
        return fail(r, "'/cosim' is not a group");
    }

    ref->cosim_H = ref->cosim_h_m = ref->cosim_h_h = NAN;
    ref->cosim_residual_energy_final = NAN;
    static const struct {
        const char *name;
        size_t off;
    } texts[] = {
        {"scheme", offsetof(hymo_reference, cosim_scheme)},
        {"coupling", offsetof(hymo_reference, cosim_coupling)},
        {"extrapolation", offsetof(hymo_reference, cosim_extrapolation)},
        {"hyd_integrator", offsetof(hymo_reference, cosim_hyd_integrator)},
        {"mech_integrator", offsetof(hymo_reference, cosim_mech_integrator)},
        {"status", offsetof(hymo_reference, cosim_status)},
        {"status_reason", offsetof(hymo_reference, cosim_status_reason)},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (attr_present(r, g, "/cosim", texts[i].name, &st)) {
            st = attr_text(r, g, "/cosim", texts[i].name, (char *)ref + texts[i].off,
                           HYMO_REF_TEXT_MAX);
        }
    }
    static const struct {
        const char *name;
        size_t off;
    } numbers[] = {
        {"H", offsetof(hymo_reference, cosim_H)},
        {"h_m", offsetof(hymo_reference, cosim_h_m)},
        {"h_h", offsetof(hymo_reference, cosim_h_h)},
        {"residual_energy_final", offsetof(hymo_reference, cosim_residual_energy_final)},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (attr_present(r, g, "/cosim", numbers[i].name, &st)) {
            st = attr_double(r, g, "/cosim", numbers[i].name,
                             (double *)(void *)((char *)ref + numbers[i].off));
        }
    }
    int n_bonds = -1; /* -1: take the column count of the first matrix */
    if (attr_present(r, g, "/cosim", "n_bonds", &st)) {
        st = attr_int(r, g, "/cosim", "n_bonds", &n_bonds);
        if (st == HYMO_OK && n_bonds < 0) {
            st = fail(r, "attribute 'n_bonds' of '/cosim' is %d, expected >= 0", n_bonds);
        }
    }
    H5Oclose(g);

    const hsize_t n = (hsize_t)ref->n;
    void *tmp = NULL;
    if (st == HYMO_OK) {
        st = read_dataset(r, f, "/cosim/residual_power", 2, n, &n_bonds, 0, &tmp);
        ref->residual_power = tmp;
    }
    if (st == HYMO_OK) {
        st = read_dataset(r, f, "/cosim/residual_energy", 2, n, &n_bonds, 0, &tmp);
        ref->residual_energy = tmp;
    }
    if (st == HYMO_OK) {
        st = read_dataset(r, f, "/cosim/residual_energy_total", 1, n, NULL, 0, &tmp);
        ref->residual_energy_total = tmp;
    }
    if (st == HYMO_OK) {
        hid_t ds = H5Dopen2(f, "/cosim/residual_energy", H5P_DEFAULT);
        if (ds < 0) {
            st = fail(r, "cannot open dataset '/cosim/residual_energy'");
        } else {
            if (attr_present(r, ds, "/cosim/residual_energy", "names", &st)) {
                st = attr_name_table(r, ds, "/cosim/residual_energy", "names", n_bonds, 0,
                                     &ref->bond_names);
            }
            H5Dclose(ds);
        }
    }
    if (st == HYMO_OK) {
        ref->n_bonds = n_bonds;
        ref->has_cosim = 1;
    }
    return st;
}

/* Releases what read_cosim loaded (after a failure or in hymo_ref_free). */
static void free_cosim(hymo_reference *ref)
{
    free(ref->residual_power);
    free(ref->residual_energy);
    free(ref->residual_energy_total);
    free(ref->bond_names);
    ref->residual_power = ref->residual_energy = ref->residual_energy_total = NULL;
    ref->bond_names = NULL;
    ref->has_cosim = 0;
}

/* 1 if a writer holds the advisory lock of a file it is writing
 * (ref_writer.c, lock_partial): the file is being written right now. */
static int writer_holds(const char *path)
{
#ifdef F_OFD_GETLK
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_RDLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 1;
    const int held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd);
    return held;
#else
    (void)path;
    return 0;
#endif
}

hymo_status hymo_ref_read(const char *path, hymo_reference **out, hymo_error *err)
{
    if (out) *out = NULL;
    if (!path || !out) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_read: NULL argument");
    reader r = {path, err, 0};

    FILE *probe = fopen(path, "rb");
    if (!probe) {
        return hymo_error_set(err, HYMO_ERR_IO, "cannot open reference file '%s': %s", path,
                              strerror(errno));
    }
    /* Superblock version 2 or 3 at offset 0 (hymo's files): byte 11 holds
     * the file consistency flags; 0x04 = open in SWMR-write mode (a file
     * being written, or whose writer was killed). */
    unsigned char sb[12];
    const int swmr = fread(sb, 1, sizeof sb, probe) == sizeof sb && !memcmp(sb, "\211HDF\r\n\032\n", 8) &&
                     sb[8] >= 3 && (sb[11] & 0x04);
    fclose(probe);
    const int live = writer_holds(path);

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    htri_t is_h5 = H5Fis_hdf5(path);
    if (is_h5 <= 0) {
        if (is_h5 < 0) return fail(&r, "cannot check file signature");
        H5Eclear2(H5E_DEFAULT);
        return hymo_error_set(err, HYMO_ERR_HDF5, "'%s' is not an HDF5 file", path);
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f = -1;
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0) {
        /* A killed run's ".partial" file (latest file format) is still
         * marked "open for write"; read it anyway, read-only, as h5clear
         * would (HDF5's property of that tool; ignored if unknown). */
        hbool_t clear = 1;
        if (H5Pexist(fapl, "clear_status_flags") > 0) H5Pset(fapl, "clear_status_flags", &clear);
#if H5_VERSION_GE(1, 10, 7)
        H5Pset_file_locking(fapl, 0, 1); /* read-only: no lock needed (also on NFS) */
#endif
        H5Eclear2(H5E_DEFAULT);
        /* A file in SWMR-write mode is read as HDF5's SWMR reader, which
         * sees a consistent file while the writer appends; otherwise (or
         * if that fails) as an ordinary read-only file. */
        /* The SWMR reader retries a metadata read whose checksum fails,
         * sleeping 1, 2, 4, ... ns in between; libhdf5's default of 100
         * attempts never ends on a damaged file.  20 attempts: < 2.1 ms. */
        if (swmr) H5Pset_metadata_read_attempts(fapl, 20);
        if (swmr) f = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
        if (f < 0) {
            H5Eclear2(H5E_DEFAULT);
            f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        } else {
            r.prefix_ok = 1;
        }
    }
    if (f < 0) {
        hymo_status st = fail(&r, "cannot open HDF5 file");
        if (fapl >= 0) H5Pclose(fapl);
        return st;
    }
    H5Pclose(fapl);

    hymo_reference *ref = calloc(1, sizeof *ref);
    if (!ref) {
        H5Fclose(f);
        return nomem(&r);
    }
    ref->swmr = r.prefix_ok;
    ref->live = live;
    hymo_status st = read_root(&r, f, ref);
    if (ref->complete) r.prefix_ok = 0; /* a complete file: every row count is N */
    if (st == HYMO_OK) st = read_datasets(&r, f, ref);
    if (st == HYMO_OK) {
        hymo_run_summary *s = &ref->summary;
        copy_text(s->model_name, sizeof s->model_name, ref->model_name);
        copy_text(s->formulation, sizeof s->formulation, ref->formulation);
        copy_text(s->jacobian, sizeof s->jacobian, ref->jacobian);
        copy_text(s->linear_solver, sizeof s->linear_solver, ref->linear_solver);
        copy_text(s->integrator, sizeof s->integrator, ref->integrator);
        s->dt = ref->dt;
        s->t_end = ref->t_end;
        s->complete = ref->complete;
        /* A killed run's file has no summary attributes: recompute what the
         * datasets allow.  A file closed normally must have all of them. */
        htri_t has = H5Aexists_by_name(f, "/solver", "n_steps", H5P_DEFAULT);
        if (has < 0) H5Eclear2(H5E_DEFAULT);
        if (has <= 0 && !ref->complete) {
            ref->has_summary = 0;
            derive_summary(ref);
        } else {
            ref->has_summary = 1;
            st = read_summary_attrs(&r, f, s);
            if (st == HYMO_OK) st = read_accuracy(&r, f, s);
            if (st == HYMO_OK) st = read_accuracy_missing(&r, f, s);
        }
    }
    if (st == HYMO_OK) st = read_cosim(&r, f, ref);
    if (H5Fclose(f) < 0 && st == HYMO_OK) st = fail(&r, "cannot close file");
    if (st != HYMO_OK) {
        hymo_ref_free(ref);
        return st;
    }
    *out = ref;
    return HYMO_OK;
}

void hymo_ref_free(hymo_reference *ref)
{
    if (!ref) return;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        free(hymo_ref_signal_get(&hymo_ref_signals[i], ref, hymo_ref_signals[i].ref));
    }
    for (int k = HYMO_COLS_ONE + 1; k < HYMO_COLS_COUNT; k++) {
        char(**names)[HYMO_REF_TEXT_MAX] = (void *)((char *)ref + hymo_ref_dimensions[k].ref_names);
        free(*names);
    }
    free(ref->z_units);
    free(ref->model_source);
    free(ref->overrides);
    free_cosim(ref);
    free(ref);
}

/* ------------------------------------------------------------------ */
/* Consistency of a file read above (before it is trusted)              */

static int close_to(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

hymo_status hymo_ref_validate(const hymo_reference *ref, const char *path, hymo_error *err)
{
    if (!ref) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_ref_validate: NULL reference");
    if (!path) path = "(reference)";
    const hymo_run_summary *s = &ref->summary;
#define BAD(...)                                                                                   \
    do {                                                                                           \
        char what_[320];                                                                           \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                                \
        return hymo_error_set(err, HYMO_ERR_HDF5, "reference file '%s': %s: damaged or altered file", \
                              path, what_);                                                        \
    } while (0)
    if (ref->n < 0 || (ref->n > 0 && !ref->time)) BAD("no time vector");
    for (int i = 0; i < ref->n; i++) {
        if (!isfinite(ref->time[i])) BAD("/time is not finite in row %d", i);
        if (i > 0 && ref->time[i] < ref->time[i - 1]) {
            BAD("/time decreases in row %d (%.17g < %.17g)", i, ref->time[i], ref->time[i - 1]);
        }
    }
    const long n_steps = ref->has_summary ? s->n_steps : -1;
    if (n_steps >= 0 && ref->n > n_steps + 1) {
        BAD("%d rows but n_steps = %ld (at most n_steps + 1 rows)", ref->n, n_steps);
    }
    if (!ref->complete) return HYMO_OK;

    /* complete = 1: the whole run is there */
    if (!ref->has_summary || n_steps < 0) BAD("complete = 1 but no step count");
    if (ref->n < 1) BAD("complete = 1 but no rows");
    const double t_last = ref->time[ref->n - 1];
    const double scale = fmax(1.0, fabs(ref->t_end));
    if (!close_to(t_last, s->t_reached, 1e-9 * scale)) {
        BAD("the last row is at t = %.17g s but t_reached = %.17g s (%d rows)", t_last, s->t_reached,
            ref->n);
    }
    if (!close_to(t_last, ref->t_end, 0.5 * ref->dt + 1e-9 * scale)) {
        BAD("complete = 1 but the last row is at t = %.17g s, not t_end = %.17g s (%d rows)", t_last,
            ref->t_end, ref->n);
    }
    if (ref->output_every > 0) {
        const long k = ref->output_every;
        const long want = n_steps / k + 1 + (n_steps % k != 0);
        if (ref->n != want) {
            BAD("%d rows, but n_steps = %ld with output_every = %ld means %ld rows", ref->n, n_steps, k,
                want);
        }
    } else if (n_steps >= 1 && ref->n < 2) {
        BAD("%d row for n_steps = %ld", ref->n, n_steps);
    }
#undef BAD
    return HYMO_OK;
}

int hymo_model_identity(const char *sha256_a, const char *physics_a, const char *sha256_b,
                        const char *physics_b)
{
    if (sha256_a && sha256_b && sha256_a[0] && !strcmp(sha256_a, sha256_b)) return HYMO_MODEL_SAME_TEXT;
    if (physics_a && physics_b && strlen(physics_a) == 64 && !strcmp(physics_a, physics_b)) {
        return HYMO_MODEL_SAME_PHYSICS;
    }
    return HYMO_MODEL_DIFFERENT;
}
