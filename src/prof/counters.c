/*
 * counters.c: perf_event counters per thread, encoded by libpfm4, summed
 * per thread role (see cnntop/counters.h for the contract).
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
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "prof/counters_pfm.h"
#include "util/err.h"
#include "prof/schedstat.h"

/* A sum over threads of one event's readings. */
typedef struct CtrAcc {
    double scaled;       /* sum of each thread's scaled value */
    uint64_t raw;        /* sum of raw values */
    uint64_t enabled;    /* ns */
    uint64_t running;    /* ns */
    int threads;         /* threads whose counter was read */
} CtrAcc;

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
    CtrAcc acc[CTR_MAX_EVENTS];         /* detached threads */
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

static _Thread_local int self_tid;

/* ---- small helpers ---- */

/* snprintf into a fixed buffer where cutting a long name or reason short
 * is acceptable (vsnprintf keeps gcc's truncation warning for the cases
 * where it is not). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!buf || !len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int counters_gettid(void)
{
    if (!self_tid)
        self_tid = (int)syscall(SYS_gettid);
    return self_tid;
}

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

int counters_paranoid(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -99;

    if (!f)
        return -99;
    if (fscanf(f, "%d", &v) != 1)
        v = -99;
    fclose(f);
    return v;
}

/* ---- libpfm4 ---- */

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status = PFM_ERR_NOINIT;

static void pfm_start(void)
{
    pfm_status = pfm_initialize();
}

/* Starts libpfm4 once per process (pthread_once makes it thread-safe). */
static int pfm_ready(void)
{
    pthread_once(&pfm_once, pfm_start);
    return pfm_status;
}

CtrStatus counters_encode(const char *name, struct perf_event_attr *attr, char *encoding,
                          size_t enclen, char *reason, size_t rlen)
{
    pfm_perf_encode_arg_t arg;
    char *fstr = NULL;
    int ret = pfm_ready();

    memset(attr, 0, sizeof *attr);
    if (encoding && enclen)
        encoding[0] = '\0';
    if (ret != PFM_SUCCESS) {
        say(reason, rlen, "libpfm4 could not start: %s", pfm_strerror(ret));
        return CTR_UNKNOWN_EVENT;
    }
    memset(&arg, 0, sizeof arg);
    arg.attr = attr;
    arg.fstr = &fstr;
    arg.size = sizeof arg;
    ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
    if (ret != PFM_SUCCESS) {
        const char *force = getenv("LIBPFM_FORCE_PMU");
        if (force && *force)
            say(reason, rlen,
                     "unknown event '%s' (%s; LIBPFM_FORCE_PMU=%s hides the generic perf events; "
                     "see cnntop events)", name, pfm_strerror(ret), force);
        else
            say(reason, rlen, "unknown event '%s' (%s; see cnntop events)", name,
                     pfm_strerror(ret));
        free(fstr);
        return CTR_UNKNOWN_EVENT;
    }
    if (encoding && enclen)
        say(encoding, enclen, "%s", fstr ? fstr : name);
    free(fstr);
    /* libpfm4 has written the privilege bits from dfl_plm and cleared
     * pinned; everything below is cnntop's choice and must come after. */
    attr->size = sizeof *attr;
    attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr->disabled = 0;
    attr->inherit = 0;
    attr->pinned = 0;
    attr->exclude_user = 0;
    attr->exclude_kernel = 0;
    attr->exclude_hv = 0;
    attr->sample_period = 0;
    attr->sample_type = 0;
    if (reason && rlen)
        reason[0] = '\0';
    return CTR_OK;
}

CtrKind counters_kind(const struct perf_event_attr *attr)
{
    if (attr->type == PERF_TYPE_HARDWARE) {
        switch (attr->config) {
        case PERF_COUNT_HW_CPU_CYCLES: return CTR_KIND_CYCLES;
        case PERF_COUNT_HW_INSTRUCTIONS: return CTR_KIND_INSTRUCTIONS;
        case PERF_COUNT_HW_CACHE_REFERENCES: return CTR_KIND_CACHE_REFS;
        case PERF_COUNT_HW_CACHE_MISSES: return CTR_KIND_CACHE_MISSES;
        case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return CTR_KIND_BRANCHES;
        case PERF_COUNT_HW_BRANCH_MISSES: return CTR_KIND_BRANCH_MISSES;
        default: return CTR_KIND_OTHER;
        }
    }
    if (attr->type == PERF_TYPE_SOFTWARE) {
        switch (attr->config) {
        case PERF_COUNT_SW_TASK_CLOCK: return CTR_KIND_TASK_CLOCK;
        case PERF_COUNT_SW_CPU_CLOCK: return CTR_KIND_CPU_CLOCK;
        case PERF_COUNT_SW_CONTEXT_SWITCHES: return CTR_KIND_CTX_SWITCHES;
        case PERF_COUNT_SW_CPU_MIGRATIONS: return CTR_KIND_MIGRATIONS;
        case PERF_COUNT_SW_PAGE_FAULTS: return CTR_KIND_PAGE_FAULTS;
        default: return CTR_KIND_OTHER;
        }
    }
    return CTR_KIND_OTHER;
}

int counters_is_hardware(const struct perf_event_attr *attr)
{
    return attr->type != PERF_TYPE_SOFTWARE && attr->type != PERF_TYPE_TRACEPOINT;
}

/* ---- the kernel ---- */

int counters_perf_open(struct perf_event_attr *attr, int tid)
{
    long fd;

    do
        fd = syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : (int)fd;
}

/* 1 if a generic cycles counter opens for user space here, 0 if the
 * kernel says there is no such PMU, -1 if it refuses for another reason. */
static int pmu_exposed(void)
{
    struct perf_event_attr a;

    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = counters_perf_open(&a, 0);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    return (fd == -ENOENT || fd == -EOPNOTSUPP) ? 0 : -1;
}

CtrStatus counters_open_reason(int e, int hardware, int pmu, char *reason, size_t rlen)
{
    int par;

    switch (e) {
    case ENOENT:
    case EOPNOTSUPP:
        if (hardware && pmu == 1)
            say(reason, rlen, "this CPU's PMU does not count this event");
        else if (hardware)
            say(reason, rlen, "no PMU exposed to this machine (a virtual machine?)");
        else
            say(reason, rlen, "this kernel does not support the event");
        return CTR_UNSUPPORTED;
    case ENODEV:
        say(reason, rlen, "the event is not supported on this CPU");
        return CTR_UNSUPPORTED;
    case EACCES:
    case EPERM:
        par = counters_paranoid();
        if (par >= 2 || par == -99)
            say(reason, rlen, "perf_event_paranoid is %d: run "
                     "`sysctl kernel.perf_event_paranoid=1` or as root", par);
        else
            say(reason, rlen, "permission denied although perf_event_paranoid is %d "
                     "(a container or seccomp policy?)", par);
        return CTR_NO_ACCESS;
    case ENOSPC:
    case EBUSY:
        say(reason, rlen, "too many events for the PMU (or its counters are taken, "
                 "e.g. by the NMI watchdog)");
        return CTR_UNSUPPORTED;
    case EINVAL:
        say(reason, rlen, hardware ? "the PMU rejects this event's settings (or too many "
                 "events for the PMU)" : "the kernel rejects this event's settings");
        return CTR_UNSUPPORTED;
    case EMFILE:
    case ENFILE:
        say(reason, rlen, "out of file descriptors: raise `ulimit -n`");
        return CTR_ERROR;
    case ESRCH:
        say(reason, rlen, "the thread has already exited");
        return CTR_ERROR;
    case ENOSYS:
        say(reason, rlen, "perf_event_open is not available in this kernel or sandbox");
        return CTR_NO_ACCESS;
    default:
        say(reason, rlen, "perf_event_open: %s", strerror(e));
        return CTR_ERROR;
    }
}

/* One read() of a counter opened with both times; 0 or -1. */
static int read_fd(int fd, CounterRaw *out)
{
    uint64_t v[3];
    ssize_t n;

    do
        n = read(fd, v, sizeof v);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof v) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->value = v[0];
    out->enabled = v[1];
    out->running = v[2];
    out->valid = 1;
    return 0;
}

/* ---- arithmetic (pure) ---- */

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

static void acc_add(CtrAcc *a, const CounterRaw *r)
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

/* Finds the reading of kind k for figure f, or says why not in f->why. */
static const CounterReading *need(const CounterReading *r, int n, CtrKind k,
                                  const char *label, CounterFigure *f)
{
    for (int i = 0; i < n; i++) {
        if (r[i].kind != k)
            continue;
        if (r[i].status != CTR_OK) {
            say(f->why, sizeof f->why, "%s %s: %s", label,
                     counters_status_name(r[i].status), r[i].reason);
            return NULL;
        }
        return &r[i];
    }
    say(f->why, sizeof f->why, "%s is not in the event list", label);
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
        say(f->why, sizeof f->why, "%s counted 0", ld);
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
        say(f->why, sizeof f->why, "no wall time to divide by");
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
        say(r[i].name, sizeof r[i].name, "%s", ev->name);
        r[i].kind = ev->kind;
        r[i].status = ev->status != CTR_OK ? ev->status
                      : isnan(values[i])   ? CTR_NOT_COUNTED
                                           : CTR_OK;
        if (r[i].status == CTR_OK)
            r[i].value = values[i];
        else
            say(r[i].reason, sizeof r[i].reason, "%s",
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

/* ---- the event spec ---- */

/* Appends the comma-separated names of s to names[*n..max) (skipping names
 * already there); 0 or -CN_EINVAL. */
static int spec_add(const char *s, char (*names)[CTR_NAME_LEN], int *n, int max,
                    char *err, size_t errlen)
{
    const char *p = s;

    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            return cn_fail(err, errlen, -CN_EINVAL, "events '%s': empty event name", s);
        if (len >= CTR_NAME_LEN)
            return cn_fail(err, errlen, -CN_EINVAL, "event '%.*s...': name longer than %d",
                           20, p, CTR_NAME_LEN - 1);
        int dup = 0;
        for (int i = 0; i < *n && !dup; i++)
            dup = strlen(names[i]) == len && memcmp(names[i], p, len) == 0;
        if (!dup) {
            if (*n >= max)
                return cn_fail(err, errlen, -CN_EINVAL, "events '%s': more than %d events", s,
                               max);
            memcpy(names[*n], p, len);
            names[*n][len] = '\0';
            (*n)++;
        }
        if (!end)
            return 0;
        p = end + 1;
    }
}

int counters_parse_spec(const char *spec, char (*names)[CTR_NAME_LEN], int max, char *err,
                        size_t errlen)
{
    int n = 0, r;

    if (!spec || !*spec || *spec == '+') {
        if ((r = spec_add(CTR_DEFAULT_EVENTS, names, &n, max, err, errlen)) != 0)
            return r;
        if (!spec || !*spec)
            return n;
        spec++;
    }
    if ((r = spec_add(spec, names, &n, max, err, errlen)) != 0)
        return r;
    return n;
}

/* ---- the set ---- */

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
            say(ev->reason, sizeof ev->reason, "reads 0 without kernel counting "
                     "(perf_event_paranoid %d); see the /proc switch counts instead",
                     counters_paranoid());
        }
        return;
    }
    if (ev->hardware && *pmu == -2)
        *pmu = pmu_exposed();
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
        say(ev->name, sizeof ev->name, "%s", names[i]);
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
    say(out->name, sizeof out->name, "%s", ev->name);
    say(out->encoding, sizeof out->encoding, "%s", ev->encoding);
    say(out->reason, sizeof out->reason, "%s", ev->reason);
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
            pmu = pmu_exposed();
        st[i] = counters_open_reason(-r, ev->hardware, pmu, why[i], sizeof why[0]);
    }
}

int counters_attach(CounterSet *set, int tid, ThreadRole role, char *err, size_t errlen)
{
    int fd[CTR_MAX_EVENTS];
    for (int i = 0; i < CTR_MAX_EVENTS; i++)
        fd[i] = -1;
    CtrStatus st[CTR_MAX_EVENTS];
    char why[CTR_MAX_EVENTS][CTR_REASON_LEN];
    char path[64];
    SchedThread base;

    if (!set || (int)role < 0 || role >= CN_ROLES || tid <= 0)
        return cn_fail(err, errlen, -CN_EINVAL, "counters: bad thread %d or role %d", tid,
                       (int)role);
    /* perf would happily follow a thread of another process; refuse. */
    say(path, sizeof path, "/proc/self/task/%d", tid);
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
    int64_t t = now_ns();

    pthread_mutex_lock(&set->lock);
    CtrSlot *sl = &set->slot[s];
    CtrRole *ro = &set->role[role];
    int nfail = 0, first_fail = -1;
    for (int i = 0; i < set->n; i++) {
        sl->fd[i] = fd[i];
        if (st[i] != CTR_OK) {
            ro->fails[i]++;
            ro->fail_status[i] = st[i];
            memcpy(ro->fail_reason[i], why[i], sizeof why[i]);
            if (first_fail < 0)
                first_fail = i;
            nfail++;
        }
    }
    sl->attach_ns = t;
    sl->base = base;
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
    pthread_mutex_unlock(&set->lock);
    if (nfail)
        cn_fail(err, errlen, 0, "counters: %d event(s) failed on thread %d; %s: %s", nfail,
                tid, set->ev[first_fail].name, why[first_fail]);
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
        if (fd[i] >= 0 && read_fd(fd[i], &r) == 0)
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
                         const CtrAcc *a, CounterReading *out)
{
    const CtrEvent *ev = &set->ev[i];

    memset(out, 0, sizeof *out);
    say(out->name, sizeof out->name, "%s", ev->name);
    out->unit = (ev->kind == CTR_KIND_TASK_CLOCK || ev->kind == CTR_KIND_CPU_CLOCK) ? "ns" : "";
    out->kind = ev->kind;
    out->value = a->scaled;
    out->raw = a->raw;
    out->enabled = a->enabled;
    out->running = a->running;
    out->threads = a->threads;
    out->fraction = a->enabled ? (double)a->running / (double)a->enabled : 0.0;
    if (out->fraction > 1.0)
        out->fraction = 1.0;
    if (ev->status != CTR_OK) {
        out->status = ev->status;
        say(out->reason, sizeof out->reason, "%s", ev->reason);
    } else if (a->threads == 0 && ro->fails[i]) {
        out->status = ro->fail_status[i];
        say(out->reason, sizeof out->reason, "%s", ro->fail_reason[i]);
    } else if (a->threads == 0) {
        out->status = CTR_NOT_COUNTED;
        say(out->reason, sizeof out->reason, "no %s thread has run", role_names[role]);
    } else if (a->running == 0) {
        out->status = CTR_NOT_COUNTED;
        say(out->reason, sizeof out->reason, "never got a counter on the PMU "
                 "(all counters taken?)");
    } else {
        out->status = CTR_OK;
        if (ro->fails[i])
            say(out->reason, sizeof out->reason, "not counted on %d thread(s): %s",
                     ro->fails[i], ro->fail_reason[i]);
        else if (ev->user_only)
            say(out->reason, sizeof out->reason, "user space only");
    }
}

int counters_read(CounterSet *set, ThreadRole role, CounterReading *out, int max)
{
    CtrAcc acc[CTR_MAX_EVENTS];

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
            if (sl->fd[i] >= 0 && read_fd(sl->fd[i], &r) == 0)
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

int counters_self_read(CounterSet *set, CounterRaw *values, int max)
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
        if (sl->fd[i] < 0 || read_fd(sl->fd[i], &values[i]) != 0)
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

/* ---- listing what libpfm4 knows ---- */

static const char *pmu_type_name(pfm_pmu_type_t t)
{
    switch (t) {
    case PFM_PMU_TYPE_CORE: return "core";
    case PFM_PMU_TYPE_UNCORE: return "uncore";
    case PFM_PMU_TYPE_OS_GENERIC: return "OS generic";
    default: return "unknown";
    }
}

int counters_list_pmus(CounterPmu *out, int max, char *err, size_t errlen)
{
    int ret = pfm_ready(), n = 0;
    pfm_pmu_t p;

    if (ret != PFM_SUCCESS)
        return cn_fail(err, errlen, -CN_EIO, "libpfm4: %s", pfm_strerror(ret));
    pfm_for_all_pmus(p) {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
            continue;
        if (n < max) {
            CounterPmu *c = &out[n];
            say(c->name, sizeof c->name, "%s", info.name ? info.name : "?");
            say(c->desc, sizeof c->desc, "%s", info.desc ? info.desc : "");
            c->type = pmu_type_name(info.type);
            c->nevents = info.nevents;
            c->counters = info.num_cntrs;
            c->fixed = info.num_fixed_cntrs;
        }
        n++;
    }
    return n;
}

/* 1 if libpfm4 encodes `full` for perf as it stands. */
static int encodes(const char *full)
{
    struct perf_event_attr a;
    pfm_perf_encode_arg_t arg;

    memset(&a, 0, sizeof a);
    memset(&arg, 0, sizeof arg);
    arg.attr = &a;
    arg.size = sizeof arg;
    return pfm_get_os_event_encoding(full, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) == PFM_SUCCESS;
}

int counters_list_events(CounterEventFn fn, void *ud, char *err, size_t errlen)
{
    int ret = pfm_ready(), n = 0;
    pfm_pmu_t p;

    if (ret != PFM_SUCCESS)
        return cn_fail(err, errlen, -CN_EIO, "libpfm4: %s", pfm_strerror(ret));
    pfm_for_all_pmus(p) {
        pfm_pmu_info_t pinfo;
        memset(&pinfo, 0, sizeof pinfo);
        pinfo.size = sizeof pinfo;
        if (pfm_get_pmu_info(p, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
            continue;
        for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
            pfm_event_info_t e;
            char full[256];
            memset(&e, 0, sizeof e);
            e.size = sizeof e;
            if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &e) != PFM_SUCCESS)
                continue;
            say(full, sizeof full, "%s::%s", pinfo.name, e.name);
            n++;
            if (fn(ud, pinfo.name, full, e.desc ? e.desc : "", encodes(full)))
                return n;
        }
    }
    return n;
}
