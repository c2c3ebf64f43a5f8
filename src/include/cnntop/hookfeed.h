/*
 * hookfeed.h: a training command's progress as cnntop's Python hook
 * reports it (assets/python/sitecustomize.py, loaded by `cnntop exec`).
 *
 * The hook writes JSON lines on a pipe: "hello" when torch's DataLoader is
 * imported, "workers" with an iterator's worker pids, "config" at an
 * iterator's first batch (torch's intra-op threads and the DataLoader's
 * num_workers), one "batch" per
 * batch (samples, the seconds next() waited, the seconds since the
 * previous batch, the time), "end" when an iterator runs out; and "rank"
 * when a process joins torch.distributed (its pid, rank, world size,
 * torch), after which its lines carry "rank" (and "coll": seconds in
 * collectives so far) and go to that rank's stream (HookRank), whatever
 * process launched it; a rank needs no hello.  A HookFeed
 * takes the pipe's bytes as they come (lines may arrive cut anywhere) and
 * sums them; hookfeed_figures() turns the sums into images/s, the data
 * wait's share and the step time.  Pure: no I/O, no clock (the caller
 * says what the clock reads and which pids are of its tree).
 *
 * The pipe is input from another program, so every line is checked as a
 * whole before any of it is taken: valid JSON (UTF-8) within
 * HOOK_LINE_MAX, a known "ev", each member of the right type and in range
 * (counts whole numbers within the HOOK_MAX_* limits, times finite and
 * not negative), the first line a "hello" from a process of the followed
 * tree and no second hello from another, a rank said once and before
 * any line tagged with it, worker pids of the tree, the
 * times in order ("t" never going back, a wait no longer than the time
 * since the previous line, wait + step no longer than the window so far)
 * and within the caller's clock.  A line that fails is rejected whole,
 * counted, and the first one's reason kept; nothing of it reaches a
 * figure or a role.  So the data wait's share stays within 0..1 and every
 * figure finite whatever is written on the pipe.
 *
 * An "error" line ("pid", "type", "at": the uncaught exception that ends a
 * Python process of the tree, its innermost frame as "FILE:FUNCTION" with
 * FILE relative to its sys.path entry) needs no hello: a launcher such as
 * torchrun may die before any DataLoader; the first one is kept
 * (HookFeed.error_type, error_at: printable ASCII within HOOK_NAME_LEN and
 * HOOK_AT_LEN).
 *
 * The layer window's lines ("window", "layer", "pace") are checked the same
 * way (names printable ASCII within HOOK_NAME_LEN, counts and FLOPs
 * bounded, times finite) into HookFeed.model.
 *
 * The window of the figures runs from the first batch's arrival to the
 * last "end" (or the last batch when none came): the first batch only
 * starts the clock (it carries the workers' start-up), so its samples and
 * its wait are left out, as a script that times its own loop does.
 */
#ifndef CNNTOP_HOOKFEED_H
#define CNNTOP_HOOKFEED_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOOK_LINE_MAX 4096        /* a longer line is rejected */
#define HOOK_MAX_COUNT (1 << 20)  /* the most torch threads or DataLoader workers a
                                     "config" may say (a record holds any of them) */
#define HOOK_MAX_SAMPLES (1 << 24) /* the most samples a "batch" may say */
#define HOOK_MAX_PID (1 << 22)    /* Linux's PID_MAX_LIMIT: pids are 1..this */
#define HOOK_TIME_SLACK 1.0       /* s a "t" may be past the caller's clock (rounding,
                                     the reading's own delay) */
#define HOOK_MAX_RANKS 64         /* ranks of torch.distributed followed (a "rank" of
                                     this or more is rejected) */

#define HOOK_LAYERS_MAX 64        /* the most rows a "window" may announce */
#define HOOK_NAME_LEN 48          /* a row's name and kind: 1..47 printable ASCII bytes */
#define HOOK_AT_LEN 128           /* an "error"'s "at": 1..127 printable ASCII bytes */
#define HOOK_MAX_STEPS (1 << 24)  /* the most steps a "window" or "pace" may say */
#define HOOK_MAX_FLOPS 1e18       /* the most FLOPs a "layer" may say */

/*
 * The layer window (assets/python/cnntop_layers.py): the user's model timed
 * module by module over the optimizer's steps first..first+steps-1.  A
 * "window" line announces `layers` rows, the next that many "layer" lines
 * are its rows (any other line between them rejects the window), and
 * "pace" lines say the median step in the window and after it.  The table
 * counts once it is complete; a second window is rejected.
 */
typedef struct HookLayer {
    char name[HOOK_NAME_LEN];  /* the module's path in the model, e.g. "features.0" */
    char kind[HOOK_NAME_LEN];  /* its class, e.g. "Conv2d"; "-" for a row of no module */
    long calls;                /* forward calls in the window */
    double fwd, bwd;           /* s of forward and of backward in the window */
    double flops;              /* forward FLOPs summed over the calls (0: not counted) */
    double bwd_flops;          /* backward FLOPs summed: the weights' gradient and the
                                  input's where it needs one, each as much as forward */
    double img_flops;          /* a training image's FLOPs in one call (forward and
                                  backward) */
} HookLayer;

typedef struct HookModel {
    int complete;              /* 1: a window and all its rows were accepted */
    int expect;                /* rows announced and not yet received */
    int first;                 /* the window's first step (1-based) */
    long steps;                /* steps it measured */
    int n;                     /* rows received */
    HookLayer rows[HOOK_LAYERS_MAX];
    double pace_in, pace_out;  /* median s a step in the window, after it; NAN: not said */
    long pace_n;               /* steps after it that pace_out covers */
} HookModel;

/* What a pid the hook names is to the caller (HookHost.pid_of). */
enum {
    HOOK_PID_FOREIGN, /* a process that is not of the followed tree: the line is rejected */
    HOOK_PID_OURS,    /* a process of the tree (followed, or a live descendant) */
    HOOK_PID_GONE     /* no such process now: it came and went between two polls */
};

/* The caller's side: which pids are of its tree, and where worker pids go. */
typedef struct HookHost {
    int (*pid_of)(void *u, int pid); /* HOOK_PID_*; NULL: every pid is the tree's */
    void (*worker)(void *u, int pid); /* each worker pid of an accepted line that is
                                         HOOK_PID_OURS; NULL: none wanted */
    void (*rank)(void *u, int pid);   /* the pid of each accepted "rank" line that is
                                         HOOK_PID_OURS; NULL: none wanted */
    void *u;
} HookHost;

/* One Python process's DataLoader figures: the hook's main process, or a
 * rank of torch.distributed. */
typedef struct HookStream {
    long batches;
    double first_samples;     /* samples of the first batch (not in the rate) */
    double samples;           /* samples of the later batches */
    double wait;              /* s next() waited, later batches */
    double first_wait;        /* s the first batch took (workers starting) */
    double step;              /* s between batches (the training step), summed */
    double t_first, t_end;    /* the window, the hook's monotonic s */
    double t_last;            /* the latest "t" of an accepted batch or end */
    int threads;              /* torch.get_num_threads() at the last "config"; -1: not said */
    int loader_workers;       /* the DataLoader's num_workers there; -1: not said */
    double coll;              /* s in torch.distributed's collectives (a rank's "coll",
                                 the latest); 0: none said */
    int skip_rows;            /* rows of its own layer window still to pass over (a rank
                                 whose window is not the job's: HookFeed.model_of) */
} HookStream;

/* A process that joined torch.distributed (a "rank" line). */
typedef struct HookRank {
    int pid;                  /* its process; 0: gone when the line was read */
    int rank, world;          /* its rank and the world size it joined */
    HookStream s;
} HookRank;

typedef struct HookFeed {
    char line[HOOK_LINE_MAX]; /* the partial line so far */
    size_t len;
    int overflow;             /* 1: the current line is too long, skipping it */
    HookHost host;
    double t_lo, t_hi;        /* the caller's clock: a "t" outside [t_lo, t_hi +
                                 HOOK_TIME_SLACK] is rejected (init: 0, +inf) */
    int hello;                /* 1: the hook saw torch's DataLoader */
    int pid;                  /* the process the hook runs in (hello); 0: not known
                                 (it had gone when the hello was read) */
    char torch[32];           /* torch's version, e.g. "1.13.1" (hello or a rank's) */
    HookStream main;          /* the main process's DataLoader (lines without "rank") */
    HookRank ranks[HOOK_MAX_RANKS]; /* the ranks, in the order they joined */
    int n_ranks;
    long worker_pids;         /* worker pids named in accepted lines */
    long lines;               /* lines seen, rejected ones included */
    long bad;                 /* lines rejected */
    char why[160];            /* the first rejected line's number and reason, or "" */
    HookModel model;          /* the layer window: the first process's to send one (each
                                 rank of a job measures its own; the others' are passed
                                 over) */
    const HookStream *model_of; /* whose window it is (&main or a rank's stream) */
    char error_type[HOOK_NAME_LEN]; /* the first "error": the exception's type, or "" */
    char error_at[HOOK_AT_LEN];     /* and where: "torch/x.py:to_map" */
} HookFeed;

/* The figures over the window; ok 0 when fewer than two batches came. */
typedef struct HookFigures {
    int ok;
    int hello;                /* 1: the hook saw torch (HookFeed.hello), rate or not */
    long batches;
    double images;            /* samples after the first batch */
    double window;            /* s */
    double images_per_s;
    double data_wait_share;   /* wait / window, 0..1 */
    double step_s;            /* mean s between batches */
    double first_wait;        /* s */
    double first_images;      /* samples of the first batch (not in the rate) */
} HookFigures;

/* An empty feed: no batch, threads and loader_workers -1 (unknown), no
 * host (every pid taken), no clock bound.  Set f->host and f->t_lo/t_hi
 * after it. */
void hookfeed_init(HookFeed *f);

/* Feeds len bytes read from the pipe: each whole line is checked, then
 * taken or rejected (f->bad).  Returns the lines rejected in them. */
int hookfeed_bytes(HookFeed *f, const char *data, size_t len);

/* The main process's figures (hello as f->hello). */
void hookfeed_figures(const HookFeed *f, HookFigures *out);

/* One stream's figures (a rank's: f->ranks[i].s); hello 1. */
void hookfeed_stream_figures(const HookStream *s, HookFigures *out);

/* The job's figures: the main process's (hookfeed_figures()) when its
 * DataLoader gave batches or no process joined torch.distributed, else
 * the ranks': batches, images and images/s summed, data wait and step
 * averaged, the window and the first wait their longest.  ok only when
 * every rank has a rate (so that the sum is the job's), hello the feed's. */
void hookfeed_job_figures(const HookFeed *f, HookFigures *out);

#ifdef __cplusplus
}
#endif
#endif
