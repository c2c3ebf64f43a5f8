/*
 * tui.h: the dashboard's state, shared by its parts: the loop
 * (dashboard.c), the tick's copy (poll.c), the keys (keys.c, editor.c,
 * prompt.c) and the panels (panel_*.c, drawn by screen.c).  The only
 * header that includes curses.
 *
 * DESIGN
 * Everything here belongs to the UI thread.  The run thread is reached
 * only through TuiRun (runthread.h), the engine only through its live
 * functions; each tick (10 Hz) poll_tick() copies what is to be shown
 * into this struct, and screen_draw() draws it without asking anyone
 * else.  Key actions change state and return TUI_* bits; the loop draws
 * once per tick or key.
 */
#ifndef CNNTOP_TUI_H
#define CNNTOP_TUI_H

#include <curses.h>

#include "cnntop/calibrate.h"
#include "common/options.h"
#include "tui/chart.h"
#include "tui/counter_figs.h"
#include "tui/hist.h"
#include "tui/layout.h"
#include "tui/runthread.h"
#include "common/config.h"

/* The settings panel's rows. */
enum {
    SET_BATCH, SET_WORKERS, SET_PREFETCH, SET_THREADS, SET_GEMM, SET_RANKS, SET_EPOCHS, SET_STEPS,
    SET_LIMIT, SET_LR, SET_AUGMENT, SET_SEED, SET_DATA, SET_COUNT
};

/* Colour pairs (unused in monochrome). */
enum {
    PAIR_TITLE = 1, PAIR_GOOD, PAIR_WARN, PAIR_BAD, PAIR_DIM, PAIR_DATA, PAIR_FWD, PAIR_BWD,
    PAIR_OPT, PAIR_CHART, PAIR_MARK, PAIR_SEL, PAIR_BAR
};

typedef enum Prompt { PROMPT_NONE, PROMPT_QUIT, PROMPT_EXPORT, PROMPT_EDIT } Prompt;

#define TUI_WINDOWS 4 /* chart windows: 1 min, 5 min, 15 min, the whole run */

typedef struct Tui {
    const Options *o;
    TuiSettings set;          /* the next run's settings */
    TuiSettings launch;       /* ... as the dashboard started: on quit only
                               * what differs from these is saved */
    char cfg_path[4096];      /* the settings file, "" if none */
    TuiHistory hist;
    TuiRun run;
    int seq;                  /* runs started in this session */
    int recorded_seq;         /* last run whose row went into the history */
    int live_changed;         /* the current run had a live change */

    /* Copied each tick. */
    RunView rv;
    Engine *engine;           /* the current run's, or NULL: for key handlers'
                               * live calls only, never drawn from (panels
                               * read copies); NULL from session_start()
                               * until the next poll_tick(), as the engine
                               * it named may be freed then */
    int have_live;
    LiveStats live;
    Sample *samples;          /* the run's history, engine_samples() */
    int nsamples, cap_samples;
    double *tbuf, *vbuf;      /* (cap_samples) scratch for the charts */
    unsigned samples_gen;
    int samples_seq;          /* the run the samples are of */
    Segment segs[CN_MAX_SEGMENTS];
    int nsegs;
    Series ipc, miss;         /* counters, per tick */
    TuiCounterFigs ctr;
    TuiCounterFigs ctr_run;   /* the current (or last) run's last figures:
                               * what the counters showed while it trained */
    char ctr_desc[256];
    MachineInfo mi;
    double flops_per_image;
    double flops_executed_per_image;
    Calibration calib;        /* the cached figures for the run's threads, when have_calib */
    int have_calib;           /* 0: not calibrated (MFU n/a: cnntop calibrate) */
    double cpu_util;          /* cores busy over the last second; NaN: not yet */
    double run_queue_wait;    /* the run's threads waiting for a CPU, 0..1, each
                                 second (counters_wait_share); NaN: unknown */
    double ui_share;          /* UI thread CPU / wall over the last second */
    double cpu_t_last, cpu_w_last, ui_t_last;
    double run_cpu0, run_w0;  /* process CPU and wall seconds at run start */
    double run_cores;         /* the last run's cores busy on average; NaN: none */

    /* Display state. */
    SCREEN *screen;           /* curses' terminal (newterm) */
    Layout lay;
    TuiView view;
    int utf8, color;
    int help;
    int paused;
    double pause_t1;          /* chart end when paused, seconds into the run */
    int win;                  /* index into the chart windows */
    int sel;                  /* settings cursor */
    int hist_sel, table_top;  /* history cursor, first row shown in tables */
    Prompt prompt;
    char input[512];          /* prompt text being typed */
    char status[512];         /* last message */
    double status_t;          /* when it was set */
    int status_err;
    double now;               /* CLOCK_MONOTONIC seconds at this tick */
} Tui;

/* Reaction bits of key handlers. */
enum { TUI_REDRAW = 1, TUI_RELAYOUT = 2, TUI_QUIT = 4 };

/* Chart window in seconds for index i (0: the whole run). */
int tui_window_seconds(int i);

/* A key press (not a resize or a mouse event) ends the status line's
 * message before the key is handled, as in vi and less, so the keys line
 * is back at once; the key's own message, if any, then shows. */
void tui_key_seen(Tui *t, int ch);

/* Sets the status line's message (shown for 8 s, or until a key). */
void tui_message(Tui *t, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
