/*
 * counters_math.c: the counters' arithmetic, pure (no PMU, no kernel, no
 * lock): perf's scaling for multiplexed counters, the difference of two
 * readings, and every figure derived from counts.  counters_derive() is
 * the one place where IPC, the miss rates and the per-second rates are
 * computed; each figure it cannot have says which input is missing.
 */
#include <math.h>
#include <string.h>

#include "cnntop/counters.h"
#include "prof/counters_reading.h"
#include "prof/counters_say.h"

const char *counters_status_name(CtrStatus s)
{
    switch (s) {
    case CTR_OK: return "ok";
    case CTR_NOT_COUNTED: return "not counted";
    case CTR_UNSUPPORTED: return "not supported";
    case CTR_NO_ACCESS: return "no access";
    case CTR_UNKNOWN_EVENT: return "unknown event";
    case CTR_ERROR: return "error";
    }
    return "?";
}

CtrStatus counters_scale(const CounterRaw *raw, double *value, double *fraction)
{
    *value = 0.0;
    *fraction = 0.0;
    if (!raw->valid || raw->running == 0)
        return CTR_NOT_COUNTED;
    if (raw->enabled == 0 || raw->running >= raw->enabled) {
        /* Never multiplexed (running can exceed enabled by a tick's
         * rounding; perf treats that as 100% too). */
        *value = (double)raw->value;
        *fraction = 1.0;
        return CTR_OK;
    }
    *fraction = (double)raw->running / (double)raw->enabled;
    *value = (double)raw->value * ((double)raw->enabled / (double)raw->running);
    return CTR_OK;
}

CounterRaw counters_raw_sub(const CounterRaw *later, const CounterRaw *earlier)
{
    CounterRaw d = {0, 0, 0, 0};

    if (!later->valid || !earlier->valid)
        return d;
    d.value = later->value >= earlier->value ? later->value - earlier->value : 0;
    d.enabled = later->enabled >= earlier->enabled ? later->enabled - earlier->enabled : 0;
    d.running = later->running >= earlier->running ? later->running - earlier->running : 0;
    d.valid = 1;
    return d;
}

/* Finds the reading of kind k for figure f, or says why not in f->why. */
static const CounterReading *need(const CounterReading *r, int n, CtrKind k,
                                  const char *label, CounterFigure *f)
{
    for (int i = 0; i < n; i++) {
        if (r[i].kind != k)
            continue;
        if (r[i].status != CTR_OK) {
            counters_say(f->why, sizeof f->why, "%s %s: %s", label,
                     counters_status_name(r[i].status), r[i].reason);
            return NULL;
        }
        return &r[i];
    }
    counters_say(f->why, sizeof f->why, "%s is not in the event list", label);
    return NULL;
}

/* f = num / den * mul, or n/a naming the missing input. */
static void ratio(CounterFigure *f, const CounterReading *r, int n, CtrKind kn,
                  const char *ln, CtrKind kd, const char *ld, double mul)
{
    const CounterReading *num, *den;

    memset(f, 0, sizeof *f);
    if (!(num = need(r, n, kn, ln, f)) || !(den = need(r, n, kd, ld, f)))
        return;
    if (den->value <= 0.0) {
        counters_say(f->why, sizeof f->why, "%s counted 0", ld);
        return;
    }
    f->ok = 1;
    f->value = num->value / den->value * mul;
}

/* f = num / wall seconds * mul */
static void per_wall(CounterFigure *f, const CounterReading *r, int n, CtrKind kn,
                     const char *ln, double wall_ns, double mul)
{
    const CounterReading *num;

    memset(f, 0, sizeof *f);
    if (!(num = need(r, n, kn, ln, f)))
        return;
    if (!(wall_ns > 0.0)) {
        counters_say(f->why, sizeof f->why, "no wall time to divide by");
        return;
    }
    f->ok = 1;
    f->value = num->value / wall_ns * mul;
}

void counters_derive(const CounterReading *r, int n, double wall_ns, CounterDerived *out)
{
    ratio(&out->ipc, r, n, CTR_KIND_INSTRUCTIONS, "instructions", CTR_KIND_CYCLES, "cycles", 1.0);
    ratio(&out->miss_rate, r, n, CTR_KIND_CACHE_MISSES, "cache-misses", CTR_KIND_CACHE_REFS,
          "cache-references", 1.0);
    ratio(&out->mpki, r, n, CTR_KIND_CACHE_MISSES, "cache-misses", CTR_KIND_INSTRUCTIONS,
          "instructions", 1000.0);
    ratio(&out->branch_miss_rate, r, n, CTR_KIND_BRANCH_MISSES, "branch-misses",
          CTR_KIND_BRANCHES, "branches", 1.0);
    per_wall(&out->cpu_util, r, n, CTR_KIND_TASK_CLOCK, "task-clock", wall_ns, 1.0);
    per_wall(&out->cs_per_s, r, n, CTR_KIND_CTX_SWITCHES, "context-switches", wall_ns, 1e9);
    per_wall(&out->migrations_per_s, r, n, CTR_KIND_MIGRATIONS, "cpu-migrations", wall_ns, 1e9);
    per_wall(&out->faults_per_s, r, n, CTR_KIND_PAGE_FAULTS, "page-faults", wall_ns, 1e9);
}

double counters_figure_value(const CounterFigure *f)
{
    return f->ok ? f->value : NAN;
}

void counters_reading_fill(const CounterEventInfo *ev, const CounterSum *sum,
                           const CounterMiss *miss, const char *no_thread, CounterReading *out)
{
    memset(out, 0, sizeof *out);
    counters_say(out->name, sizeof out->name, "%s", ev->name);
    out->unit = (ev->kind == CTR_KIND_TASK_CLOCK || ev->kind == CTR_KIND_CPU_CLOCK) ? "ns" : "";
    out->kind = ev->kind;
    out->value = sum->scaled;
    out->raw = sum->raw;
    out->enabled = sum->enabled;
    out->running = sum->running;
    out->threads = sum->threads;
    out->fraction = sum->enabled ? (double)sum->running / (double)sum->enabled : 0.0;
    if (out->fraction > 1.0)
        out->fraction = 1.0;
    out->status = CTR_NOT_COUNTED;
    if (ev->status != CTR_OK) {
        out->status = ev->status;
        counters_say(out->reason, sizeof out->reason, "%s", ev->reason);
    } else if (sum->threads == 0 && miss->threads) {
        out->status = miss->status;
        counters_say(out->reason, sizeof out->reason, "%s", miss->reason);
    } else if (sum->threads == 0) {
        counters_say(out->reason, sizeof out->reason, "%s", no_thread);
    } else if (sum->running == 0) {
        counters_say(out->reason, sizeof out->reason, "never got a counter on the PMU "
                     "(all counters taken?)");
    } else {
        out->status = CTR_OK;
        if (miss->threads)
            counters_say(out->reason, sizeof out->reason, "not counted on %d thread(s): %s",
                         miss->threads, miss->reason);
        else if (ev->user_only)
            counters_say(out->reason, sizeof out->reason, "user space only");
    }
}
