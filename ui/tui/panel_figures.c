/*
 * panel_figures.c: the main view's figures: images/s and GFLOP/s, the
 * step's split (data, forward, backward, optimiser), MFU against the
 * cached FMA peak, CPU and memory, the verdict (loader- or compute-bound,
 * oversubscribed), the loader, the live segments and their change with
 * its uncertainty, and the counters, or why each is n/a; for a job of
 * several ranks, its images/s, comm share and each rank's step time.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/calibrate.h"
#include "cnntop/figures.h"
#include "cnntop/verdict.h"
#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/panel.h"

typedef struct Lines {
    Rect r;
    int y;
} Lines;

__attribute__((format(printf, 4, 5)))
static void line(Lines *l, attr_t a, const char *label, const char *fmt, ...)
{
    char text[600];
    va_list ap;

    if (l->y >= l->r.y + l->r.h)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    draw_put(l->y, l->r.x, 9, A_BOLD, "%s", label);
    draw_put(l->y, l->r.x + 9, l->r.w - 10, a, "%s", text);
    l->y++;
}

/* A figure in its full form where it fits the panel, else in its brief
 * one: a narrow panel cuts nothing that a shorter wording keeps. */
static void line_fit(Lines *l, attr_t a, const char *label, const char *full, const char *brief)
{
    line(l, a, label, "%s", fmt_cols(full) <= l->r.w - 10 ? full : brief);
}

/* The step split as a bar of letters d f b o (c: a job's comm), coloured
 * when colours work. */
static void split_bar(Tui *t, Lines *l, const StepSplit *s)
{
    double sh[SPLIT_PARTS];
    static const char letter[5] = {'d', 'f', 'b', 'o', 'c'};
    static const int pairs[5] = {PAIR_DATA, PAIR_FWD, PAIR_BWD, PAIR_OPT, PAIR_MARK};
    int w = l->r.w - 11, x = l->r.x + 9, used = 0;

    if (l->y >= l->r.y + l->r.h)
        return;
    figures_split_shares(s, sh);
    if (isnan(sh[0])) {
        line(l, A_DIM, "step", "n/a: no step timed yet");
        return;
    }
    draw_put(l->y, l->r.x, 9, A_BOLD, "step");
    double acc = 0;
    int parts = sh[4] > 0 ? 5 : 4; /* c: a job's wait for its ranks */
    for (int k = 0; k < parts && w > 0; k++) {
        acc += sh[k];
        int end = (int)(acc * w + 0.5);
        move(l->y, x + used);
        attrset(draw_pair(t, pairs[k]));
        for (; used < end; used++)
            addch((chtype)(unsigned char)letter[k]);
    }
    attrset(A_NORMAL);
    l->y++;
    char full[128], brief[96];
    snprintf(full, sizeof full, "data %.1f%%  fwd %.1f%%  bwd %.1f%%  opt %.1f%%", 100 * sh[0],
             100 * sh[1], 100 * sh[2], 100 * sh[3]);
    snprintf(brief, sizeof brief, "d %.1f%%  f %.1f%%  b %.1f%%  o %.1f%%", 100 * sh[0],
             100 * sh[1], 100 * sh[2], 100 * sh[3]);
    if (parts == 5) {
        size_t n = strlen(full), m = strlen(brief);
        snprintf(full + n, sizeof full - n, "  comm %.1f%%", 100 * sh[4]);
        snprintf(brief + m, sizeof brief - m, "  c %.1f%%", 100 * sh[4]);
    }
    line_fit(l, A_NORMAL, "", full, brief);
}

/* A segment's images/s, mean ± sd over its measured steps (the engine's
 * sd is 0 below two: no spread known). */
static const char *segment_ips(char *buf, size_t len, const Segment *s)
{
    return fmt_pm(buf, len, s->images_per_s, s->images_per_s_sd > 0 ? s->images_per_s_sd : NAN,
                  FMT_PM_AUTO);
}

static void segment_lines(Tui *t, Lines *l)
{
    char a[64], b[64];

    if (t->nsegs == 0) {
        line(l, A_DIM, "segment", "n/a: %s", draw_no_run_why(t, a, sizeof a));
        return;
    }
    const Segment *c = &t->segs[t->nsegs - 1];
    long nc = c->steps - c->warmup_steps;
    if (nc > 0) {
        char full[160], brief[128];
        snprintf(brief, sizeof brief, "%d b%d w%d p%d %s img/s", t->nsegs, c->batch, c->workers,
                 c->prefetch, segment_ips(a, sizeof a, c));
        snprintf(full, sizeof full, "%s (%ld warm-up step%s out)", brief, c->warmup_steps,
                 fmt_plural(c->warmup_steps));
        line_fit(l, A_NORMAL, "segment", full, brief);
    } else {
        char full[160], brief[128];
        snprintf(full, sizeof full, "%d b%d w%d p%d img/s n/a: warming up (%ld step%s)",
                 t->nsegs, c->batch, c->workers, c->prefetch, c->steps, fmt_plural(c->steps));
        snprintf(brief, sizeof brief, "%d b%d w%d p%d warming up (%ld step%s)", t->nsegs,
                 c->batch, c->workers, c->prefetch, c->steps, fmt_plural(c->steps));
        line_fit(l, A_NORMAL, "segment", full, brief);
    }
    if (t->nsegs < 2) {
        line(l, A_DIM, "before", "n/a: no live change yet (w/W b/B)");
        return;
    }
    const Segment *p = &t->segs[t->nsegs - 2];
    long np = p->steps - p->warmup_steps;
    if (np > 0)
        line(l, A_NORMAL, "before", "%d b%d w%d p%d %s img/s", t->nsegs - 1, p->batch,
             p->workers, p->prefetch, segment_ips(b, sizeof b, p));
    else
        line(l, A_NORMAL, "before", "%d b%d w%d p%d img/s n/a: too short", t->nsegs - 1,
             p->batch, p->workers, p->prefetch);
    double ratio, rerr;
    int real;
    if (figures_segment_change(c, p, &ratio, &rerr, &real) != 0) {
        line_fit(l, A_DIM, "change", "n/a: needs 2 measured steps in each segment",
                 "n/a: too few steps in a segment");
        return;
    }
    char pm[40], full[96], brief[64];
    fmt_pm(pm, sizeof pm, ratio, rerr, 3);
    snprintf(full, sizeof full, "x%s: %s", pm, real ? "real (> 2 SE)" : "within noise (< 2 SE)");
    snprintf(brief, sizeof brief, "x%s: %s", pm, real ? "real" : "within noise");
    line_fit(l, real ? A_BOLD | draw_pair(t, ratio >= 1 ? PAIR_GOOD : PAIR_BAD) : A_DIM, "change",
             full, brief);
}

/* IPC and the miss rate, or why not: the reason whole, wrapped. */
static void counter_lines(Tui *t, Lines *l, const TuiCounterFigs *cf)
{
    char a[32], b[32], why[300];

    if (cf->ipc_ok || cf->miss_ok) {
        line(l, A_NORMAL, "counters", "IPC %s  cache misses %s",
             cf->ipc_ok ? (snprintf(a, sizeof a, "%.2f", cf->ipc), a) : "n/a",
             cf->miss_ok ? (snprintf(b, sizeof b, "%.2f%%", 100 * cf->miss_rate), b) : "n/a");
        return;
    }
    if (l->y >= l->r.y + l->r.h)
        return;
    const char *reason = cf->why[0] ? cf->why : t->ctr.why;
    snprintf(why, sizeof why, "n/a: %s", reason);
    int rows = l->r.y + l->r.h - l->y, need = draw_wrapped_rows(why, l->r.w - 10, rows + 1);
    /* A reason cut in the middle reads as another reason: where the rows
     * left cannot hold it, point to the chart that shows it whole. */
    if (need > rows && draw_na_fits(t->lay.chart[CHART_COUNTERS], reason))
        snprintf(why, sizeof why, "n/a: why in the IPC chart above");
    draw_put(l->y, l->r.x, 9, A_BOLD, "%s", "IPC,miss");
    l->y += draw_wrapped(l->y, l->r.x + 9, l->r.w - 10, rows, A_DIM, why);
}

/* The verdict (verdict.h, as the summary says it) and, when the run is
 * oversubscribed, the figure and what to try. */
static void verdict_lines(Tui *t, Lines *l, attr_t a, double share, int workers)
{
    VerdictInput vi = {.data_wait_share = share, .workers = workers, .threads = t->rv.threads,
                       .cores = t->mi.cores, .run_queue_wait = t->run_queue_wait};
    Verdict v;

    verdict_judge(&vi, &v);
    line_fit(l, a | draw_pair(t, v.loader_bound ? PAIR_WARN : PAIR_GOOD), "verdict", v.bound,
             v.bound_brief);
    if (!v.oversubscribed || l->y >= l->r.y + l->r.h)
        return;
    /* The figure and what to try, whole: the brief form over two rows
     * where one cannot hold it, and nothing where two are not left (a
     * cut advice reads as another). */
    attr_t w = A_BOLD | draw_pair(t, PAIR_WARN);
    int one = l->r.w - 10 >= fmt_cols(v.oversub);
    if (!one && l->r.y + l->r.h - l->y < 2)
        return;
    draw_put(l->y, l->r.x, 9, A_BOLD, "%s", "oversub");
    l->y += one ? draw_wrapped(l->y, l->r.x + 9, l->r.w - 10, 1, w, v.oversub)
                : draw_wrapped(l->y, l->r.x + 9, l->r.w - 10, 2, w, v.brief);
}

/* MFU and the executed share against the FMA peak (see cnntop(1)). */
static void peak_line(Tui *t, Lines *l, double ips, int have)
{
    double peak = t->have_calib ? calibrate_peak(&t->calib, NULL) : 0.0;
    char why[64];

    char full[128], brief[96];

    if (!(peak > 0.0)) {
        line_fit(l, A_DIM, "vs peak", "n/a: no FMA peak cached (cnntop calibrate)",
                 "n/a: no peak (cnntop calibrate)");
    } else if (!have) {
        snprintf(full, sizeof full, "FMA peak %.0f GFLOP/s; %s", peak,
                 draw_no_run_why(t, why, sizeof why));
        snprintf(brief, sizeof brief, "FMA peak %.0f GFLOP/s", peak);
        line_fit(l, A_DIM, "vs peak", full, brief);
    } else {
        double mfu = 100 * figures_peak_share(ips, t->flops_per_image, peak),
               ex = 100 * figures_peak_share(ips, t->flops_executed_per_image, peak);
        snprintf(full, sizeof full, "MFU %.1f%%  executed %.1f%% of %.0f GFLOP/s", mfu, ex, peak);
        snprintf(brief, sizeof brief, "MFU %.0f%% exec %.0f%% of %.0f GFLOP/s", mfu, ex, peak);
        line_fit(l, A_NORMAL, "vs peak", full, brief);
    }
}

/* The rows of images/s and the step split: now, the last run's, or why none. */
static void rate_lines(Tui *t, Lines *l, int running)
{
    char a[64], b[64], c[64], full[256], brief[256];
    const TrainStats *st = &t->rv.st;

    if (running) {
        fmt_si(a, sizeof a, t->live.images_per_s_now);
        fmt_si(b, sizeof b, t->live.p.images_per_s);
        fmt_si(c, sizeof c, figures_gflops(t->live.images_per_s_now, t->flops_per_image));
        /* At 80 columns the rates need the room of "now". */
        snprintf(full, sizeof full, "now %s  run %s  model GF/s %s", a, b, c);
        snprintf(brief, sizeof brief, "%s  run %s  model GF/s %s", a, b, c);
        line_fit(l, A_BOLD, "images/s", full, brief);
        split_bar(t, l, &t->live.split);
    } else if (t->rv.have_st && st->steps > 0) {
        line(l, A_BOLD, "images/s", "run %s  model GF/s %s", fmt_si(a, sizeof a, st->images_per_s),
             fmt_si(c, sizeof c, figures_gflops(st->images_per_s, t->flops_per_image)));
        split_bar(t, l, &st->split);
    } else {
        line(l, A_DIM, "images/s", "n/a: %s", draw_no_run_why(t, c, sizeof c));
        line(l, A_DIM, "step", "n/a: %s", c);
    }
}

/* A job of several ranks (no engine in this process): the figures of its
 * last live line, the slowest rank named. */
static void job_lines(Tui *t, Lines *l)
{
    const DistLive *d = &t->rv.live;
    char a[64], all[600];
    int slow = 0;
    size_t n = 0;

    for (int r = 0; r < d->ranks; r++) {
        if (d->step_time[r] > d->step_time[slow])
            slow = r;
        if (n < sizeof all)
            n += (size_t)snprintf(all + n, sizeof all - n, "%s%d:%.1f", r ? " " : "", r,
                                  1e3 * d->step_time[r]);
    }
    line(l, A_BOLD, "job", "%d ranks  images/s %s  comm %.0f%%", d->ranks,
         fmt_si(a, sizeof a, d->ips), 100.0 * d->comm);
    line(l, A_NORMAL, "slowest", "rank %d, %.1f ms a step", slow, 1e3 * d->step_time[slow]);
    line(l, A_NORMAL, "rank ms", "%s", all);
}

/* The process's CPU use and its peak RSS. */
static void cpu_line(Tui *t, Lines *l, int running)
{
    char a[64], b[64], d[64], full[200], brief[200];

    /* Between runs the process idles: its last second says nothing, the
     * last run's mean does. */
    if (running || t->rv.state == RUN_LOADING || t->rv.state == RUN_EVALUATING)
        snprintf(d, sizeof d, "%s", isnan(t->cpu_util) ? "n/a: measuring"
                                    : (snprintf(b, sizeof b, "%.2f cores busy", t->cpu_util), b));
    else if (t->rv.seq && isfinite(t->run_cores))
        snprintf(d, sizeof d, "%.2f cores (run %d)", t->run_cores, t->rv.seq);
    else
        snprintf(d, sizeof d, "idle");
    fmt_bytes(a, sizeof a, (double)machine_peak_rss_kib() * 1024.0);
    snprintf(full, sizeof full, "%s  RSS peak %s", d, a);
    snprintf(brief, sizeof brief, "%s  RSS %s", d, a);
    line_fit(l, A_NORMAL, "CPU", full, brief);
}

/* The verdict and, while a run trains, the loader. */
static void loader_lines(Tui *t, Lines *l, int running)
{
    char a[64], c[64], full[200], brief[200];
    const TrainStats *st = &t->rv.st;

    if (running) {
        verdict_lines(t, l, A_BOLD, t->live.data_wait_share, t->live.workers);
        if (t->live.workers > 0) {
            fmt_si(a, sizeof a, t->live.load_samples_per_s);
            snprintf(full, sizeof full, "%d worker%s, queue %d/%d, alone %s/s", t->live.workers,
                     fmt_plural(t->live.workers), t->live.queue_filled, t->live.queue_cap, a);
            snprintf(brief, sizeof brief, "%d wkr, queue %d/%d, alone %s/s", t->live.workers,
                     t->live.queue_filled, t->live.queue_cap, a);
            line_fit(l, A_NORMAL, "loader", full, brief);
        } else {
            line(l, A_NORMAL, "loader", "inline on the trainer (workers 0)");
        }
    } else if (t->rv.have_st && st->steps > 0) {
        verdict_lines(t, l, A_NORMAL, figures_wait_share(&st->split),
                      t->nsegs ? t->segs[t->nsegs - 1].workers : t->rv.cfg.workers);
    } else {
        line(l, A_DIM, "verdict", "n/a: %s", draw_no_run_why(t, c, sizeof c));
    }
}

/* Where there is room: every segment of the run. */
static void segment_table(Tui *t, Lines *l)
{
    char a[64];

    if (l->y + 2 >= l->r.y + l->r.h || t->nsegs <= 1)
        return;
    l->y++;
    line(l, A_BOLD, "segments", "  batch wkrs pref  steps   img/s");
    for (int i = 0; i < t->nsegs && l->y < l->r.y + l->r.h; i++) {
        const Segment *s = &t->segs[i];
        line(l, i == t->nsegs - 1 ? A_BOLD : A_NORMAL, "", "%2d %5d %4d %4d %6ld  %s", i + 1,
             s->batch, s->workers, s->prefetch, s->steps,
             s->steps > s->warmup_steps ? segment_ips(a, sizeof a, s) : "warming up");
    }
}

/* Rows of images/s and the step split (rate_lines) that the segment lines
 * never take. */
enum { FIGURES_RATE_ROWS = 3 };

static void figures_draw(Tui *t, Rect r)
{
    Lines l = {r, r.y + 1};
    int running = t->have_live && t->live.running;
    const TrainStats *st = &t->rv.st;

    if (r.h < 2)
        return;
    draw_title(t, r, "figures", running ? "(live)" : t->rv.have_st ? "(last run)" : "");
    /* Once a live change (w/W b/B) has made a second segment, its three
     * lines (segment, before, change) answer it: where the panel is short
     * (80 x 24 with a warning above and the oversubscription advice), the
     * rows above them give way first, as many as the title and the rates
     * leave. */
    int keep = t->nsegs >= 2 ? 3 : 0, spare = r.h - 1 - FIGURES_RATE_ROWS;
    if (keep > spare)
        keep = spare;
    if (keep > 0)
        l.r.h = r.h - keep;
    int job = t->rv.ranks > 1 && t->rv.have_dlive;
    if (job)
        job_lines(t, &l);
    if (!job || t->rv.have_st)
        rate_lines(t, &l, running);
    peak_line(t, &l, running ? t->live.images_per_s_now : st->images_per_s,
              running || (t->rv.have_st && st->steps > 0));
    cpu_line(t, &l, running);
    loader_lines(t, &l, running);
    l.r.h = r.h;
    segment_lines(t, &l);
    counter_lines(t, &l, running ? &t->ctr : t->rv.seq ? &t->ctr_run : &t->ctr);
    segment_table(t, &l);
}

const PanelClass panel_figures = {.name = "figures", .draw = figures_draw};
