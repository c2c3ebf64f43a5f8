/*
 * exec_dash.c: `cnntop exec -- CMD` live on a dashboard (see exec_dash.h):
 * its start and end, the loop, the tick's copies and the keys.
 *
 * The command is started before the terminal is taken, so that a command
 * that cannot be run is a plain one-line error and exit 127, as headless.
 * Its stdout and stderr are captured (exec_output.c) and its stdin is
 * /dev/null: the keys are the dashboard's.  When it ends the dashboard
 * stays, with the final figures and how it ended, until q.  q while it
 * runs asks first, then sends SIGTERM and quits once it has ended (q again
 * sends SIGKILL).  SIGTERM and SIGHUP sent to cnntop go on to the command
 * and close the dashboard once it has ended; SIGINT (Ctrl-C) reaches the
 * command through the terminal's process group and is not sent twice.
 * Without a terminal it can drive (TERM unset, dumb or unknown) the
 * command goes on headless, the session's own handlers passing the
 * signals on.  After the terminal is back: the rest of the output a
 * process the command left may still write (the session's bounded drain,
 * src/exec/session.c),
 * the command's whole output, the summary `cnntop exec` prints headless,
 * and --export; the exit status is the command's.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/figures.h"
#include "cmd/run.h"
#include "common/exit.h"
#include "tui/clock.h"
#include "tui/exec_dash.h"
#include "tui/prompt.h"
#include "tui/terminal.h"

#define EXEC_DASH_POLL_MS 50   /* the tree's samples, as headless */

/* --- the tick --------------------------------------------------------- */

/* Each process's CPU over the last second (ended: over its life). */
static void tick_cpu(ExecDash *d)
{
    int second = d->elapsed - d->prev_t >= 1.0;

    for (int k = 0; k < d->nprocs; k++) {
        const ProcInfo *p = &d->procs[k];
        if (!d->s.running || !p->live)
            d->cpu_pct[k] = 100.0 * p->cpu_util;
        else if (second)
            d->cpu_pct[k] = 100.0 * figures_cores_busy(p->cpu - d->prev_cpu[k],
                                                       d->elapsed - d->prev_t);
        if (second)
            d->prev_cpu[k] = p->cpu;
    }
    if (second)
        d->prev_t = d->elapsed;
}

/* The hook's images/s, one point a second, and --progress's figure: the
 * job's, a data-parallel job's summed over its ranks (its data wait their
 * mean), as the summary says them. */
static void tick_series(ExecDash *d)
{
    hookfeed_job_figures(&d->s.hook.feed, &d->fig);
    double images = d->fig.images + d->fig.first_images;

    if (d->fig.batches > 0 && d->elapsed - d->ips_t >= 1.0) {
        if (d->ips_t > 0 || d->ips_images > 0)
            chart_series_add(&d->ips, d->elapsed, (images - d->ips_images) / (d->elapsed - d->ips_t));
        d->ips_t = d->elapsed;
        d->ips_images = images;
    }
    if (d->s.prog.on && d->s.prog.matches != d->prog_matches) {
        chart_series_add(&d->prog, d->elapsed, d->s.prog.last);
        d->prog_matches = d->s.prog.matches;
    }
}

void exec_dash_tick(ExecDash *d)
{
    ProcTree *t = d->s.tree;

    d->ui.now = clock_mono();
    d->elapsed = exec_session_elapsed(&d->s);
    d->nprocs = proctree_procs(t, d->procs, PROC_MAX_PROCS);
    if (d->nprocs > PROC_MAX_PROCS)
        d->nprocs = PROC_MAX_PROCS;
    tick_cpu(d);
    d->nctr = proctree_count(t);
    for (int r = 0; r < PROC_ROLES; r++) {
        proctree_read(t, (ProcRole)r, d->ctr[r], CTR_MAX_EVENTS);
        proctree_sched(t, (ProcRole)r, &d->sched[r]);
    }
    tick_series(d);
    d->model = d->s.hook.feed.model;
    /* The verdict reads the machine's cores: once a second is enough. */
    if (!d->verdict_t || d->elapsed - d->verdict_t >= 1.0 || !d->s.running) {
        exec_verdict(t, &d->fig, &d->vin, &d->verdict);
        d->verdict_t = d->elapsed;
    }
}

/* --- the keys ----------------------------------------------------------- */

/* The ExecDash a key action's Tui begins (see exec_dash.h's DESIGN). */
static ExecDash *dash_of(Tui *t)
{
    return (ExecDash *)t;
}

static int act_quit(Tui *t, int ch)
{
    ExecDash *d = dash_of(t);

    (void)ch;
    if (!d->s.running)
        return TUI_QUIT;
    if (d->stopping) {
        exec_session_kill(&d->s, SIGKILL);
        d->killed = 1;
        tui_message(t, 1, "SIGKILL sent to pid %d", d->s.pid);
        return TUI_REDRAW;
    }
    t->prompt = PROMPT_QUIT;
    return TUI_REDRAW;
}

/* y (or q) to the quit prompt: SIGTERM, and quit once it has ended. */
static void quit_confirmed(ExecDash *d)
{
    exec_session_kill(&d->s, SIGTERM);
    d->stopping = 1;
    tui_message(&d->ui, 0, "SIGTERM sent to pid %d: quitting once it has ended (q: SIGKILL)",
                d->s.pid);
}

static int act_export(Tui *t, int ch)
{
    ExecDash *d = dash_of(t);

    (void)ch;
    if (d->s.running) {
        tui_message(t, 1, "the command is still running: e exports once it has ended");
        return TUI_REDRAW;
    }
    t->prompt = PROMPT_EXPORT;
    snprintf(t->input, sizeof t->input, "%s", t->o->export_path ? t->o->export_path
                                                                : "cnntop-exec.json");
    return TUI_REDRAW;
}

/* Enter on the export prompt: the record `exec --export` writes, by the
 * same writer (atomic: a temporary file renamed). */
static void export_to(ExecDash *d, const char *path)
{
    RunRecord rec;
    char err[512];

    if (export_check(path, d->ui.o->force, err, sizeof err) != 0) {
        tui_message(&d->ui, 1, "export: %s", err);
        return;
    }
    record_init(&rec);
    if (exec_record_fill(&rec, d->s.tree, &d->s.res, d->argc, d->argv) != 0)
        tui_message(&d->ui, 1, "export: %s: out of memory building the record", path);
    else if (record_export(&rec, path, d->ui.o->force, err, sizeof err) != 0)
        tui_message(&d->ui, 1, "export: %s", err);
    else
        tui_message(&d->ui, 0, "the record written to %s", path);
    record_done(&rec);
}

static int act_window(Tui *t, int ch)
{
    (void)ch;
    t->win = (t->win + 1) % TUI_WINDOWS;
    return TUI_REDRAW;
}

static int act_layers(Tui *t, int ch)
{
    (void)ch;
    dash_of(t)->layers_view ^= 1;
    return TUI_REDRAW;
}

static int act_help(Tui *t, int ch)
{
    (void)ch;
    t->help = 1;
    return TUI_REDRAW;
}

const KeyBinding exec_keys_table[] = {
    {{'q', 'Q', KEY_F(10)}, act_quit, "q, F10",
     "quit; while the command runs: asks, sends it SIGTERM and quits\n"
     "once it has ended (q again: SIGKILL); Ctrl-C reaches the command"},
    {{'e', 'E'}, act_export, "e",
     "export the record once the command has ended (asks the file name, .json)"},
    {{'t', 'T'}, act_window, "t", "cycle the chart window: 1 min, 5 min, 15 min, the whole run"},
    {{'l', 'L'}, act_layers, "l",
     "the model's layers (the hook's layer window) in the processes' place, or back"},
    {{'?', 'h', KEY_F(1)}, act_help, "?, h, F1", "this help; any key closes it"},
};
const int exec_keys_count = (int)(sizeof exec_keys_table / sizeof exec_keys_table[0]);

/* A key while a prompt is open. */
static int exec_prompt_key(ExecDash *d, int ch)
{
    Tui *t = &d->ui;

    if (t->prompt == PROMPT_QUIT) {
        t->prompt = PROMPT_NONE;
        if (ch != 'y' && ch != 'Y' && ch != 'q')
            return TUI_REDRAW;
        if (!d->s.running) /* it ended while the question was up */
            return TUI_QUIT;
        quit_confirmed(d);
        return TUI_REDRAW;
    }
    if (ch == 27) {
        t->prompt = PROMPT_NONE;
    } else if (!prompt_edit(t->input, sizeof t->input, ch) &&
               (ch == '\n' || ch == '\r' || ch == KEY_ENTER)) {
        t->prompt = PROMPT_NONE;
        export_to(d, t->input);
    }
    return TUI_REDRAW;
}

static int key_handle(ExecDash *d, int ch)
{
    if (d->ui.prompt != PROMPT_NONE)
        return exec_prompt_key(d, ch);
    if (d->ui.help && ch != KEY_RESIZE) {
        d->ui.help = 0;
        return TUI_REDRAW;
    }
    if (ch == KEY_RESIZE)
        return TUI_RELAYOUT | TUI_REDRAW;
    const KeyBinding *b = keys_find_in(exec_keys_table, exec_keys_count, ch);
    return b ? b->act(&d->ui, ch) : 0;
}

/* --- the loop ---------------------------------------------------------- */

/* A stop signal to cnntop: SIGTERM and SIGHUP go on to the command.  One
 * that came before the terminal's handlers were in place was caught by
 * the session's, which passed it on already. */
static void on_signal(ExecDash *d)
{
    int sig = terminal_signal(), passed = 0;

    if (!sig) {
        sig = exec_session_stop_signal(&d->s);
        passed = 1;
    }
    if (!sig || d->sig_seen)
        return;
    d->sig_seen = sig;
    if (sig != SIGINT && !passed)
        exec_session_kill(&d->s, sig);
}

/* Every key waiting; their TUI_* bits. */
static int keys_drain(ExecDash *d, int wait_ms)
{
    int r = 0, ch;

    timeout(wait_ms);
    while ((ch = getch()) != ERR) {
        tui_key_seen(&d->ui, ch);
        r |= key_handle(d, ch);
        timeout(0);
    }
    return r;
}

static void dash_loop(ExecDash *d)
{
    double next_tick = 0;
    int r = TUI_REDRAW;

    for (;;) {
        int was = d->s.running, busy = was || d->s.draining;
        /* After a signal the terminal may be gone (SIGHUP), and a closed
         * stdin would end every wait at once: the steps then just poll. */
        if (busy)
            exec_session_step(&d->s, EXEC_DASH_POLL_MS, d->sig_seen ? -1 : STDIN_FILENO);
        const char *note = exec_session_note(&d->s);
        if (note)
            tui_message(&d->ui, d->s.drain_cut, "%s", note);
        on_signal(d);
        double now = clock_mono();
        if (now >= next_tick || was != d->s.running) {
            exec_dash_tick(d);
            next_tick = now + 0.1;
            r |= TUI_REDRAW;
        }
        /* q confirmed or a signal: done once the command has ended. */
        if (!d->s.running && (d->stopping || d->sig_seen))
            break;
        if (r & TUI_REDRAW)
            exec_view_draw(d);
        int ms = (int)((next_tick - clock_mono()) * 1000.0) + 1;
        r = keys_drain(d, busy ? 0 : ms < 1 ? 1 : ms);
        if (r & TUI_QUIT)
            break;
    }
}

/* After the dashboard (or without one): the command followed to its end
 * and its output to the drain's, headless; then the output, the summary,
 * --export.  The drain's note shown on the dashboard is said on stderr. */
static int dash_finish(ExecDash *d, const Options *o)
{
    RunRecord rec;

    if (d->s.drain_note[0]) /* shown on the dashboard: said again where it stays */
        fprintf(stderr, "cnntop: exec: %s\n", d->s.drain_note);
    (void)exec_session_note(&d->s);
    while (exec_session_step(&d->s, EXEC_DASH_POLL_MS, -1))
        exec_say_note(&d->s);
    exec_say_note(&d->s);
    if (exec_output_replay(&d->out, stdout, stderr) != 0)
        fprintf(stderr, "cnntop: exec: the command's output could not be written back whole\n");
    if (d->out.spool_err[0])
        fprintf(stderr, "cnntop: exec: %s\n", d->out.spool_err);
    if (d->s.note[0])
        fprintf(stderr, "cnntop: exec: %s\n", d->s.note);
    record_init(&rec);
    int rc = exec_finish(&d->s, o->export_path ? &rec : NULL, d->argc, d->argv, stdout);
    return run_stdout_done(exec_export_write(o, &rec, rc));
}

int exec_dash_main(const Options *o, int argc, char **argv)
{
    static ExecDash dash; /* large (the tree's copies, the output): not on the stack */
    ExecDash *d = &dash;

    memset(d, 0, sizeof *d);
    d->ui.o = o;
    d->argc = argc;
    d->argv = argv;
    /* The charts' window starts at the whole run: a command's life, not a
     * training session's. */
    while (tui_window_seconds(d->ui.win) != 0)
        d->ui.win++;
    FILE *cl = fmemopen(d->cmdline, sizeof d->cmdline - 1, "w");
    if (cl) {
        exec_command_print(cl, o->exec_argv);
        fclose(cl);
    }
    exec_output_init(&d->out);
    d->run = (ExecRun){.argv = o->exec_argv, .events = o->events, .hook = !o->no_hook,
                       .layers = o->layers,
                       .progress = o->progress, .output = exec_output_add, .output_u = &d->out};
    int rc = exec_start(&d->s, &d->run);
    if (rc) {
        exec_output_replay(&d->out, stdout, stderr);
        return rc;
    }
    if (terminal_open(&d->ui) != 0)
        return dash_finish(d, o); /* no dashboard after all: headless */
    if (d->s.note[0])
        tui_message(&d->ui, 0, "%s", d->s.note);
    dash_loop(d);
    terminal_close(&d->ui);
    return dash_finish(d, o);
}
