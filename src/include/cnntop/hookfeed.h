/*
 * hookfeed.h: a training command's progress as cnntop's Python hook
 * reports it (assets/python/sitecustomize.py, loaded by `cnntop exec`).
 *
 * The hook writes JSON lines on a pipe: "hello" when torch's DataLoader is
 * imported, "workers" with an iterator's worker pids, "config" at an
 * iterator's first batch (torch's intra-op threads and the DataLoader's
 * num_workers), one "batch" per
 * batch (samples, the seconds next() waited, the seconds since the
 * previous batch, the time), "end" when an iterator runs out.  A HookFeed
 * takes the pipe's bytes as they come (lines may arrive cut anywhere) and
 * sums them; hookfeed_figures() turns the sums into images/s, the data
 * wait's share and the step time.  Pure: no I/O, no clock.
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

#define HOOK_MAX_WORKERS 256  /* worker pids kept */
#define HOOK_LINE_MAX 4096    /* a longer line is dropped, counted as bad */

typedef struct HookFeed {
    char line[HOOK_LINE_MAX]; /* the partial line so far */
    size_t len;
    int overflow;             /* 1: the current line is too long, skipping it */
    int hello;                /* 1: the hook saw torch's DataLoader */
    int pid;                  /* the process the hook runs in (hello); 0: not said */
    char torch[32];           /* torch's version, e.g. "1.13.1" */
    long batches;
    double first_samples;     /* samples of the first batch (not in the rate) */
    double samples;           /* samples of the later batches */
    double wait;              /* s next() waited, later batches */
    double first_wait;        /* s the first batch took (workers starting) */
    double step;              /* s between batches (the training step), summed */
    double t_first, t_end;    /* the window, the hook's monotonic s */
    int workers[HOOK_MAX_WORKERS];
    int nworkers;
    int threads;              /* torch.get_num_threads() at the last "config"; -1: not said */
    int loader_workers;       /* the DataLoader's num_workers there; -1: not said */
    long bad;                 /* lines that did not parse or say anything known */
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
} HookFigures;

/* An empty feed: no batch, threads and loader_workers -1 (unknown). */
void hookfeed_init(HookFeed *f);

/* Feeds len bytes read from the pipe.  Returns how many worker pids were
 * new in them (they are f->workers[f->nworkers - returned ..]). */
int hookfeed_bytes(HookFeed *f, const char *data, size_t len);

void hookfeed_figures(const HookFeed *f, HookFigures *out);

#ifdef __cplusplus
}
#endif
#endif
