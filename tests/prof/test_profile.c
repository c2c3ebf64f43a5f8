/*
 * test_profile.c: the per-op step profiler (prof/profile.c) over a real
 * counter set: which events a lap reads (those of the per-op figures that
 * opened, nothing where none did) and the lap's arithmetic, each op given
 * the scaled difference since the last lap.  The arithmetic runs on
 * task-clock, the one event every machine counts, asked for by hand.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cnntop/counters.h"
#include "prof/profile.h"

static double thread_cpu_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void burn_cpu_s(double s)
{
    volatile double x = 1.0;
    double t0 = thread_cpu_s();

    while (thread_cpu_s() - t0 < s)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
}

static int find(const CounterSet *cs, const char *name)
{
    for (int i = 0; i < counters_count(cs); i++) {
        CounterEventInfo info;
        counters_event_info(cs, i, &info);
        if (!strcmp(info.name, name))
            return i;
    }
    return -1;
}

/* The events a lap reads: the figures' (IPC, miss rate) that opened. */
static void test_want(void)
{
    CounterSet *cs;
    Profile p;
    char err[256];

    memset(&p, 0, sizeof p);
    profile_reset(&p, NULL);
    CHECK(p.cs == NULL && p.want == 0 && p.nev == 0);
    CHECK_INT(counters_new(&cs, NULL, err, sizeof err), ==, 0);
    profile_reset(&p, cs);
    CHECK(p.cs == cs);
    CHECK_INT(p.nev, ==, counters_count(cs) < PROF_EVENTS ? counters_count(cs) : PROF_EVENTS);
    for (int i = 0; i < p.nev; i++) {
        CounterEventInfo info;
        counters_event_info(cs, i, &info);
        int figure = info.kind == CTR_KIND_INSTRUCTIONS || info.kind == CTR_KIND_CYCLES ||
                     info.kind == CTR_KIND_CACHE_REFS || info.kind == CTR_KIND_CACHE_MISSES;
        CHECK_INT((int)(p.want >> i & 1u), ==, figure && info.status == CTR_OK);
        if (info.kind == CTR_KIND_TASK_CLOCK)
            CHECK(!(p.want >> i & 1u)); /* no per-op figure of its own */
    }
    counters_free(cs);
}

/* Two ops lapped on task-clock: each gets its own CPU time, within its
 * wall time, and an op never lapped gets nothing. */
static void test_laps(void)
{
    CounterSet *cs;
    Profile p;
    char err[256];

    CHECK_INT(counters_new(&cs, "task-clock,instructions", err, sizeof err), ==, 0);
    int tc = find(cs, "task-clock");
    CounterEventInfo info;
    counters_event_info(cs, tc, &info);
    if (info.status != CTR_OK) {
        counters_free(cs);
        check_skip("task-clock does not open here (perf_event_paranoid 3 or a seccomp policy)");
    }
    CHECK_INT(counters_attach(cs, counters_gettid(), CN_ROLE_TRAIN, err, sizeof err), ==, 0);
    memset(&p, 0, sizeof p);
    profile_reset(&p, cs);
    p.want |= 1u << tc;
    for (int step = 0; step < 3; step++) {
        double t0 = timer_now();
        profile_counters_mark(&p);
        burn_cpu_s(0.02);
        profile_lap(&p, PROF_CONV2_F, &t0);
        burn_cpu_s(0.01);
        profile_lap(&p, PROF_OPTIM, &t0);
    }
    CHECK(p.ctr_ok[tc]);
    for (int op = 0; op < PROF_NOPS; op++) {
        double ns = p.ctr[op][tc];
        if (op != PROF_CONV2_F && op != PROF_OPTIM) {
            CHECK(ns == 0.0);
            continue;
        }
        /* At least the CPU time burnt in it (the clocks differ by their
         * reads' own cost), never more than its wall time. */
        CHECK(ns * 1e-9 >= (op == PROF_CONV2_F ? 0.06 : 0.03) * 0.98);
        CHECK(ns * 1e-9 <= p.seconds[op] * 1.02 + 2e-4);
        CHECK_INT((int)p.calls[op], ==, 3);
    }
    counters_detach(cs, counters_gettid());
    counters_free(cs);
}

int main(void)
{
    test_want();
    test_laps();
    fprintf(stderr, "checked: the events a lap reads (the per-op figures' that opened); two ops "
                    "lapped on task-clock, each its own CPU time within its wall time\n");
    return check_report();
}
