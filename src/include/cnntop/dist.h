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

/* The job's launcher from outside it (launch.c, built with or without MPI):
 * the first of mpirun and mpiexec on PATH, into out (NULL: none). */
const char *dist_launcher_find(char *out, size_t len);

/* The cores this process may run on (its affinity), at least 1. */
int dist_cores_here(void);

/* Starts args[0] (a path) with args: its stderr into a pipe whose read end
 * goes to *err_fd when err_fd, its stdout on /dev/null when quiet,
 * child_reset() called in the child before the exec, OpenMPI's two
 * run-as-root variables set for it alone when root.  The child exits 127
 * when args[0] cannot run.  Returns its pid, or -errno. */
int dist_launch(char *const args[], int *err_fd, int quiet, void (*child_reset)(void));

/* Passes sig to the launcher's children, the ranks on this machine (so
 * that they stop together as asked; mpirun, signalled itself, kills them a
 * second later); to the launcher itself when it has none. */
void dist_launch_signal(int launcher, int sig);

/* Reaps pid: 128 + the signal that ended it, or its exit status; -1 when
 * unknown.  stop (NULL: none), polled while it runs, gives a signal to pass
 * on to it once (0: none). */
int dist_launch_wait(int pid, int (*stop)(void));

#ifdef __cplusplus
}
#endif

#endif
