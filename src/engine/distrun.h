/*
 * distrun.h: the engine as one rank of a data-parallel job
 * (RunConfig.dist = CN_DIST_MPI; distrun.c).  The trainer's alone.
 *
 * Each rank holds the same parameters (broadcast from rank 0 when the
 * engine is made, checked by checksum then and when a run ends), takes its
 * contiguous share of every step's images (the loader), and fills the
 * model's StepHooks: a layer's gradients are summed across ranks by a
 * nonblocking all-reduce started as soon as the backward pass has made
 * them (MPI_Testall at each later layer lets MPI progress), waited for
 * before Adam; BatchNorm's per-channel sums are summed at once (sync).
 * The step's loss and a stop request are summed after it, so that every
 * rank sees the job's loss and stops at the same step.  An evaluation is
 * split too: each rank evaluates its contiguous share of the test set and
 * the counts are summed.
 */
#ifndef CNNTOP_ENGINE_DISTRUN_H
#define CNNTOP_ENGINE_DISTRUN_H

#include "cnntop/dist.h"
#include "cnntop/engine.h"
#include "data/loader.h"
#include "nn/model.h"
#include "prof/schedstat.h"
#include "prof/trace.h"

typedef struct Engine Engine;

/* A distributed run's state and figures. */
typedef struct DistRun {
    int on;              /* cfg.dist == CN_DIST_MPI */
    int rank, size;
    StepHooks hooks;
    double hook_wait;    /* seconds blocked in the BN sums, so far this step */
    Trace *trace;        /* the engine's timeline, or NULL: the waits go in it */
    int rc;              /* the first error a hook met (hooks return nothing) */
    char err[256];
    int stop_agreed;     /* every rank stops after this step */
    long images;         /* this rank's own images this run */
    double probe;        /* seconds of the gradients' all-reduce alone (probe_allreduce) */
    DistFigures fig;     /* of the run so far (engine.h) */
    SchedThread sched0;  /* this process's threads' schedstat at the run's start */
    double sched_t0;     /* and when it was read; 0: not read */
    float *own_running;  /* --bn local: this rank's running statistics while an
                            evaluation uses rank 0's (nrunning floats) */
    /* The live lines (DIST_LIVE_ENV set: every rank gathers, rank 0 writes). */
    char live_path[4096]; /* "" when off */
    double step_comm;    /* the last step's seconds waiting for the others */
    double w_t0;         /* rank 0: the interval's start */
    long w_steps, w_images0;
    Progress live_last;  /* the last step's progress, for the run's last line */
    double w_busy[DIST_LIVE_MAX_RANKS], w_comm[DIST_LIVE_MAX_RANKS];
} DistRun;

/* Before the engine's threads start: joins the job, checks the batch
 * splits and the ranks run the same version and settings, and sets the
 * compute threads' default to the node's cores shared among its ranks. */
int distrun_open(Engine *e, char *err, size_t errlen);

/* After the parameters exist: rank 0's everywhere, checked. */
int distrun_share_params(Engine *e, char *err, size_t errlen);

/* Clears the run's figures (engine_train's start). */
void distrun_run_reset(Engine *e);

/* The step's hooks and this rank's place in the step's images. */
void distrun_step_begin(Engine *e, StepCtx *s, const Batch *b);

/* After the backward pass: waits for the gradients' sums; *comm gets the
 * step's seconds waiting on other ranks so far. */
int distrun_grads_wait(Engine *e, double *comm, char *err, size_t errlen);

/* After the step: *loss (this rank's mean over its nb images) becomes the
 * job's, and stop_agreed whether any rank asked to stop; *comm grows by
 * the wait. */
int distrun_step_end(Engine *e, double *loss, int nb, int n_global, double *comm, char *err,
                     size_t errlen);

/* An evaluation of the test set's n images split over the ranks: *lo and
 * *hi (this rank's contiguous share, [lo, hi); the whole set for one
 * process).  With --bn local every rank evaluates with rank 0's running
 * statistics (the checkpoint's, as PyTorch DDP broadcasts rank 0's
 * buffers); its own come back at distrun_eval_end().  Every rank calls
 * both, as every rank trains. */
int distrun_eval_begin(Engine *e, long n, long *lo, long *hi, char *err, size_t errlen);

/* v[k] (the share's sums: correct, images, loss x images) becomes the
 * job's sum; this rank's running statistics are its own again. */
int distrun_eval_end(Engine *e, double *v, size_t k, char *err, size_t errlen);

/* Frees what the evaluations kept (engine_free). */
void distrun_close(Engine *e);

/* When the run ends: parameters still the same everywhere, and every
 * rank's figures gathered on rank 0 (and its last live line written). */
int distrun_finish(Engine *e, char *err, size_t errlen);

/* After each step (p: its progress; step_time: its seconds, data wait
 * included), with the live lines on: every rank's own work and wait
 * gathered on rank 0, which appends a line (cnntop/dist.h) when a
 * quarter second has passed since the last.  The gather is a collective:
 * every rank calls it after every step.  Nothing when off. */
int distrun_live_step(Engine *e, const Progress *p, double step_time, char *err,
                      size_t errlen);

#endif
