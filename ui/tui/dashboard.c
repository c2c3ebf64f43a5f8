/*
 * dashboard.c: `cnntop` with no command: the dashboard's start, loop and end.
 *
 * The UI thread initialises the terminal, then loops: wait for a key at
 * most until the next tick, handle it (keys.c), and every 0.1 s copy what
 * is to be shown (poll.c) and draw once (screen.c).  Training happens on
 * the run thread (runthread.c).  SIGINT, SIGTERM and SIGHUP only set a
 * flag (terminal.c); the loop then stops the run, saves the settings and
 * the history, and restores the terminal.  The settings file is read at
 * start and written on quit (common/config.c); the session history goes
 * to --history FILE after each run (hist.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/exit.h"
#include "cmd/ranks.h"
#include "cmd/validate.h"
#include "tui/clock.h"
#include "tui/dashboard.h"
#include "tui/keys.h"
#include "tui/poll.h"
#include "tui/screen.h"
#include "tui/session.h"
#include "tui/terminal.h"
#include "tui/tui.h"

static void load_settings(Tui *t)
{
    char err[600];

    t->set.cfg = t->o->cfg;
    snprintf(t->set.data, sizeof t->set.data, "%s", t->o->cfg.data_dir ? t->o->cfg.data_dir : "");
    t->set.window = (int)settings_find(settings_ui, "window")->dflt;
    t->set.blas_keep = t->o->blas_keep;
    t->set.ranks = t->o->ranks ? t->o->ranks : 1;
    settings_fix(&t->set);
    if (settings_path(t->cfg_path, sizeof t->cfg_path) != 0)
        t->cfg_path[0] = '\0';
    int rc = t->cfg_path[0] ? settings_load(&t->set, t->cfg_path, t->o->set_mask, err, sizeof err)
                            : 1;
    /* The file's name without its directory, so that the line and the
     * problem fit the status line; the man page says where it is. */
    const char *base = strrchr(t->cfg_path, '/');
    size_t dl = base ? (size_t)(base + 1 - t->cfg_path) : 0;
    const char *msg = !strncmp(err, t->cfg_path, dl) ? err + dl : err;
    if (rc == 2)
        tui_message(t, 1, "%s: skipped, the rest read", msg);
    else if (rc < 0)
        tui_message(t, 1, "settings not read: %s", err);
    for (int i = 0; i < TUI_WINDOWS; i++)
        if (tui_window_seconds(i) == t->set.window)
            t->win = i;
    t->set.window = tui_window_seconds(t->win);
    /* What is saved on quit is what the user changes from here on: the
     * command line's values are for this launch only. */
    t->launch = t->set;
    settings_fix(&t->launch);
}

static void free_copies(Tui *t)
{
    free(t->samples);
    free(t->tbuf);
    free(t->vbuf);
}

/* The one loop: keys, ticks, one draw per pass. */
static void loop(Tui *t)
{
    double next_tick = 0;
    int r = TUI_REDRAW;

    while (!terminal_signal()) {
        double now = clock_mono();
        if (now >= next_tick) {
            poll_tick(t);
            next_tick = now + 0.1;
            r |= TUI_REDRAW;
        }
        if (r & TUI_REDRAW)
            screen_draw(t);
        r = 0;
        int ms = (int)((next_tick - clock_mono()) * 1000.0) + 1;
        timeout(ms < 1 ? 1 : ms);
        int ch = getch();
        if (ch == ERR)
            continue;
        tui_key_seen(t, ch);
        r = keys_handle(t, ch);
        if (r & TUI_QUIT)
            break;
    }
}

int dashboard_main(const Options *o)
{
    static Tui tui; /* large (series, history): not on the stack */
    Tui *t = &tui;
    char err[600];

    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "cnntop: the dashboard needs a terminal; use `cnntop run` for headless work\n");
        return EXIT_USAGE;
    }
    memset(t, 0, sizeof *t);
    t->o = o;
    t->cpu_util = NAN;
    t->ui_share = NAN;
    t->run_queue_wait = NAN;
    hist_init(&t->hist);
    runthread_init(&t->run);
    load_settings(t);
    /* Bad input refused before the screen is taken: the data and the
     * memory too when a run starts at once. */
    RunConfig first = t->set.cfg;
    first.data_dir = t->set.data[0] ? t->set.data : NULL;
    int rc = validate_command(o, o->autostart ? &first : NULL, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "cnntop: %s\n", err);
    else if (o->ranks > 1) /* as run --ranks refuses it, in its words */
        rc = ranks_check(o, first.batch, o->ranks);
    if (rc != 0) {
        runthread_done(&t->run);
        return rc;
    }
    if (o->history && hist_load(&t->hist, o->history, err, sizeof err) < 0)
        tui_message(t, 1, "history: %s", err);
    t->hist_sel = t->hist.n - 1;
    machine_info(&t->mi);
    /* Who chose the kernel (a narrow one is the header's warning), in a
     * form that fits beside the tabs, unless the settings or the history
     * had something to say first; `cnntop calibrate` and every run's
     * summary say it in full. */
    if (t->mi.blas_brief[0] && !t->status[0])
        tui_message(t, 0, "%s", t->mi.blas_brief);
    t->flops_per_image = engine_flops_per_image();
    t->flops_executed_per_image = engine_flops_executed_per_image();
    t->have_calib = calibrate_load(t->set.cfg.threads, &t->calib) == 0;
    counter_figs_set_events(o->events);
    counter_figs_describe(t->ctr_desc, sizeof t->ctr_desc);
    if (terminal_open(t) != 0) {
        runthread_done(&t->run);
        free_copies(t);
        return EXIT_USAGE;
    }
    if (o->autostart)
        session_start(t);
    loop(t);
    /* Stop a run that is going, then save: the order keeps the history
     * file free of a half-recorded run. */
    runthread_done(&t->run);
    terminal_close(t);
    if (t->cfg_path[0] && settings_save_changes(&t->launch, &t->set, t->cfg_path, err,
                                                sizeof err) < 0)
        fprintf(stderr, "cnntop: settings not saved: %s\n", err);
    free_copies(t);
    return terminal_signal() ? 128 + terminal_signal() : EXIT_OK;
}
