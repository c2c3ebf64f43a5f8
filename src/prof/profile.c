/*
 * profile.c: the per-op step profiler (see profile.h): the ops' names,
 * the trace of each lap, and the trainer's counters per op.
 */
#include <string.h>

#include "cnntop/counters.h"
#include "prof/profile.h"

static const char *const prof_names[PROF_NOPS] = {
    [PROF_DATA] = "data",
    [PROF_CONV1_F] = "conv1 fwd", [PROF_BN1_F] = "bn1+relu+pool1 fwd",
    [PROF_CONV2_F] = "conv2 fwd", [PROF_BN2_F] = "bn2+relu+pool2 fwd",
    [PROF_CONV3_F] = "conv3 fwd", [PROF_BN3_F] = "bn3+relu+pool3 fwd",
    [PROF_FC1_F] = "fc1+relu+drop fwd", [PROF_FC2_F] = "fc2+relu+drop fwd",
    [PROF_FC3_F] = "fc3 fwd", [PROF_LOSS] = "softmax xent",
    [PROF_FC3_B] = "fc3 bwd", [PROF_FC2_B] = "fc2 bwd", [PROF_FC1_B] = "fc1 bwd",
    [PROF_BN3_B] = "bn3 bwd", [PROF_CONV3_B] = "conv3 bwd",
    [PROF_BN2_B] = "bn2 bwd", [PROF_CONV2_B] = "conv2 bwd",
    [PROF_BN1_B] = "bn1 bwd", [PROF_CONV1_B] = "conv1 bwd",
    [PROF_OPTIM] = "adam",
};

const char *profile_name(ProfOp op)
{
    return (op >= 0 && op < PROF_NOPS) ? prof_names[op] : "?";
}

void profile_trace(Profile *p, ProfOp op, double t0, double t1)
{
    trace_add(p->trace, "layer", profile_name(op), t0, t1, -1);
}

void profile_reset(Profile *p, CounterSet *cs)
{
    Trace *trace = p->trace;

    memset(p, 0, sizeof *p);
    p->trace = trace;
    p->cs = cs;
    if (!cs)
        return;
    int n = counters_count(cs);
    p->nev = n < PROF_EVENTS ? n : PROF_EVENTS;
    for (int i = 0; i < p->nev; i++) {
        CounterEventInfo info;
        if (counters_event_info(cs, i, &info) != 0 || info.status != CTR_OK)
            continue;
        if (info.kind == CTR_KIND_INSTRUCTIONS || info.kind == CTR_KIND_CYCLES ||
            info.kind == CTR_KIND_CACHE_REFS || info.kind == CTR_KIND_CACHE_MISSES)
            p->want |= 1u << i;
    }
}

static int read_self(Profile *p, CounterRaw *now)
{
    int n = counters_self_read(p->cs, p->want, now, CTR_MAX_EVENTS);
    return n < 0 ? 0 : n < p->nev ? n : p->nev;
}

void profile_counters_mark(Profile *p)
{
    CounterRaw now[CTR_MAX_EVENTS];
    int n = read_self(p, now);

    for (int i = 0; i < n; i++) {
        p->last[i][0] = now[i].value;
        p->last[i][1] = now[i].enabled;
        p->last[i][2] = now[i].running;
        p->ctr_ok[i] = now[i].valid;
    }
}

void profile_counters_lap(Profile *p, ProfOp op)
{
    CounterRaw now[CTR_MAX_EVENTS];
    int n = read_self(p, now);

    for (int i = 0; i < n; i++) {
        CounterRaw then = {p->last[i][0], p->last[i][1], p->last[i][2], p->ctr_ok[i]};
        CounterRaw d = counters_raw_sub(&now[i], &then);
        double v, frac;
        if (counters_scale(&d, &v, &frac) == CTR_OK)
            p->ctr[op][i] += v;
        p->last[i][0] = now[i].value;
        p->last[i][1] = now[i].enabled;
        p->last[i][2] = now[i].running;
        p->ctr_ok[i] = now[i].valid;
    }
}
