/*
 * exec_view.c: `cnntop exec`'s dashboard, drawn (see exec_dash.h): the
 * header (the command, its pid, elapsed time and state, the verdict), the
 * table by role, the counters by role, the charts (the hook's images/s,
 * --progress's figure), the processes using the most CPU, the tail of the
 * command's output and the status line, each where layout_exec_compute()
 * puts it for the terminal's size.  Every figure comes from ExecDash's
 * copies; one that cannot be had says n/a and why, never 0.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/figures.h"
#include "common/counters_fmt.h"
#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/exec_dash.h"
#include "tui/panel.h"

/* "running", "exited 3", "killed by SIGTERM (exit code 143)"; *pair its
 * colour. */
static const char *state_text(const ExecDash *d, char *buf, size_t len, int *pair)
{
    const ExecResult *res = &d->s.res;

    *pair = PAIR_GOOD;
    if (d->s.running) {
        snprintf(buf, len, "%s", d->stopping ? (d->killed ? "running: SIGKILL sent"
                                                          : "running: SIGTERM sent, waiting")
                                             : "running");
        if (d->stopping)
            *pair = PAIR_WARN;
    } else if (res->signal) {
        snprintf(buf, len, "killed by SIG%s (exit code %d)", sigabbrev_np(res->signal)
                                                                 ? sigabbrev_np(res->signal)
                                                                 : "?", 128 + res->signal);
        *pair = PAIR_BAD;
    } else {
        snprintf(buf, len, "exited %d", res->status);
        *pair = res->status ? PAIR_BAD : PAIR_GOOD;
    }
    return buf;
}

static void draw_header(ExecDash *d, Rect r)
{
    Tui *t = &d->ui;
    char st[96], vd[sizeof d->verdict.oversub];
    int pair;

    draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE), "cnntop exec: %s", d->cmdline);
    draw_put(r.y + 1, r.x, r.w, A_NORMAL, "pid %d   elapsed %.1f s   ", d->s.pid, d->elapsed);
    int x = snprintf(NULL, 0, "pid %d   elapsed %.1f s   ", d->s.pid, d->elapsed);
    state_text(d, st, sizeof st, &pair);
    draw_put(r.y + 1, r.x + x, r.w - x, A_BOLD | draw_pair(t, pair), "%s", st);
    const Verdict *v = &d->verdict;
    if (v->oversubscribed || v->harmless)
        snprintf(vd, sizeof vd, "%s", r.w < 120 ? v->brief : v->oversub);
    else if (isfinite(d->vin.run_queue_wait))
        snprintf(vd, sizeof vd, "not oversubscribed: run-queue wait %.1f%% of thread time",
                 100 * d->vin.run_queue_wait);
    else
        snprintf(vd, sizeof vd, "oversubscription n/a: no run-queue figures (schedstat missing "
                 "or under %.1f s of thread time)", CTR_OVERSUB_MIN_WALL);
    /* Without the hook's figures the bound is n/a with its reason. */
    snprintf(vd + strlen(vd), sizeof vd - strlen(vd), ";  %s",
             r.w < 120 ? v->bound_brief : v->bound);
    draw_put(r.y + 2, r.x, r.w, v->oversubscribed || v->loader_bound ? draw_pair(t, PAIR_WARN)
                                                                      : A_NORMAL, "%s", vd);
}

/* One role's row: processes (live), threads, CPU % (its live processes'
 * over the last second; ended, its CPU over the command's wall time),
 * run-queue wait, faults, the sum of its processes' peak RSS. */
static void role_row(ExecDash *d, int y, Rect r, ProcRole role)
{
    int procs = 0, live = 0, threads = 0;
    double pct = 0.0, cpu = 0.0, hwm = 0.0;
    unsigned long long minflt = 0, majflt = 0;
    const CounterSched *s = &d->sched[role];
    char wait[16];

    for (int k = 0; k < d->nprocs; k++) {
        const ProcInfo *p = &d->procs[k];
        if (p->role != role)
            continue;
        procs++;
        live += p->live;
        threads += p->threads;
        pct += p->live ? d->cpu_pct[k] : 0.0; /* now: the live ones */
        cpu += p->cpu;
        minflt += p->minflt;
        majflt += p->majflt;
        hwm += (double)p->hwm_kib;
    }
    if (!procs) {
        draw_put(y, r.x, r.w, A_DIM, "%-20s %5s", proctree_role_name(role), "none");
        return;
    }
    /* Once the command has ended: the role's CPU over the command's wall. */
    if (!d->s.running && d->s.res.wall > 0)
        pct = 100.0 * figures_cores_busy(cpu, d->s.res.wall);
    if (s->available && s->have_wait && s->thread_wall > 0)
        snprintf(wait, sizeof wait, "%.1f", 100 * s->wait_share);
    else
        snprintf(wait, sizeof wait, "n/a");
    draw_put(y, r.x, r.w, A_NORMAL, "%-20s %5d %4d %4d %7.1f %6s %9llu %6llu %8.1f",
             proctree_role_name(role), procs, live, threads, pct, wait, minflt, majflt,
             hwm / 1024.0);
}

static void draw_roles(ExecDash *d, Rect r)
{
    char title[96];

    if (!r.h)
        return;
    snprintf(title, sizeof title, "tree peak RSS %.1f MiB (sampled)",
             (double)proctree_peak_rss_kib(d->s.tree) / 1024.0);
    draw_title(&d->ui, r, "Processes by role", title);
    draw_put(r.y + 1, r.x, r.w, A_DIM, "%-20s %5s %4s %4s %7s %6s %9s %6s %8s", "role", "procs",
             "live", "thr", "CPU%", "wait%", "minflt", "majflt", "RSS MiB");
    for (int role = 0; role < PROC_ROLES && 2 + role < r.h; role++)
        role_row(d, r.y + 2 + role, r, (ProcRole)role);
}

/* One reading in a cell: its value (msec for the clocks), or n/a. */
static void ctr_cell(char *buf, size_t len, const CounterReading *c, int procs)
{
    if (!procs)
        snprintf(buf, len, "-");
    else if (c->status != CTR_OK)
        snprintf(buf, len, "n/a");
    else if (c->unit && !strcmp(c->unit, "ns"))
        counters_fmt_number(buf, len, c->value / 1e6, 2);
    else
        counters_fmt_number(buf, len, c->value, 0);
}

/* The counters by role, a column each (a data-parallel job's ranks in
 * their own). */
static void draw_counters(ExecDash *d, Rect r)
{
    char cell[PROC_ROLES][40];
    _Static_assert(PROC_ROLES == 4, "a column per role");

    if (!r.h)
        return;
    draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(&d->ui, PAIR_TITLE), "%-18s", "Counters");
    draw_put(r.y, r.x + 18, r.w - 18, A_DIM, " %12s %12s %12s %12s  (scaled; the clocks in msec)",
             "main", "workers", "other", "ranks");
    for (int e = 0; e < d->nctr && 1 + e < r.h; e++) {
        const char *why = NULL;
        for (int role = 0; role < PROC_ROLES; role++) {
            const CounterReading *c = &d->ctr[role][e];
            int procs = proctree_role_procs(d->s.tree, (ProcRole)role);
            ctr_cell(cell[role], sizeof cell[role], c, procs);
            if (procs && c->status != CTR_OK && !why)
                why = c->reason;
        }
        int w = 18 + PROC_ROLES * 13;
        draw_put(r.y + 1 + e, r.x, r.w, A_NORMAL, "%-18.18s %12s %12s %12s %12s",
                 d->ctr[0][e].name, cell[0], cell[1], cell[2], cell[3]);
        if (why && w + 2 < r.w)
            draw_put(r.y + 1 + e, r.x + w + 2, r.w - w - 2, A_DIM, "n/a: %s", why);
    }
}

/* A chart of series s over the command's life so far. */
static void spec_series(const ExecDash *d, ChartSpec *cs, const char *name, const Series *s)
{
    memset(cs, 0, sizeof *cs);
    cs->name = name;
    cs->t = s->t;
    cs->v = s->v;
    cs->n = s->n;
    cs->own_end = 1;
    cs->end = d->elapsed;
}

/* The hook's images/s, or why not. */
static void draw_ips(ExecDash *d, Rect r)
{
    ChartSpec cs;
    char a[32], na[160];
    const HookFeed *h = &d->s.hook.feed;

    spec_series(d, &cs, "images/s", &d->ips);
    /* While it runs, the last second's rate; once it ended, the mean. */
    if (d->fig.ok)
        snprintf(cs.now, sizeof cs.now, "%s%s  wait %.1f%%  step %.1f ms",
                 d->s.running ? "" : "mean ",
                 fmt_si(a, sizeof a, d->s.running && d->ips.n ? d->ips.v[d->ips.n - 1]
                                                              : d->fig.images_per_s),
                 100 * d->fig.data_wait_share, 1e3 * d->fig.step_s);
    if (!chart_series_has_value(&d->ips)) {
        snprintf(na, sizeof na, "the %s gave %ld batch%s so far (a rate needs 2%s)",
                 h->n_ranks && !h->main.batches ? "ranks' DataLoaders" : "DataLoader",
                 d->fig.batches, d->fig.batches == 1 ? "" : "es",
                 h->n_ranks && !h->main.batches ? " a rank" : "");
        cs.na = na;
    }
    panel_chart_draw(&d->ui, r, &cs);
}

static void draw_progress(ExecDash *d, Rect r)
{
    ChartSpec cs;
    char na[600];

    spec_series(d, &cs, "--progress", &d->prog);
    if (d->s.prog.matches)
        snprintf(cs.now, sizeof cs.now, "last %g (%ld lines)", d->s.prog.last, d->s.prog.matches);
    if (!d->s.prog.matches) {
        snprintf(na, sizeof na, "no output line matched '%s' with a number yet", d->s.prog.regex);
        cs.na = na;
    }
    panel_chart_draw(&d->ui, r, &cs);
}

static int by_cpu(const void *a, const void *b, void *u)
{
    const ExecDash *d = u;
    double x = d->cpu_pct[*(const int *)a], y = d->cpu_pct[*(const int *)b];
    int la = d->procs[*(const int *)a].live, lb = d->procs[*(const int *)b].live;

    return la != lb ? lb - la : (x < y) - (x > y);
}

/* The rank of process pid ("0"), "-" when it is none, into buf. */
static const char *rank_of(const ExecDash *d, int pid, char *buf, size_t len)
{
    const HookFeed *h = &d->s.hook.feed;

    snprintf(buf, len, "-");
    for (int i = 0; i < h->n_ranks; i++)
        if (h->ranks[i].pid == pid)
            snprintf(buf, len, "%d", h->ranks[i].rank);
    return buf;
}

static void draw_procs(ExecDash *d, Rect r)
{
    static const char *const tags[PROC_ROLES] = {"main", "worker", "other", "rank"};
    int order[PROC_MAX_PROCS];
    char rk[16];

    if (r.h < 2)
        return;
    for (int k = 0; k < d->nprocs; k++)
        order[k] = k;
    qsort_r(order, (size_t)d->nprocs, sizeof order[0], by_cpu, d);
    draw_title(&d->ui, r, "Processes", d->s.running ? "the most CPU first (the last second)"
                                                     : "the most CPU first (over their life)");
    draw_put(r.y + 1, r.x, r.w, A_DIM, "%8s  %-6s %4s %-16s %4s %7s %9s %8s  %s", "PID", "ROLE",
             "RANK", "COMMAND", "THR", "CPU%", "CPU s", "RSS MiB", "STATE");
    for (int i = 0; i < d->nprocs && 2 + i < r.h; i++) {
        const ProcInfo *p = &d->procs[order[i]];
        draw_put(r.y + 2 + i, r.x, r.w, p->live ? A_NORMAL : A_DIM,
                 "%8d  %-6s %4s %-16s %4d %7.1f %9.2f %8.1f  %s", p->pid, tags[p->role],
                 rank_of(d, p->pid, rk, sizeof rk), p->comm, p->threads, d->cpu_pct[order[i]],
                 p->cpu, (double)p->hwm_kib / 1024.0, p->live ? "running" : "ended");
    }
}

static void draw_output(ExecDash *d, Rect r)
{
    char bytes[2][32];
    int stream;

    if (r.h < 2)
        return;
    fmt_bytes(bytes[0], sizeof bytes[0], (double)d->out.bytes[0]);
    fmt_bytes(bytes[1], sizeof bytes[1], (double)d->out.bytes[1]);
    char rest[160];
    snprintf(rest, sizeof rest, "the tail (stdout %s; stderr %s, its lines highlighted); printed whole on quit",
             bytes[0], bytes[1]);
    draw_title(&d->ui, r, "Output", rest);
    for (int i = 0; i < r.h - 1; i++) {
        const char *line = exec_output_line(&d->out, i, &stream);
        if (!line)
            break;
        draw_put(r.y + r.h - 1 - i, r.x, r.w, stream ? draw_pair(&d->ui, PAIR_WARN) : A_NORMAL,
                 "%s", line);
    }
}

static void draw_status(ExecDash *d, Rect r)
{
    Tui *t = &d->ui;

    if (t->prompt == PROMPT_QUIT)
        draw_put(r.y, 0, r.w, A_BOLD | draw_pair(t, PAIR_WARN),
                 "the command is running: send it SIGTERM and quit? (y/n)");
    else if (t->prompt == PROMPT_EXPORT)
        draw_put(r.y, 0, r.w, A_BOLD, "export to (.json, Enter writes, Esc cancels): %s_",
                 t->input);
    else if (t->status[0] && t->now - t->status_t < 8.0)
        draw_put(r.y, 0, r.w, t->status_err ? A_BOLD | draw_pair(t, PAIR_BAD) : A_NORMAL, "%s",
                 t->status);
    else
        draw_put(r.y, 0, r.w, A_DIM, "%s", d->s.running ? "q quit  e export (once ended)  "
                                                          "t window  l layers  ? help"
                                                        : "q quit  e export  t window  l layers  "
                                                          "? help");
}

static void too_small(const ExecLayout *l)
{
    draw_put(0, 0, l->cols, A_BOLD, "terminal too small: %dx%d", l->cols, l->lines);
    draw_put(1, 0, l->cols, A_NORMAL, "cnntop needs at least %dx%d", l->need_cols, l->need_lines);
    draw_put(2, 0, l->cols, A_DIM, "q quits");
}

void exec_view_draw(ExecDash *d)
{
    int hook = d->s.hook.feed.hello, prog = d->s.prog.on;
    ExecLayout *l = &d->lay;

    layout_exec_compute(l, COLS, LINES, 1 + d->nctr, hook + prog);
    erase();
    if (l->too_small) {
        too_small(l);
        refresh();
        return;
    }
    draw_header(d, l->header);
    draw_roles(d, l->roles);
    draw_counters(d, l->counters);
    if (hook)
        draw_ips(d, l->chart[0]);
    if (prog)
        draw_progress(d, l->chart[hook]);
    if (d->layers_view)
        exec_view_layers(d, l->procs);
    else
        draw_procs(d, l->procs);
    draw_output(d, l->output);
    draw_status(d, l->status);
    if (d->ui.help)
        panel_help_box((Rect){0, 0, l->lines, l->cols}, exec_keys_table, exec_keys_count,
                       "cnntop exec: the command's tree, sampled every 50 ms, redrawn at 10 Hz");
    refresh();
}
