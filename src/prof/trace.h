/*
 * trace.h: a Chrome trace-event timeline of the last steps.
 *
 * Threads add complete events (name, start, end) to a ring of TRACE_CAP
 * events with one atomic increment each; the oldest are overwritten, so a
 * long run keeps its last few thousand steps (each step adds about 25
 * events: the step, its data wait and each layer and direction, plus one per
 * loader batch).  trace_write() writes the ring as trace-event JSON
 * (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
 * which Perfetto and chrome://tracing open; call it when no thread adds.
 * Names must be string literals or otherwise outlive the trace.
 */
#ifndef CNNTOP_TRACE_H
#define CNNTOP_TRACE_H

#include <stdatomic.h>
#include <stddef.h>

#define TRACE_CAP 65536
#define TRACE_THREADS 128

typedef struct TraceEvent {
    const char *name;
    const char *cat;    /* "step", "layer", "wait", "loader", "comm" (a rank's waits
                           for the others) */
    double t0, t1;      /* timer_now() seconds */
    int tid;
    long arg;           /* step number or batch images, -1 none */
} TraceEvent;

typedef struct Trace {
    TraceEvent *ev;     /* (TRACE_CAP) */
    atomic_long next;
    double origin;      /* timer_now() at trace_new() */
    struct { int tid; char name[16]; } th[TRACE_THREADS];
    atomic_int nth;
} Trace;

/* Returns NULL when out of memory. */
Trace *trace_new(void);
void trace_free(Trace *t);

void trace_add(Trace *t, const char *cat, const char *name, double t0, double t1, long arg);

/* Names the calling thread in the trace (e.g. "cnntop-load/1"). */
void trace_thread(Trace *t, const char *name);

/* Writes the ring atomically as JSON.  Returns 0 or a negative CN_E* code. */
int trace_write(Trace *t, const char *path, char *err, size_t errlen);

#endif
