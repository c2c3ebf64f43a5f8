/*
 * counters.h: the public API of cnntop's hardware and software counters.
 *
 * A CounterSet is a list of events (perf's names, or any event string
 * libpfm4 can encode, e.g. "cycles", "perf::cycles", "icl::INST_RETIRED:ANY")
 * opened per thread with perf_event_open and summed per thread role
 * (CN_ROLE_TRAIN for the compute threads, CN_ROLE_LOAD for the loader).
 * Each event is either counting or unavailable with a reason a person can
 * act on ("no PMU exposed to this machine (a virtual machine?)"); a count
 * that could not be had is never reported as 0.  Beside the perf counters a
 * set keeps the scheduler's view of each role from /proc (on-CPU time,
 * run-queue wait, context switches), which needs no permission at all.
 *
 * Typical use by a front end:
 *
 *     CounterSet *cs;
 *     counters_new(&cs, o->events, err, sizeof err);   // NULL: the defaults
 *     engine_set_counters(engine, cs);
 *     ... train ...
 *     CounterReading r[CTR_MAX_EVENTS];
 *     int n = counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);
 *     engine_free(engine);                              // the engine first
 *     counters_free(cs);
 *
 * Conventions follow engine.h: 0 or a negative CN_E* code, with a one-line
 * message in `err` (may be NULL).  Nothing here prints.
 */
#ifndef CNNTOP_COUNTERS_H
#define CNNTOP_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "cnntop/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread roles, for the counters and the summaries. */
typedef enum ThreadRole { CN_ROLE_TRAIN, CN_ROLE_LOAD, CN_ROLES } ThreadRole;

#define CTR_MAX_EVENTS 32    /* events in one set */
#define CTR_MAX_THREADS 256  /* threads attached at once; detached slots are reused */
#define CTR_NAME_LEN 64      /* event names as given, e.g. "cache-misses" */
#define CTR_REASON_LEN 192   /* reasons, e.g. "no PMU exposed to this machine ..." */

/* The default events, as `-e` with no list (or a list starting with '+'). */
#define CTR_DEFAULT_EVENTS \
    "cycles,instructions,cache-references,cache-misses,branch-misses," \
    "task-clock,context-switches,cpu-migrations,page-faults"

/* What became of an event. */
typedef enum CtrStatus {
    CTR_OK = 0,          /* opened and counted (running time > 0) */
    CTR_NOT_COUNTED,     /* opened, but never ran on a counter, or no thread of
                            the role has been attached: perf's "<not counted>" */
    CTR_UNSUPPORTED,     /* the kernel or the hardware refuses it (no PMU, not on
                            this CPU, meaningless in this mode): "<not supported>" */
    CTR_NO_ACCESS,       /* perf_event_paranoid or a sandbox forbids it */
    CTR_UNKNOWN_EVENT,   /* libpfm4 cannot encode the name */
    CTR_ERROR            /* something else: out of file descriptors, ... */
} CtrStatus;

/* Events the derived figures know, found from the encoding, not the spelling
 * ("cycles", "cpu-cycles" and "perf::PERF_COUNT_HW_CPU_CYCLES" are all
 * CTR_KIND_CYCLES). */
typedef enum CtrKind {
    CTR_KIND_OTHER = 0,
    CTR_KIND_CYCLES,
    CTR_KIND_INSTRUCTIONS,
    CTR_KIND_CACHE_REFS,
    CTR_KIND_CACHE_MISSES,
    CTR_KIND_BRANCHES,
    CTR_KIND_BRANCH_MISSES,
    CTR_KIND_TASK_CLOCK,     /* ns of CPU time */
    CTR_KIND_CPU_CLOCK,      /* ns */
    CTR_KIND_CTX_SWITCHES,
    CTR_KIND_MIGRATIONS,
    CTR_KIND_PAGE_FAULTS
} CtrKind;

/* One raw reading as the kernel gives it (read_format
 * TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING). */
typedef struct CounterRaw {
    uint64_t value;    /* events counted while running, e.g. 123456789 */
    uint64_t enabled;  /* ns the event was enabled */
    uint64_t running;  /* ns it actually sat on a counter (< enabled: multiplexed) */
    int valid;         /* 1: read from an open counter; 0: unavailable, ignore */
} CounterRaw;

/* One event of a set, summed over a role's threads. */
typedef struct CounterReading {
    char name[CTR_NAME_LEN];    /* as asked, e.g. "cycles" */
    const char *unit;           /* "ns" for the clocks, "" for counts (static) */
    CtrKind kind;
    CtrStatus status;
    char reason[CTR_REASON_LEN];/* why not CTR_OK; for CTR_OK a note or "" */
    double value;               /* scaled: sum over threads of value*enabled/running */
    double fraction;            /* running/enabled, 0..1; < 1: "scaled from N%" */
    uint64_t raw;               /* sum of the raw values */
    uint64_t enabled, running;  /* ns, summed over threads */
    int threads;                /* threads that contributed (live and retired) */
} CounterReading;

/* A figure derived from readings, or why it cannot be had. */
typedef struct CounterFigure {
    int ok;            /* 1: value holds the figure; 0: n/a, see why */
    double value;
    char why[CTR_REASON_LEN]; /* e.g. "cycles unavailable: no PMU exposed ..." */
} CounterFigure;

typedef struct CounterDerived {
    CounterFigure ipc;         /* instructions / cycles */
    CounterFigure miss_rate;   /* cache-misses / cache-references, 0..1 */
    CounterFigure mpki;        /* cache-misses per 1000 instructions */
    CounterFigure branch_miss_rate; /* branch-misses / branches, 0..1 */
    CounterFigure cpu_util;    /* task-clock ns / wall ns: CPUs busy, e.g. 3.7 */
    CounterFigure cs_per_s;    /* context switches per second of wall */
    CounterFigure migrations_per_s; /* CPU migrations per second of wall */
    CounterFigure faults_per_s;     /* page faults per second of wall */
} CounterDerived;

/* The scheduler's view of a role, from /proc/self/task/<tid>/{schedstat,status},
 * counted from each thread's attach to its detach (or now). */
typedef struct CounterSched {
    int available;           /* 0: /proc gave nothing; see reason */
    int have_wait;           /* 1: schedstat (CONFIG_SCHEDSTATS/SCHED_INFO) present */
    char reason[CTR_REASON_LEN];
    int threads;             /* threads seen (live + exited) */
    int live;                /* threads attached now */
    double thread_wall;      /* seconds: sum over threads of time attached */
    double span;             /* seconds: from the role's first attach to now or its
                                last detach */
    double on_cpu;           /* seconds on a CPU, summed over threads */
    double wait;             /* seconds runnable but waiting for a CPU, summed */
    uint64_t timeslices;     /* times scheduled in */
    uint64_t vol_cs;         /* voluntary context switches (blocked, slept) */
    uint64_t invol_cs;       /* involuntary (preempted) */
    double wait_share;       /* wait / thread_wall, 0..1 */
    double cs_per_s;         /* (vol_cs + invol_cs) / span */
    int oversubscribed;      /* wait_share > CTR_OVERSUB_WAIT (see counters_sched) */
} CounterSched;

/* A thread waiting for a CPU more than this share of its wall time, on
 * average over the role, means more runnable threads than CPUs. */
#define CTR_OVERSUB_WAIT 0.20
/* ... judged only once the role has this much thread time, seconds. */
#define CTR_OVERSUB_MIN_WALL 0.1

/* What `cnntop events` shows of one event of a set. */
typedef struct CounterEventInfo {
    char name[CTR_NAME_LEN];       /* as asked */
    char encoding[160];            /* libpfm4's full name, e.g.
                                      "perf::PERF_COUNT_HW_CPU_CYCLES:u=1:k=1...", or "" */
    CtrKind kind;
    CtrStatus status;              /* of opening it on the calling thread at counters_new */
    char reason[CTR_REASON_LEN];
    int user_only;                 /* 1: kernel counting was refused; counts user space */
    int hardware;                  /* 1: needs a PMU (not a software event) */
} CounterEventInfo;

/* A PMU libpfm4 detects on this machine. */
typedef struct CounterPmu {
    char name[32];     /* e.g. "perf", "icl" */
    char desc[96];     /* e.g. "Intel Icelake" */
    const char *type;  /* "core", "uncore", "OS generic", "unknown" (static) */
    int nevents;       /* events libpfm4 knows for it */
    int counters;      /* generic counters, 0 if unknown */
    int fixed;         /* fixed counters */
} CounterPmu;

typedef struct CounterSet CounterSet;

/*
 * Parses `spec` as perf's -e does: NULL or "" gives CTR_DEFAULT_EVENTS,
 * "a,b" exactly those, "+a,b" the defaults and then a, b (duplicates by
 * name are kept once).  Each event is encoded with libpfm4 and opened once
 * on the calling thread to learn its status; an event that cannot be had is
 * kept, unavailable, with its reason.  Errors: -CN_EINVAL for an empty name
 * or more than CTR_MAX_EVENTS events, -CN_ENOMEM.  *out is freed with
 * counters_free().
 */
int counters_new(CounterSet **out, const char *spec, char *err, size_t errlen);

/*
 * Checks an -e spec before any work starts, as perf stat -e does: the
 * grammar (counters_new's), and every name one that libpfm4 can encode
 * here or that names, "PMU::EVENT", a PMU libpfm4 knows but this machine
 * lacks (such an event is kept, n/a with its reason, when counted).  0, or
 * -CN_EINVAL with "unknown event 'x' (...; see cnntop events)".
 */
int counters_check_spec(const char *spec, char *err, size_t errlen);

/* Closes every counter still open and frees the set.  NULL is fine.  No
 * other call on the set may be running. */
void counters_free(CounterSet *set);

/* Events in the set, 0..CTR_MAX_EVENTS. */
int counters_count(const CounterSet *set);

/* Fills *out for event i; -CN_EINVAL if i is out of range. */
int counters_event_info(const CounterSet *set, int i, CounterEventInfo *out);

/*
 * Opens every available event of the set for thread `tid` (pid=tid,
 * cpu=-1: it follows the thread over CPUs), counting from now, and takes
 * the thread's scheduler baseline.  Any thread may call it for any thread
 * of this process.  Attaching a tid already attached does nothing and
 * returns 0.  An event that fails for this thread alone is noted in the
 * role's reading (and err) but does not fail the call.  Errors: -CN_ENOMEM
 * when CTR_MAX_THREADS threads are attached, -CN_EINVAL for a bad role.
 */
int counters_attach(CounterSet *set, int tid, ThreadRole role, char *err, size_t errlen);

/*
 * Reads the thread's final counts and scheduler figures into its role's
 * totals and closes its counters.  Call it before the thread ends (the
 * engine's thread hook does, on the thread itself).  -CN_ESTATE if the tid
 * is not attached.
 */
int counters_detach(CounterSet *set, int tid);

/*
 * Fills out[0..n) (n = counters_count(), at most max) with the role's
 * readings: live threads read now plus the totals of detached ones.
 * Returns n.  Thread-safe; costs one read() per event per live thread.
 */
int counters_read(CounterSet *set, ThreadRole role, CounterReading *out, int max);

/* The role's scheduler figures (see CounterSched).  Thread-safe. */
void counters_sched(CounterSet *set, ThreadRole role, CounterSched *out);

/*
 * Reads the calling thread's own counters: values[i] for event i, raw
 * (subtract two readings, then counters_scale() the difference), for the
 * events whose bit (1u << i) is set in `want` (CTR_ALL: every one); the
 * others are left not valid.  One read() per available event asked for
 * and no lock: meant for layer boundaries.
 * The thread must be attached (by itself or by another thread) and must
 * not be detached by another thread meanwhile.  Returns the number of
 * events, or -CN_ESTATE if the calling thread is not attached.
 * Cost, measured by test_counters on a 2-vCPU virtual machine (no PMU, so
 * 4 software events open): 1.1-2.8 us per call, 0.3-0.7 us per event;
 * budget about 0.5 us per open event.
 */
#define CTR_ALL 0xffffffffu
int counters_self_read(CounterSet *set, uint32_t want, CounterRaw *values, int max);

/*
 * perf's scaling: *value = raw->value * enabled / running, *fraction =
 * running / enabled.  Returns CTR_OK, or CTR_NOT_COUNTED (value and
 * fraction 0) when the raw reading is not valid or never ran.
 */
CtrStatus counters_scale(const CounterRaw *raw, double *value, double *fraction);

/* later - earlier, field by field (valid only if both are). */
CounterRaw counters_raw_sub(const CounterRaw *later, const CounterRaw *earlier);

/*
 * Derived figures from n readings (found by kind) and the wall time they
 * cover in ns (for CPU utilisation and rates; <= 0: those are n/a).  Each
 * figure says which input is missing when it cannot be had.  Pure.
 */
void counters_derive(const CounterReading *r, int n, double wall_ns, CounterDerived *out);

/* A figure as a plain number: its value, or NAN when it is n/a (for
 * fields where NAN means "not counted"; the reason is then f->why). */
double counters_figure_value(const CounterFigure *f);

/*
 * The same figures from plain counts of the set's first n events:
 * values[i] for event i, NAN where it did not count (a layer's
 * LayerTime.counts, or the difference of two readings over an interval).
 * An event that could not be opened at all gives its reason.  The one
 * place where IPC and the miss rate are computed is counters_derive();
 * this only feeds it.  Reads only the set's event list: thread-safe.
 */
void counters_derive_counts(const CounterSet *set, const double *values, int n, double wall_ns,
                            CounterDerived *out);

/* The share of the time of every role's threads spent runnable but
 * waiting for a CPU (CounterSched.wait over .thread_wall, the roles
 * together), 0..1; NAN when schedstat is missing or the threads have run
 * less than CTR_OVERSUB_MIN_WALL.  Thread-safe. */
double counters_wait_share(CounterSet *set);

/* The wall time in ns a role's readings cover: from its first attach to
 * now (or to its last detach when no thread is attached); 0 before any. */
double counters_role_wall_ns(CounterSet *set, ThreadRole role);

/*
 * The engine's thread hook for a CounterSet passed as `ud` (what
 * engine_set_counters() installs): attaches on starting, detaches
 * otherwise.  Failures are kept in the set's readings.
 */
void counters_thread_hook(void *ud, int tid, ThreadRole role, const char *name, int starting);

/* The PMUs libpfm4 detects here: fills up to max, returns how many there are
 * (or -CN_EIO with err when libpfm4 cannot start). */
int counters_list_pmus(CounterPmu *out, int max, char *err, size_t errlen);

/* Called for each event of each detected PMU; `full` is "pmu::event".
 * encodes: 1 if libpfm4 encodes the name as is (0: it needs a unit mask).
 * Return non-zero to stop. */
typedef int (*CounterEventFn)(void *ud, const char *pmu, const char *full,
                              const char *desc, int encodes);

/* Walks every event libpfm4 knows for the PMUs present; returns the number
 * visited or -CN_EIO with err. */
int counters_list_events(CounterEventFn fn, void *ud, char *err, size_t errlen);

/* "ok", "not counted", "not supported", "no access", "unknown event", "error" */
const char *counters_status_name(CtrStatus s);

/* The calling thread's kernel thread id (what attach takes). */
int counters_gettid(void);

#ifdef __cplusplus
}
#endif
#endif
