/*
 * test_counters.c: the counters' hardware path, for real: libpfm4's
 * encoding (counters_encode.c), perf_event_open and the errno -> reason
 * table (counters_kernel.c), and the set (counters_set.c) on this kernel.
 * The pure arithmetic is test_counters_math.c's.
 *
 * Kernel parts, branching on what this kernel answers rather than on what
 * this machine is known to be: software events open and count per thread
 * (task-clock against CLOCK_THREAD_CPUTIME_ID), a thread opened by tid from
 * another thread, role totals kept apart and kept after threads leave,
 * context switches and run-queue wait rising when two threads share a CPU,
 * slot reuse past CTR_MAX_THREADS, a sampler reading while threads come and
 * go (for TSan), and the cost of counters_self_read().  Hardware events
 * either open and count (a machine with a PMU) or carry the no-PMU reason.
 * Exits 77 only when perf_event_open is forbidden altogether.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "prof/counters_encode.h"
#include "prof/counters_kernel.h"
#include "prof/counters_spec.h"
#include "prof/schedstat.h"

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Spins on the CPU for about `ms` of thread CPU time. */
static _Thread_local volatile double burn_sink;
static void burn_cpu(double ms)
{
    double end = thread_cpu_ns() + ms * 1e6, x = 1.0;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    burn_sink = x;
}

/* The reading of kind k in r[0..n); when there is none, a failed check and
 * a blank reading (never r[-1]). */
static const CounterReading *find_kind(const CounterReading *r, int n, CtrKind k)
{
    static CounterReading none;

    for (int i = 0; i < n; i++)
        if (r[i].kind == k)
            return &r[i];
    fprintf(stderr, "no reading of kind %d among %d\n", (int)k, n);
    CHECK(!"a reading of the kind");
    memset(&none, 0, sizeof none);
    none.status = CTR_NOT_COUNTED;
    return &none;
}

/* The index of the event called name in cs; a failed check and 0 (a valid
 * index of any set) when there is none. */
static int find_name(CounterSet *cs, const char *name)
{
    CounterEventInfo info;
    for (int i = 0; i < counters_count(cs); i++)
        if (counters_event_info(cs, i, &info) == 0 && !strcmp(info.name, name))
            return i;
    fprintf(stderr, "no event '%s'\n", name);
    CHECK(!"an event of the name");
    return 0;
}

/* ---- the errno -> reason table ---- */

static void test_reasons(void)
{
    char why[CTR_REASON_LEN];

    CHECK_INT(counters_open_reason(ENOENT, 1, 0, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "no PMU exposed to this machine (a virtual machine?)");
    CHECK_INT(counters_open_reason(EOPNOTSUPP, 1, 0, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "no PMU exposed");
    CHECK_INT(counters_open_reason(ENOENT, 1, 1, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "does not count this event");
    CHECK_INT(counters_open_reason(EACCES, 1, 0, why, sizeof why), ==, CTR_NO_ACCESS);
    CHECK(strstr(why, "perf_event_paranoid is") != NULL);
    CHECK_INT(counters_open_reason(ENOSPC, 1, 1, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "too many events for the PMU");
    CHECK_INT(counters_open_reason(EMFILE, 0, 1, why, sizeof why), ==, CTR_ERROR);
    CHECK_STR_HAS(why, "ulimit -n");
    CHECK_INT(counters_open_reason(ENOENT, 0, 0, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "this kernel does not support the event");
    CHECK_INT(counters_open_reason(ENODEV, 1, 1, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "not supported on this CPU");
    CHECK_INT(counters_open_reason(EPERM, 0, 1, why, sizeof why), ==, CTR_NO_ACCESS);
    CHECK_STR_HAS(why, "perf_event_paranoid is");
    CHECK_INT(counters_open_reason(EBUSY, 1, 1, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "NMI watchdog");
    CHECK_INT(counters_open_reason(EINVAL, 1, 1, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "the PMU rejects");
    CHECK_INT(counters_open_reason(EINVAL, 0, 1, why, sizeof why), ==, CTR_UNSUPPORTED);
    CHECK_STR_HAS(why, "the kernel rejects");
    CHECK_INT(counters_open_reason(ESRCH, 0, 1, why, sizeof why), ==, CTR_ERROR);
    CHECK_STR_HAS(why, "already exited");
    CHECK_INT(counters_open_reason(ENOSYS, 0, 1, why, sizeof why), ==, CTR_NO_ACCESS);
    CHECK_STR_HAS(why, "not available in this kernel or sandbox");
    CHECK_INT(counters_open_reason(EIO, 0, 1, why, sizeof why), ==, CTR_ERROR);
    CHECK_STR_HAS(why, "perf_event_open: ");
    CHECK_STR_HAS(why, strerror(EIO));
}

/* ---- encoding ---- */

static void test_encode(void)
{
    char names[CTR_MAX_EVENTS][CTR_NAME_LEN], enc[160], why[CTR_REASON_LEN];
    int n = counters_parse_spec(NULL, names, CTR_MAX_EVENTS, NULL, 0);
    struct perf_event_attr a;

    for (int i = 0; i < n; i++) {
        CtrStatus st = counters_encode(names[i], &a, enc, sizeof enc, why, sizeof why);
        if (st == CTR_OK) {
            CHECK(a.size == sizeof a);
            CHECK(a.read_format == (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING));
            CHECK(!a.disabled && !a.exclude_kernel && !a.exclude_user && !a.inherit);
            CHECK(counters_kind(&a) != CTR_KIND_OTHER);
            CHECK(enc[0] != '\0');
        } else {
            CHECK_INT(st, ==, CTR_UNKNOWN_EVENT);
            CHECK_STR_HAS(why, "unknown event");
        }
    }
    CHECK_INT(counters_encode("no-such-event-xyz", &a, enc, sizeof enc, why, sizeof why), ==,
              CTR_UNKNOWN_EVENT);
    CHECK_STR_HAS(why, "unknown event 'no-such-event-xyz'");
    CHECK_STR_HAS(why, "see cnntop events");
    /* Two spellings of one event are one kind. */
    if (counters_encode("perf::cycles", &a, NULL, 0, why, sizeof why) == CTR_OK)
        CHECK_INT(counters_kind(&a), ==, CTR_KIND_CYCLES);
    else
        CHECK_SKIP("perf::cycles does not encode here, so its kind is not checked");
}

/* ---- the kernel ---- */

/* perf_event_open of one user-space counter of this thread: the fd, or
 * -errno.  The caller closes it. */
static int open_user(uint32_t type, uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return counters_perf_open(&a, 0);
}

/* 1 if a generic hardware counter opens here, 0 if the kernel says there
 * is no PMU; anything else is unexpected. */
static int machine_has_pmu(void)
{
    int fd = open_user(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    return 0;
}

static void skip_if_forbidden(void)
{
    int fd = open_user(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    if (fd == -EACCES || fd == -EPERM || fd == -ENOSYS)
        check_skip("perf_event_open is forbidden here (perf_event_paranoid 3 or a seccomp policy)");
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
}

/* The kernel's own answers through the real calls: a software counter
 * read, a read that fails, the PMU probe, a hardware event where there is
 * no PMU, and a thread that does not exist. */
static void test_kernel_paths(int pmu)
{
    char why[CTR_REASON_LEN];
    CounterRaw raw = {1, 2, 3, 1};

    CHECK_INT(counters_read_fd(-1, &raw), ==, -1);
    CHECK(!raw.valid && raw.value == 0 && raw.running == 0);
    struct perf_event_attr a;
    CHECK_INT(counters_encode("task-clock", &a, NULL, 0, why, sizeof why), ==, CTR_OK);
    a.exclude_kernel = 1; /* what the set falls back to under a strict paranoid */
    int fd = counters_perf_open(&a, 0);
    CHECK(fd >= 0);
    burn_cpu(1);
    CHECK_INT(counters_read_fd(fd, &raw), ==, 0);
    CHECK(raw.valid && raw.value > 0 && raw.enabled > 0 && raw.running > 0);
    if (fd >= 0)
        close(fd);

    int exposed = counters_pmu_exposed();
    if (pmu) {
        CHECK_INT(exposed, ==, 1);
    } else {
        CHECK(exposed != 1);
        fd = open_user(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
        CHECK(fd < 0);
        if (fd >= 0)
            close(fd);
        else if (exposed == 0) {
            CHECK_INT(counters_open_reason(-fd, 1, exposed, why, sizeof why), ==, CTR_UNSUPPORTED);
            CHECK_STR_HAS(why, "no PMU exposed to this machine");
        }
    }

    fd = counters_perf_open(&a, 999999999);
    CHECK_INT(fd, ==, -ESRCH);
    if (fd >= 0)
        close(fd);
    CHECK_INT(counters_open_reason(ESRCH, 0, exposed, why, sizeof why), ==, CTR_ERROR);
}

static void test_default_set(int pmu)
{
    CounterSet *cs;
    char err[256];
    CounterEventInfo info;

    CHECK_INT(counters_new(&cs, NULL, err, sizeof err), ==, 0);
    CHECK_INT(counters_count(cs), ==, 9);
    for (int i = 0; i < counters_count(cs); i++) {
        CHECK_INT(counters_event_info(cs, i, &info), ==, 0);
        if (!info.hardware) {
            if (info.kind == CTR_KIND_CTX_SWITCHES && info.user_only) {
                CHECK_INT(info.status, ==, CTR_UNSUPPORTED);
                CHECK_STR_HAS(info.reason, "/proc");
            } else {
                CHECK_INT(info.status, ==, CTR_OK);
            }
        } else if (!pmu) {
            CHECK_INT(info.status, ==, CTR_UNSUPPORTED);
            CHECK_STR_HAS(info.reason, "no PMU exposed to this machine (a virtual machine?)");
        } else if (info.kind == CTR_KIND_CYCLES || info.kind == CTR_KIND_INSTRUCTIONS) {
            CHECK_INT(info.status, ==, CTR_OK);
        } else if (info.status != CTR_OK) {
            CHECK(info.reason[0] != '\0');
        }
    }
    CHECK_INT(counters_event_info(cs, 9, &info), ==, -CN_EINVAL);
    counters_free(cs);

    CHECK_INT(counters_new(&cs, "+bogus-event", err, sizeof err), ==, 0);
    CHECK_INT(counters_count(cs), ==, 10);
    CHECK_INT(counters_event_info(cs, 9, &info), ==, 0);
    CHECK_INT(info.status, ==, CTR_UNKNOWN_EVENT);
    CHECK_STR_HAS(info.reason, "unknown event 'bogus-event' (");
    counters_free(cs);

    /* -e checked up front: unknown names refused, known ones (present or
     * of a PMU this machine lacks) and the grammar's defaults accepted. */
    CHECK_INT(counters_check_spec(NULL, err, sizeof err), ==, 0);
    CHECK_INT(counters_check_spec("task-clock,cycles,perf::instructions", err, sizeof err), ==, 0);
    CHECK_INT(counters_check_spec("+amd64_k7::RETIRED_INSTRUCTIONS", err, sizeof err), ==, 0);
    CHECK_INT(counters_check_spec("+bogus-event", err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "unknown event 'bogus-event' (");
    CHECK_INT(counters_check_spec("task-clock,no_such_pmu::X", err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "unknown event 'no_such_pmu::X'");
    CHECK_INT(counters_check_spec("task-clock,,x", err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "empty event name");
    CHECK_INT(counters_new(&cs, "amd64_k7::RETIRED_INSTRUCTIONS", err, sizeof err), ==, 0);
    CHECK_INT(counters_event_info(cs, 0, &info), ==, 0);
    CHECK_INT(info.status, ==, CTR_UNKNOWN_EVENT);
    CHECK_STR_HAS(info.reason, "PMU amd64_k7 not on this machine");
    counters_free(cs);
}

/* A thread that attaches itself, burns CPU between two self-reads, and
 * compares task-clock with its own CPU clock. */
typedef struct SelfArgs {
    CounterSet *cs;
    ThreadRole role;
    double burn_ms;
    double cpu_ns;        /* CLOCK_THREAD_CPUTIME_ID inside the two reads */
    double wall_ns;       /* CLOCK_MONOTONIC around them */
    CounterRaw before[CTR_MAX_EVENTS], after[CTR_MAX_EVENTS];
    int n, rc;
} SelfArgs;

static void *self_thread(void *p)
{
    SelfArgs *a = p;
    a->rc = counters_attach(a->cs, counters_gettid(), a->role, NULL, 0);
    burn_cpu(1); /* let the counters settle past the opens */
    double w0 = mono_ns();
    a->n = counters_self_read(a->cs, CTR_ALL, a->before, CTR_MAX_EVENTS);
    double t0 = thread_cpu_ns();
    burn_cpu(a->burn_ms);
    double t1 = thread_cpu_ns();
    counters_self_read(a->cs, CTR_ALL, a->after, CTR_MAX_EVENTS);
    a->wall_ns = mono_ns() - w0;
    a->cpu_ns = t1 - t0;
    counters_detach(a->cs, counters_gettid());
    return NULL;
}

static void test_task_clock(int pmu)
{
    CounterSet *cs;
    SelfArgs a;
    pthread_t th;
    CounterReading r[CTR_MAX_EVENTS];

    CHECK_INT(counters_new(&cs, NULL, NULL, 0), ==, 0);
    memset(&a, 0, sizeof a);
    a.cs = cs;
    a.role = CN_ROLE_TRAIN;
    a.burn_ms = 200;
    pthread_create(&th, NULL, self_thread, &a);
    pthread_join(th, NULL);
    CHECK_INT(a.rc, ==, 0);
    CHECK_INT(a.n, ==, 9);
    int tc = find_name(cs, "task-clock"), ins = find_name(cs, "instructions");
    CounterRaw d = counters_raw_sub(&a.after[tc], &a.before[tc]);
    double v, f;
    CHECK_INT(counters_scale(&d, &v, &f), ==, CTR_OK);
    fprintf(stderr, "  task-clock %.3f ms, thread CPU clock %.3f ms, wall %.3f ms\n", v / 1e6,
            a.cpu_ns / 1e6, a.wall_ns / 1e6);
    /* What the kernel promises: task-clock is the time the thread was on a
     * CPU between the reads, by the scheduler's clock; the thread CPU clock
     * leaves out the time stolen by a hypervisor and spent in interrupts
     * (rq clock_task), which under contention on a VM is 10-20%.  So the
     * task-clock holds at least the CPU time measured inside the reads,
     * and at most the wall time around them.  Less a scheduler tick (10 ms
     * at HZ=100): under heavy contention the event's count, updated at a
     * tick or a switch, was seen 4.8 ms (2.4%) short of the thread CPU clock
     * read right after it (ASan build, load 19, 2 cores). */
    CHECK(v >= a.cpu_ns * 0.98 - 10e6);
    CHECK(v <= a.wall_ns * 1.01 + 0.5e6);
    if (pmu) {
        d = counters_raw_sub(&a.after[ins], &a.before[ins]);
        CHECK(d.valid && d.value > 0);
    } else {
        CHECK(!a.after[ins].valid);
    }

    /* The thread has gone: its counts stay with its role. */
    int n = counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);
    CHECK_INT(n, ==, 9);
    const CounterReading *k = find_kind(r, n, CTR_KIND_TASK_CLOCK);
    CHECK_INT(k->status, ==, CTR_OK);
    CHECK_INT(k->threads, ==, 1);
    CHECK(k->value >= a.cpu_ns * 0.98 - 10e6); /* as above */
    CHECK_STR_HAS(k->unit, "ns");
    k = find_kind(r, n, CTR_KIND_PAGE_FAULTS);
    CHECK_INT(k->status, ==, CTR_OK);
    k = find_kind(r, n, CTR_KIND_CYCLES);
    if (!pmu) {
        CHECK_INT(k->status, ==, CTR_UNSUPPORTED);
        CHECK_STR_HAS(k->reason, "no PMU");
    } else {
        CHECK_INT(k->status, ==, CTR_OK);
        CHECK(k->value > 0);
    }
    /* Nothing ran as a loader. */
    n = counters_read(cs, CN_ROLE_LOAD, r, CTR_MAX_EVENTS);
    k = find_kind(r, n, CTR_KIND_TASK_CLOCK);
    CHECK_INT(k->status, ==, CTR_NOT_COUNTED);
    CHECK_STR_HAS(k->reason, "no loader thread");
    CHECK(counters_role_wall_ns(cs, CN_ROLE_TRAIN) > 0);
    CHECK_INT(counters_self_read(cs, CTR_ALL, a.before, CTR_MAX_EVENTS), ==, -CN_ESTATE);
    counters_free(cs);
}

/* A second thread opened by tid from this one, with role LOAD. */
typedef struct Peer {
    _Atomic int tid;
    _Atomic int go, done;
    CounterSet *cs;
    int self_n;
    CounterRaw vals[CTR_MAX_EVENTS];
} Peer;

static void *peer_thread(void *p)
{
    Peer *pe = p;
    atomic_store(&pe->tid, counters_gettid());
    while (!atomic_load(&pe->go))
        sched_yield();
    burn_cpu(80);
    pe->self_n = counters_self_read(pe->cs, CTR_ALL, pe->vals, CTR_MAX_EVENTS);
    atomic_store(&pe->done, 1);
    while (atomic_load(&pe->go) != 2)
        sched_yield();
    counters_detach(pe->cs, counters_gettid());
    return NULL;
}

static void test_by_tid_and_roles(void)
{
    CounterSet *cs;
    Peer pe;
    pthread_t th;
    CounterReading r[CTR_MAX_EVENTS];
    char err[256] = "";

    CHECK_INT(counters_new(&cs, "task-clock,page-faults", NULL, 0), ==, 0);
    /* The main thread counts as a trainer. */
    CHECK_INT(counters_attach(cs, counters_gettid(), CN_ROLE_TRAIN, err, sizeof err), ==, 0);
    CHECK_INT(counters_attach(cs, counters_gettid(), CN_ROLE_TRAIN, err, sizeof err), ==, 0);
    CHECK_INT(counters_attach(cs, 999999999, CN_ROLE_LOAD, err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "not a thread of this process");

    memset(&pe, 0, sizeof pe);
    pe.cs = cs;
    pthread_create(&th, NULL, peer_thread, &pe);
    while (!atomic_load(&pe.tid))
        sched_yield();
    CHECK_INT(counters_attach(cs, atomic_load(&pe.tid), CN_ROLE_LOAD, err, sizeof err), ==, 0);
    counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);
    double train_before = r[0].value;
    atomic_store(&pe.go, 1);
    while (!atomic_load(&pe.done))
        usleep(1000); /* sleeping: the trainer itself burns little meanwhile */
    int n = counters_read(cs, CN_ROLE_LOAD, r, CTR_MAX_EVENTS);
    CHECK_INT(n, ==, 2);
    CHECK_INT(r[0].status, ==, CTR_OK);
    CHECK(r[0].value >= 75e6); /* the 80 ms burnt by the peer */
    CHECK_INT(r[0].threads, ==, 1);
    CHECK_INT(pe.self_n, ==, 2); /* attached by another thread, it still self-reads */
    CHECK(pe.vals[0].valid && (double)pe.vals[0].value >= 75e6);
    counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);
    CHECK(r[0].value - train_before < 40e6); /* the peer's time is not the trainer's */

    atomic_store(&pe.go, 2);
    pthread_join(th, NULL);
    counters_read(cs, CN_ROLE_LOAD, r, CTR_MAX_EVENTS);
    CHECK(r[0].value >= 75e6); /* kept after the thread left */
    CHECK_INT(counters_detach(cs, atomic_load(&pe.tid)), ==, -CN_ESTATE);

    CounterSched s;
    counters_sched(cs, CN_ROLE_LOAD, &s);
    CHECK(s.available);
    CHECK_INT(s.threads, ==, 1);
    CHECK_INT(s.live, ==, 0);
    CHECK(s.on_cpu >= 0.075);
    CHECK_INT(counters_detach(cs, counters_gettid()), ==, 0);
    counters_free(cs);
}

/* Two threads on one CPU, each burning and then alternately yielding and
 * sleeping: CONTEND_ROUNDS/2 sleeps each are voluntary switches. */
#define CONTEND_ROUNDS 200
typedef struct Contender {
    CounterSet *cs;
    int cpu;
    int pinned;
    pthread_barrier_t *bar;
} Contender;

static void *contender(void *p)
{
    Contender *c = p;
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(c->cpu, &set);
    c->pinned = sched_setaffinity(0, sizeof set, &set) == 0;
    counters_attach(c->cs, counters_gettid(), CN_ROLE_LOAD, NULL, 0);
    pthread_barrier_wait(c->bar);
    /* A fixed number of rounds, not a time, so that a slow build (TSan)
     * switches as often as a fast one. */
    for (int i = 0; i < CONTEND_ROUNDS; i++) {
        burn_cpu(0.3);
        if (i % 2)
            sched_yield();
        else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    pthread_barrier_wait(c->bar);
    counters_detach(c->cs, counters_gettid());
    return NULL;
}

static void test_contention(void)
{
    CounterSet *cs;
    pthread_t th[2];
    Contender c[2];
    pthread_barrier_t bar;
    cpu_set_t mine;
    CounterReading r[CTR_MAX_EVENTS];
    CounterSched s;
    int cpu = 0;

    CHECK_INT(counters_new(&cs, "task-clock,context-switches", NULL, 0), ==, 0);
    if (sched_getaffinity(0, sizeof mine, &mine) == 0)
        while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &mine))
            cpu++;
    pthread_barrier_init(&bar, NULL, 2);
    for (int i = 0; i < 2; i++) {
        c[i] = (Contender){cs, cpu, 0, &bar};
        pthread_create(&th[i], NULL, contender, &c[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);

    counters_sched(cs, CN_ROLE_LOAD, &s);
    CHECK(s.available);
    CHECK_INT(s.threads, ==, 2);
    fprintf(stderr, "  contention: %llu voluntary + %llu involuntary switches, %.0f/s, "
            "run-queue wait %.0f%% of wall%s\n", (unsigned long long)s.vol_cs,
            (unsigned long long)s.invol_cs, s.cs_per_s, 100 * s.wait_share,
            s.oversubscribed ? ", oversubscribed" : "");
    CHECK(s.vol_cs + s.invol_cs >= CONTEND_ROUNDS);
    CHECK(s.vol_cs >= CONTEND_ROUNDS / 2); /* the nanosleeps */
    if (s.have_wait && c[0].pinned && c[1].pinned) {
        /* Two runnable threads on one CPU: each waits while the other runs. */
        CHECK(s.wait > 0.02);
        CHECK(s.oversubscribed);
    }
    int n = counters_read(cs, CN_ROLE_LOAD, r, CTR_MAX_EVENTS);
    const CounterReading *k = find_kind(r, n, CTR_KIND_CTX_SWITCHES);
    if (k->status == CTR_OK)
        CHECK(k->value >= CONTEND_ROUNDS / 2); /* kernel counting allowed: perf sees them */
    else
        CHECK_STR_HAS(k->reason, "/proc"); /* user-only: no fake 0 */
    counters_free(cs);
}

/* Many short threads: slots are reused, totals kept; a sampler reads meanwhile. */
typedef struct Churn {
    CounterSet *cs;
    _Atomic int stop;
    long reads;
} Churn;

static void *churn_worker(void *p)
{
    Churn *ch = p;
    CounterRaw v[CTR_MAX_EVENTS];
    counters_attach(ch->cs, counters_gettid(), CN_ROLE_LOAD, NULL, 0);
    burn_cpu(0.2);
    counters_self_read(ch->cs, CTR_ALL, v, CTR_MAX_EVENTS);
    counters_detach(ch->cs, counters_gettid());
    return NULL;
}

static void *sampler(void *p)
{
    Churn *ch = p;
    CounterReading r[CTR_MAX_EVENTS];
    CounterSched s;
    while (!atomic_load(&ch->stop)) {
        counters_read(ch->cs, CN_ROLE_LOAD, r, CTR_MAX_EVENTS);
        counters_sched(ch->cs, CN_ROLE_LOAD, &s);
        ch->reads++;
    }
    return NULL;
}

#define CHURN_THREADS 320
#define CHURN_BATCH 16

static void test_churn(void)
{
    Churn ch = {0};
    pthread_t samp, th[CHURN_BATCH];
    CounterReading r[CTR_MAX_EVENTS];

    CHECK_INT(counters_new(&ch.cs, "task-clock,page-faults", NULL, 0), ==, 0);
    pthread_create(&samp, NULL, sampler, &ch);
    for (int done = 0; done < CHURN_THREADS; done += CHURN_BATCH) {
        for (int i = 0; i < CHURN_BATCH; i++)
            pthread_create(&th[i], NULL, churn_worker, &ch);
        for (int i = 0; i < CHURN_BATCH; i++)
            pthread_join(th[i], NULL);
    }
    atomic_store(&ch.stop, 1);
    pthread_join(samp, NULL);
    counters_read(ch.cs, CN_ROLE_LOAD, r, CTR_MAX_EVENTS);
    CHECK_INT(r[0].status, ==, CTR_OK);
    CHECK_INT(r[0].threads, ==, CHURN_THREADS);
    CHECK(r[0].value >= CHURN_THREADS * 0.2e6 * 0.9);
    CounterSched s;
    counters_sched(ch.cs, CN_ROLE_LOAD, &s);
    CHECK_INT(s.threads, ==, CHURN_THREADS);
    CHECK_INT(s.live, ==, 0);
    CHECK(ch.reads > 0);
    counters_free(ch.cs);
}

/* A read asks for some events: those it reads are valid, the rest not. */
static void test_self_read_want(void)
{
    CounterSet *cs;
    CounterRaw v[CTR_MAX_EVENTS];

    counters_new(&cs, NULL, NULL, 0);
    counters_attach(cs, counters_gettid(), CN_ROLE_TRAIN, NULL, 0);
    int tc = find_name(cs, "task-clock"), n = counters_count(cs);
    CHECK_INT(counters_self_read(cs, 1u << tc, v, CTR_MAX_EVENTS), ==, n);
    for (int i = 0; i < n; i++)
        CHECK_INT(v[i].valid, ==, i == tc);
    CHECK_INT(counters_self_read(cs, 0, v, CTR_MAX_EVENTS), ==, n);
    for (int i = 0; i < n; i++)
        CHECK(!v[i].valid);
    counters_self_read(cs, CTR_ALL, v, CTR_MAX_EVENTS);
    for (int i = 0; i < n; i++) {
        CounterEventInfo info;
        counters_event_info(cs, i, &info);
        CHECK_INT(v[i].valid, ==, info.status == CTR_OK);
    }
    counters_detach(cs, counters_gettid());
    counters_free(cs);
}

static double self_read_cost(int *nev)
{
    CounterSet *cs;
    CounterRaw v[CTR_MAX_EVENTS];
    const int iters = 20000;

    counters_new(&cs, NULL, NULL, 0);
    counters_attach(cs, counters_gettid(), CN_ROLE_TRAIN, NULL, 0);
    *nev = 0;
    for (int i = 0; i < counters_count(cs); i++) {
        CounterEventInfo info;
        counters_event_info(cs, i, &info);
        *nev += info.status == CTR_OK;
    }
    counters_self_read(cs, CTR_ALL, v, CTR_MAX_EVENTS);
    double t0 = mono_ns();
    for (int i = 0; i < iters; i++)
        counters_self_read(cs, CTR_ALL, v, CTR_MAX_EVENTS);
    double per = (mono_ns() - t0) / iters;
    CHECK(v[find_name(cs, "task-clock")].valid);
    counters_detach(cs, counters_gettid());
    counters_free(cs);
    return per;
}

int main(void)
{
    /* LIBPFM_FORCE_PMU hides the generic perf events (software ones
     * included); libpfm4 reads it at its first use, which is below. */
    unsetenv("LIBPFM_FORCE_PMU");
    test_reasons();
    test_encode();

    skip_if_forbidden();
    int pmu = machine_has_pmu();
    fprintf(stderr, "  this kernel %s; perf_event_paranoid %d; uid %d\n",
            pmu ? "exposes a PMU" : "exposes no PMU", counters_paranoid(), (int)getuid());
    test_kernel_paths(pmu);
    test_default_set(pmu);
    test_task_clock(pmu);
    test_by_tid_and_roles();
    test_contention();
    test_churn();
    test_self_read_want();
    int nev;
    double cost = self_read_cost(&nev);
    fprintf(stderr, "  counters_self_read: %.0f ns per call for %d open event(s) (%.0f ns each)\n",
            cost, nev, nev ? cost / nev : 0.0);

    fprintf(stderr, "checked: errno reasons; reads, the PMU probe and a missing thread through the kernel; libpfm4 encoding of the defaults; each default event's "
            "status on this kernel (%s); task-clock vs the thread CPU clock; a read of some events; opening by tid "
            "from another thread; role split and totals kept after exit; context switches "
            "and run-queue wait under contention; %d threads through the slots with a "
            "sampler reading; self-read cost\n", pmu ? "hardware counting" : "no PMU",
            CHURN_THREADS);
    return check_report();
}
