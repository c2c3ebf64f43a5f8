/*
 * panel_layers.c: the per-layer view: each layer's time per step, its
 * share (with a bar), the model's GFLOP/s and, where the engine ran other
 * FLOPs (the Winograd layers, block 1's forward), the executed rate, the
 * time over its time on paper, IPC and miss rate, in step order, by time
 * or by name (o).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/figures.h"
#include "cnntop/record.h"
#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/panel.h"

static const LayerTime *sort_base;
static int sort_mode;

static int layer_cmp(const void *a, const void *b)
{
    const LayerTime *x = &sort_base[*(const int *)a], *y = &sort_base[*(const int *)b];
    if (sort_mode == 1)
        return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : 0;
    if (sort_mode == 2)
        return strcmp(x->name, y->name);
    return *(const int *)a - *(const int *)b;
}

/* The model's GFLOP/s of a layer ("-" for an elementwise one) and the
 * executed rate where it differs (else ""), each in len bytes. */
static void layer_rates(const LayerTime *lt, char *model, char *exec, size_t len)
{
    double g = figures_rate_gflops(lt->flops, lt->seconds);
    double x = figures_rate_gflops(lt->flops_executed, lt->seconds);

    snprintf(exec, len, "%s", "");
    if (lt->flops <= 0)
        snprintf(model, len, "-");
    else
        snprintf(model, len, isnan(g) ? "n/a" : "%.1f", g);
    /* Where the counts differ, or the model counts none (bn1+relu+pool1
     * fwd runs conv1's convolution): as the run summary shows it. */
    if (record_flops_differ(lt->flops, lt->flops_executed))
        snprintf(exec, len, isnan(x) ? "n/a" : "%.1f", x);
}

/* The layer's time over its time on paper (its executed FLOPs at gflops,
 * the sketch's rate, its bytes at gbps, the triad bandwidth: the run
 * summary's "On paper, per part"), "n/a" without them. */
static void layer_paper(const LayerTime *lt, double gflops, double gbps, char *out, size_t len)
{
    double compute_s, memory_s;

    if (figures_paper(lt->flops_executed, lt->bytes, gflops, gbps, &compute_s, &memory_s) != 0 ||
        !(lt->seconds > 0))
        snprintf(out, len, "n/a");
    else
        snprintf(out, len, "%.1fx", lt->seconds / (compute_s + memory_s));
}

static void layers_draw(Tui *t, Rect r)
{
    const RunView *v = &t->rv;
    int idx[RUNTHREAD_MAX_LAYERS];
    double total = 0;
    static const char *const order[] = {"step order", "time", "name"};
    char gf[48], gx[48];

    draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE),
        "%-22s %8s %7s %10s %6s %6s %5s %6s  sorted by %s (o changes)%s", "layer", "ms/step",
        "share", "model GF/s", "exec", "paper", "IPC", "miss", order[t->set.sort],
        v->state == RUN_TRAINING ? ", live" : "");
    if (v->nprof == 0 || v->prof_steps == 0) {
        draw_put(r.y + 1, r.x, r.w, A_DIM, "n/a: no step timed yet (s starts a run)");
        return;
    }
    for (int i = 0; i < v->nprof; i++) {
        idx[i] = i;
        total += v->prof[i].seconds;
    }
    sort_base = v->prof;
    sort_mode = t->set.sort;
    qsort(idx, (size_t)v->nprof, sizeof idx[0], layer_cmp);
    /* The rates the paper column is against, once a redraw. */
    int peak;
    const double gflops =
        t->have_calib ? calibrate_sketch_gflops(&t->calib, v->cfg.batch, &peak) : 0;
    const double gbps = t->have_calib ? t->calib.triad_gbps : 0;
    int vis = r.h - 2;
    if (t->table_top > v->nprof - 1)
        t->table_top = v->nprof - 1;
    for (int k = 0; k < vis && t->table_top + k < v->nprof; k++) {
        const LayerTime *lt = &v->prof[idx[t->table_top + k]];
        double per = lt->calls ? lt->seconds / (double)lt->calls : 0;
        layer_rates(lt, gf, gx, sizeof gf);
        double share = total > 0 ? lt->seconds / total : 0;
        char bar[64], ipc[16] = "n/a", miss[16] = "n/a", paper[16];
        layer_paper(lt, gflops, gbps, paper, sizeof paper);
        if (isfinite(lt->ipc))
            snprintf(ipc, sizeof ipc, "%.2f", lt->ipc);
        if (isfinite(lt->miss_rate))
            snprintf(miss, sizeof miss, "%.1f%%", 100 * lt->miss_rate);
        int bw = r.w - 80;
        if (bw > 40)
            bw = 40;
        bar[0] = '\0';
        if (bw >= 4)
            fmt_bar(bar, sizeof bar, share, bw);
        draw_put(r.y + 1 + k, r.x, r.w, A_NORMAL,
            "%-22s %8.3f %6.1f%% %10s %6s %6s %5s %6s   %s", lt->name, 1e3 * per, 100 * share, gf,
            gx, paper, ipc, miss, bar);
    }
    draw_put(r.y + r.h - 1, r.x, r.w, A_DIM, "%s%s%s",
        "GF/s: model = direct-conv FLOPs (PyTorch's count); exec = those run, where different; "
        "- elementwise; paper = time / time on paper",
        t->ctr.ipc_ok ? "" : "; IPC, miss n/a: ", t->ctr.ipc_ok ? "" : t->ctr.why);
}

const PanelClass panel_layers = {.name = "layers", .draw = layers_draw};
