/*
 * exec.h: `cnntop exec -- CMD`: any command's process tree profiled by
 * role (exec.c), and its summary (exec_summary.c).
 */
#ifndef CNNTOP_EXEC_H
#define CNNTOP_EXEC_H

#include <stdio.h>
#include <sys/resource.h>

#include "cnntop/hookfeed.h"
#include "cnntop/pattern.h"
#include "cnntop/proctree.h"
#include "cnntop/record.h"
#include "cnntop/verdict.h"
#include "common/options.h"

/* The Python hook's pipe and what came through it (exec_hook.c). */
typedef struct ExecHook {
    int on;                /* 1: the hook is offered to the command */
    int fd, wfd;           /* the pipe's read end (cnntop), write end (until forked) */
    HookFeed feed;
} ExecHook;

/* The most bytes of a record kept for reading its figure: a match that
 * starts further back than this in a longer record gives none. */
#define EXEC_KEEP_MAX ((size_t)1 << 20)

/* One stream's current record (what came since its last \n or \r), as
 * --progress matches it (exec_progress.c). */
typedef struct ExecRecord {
    PatternScan *scan;     /* the match over the record so far */
    int done;              /* 1: the scan's result is decided */
    char *buf;             /* the record's bytes from offset base on */
    size_t base, n, cap;
} ExecRecord;

/* Where captured output goes: n bytes the command wrote on stream (0
 * stdout, 1 stderr), as they came. */
typedef void (*ExecOutputFn)(void *u, int stream, const char *buf, size_t n);

/* --progress REGEX: the command's output, copied through (or to sink) and
 * matched (exec_progress.c). */
typedef struct ExecProgress {
    int on;                /* 1: --progress was given */
    ExecOutputFn sink;     /* NULL: copied to cnntop's stdout/stderr */
    void *sink_u;
    const char *regex;     /* as given (into argv) */
    Pattern *re;
    int rd[2], wr[2];      /* pipes for the command's stdout [0] and stderr [1] */
    ExecRecord rec[2];     /* their current records */
    size_t len[2];         /* bytes of each one's current record */
    long matches;          /* records that matched with a number */
    double last, sum, min, max;
} ExecProgress;

/* How the command ended, for the summary. */
typedef struct ExecResult {
    char **argv;           /* the command as run */
    double wall;           /* s from its exec to its exit */
    int status;            /* exit status when it exited */
    int signal;            /* the signal that killed it, 0: it exited */
    struct rusage rusage;  /* the root's own (wait4) */
    const ExecHook *hook;  /* the hook's figures, or NULL */
    const ExecProgress *progress; /* --progress's figures, or NULL */
} ExecResult;

/*
 * Offers the hook to the command about to be forked (enabled: not
 * --no-hook): finds it, makes its pipe, sets PYTHONPATH, CNNTOP_HOOK_FD and
 * CNNTOP_HOOK_INO in this process's environment.  Always returns 0; when
 * the hook cannot be offered, note says why (else "") and h->on is 0.
 */
int exec_hook_open(ExecHook *h, int enabled, char *note, size_t len);

/* After the fork: closes cnntop's copy of the write end. */
void exec_hook_forked(ExecHook *h);

/* Reads whatever the hook has written, without waiting, and gives
 * reported workers their role in t. */
void exec_hook_drain(ExecHook *h, ProcTree *t);

/* Closes the pipe.  Idempotent. */
void exec_hook_close(ExecHook *h);

/* Compiles regex (NULL: no --progress, p->on 0) with cnntop/pattern.h
 * and, with a regex or capture 1, makes the pipes for the command's output
 * (p->rd[0] >= 0).  0, or -1 with a one-line err ("--progress: 'x(': '('
 * without its ')'"). */
int exec_progress_open(ExecProgress *p, const char *regex, int capture, char *err, size_t len);

/* After the fork: closes cnntop's copies of the command's ends. */
void exec_progress_forked(ExecProgress *p);

/* Copies what the command has written to cnntop's stdout/stderr (or
 * gives it to p->sink) and matches its records; never waits.  A stream whose
 * copy finds no reader (EPIPE) is closed (p->rd[i] -1), so that the
 * command's next write to it fails as it would have without cnntop. */
void exec_progress_drain(ExecProgress *p);

/* Stops reading the command's output: closes the read ends (a last line
 * without its newline is matched); the figures stay. */
void exec_progress_stop(ExecProgress *p);

/* Closes the pipes and frees the pattern.  Idempotent. */
void exec_progress_close(ExecProgress *p);

/* One command to profile: what `exec` and `sweep --cmd` run. */
typedef struct ExecRun {
    char **argv;           /* NULL-terminated */
    const char *events;    /* -e LIST, NULL: the defaults */
    int hook;              /* 1: offer the Python hook */
    const char *progress;  /* --progress REGEX or NULL */
    int quiet;             /* 1: the command's stdout goes to /dev/null (sweep) */
    ExecOutputFn output;   /* non-NULL: the command's stdout and stderr are piped
                            * to it (stdin /dev/null), never to cnntop's own */
    void *output_u;
} ExecRun;

/* One command being followed: what exec_session_step() polls.  The
 * caller owns it (it is large: put it in static storage or on a roomy
 * stack); its fields are read-only outside exec.c. */
typedef struct ExecSession {
    ProcTree *tree;
    ExecHook hook;
    ExecProgress prog;
    ExecResult res;        /* res.wall, status, signal once it ended */
    char note[512];        /* why the hook is not offered, or "" */
    int pid;
    int running;           /* 1: started and not yet reaped */
    int ran;               /* 1: it was exec'ed and followed to its end */
    int rc;                /* its exit code once it ended (128+N: signal N) */
    double t0;             /* CLOCK_MONOTONIC s at its release */
    double elapsed;        /* s from its release to the last step */
    int draining;          /* 1: it ended but its output is still open, read on */
    int drain_cut;         /* 1: the reading stopped with the output still open */
    int drain_stops;       /* stop signals caught when the drain began */
    double drain_end;      /* CLOCK_MONOTONIC s the drain stops at */
    char drain_note[160];  /* the last thing to say about the drain, or "" */
    int drain_said;        /* 1: drain_note has been said */
    FILE *say;             /* where the notes go (stderr headless), NULL: kept */
} ExecSession;

/*
 * Opens the tree, the hook and the output pipes, forks x->argv and lets it
 * run (x must outlive the session).  Returns 0 with s->running, or
 * cnntop's exit code after a one-line error on stderr: 2 for a bad -e
 * list or --progress pattern, 127 or 126 when the command could not be
 * run (exec_why_print()); nothing then needs closing.  From here on
 * SIGTERM and SIGHUP to cnntop are passed on to the command (the
 * dashboard's terminal handlers replace this once they are installed),
 * except one cnntop was started ignoring.
 */
int exec_session_start(ExecSession *s, const ExecRun *x);

/*
 * One sample: polls the tree, then waits up to ms for the hook, the output
 * or wake_fd (-1: none) to have something.  When the command has exited
 * it is polled a last time and reaped (s->running 0; s->rc, s->res hold
 * how it ended).  Then, while a process it left keeps its output pipes
 * open, its output is read on (s->draining) for a few seconds at most, or
 * until a stop signal: the notes about it go to s->say.  Returns 1 while
 * there is more to do, 0 at the end.
 */
int exec_session_step(ExecSession *s, int ms, int wake_fd);

/* Where the session's notes go from now on (NULL: kept for
 * exec_session_note()); the current note, if any, is said there at once
 * (again if it was taken already).  Headless: stderr from the start. */
void exec_session_notes_to(ExecSession *s, FILE *f);

/* The note not yet said (the dashboard shows it), marked said; NULL: none. */
const char *exec_session_note(ExecSession *s);

/* The first stop signal (SIGTERM, SIGHUP, SIGINT) the session's own
 * handler caught, 0: none. */
int exec_session_stop_signal(void);

/* Says on f why the command argv0 could not be exec'ed (errno e) the way
 * a shell does: "cnntop: exec: ./x.sh: bad interpreter /usr/bin/nope: No
 * such file or directory" for a script whose #! interpreter is missing,
 * "Is a directory", the ELF program interpreter, else strerror (exec_why.c). */
void exec_why_print(FILE *f, const char *argv0, int e);

/* Sends sig to the command while it runs. */
void exec_session_kill(ExecSession *s, int sig);

/* Seconds since the command started (its wall time once it ended). */
double exec_session_elapsed(const ExecSession *s);

/*
 * After the last step: prints the summary on summary (NULL: none), fills
 * rec (NULL: none) as exec_record_fill() does, closes the session.
 * Returns the command's exit code.
 */
int exec_session_finish(ExecSession *s, RunRecord *rec, int argc, char **argv, FILE *summary);

/* Closes what the session holds.  Idempotent. */
void exec_session_close(ExecSession *s);

/*
 * Runs x->argv under the profiler; prints the summary on summary (NULL:
 * none) and, with rec (NULL: none; record_init()ed), fills it as
 * exec_record_fill() does (cnntop's own command line argc/argv) once the
 * command ran (rec->have_exec 1).  Returns the command's exit status
 * (128+N when a signal killed it), 127 or 126 when it could not be run, 2
 * for a bad -e list or --progress pattern.
 */
int exec_run(const ExecRun *x, RunRecord *rec, int argc, char **argv, FILE *summary);

/* `cnntop exec`: exec_run() with the summary on stdout and, with
 * --export FILE, the record written; returns what exec_run() did (1 when
 * only the export failed). */
int exec_main(const Options *o, int argc, char **argv);

/* With --export FILE and rec filled (rec->have_exec): writes it
 * atomically and says so on stderr; frees rec either way.  Returns rc, or
 * 1 when only the export failed. */
int exec_export_write(const Options *o, RunRecord *rec, int rc);

/* The record of a finished exec run (exec_record.c): cnntop's command line
 * argc/argv, the command profiled and how it ended, peak RSS, the counters
 * per process role, the hook's figures when it reported; config, data and
 * train marked absent.  0, or -1 out of memory. */
int exec_record_fill(RunRecord *r, ProcTree *t, const ExecResult *res, int argc, char **argv);

/*
 * Adds run, one more measured run of into's configuration (sweep --cmd),
 * to into: the counters summed role by role and event by event (one that
 * was not counted in some run is not counted, with the reason), batches
 * summed, wall time, images/s, data wait and run-queue wait averaged, peak
 * RSS and the process counts their largest, how it ended the last run's;
 * exec.runs counts them.  The repeats are the caller's.  0, or -1 out of
 * memory.
 */
int exec_record_merge(RunRecord *into, const RunRecord *run);

/* An exec record as `cnntop report` shows it: the command, how it ended,
 * wall time, the hook's figures (or why not), peak RSS, the counters per
 * role.  what: "Report". */
void exec_record_print(FILE *f, const RunRecord *r, const char *what);

/*
 * The verdict's figures for an exec run (exec_summary.c): from the tree and
 * the hook's figures fig (hookfeed_figures(); NULL: none), or from its
 * record; the knobs named are a PyTorch script's when the hook saw torch,
 * else none (a command cnntop knows no option of).  data_wait_share is NAN
 * without the hook's figures.
 */
void exec_verdict_of(ProcTree *t, const HookFigures *fig, VerdictInput *in);
void exec_verdict_of_record(const RunRecord *r, VerdictInput *in);

/* The "Bound:" (when the data wait is known) and "Verdict:" lines. */
void exec_verdict_print(FILE *f, const VerdictInput *in);

/* The summary: the command, how it ended, the tree's processes by role,
 * CPU, page faults, peak RSS, the verdict, a counters block per role and
 * the process table.  Reads the tree; writes only to f. */
void exec_summary_print(FILE *f, ProcTree *t, const ExecResult *res);

/* The command as a shell would read it back: words with blanks or quotes
 * in single quotes (exec_summary.c). */
void exec_command_print(FILE *f, char **argv);

/* The verdict over the whole tree, verdict_judge's rules (exec_summary.c):
 * exec_verdict_of()'s figures (its advice naming the command's knobs),
 * judged; loader-bound from the hook's data wait (fig, hookfeed_figures();
 * in->data_wait_share 0 without it),
 * oversubscribed when busy threads outnumber the cores or wait above
 * CTR_OVERSUB_WAIT (the processes' schedstat; in->run_queue_wait NaN when
 * unknown).  Reads the tree only. */
void exec_verdict(ProcTree *t, const HookFigures *fig, VerdictInput *in, Verdict *v);

#endif
