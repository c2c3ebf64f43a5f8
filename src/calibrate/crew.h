/*
 * crew.h: T threads for one measurement, and their timing windows.
 *
 * DESIGN
 * Each measurement is one "crew" of T threads started for it and joined
 * after it; the calling thread is member 0.  Members share only the bench
 * struct of their phase: read-only inputs set before the crew starts, one
 * output slot per member, and a pthread barrier that starts every timed
 * part at the same moment (so the T threads contend for the caches and
 * memory as the engine's compute threads do).  Member 0 alone writes what
 * decides the next step (the triad's stop flag), between two barriers, so
 * no lock is needed.  Buffers are allocated and touched once per member,
 * inside the member (fresh pages are slow on some VMs, and touching them in
 * parallel spreads that cost), and reused for every shape.
 */
#ifndef CNNTOP_CREW_H
#define CNNTOP_CREW_H

#include <stddef.h>

/* One member's work: `bench` is the phase's shared struct, `tid` 0..T-1. */
typedef void (*CrewFn)(void *bench, int tid);

/*
 * Runs fn(bench, tid) for tid 0..T-1 (T <= CN_MAX_THREADS), tid 0 on the
 * calling thread, and returns when all are done.  The others start with
 * the asynchronous signals blocked, so that those still reach the UI
 * thread.  Returns 0, or -CN_ENOMEM when a thread could not start (then fn
 * ran nowhere: no member waits at a barrier for a thread that does not
 * exist).
 */
int crew_run(int T, CrewFn fn, void *bench, char *err, size_t errlen);

/* A timing window: every member's start and end, timer_now() seconds. */
typedef struct CrewWindow {
    double *t0, *t1;          /* [T] */
} CrewWindow;

/* Allocates w for T members; 0 or -CN_ENOMEM with err. */
int crew_window_alloc(CrewWindow *w, int T, char *err, size_t errlen);
void crew_window_free(CrewWindow *w);

/* From the first member's start to the last one's end, seconds. */
double crew_window_span(const CrewWindow *w, int T);

#endif
