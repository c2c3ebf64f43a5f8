/*
 * cnntop/exec.h: one command followed and counted, by process role: the
 * exec session (src/exec/) that `cnntop exec`, its dashboard and `sweep
 * --cmd` drive.
 *
 * The session forks the command, holds it at a gate until its counters
 * are open, releases it, polls its process tree (cnntop/proctree.h), reads
 * the Python hook's pipe (cnntop/hookfeed.h) and, with --progress or a
 * capture, the command's output, and reaps it.  It prints nothing: what a
 * front end says comes from it as values (the start's error and exit code,
 * notes, the result, the record).  Signal handlers are the front end's:
 * they call exec_session_signal().
 */
#ifndef CNNTOP_EXEC_H
#define CNNTOP_EXEC_H

#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>

#include "cnntop/hookfeed.h"
#include "cnntop/pattern.h"
#include "cnntop/proctree.h"
#include "cnntop/record.h"
#include "cnntop/verdict.h"

/* The exit codes a shell gives a command that could not be run: what
 * exec_session_start() leaves in ExecSession.rc then. */
#define EXEC_RC_NOT_FOUND 127  /* execvp: ENOENT */
#define EXEC_RC_NOT_RUN 126    /* any other reason */

/* The most variables the hook sets for the command. */
#define EXEC_HOOK_ENV_MAX 4

/* The Python hook's pipe and what came through it (src/exec/hook.c). */
typedef struct ExecHook {
    int on;                /* 1: the hook is offered to the command */
    int fd, wfd;           /* the pipe's read end (cnntop), write end (until forked) */
    char *env[EXEC_HOOK_ENV_MAX]; /* "NAME=VALUE" for the command's environment alone */
    int nenv;
    HookFeed feed;
} ExecHook;

/* The most bytes of a record kept for reading its figure: a match that
 * starts further back than this in a longer record gives none. */
#define EXEC_KEEP_MAX ((size_t)1 << 20)

/* One stream's current record (what came since its last \n or \r), as
 * --progress matches it (src/exec/progress.c). */
typedef struct ExecRecord {
    PatternScan *scan;     /* the match over the record so far */
    int done;              /* 1: the scan's result is decided */
    char *buf;             /* the record's bytes from offset base on */
    size_t base, n, cap;
} ExecRecord;

/* Where captured output goes: n bytes the command wrote on stream (0
 * stdout, 1 stderr), as they came. */
typedef void (*ExecOutputFn)(void *u, int stream, const char *buf, size_t n);

/* --progress REGEX: the command's output, passed through (or to sink) and
 * matched (src/exec/progress.c). */
typedef struct ExecProgress {
    int on;                /* 1: --progress was given */
    ExecOutputFn sink;     /* NULL: passed through to descriptors 1 and 2 */
    void *sink_u;
    const char *regex;     /* as given (into argv) */
    Pattern *re;
    int rd[2], wr[2];      /* pipes for the command's stdout [0] and stderr [1] */
    ExecRecord rec[2];     /* their current records */
    size_t len[2];         /* bytes of each one's current record */
    long matches;          /* records that matched with a number */
    double last, sum, min, max;
} ExecProgress;

/* How the command ended. */
typedef struct ExecResult {
    char **argv;           /* the command as run */
    double wall;           /* s from its exec to its exit */
    int status;            /* exit status when it exited */
    int signal;            /* the signal that killed it, 0: it exited */
    struct rusage rusage;  /* the root's own (wait4) */
    const ExecHook *hook;  /* the hook's figures, or NULL */
    const ExecProgress *progress; /* --progress's figures, or NULL */
} ExecResult;

/* One command to profile: what `exec` and `sweep --cmd` run. */
#define EXEC_LAYERS_DEFAULT "5:20" /* optimizer steps 5..24 */

typedef struct ExecRun {
    char **argv;           /* NULL-terminated */
    const char *events;    /* -e LIST, NULL: the defaults */
    int hook;              /* 1: offer the Python hook */
    const char *progress;  /* --progress REGEX or NULL */
    const char *layers;    /* the hook's layer window, "FIRST:STEPS" or "0" (off); NULL or
                            * "": EXEC_LAYERS_DEFAULT */
    int quiet;             /* 1: the command's stdout goes to /dev/null (sweep) */
    ExecOutputFn output;   /* non-NULL: the command's stdout and stderr are piped
                            * to it (stdin /dev/null), never to cnntop's own */
    void *output_u;
    void (*child_reset)(void); /* NULL, or called in the forked child before
                                * its exec (async-signal-safe only): the
                                * front end's signals back to cnntop's start */
} ExecRun;

/* One command being followed.  The caller owns it (it is large: static
 * storage or a roomy stack); its fields are read-only outside src/exec. */
typedef struct ExecSession {
    ProcTree *tree;
    ExecHook hook;
    ExecProgress prog;
    ExecResult res;        /* res.wall, status, signal once it ended */
    char note[512];        /* why the hook is not offered, or "" */
    char watch_note[256];  /* why the command's counters are not open, or "" */
    int pid;
    int running;           /* 1: started and not yet reaped */
    int ran;               /* 1: it was exec'ed and followed to its end */
    int rc;                /* its exit code once it ended (128+N: signal N; 127
                            * or 126 when it could not be run) */
    double t0;             /* CLOCK_MONOTONIC s at its release */
    double elapsed;        /* s from its release to the last step */
    int draining;          /* 1: it ended but its output is still open, read on */
    int drain_cut;         /* 1: the reading stopped with the output still open */
    int drain_stops;       /* stop signals caught when the drain began */
    double drain_end;      /* CLOCK_MONOTONIC s the drain stops at */
    char drain_note[160];  /* the last thing to say about the drain, or "" */
    int drain_said;        /* 1: drain_note has been taken */
    volatile sig_atomic_t kill_pid;   /* the command while it may be signalled, 0: none */
    volatile sig_atomic_t stop_sig;   /* the first stop signal given, 0: none */
    volatile sig_atomic_t stop_count; /* stop signals given */
} ExecSession;

/* Zeroes s; before the front end's signal handlers may see it. */
void exec_session_init(ExecSession *s);

/*
 * Opens the tree, the hook and the output pipes, forks x->argv and lets it
 * run (x must outlive the session; s from exec_session_init()).  Returns 0
 * with s->running (s->note, s->watch_note: what the front end may say), or
 * a negative CN_E* with a one-line message in err (nothing then needs
 * closing): -CN_EINVAL for a bad -e list or --progress pattern ("-e: ...",
 * "--progress: ..."); -CN_EIO when a pipe or the fork failed, or when the
 * command could not be run: then s->rc is EXEC_RC_NOT_FOUND or
 * EXEC_RC_NOT_RUN and err says why as a shell does (exec_why()).  Stop
 * signals are blocked across the fork, so a handler that calls
 * exec_session_signal() sees the command's pid from the first moment.
 */
int exec_session_start(ExecSession *s, const ExecRun *x, char *err, size_t len);

/*
 * One sample: polls the tree, then waits up to ms for the hook, the output
 * or wake_fd (-1: none) to have something.  When the command has exited
 * it is polled a last time and reaped (s->running 0; s->rc, s->res hold
 * how it ended).  Then, while a process it left keeps its output pipes
 * open, its output is read on (s->draining) for a few seconds at most, or
 * until a stop signal; exec_session_note() says so.  Returns 1 while there
 * is more to do, 0 at the end.
 */
int exec_session_step(ExecSession *s, int ms, int wake_fd);

/* The drain's note not yet taken, marked taken; NULL: none. */
const char *exec_session_note(ExecSession *s);

/* A stop signal cnntop caught (SIGTERM, SIGHUP, SIGINT), from the front
 * end's handler: counted (it ends a drain) and, except SIGINT (the
 * terminal's process group has it already), passed on to the command.
 * Async-signal-safe. */
void exec_session_signal(ExecSession *s, int sig);

/* The first stop signal given to exec_session_signal(), 0: none. */
int exec_session_stop_signal(const ExecSession *s);

/* Sends sig to the command while it runs. */
void exec_session_kill(ExecSession *s, int sig);

/* Seconds since the command started (its wall time once it ended). */
double exec_session_elapsed(const ExecSession *s);

/* After the last step: with the command run (s->ran), fills rec as
 * exec_record_fill() does.  0, -CN_ESTATE when it never ran, -CN_ENOMEM. */
int exec_session_record(ExecSession *s, RunRecord *rec, int argc, char **argv);

/* Closes what the session holds.  Idempotent. */
void exec_session_close(ExecSession *s);

/* Why the command argv0 could not be exec'ed (errno e), into buf as a
 * shell says it: "./x.sh: bad interpreter /usr/bin/nope: No such file or
 * directory" for a script whose #! interpreter is missing, "Is a
 * directory", the ELF program interpreter, else strerror (src/exec/why.c). */
void exec_why(const char *argv0, int e, char *buf, size_t len);

/* Why a command that ended with exit status `status` (-1: killed by a
 * signal) died, when the uncaught Python exception the hook saw (`error`,
 * RecordExec.py_error: "TYPE at FILE:FUNCTION") is a known failure: one
 * line with the workaround, or NULL.  Known: Debian 12's torchrun (torch
 * 1.13 under Python 3.11) dying at start in to_map of
 * torch/distributed/elastic/multiprocessing/api.py. */
const char *exec_why_died(const char *error, int status);

/* The record of a finished exec run (src/exec/fill.c): cnntop's command
 * line argc/argv, the command profiled and how it ended, peak RSS, the
 * counters and scheduler figures per process role, each process's row,
 * CPU and page faults, --progress's figures, the hook's window and first
 * rejection when it reported: all that exec's summary prints, which reads
 * the record alone; config, data and train marked absent.  0, or
 * -CN_ENOMEM. */
int exec_record_fill(RunRecord *r, ProcTree *t, const ExecResult *res, int argc, char **argv);

/*
 * Adds run, one more measured run of into's configuration (sweep --cmd),
 * to into: the counters summed role by role and event by event (one that
 * was not counted in some run is not counted, with the reason), batches
 * summed, wall time, images/s, data wait and run-queue wait averaged, peak
 * RSS and the process counts their largest, how it ended the last run's;
 * CPU, page faults, the hook's window and each role's processes, time and
 * context switches summed (the process table and the other scheduler
 * figures stay the first run's); a data-parallel job's ranks merged rank
 * by rank (images/s and data wait averaged, batches, window and
 * collectives summed: the job's images/s stays their sum) and the layer
 * window's steps and rows summed (the rates of the sums), so that neither
 * stays the first run's; exec.runs counts them.  0, or -CN_ENOMEM.
 */
int exec_record_merge(RunRecord *into, const RunRecord *run);

/*
 * The verdict's figures for an exec run (src/exec/verdict.c): from the
 * tree and the hook's figures fig (hookfeed_figures(); NULL: none); from
 * a record it is record_verdict_input() (cnntop/figures.h).  The knobs named are a PyTorch script's when the hook
 * saw torch, else none.  data_wait_share is NAN without the hook's figures.
 */
void exec_verdict_of(ProcTree *t, const HookFigures *fig, VerdictInput *in);

/* The verdict over the whole tree, verdict_judge's rules: exec_verdict_of()'s
 * figures, judged; loader-bound from the hook's data wait (without it the
 * share stays NAN and the verdict's bound says n/a with its reason),
 * oversubscribed when busy threads outnumber the cores or wait above
 * CTR_OVERSUB_WAIT.  Reads the tree only. */
void exec_verdict(ProcTree *t, const HookFigures *fig, VerdictInput *in, Verdict *v);

#endif
