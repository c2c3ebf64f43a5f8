/*
 * dist.h: data-parallel training over MPI, as the front ends see it: the
 * job's processes (ranks), started by mpirun and joined here.
 *
 * A process joins the job with dist_start() (MPI_Init_thread, FUNNELED:
 * only the thread that called it calls MPI after it, the trainer) and
 * leaves it with dist_finish().  Until then, and in a build without MPI,
 * it is rank 0 of 1.  The engine does the rest when RunConfig.dist is
 * CN_DIST_MPI (src/dist/dist.h: the collectives; src/engine/distrun.c:
 * the hooks of the step).
 */
#ifndef CNNTOP_DIST_H
#define CNNTOP_DIST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RunConfig.dist */
#define CN_DIST_NONE 0
#define CN_DIST_MPI 1

/* RunConfig.bn_local: BatchNorm statistics over every rank's images
 * (sync, the default: N ranks compute what one process does), or each
 * rank's own (local: PyTorch DistributedDataParallel's default). */
#define CN_BN_SYNC 0
#define CN_BN_LOCAL 1

/* 1 when this cnntop was built with MPI, else 0. */
int dist_available(void);

/* Joins the MPI job (once; later calls return 0).  Errors: -CN_EINVAL
 * "this cnntop was built without MPI", -CN_EIO when MPI cannot start or
 * gives no FUNNELED thread support. */
int dist_start(char *err, size_t errlen);

/* 1 between dist_start() and dist_finish(). */
int dist_started(void);

/* This process's rank (0 outside a job) and the job's size (1 outside). */
int dist_rank(void);
int dist_size(void);

/* Ranks of the job on this machine (1 outside a job). */
int dist_local_size(void);

/* Leaves the job (MPI_Finalize); nothing when not started. */
void dist_finish(void);

/* Ends the whole job at once with `code` (MPI_Abort), for an error on one
 * rank that the others cannot learn of; returns only when not started. */
void dist_abort(int code);

#ifdef __cplusplus
}
#endif

#endif
