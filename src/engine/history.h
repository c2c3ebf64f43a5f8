/*
 * history.h: a run's samples over time, whole-run, in bounded memory.
 *
 * Samples are appended at a fixed interval (the sampler's 0.1 s).  When the
 * buffer is full, neighbouring pairs are merged (rates averaged, counts and
 * times taken from the later one) and the interval doubles, so an hour-long
 * run keeps its whole shape in HISTORY_CAP samples.  Every merge bumps
 * `gen`, so readers holding copies know to fetch again.
 */
#ifndef CNNTOP_HISTORY_H
#define CNNTOP_HISTORY_H

#include "cnntop/engine.h"

#define HISTORY_CAP 4096

typedef struct History {
    Sample s[HISTORY_CAP];
    int n;
    int stride;         /* raw samples per stored one (1, 2, 4, ...) */
    int pending;        /* raw samples folded into `acc` so far */
    Sample acc;         /* the stored sample being built at this stride */
    unsigned gen;
} History;

void history_init(History *h);
void history_add(History *h, const Sample *s);

#endif
