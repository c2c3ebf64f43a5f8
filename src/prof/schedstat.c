/*
 * schedstat.c: per-thread scheduler figures from /proc (see schedstat.h).
 *
 * Each read opens, reads and closes two small procfs files; the kernel
 * builds their text from in-memory counters, so a read costs a few
 * microseconds and never blocks on a disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "prof/schedstat.h"

/* Reads a small file whole into buf (NUL-terminated); 0 or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno ? -errno : -EIO;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno ? errno : EIO;
            close(fd);
            return -e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return 0;
}

int schedstat_parse_sched(const char *text, SchedThread *out)
{
    unsigned long long on, wait, slices;

    if (sscanf(text, "%llu %llu %llu", &on, &wait, &slices) != 3)
        return -1;
    out->on_cpu_ns = on;
    out->wait_ns = wait;
    out->timeslices = slices;
    out->have_sched = 1;
    return 0;
}

/* The number after "key:" on its own line, or -1 when absent. */
static int status_field(const char *text, const char *key, uint64_t *out)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
            char *end;
            unsigned long long v = strtoull(p + klen + 1, &end, 10);
            if (end == p + klen + 1)
                return -1;
            *out = v;
            return 0;
        }
    }
    return -1;
}

int schedstat_parse_status(const char *text, SchedThread *out)
{
    uint64_t vol, invol;

    if (status_field(text, "voluntary_ctxt_switches", &vol) != 0 ||
        status_field(text, "nonvoluntary_ctxt_switches", &invol) != 0)
        return -1;
    out->vol_cs = vol;
    out->invol_cs = invol;
    out->have_status = 1;
    return 0;
}

int schedstat_read(int tid, SchedThread *out, char *err, size_t errlen)
{
    char path[64], buf[4096] = "";
    int r1, r2;

    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    r1 = read_small(path, buf, sizeof buf);
    if (r1 == 0 && schedstat_parse_sched(buf, out) != 0)
        r1 = -EINVAL;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
    r2 = read_small(path, buf, sizeof buf);
    if (r2 == 0 && schedstat_parse_status(buf, out) != 0)
        r2 = -EINVAL;
    if (r1 != 0 && r2 != 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(-r2));
    return 0;
}

static void add_field(uint64_t *acc, uint64_t later, uint64_t earlier)
{
    if (later > earlier)
        *acc += later - earlier;
}

void schedstat_add_delta(SchedThread *acc, const SchedThread *later, const SchedThread *earlier)
{
    if (later->have_sched && earlier->have_sched) {
        add_field(&acc->on_cpu_ns, later->on_cpu_ns, earlier->on_cpu_ns);
        add_field(&acc->wait_ns, later->wait_ns, earlier->wait_ns);
        add_field(&acc->timeslices, later->timeslices, earlier->timeslices);
        acc->have_sched = 1;
    }
    if (later->have_status && earlier->have_status) {
        add_field(&acc->vol_cs, later->vol_cs, earlier->vol_cs);
        add_field(&acc->invol_cs, later->invol_cs, earlier->invol_cs);
        acc->have_status = 1;
    }
}

int schedstat_oversubscribed(double wait_ns, double wall_ns)
{
    return wall_ns >= CTR_OVERSUB_MIN_WALL * 1e9 && wait_ns > CTR_OVERSUB_WAIT * wall_ns;
}

void schedstat_summarise(CounterSched *out, const SchedThread *sum, int threads, int live,
                         double thread_wall, double span)
{
    memset(out, 0, sizeof *out);
    out->threads = threads;
    out->live = live;
    out->thread_wall = thread_wall;
    out->span = span;
    if (threads == 0) {
        snprintf(out->reason, sizeof out->reason, "no thread of this role has run");
        return;
    }
    if (!sum->have_sched && !sum->have_status) {
        snprintf(out->reason, sizeof out->reason,
                 "/proc/self/task/<tid>/schedstat and status could not be read");
        return;
    }
    out->available = 1;
    out->have_wait = sum->have_sched;
    if (!sum->have_sched)
        snprintf(out->reason, sizeof out->reason,
                 "no /proc/<tid>/schedstat (kernel without CONFIG_SCHED_INFO): run-queue wait unknown");
    out->on_cpu = (double)sum->on_cpu_ns * 1e-9;
    out->wait = (double)sum->wait_ns * 1e-9;
    out->timeslices = sum->timeslices;
    out->vol_cs = sum->vol_cs;
    out->invol_cs = sum->invol_cs;
    out->wait_share = thread_wall > 0 ? out->wait / thread_wall : 0.0;
    out->cs_per_s = span > 0 ? (double)(sum->vol_cs + sum->invol_cs) / span : 0.0;
    out->oversubscribed = sum->have_sched &&
                          schedstat_oversubscribed((double)sum->wait_ns, thread_wall * 1e9);
}
