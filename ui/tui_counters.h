/*
 * tui_counters.h: the hardware counters as the dashboard shows them.
 *
 * The one place where the dashboard meets the counters module: the run
 * thread attaches the engine's threads before training and detaches them
 * after; the UI thread reads IPC and the cache-miss rate of the compute
 * threads over the last interval, at its 10 Hz pace.  A figure that cannot
 * be had comes with the reason, never as a number.
 *
 * DESIGN: attach/detach run on the run thread, read on the UI thread; the
 * state they share is under a mutex of this file.
 */
#ifndef CNNTOP_TUI_COUNTERS_H
#define CNNTOP_TUI_COUNTERS_H

#include <stddef.h>

#include "cnntop/engine.h"

typedef struct TuiCounterFigs {
    int ipc_ok;          /* 1: ipc holds a figure */
    double ipc;          /* instructions per cycle of the compute threads */
    int miss_ok;
    double miss_rate;    /* cache misses / cache references, 0..1 */
    char why[192];       /* why a figure is n/a, e.g. "counters not wired yet" */
} TuiCounterFigs;

/* The event list (-e/--events as given, NULL: the defaults); call before
 * the first run.  The string must outlive the dashboard (argv does). */
void tui_counters_set_events(const char *events);

/* Run thread, after engine_new(): start counting the engine's threads. */
void tui_counters_attach(Engine *e);

/* Run thread, after engine_train(): stop counting. */
void tui_counters_detach(Engine *e);

/* UI thread: the figures since the previous call (or why there are none). */
void tui_counters_read(TuiCounterFigs *out);

/* One line for the header: what the counters can give on this machine. */
void tui_counters_describe(char *buf, size_t len);

/* Frees what the module holds (at exit). */
void tui_counters_done(void);

#endif
