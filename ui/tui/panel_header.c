/*
 * panel_header.c: the top rows: the version, the machine and the
 * counters' state, the data set, the run's state and progress, and the
 * OpenBLAS kernel warning (up to two rows) when the kernels are narrower
 * than the CPU.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/version.h"
#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/panel.h"

static const char *state_name(RunState s)
{
    static const char *const names[] = {"idle", "loading", "running", "evaluating",
                                        "finished", "stopped", "failed"};
    return names[s];
}

/* The states that are one message (idle, loading, failed, nothing
 * trained); returns 1 when v's state was one of them and is drawn. */
static int header_message(Tui *t, int y, Rect r)
{
    const RunView *v = &t->rv;
    attr_t bad = A_BOLD | draw_pair(t, PAIR_BAD), warn = draw_pair(t, PAIR_WARN);

    switch (v->state) {
    case RUN_IDLE:
        draw_put(y, 0, r.w, A_NORMAL, "idle: press s to start a run, ? for help");
        return 1;
    case RUN_LOADING:
        draw_put(y, 0, r.w, warn, "run %d loading: reading the data set, building the model",
                 v->seq);
        return 1;
    case RUN_FAILED:
        if (fmt_cols(v->reason) + 20 <= r.w)
            draw_put(y, 0, r.w, bad, "run %d failed: %s", v->seq, v->reason);
        else
            draw_put(y, 0, r.w, bad,
                     "run %d failed (the reason, whole, is in the history view: Tab)", v->seq);
        return 1;
    default:
        break;
    }
    if (v->state >= RUN_FINISHED && !(v->have_st && v->st.steps > 0)) {
        draw_put(y, 0, r.w, warn, "run %d stopped before its first step: nothing trained",
                 v->seq);
        return 1;
    }
    return 0;
}

/* The run's state row: its progress and ETA while it trains, its figures
 * once it ended, with a progress bar where there is room. */
static void header_state(Tui *t, int y)
{
    const RunView *v = &t->rv;
    const Rect r = t->lay.header;
    char a[64], b[64], c[64], bar[128];

    if (header_message(t, y, r))
        return;
    const Progress *p = &v->p;
    double frac = p->steps ? (double)p->step / (double)p->steps : 0;
    double eta = p->step ? p->elapsed / (double)p->step * (double)(p->steps - p->step) : NAN;
    char head[160];
    if (v->state == RUN_TRAINING)
        snprintf(head, sizeof head, "run %d running  epoch %d/%d  step %ld/%ld ", v->seq,
                 p->epoch + 1, p->epochs, p->step, p->steps);
    else if (v->state == RUN_EVALUATING)
        snprintf(head, sizeof head, "run %d evaluating on %ld test images ", v->seq,
                 v->test_images);
    else
        snprintf(head, sizeof head, "run %d %s  step %ld/%ld ", v->seq, state_name(v->state),
                 p->step, p->steps);
    attr_t at = v->state == RUN_TRAINING ? A_BOLD | draw_pair(t, PAIR_GOOD)
                : v->state == RUN_STOPPED ? draw_pair(t, PAIR_WARN) : A_BOLD;
    draw_put(y, 0, r.w, at, "%s", head);
    int x = fmt_cols(head);
    char tail[200];
    if (v->state == RUN_TRAINING)
        snprintf(tail, sizeof tail, " %3.0f%%  ETA %s  loss %.4f", 100 * frac,
                 fmt_duration(a, sizeof a, eta), (double)p->loss);
    else if (v->have_ev)
        snprintf(tail, sizeof tail, " %s in %s, %s img/s, accuracy %.2f%%",
                 fmt_si(b, sizeof b, (double)v->st.images), fmt_duration(a, sizeof a, v->st.wall),
                 fmt_si(c, sizeof c, v->st.images_per_s), 100 * v->ev.accuracy);
    else
        snprintf(tail, sizeof tail, " %s in %s, %s img/s, accuracy n/a: %s",
                 fmt_si(b, sizeof b, (double)v->st.images), fmt_duration(a, sizeof a, v->st.wall),
                 fmt_si(c, sizeof c, v->st.images_per_s),
                 v->state == RUN_EVALUATING ? "evaluating" : "not evaluated");
    int bw = r.w - x - fmt_cols(tail);
    if (bw > 40)
        bw = 40;
    if (bw >= 6) {
        fmt_bar(bar, sizeof bar, frac, bw);
        draw_put(y, x, bw, draw_pair(t, PAIR_BAR), "%s", bar);
        x += bw;
    }
    draw_put(y, x, r.w - x, A_NORMAL, "%s", tail);
}

/* The kernel's warning as the header says it, in two rows of `cols` at
 * most: which kernels run on which CPU, the measured factor (the cached
 * calibration's SGEMM at the model's shapes against its FMA peak) and the
 * fix, without the fix's aside where the whole would take more rows.
 * "" when the kernel is not narrow. */
static void header_warning(const Tui *t, int cols, char *buf, size_t len)
{
    const char *fix = strstr(t->mi.blas_warning, "fix: ");
    char factor[96] = "";

    buf[0] = '\0';
    if (!t->mi.blas_warning[0])
        return;
    if (t->have_calib) {
        double peak = calibrate_peak(&t->calib, NULL);
        double sg = fmax(t->calib.model_gflops[0], t->calib.model_gflops[1]);
        if (peak > 0 && sg > 0)
            snprintf(factor, sizeof factor, ", SGEMM %.1fx below the FMA peak", peak / sg);
    }
    for (int aside = 1; aside >= 0; aside--) {
        int n = !fix ? 0 : aside || !strstr(fix, " (") ? (int)strlen(fix)
                                                         : (int)(strstr(fix, " (") - fix);
        snprintf(buf, len, "OpenBLAS runs %s (%s) kernels on this %s CPU%s%s%.*s",
                 t->mi.blas_core, t->mi.blas_isa, t->mi.cpu_isa, factor, fix ? "; " : "", n,
                 fix ? fix : "");
        if (draw_wrapped_rows(buf, cols - 2, 3) <= 2)
            return;
    }
}

/* Rows the header takes at `cols` columns: 3, and the warning's 0 to 2. */
static int header_rows(const Tui *t, int cols)
{
    char w[512];

    header_warning(t, cols, w, sizeof w);
    return 3 + draw_wrapped_rows(w, cols - 2, 2);
}

static void header_draw(Tui *t, Rect r)
{
    char cores[32], machine[400], path[4096];

    snprintf(cores, sizeof cores, "%d core%s", t->mi.cores, fmt_plural(t->mi.cores));
    draw_put(0, 0, r.w, A_BOLD | draw_pair(t, PAIR_TITLE), "cnntop %s", CNNTOP_VERSION);
    snprintf(machine, sizeof machine, "%s, %s, OpenBLAS %s | ", t->mi.cpu_model, cores,
             t->mi.blas_core);
    /* The counters' line is whole or replaced by a pointer to where it is
     * whole: a reason cut in the middle reads as another reason. */
    int room = r.w - 13 - fmt_cols(machine);
    draw_put(0, 13, r.w - 13, A_NORMAL, "%s%s", machine,
        fmt_cols(t->ctr_desc) <= room ? t->ctr_desc : "counters: see IPC chart");
    /* The run's own copy of its directory: its engine may be gone. */
    const char *dir = t->rv.data_dir[0] ? t->rv.data_dir
                      : t->set.data[0] ? t->set.data : CN_DEFAULT_DATA_DIR;
    char tail[160];
    if (t->rv.train_images)
        snprintf(tail, sizeof tail, ": %ld training, %ld test images", t->rv.train_images,
                 t->rv.test_images);
    else
        snprintf(tail, sizeof tail, " (read when a run starts)");
    fmt_fit_tail(path, sizeof path, dir, r.w - 5 - fmt_cols(tail));
    draw_put(1, 0, r.w, A_NORMAL, "data %s%s", path, tail);
    header_state(t, 2);
    if (r.h > 3) {
        char w[512];
        header_warning(t, r.w, w, sizeof w);
        draw_put(3, 0, 2, A_BOLD | draw_pair(t, PAIR_WARN), "! ");
        draw_wrapped(3, 2, r.w - 2, r.h - 3, A_BOLD | draw_pair(t, PAIR_WARN), w);
    }
}

const PanelClass panel_header = {.name = "header", .draw = header_draw, .rows = header_rows};
