/* The Fletcher-32 checksum and filter of reference/h5fletcher.c:
 * - hymo_fletcher32 equals HDF5's own H5_checksum_fletcher32 on 3000
 *   random buffers of 0..3000 bytes (odd lengths, blocks of 360 words and
 *   their remainders), on all-0xff buffers (the largest sums) and on
 *   every length up to 800 of one buffer;
 * - the chunks the reference writer stores itself (H5Dwrite_chunk, no
 *   deflate): see test_written_chunks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "test_hdf5.h"
#include "test_util.h"

/* HDF5's own checksum (exported by libhdf5, declared in its private headers) */
uint32_t H5_checksum_fletcher32(const void *data, size_t len);

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng >> 33);
}

static void test_same_as_hdf5(void **state)
{
    (void)state;
    enum { NMAX = 3000 };
    static unsigned char buf[NMAX + 16];
    for (int t = 0; t < 3000; ++t) {
        const size_t n = rnd() % (NMAX + 1);
        const size_t off = rnd() % 16; /* unaligned starts */
        for (size_t i = 0; i < n; ++i) buf[off + i] = (unsigned char)rnd();
        const uint32_t a = hymo_fletcher32(buf + off, n), b = H5_checksum_fletcher32(buf + off, n);
        if (a != b) fail_msg("n = %zu: %08x, HDF5 %08x", n, a, b);
    }
    memset(buf, 0xff, sizeof buf);
    for (size_t n = 0; n <= NMAX; n += 7) assert_int_equal(hymo_fletcher32(buf, n), H5_checksum_fletcher32(buf, n));
    for (size_t i = 0; i < sizeof buf; ++i) buf[i] = (unsigned char)rnd();
    for (size_t n = 0; n <= 800; ++n) assert_int_equal(hymo_fletcher32(buf, n), H5_checksum_fletcher32(buf, n));
}

/* Every stored chunk of a file hymo writes (four-bar, 1.5 s: 1501 rows, a
 * whole chunk of 1024 rows and an edge chunk) is its rows, then HDF5's
 * checksum of them; HDF5's own Fletcher32 filter reads every dataset back
 * (it checks each chunk), and a changed byte in a chunk is refused. */
static int n_chunks, n_datasets;

static herr_t check_dataset(hid_t loc, const char *name, const H5O_info_t *info, void *data)
{
    (void)data;
    if (info->type != H5O_TYPE_DATASET) return 0;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t dcpl = H5Dget_create_plist(ds);
    hsize_t chunk[2] = {0, 1};
    const int rank = H5Pget_chunk(dcpl, 2, chunk);
    H5Pclose(dcpl);
    if (rank < 1) {
        H5Dclose(ds);
        return 0;
    }
    hid_t t = H5Dget_type(ds);
    const size_t elem = H5Tget_size(t);
    H5Tclose(t);
    const size_t bytes = (size_t)chunk[0] * (size_t)(rank == 2 ? chunk[1] : 1) * elem;
    hsize_t n = 0;
    hid_t fsp = H5Dget_space(ds);
    assert_true(H5Dget_num_chunks(ds, fsp, &n) >= 0);
    unsigned char *raw = malloc(bytes + 4);
    assert_non_null(raw);
    for (hsize_t c = 0; c < n; ++c) {
        hsize_t off[2] = {0, 0}, size = 0;
        unsigned mask = 0;
        haddr_t addr;
        assert_true(H5Dget_chunk_info(ds, fsp, c, off, &mask, &addr, &size) >= 0);
        assert_int_equal(size, bytes + 4);
        uint32_t filters = 0;
        assert_true(H5Dread_chunk(ds, H5P_DEFAULT, off, &filters, raw) >= 0);
        assert_int_equal(filters, 0);
        const uint32_t sum = H5_checksum_fletcher32(raw, bytes);
        const unsigned char le[4] = {(unsigned char)sum, (unsigned char)(sum >> 8), (unsigned char)(sum >> 16),
                                     (unsigned char)(sum >> 24)};
        if (memcmp(raw + bytes, le, 4) != 0) fail_msg("%s chunk %llu: wrong checksum", name, (unsigned long long)c);
        ++n_chunks;
    }
    free(raw);
    H5Sclose(fsp);
    hid_t sp = H5Dget_space(ds);
    const hssize_t np = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    void *v = malloc((size_t)(np > 0 ? np : 1) * elem);
    assert_non_null(v);
    hid_t mt = H5Dget_type(ds);
    assert_true(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Tclose(mt);
    free(v);
    H5Dclose(ds);
    ++n_datasets;
    return 0;
}

static void test_written_chunks(void **state)
{
    (void)state;
    const char *out = "test_fletcher.h5";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run %s/fourbar.yaml --t-end 1.5 -q --no-estimate -o %s", HYMO_BINARY, HYMO_DATA_DIR,
             out);
    assert_int_equal(system(cmd), 0);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    n_chunks = n_datasets = 0;
    assert_true(H5Ovisit(f, H5_INDEX_NAME, H5_ITER_NATIVE, check_dataset, NULL) >= 0);
    print_message("%d chunks of %d datasets: stored checksums are HDF5's\n", n_chunks, n_datasets);
    assert_true(n_datasets >= 15);
    assert_true(n_chunks >= 40); /* two per dataset with columns */
    /* one byte of /time's first chunk changed: HDF5 refuses to read it */
    hid_t ds = H5Dopen2(f, "time", H5P_DEFAULT);
    assert_true(ds >= 0);
    static unsigned char raw[1024 * 8 + 4];
    hsize_t off[1] = {0};
    uint32_t filters = 0;
    assert_true(H5Dread_chunk(ds, H5P_DEFAULT, off, &filters, raw) >= 0);
    H5Dclose(ds);
    H5Fclose(f);
    f = H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT);
    ds = H5Dopen2(f, "time", H5P_DEFAULT);
    raw[80] ^= 0x04;
    assert_true(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, off, sizeof raw, raw) >= 0);
    static double t[1501];
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0);
    H5Dclose(ds);
    H5Fclose(f);
    remove(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_hdf5),
        cmocka_unit_test(test_written_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
