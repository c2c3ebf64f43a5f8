/*
 * counter_figs.c: the dashboard's side of the counters (see
 * counter_figs.h).  The figures are the engine's (its samples); what is
 * computed here is only the reason when there is no figure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/counter_figs.h"

static const char *spec; /* -e LIST, or NULL: the defaults; set before runs */

void counter_figs_set_events(const char *events)
{
    spec = events;
}

CounterSet *counter_figs_new(char *why, size_t len)
{
    CounterSet *cs = NULL;
    char err[256];

    if (counters_new(&cs, spec, err, sizeof err) != 0) {
        snprintf(why, len, "%.180s", err);
        return NULL;
    }
    return cs;
}

/* Why fig has no value in this interval: the set's reason when the
 * events cannot be had, else that the first interval is still running. */
static void why_not(char *buf, size_t len, const CounterFigure *fig)
{
    if (!fig->ok)
        snprintf(buf, len, "%s", fig->why);
    else
        snprintf(buf, len, "counting, first interval pending");
}

void counter_figs_read(TuiCounterFigs *out, CounterSet *cs, const Sample *last,
                       const char *why_none)
{
    CounterReading r[CTR_MAX_EVENTS];
    CounterDerived d;

    memset(out, 0, sizeof *out);
    if (!cs) {
        snprintf(out->why, sizeof out->why, "%s", why_none);
        return;
    }
    if (last && isfinite(last->ipc)) {
        out->ipc_ok = 1;
        out->ipc = last->ipc;
    }
    if (last && isfinite(last->miss_rate)) {
        out->miss_ok = 1;
        out->miss_rate = last->miss_rate;
    }
    if (out->ipc_ok && out->miss_ok)
        return;
    int n = counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);
    counters_derive(r, n, 0.0, &d);
    why_not(out->why, sizeof out->why, out->ipc_ok ? &d.miss_rate : &d.ipc);
}

void counter_figs_describe(char *buf, size_t len)
{
    CounterSet *cs;
    CounterEventInfo ev;
    char err[256];

    if (counters_new(&cs, spec, err, sizeof err) != 0) {
        snprintf(buf, len, "counters n/a: %.200s", err);
        return;
    }
    int ok = 0, n = counters_count(cs);
    char why[CTR_REASON_LEN] = "";
    for (int i = 0; i < n; i++) {
        if (counters_event_info(cs, i, &ev) != 0 || !ev.hardware)
            continue;
        if (ev.status == CTR_OK)
            ok++;
        else if (!why[0])
            snprintf(why, sizeof why, "%.50s: %.120s", ev.name, ev.reason);
    }
    if (ok && !why[0])
        snprintf(buf, len, "counters: hardware events ok");
    else if (ok)
        snprintf(buf, len, "counters: some n/a (%s)", why);
    else
        snprintf(buf, len, "counters n/a: %s", why[0] ? why : "no hardware events");
    counters_free(cs);
}
