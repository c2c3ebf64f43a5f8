/*
 * exec.h: `cnntop exec -- CMD`: any command's process tree profiled by
 * role (exec.c), and its summary (exec_summary.c).
 */
#ifndef CNNTOP_EXEC_H
#define CNNTOP_EXEC_H

#include <stdio.h>
#include <sys/resource.h>

#include "cnntop/proctree.h"
#include "common/options.h"

/* How the command ended, for the summary. */
typedef struct ExecResult {
    char **argv;           /* the command as run */
    double wall;           /* s from its exec to its exit */
    int status;            /* exit status when it exited */
    int signal;            /* the signal that killed it, 0: it exited */
    struct rusage rusage;  /* the root's own (wait4) */
} ExecResult;

/* Runs o->exec_argv under the profiler, prints the summary on stdout;
 * returns the command's exit status (128+N when a signal killed it), 127
 * or 126 when it could not be run, 2 for a bad -e list. */
int exec_main(const Options *o);

/* The summary: the command, how it ended, the tree's processes by role,
 * CPU, page faults, peak RSS, the verdict, a counters block per role and
 * the process table.  Reads the tree; writes only to f. */
void exec_summary_print(FILE *f, ProcTree *t, const ExecResult *res);

#endif
