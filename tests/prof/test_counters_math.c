/*
 * test_counters_math.c: the counters' pure parts on recorded numbers, no
 * PMU and no kernel needed: the -e grammar (counters_spec.c), perf's
 * scaling, including never-ran and multiplexed readings, and the
 * difference of two readings (counters_math.c), every derived figure and
 * its "n/a because ..." reason (counters_derive, the one place they are
 * computed), and the scheduler's arithmetic: the /proc parsers, the wait
 * share and the oversubscription verdict (schedstat.c).
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "prof/counters_reading.h"
#include "prof/counters_spec.h"
#include "prof/schedstat.h"

static void test_spec(void)
{
    char names[CTR_MAX_EVENTS][CTR_NAME_LEN];
    char err[256];

    CHECK_INT(counters_parse_spec(NULL, names, CTR_MAX_EVENTS, err, sizeof err), ==, 9);
    CHECK(!strcmp(names[0], "cycles") && !strcmp(names[8], "page-faults"));
    CHECK_INT(counters_parse_spec("", names, CTR_MAX_EVENTS, err, sizeof err), ==, 9);
    CHECK_INT(counters_parse_spec(" task-clock , perf::cycles", names, CTR_MAX_EVENTS, err,
                                  sizeof err), ==, 2);
    CHECK(!strcmp(names[0], "task-clock") && !strcmp(names[1], "perf::cycles"));
    CHECK_INT(counters_parse_spec("+LLC-load-misses,cycles", names, CTR_MAX_EVENTS, err,
                                  sizeof err), ==, 10);
    CHECK(!strcmp(names[9], "LLC-load-misses"));
    CHECK_INT(counters_parse_spec("a,,b", names, CTR_MAX_EVENTS, err, sizeof err), ==,
              -CN_EINVAL);
    CHECK_STR_HAS(err, "empty event name");
    CHECK_INT(counters_parse_spec("a,b,c", names, 2, err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "more than 2");
}

static void test_scale(void)
{
    double v, f;
    CounterRaw full = {1000, 5000, 5000, 1}, mux = {1000, 4000, 1000, 1};
    CounterRaw never = {0, 4000, 0, 1}, invalid = {7, 7, 7, 0}, over = {10, 100, 101, 1};

    CHECK_INT(counters_scale(&full, &v, &f), ==, CTR_OK);
    CHECK_NEAR(v, 1000, 0);
    CHECK_NEAR(f, 1.0, 0);
    CHECK_INT(counters_scale(&mux, &v, &f), ==, CTR_OK);
    CHECK_NEAR(v, 4000, 1e-9);
    CHECK_NEAR(f, 0.25, 1e-12);
    CHECK_INT(counters_scale(&never, &v, &f), ==, CTR_NOT_COUNTED);
    CHECK_NEAR(v, 0, 0);
    CHECK_INT(counters_scale(&invalid, &v, &f), ==, CTR_NOT_COUNTED);
    CHECK_INT(counters_scale(&over, &v, &f), ==, CTR_OK);
    CHECK_NEAR(f, 1.0, 0);
    CHECK_NEAR(v, 10, 0);

    CounterRaw a = {100, 1000, 500, 1}, b = {400, 3000, 1000, 1};
    CounterRaw d = counters_raw_sub(&b, &a);
    CHECK(d.valid && d.value == 300 && d.enabled == 2000 && d.running == 500);
    CHECK_INT(counters_scale(&d, &v, &f), ==, CTR_OK);
    CHECK_NEAR(v, 1200, 1e-9); /* the delta is scaled by its own times */
    CHECK_NEAR(f, 0.25, 1e-12);
    d = counters_raw_sub(&b, &invalid);
    CHECK(!d.valid);
}

static CounterReading rec(const char *name, CtrKind k, CtrStatus st, double value)
{
    CounterReading r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.kind = k;
    r.status = st;
    r.value = value;
    r.fraction = st == CTR_OK ? 1.0 : 0.0;
    if (st != CTR_OK)
        snprintf(r.reason, sizeof r.reason, "no PMU exposed to this machine (a virtual machine?)");
    return r;
}

static void test_derive(void)
{
    CounterReading r[8];
    CounterDerived d;

    r[0] = rec("cycles", CTR_KIND_CYCLES, CTR_OK, 2e9);
    r[1] = rec("instructions", CTR_KIND_INSTRUCTIONS, CTR_OK, 3e9);
    r[2] = rec("cache-references", CTR_KIND_CACHE_REFS, CTR_OK, 4e6);
    r[3] = rec("cache-misses", CTR_KIND_CACHE_MISSES, CTR_OK, 1e6);
    r[4] = rec("task-clock", CTR_KIND_TASK_CLOCK, CTR_OK, 3.5e9);
    r[5] = rec("context-switches", CTR_KIND_CTX_SWITCHES, CTR_OK, 500);
    counters_derive(r, 6, 1e9, &d);
    CHECK(d.ipc.ok);
    CHECK_NEAR(d.ipc.value, 1.5, 1e-12);
    CHECK(d.miss_rate.ok);
    CHECK_NEAR(d.miss_rate.value, 0.25, 1e-12);
    CHECK(d.mpki.ok);
    CHECK_NEAR(d.mpki.value, 1e6 * 1000 / 3e9, 1e-9);
    CHECK(d.cpu_util.ok);
    CHECK_NEAR(d.cpu_util.value, 3.5, 1e-12);
    CHECK(d.cs_per_s.ok);
    CHECK_NEAR(d.cs_per_s.value, 500, 1e-9);
    CHECK(!d.branch_miss_rate.ok);
    CHECK_STR_HAS(d.branch_miss_rate.why, "not in the event list");
    CHECK(!d.migrations_per_s.ok);
    CHECK_STR_HAS(d.migrations_per_s.why, "cpu-migrations is not in the event list");
    CHECK_NEAR(counters_figure_value(&d.ipc), 1.5, 1e-12);
    CHECK(isnan(counters_figure_value(&d.branch_miss_rate)));

    /* No PMU: the hardware figures are n/a and say which input is missing. */
    r[0] = rec("cycles", CTR_KIND_CYCLES, CTR_UNSUPPORTED, 0);
    r[2] = rec("cache-references", CTR_KIND_CACHE_REFS, CTR_UNSUPPORTED, 0);
    r[6] = rec("cpu-migrations", CTR_KIND_MIGRATIONS, CTR_OK, 6);
    r[7] = rec("page-faults", CTR_KIND_PAGE_FAULTS, CTR_OK, 168);
    counters_derive(r, 8, 0, &d);
    CHECK(!d.ipc.ok);
    CHECK_STR_HAS(d.ipc.why, "cycles not supported");
    CHECK_STR_HAS(d.ipc.why, "no PMU");
    CHECK(!d.miss_rate.ok);
    CHECK_STR_HAS(d.miss_rate.why, "cache-references");
    CHECK(d.mpki.ok); /* misses and instructions are both there */
    CHECK(!d.cpu_util.ok);
    CHECK_STR_HAS(d.cpu_util.why, "wall");
    CHECK(!d.faults_per_s.ok); /* counted, but no wall time to divide by */
    CHECK_STR_HAS(d.faults_per_s.why, "wall");
    CHECK(isnan(counters_figure_value(&d.faults_per_s)));
}

/* Zero denominators and never-ran inputs. */
static void test_derive_zero(void)
{
    CounterReading r[2];
    CounterDerived d;

    r[0] = rec("cycles", CTR_KIND_CYCLES, CTR_OK, 0);
    r[1] = rec("instructions", CTR_KIND_INSTRUCTIONS, CTR_NOT_COUNTED, 0);
    counters_derive(r, 2, 1e9, &d);
    CHECK(!d.ipc.ok);
    CHECK_STR_HAS(d.ipc.why, "instructions not counted");
    r[1] = rec("instructions", CTR_KIND_INSTRUCTIONS, CTR_OK, 5);
    counters_derive(r, 2, 1e9, &d);
    CHECK(!d.ipc.ok);
    CHECK_STR_HAS(d.ipc.why, "cycles counted 0");
}

/* The per-second rates of the software events, over 2 s of wall. */
static void test_derive_rates(void)
{
    CounterReading r[3];
    CounterDerived d;

    r[0] = rec("context-switches", CTR_KIND_CTX_SWITCHES, CTR_OK, 500);
    r[1] = rec("cpu-migrations", CTR_KIND_MIGRATIONS, CTR_OK, 6);
    r[2] = rec("page-faults", CTR_KIND_PAGE_FAULTS, CTR_OK, 168);
    counters_derive(r, 3, 2e9, &d);
    CHECK(d.migrations_per_s.ok);
    CHECK_NEAR(d.migrations_per_s.value, 3, 1e-12);
    CHECK(d.faults_per_s.ok);
    CHECK_NEAR(d.faults_per_s.value, 84, 1e-12);
    CHECK_NEAR(d.cs_per_s.value, 250, 1e-9);
    r[2].status = CTR_NOT_COUNTED;
    counters_derive(r, 3, 2e9, &d);
    CHECK(!d.faults_per_s.ok);
    CHECK_STR_HAS(d.faults_per_s.why, "page-faults not counted");
}

static void test_schedstat_pure(void)
{
    SchedThread a, b, acc;
    CounterSched cs;

    memset(&a, 0, sizeof a);
    CHECK_INT(schedstat_parse_sched("1168683 250 17\n", &a), ==, 0);
    CHECK(a.on_cpu_ns == 1168683 && a.wait_ns == 250 && a.timeslices == 17 && a.have_sched);
    CHECK_INT(schedstat_parse_sched("garbage", &a), ==, -1);
    CHECK_INT(schedstat_parse_status("Name:\tx\nvoluntary_ctxt_switches:\t5\n"
                                     "nonvoluntary_ctxt_switches:\t7\n", &a), ==, 0);
    CHECK(a.vol_cs == 5 && a.invol_cs == 7 && a.have_status);
    CHECK_INT(schedstat_parse_status("Name:\tx\n", &b), ==, -1);

    b = a;
    b.on_cpu_ns += 1000;
    b.wait_ns += 600;
    b.vol_cs += 3;
    memset(&acc, 0, sizeof acc);
    schedstat_add_delta(&acc, &b, &a);
    CHECK(acc.on_cpu_ns == 1000 && acc.wait_ns == 600 && acc.vol_cs == 3 && acc.invol_cs == 0);

    CHECK(!schedstat_oversubscribed(0.19e9, 1e9));
    CHECK(schedstat_oversubscribed(0.21e9, 1e9));
    CHECK(!schedstat_oversubscribed(0.05e9, 0.09e9)); /* too short to judge */

    acc.wait_ns = 300000000; /* 0.3 s of 1 s of threads */
    acc.vol_cs = 90;
    acc.invol_cs = 10;
    schedstat_summarise(&cs, &acc, 2, 0, 1.0, 0.5);
    CHECK(cs.available && cs.have_wait);
    CHECK_NEAR(cs.wait_share, 0.3, 1e-9);
    CHECK_NEAR(cs.cs_per_s, 200, 1e-9);
    CHECK(cs.oversubscribed);
    schedstat_summarise(&cs, &acc, 0, 0, 0, 0);
    CHECK(!cs.available);
    CHECK_STR_HAS(cs.reason, "no thread");
}

/* A reading from summed counts: each reason a figure can be missing, in
 * the order they are judged (counters_reading_fill, shared by the counter
 * set and exec's process tree). */
static void test_reading(void)
{
    CounterEventInfo ev = {.name = "cycles", .kind = CTR_KIND_CYCLES, .status = CTR_OK};
    CounterSum sum = {.scaled = 3e9, .raw = 15e8, .enabled = 2000, .running = 1000, .threads = 2};
    CounterMiss none = {0, CTR_OK, ""}, one = {1, CTR_NO_ACCESS, "perf_event_paranoid is 3"};
    CounterReading r;

    counters_reading_fill(&ev, &sum, &none, "no train thread has run", &r);
    CHECK_INT(r.status, ==, CTR_OK);
    CHECK_NEAR(r.value, 3e9, 1e-6);
    CHECK_NEAR(r.fraction, 0.5, 1e-12);
    CHECK_INT(r.threads, ==, 2);
    CHECK(r.reason[0] == 0);
    CHECK(r.unit[0] == 0);
    counters_reading_fill(&ev, &sum, &one, "no train thread has run", &r);
    CHECK_INT(r.status, ==, CTR_OK); /* counted on the others */
    CHECK_STR_HAS(r.reason, "not counted on 1 thread(s): perf_event_paranoid is 3");
    sum.threads = 0;
    counters_reading_fill(&ev, &sum, &one, "no train thread has run", &r);
    CHECK_INT(r.status, ==, CTR_NO_ACCESS);
    CHECK(strcmp(r.reason, "perf_event_paranoid is 3") == 0);
    counters_reading_fill(&ev, &sum, &none, "no train thread has run", &r);
    CHECK_INT(r.status, ==, CTR_NOT_COUNTED);
    CHECK(strcmp(r.reason, "no train thread has run") == 0);
    sum.threads = 1;
    sum.running = 0;
    counters_reading_fill(&ev, &sum, &none, "-", &r);
    CHECK_INT(r.status, ==, CTR_NOT_COUNTED);
    CHECK_STR_HAS(r.reason, "never got a counter on the PMU");
    sum.running = sum.enabled;
    ev.status = CTR_UNSUPPORTED;
    snprintf(ev.reason, sizeof ev.reason, "no PMU");
    counters_reading_fill(&ev, &sum, &none, "-", &r);
    CHECK_INT(r.status, ==, CTR_UNSUPPORTED);
    CHECK(strcmp(r.reason, "no PMU") == 0);
    ev.status = CTR_OK;
    ev.user_only = 1;
    ev.kind = CTR_KIND_TASK_CLOCK;
    counters_reading_fill(&ev, &sum, &none, "-", &r);
    CHECK(strcmp(r.reason, "user space only") == 0);
    CHECK(strcmp(r.unit, "ns") == 0);
}

int main(void)
{
    test_spec();
    test_scale();
    test_derive();
    test_derive_zero();
    test_derive_rates();
    test_schedstat_pure();
    test_reading();
    fprintf(stderr, "checked: -e grammar; scaling (full, multiplexed, never ran, deltas); "
            "derived figures, their n/a reasons and NAN values; /proc parsers and the "
            "oversubscription verdict; a reading's missing-figure reasons\n");
    return check_report();
}
