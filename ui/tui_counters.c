/*
 * tui_counters.c: the dashboard's side of the counters (see
 * tui_counters.h).
 *
 * DESIGN
 * One CounterSet per run, made by the run thread when training starts and
 * freed by it when training ends; the engine's thread hook attaches and
 * detaches the engine's threads.  The UI thread reads the compute role's
 * totals at 10 Hz and turns the differences between two reads into IPC
 * and the cache-miss rate of that interval.  `mu` guards `set` and the
 * previous totals: the run thread holds it while making and freeing the
 * set, the UI thread while reading.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/counters.h"
#include "tui_counters.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static CounterSet *set;             /* under mu */
static char set_why[CTR_REASON_LEN] = "no run is going";
static double prev[4];              /* instructions, cycles, refs, misses */
static int have_prev;
static const char *spec;            /* -e LIST, or NULL: the defaults; set before runs */

void tui_counters_set_events(const char *events)
{
    spec = events;
}

void tui_counters_attach(Engine *e)
{
    CounterSet *cs = NULL;
    char err[256];

    if (counters_new(&cs, spec, err, sizeof err) != 0) {
        pthread_mutex_lock(&mu);
        snprintf(set_why, sizeof set_why, "%.180s", err);
        pthread_mutex_unlock(&mu);
        return;
    }
    pthread_mutex_lock(&mu);
    set = cs;
    have_prev = 0;
    pthread_mutex_unlock(&mu);
    engine_set_thread_hook(e, counters_thread_hook, cs);
}

void tui_counters_detach(Engine *e)
{
    engine_set_thread_hook(e, NULL, NULL);
    pthread_mutex_lock(&mu);
    counters_free(set);
    set = NULL;
    snprintf(set_why, sizeof set_why, "no run is going");
    pthread_mutex_unlock(&mu);
}

/* The reading of a kind, or NULL with *why set when it is not counting. */
static const CounterReading *find(const CounterReading *r, int n, CtrKind k, const char *what,
                                  char *why, size_t len)
{
    for (int i = 0; i < n; i++) {
        if (r[i].kind != k)
            continue;
        if (r[i].status == CTR_OK)
            return &r[i];
        snprintf(why, len, "%s %s%s%.120s", what, counters_status_name(r[i].status),
                 r[i].reason[0] ? ": " : "", r[i].reason);
        return NULL;
    }
    snprintf(why, len, "%s not in the event list", what);
    return NULL;
}

void tui_counters_read(TuiCounterFigs *out)
{
    CounterReading r[CTR_MAX_EVENTS];
    char why[4][CTR_REASON_LEN];
    static const CtrKind kinds[4] = {CTR_KIND_INSTRUCTIONS, CTR_KIND_CYCLES, CTR_KIND_CACHE_REFS,
                                     CTR_KIND_CACHE_MISSES};
    static const char *const names[4] = {"instructions", "cycles", "cache-references",
                                         "cache-misses"};
    const CounterReading *c[4];
    double now[4] = {0};

    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&mu);
    if (!set) {
        snprintf(out->why, sizeof out->why, "%s", set_why);
        pthread_mutex_unlock(&mu);
        return;
    }
    int n = counters_read(set, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);
    for (int k = 0; k < 4; k++) {
        c[k] = find(r, n, kinds[k], names[k], why[k], sizeof why[k]);
        now[k] = c[k] ? c[k]->value : 0;
    }
    int first = !have_prev;
    double d[4];
    for (int k = 0; k < 4; k++) {
        d[k] = now[k] - prev[k];
        prev[k] = now[k];
    }
    have_prev = 1;
    pthread_mutex_unlock(&mu);
    if (!c[0] || !c[1])
        snprintf(out->why, sizeof out->why, "%s", !c[0] ? why[0] : why[1]);
    else if (first || !(d[1] > 0))
        snprintf(out->why, sizeof out->why, "counting, first interval pending");
    else {
        out->ipc_ok = 1;
        out->ipc = d[0] / d[1];
    }
    if (c[2] && c[3] && !first && d[2] > 0) {
        out->miss_ok = 1;
        out->miss_rate = d[3] / d[2];
    } else if (!out->why[0])
        snprintf(out->why, sizeof out->why, "%s", !c[2] ? why[2] : !c[3] ? why[3] : "no cache references yet");
}

void tui_counters_describe(char *buf, size_t len)
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

void tui_counters_done(void)
{
}
