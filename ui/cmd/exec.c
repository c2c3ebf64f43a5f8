/*
 * exec.c: `cnntop exec [options] -- CMD [ARGS...]`, headless: drives the
 * exec session (cnntop/exec.h), which runs the command and profiles its
 * whole process tree by role, and says what it finds: the notes and a
 * progress line on stderr while it runs, then the run's record, its
 * summary on stdout (exec_summary.c: from the record alone, as `report`
 * prints it again) and, with --export, the record written.
 *
 * The exit status is the command's; a command killed by a signal gives
 * 128+N and the summary says which signal; one that could not be run, 127
 * or 126 after a one-line error, as shells say it.  SIGTERM and SIGHUP sent
 * to cnntop are passed on to the command by the session
 * (exec_session_signal(), from the handlers installed here); SIGINT is
 * not, because Ctrl-C on a terminal reaches the command through its
 * process group already.  cnntop waits for the command to end either way
 * and still prints the summary.  A signal cnntop was started ignoring
 * (nohup, a background job) stays ignored, in cnntop and in the command
 * (common/signals.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/exec.h"
#include "cmd/run.h"
#include "cnntop/err.h"
#include "common/exit.h"
#include "common/signals.h"

#define EXEC_POLL_MS 50         /* between samples of the tree */
#define EXEC_PROGRESS_S 5.0     /* between progress lines on stderr */

/* The session the stop signals go to. */
static ExecSession *volatile signalled;

static void on_stop(int sig)
{
    exec_session_signal(signalled, sig);
}

void exec_signals_install(ExecSession *s)
{
    signalled = s;
    signals_install(on_stop);
}

/* The progress line: a plain line every EXEC_PROGRESS_S seconds. */
static void progress(ProcTree *t, double elapsed, double *last)
{
    ProcInfo p[PROC_MAX_PROCS];
    int n = proctree_procs(t, p, PROC_MAX_PROCS), live = 0;
    double cpu = 0.0;

    if (elapsed - *last < EXEC_PROGRESS_S)
        return;
    *last = elapsed;
    for (int k = 0; k < n && k < PROC_MAX_PROCS; k++) {
        live += p[k].live;
        cpu += p[k].cpu;
    }
    fprintf(stderr, "cnntop: exec: %.0f s  %d process%s running  %.1f CPU s\n", elapsed, live,
            live == 1 ? "" : "es", cpu);
}

int exec_start(ExecSession *s, ExecRun *x)
{
    char err[512];

    exec_session_init(s);
    x->child_reset = signals_child_reset;
    /* On every path, the dashboard's too until its terminal is up (its
     * handlers, tui/terminal.c, then take over the stop signals): one that
     * finds no terminal runs headless and must not die of a SIGTERM. */
    exec_signals_install(s);
    fflush(stdout); /* nothing buffered is written twice or after the command's */
    fflush(stderr);
    int rc = exec_session_start(s, x, err, sizeof err);
    if (rc == -CN_EINVAL) {
        fprintf(stderr, "cnntop: %s\n", err);
        return EXIT_USAGE;
    }
    if (rc) {
        fprintf(stderr, "cnntop: exec: %s\n", err);
        return s->rc ? s->rc : EXIT_FAIL;
    }
    if (s->note[0] && !x->output)
        fprintf(stderr, "cnntop: exec: %s\n", s->note);
    if (s->watch_note[0])
        fprintf(stderr, "cnntop: exec: %s (no counters)\n", s->watch_note);
    return 0;
}

void exec_say_note(ExecSession *s)
{
    const char *note = exec_session_note(s);

    if (note)
        fprintf(stderr, "cnntop: exec: %s\n", note);
}

int exec_finish(ExecSession *s, RunRecord *rec, int argc, char **argv, FILE *summary)
{
    RunRecord own;
    RunRecord *r = rec;

    if (!r) {
        record_init(&own);
        r = &own;
    }
    if (s->ran && exec_session_record(s, r, argc, argv) != 0) {
        fprintf(stderr, "cnntop: exec: out of memory for the record\n");
        r->have_exec = 0;
    }
    if (s->ran && summary && r->have_exec)
        exec_summary_print(summary, r);
    if (!rec)
        record_done(&own);
    int rc = s->rc;
    exec_session_close(s);
    return rc;
}

int exec_run(const ExecRun *x, RunRecord *rec, int argc, char **argv, FILE *summary)
{
    ExecSession s;
    ExecRun run = *x;
    double last = 0.0;

    int rc = exec_start(&s, &run);
    if (rc) {
        signalled = NULL;
        return rc;
    }
    while (exec_session_step(&s, EXEC_POLL_MS, -1)) {
        exec_say_note(&s);
        if (s.running)
            progress(s.tree, s.elapsed, &last);
    }
    exec_say_note(&s);
    rc = exec_finish(&s, rec, argc, argv, summary);
    signalled = NULL;
    return rc;
}

int exec_export_write(const Options *o, RunRecord *rec, int rc)
{
    char err[512];

    if (rec->have_exec) {
        if (record_export(rec, o->export_path, o->force, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: --export: %s\n", err);
            rc = rc ? rc : EXIT_FAIL;
        } else
            fprintf(stderr, "cnntop: the record written to %s\n", o->export_path);
    }
    record_done(rec);
    return rc;
}

int exec_main(const Options *o, int argc, char **argv)
{
    ExecRun x = {.argv = o->exec_argv, .events = o->events, .hook = !o->no_hook,
                 .layers = o->layers,
                 .progress = o->progress};
    RunRecord rec;

    record_init(&rec);
    int rc = exec_run(&x, o->export_path ? &rec : NULL, argc, argv, stdout);
    return run_stdout_done(exec_export_write(o, &rec, rc));
}
