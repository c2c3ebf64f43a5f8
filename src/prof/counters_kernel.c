/*
 * counters_kernel.c: perf_event_open, one event for one thread, and what
 * its errno means (see counters_kernel.h).
 *
 * The reasons name what a person can change: the paranoid level and the
 * sysctl that lowers it, a machine without a PMU (a virtual machine), a
 * container's policy, the file descriptor limit.  Whether the machine has
 * a PMU at all is asked of the kernel with a plain user-space cycles
 * counter, because ENOENT means "no such PMU" for a generic event and
 * "not on this PMU" for a model-specific one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prof/counters_kernel.h"
#include "prof/counters_say.h"

static _Thread_local int self_tid;

int counters_gettid(void)
{
    if (!self_tid)
        self_tid = (int)syscall(SYS_gettid);
    return self_tid;
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
int counters_pmu_exposed(void)
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
            counters_say(reason, rlen, "this CPU's PMU does not count this event");
        else if (hardware)
            counters_say(reason, rlen, "no PMU exposed to this machine (a virtual machine?)");
        else
            counters_say(reason, rlen, "this kernel does not support the event");
        return CTR_UNSUPPORTED;
    case ENODEV:
        counters_say(reason, rlen, "the event is not supported on this CPU");
        return CTR_UNSUPPORTED;
    case EACCES:
    case EPERM:
        par = counters_paranoid();
        if (par >= 2 || par == -99)
            counters_say(reason, rlen, "perf_event_paranoid is %d: run "
                              "`sysctl kernel.perf_event_paranoid=1` or as root", par);
        else
            counters_say(reason, rlen, "permission denied although perf_event_paranoid is %d "
                              "(a container or seccomp policy?)", par);
        return CTR_NO_ACCESS;
    case ENOSPC:
    case EBUSY:
        counters_say(reason, rlen, "too many events for the PMU (or its counters are taken, "
                 "e.g. by the NMI watchdog)");
        return CTR_UNSUPPORTED;
    case EINVAL:
        counters_say(reason, rlen, hardware ? "the PMU rejects this event's settings (or too many "
                 "events for the PMU)" : "the kernel rejects this event's settings");
        return CTR_UNSUPPORTED;
    case EMFILE:
    case ENFILE:
        counters_say(reason, rlen, "out of file descriptors: raise `ulimit -n`");
        return CTR_ERROR;
    case ESRCH:
        counters_say(reason, rlen, "the thread has already exited");
        return CTR_ERROR;
    case ENOSYS:
        counters_say(reason, rlen, "perf_event_open is not available in this kernel or sandbox");
        return CTR_NO_ACCESS;
    default:
        counters_say(reason, rlen, "perf_event_open: %s", strerror(e));
        return CTR_ERROR;
    }
}

/* One read() of a counter opened with both times; 0 or -1. */
int counters_read_fd(int fd, CounterRaw *out)
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
