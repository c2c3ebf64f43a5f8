/*
 * exec.h: `cnntop exec -- CMD`: any command's process tree profiled by
 * role (exec.c), and its summary (exec_summary.c).
 */
#ifndef CNNTOP_EXEC_H
#define CNNTOP_EXEC_H

#include <stdio.h>
#include <sys/resource.h>

#include "cnntop/hookfeed.h"
#include "cnntop/proctree.h"
#include "common/options.h"

/* The Python hook's pipe and what came through it (exec_hook.c). */
typedef struct ExecHook {
    int on;                /* 1: the hook is offered to the command */
    int fd, wfd;           /* the pipe's read end (cnntop), write end (until forked) */
    HookFeed feed;
} ExecHook;

/* How the command ended, for the summary. */
typedef struct ExecResult {
    char **argv;           /* the command as run */
    double wall;           /* s from its exec to its exit */
    int status;            /* exit status when it exited */
    int signal;            /* the signal that killed it, 0: it exited */
    struct rusage rusage;  /* the root's own (wait4) */
    const ExecHook *hook;  /* the hook's figures, or NULL */
} ExecResult;

/*
 * Offers the hook to the command about to be forked (enabled: not
 * --no-hook): finds it, makes its pipe, sets PYTHONPATH and CNNTOP_HOOK_FD
 * in this process's environment.  Always returns 0; when the hook cannot
 * be offered, note says why (else "") and h->on is 0.
 */
int exec_hook_open(ExecHook *h, int enabled, char *note, size_t len);

/* After the fork: closes cnntop's copy of the write end. */
void exec_hook_forked(ExecHook *h);

/* Waits up to ms for the hook's lines (sleeps when there is no hook),
 * feeds them, gives reported workers their role in t. */
void exec_hook_wait(ExecHook *h, ProcTree *t, int ms);

/* Reads whatever the hook has written, without waiting. */
void exec_hook_drain(ExecHook *h, ProcTree *t);

/* Closes the pipe.  Idempotent. */
void exec_hook_close(ExecHook *h);

/* Runs o->exec_argv under the profiler, prints the summary on stdout;
 * returns the command's exit status (128+N when a signal killed it), 127
 * or 126 when it could not be run, 2 for a bad -e list. */
int exec_main(const Options *o);

/* The summary: the command, how it ended, the tree's processes by role,
 * CPU, page faults, peak RSS, the verdict, a counters block per role and
 * the process table.  Reads the tree; writes only to f. */
void exec_summary_print(FILE *f, ProcTree *t, const ExecResult *res);

#endif
