/*
 * counters_set.c: the counter set: perf_event counters per thread,
 * encoded by libpfm4, summed per thread role (see cnntop/counters.h for
 * the contract).
 *
 * The counters family, one concept a file: counters_spec.c (the -e
 * grammar), counters_encode.c (libpfm4: names to perf_event_attr),
 * counters_kernel.c (perf_event_open, reads, errno -> reason),
 * counters_math.c (scaling and derived figures, pure), this file (the set:
 * events, threads, roles, readings) and counters_list.c (what libpfm4
 * knows, for `cnntop events`).
 *
 * Layout.  A CounterSet holds its events (each encoded once into a
 * perf_event_attr, with the status learnt by opening it once on the thread
 * that made the set), a table of CTR_MAX_THREADS slots (one per attached
 * thread: its tid, role, one fd per event, the time and the /proc baseline
 * at attach) and, per role, the totals of the threads already detached.
 * A role's reading is those totals plus what its live slots read now.
 *
 * Each event is opened on its own, not in a group: like `perf stat`
 * without -g, every event multiplexes independently and is scaled by its
 * own enabled/running times, so adding events can never make a group
 * unschedulable and turn everything into "<not counted>".  The price is
 * one read() per event where a group would need one; counters_self_read()
 * measured 0.3-0.7 us per event on a 2-vCPU VM (test_counters prints it).
 *
 * DESIGN (locking).  One mutex, set->lock, guards the slot table and the
 * role totals.
 * - counters_attach() reserves a slot under the lock, opens the fds and
 *   reads /proc with the lock released (perf_event_open is the slow part),
 *   then publishes the slot under the lock by storing its tid last
 *   (release), so a slot is visible only once complete.
 * - counters_detach() reads the final counts, moves them to the role's
 *   totals and frees the slot in one critical section, so a reader never
 *   sees a thread twice or not at all; the fds are closed after unlocking.
 * - counters_read() and counters_sched() hold the lock while they read
 *   the live slots' fds and /proc files.  This is deliberate: holding it is
 *   what keeps detach from closing an fd (and the number being reused by
 *   another open) under the reader.  Those reads never block: a perf read
 *   takes about a microsecond, a procfs read a few.
 * - counters_self_read() takes no lock.  Only the owning thread detaches
 *   its own slot (the contract), so while a thread runs its slot's fds
 *   cannot change; it finds its slot through a thread-local cache checked
 *   against the slot's atomic tid (acquire).
 * The events array is written only by counters_new() and is read-only
 * afterwards; counters_free() must not race with anything.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof/counters_encode.h"
#include "prof/counters_kernel.h"
#include "prof/counters_reading.h"
#include "prof/counters_say.h"
#include "prof/counters_spec.h"
#include "prof/schedstat.h"
#include "util/err.h"

/* A sum over threads of one event's readings. */
typedef struct CtrEvent {
    char name[CTR_NAME_LEN];
    char encoding[160];
    struct perf_event_attr attr; /* as opened (exclude bits after any retry) */
    CtrKind kind;
    CtrStatus status;            /* from the probe at counters_new() */
    char reason[CTR_REASON_LEN];
    int user_only;
    int hardware;
} CtrEvent;

typedef struct CtrRole {
    CounterSum acc[CTR_MAX_EVENTS];         /* detached threads */
    int fails[CTR_MAX_EVENTS];          /* threads on which the open failed */
    CtrStatus fail_status[CTR_MAX_EVENTS];
    char fail_reason[CTR_MAX_EVENTS][CTR_REASON_LEN];
    int threads;                        /* threads ever attached */
    int live;                           /* attached now */
    SchedThread sched;                  /* detached threads' /proc deltas */
    double thread_wall_ns;              /* detached threads' attached time */
    int64_t first_ns;                   /* first attach, 0: none yet */
    int64_t last_ns;                    /* last detach */
} CtrRole;

typedef struct CtrSlot {
    _Atomic int tid;          /* 0: free (or reserved, see reserved) */
    int reserved;             /* tid being attached, 0: none */
    ThreadRole role;
    int fd[CTR_MAX_EVENTS];   /* -1: not open */
    int64_t attach_ns;        /* CLOCK_MONOTONIC at attach */
    SchedThread base;         /* /proc at attach */
} CtrSlot;

struct CounterSet {
    unsigned long id;         /* unique per set, for the self-read cache */
    int n;
    CtrEvent ev[CTR_MAX_EVENTS];
    pthread_mutex_t lock;
    CtrSlot slot[CTR_MAX_THREADS];
    CtrRole role[CN_ROLES];
};

static const char *const role_names[CN_ROLES] = {
    [CN_ROLE_TRAIN] = "trainer", [CN_ROLE_LOAD] = "loader",
};

static atomic_ulong set_ids = 1;

static _Thread_local struct {
    const CounterSet *set;
    unsigned long id;
    int slot;
} self_cache;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void acc_add(CounterSum *a, const CounterRaw *r)
{
    double v, f;

    if (!r->valid)
        return;
    if (counters_scale(r, &v, &f) == CTR_OK)
        a->scaled += v;
    a->raw += r->value;
    a->enabled += r->enabled;
    a->running += r->running;
    a->threads++;
}

/* Learns an encoded event's status by opening it on the calling thread,
 * retrying without kernel counting on EACCES/EPERM as perf does. */
static void event_probe(CtrEvent *ev, int *pmu)
{
    int fd = counters_perf_open(&ev->attr, 0);

    if (fd == -EACCES || fd == -EPERM) {
        ev->attr.exclude_kernel = 1;
        ev->attr.exclude_hv = 1;
        ev->user_only = 1;
        fd = counters_perf_open(&ev->attr, 0);
    }
    if (fd >= 0) {
        close(fd);
        ev->status = CTR_OK;
        if (ev->kind == CTR_KIND_CTX_SWITCHES && ev->user_only) {
            /* The kernel counts a switch in kernel context, so a user-only
             * counter reads 0 however often the thread switches. */
            ev->status = CTR_UNSUPPORTED;
            counters_say(ev->reason, sizeof ev->reason, "reads 0 without kernel counting "
                     "(perf_event_paranoid %d); see the /proc switch counts instead",
                     counters_paranoid());
        }
        return;
    }
    if (ev->hardware && *pmu == -2)
        *pmu = counters_pmu_exposed();
    ev->status = counters_open_reason(-fd, ev->hardware, *pmu, ev->reason, sizeof ev->reason);
}

int counters_new(CounterSet **out, const char *spec, char *err, size_t errlen)
{
    char names[CTR_MAX_EVENTS][CTR_NAME_LEN];
    int n = counters_parse_spec(spec, names, CTR_MAX_EVENTS, err, errlen);
    int pmu = -2; /* not asked yet */

    *out = NULL;
    if (n < 0)
        return n;
    CounterSet *set = calloc(1, sizeof *set);
    if (!set)
        return cn_fail(err, errlen, -CN_ENOMEM, "counters: out of memory (%zu bytes)",
                       sizeof *set);
    if (pthread_mutex_init(&set->lock, NULL) != 0) {
        free(set);
        return cn_fail(err, errlen, -CN_ENOMEM, "counters: cannot create a mutex");
    }
    set->id = atomic_fetch_add(&set_ids, 1);
    set->n = n;
    for (int s = 0; s < CTR_MAX_THREADS; s++)
        for (int i = 0; i < CTR_MAX_EVENTS; i++)
            set->slot[s].fd[i] = -1;
    for (int i = 0; i < n; i++) {
        CtrEvent *ev = &set->ev[i];
        counters_say(ev->name, sizeof ev->name, "%s", names[i]);
        ev->status = counters_encode(ev->name, &ev->attr, ev->encoding, sizeof ev->encoding,
                                     ev->reason, sizeof ev->reason);
        if (ev->status != CTR_OK)
            continue;
        ev->kind = counters_kind(&ev->attr);
        ev->hardware = counters_is_hardware(&ev->attr);
        event_probe(ev, &pmu);
    }
    *out = set;
    return 0;
}

static void slot_close(CtrSlot *s, int n)
{
    for (int i = 0; i < n; i++) {
        if (s->fd[i] >= 0)
            close(s->fd[i]);
        s->fd[i] = -1;
    }
}

void counters_free(CounterSet *set)
{
    if (!set)
        return;
    for (int s = 0; s < CTR_MAX_THREADS; s++)
        slot_close(&set->slot[s], set->n);
    pthread_mutex_destroy(&set->lock);
    free(set);
}

int counters_count(const CounterSet *set)
{
    return set ? set->n : 0;
}

int counters_event_info(const CounterSet *set, int i, CounterEventInfo *out)
{
    if (!set || i < 0 || i >= set->n)
        return -CN_EINVAL;
    const CtrEvent *ev = &set->ev[i];
    memset(out, 0, sizeof *out);
    counters_say(out->name, sizeof out->name, "%s", ev->name);
    counters_say(out->encoding, sizeof out->encoding, "%s", ev->encoding);
    counters_say(out->reason, sizeof out->reason, "%s", ev->reason);
    out->kind = ev->kind;
    out->status = ev->status;
    out->user_only = ev->user_only;
    out->hardware = ev->hardware;
    return 0;
}

/* The slot of a live tid, or -1.  Caller holds the lock. */
static int slot_find(CounterSet *set, int tid)
{
    for (int s = 0; s < CTR_MAX_THREADS; s++)
        if (atomic_load_explicit(&set->slot[s].tid, memory_order_relaxed) == tid ||
            set->slot[s].reserved == tid)
            return s;
    return -1;
}

/* Reserves a free slot for tid; the slot index, -1 if attached already,
 * -2 if full.  Caller holds the lock. */
static int slot_reserve(CounterSet *set, int tid, ThreadRole role)
{
    if (slot_find(set, tid) >= 0)
        return -1;
    for (int s = 0; s < CTR_MAX_THREADS; s++) {
        CtrSlot *sl = &set->slot[s];
        if (atomic_load_explicit(&sl->tid, memory_order_relaxed) == 0 && sl->reserved == 0) {
            sl->reserved = tid;
            sl->role = role;
            return s;
        }
    }
    return -2;
}

/* Opens the set's available events for tid into fd[]; failures go to
 * st[]/why[] (CTR_OK where it opened or the event was unavailable anyway). */
static void open_all(CounterSet *set, int tid, int *fd, CtrStatus *st,
                     char (*why)[CTR_REASON_LEN])
{
    int pmu = -2;

    for (int i = 0; i < set->n; i++) {
        CtrEvent *ev = &set->ev[i];
        fd[i] = -1;
        st[i] = CTR_OK;
        if (ev->status != CTR_OK)
            continue;
        struct perf_event_attr a = ev->attr;
        int r = counters_perf_open(&a, tid);
        if (r >= 0) {
            fd[i] = r;
            continue;
        }
        if (ev->hardware && pmu == -2)
            pmu = counters_pmu_exposed();
        st[i] = counters_open_reason(-r, ev->hardware, pmu, why[i], sizeof why[0]);
    }
}

/* Publishes reserved slot s for tid with its fds and baseline, and notes
 * the events that failed in the role; returns the failures, the first in
 * *first.  Caller holds the lock. */
static int slot_publish(CounterSet *set, int s, int tid, const int *fd, const CtrStatus *st,
                        char (*why)[CTR_REASON_LEN], const SchedThread *base, int *first)
{
    CtrSlot *sl = &set->slot[s];
    CtrRole *ro = &set->role[sl->role];
    int64_t t = now_ns();
    int nfail = 0;

    *first = -1;
    for (int i = 0; i < set->n; i++) {
        sl->fd[i] = fd[i];
        if (st[i] != CTR_OK) {
            ro->fails[i]++;
            ro->fail_status[i] = st[i];
            memcpy(ro->fail_reason[i], why[i], sizeof why[i]);
            if (*first < 0)
                *first = i;
            nfail++;
        }
    }
    sl->attach_ns = t;
    sl->base = *base;
    ro->threads++;
    ro->live++;
    if (!ro->first_ns)
        ro->first_ns = t;
    sl->reserved = 0;
    atomic_store_explicit(&sl->tid, tid, memory_order_release);
    if (tid == counters_gettid()) {
        self_cache.set = set;
        self_cache.id = set->id;
        self_cache.slot = s;
    }
    return nfail;
}

int counters_attach(CounterSet *set, int tid, ThreadRole role, char *err, size_t errlen)
{
    int fd[CTR_MAX_EVENTS];
    CtrStatus st[CTR_MAX_EVENTS];
    char why[CTR_MAX_EVENTS][CTR_REASON_LEN];
    char path[64];
    SchedThread base;
    int first;

    for (int i = 0; i < CTR_MAX_EVENTS; i++)
        fd[i] = -1;

    if (!set || (int)role < 0 || role >= CN_ROLES || tid <= 0)
        return cn_fail(err, errlen, -CN_EINVAL, "counters: bad thread %d or role %d", tid,
                       (int)role);
    /* perf would happily follow a thread of another process; refuse. */
    counters_say(path, sizeof path, "/proc/self/task/%d", tid);
    if (access(path, F_OK) != 0)
        return cn_fail(err, errlen, -CN_EINVAL, "counters: thread %d is not a thread of "
                       "this process", tid);
    pthread_mutex_lock(&set->lock);
    int s = slot_reserve(set, tid, role);
    pthread_mutex_unlock(&set->lock);
    if (s == -1)
        return 0;
    if (s == -2)
        return cn_fail(err, errlen, -CN_ENOMEM, "counters: %d threads attached already",
                       CTR_MAX_THREADS);

    open_all(set, tid, fd, st, why);
    if (schedstat_read(tid, &base, NULL, 0) != 0)
        memset(&base, 0, sizeof base);
    pthread_mutex_lock(&set->lock);
    int nfail = slot_publish(set, s, tid, fd, st, why, &base, &first);
    pthread_mutex_unlock(&set->lock);
    if (nfail)
        cn_fail(err, errlen, 0, "counters: %d event(s) failed on thread %d; %s: %s", nfail,
                tid, set->ev[first].name, why[first]);
    return 0;
}

int counters_detach(CounterSet *set, int tid)
{
    int fd[CTR_MAX_EVENTS];
    for (int i = 0; i < CTR_MAX_EVENTS; i++)
        fd[i] = -1;

    if (!set)
        return -CN_EINVAL;
    pthread_mutex_lock(&set->lock);
    int s = slot_find(set, tid);
    if (s < 0 || atomic_load_explicit(&set->slot[s].tid, memory_order_relaxed) != tid) {
        pthread_mutex_unlock(&set->lock);
        return -CN_ESTATE;
    }
    CtrSlot *sl = &set->slot[s];
    CtrRole *ro = &set->role[sl->role];
    for (int i = 0; i < set->n; i++) {
        CounterRaw r;
        fd[i] = sl->fd[i];
        if (fd[i] >= 0 && counters_read_fd(fd[i], &r) == 0)
            acc_add(&ro->acc[i], &r);
        sl->fd[i] = -1;
    }
    SchedThread now;
    if (schedstat_read(tid, &now, NULL, 0) == 0)
        schedstat_add_delta(&ro->sched, &now, &sl->base);
    int64_t t = now_ns();
    ro->thread_wall_ns += (double)(t - sl->attach_ns);
    ro->last_ns = t;
    ro->live--;
    atomic_store_explicit(&sl->tid, 0, memory_order_release);
    if (self_cache.set == set && self_cache.slot == s)
        self_cache.set = NULL;
    pthread_mutex_unlock(&set->lock);
    for (int i = 0; i < set->n; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    return 0;
}

/* The reading of event i for role ro from the summed acc. */
static void reading_fill(const CounterSet *set, const CtrRole *ro, ThreadRole role, int i,
                         const CounterSum *a, CounterReading *out)
{
    CounterEventInfo ev;
    CounterMiss miss = {ro->fails[i], ro->fail_status[i], ro->fail_reason[i]};
    char none[64];

    counters_event_info(set, i, &ev);
    counters_say(none, sizeof none, "no %s thread has run", role_names[role]);
    counters_reading_fill(&ev, a, &miss, none, out);
}

int counters_read(CounterSet *set, ThreadRole role, CounterReading *out, int max)
{
    CounterSum acc[CTR_MAX_EVENTS];

    if (!set || (int)role < 0 || role >= CN_ROLES)
        return 0;
    int n = set->n < max ? set->n : max;
    pthread_mutex_lock(&set->lock);
    CtrRole *ro = &set->role[role];
    memcpy(acc, ro->acc, sizeof acc);
    for (int s = 0; s < CTR_MAX_THREADS; s++) {
        CtrSlot *sl = &set->slot[s];
        if (atomic_load_explicit(&sl->tid, memory_order_relaxed) == 0 || sl->role != role)
            continue;
        for (int i = 0; i < n; i++) {
            CounterRaw r;
            if (sl->fd[i] >= 0 && counters_read_fd(sl->fd[i], &r) == 0)
                acc_add(&acc[i], &r);
        }
    }
    for (int i = 0; i < n; i++)
        reading_fill(set, ro, role, i, &acc[i], &out[i]);
    pthread_mutex_unlock(&set->lock);
    return n;
}

/* Caller holds the lock. */
static double role_wall_locked(const CtrRole *ro, int64_t now)
{
    if (!ro->first_ns)
        return 0.0;
    return (double)((ro->live > 0 ? now : ro->last_ns) - ro->first_ns);
}

double counters_role_wall_ns(CounterSet *set, ThreadRole role)
{
    if (!set || (int)role < 0 || role >= CN_ROLES)
        return 0.0;
    pthread_mutex_lock(&set->lock);
    double w = role_wall_locked(&set->role[role], now_ns());
    pthread_mutex_unlock(&set->lock);
    return w;
}

void counters_sched(CounterSet *set, ThreadRole role, CounterSched *out)
{
    memset(out, 0, sizeof *out);
    if (!set || (int)role < 0 || role >= CN_ROLES)
        return;
    pthread_mutex_lock(&set->lock);
    CtrRole *ro = &set->role[role];
    SchedThread sum = ro->sched;
    double wall = ro->thread_wall_ns;
    int64_t t = now_ns();
    for (int s = 0; s < CTR_MAX_THREADS; s++) {
        CtrSlot *sl = &set->slot[s];
        int tid = atomic_load_explicit(&sl->tid, memory_order_relaxed);
        SchedThread cur;
        if (tid == 0 || sl->role != role)
            continue;
        wall += (double)(t - sl->attach_ns);
        if (schedstat_read(tid, &cur, NULL, 0) == 0)
            schedstat_add_delta(&sum, &cur, &sl->base);
    }
    int threads = ro->threads, live = ro->live;
    double span = role_wall_locked(ro, t);
    pthread_mutex_unlock(&set->lock);
    schedstat_summarise(out, &sum, threads, live, wall * 1e-9, span * 1e-9);
}

int counters_self_read(CounterSet *set, uint32_t want, CounterRaw *values, int max)
{
    int tid = counters_gettid();

    if (!set)
        return -CN_ESTATE;
    if (self_cache.set != set || self_cache.id != set->id ||
        atomic_load_explicit(&set->slot[self_cache.slot].tid, memory_order_acquire) != tid) {
        /* Attached by another thread (the engine's hook does that for
         * threads alive when it is set): find the slot once. */
        pthread_mutex_lock(&set->lock);
        int s = slot_find(set, tid);
        int ok = s >= 0 && atomic_load_explicit(&set->slot[s].tid, memory_order_relaxed) == tid;
        if (ok) {
            self_cache.set = set;
            self_cache.id = set->id;
            self_cache.slot = s;
        }
        pthread_mutex_unlock(&set->lock);
        if (!ok)
            return -CN_ESTATE;
    }
    const CtrSlot *sl = &set->slot[self_cache.slot];
    int n = set->n < max ? set->n : max;
    for (int i = 0; i < n; i++) {
        if (!(want >> i & 1u) || sl->fd[i] < 0 || counters_read_fd(sl->fd[i], &values[i]) != 0)
            memset(&values[i], 0, sizeof values[i]);
    }
    return n;
}

void counters_thread_hook(void *ud, int tid, ThreadRole role, const char *name, int starting)
{
    (void)name;
    if (starting)
        counters_attach(ud, tid, role, NULL, 0);
    else
        counters_detach(ud, tid);
}

void counters_derive_counts(const CounterSet *set, const double *values, int n, double wall_ns,
                            CounterDerived *out)
{
    CounterReading r[CTR_MAX_EVENTS];

    if (n > set->n)
        n = set->n;
    memset(r, 0, sizeof r);
    for (int i = 0; i < n; i++) {
        const CtrEvent *ev = &set->ev[i];
        counters_say(r[i].name, sizeof r[i].name, "%s", ev->name);
        r[i].kind = ev->kind;
        r[i].status = ev->status != CTR_OK ? ev->status
                      : isnan(values[i])   ? CTR_NOT_COUNTED
                                           : CTR_OK;
        if (r[i].status == CTR_OK)
            r[i].value = values[i];
        else
            counters_say(r[i].reason, sizeof r[i].reason, "%s",
                ev->status != CTR_OK ? ev->reason : "did not count on this thread");
    }
    counters_derive(r, n, wall_ns, out);
}

double counters_wait_share(CounterSet *set)
{
    double wait = 0.0, wall = 0.0;
    CounterSched s;

    for (int role = 0; role < CN_ROLES; role++) {
        counters_sched(set, (ThreadRole)role, &s);
        if (s.available && s.have_wait) {
            wait += s.wait;
            wall += s.thread_wall;
        }
    }
    return wall >= CTR_OVERSUB_MIN_WALL ? wait / wall : NAN;
}
