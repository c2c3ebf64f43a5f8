/*
 * proctree.c: following a command's process tree (see cnntop/proctree.h).
 *
 * Data: an array of processes in the order found (the root first) and one
 * of threads; each thread holds its perf fds (one per event of the set,
 * -1 where the event is unavailable or the open failed), its schedstat at
 * discovery and at the last poll.  A thread that ends has its final counts
 * read (the kernel keeps an exited task's count readable on the fd) into
 * its process's sums and its fds closed; its last schedstat sample stays.
 * Readings are summed per role at read time from the processes' latest
 * roles, so a process that changes role moves whole.  The roles
 * themselves are proctree_role.c's (the struct is prof/proctree_impl.h).
 *
 * Discovery: /proc/<pid>/task/<tid>/children needs CONFIG_PROC_CHILDREN,
 * which many kernels lack, so each poll reads every /proc/<pid>/stat for
 * its parent and adds, until nothing changes, any process whose parent is
 * in the tree (a few hundred small reads: about a millisecond).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cnntop/proctree.h"
#include "prof/counters_encode.h"
#include "prof/proctree_impl.h"
#include "util/err.h"

static const char *const role_names[PROC_ROLES] = {
    [PROC_ROLE_MAIN] = "main process",
    [PROC_ROLE_WORKER] = "data-loader workers",
    [PROC_ROLE_OTHER] = "other children",
    [PROC_ROLE_RANK] = "ranks",
};

const char *proctree_role_name(ProcRole role)
{
    return (int)role >= 0 && role < PROC_ROLES ? role_names[role] : "?";
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void drop(ProcTree *t, const char *why)
{
    if (!t->dropped++)
        snprintf(t->drop_why, sizeof t->drop_why, "%s", why);
}

/* ---- lifecycle ---- */

/* The attr of each countable event, with the exclusions the probe at
 * counters_new() settled on. */
static void events_prepare(ProcTree *t)
{
    for (int i = 0; i < t->n; i++) {
        char reason[CTR_REASON_LEN];
        counters_event_info(t->set, i, &t->ev[i]);
        if (t->ev[i].status != CTR_OK)
            continue;
        if (counters_encode(t->ev[i].name, &t->attr[i], NULL, 0, reason, sizeof reason) !=
            CTR_OK) {
            t->ev[i].status = CTR_UNKNOWN_EVENT;
            snprintf(t->ev[i].reason, sizeof t->ev[i].reason, "%s", reason);
            continue;
        }
        if (t->ev[i].user_only) {
            t->attr[i].exclude_kernel = 1;
            t->attr[i].exclude_hv = 1;
        }
    }
}

int proctree_new(ProcTree **out, const char *spec, char *err, size_t errlen)
{
    ProcTree *t = calloc(1, sizeof *t);

    *out = NULL;
    if (!t || !(t->thr = calloc(PROC_MAX_THREADS, sizeof *t->thr))) {
        free(t);
        return cn_fail(err, errlen, -CN_ENOMEM, "proctree: out of memory");
    }
    int rc = counters_new(&t->set, spec, err, errlen);
    if (rc != 0) {
        free(t->thr);
        free(t);
        return rc;
    }
    t->n = counters_count(t->set);
    t->root_cmd_len = -1;
    t->clk_tck = sysconf(_SC_CLK_TCK);
    if (t->clk_tck <= 0)
        t->clk_tck = 100;
    t->pmu = -2;
    events_prepare(t);
    *out = t;
    return 0;
}

static void thread_close(PtThread *th, int n)
{
    for (int i = 0; i < n; i++)
        if (th->fd[i] >= 0) {
            close(th->fd[i]);
            th->fd[i] = -1;
        }
}

void proctree_free(ProcTree *t)
{
    if (!t)
        return;
    for (int k = 0; k < t->nthr; k++)
        thread_close(&t->thr[k], t->n);
    for (int k = 0; k < t->nproc; k++)
        if (t->proc[k].exec_fd >= 0)
            close(t->proc[k].exec_fd);
    counters_free(t->set);
    free(t->thr);
    free(t);
}

int proctree_count(const ProcTree *t)
{
    return t ? t->n : 0;
}

/* ---- threads ---- */

/* Notes why event i did not open (errno e) on a thread of p. */
static void open_failed(ProcTree *t, PtProc *p, int i, int e)
{
    if (t->ev[i].hardware && t->pmu == -2)
        t->pmu = -1;
    t->fail_status[i] = counters_open_reason(e, t->ev[i].hardware, t->pmu, t->fail_reason[i],
                                             sizeof t->fail_reason[i]);
    p->fails[i]++;
    if (e == EMFILE || e == ENFILE)
        drop(t, "out of file descriptors for the counters");
}

static void thread_add(ProcTree *t, int pidx, int tid, int on_exec)
{
    PtProc *p = &t->proc[pidx];

    if (t->nthr == PROC_MAX_THREADS) {
        drop(t, "more threads than proctree follows (PROC_MAX_THREADS)");
        return;
    }
    PtThread *th = &t->thr[t->nthr++];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    th->proc = pidx;
    th->live = 1;
    for (int i = 0; i < t->n; i++) {
        th->fd[i] = -1;
        if (t->ev[i].status != CTR_OK)
            continue;
        struct perf_event_attr a = t->attr[i];
        if (on_exec) {
            a.disabled = 1;
            a.enable_on_exec = 1;
        }
        int fd = counters_perf_open(&a, tid);
        if (fd >= 0)
            th->fd[i] = fd;
        else
            open_failed(t, p, i, -fd);
    }
    if (procfs_thread_sched(p->info.pid, tid, &th->base) != 0)
        memset(&th->base, 0, sizeof th->base);
    th->last = th->base;
    th->found_ns = th->last_ns = now_ns();
    p->info.threads++;
}

/* Adds the scaled reading of `fd` (skipped when closed or unreadable) to a. */
static void acc_add(CounterSum *a, int fd)
{
    CounterRaw r;
    double v, f;

    if (fd < 0 || counters_read_fd(fd, &r) != 0)
        return;
    counters_scale(&r, &v, &f);
    a->scaled += v;
    a->raw += r.value;
    a->enabled += r.enabled;
    a->running += r.running;
    a->threads++;
}

/* The thread has gone: its final counts into its process, fds closed. */
static void thread_end(ProcTree *t, PtThread *th)
{
    PtProc *p = &t->proc[th->proc];

    for (int i = 0; i < t->n; i++)
        acc_add(&p->acc[i], th->fd[i]);
    thread_close(th, t->n);
    th->live = 0;
}

static int thread_find(const ProcTree *t, int tid)
{
    for (int k = t->nthr - 1; k >= 0; k--)
        if (t->thr[k].tid == tid && t->thr[k].live)
            return k;
    return -1;
}

static void task_seen(void *ud, int tid)
{
    ProcTree *t = ud;
    int pidx = t->scan_pid;

    if (thread_find(t, tid) < 0)
        thread_add(t, pidx, tid, 0);
}

/* New threads of process pidx (readable: its /proc could be read this
 * poll), then each live thread's sample; a thread whose files have gone,
 * or whose process has ended, has ended. */
static void threads_poll(ProcTree *t, int pidx, int readable, int64_t now)
{
    char path[64];
    PtProc *p = &t->proc[pidx];

    snprintf(path, sizeof path, "/proc/%d/task", p->info.pid);
    t->scan_pid = pidx;
    if (readable && p->info.live)
        procfs_each_id(path, task_seen, t);
    for (int k = 0; k < t->nthr; k++) {
        PtThread *th = &t->thr[k];
        SchedThread s;
        if (th->proc != pidx || !th->live)
            continue;
        int ok = readable && procfs_thread_sched(p->info.pid, th->tid, &s) == 0;
        if (ok) {
            th->last = s;
            th->last_ns = now;
        }
        if (!ok || !p->info.live)
            thread_end(t, th);
    }
}

/* ---- processes ---- */

static int proc_add(ProcTree *t, int pid, int ppid)
{
    if (t->nproc == PROC_MAX_PROCS) {
        drop(t, "more processes than proctree follows (PROC_MAX_PROCS)");
        return -1;
    }
    PtProc *p = &t->proc[t->nproc];
    memset(p, 0, sizeof *p);
    p->info.pid = pid;
    p->info.ppid = ppid;
    p->info.live = 1;
    p->info.role = t->nproc == 0 ? PROC_ROLE_MAIN : PROC_ROLE_OTHER;
    p->found_ns = p->last_ns = now_ns();
    p->exec_fd = -1;
    if (t->nproc > 0)
        role_watch(t, p);
    return t->nproc++;
}

/* Samples process pidx's /proc figures: 1 if they could be read (it is
 * alive, or a zombie read for the last time), 0 if it has gone.  Marks it
 * ended either way when this was its last sample. */
static int proc_sample(ProcTree *t, int pidx, int64_t now)
{
    PtProc *p = &t->proc[pidx];
    ProcStat st;

    if (!p->info.live)
        return 0;
    if (procfs_stat(p->info.pid, &st) != 0) {
        p->info.live = 0; /* gone: reaped */
        p->rss_kib = 0;
        return 0;
    }
    p->info.cpu = (double)(st.utime + st.stime) / (double)t->clk_tck;
    p->info.minflt = st.minflt;
    p->info.majflt = st.majflt;
    long hwm = procfs_status_field(p->info.pid, "VmHWM");
    if (hwm > p->info.hwm_kib)
        p->info.hwm_kib = hwm;
    long rss = procfs_status_field(p->info.pid, "VmRSS");
    p->rss_kib = rss > 0 ? rss : 0;
    p->last_ns = now;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", p->info.pid); /* it may have exec'd */
    if (procfs_read(path, p->info.comm, sizeof p->info.comm) > 0)
        p->info.comm[strcspn(p->info.comm, "\n")] = '\0';
    if (st.state == 'Z') /* exited, not reaped: this was its last sample */
        p->info.live = 0;
    return 1;
}

typedef struct PtScan {
    int pid[8192], ppid[8192];
    int n;
} PtScan;

static void scan_one(void *ud, int pid)
{
    PtScan *s = ud;
    ProcStat st;

    if (s->n < (int)(sizeof s->pid / sizeof s->pid[0]) && procfs_stat(pid, &st) == 0) {
        s->pid[s->n] = pid;
        s->ppid[s->n++] = st.ppid;
    }
}

/* Adds every process whose parent is a live process of the tree, until
 * none is left (a grandchild may be listed before its parent). */
static void procs_discover(ProcTree *t)
{
    static PtScan scan; /* 64 KiB; one ProcTree polls at a time */
    int added;

    scan.n = 0;
    procfs_each_id("/proc", scan_one, &scan);
    do {
        added = 0;
        for (int k = 0; k < scan.n; k++) {
            int parent = proctree_proc_find(t, scan.ppid[k]);
            if (parent < 0 || !t->proc[parent].info.live ||
                proctree_proc_find(t, scan.pid[k]) >= 0)
                continue;
            if (proc_add(t, scan.pid[k], scan.ppid[k]) >= 0)
                added++;
        }
    } while (added);
}

int proctree_watch(ProcTree *t, int pid, int enable_on_exec, char *err, size_t errlen)
{
    char path[64];

    if (t->nproc)
        return cn_fail(err, errlen, -CN_ESTATE, "proctree: a root is followed already");
    snprintf(path, sizeof path, "/proc/%d", pid);
    if (pid <= 0 || access(path, F_OK) != 0)
        return cn_fail(err, errlen, -CN_EINVAL, "proctree: no process %d", pid);
    ProcStat st;
    if (procfs_stat(pid, &st) != 0)
        return cn_fail(err, errlen, -CN_EINVAL, "proctree: %s/stat: cannot be read", path);
    proc_add(t, pid, st.ppid);
    thread_add(t, 0, pid, enable_on_exec);
    t->await_exec = enable_on_exec;
    if (!enable_on_exec) { /* running its own program already */
        t->root_cmd_len = procfs_cmdline(pid, t->root_cmd, sizeof t->root_cmd);
        t->root_gen = 1;
    }
    return 0;
}

/* The root's command line after its last exec: its copies are judged
 * against it.  Until its first exec it is the caller's copy (the same
 * command line as the caller's); a launcher that execs again (a pyenv shim
 * is a shell script that execs python) changes it again. */
static void root_cmdline(ProcTree *t)
{
    char cmd[sizeof t->root_cmd], self[sizeof t->root_cmd];
    long n = procfs_cmdline(t->proc[0].info.pid, cmd, sizeof cmd);

    if (n <= 0)
        return;
    if (t->await_exec) {
        long m = procfs_cmdline(getpid(), self, sizeof self);
        if (n == m && !memcmp(self, cmd, (size_t)n))
            return;
        t->await_exec = 0;
    }
    if (n != t->root_cmd_len || memcmp(t->root_cmd, cmd, (size_t)n)) {
        memcpy(t->root_cmd, cmd, (size_t)n);
        t->root_cmd_len = n;
        t->root_gen++;
    }
}

int proctree_poll(ProcTree *t)
{
    int64_t now = now_ns();
    long rss = 0;
    int live = 0;

    if (!t || !t->nproc)
        return 0;
    t->polls++;
    if (t->proc[0].info.live)
        root_cmdline(t);
    procs_discover(t);
    for (int k = 0; k < t->nproc; k++) {
        PtProc *p = &t->proc[k];
        int readable = proc_sample(t, k, now);
        threads_poll(t, k, readable, now);
        p->info.role = role_judge(t, p);
        if (p->info.live) {
            p->poll_first = p->poll_first ? p->poll_first : t->polls;
            p->poll_last = t->polls;
        }
        rss += p->rss_kib;
        live += p->info.live;
    }
    role_prune(t);
    if (rss > t->peak_rss_kib)
        t->peak_rss_kib = rss;
    return live;
}

/* ---- readings ---- */

/* The reading of event i from the summed acc (as counters_read() fills
 * one: status and reason say why a figure is missing). */
static void reading_fill(const ProcTree *t, ProcRole role, int i, const CounterSum *a, int fails,
                         CounterReading *out)
{
    CounterMiss miss = {fails, t->fail_status[i], t->fail_reason[i]};
    char none[80];

    snprintf(none, sizeof none, "no thread of the %s was counted", role_names[role]);
    counters_reading_fill(&t->ev[i], a, &miss, none, out);
}

int proctree_read(ProcTree *t, ProcRole role, CounterReading *out, int max)
{
    CounterSum acc[CTR_MAX_EVENTS];
    int fails[CTR_MAX_EVENTS];

    if (!t || (int)role < 0 || role >= PROC_ROLES)
        return 0;
    int n = t->n < max ? t->n : max;
    memset(acc, 0, sizeof acc);
    memset(fails, 0, sizeof fails);
    for (int k = 0; k < t->nproc; k++) {
        const PtProc *p = &t->proc[k];
        if (p->info.role != role)
            continue;
        for (int i = 0; i < n; i++) {
            acc[i].scaled += p->acc[i].scaled;
            acc[i].raw += p->acc[i].raw;
            acc[i].enabled += p->acc[i].enabled;
            acc[i].running += p->acc[i].running;
            acc[i].threads += p->acc[i].threads;
            fails[i] += p->fails[i];
        }
    }
    for (int k = 0; k < t->nthr; k++) {
        const PtThread *th = &t->thr[k];
        if (th->live && t->proc[th->proc].info.role == role)
            for (int i = 0; i < n; i++)
                acc_add(&acc[i], th->fd[i]);
    }
    for (int i = 0; i < n; i++)
        reading_fill(t, role, i, &acc[i], fails[i], &out[i]);
    return n;
}

/* The role's span: from its first process found to its last seen. */
static void role_span(const ProcTree *t, ProcRole role, int64_t *first, int64_t *last)
{
    *first = *last = 0;
    for (int k = 0; k < t->nproc; k++) {
        const PtProc *p = &t->proc[k];
        if (p->info.role != role)
            continue;
        if (!*first || p->found_ns < *first)
            *first = p->found_ns;
        if (p->last_ns > *last)
            *last = p->last_ns;
    }
}

double proctree_role_wall_ns(const ProcTree *t, ProcRole role)
{
    int64_t first, last;

    if (!t)
        return 0.0;
    role_span(t, role, &first, &last);
    return first ? (double)(last - first) : 0.0;
}

void proctree_sched(const ProcTree *t, ProcRole role, CounterSched *out)
{
    SchedThread sum;
    double wall = 0.0;
    int threads = 0, live = 0;

    memset(&sum, 0, sizeof sum);
    for (int k = 0; t && k < t->nthr; k++) {
        const PtThread *th = &t->thr[k];
        if (t->proc[th->proc].info.role != role)
            continue;
        schedstat_add_delta(&sum, &th->last, &th->base);
        wall += (double)(th->last_ns - th->found_ns);
        threads++;
        live += th->live;
    }
    schedstat_summarise(out, &sum, threads, live, wall * 1e-9,
                        t ? proctree_role_wall_ns(t, role) * 1e-9 : 0.0);
    if (out->available && !out->have_wait)
        snprintf(out->reason, sizeof out->reason,
                 "no /proc/<pid>/task/<tid>/schedstat: run-queue wait unknown");
}

int proctree_busy_threads(const ProcTree *t, ProcRole role, double share)
{
    int n = 0;

    for (int k = 0; t && k < t->nthr; k++) {
        const PtThread *th = &t->thr[k];
        double wall = (double)(th->last_ns - th->found_ns);
        if (t->proc[th->proc].info.role != role || !th->last.have_sched || wall <= 0)
            continue;
        double wanted = (double)(th->last.on_cpu_ns - th->base.on_cpu_ns) +
                        (double)(th->last.wait_ns - th->base.wait_ns);
        n += wanted > share * wall;
    }
    return n;
}

int proctree_role_procs(const ProcTree *t, ProcRole role)
{
    int n = 0;

    for (int k = 0; t && k < t->nproc; k++)
        n += t->proc[k].info.role == role;
    return n;
}

int proctree_procs(const ProcTree *t, ProcInfo *out, int max)
{
    if (!t)
        return 0;
    for (int k = 0; k < t->nproc && k < max; k++) {
        const PtProc *p = &t->proc[k];
        out[k] = p->info;
        out[k].wall = (double)(p->last_ns - p->found_ns) * 1e-9;
        out[k].cpu_util = out[k].wall > 0 ? out[k].cpu / out[k].wall : 0.0;
    }
    return t->nproc;
}

long proctree_peak_rss_kib(const ProcTree *t)
{
    return t ? t->peak_rss_kib : 0;
}

int proctree_dropped(const ProcTree *t, char *why, size_t len)
{
    if (why && len)
        snprintf(why, len, "%s", t && t->dropped ? t->drop_why : "");
    return t ? t->dropped : 0;
}
