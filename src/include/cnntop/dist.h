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
 * goes to *err_fd when err_fd (close-on-exec), its stdin and stdout on
 * /dev/null when quiet,
 * child_reset() called in the child before the exec, OpenMPI's two
 * run-as-root variables set for it alone when root.  The child exits 127
 * when args[0] cannot run.  Returns its pid, or -errno. */
int dist_launch(char *const args[], int *err_fd, int quiet, void (*child_reset)(void));

/* dist_launch() with env ("NAME=VALUE", NULL: none) set for the child
 * alone.  The child's environment is made before the fork, so that the
 * child of a threaded process changes none before its exec. */
int dist_launch_env(char *const args[], int *err_fd, int quiet, void (*child_reset)(void),
                    const char *env);

/* dist_launch() with its stdout into a second pipe too (the read end in
 * *out_fd, close-on-exec): the caller passes it on, so that a reader of
 * its own output that goes away is its to handle, never the launcher's
 * (mpirun's exit status is then anyone's guess: 0, 1, 139 or 141). */
int dist_launch_piped(char *const args[], int *err_fd, int *out_fd, void (*child_reset)(void));

/* SIGKILL to root and every process descended from it (mpirun, its
 * daemons, the ranks on this machine), each frozen with SIGSTOP as it is
 * found so that none forks or is orphaned out of reach: for a job that a
 * stop signal did not end. */
void dist_launch_kill_tree(int root);

/* Whether pid has ended, without waiting: 1 with *code as
 * dist_launch_wait() returns it, 0 while it runs. */
int dist_launch_reap(int pid, int *code);

/* Passes sig to the launcher's children, the ranks on this machine (so
 * that they stop together as asked; mpirun, signalled itself, kills them a
 * second later); to the launcher itself when it has none. */
void dist_launch_signal(int launcher, int sig);

/* Reaps pid: 128 + the signal that ended it, or its exit status; -1 when
 * unknown.  stop (NULL: none), polled while it runs, gives a signal to pass
 * on to it once (0: none). */
int dist_launch_wait(int pid, int (*stop)(void));

/*
 * The live lines of a job (liveline.c): while a job trains, its rank 0 appends
 * one line to the file that the environment variable CNNTOP_DIST_LIVE
 * names (the dashboard makes it and gives it to every rank: mpirun -x),
 * about 4 a second and one when the run ends, each written whole by one
 * write(2):
 *
 *   cnntop-live1 step=S steps=N epoch=E epochs=M elapsed=SECONDS images=I
 *     loss=L ips=X comm=SHARE ranks=R t=T0,T1,...
 *
 * (one line): the run's progress as rank 0's Progress says it, the job's
 * images/s (ips) and the mean share of the ranks' step spent waiting for
 * the others (comm, 0..1) over the lines' interval, and each rank's mean
 * seconds per step of its own work over it (data wait and compute: the
 * step less its waits for the others), so that the slowest rank is the
 * one with the largest.  Every rank gathers these at each step's end when
 * the variable is set (it is part of the settings the ranks must share).
 */
#define DIST_LIVE_ENV "CNNTOP_DIST_LIVE"
#define DIST_LIVE_TAG "cnntop-live1"
#define DIST_LIVE_MAX_RANKS 64 /* a job of more ranks writes no lines */
#define DIST_LIVE_LINE 2048    /* a line's bytes at most, its end included */

typedef struct DistLive {
    long step, steps;   /* steps done (1..), and the run's */
    int epoch, epochs;  /* 0-based epoch of the step, and the run's */
    double elapsed;     /* seconds of training */
    long images;        /* the job's images so far */
    double loss;        /* the step's loss over the job's batch */
    double ips;         /* the job's images/s over the interval */
    double comm;        /* the ranks' mean share of the step waiting for the others */
    int ranks;
    double step_time[DIST_LIVE_MAX_RANKS]; /* each rank's own seconds per step */
} DistLive;

/* The line of l, its '\n' and a NUL into buf; its length, or -1 when it
 * does not fit. */
int dist_live_format(const DistLive *l, char *buf, size_t len);

/* One line (its '\n' optional) into *out: 0, or -1 (*out unchanged) for
 * anything but a line as dist_live_format writes it with every number
 * finite and in range (steps and images whole, step <= steps, epoch <
 * epochs, comm 0..1, ranks 1..DIST_LIVE_MAX_RANKS with as many times,
 * each 0..3600 s, loss 0..1e6, nothing after). */
int dist_live_parse(const char *line, DistLive *out);

#ifdef __cplusplus
}
#endif

#endif
