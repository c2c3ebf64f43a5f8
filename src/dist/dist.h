/*
 * dist.h: the collectives the engine's data-parallel step needs, on
 * MPI_COMM_WORLD (dist_mpi.c; dist_none.c in a build without MPI, where
 * they are never reached: dist_start() fails first).  Called by the
 * thread that called dist_start() only.  Errors are values: the MPI
 * error handler is MPI_ERRORS_RETURN, and each call returns 0 or -CN_EIO
 * with the message in err.
 */
#ifndef CNNTOP_DIST_DIST_H
#define CNNTOP_DIST_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "cnntop/dist.h"

/* Gradient reductions in flight at most: one per layer of the model. */
#define DIST_MAX_REQS 16

/* v[0..n) <- rank 0's v. */
int dist_bcast_floats(float *v, size_t n, char *err, size_t errlen);

/* v[0..n) <- its sum over every rank (blocking). */
int dist_sum_doubles(double *v, size_t n, char *err, size_t errlen);

/* Every rank's h gathered; when any differs from rank 0's, -CN_EINVAL
 * with "rank R's WHAT differs from rank 0's" (the first such R). */
int dist_check_same(uint64_t h, const char *what, char *err, size_t errlen);

/* all (size * n, on rank 0 only; may be NULL elsewhere) <- each rank's
 * mine (n), in rank order. */
int dist_gather_doubles(const double *mine, int n, double *all, char *err, size_t errlen);

/* How the last dist_grads_wait() went. */
typedef struct DistWait {
    double wait;      /* seconds blocked in it */
    double span;      /* seconds from the first start to the last completion seen */
    double bytes;     /* summed over the reductions */
    int nreq;         /* reductions */
} DistWait;

/* Starts summing v[0..n) floats over every rank, in place (nonblocking);
 * tests the ones in flight, so that MPI makes progress.  At most
 * DIST_MAX_REQS before a wait. */
int dist_grads_start(float *v, size_t n, char *err, size_t errlen);

/* Waits for every reduction started since the last wait. */
int dist_grads_wait(DistWait *out, char *err, size_t errlen);

/* Reductions the probe times (dist_probe_allreduce), the best kept. */
#define DIST_PROBE_TRIES 5

/*
 * The all-reduce of v[0..n) alone, as nccl-tests time it, into *best: the
 * ranks meet at a barrier, each times one reduction as the gradients' are
 * made (dist_grads_start, dist_grads_wait), and the sample is the slowest
 * rank's time (a maximum over the ranks), so that no rank's clock starts
 * after another has begun sending; the best of `tries` samples.  Every
 * rank gets the same *best.  v is summed in place `tries` times (zeros
 * stay zeros).
 */
int dist_probe_allreduce(float *v, size_t n, int tries, double *best, char *err,
                         size_t errlen);

/* The algorithm MPI runs the gradients' in-place MPI_Iallreduce with, read
 * when the job started: OpenMPI's libnbc control variable
 * coll_libnbc_iallreduce_algorithm through MPI_T ("ring", "binomial",
 * "rabenseifner", "recursive_doubling"; its 0, libnbc's own choice, is
 * binomial for an in-place buffer in OpenMPI 4), "" when it cannot be
 * known (another MPI, no MPI_T). */
const char *dist_allreduce_algorithm(void);

#endif
