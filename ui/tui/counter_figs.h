/*
 * counter_figs.h: the hardware counters as the dashboard shows them.
 *
 * The counters reach the dashboard the engine's way, as they reach `cnntop
 * run`: the run thread makes a CounterSet for each run and hands it to
 * engine_set_counters(); the engine's sampler derives IPC and the
 * cache-miss rate of each interval into its samples (Sample.ipc,
 * .miss_rate) and its profile per layer (LayerTime.ipc, .miss_rate).  This
 * file only picks the figures of the newest sample and, where there is
 * none, says why (the set's reading of the events), never a number.
 *
 * DESIGN: counter_figs_new runs on the run thread, the rest on the UI
 * thread; the set's lifetime is the run's (runthread.h).  No state here but
 * the event list, set once before the first run.
 */
#ifndef CNNTOP_TUI_COUNTER_FIGS_H
#define CNNTOP_TUI_COUNTER_FIGS_H

#include <stddef.h>

#include "cnntop/counters.h"
#include "cnntop/engine.h"

typedef struct TuiCounterFigs {
    int ipc_ok;          /* 1: ipc holds a figure */
    double ipc;          /* instructions per cycle of the compute threads */
    int miss_ok;
    double miss_rate;    /* cache misses / cache references, 0..1 */
    char why[192];       /* why a figure is n/a, e.g. "no run is going" */
} TuiCounterFigs;

/* The event list (-e/--events as given, NULL: the defaults); call before
 * the first run.  The string must outlive the dashboard (argv does). */
void counter_figs_set_events(const char *events);

/* Run thread: a new set of the event list for a run, or NULL with why. */
CounterSet *counter_figs_new(char *why, size_t len);

/*
 * UI thread: the figures of the run's newest sample `last` (NULL: none
 * yet), and why a figure is n/a, from the run's set `cs` (NULL: there is
 * none, for the reason `why_none`).
 */
void counter_figs_read(TuiCounterFigs *out, CounterSet *cs, const Sample *last,
                       const char *why_none);

/* One line for the header: what the counters can give on this machine. */
void counter_figs_describe(char *buf, size_t len);

#endif
