/*
 * dist_mpi.c: the job's processes over MPI (cnntop/dist.h, dist/dist.h),
 * the only file that includes <mpi.h>.
 *
 * MPI is initialised FUNNELED: the compute pool's and the loader's threads
 * never call it, the trainer alone does, between its phases.  Errors come
 * back as values (MPI_ERRORS_RETURN on MPI_COMM_WORLD), never MPI's own
 * abort, except dist_abort(), which is asked for.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "prof/timer.h"
#include "util/err.h"

static int started, rank, size = 1, local_size = 1;
static char algorithm[24]; /* dist_allreduce_algorithm(), read at the start */

/* The gradient reductions in flight (the trainer's alone). */
static struct {
    MPI_Request req[DIST_MAX_REQS];
    int nreq;
    double t_first, t_done, bytes;
} grads;

static int mpi_fail(int rc, const char *what, char *err, size_t errlen)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    return cn_fail(err, errlen, -CN_EIO, "rank %d: %s: %s", rank, what, msg);
}

int dist_available(void)
{
    return 1;
}

/* The value of an int control variable of MPI_T, or -1. */
static int cvar_int(const char *name)
{
    int idx, count = 0, v = -1;
    MPI_T_cvar_handle h;

    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return -1;
    if (count != 1 || MPI_T_cvar_read(h, &v) != MPI_SUCCESS)
        v = -1;
    MPI_T_cvar_handle_free(&h);
    return v;
}

/* libnbc's iallreduce algorithm (dist.h), into `algorithm`. */
static void read_algorithm(void)
{
    static const char *const names[] = {"", "ring", "binomial", "rabenseifner",
                                        "recursive_doubling"};
    int provided, v = -1;

    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
        v = cvar_int("coll_libnbc_iallreduce_algorithm");
        MPI_T_finalize();
    }
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION == 4
    /* 0 ("ignore"): OpenMPI 4's libnbc takes binomial for fewer than 4
     * ranks, under 64 KB or an in-place buffer, which cnntop's always is. */
    if (v == 0)
        v = 2;
#endif
    snprintf(algorithm, sizeof algorithm, "%s", v >= 1 && v <= 4 ? names[v] : "");
}

const char *dist_allreduce_algorithm(void)
{
    return algorithm;
}

int dist_start(char *err, size_t errlen)
{
    int provided = 0, init = 0;
    MPI_Comm node;

    if (started)
        return 0;
    MPI_Initialized(&init);
    if (!init && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return cn_fail(err, errlen, -CN_EIO, "MPI_Init_thread failed");
    if (!init && provided < MPI_THREAD_FUNNELED)
        return cn_fail(err, errlen, -CN_EIO,
                       "this MPI gives no FUNNELED thread support (level %d)", provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &local_size);
        MPI_Comm_free(&node);
    }
    read_algorithm();
    started = 1;
    return 0;
}

int dist_started(void)
{
    return started;
}

int dist_rank(void)
{
    return started ? rank : 0;
}

int dist_size(void)
{
    return started ? size : 1;
}

int dist_local_size(void)
{
    return started ? local_size : 1;
}

void dist_finish(void)
{
    int fin = 0;

    if (!started)
        return;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
    started = 0;
}

void dist_abort(int code)
{
    if (started)
        MPI_Abort(MPI_COMM_WORLD, code);
}

int dist_bcast_floats(float *v, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i += (size_t)1 << 30) {
        int k = (int)(n - i < ((size_t)1 << 30) ? n - i : (size_t)1 << 30);
        int rc = MPI_Bcast(v + i, k, MPI_FLOAT, 0, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, "broadcasting the parameters", err, errlen);
    }
    return 0;
}

int dist_sum_doubles(double *v, size_t n, char *err, size_t errlen)
{
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "all-reduce", err, errlen);
}

int dist_check_same(uint64_t h, const char *what, char *err, size_t errlen)
{
    unsigned long long mine = h, *all = malloc((size_t)size * sizeof *all);
    int rc, bad = -1;

    if (!all)
        return cn_fail(err, errlen, -CN_ENOMEM, "out of memory");
    rc = MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                       MPI_COMM_WORLD);
    for (int r = 1; rc == MPI_SUCCESS && r < size && bad < 0; r++)
        if (all[r] != all[0])
            bad = r;
    free(all);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "all-gather", err, errlen);
    if (bad >= 0)
        return cn_fail(err, errlen, -CN_EINVAL, "rank %d's %s differs from rank 0's", bad, what);
    return 0;
}

int dist_gather_doubles(const double *mine, int n, double *all, char *err, size_t errlen)
{
    int rc = MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "gather", err, errlen);
}

/* Tests the reductions in flight; notes when they were all seen done. */
static int grads_test(char *err, size_t errlen)
{
    int done = 0, rc = MPI_Testall(grads.nreq, grads.req, &done, MPI_STATUSES_IGNORE);

    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "all-reduce of the gradients", err, errlen);
    if (done && grads.t_done == 0.0)
        grads.t_done = timer_now();
    return 0;
}

int dist_grads_start(float *v, size_t n, char *err, size_t errlen)
{
    if (grads.nreq == DIST_MAX_REQS)
        return cn_fail(err, errlen, -CN_ESTATE, "more than %d gradient reductions in one step",
                       DIST_MAX_REQS);
    if (grads.nreq == 0) {
        grads.t_first = timer_now();
        grads.bytes = 0.0;
    }
    grads.t_done = 0.0;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                            &grads.req[grads.nreq]);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "all-reduce of the gradients", err, errlen);
    grads.nreq++;
    grads.bytes += (double)n * sizeof *v;
    return grads_test(err, errlen);
}

int dist_grads_wait(DistWait *out, char *err, size_t errlen)
{
    double t0 = timer_now();
    /* The requests were started by dist_grads_start(), one call each: the
     * analyzer's MPI checker follows one function and cannot see them. */
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
    int rc = MPI_Waitall(grads.nreq, grads.req, MPI_STATUSES_IGNORE);
    double t1 = timer_now();

    memset(out, 0, sizeof *out);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "all-reduce of the gradients", err, errlen);
    out->wait = t1 - t0;
    out->span = grads.nreq ? (grads.t_done > 0.0 ? grads.t_done : t1) - grads.t_first : 0.0;
    out->bytes = grads.bytes;
    out->nreq = grads.nreq;
    grads.nreq = 0;
    grads.t_done = 0.0;
    return 0;
}

int dist_probe_allreduce(float *v, size_t n, int tries, double *best, char *err,
                         size_t errlen)
{
    DistWait w;
    int rc;

    *best = INFINITY;
    for (int k = 0; k < tries; k++) {
        if ((rc = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
            return mpi_fail(rc, "barrier before the all-reduce probe", err, errlen);
        double t0 = timer_now();
        if ((rc = dist_grads_start(v, n, err, errlen)) != 0 ||
            (rc = dist_grads_wait(&w, err, errlen)) != 0)
            return rc;
        double dt = timer_now() - t0;
        rc = MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, "the all-reduce probe's slowest rank", err, errlen);
        *best = dt < *best ? dt : *best;
    }
    return 0;
}
