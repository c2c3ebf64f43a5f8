/*
 * exec_layers_view.c: the exec dashboard's layers view (l): the user's
 * model as the hook's layer window measured it, in the columns of the
 * engine dashboard's layers view (panel_layers.c): each module's forward
 * and backward ms per step, its share with a bar, the model's GF/s
 * forward and backward (Conv and Linear), calls, the slowest first.  Before the window has closed it
 * says which steps it covers.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/exec_dash.h"

static const HookLayer *sort_rows;

static int by_time(const void *a, const void *b)
{
    const HookLayer *x = &sort_rows[*(const int *)a], *y = &sort_rows[*(const int *)b];
    double tx = x->fwd + x->bwd, ty = y->fwd + y->bwd;

    return tx < ty ? 1 : tx > ty ? -1 : 0;
}

/* The model's GF/s of flops over s ("-" when not counted). */
static void rate(char *buf, size_t len, double flops, double s)
{
    if (flops > 0 && s > 0)
        snprintf(buf, len, "%.1f", flops / s * 1e-9);
    else
        snprintf(buf, len, "-");
}

static void draw_row(ExecDash *d, Rect r, int y, const HookLayer *h, double total)
{
    const HookModel *m = &d->model;
    double steps = (double)m->steps, share = total > 0 ? (h->fwd + h->bwd) / total : 0;
    char gf[16], gb[16], bar[64] = "";
    int bw = r.w - 84;

    rate(gf, sizeof gf, h->flops, h->fwd);
    rate(gb, sizeof gb, h->bwd_flops, h->bwd);
    if (bw > 40)
        bw = 40;
    if (bw >= 4)
        fmt_bar(bar, sizeof bar, share, bw);
    draw_put(y, r.x, r.w, A_NORMAL, "%-20.20s %-16.16s %7.3f %7.3f %5.1f%% %6s %6s %5ld   %s",
             h->name, h->kind, 1e3 * h->fwd / steps, 1e3 * h->bwd / steps, 100 * share, gf, gb,
             h->calls, bar);
}

void exec_view_layers(ExecDash *d, Rect r)
{
    const HookModel *m = &d->model;
    int idx[HOOK_LAYERS_MAX];
    double total = 0;

    if (r.h < 2)
        return;
    if (!m->complete) {
        draw_title(&d->ui, r, "Layers", "the model's modules (l: back to the processes)");
        draw_put(r.y + 1, r.x, r.w, A_DIM, "%s",
                 d->s.hook.feed.hello
                     ? "n/a: the layer window (exec --layers) has not closed yet"
                     : "n/a: no PyTorch training seen by the hook (yet)");
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "optimizer steps %d..%ld, the slowest first (l: back to the "
             "processes)", m->first, m->first + m->steps - 1);
    draw_title(&d->ui, r, "Layers", what);
    draw_put(r.y + 1, r.x, r.w, A_DIM, "%-20s %-16s %7s %7s %6s %6s %6s %5s", "module", "kind",
             "fwd ms", "bwd ms", "share", "fwd GF", "bwd GF", "calls");
    for (int i = 0; i < m->n; i++) {
        idx[i] = i;
        total += m->rows[i].fwd + m->rows[i].bwd;
    }
    sort_rows = m->rows;
    qsort(idx, (size_t)m->n, sizeof idx[0], by_time);
    for (int k = 0; k < m->n && 2 + k < r.h; k++)
        draw_row(d, r, r.y + 2 + k, &m->rows[idx[k]], total);
}
