/*
 * procfs.c: small readers of /proc/<pid> for another process (procfs.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof/procfs.h"

long procfs_read(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;

    if (fd < 0)
        return -errno;
    for (;;) {
        ssize_t n = got + 1 < len ? read(fd, buf + got, len - 1 - got) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            long e = -errno;
            close(fd);
            return e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return (long)got;
}

int procfs_parse_stat(const char *text, ProcStat *out)
{
    const char *p = strrchr(text, ')');
    unsigned long long minflt, majflt, utime, stime;
    int ppid;
    char state;

    memset(out, 0, sizeof *out);
    /* After "pid (comm)": state ppid pgrp session tty tpgid flags minflt
     * cminflt majflt cmajflt utime stime. */
    if (!p || sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %llu %*u %llu %*u %llu %llu", &state,
                     &ppid, &minflt, &majflt, &utime, &stime) != 6)
        return -1;
    out->state = state;
    out->ppid = ppid;
    out->minflt = minflt;
    out->majflt = majflt;
    out->utime = utime;
    out->stime = stime;
    return 0;
}

int procfs_stat(int pid, ProcStat *out)
{
    char path[64], buf[1024];

    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    long n = procfs_read(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return procfs_parse_stat(buf, out) == 0 ? 0 : -EINVAL;
}

long procfs_status_field(int pid, const char *key)
{
    char path[64], buf[4096];
    size_t klen = strlen(key);

    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (procfs_read(path, buf, sizeof buf) < 0)
        return -1;
    for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (!strncmp(line, key, klen) && line[klen] == ':')
            return strtol(line + klen + 1, NULL, 10);
    return -1;
}

int procfs_thread_sched(int pid, int tid, SchedThread *out)
{
    char path[96], buf[4096];
    long r1, r2;

    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
    r1 = procfs_read(path, buf, sizeof buf);
    if (r1 >= 0 && schedstat_parse_sched(buf, out) != 0)
        r1 = -EINVAL;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
    r2 = procfs_read(path, buf, sizeof buf);
    if (r2 >= 0 && schedstat_parse_status(buf, out) != 0)
        r2 = -EINVAL;
    return r1 < 0 && r2 < 0 ? (int)r2 : 0;
}

typedef struct SelfSched {
    SchedThread sum;
    int threads;
} SelfSched;

static void self_thread(void *ud, int tid)
{
    SelfSched *s = ud;
    SchedThread t, zero;

    memset(&zero, 0, sizeof zero);
    zero.have_sched = zero.have_status = 1; /* counts from nothing */
    if (procfs_thread_sched(getpid(), tid, &t) == 0 && t.have_sched) {
        schedstat_add_delta(&s->sum, &t, &zero);
        s->sum.have_sched = 1;
        s->threads++;
    }
}

int procfs_self_sched(SchedThread *sum, int *threads)
{
    SelfSched s;
    int rc;

    memset(&s, 0, sizeof s);
    rc = procfs_each_id("/proc/self/task", self_thread, &s);
    *sum = s.sum;
    *threads = s.threads;
    return rc < 0 ? rc : 0;
}

long procfs_cmdline(int pid, char *buf, size_t len)
{
    char path[64];

    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    return procfs_read(path, buf, len);
}

int procfs_each_id(const char *path, void (*fn)(void *ud, int id), void *ud)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    if (!d)
        return -errno;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        fn(ud, atoi(e->d_name));
        n++;
    }
    closedir(d);
    return n;
}
