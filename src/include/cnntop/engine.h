/*
 * engine.h: the public API of the cnntop engine.
 *
 * The engine trains the reference CNN (nn/model.h, docs/ARCHITECTURE.md) on MNIST-format data.
 * Front ends (the headless commands, the dashboard, the tests) drive it only
 * through this header: configure an Engine, train it with a progress
 * callback, change its loader and batch settings live, evaluate it, save
 * and load checkpoints, and read its figures: one snapshot struct
 * (engine_snapshot()) copied out under the engine's lock, plus copy-out
 * functions for the three variable-length arrays (samples, evaluations,
 * the per-layer profile).
 *
 * Conventions: functions return 0 on success or a negative CN_E* code, and
 * fill a caller-supplied buffer `err` (of `errlen` bytes, may be NULL) with a
 * one-line message that names the file or setting and the problem.  The
 * engine never prints and never exits.
 */
#ifndef CNNTOP_ENGINE_H
#define CNNTOP_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cnntop/counters.h"
#include "cnntop/data.h"
#include "cnntop/err.h"
#include "cnntop/limits.h"
#include "cnntop/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A run's settings.  Fill with engine_config_default(), then change. */
typedef struct RunConfig {
    const char *data_dir; /* directory with the four IDX files; NULL: default */
    int batch;            /* images per step, 1..CN_MAX_BATCH, e.g. 64 */
    int epochs;           /* epochs to train when steps == 0, e.g. 1 */
    long steps;           /* optimiser steps to train; 0: use epochs */
    long limit;           /* train on the first N images; 0: all */
    long test_limit;      /* evaluate on the first N test images; 0: all */
    int threads;          /* compute threads; 0: the cores this process may use */
    double lr;            /* Adam learning rate, e.g. 1e-3 */
    uint64_t seed;        /* seeds init, shuffling and dropout, e.g. 1 */
    int workers;          /* loader threads; 0: load inline on the trainer */
    int prefetch;         /* loader queue capacity in batches; 0: 2 per worker */
    unsigned augment;     /* CN_AUG_* bits, 0: none */
    int eval_epochs;      /* 1: evaluate on the test set at each epoch's end */
    long eval_every;      /* also evaluate every N steps; 0: no */
    int gemm;             /* CN_GEMM_* (machine.h): where the Winograd convolutions'
                             GEMMs run; 0: auto */
    int test_only;        /* 1: read only the test split, to evaluate (engine_train
                             refuses; limit and the loader settings are unused) */
    int dist;             /* CN_DIST_* (dist.h): CN_DIST_MPI trains as one rank of an
                             MPI job, batch being the whole job's */
    int bn_local;         /* CN_BN_* (dist.h): with dist, BatchNorm statistics over
                             every rank's images (0) or each rank's own (1) */
} RunConfig;

/* Progress as the engine reports it to a callback after each step. */
typedef struct Progress {
    int epoch;            /* 0-based epoch of this run */
    int epochs;           /* epochs this run will do (for --steps: how many it touches) */
    long step;            /* steps done in this run, 1-based after a step */
    long steps;           /* total steps this run will do */
    long step_in_epoch;   /* steps done in the current epoch */
    long steps_per_epoch; /* steps in a full epoch */
    long images;          /* training images processed in this run */
    double elapsed;       /* seconds since training started */
    double images_per_s;  /* over the run so far */
    float loss;           /* this step's mean training loss */
    double epoch_loss;    /* mean loss over the current epoch's steps so far */
} Progress;

/*
 * Called by engine_train() on the training thread after every step.  Keep it
 * cheap; return non-zero to stop training after this step.
 */
typedef int (*ProgressFn)(const Progress *p, void *userdata);

/* Seconds spent in each part of the step, summed over a run. */
typedef struct StepSplit {
    double data;      /* assembling batches (inline loading) */
    double forward;   /* forward pass and loss */
    double backward;  /* backward pass */
    double optimizer; /* Adam update */
    double comm;      /* waiting for the other ranks: all-reduces (with --dist) */
} StepSplit;

#define CN_MAX_RANKS 64 /* ranks whose figures a record keeps */

/* One rank's figures of a distributed run (DistFigures.rank). */
typedef struct DistRank {
    double images_per_s;  /* its own images / the run's wall time */
    double step_time;     /* mean seconds of a step */
    double data_wait;     /* seconds waiting for batches, summed */
    double compute;       /* seconds in forward, backward and Adam, summed */
    double comm;          /* seconds waiting for other ranks, summed */
    double run_queue_wait; /* share of its threads' time runnable but waiting for a
                              CPU over the run (schedstat); NAN: not measured */
} DistRank;

/* The communication of a distributed run (TrainStats.dist); ranks 0: none. */
typedef struct DistFigures {
    int ranks;            /* the job's ranks, 0: one process */
    int bn_local;         /* CN_BN_* in effect */
    long steps;
    double ar_wait;       /* seconds blocked on the gradients' all-reduce, summed */
    double ar_span;       /* seconds from a step's first all-reduce to its last one seen
                             done, summed: the time the reduction took, hidden or not */
    double ar_bytes;      /* gradient bytes all-reduced per step */
    double ar_probe;      /* seconds of one all-reduce of that many bytes alone (the
                             best of 5 when the engine was made, each the slowest
                             rank's time after a barrier): nccl-tests' time */
    char ar_algorithm[24]; /* the all-reduce's algorithm when MPI says it ("ring",
                              "binomial", ...; dist.h), "": not known */
    double sum_wait;      /* seconds blocked in the small sums (BatchNorm, loss), summed */
    int local_ranks;      /* ranks on rank 0's machine */
    int node_cores;       /* that machine's cores online (not this rank's affinity) */
    int nrank;            /* ranks whose figures are in rank[] (rank 0 after the gather) */
    DistRank rank[CN_MAX_RANKS];
} DistFigures;

/* Figures of the last engine_train() call. */
typedef struct TrainStats {
    long steps;           /* steps done */
    long images;          /* images trained on */
    int epochs_done;      /* complete epochs done */
    double wall;          /* seconds of training, wall clock */
    double images_per_s;  /* images / wall */
    double cpu_user;      /* seconds of user CPU of the process during training */
    double cpu_sys;       /* seconds of system CPU during training */
    long minor_faults;    /* minor page faults during training */
    float last_loss;      /* loss of the last step */
    double final_loss;    /* mean loss over the last (possibly partial) epoch */
    int stopped;          /* 1 if stopped early by engine_stop() or the callback */
    StepSplit split;      /* where the time went */
    DistFigures dist;     /* with RunConfig.dist: the communication, every rank's figures */
} TrainStats;

/* What engine_evaluate() measured. */
typedef struct EvalResult {
    long images;      /* test images evaluated */
    long correct;     /* of which classified correctly */
    double accuracy;  /* correct / images, 0..1 */
    double loss;      /* mean cross-entropy */
    double wall;      /* seconds */
} EvalResult;

typedef struct Engine Engine;

/* Fills `cfg` with the defaults: default data, batch 64, 1 epoch, lr 1e-3, seed 1. */
void engine_config_default(RunConfig *cfg);

/*
 * Checks `cfg`, reads the data set, builds the model (initialised from the
 * seed) and the activation arena for the batch size, and starts the compute
 * threads.  On success *out owns all of it; free with engine_free().  The
 * config's strings are copied.  Errors: -CN_EINVAL (bad setting), -CN_EIO and
 * -CN_EFORMAT (data), -CN_ENOMEM (the message says how much was needed).
 */
int engine_new(Engine **out, const RunConfig *cfg, char *err, size_t errlen);

/* Frees everything engine_new() made.  NULL is fine. */
void engine_free(Engine *e);

/*
 * Trains as the config says, calling `fn` (may be NULL) after each step.
 * Returns 0 when done or stopped, -CN_EDIVERGED when the loss stops being
 * finite (EngineSnapshot.train holds what happened up to then).
 */
int engine_train(Engine *e, ProgressFn fn, void *userdata, char *err, size_t errlen);

/* Asks a running engine_train() to stop after the current step.
 * Safe to call from any thread and from a signal handler. */
void engine_stop(Engine *e);

/* Evaluates the model in inference mode on the test set (test_limit images). */
int engine_evaluate(Engine *e, EvalResult *out, char *err, size_t errlen);

/*
 * An evaluation made during training (RunConfig.eval_epochs, eval_every).
 * Its time is left out of the run's wall time and rates: the training clock
 * stops while the engine evaluates.
 */
typedef struct EvalPoint {
    long step;        /* steps of the run done when it was made */
    int epoch_end;    /* 1: made at the end of an epoch */
    int epoch;        /* 0-based epoch of the run it ended or fell in */
    double wall;      /* training seconds (evaluation excluded) up to it */
    double train_loss;/* mean training loss of the epoch so far */
    EvalResult r;
} EvalPoint;

/*
 * The test-set evaluation of the model as the last engine_train() left it:
 * the one engine_train() made at its last step (an epoch's end) when there
 * is one, else a new one (engine_evaluate()).  Same returns.
 */
int engine_evaluate_final(Engine *e, EvalResult *out, char *err, size_t errlen);

#define CN_MAX_EVALS 4096

/*
 * Writes a checkpoint (weights, BatchNorm running statistics, Adam state and
 * the epoch/step counters) atomically: to a temporary file in the same
 * directory, fsync, rename.  An existing file is replaced.
 */
int engine_save(Engine *e, const char *path, char *err, size_t errlen);

/*
 * Loads a checkpoint written by engine_save().  A file of another format
 * version, model, a truncated file or one whose checksum fails is refused
 * with -CN_EFORMAT and the engine is left as it was.
 */
int engine_load(Engine *e, const char *path, char *err, size_t errlen);

/* Floating-point operations of one training image: forward + backward,
 * as the direct convolution counts them (the model's work; PyTorch's
 * count).  Every GFLOP/s cnntop shows is this work per second. */
double engine_flops_per_image(void);

/* The operations one training image really costs in this engine: fewer,
 * because two of the convolutions use Winograd's algorithm.  The sketch on
 * paper uses this. */
double engine_flops_executed_per_image(void);

/* Bytes the engine would allocate for a batch size (arena + scratch), for
 * messages and the memory check. */
size_t engine_memory_estimate(int batch, int threads);

/*
 * A configuration checked before any work, as engine_new() would find it,
 * with nothing loaded or allocated: the settings' ranges, the data
 * directory (its IDX files, found as engine_new() finds them; each header
 * valid; a plain file's size matching its header; images and labels
 * agreeing; for cfg->test_only the test split alone), the images' shape
 * against the model, and the memory of the run (engine_run_memory())
 * against what the machine has available (/proc/meminfo's MemAvailable).
 * Returns 0, or -CN_EINVAL / -CN_EIO / -CN_EFORMAT / -CN_ENOMEM with a
 * one-line message naming the file or the figures.  The labels' values
 * and gzip data are checked when engine_new() reads them.
 */
int engine_check_start(const RunConfig *cfg, char *err, size_t errlen);

/* Bytes a run of cfg takes with n_train and n_test images (after the
 * limits) on `threads` compute threads: the activation arena (*arena,
 * engine_memory_estimate() at the batch the arena holds), the loader's
 * slots (*queue: its prefetch queue, one per worker, two more), and the
 * data set itself. */
size_t engine_run_memory(const RunConfig *cfg, long n_train, long n_test, int threads,
                         size_t *arena, size_t *queue);

/* Time spent in one layer and direction of the step, over a run. */
typedef struct LayerTime {
    char name[32];    /* e.g. "conv2 bwd" */
    double seconds;   /* wall time summed over the run's steps */
    long calls;       /* times it ran */
    double flops;     /* the model's floating-point operations over the run, as the
                         direct convolution counts them (PyTorch's count, the unit of
                         MFU); 0: not a GEMM layer */
    double flops_executed; /* those the engine ran: fewer in the Winograd convolutions
                              (conv2, conv3), the same elsewhere; 0: not a GEMM layer */
    double bytes;     /* what it moved to or from memory over the run, on paper: its
                         tensors once per step (model.h's model_op_bytes_image and
                         _step); 0: none */
    /* With engine_set_counters(): the trainer thread's counts in this op,
     * for the set's first CN_LAYER_EVENTS events in order; NAN where the
     * event did not count on that thread, or is not read op by op: only
     * instructions, cycles, cache-references and cache-misses are, the
     * events of ipc and miss_rate.  (Compute threads work on the op too;
     * their counts are in the role totals, not here.) */
    int ncounts;
    double counts[8];
    double ipc;       /* the trainer thread's instructions / cycles in it; NAN: not counted */
    double miss_rate; /* its cache-misses / cache-references, 0..1; NAN: not counted */
} LayerTime;
#define CN_LAYER_EVENTS 8

/*
 * Live control, from any thread while engine_train() runs (or between runs).
 * Workers and prefetch apply at once; the batch size at the next step
 * boundary (the epoch goes on from where it was, no sample lost or
 * repeated).  Each change starts a new segment of the run.  Returns 0 or
 * -CN_EINVAL / -CN_ENOMEM with a message.
 */
int engine_set_workers(Engine *e, int workers, char *err, size_t errlen);
int engine_set_prefetch(Engine *e, int prefetch, char *err, size_t errlen);
int engine_set_batch(Engine *e, int batch, char *err, size_t errlen);

/* The live state of a run, EngineSnapshot.live. */
typedef struct LiveStats {
    int running;            /* engine_train() is going */
    Progress p;             /* as the last progress callback saw it */
    int batch, workers, prefetch; /* in effect now */
    int queue_filled;       /* batches ready in the loader queue now */
    int queue_cap;          /* its capacity (0 with workers 0) */
    double images_per_s_now;/* over the last second or so */
    double step_time;       /* seconds of the last step, data wait included */
    double data_wait;       /* seconds the last step waited for its batch */
    StepSplit split;        /* summed over the run so far */
    double load_prepare;    /* worker seconds preparing batches, summed */
    double load_blocked;    /* worker seconds blocked on a full queue */
    double load_idle;       /* worker seconds idle (no batch to claim) */
    long load_batches;      /* batches the loader has delivered */
    double load_samples_per_s; /* samples per second of preparing time per worker,
                                  times workers: what the loader alone could give */
    double data_wait_share; /* split.data / step time, 0..1 */
    int loader_bound;       /* 1 when data wait exceeds CN_LOADER_BOUND of the step */
    int segment;            /* index of the current segment (0-based) */
} LiveStats;

#define CN_LOADER_BOUND 0.10

/*
 * One sample of a run, taken about 10 times a second by the engine's
 * sampler thread while engine_train() runs, and once more when it ends
 * (so a run that trained a step has a sample).  Each covers the interval
 * (t - dt, t] of training time; the samples are contiguous from 0.  The
 * engine keeps the whole run's history in bounded memory, as a
 * round-robin database does: the recent past at full rate, older stretches
 * merged into longer samples (a larger dt) whose rates are those over the
 * whole stretch, exactly (images/s the images over its time, and so on),
 * so that means over the samples weighted by dt are the run's.
 */
typedef struct Sample {
    double t;               /* seconds of training at the interval's end */
    double dt;              /* seconds the interval spans: 0.1 s or so at full rate */
    long step;              /* steps done */
    long images;            /* images done */
    float loss;             /* last step's loss */
    float images_per_s;     /* over this interval */
    float queue_fill;       /* queue_filled / queue_cap, 0..1, at the sample (its mean
                               over the interval when merged); -1 inline */
    float data_wait_share;  /* share of this interval's step time spent waiting */
    int workers, batch;     /* as of the interval's end */
    int segment;
    float ipc;              /* trainer role over the interval; NAN: not counted */
    float miss_rate;        /* cache-misses / cache-references, 0..1; NAN: not counted */
} Sample;

/* A stretch of a run with one setting of batch, workers and prefetch. */
typedef struct Segment {
    long first_step, steps; /* steps of the run in this segment */
    double t0, wall;        /* start (seconds into the run) and length */
    int batch, workers, prefetch;
    long images;
    double images_per_s;    /* mean over the segment's steps after warm-up */
    double images_per_s_sd; /* their standard deviation (n-1), 0 if < 2 */
    long warmup_steps;      /* first steps left out of the mean */
} Segment;

#define CN_MAX_SEGMENTS 256

#define CN_DATA_DIR_LEN 4096

/*
 * Everything a front end shows about an engine, at one moment: a plain
 * struct with no pointers into the engine, so it may be kept as long as
 * wanted.  Filled by engine_snapshot().
 */
typedef struct EngineSnapshot {
    /* Fixed by engine_new(). */
    char data_dir[CN_DATA_DIR_LEN]; /* the data directory actually used (after
                                       torchvision layouts were searched) */
    long train_images;      /* training images in the data set after --limit */
    long test_images;       /* test images after --test-limit */
    int threads;            /* compute threads in use */
    /* The settings in effect now, after live changes; cfg.data_dir is NULL
     * (the directory is data_dir above). */
    RunConfig cfg;
    /* The position in training, continued across a loaded checkpoint. */
    long epochs_done;       /* epochs complete */
    long epoch_images;      /* training images of the unfinished epoch already
                               done (e.g. 1920 after --steps 30 at batch 64),
                               0 at an epoch's start */
    /* The current engine_train() call as of its last step, or the last one
     * once it returned (zeros before any). */
    TrainStats train;
    LiveStats live;         /* the run now: progress, loader, rates */
    int nsegments;          /* segments of the run, seg[0..nsegments) */
    Segment seg[CN_MAX_SEGMENTS];
    long samples_total;     /* samples held now (engine_samples()) */
    unsigned samples_generation; /* bumped when samples are renumbered (merged,
                                    or a new run began): refetch copies */
    int nevals;             /* evaluations made in the run (engine_evals()) */
} EngineSnapshot;

/*
 * Copies the engine's figures into *out under the engine's lock: any
 * thread may call it at any time, e.g. a dashboard at 10 Hz, while
 * engine_train() runs or between runs.  The lock is held for the copy
 * alone; the trainer never waits on it for more than a copy's time.
 */
void engine_snapshot(Engine *e, EngineSnapshot *out);

/*
 * The variable-length figures, copied out under the same lock from any
 * thread.  engine_samples() copies the samples from index `from` on (up to
 * max); engine_evals() the evaluations of the run, in order.  Each returns
 * how many it copied.  Merging renumbers samples: readers that keep copies
 * watch EngineSnapshot.samples_generation.
 */
int engine_samples(Engine *e, Sample *out, int max, long from);
int engine_evals(Engine *e, EvalPoint *out, int max);

/*
 * The per-layer profile of the current or last engine_train() call, up to
 * max entries in step order; returns how many.  The profile is the
 * trainer's own, written at every layer boundary without a lock: read it on
 * the training thread (from the progress callback) or once engine_train()
 * has returned.
 */
#define CN_MAX_LAYERS 64
int engine_profile(const Engine *e, LayerTime *out, int max);

/*
 * Records a timeline of the coming runs (steps, data waits, layers, loader
 * batches) in a ring of the last 65536 events, about 2500 steps, to be
 * written to `path` (checked writable now) by engine_write_trace(),
 * atomically, as Chrome trace-event JSON for Perfetto or chrome://tracing.
 * Call both between runs.
 */
int engine_set_trace(Engine *e, const char *path, char *err, size_t errlen);
int engine_write_trace(Engine *e, char *err, size_t errlen);

/*
 * Counts with `cs` (cnntop/counters.h): every engine thread is attached to
 * it by role as it starts (and those alive now at once), the trainer's
 * counters are read at each layer boundary into the profile
 * (LayerTime.counts, .ipc, .miss_rate), and the sampler derives IPC and
 * the cache-miss rate of the trainer role per interval (Sample.ipc,
 * .miss_rate).  The one way counters meet the engine, for every front end.
 * NULL stops it (threads are detached).  Call between runs; free the
 * engine before the set.
 */
void engine_set_counters(Engine *e, CounterSet *cs);

#ifdef __cplusplus
}
#endif
#endif
