/* `hymo sweep` across the ranks of an MPI job (-DHYMO_MPI=ON).  Linked
 * into the hymo executable only, so libhymo never depends on MPI.
 *
 * MPI is started only when the process was launched by mpirun/mpiexec
 * (its environment names a rank); `hymo sweep` run directly stays a
 * threaded sweep without any MPI start-up.  Only the main thread calls MPI
 * (MPI_THREAD_FUNNELED); the sweep's worker threads run co-simulations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* 1 when a process manager started this process as one rank of several. */
static int launched_by_mpirun(void)
{
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"};
    for (size_t k = 0; k < sizeof size_vars / sizeof size_vars[0]; ++k) {
        const char *v = getenv(size_vars[k]);
        if (v && atoi(v) > 1) return 1;
    }
    return 0;
}

#ifdef HYMO_MPI
#include <limits.h>
#include <mpi.h>

typedef struct {
    MPI_Comm world;
    int rank, size, local_size;
} mpi_content;

static void mpi_layout(void *content, int *rank, int *size, int *local_size)
{
    const mpi_content *m = content;
    *rank = m->rank;
    *size = m->size;
    *local_size = m->local_size;
}

static int mpi_max(void *content, int v)
{
    const mpi_content *m = content;
    int out = v;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, m->world);
    return out;
}

static long mpi_sum(void *content, long v)
{
    const mpi_content *m = content;
    long out = v;
    MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_SUM, m->world);
    return out;
}

static int mpi_bcast(void *content, void **data, size_t *n)
{
    const mpi_content *m = content;
    unsigned long long len = *n;
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, m->world);
    int ok = len <= INT_MAX;
    if (ok && m->rank != 0) {
        *data = malloc(len ? (size_t)len : 1);
        ok = *data != NULL;
        *n = (size_t)len;
    }
    /* every rank learns whether every rank can take the bytes */
    int all_ok = ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->world);
    if (!all_ok) {
        if (m->rank == 0)
            fprintf(stderr, "hymo: error: sweep: cannot send the %llu-byte reference to every rank\n", len);
        return -1;
    }
    MPI_Bcast(*data, (int)len, MPI_BYTE, 0, m->world);
    return 0;
}

static int mpi_gather(void *content, const void *mine, size_t n, void **all, size_t *n_all)
{
    const mpi_content *m = content;
    int count = n <= INT_MAX ? (int)n : -1;
    int *counts = NULL, *displs = NULL, ok = 1;
    *all = NULL;
    *n_all = 0;
    if (m->rank == 0) {
        counts = calloc((size_t)m->size, sizeof *counts);
        displs = calloc((size_t)m->size, sizeof *displs);
        ok = counts && displs;
    }
    MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, m->world);
    if (m->rank == 0 && ok) {
        long long total = 0;
        for (int r = 0; r < m->size; ++r) {
            if (counts[r] < 0) ok = 0;
            displs[r] = (int)total;
            total += counts[r];
        }
        ok = ok && total <= INT_MAX && (*all = malloc(total ? (size_t)total : 1)) != NULL;
        *n_all = ok ? (size_t)total : 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, m->world);
    if (!ok || count < 0) {
        if (m->rank == 0) fprintf(stderr, "hymo: error: sweep: cannot gather the results at rank 0\n");
        free(counts);
        free(displs);
        free(*all);
        *all = NULL;
        return -1;
    }
    MPI_Gatherv(mine, count, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, m->world);
    free(counts);
    free(displs);
    return 0;
}

static const hymo_sweep_comm_ops mpi_ops = {
    .layout = mpi_layout,
    .max = mpi_max,
    .sum = mpi_sum,
    .bcast = mpi_bcast,
    .gather = mpi_gather,
};

int hymo_cli_sweep_main(int argc, char **argv)
{
    if (!launched_by_mpirun()) return hymo_cli_sweep(argc, argv);
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "hymo: error: sweep: MPI_Init_thread failed\n");
        return EXIT_BAD_INPUT;
    }
    mpi_content m = {MPI_COMM_WORLD, 0, 1, 1};
    MPI_Comm_rank(m.world, &m.rank);
    MPI_Comm_size(m.world, &m.size);
    MPI_Comm node; /* the ranks sharing this node's cores */
    if (MPI_Comm_split_type(m.world, MPI_COMM_TYPE_SHARED, m.rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &m.local_size);
        MPI_Comm_free(&node);
    }
    const hymo_sweep_comm comm = {&m, &mpi_ops};
    const int status = hymo_cli_sweep_with(argc, argv, &comm);
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    return status;
}

#else /* built without MPI */

int hymo_cli_sweep_main(int argc, char **argv)
{
    if (launched_by_mpirun()) {
        /* every rank would run the whole sweep and write the same tables */
        const char *rank = getenv("OMPI_COMM_WORLD_RANK");
        if (!rank) rank = getenv("PMIX_RANK");
        if (!rank) rank = getenv("PMI_RANK");
        if (!rank || !strcmp(rank, "0"))
            fprintf(stderr, "hymo: error: sweep: started by mpirun, but this hymo is built without MPI "
                            "(configure with -DHYMO_MPI=ON, or run hymo sweep without mpirun)\n");
        return EXIT_BAD_INPUT;
    }
    return hymo_cli_sweep(argc, argv);
}
#endif
