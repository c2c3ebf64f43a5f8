/*
 * procfs.h: what /proc says about another process and its threads, for
 * following a command's process tree (proctree.c).
 *
 * Every reader opens, reads and closes one small file (the kernel builds
 * its text from memory; nothing blocks on a disk) and fails with -errno
 * when the process or thread has gone (ENOENT, ESRCH).
 */
#ifndef CNNTOP_PROCFS_H
#define CNNTOP_PROCFS_H

#include <stddef.h>
#include <stdint.h>

#include "prof/schedstat.h"

/* The fields of /proc/<pid>/stat that cnntop uses. */
typedef struct ProcStat {
    int ppid;
    char state;            /* 'R', 'S', 'Z' (a zombie: exited, not reaped) ... */
    uint64_t minflt, majflt;
    uint64_t utime, stime; /* clock ticks (sysconf(_SC_CLK_TCK)), all threads */
} ProcStat;

/* Reads the whole of a small file into buf (NUL-terminated, cut at
 * len - 1); the number of bytes, or -errno. */
long procfs_read(const char *path, char *buf, size_t len);

/* Parses the text of /proc/<pid>/stat (the command name in parentheses may
 * hold spaces and parentheses: the last ')' ends it); 0 or -1. */
int procfs_parse_stat(const char *text, ProcStat *out);

/* /proc/<pid>/stat; 0 or -errno (-EINVAL when it does not parse). */
int procfs_stat(int pid, ProcStat *out);

/* A "Key:   123 kB" field of /proc/<pid>/status, in its units; -1 when the
 * file or the field is missing (a zombie has no VmRSS). */
long procfs_status_field(int pid, const char *key);

/* Thread tid of process pid: schedstat and the switch counts, as
 * schedstat_read() gives them for the calling process.  0 or -errno. */
int procfs_thread_sched(int pid, int tid, SchedThread *out);

/* This process's threads' schedstat summed (the threads /proc lists now:
 * one that ended took its figures with it) into *sum, their number into
 * *threads.  0 or -errno. */
int procfs_self_sched(SchedThread *sum, int *threads);

/* /proc/<pid>/cmdline into buf (arguments separated by NULs); its length,
 * or -errno.  A zombie's is empty. */
long procfs_cmdline(int pid, char *buf, size_t len);

/* Calls fn(ud, id) for each numeric entry of directory `path` ("/proc",
 * "/proc/<pid>/task"); returns how many, or -errno. */
int procfs_each_id(const char *path, void (*fn)(void *ud, int id), void *ud);

#endif
