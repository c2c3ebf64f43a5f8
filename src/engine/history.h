/*
 * history.h: a run's samples over time, whole-run, in bounded memory, kept
 * as a round-robin database keeps them: the recent past at full rate,
 * older stretches coarser.
 *
 * Samples arrive at the sampler's interval (0.1 s) into level 0.  When a
 * level holds 2 x HISTORY_KEEP samples, its oldest HISTORY_KEEP are merged
 * pairwise into the level above (each covering twice the time), so level L
 * holds between HISTORY_KEEP and 2 x HISTORY_KEEP samples of about
 * 0.1 x 2^L s each: the last 25.6 s or more at full rate, the minutes
 * before at 0.2 to 0.8 s, the hours before at minutes.  The top level,
 * when full, merges its own samples pairwise in place, so no run, however
 * long, holds more than HISTORY_CAP samples; a day at 10 Hz (864000
 * samples) fits in the levels without that.  The samples are one array,
 * oldest (coarsest) first, newest last: level L is a contiguous stretch
 * after the levels above it.
 *
 * A merge is exact: each Sample carries its span (dt, contiguous from the
 * run's start), and the history keeps beside it the weights its rates were
 * measured over (HistWeight), so a merged sample is the one the sampler
 * would have taken over the longer interval: images/s is the images over
 * the span's time, the data-wait share the wait over the step time, IPC
 * the instructions over the cycles, the miss rate the misses over the
 * references, the queue fill its mean over the time a queue existed; the
 * counts, the time, the loss and the settings are the later sample's (as
 * of the span's end).  Whole-run means over the history are therefore
 * those over every raw sample.
 *
 * Appending keeps every index; a merge renumbers and bumps `gen`, so
 * readers holding copies know to fetch again (every HISTORY_KEEP samples).
 */
#ifndef CNNTOP_HISTORY_H
#define CNNTOP_HISTORY_H

#include "cnntop/engine.h"

#define HISTORY_KEEP 256   /* samples a level keeps after it merged; it merges at twice */
#define HISTORY_LEVELS 12  /* level L: about 0.1 x 2^L s per sample */
#define HISTORY_CAP (2 * HISTORY_KEEP * HISTORY_LEVELS) /* samples held at most */

/* What a sample's rates were measured over, for exact merges; 0 where the
 * rate was not measured (NAN, or no queue). */
typedef struct HistWeight {
    double busy;    /* seconds of step time (data_wait_share's denominator) */
    double cycles;  /* the trainer role's cycles (ipc's denominator) */
    double refs;    /* its cache references (miss_rate's denominator) */
    double fill_dt; /* seconds of the span with a loader queue (queue_fill's weight) */
} HistWeight;

typedef struct History {
    Sample s[HISTORY_CAP];
    HistWeight w[HISTORY_CAP]; /* w[i] is s[i]'s */
    int n;
    int count[HISTORY_LEVELS]; /* samples of each level: level L follows levels > L */
    unsigned gen;
} History;

void history_init(History *h);

/* Appends a raw sample s (s->dt its interval) with the weights of its rates
 * (w->fill_dt is set here from s->queue_fill and s->dt; NULL: busy = dt, no
 * counters), merging levels as they fill. */
void history_add(History *h, const Sample *s, const HistWeight *w);

#endif
