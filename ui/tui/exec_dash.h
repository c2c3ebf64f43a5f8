/*
 * exec_dash.h: `cnntop exec -- CMD` on a terminal: the command's process
 * tree live on a dashboard (exec_dash.c: the loop, the keys and the
 * tick's copies; exec_view.c: the drawing).
 *
 * DESIGN
 * One thread.  The loop drives the exec session (cnntop/exec.h, the same
 * poll loop the headless summary has), waking for its pipes or a key; each tick
 * (10 Hz) exec_dash_tick() copies what is shown into ExecDash, and
 * exec_view_draw() draws only those copies.  ExecDash begins with a Tui,
 * so that the dashboard's machinery (terminal.c, draw.c, the charts, the
 * help box, the status message) works on it unchanged; the key table's
 * actions get that Tui and take the ExecDash around it.
 */
#ifndef CNNTOP_TUI_EXEC_DASH_H
#define CNNTOP_TUI_EXEC_DASH_H

#include "cmd/exec.h"
#include "common/options.h"
#include "tui/exec_output.h"
#include "tui/keys.h"
#include "tui/tui.h"

/* The processes' table shows at most these (the most CPU first). */
#define EXEC_DASH_PROCS 64

typedef struct ExecDash {
    Tui ui;                   /* first (see DESIGN): terminal, colours, status
                               * line, help flag, prompt and its input */
    int argc;                 /* cnntop's command line, for the record */
    char **argv;
    ExecRun run;
    ExecSession s;
    ExecOutput out;
    ExecLayout lay;
    char cmdline[1024];       /* the command as a shell reads it */
    int stopping;             /* q confirmed: SIGTERM sent, quit once it ended */
    int killed;               /* q again while stopping: SIGKILL sent */
    int sig_seen;             /* a signal cnntop got (terminal_signal()), handled */

    /* Copied each tick. */
    double elapsed;           /* s since the command started */
    ProcInfo procs[PROC_MAX_PROCS];
    int nprocs;               /* at most PROC_MAX_PROCS */
    double cpu_pct[PROC_MAX_PROCS]; /* CPU % over the last second (ended: its mean) */
    double prev_cpu[PROC_MAX_PROCS], prev_t; /* CPU s and elapsed at the last second */
    int nctr;                 /* events of the set */
    CounterReading ctr[PROC_ROLES][CTR_MAX_EVENTS];
    CounterSched sched[PROC_ROLES];
    HookFigures fig;
    VerdictInput vin;
    Verdict verdict;
    double verdict_t;         /* elapsed at the last verdict (judged each second) */
    Series ips;               /* the hook's images/s, one point a second */
    double ips_t, ips_images; /* elapsed and images at its last point */
    Series prog;              /* --progress's figure, one point a matching line */
    long prog_matches;
    HookModel model;          /* the hook's layer window (exec_layers_view.c) */
    int layers_view;          /* 1: l shows the layers in the processes' place */
} ExecDash;

/* `cnntop exec` with stdin and stdout terminals and no --no-dashboard:
 * runs o->exec_argv under the dashboard, then prints the command's output
 * and the summary, writes --export, and returns what `cnntop exec` does
 * headless (the command's exit code). */
int exec_dash_main(const Options *o, int argc, char **argv);

/* Copies the session's figures into d (the tick). */
void exec_dash_tick(ExecDash *d);

/* Draws the frame from d's copies (exec_view.c). */
void exec_view_draw(ExecDash *d);

/* The layers view in r: the hook's layer window, or why not yet
 * (exec_layers_view.c). */
void exec_view_layers(ExecDash *d, Rect r);

/* The key table (exec_dash.c), for the loop and the help box. */
extern const KeyBinding exec_keys_table[];
extern const int exec_keys_count;

#endif
