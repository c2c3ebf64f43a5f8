/*
 * counters_kernel.h: the kernel's side of the counters, perf_event_open.
 *
 * Opening one event for one thread, reading it, and turning the errno of a
 * refused open into a status and a reason a person can act on ("no PMU
 * exposed to this machine (a virtual machine?)").  The struct comes from
 * libpfm4's copy of the kernel header, which defers to <linux/perf_event.h>
 * when that is included first, so the two headers mix in any order.
 */
#ifndef CNNTOP_COUNTERS_KERNEL_H
#define CNNTOP_COUNTERS_KERNEL_H

#include <stddef.h>
#include <perfmon/perf_event.h>

#include "cnntop/counters.h"

/* perf_event_open(attr, pid=tid, cpu=-1, group=-1, CLOEXEC): an fd or -errno.
 * tid 0 is the calling thread. */
int counters_perf_open(struct perf_event_attr *attr, int tid);

/* One read() of a counter opened with both times (TOTAL_TIME_ENABLED |
 * RUNNING) into *out (valid = 1); 0, or -1 with *out zeroed. */
int counters_read_fd(int fd, CounterRaw *out);

/* 1 if a generic cycles counter opens for user space here, 0 if the
 * kernel says there is no such PMU, -1 if it refuses for another reason
 * (what counters_open_reason takes as `pmu`). */
int counters_pmu_exposed(void);

/*
 * The status and reason for perf_event_open's errno `e` (positive) on an
 * event (`hardware`: see counters_is_hardware; `pmu`: 1 if this machine
 * exposes a PMU, 0 if not, -1 unknown).
 */
CtrStatus counters_open_reason(int e, int hardware, int pmu, char *reason, size_t rlen);

/* /proc/sys/kernel/perf_event_paranoid, or -99 when unreadable. */
int counters_paranoid(void);

#endif
