/*
 * state.h: struct Engine, the state the engine's files share, and the
 * functions they call in one another.
 *
 * The files: engine.c (new, free, evaluate, save, load, trace, counters;
 * the DESIGN comment), train.c (the train loop), live.c (live settings and
 * segments), sampler.c (the sampler thread), snapshot.c (what crosses back
 * to the front ends), history.c, checkpoint.c.
 *
 * Who touches what (the DESIGN comment in engine.c tells why):
 *   fixed after engine_new(): data_dir, ds, n_train, n_test, threads, lut,
 *     loader (the pointer; the loader locks itself), pool, reg;
 *   the trainer's own (the thread in engine_train(), or the driver
 *     between runs), no lock: ps, acts, cap, eval_idx, prof, epochs_done,
 *     epoch_pos, stats, evals[] beyond pub.nevals, trace, cs;
 *   under live_mu: cfg's writes (live setters, a batch change) and every
 *     read by a thread other than the trainer, live, pub, t0, hist, seg,
 *     nseg, seg_sum/seg_sumsq/seg_n, evals[0..pub.nevals), sampler_quit,
 *     evaluating;
 *   atomics: stop, pending_batch.
 */
#ifndef CNNTOP_ENGINE_STATE_H
#define CNNTOP_ENGINE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cnntop/engine.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "engine/distrun.h"
#include "engine/history.h"
#include "nn/model.h"
#include "prof/profile.h"
#include "prof/threadreg.h"
#include "prof/trace.h"

#define SAMPLE_INTERVAL 0.1   /* seconds between samples */
#define SEGMENT_WARMUP 3      /* steps of a segment left out of its mean */

/* The trainer's figures as of its last step, published for snapshots. */
typedef struct TrainerPub {
    TrainStats stats;
    long epochs_done, epoch_pos;
    int nevals;
} TrainerPub;

struct Engine {
    RunConfig cfg;
    char data_dir[CN_DATA_DIR_LEN];
    Dataset ds;
    long n_train;        /* training images after --limit */
    long n_test;         /* test images after --test-limit */
    int threads;
    GemmPath gemm;       /* where the Winograd GEMMs run: cfg.gemm on this CPU */
    int cap;             /* arena capacity: batch, capped by the data set's size */
    Params ps;
    Acts acts;
    Workpool *pool;
    Profile prof;
    float lut[256];
    uint32_t *eval_idx;  /* (cap) test indices of one evaluation batch */
    long epochs_done;    /* epochs completed (continues across checkpoints) */
    long epoch_pos;      /* images consumed of the current epoch */
    atomic_int stop;
    atomic_int never;    /* 0 always: a rank's loader wait is not cut short */
    atomic_int pending_batch;  /* a batch size to apply at the next step, 0: none */
    TrainStats stats;
    ThreadReg reg;
    Loader *loader;
    /* Published by the trainer after each step, read by anyone: under live_mu. */
    pthread_mutex_t live_mu;
    LiveStats live;
    TrainerPub pub;
    double t0;                 /* timer_now() when training started */
    History hist;
    Segment seg[CN_MAX_SEGMENTS];
    int nseg;
    double seg_sum, seg_sumsq; /* per-step images/s after warm-up, this segment */
    long seg_n;
    /* the sampler */
    pthread_t sampler;
    int sampler_on;            /* the trainer's */
    int sampler_quit;          /* under live_mu */
    int evaluating;            /* under live_mu: an evaluation mid-run, clock stopped */
    pthread_cond_t sampler_cv;
    Trace *trace;              /* --trace, or NULL */
    CounterSet *cs;            /* engine_set_counters(), or NULL */
    EvalPoint *evals;          /* (CN_MAX_EVALS) of the last run */
    int nevals;                /* the trainer's count; pub.nevals once published */
    char trace_path[4096];
    DistRun dist;              /* the trainer's: one rank of a data-parallel job */
};

/* engine.c */

/* check.c: refuses images of another shape than the model's, naming ds->dir. */
int engine_check_shape(const Dataset *ds, char *err, size_t errlen);

/* Refuses a batch whose memory the machine, or the process's address-space
 * limit (ulimit -v), cannot give; 0 or -CN_ENOMEM with a message. */
int engine_check_memory(int batch, int threads, char *err, size_t errlen);

/* The arena's batch capacity for batch size b: no step ever holds more
 * images than the larger split has.  (Inline here: engine.c sizes the
 * first arena with it and live.c a live batch change's.) */
static inline int engine_arena_batch(const Engine *e, int b)
{
    long most = e->n_train > e->n_test ? e->n_train : e->n_test;
    return b < most ? b : (int)most;
}


/* live.c: segments and the loader's part of e->live */

/* Starts a new segment at step first_step, t seconds into the run; under live_mu. */
void live_segment_begin(Engine *e, long first_step, double t);

/* Adds one step of nb images taking dt seconds, ending t seconds into the
 * run, to the current segment; under live_mu. */
void live_segment_step(Engine *e, int nb, double dt, double t);

/* Writes loader figures `ls` (from loader_stats(), taken before live_mu)
 * into L: e->live under live_mu, or a copy of it. */
void live_put_loader(LiveStats *L, const LoaderStats *ls);

/* Applies a pending batch size between steps (the trainer's). */
void live_apply_batch(Engine *e);

/* sampler.c: the sampler thread, for the length of engine_train() */
void sampler_start(Engine *e);
void sampler_stop(Engine *e);

/* snapshot.c: copies the trainer's figures into e->pub; under live_mu. */
void snapshot_publish(Engine *e);

#endif
