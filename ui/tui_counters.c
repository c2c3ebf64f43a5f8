/*
 * tui_counters.c: the dashboard's side of the counters (see
 * tui_counters.h).  The counters module (src/include/cnntop/counters.h)
 * is not yet part of the engine build, so every figure is n/a with that
 * reason; this file is where it will be wired in.
 */
#include <stdio.h>

#include "tui_counters.h"

#define NOT_WIRED "counters not wired yet"

void tui_counters_attach(Engine *e)
{
    (void)e;
}

void tui_counters_detach(Engine *e)
{
    (void)e;
}

void tui_counters_read(TuiCounterFigs *out)
{
    out->ipc_ok = 0;
    out->miss_ok = 0;
    out->ipc = out->miss_rate = 0;
    snprintf(out->why, sizeof out->why, NOT_WIRED);
}

void tui_counters_describe(char *buf, size_t len)
{
    snprintf(buf, len, "counters: n/a: " NOT_WIRED);
}

void tui_counters_done(void)
{
}
