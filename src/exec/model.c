/*
 * model.c: the hook's layer window into an exec record (exec/model.h).
 *
 * The rows keep cnntop's own layer-table form (RecordLayer, "NAME fwd" and
 * "NAME bwd"), so that the summary, the exports and `report` print the
 * user's model as they print the engine's.  A module's backward FLOPs are
 * the hook's: as much as forward for the weights' gradient and again for
 * the input's where the input needs one (PyTorch's forward x 3, less the
 * first layer's input gradient, as cnntop's engine counts its own model).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/calibrate.h"
#include "exec/model.h"
#include "util/err.h"

/* One row: name and direction, seconds, calls, FLOPs (0: not counted). */
static int add_row(RunRecord *r, const HookLayer *h, const char *dir, double s, double flops)
{
    LayerTime lt;

    memset(&lt, 0, sizeof lt);
    snprintf(lt.name, sizeof lt.name, "%.*s%s%s", (int)(sizeof lt.name - 1 - strlen(dir) - 1),
             h->name, dir[0] ? " " : "", dir);
    lt.seconds = s;
    lt.calls = h->calls;
    lt.flops = flops;
    if (record_add_layer(r, &lt) != 0)
        return -CN_ENOMEM;
    snprintf(r->layers[r->n_layers - 1].kind, sizeof r->layers[0].kind, "%.*s",
             (int)sizeof r->layers[0].kind - 1, h->kind);
    return 0;
}

/* The peak and the time on paper's rates, when the cache has them for
 * the threads torch used. */
static void fill_calibration(RunRecord *r)
{
    Calibration c;

    if (r->threads_used > 0 && calibrate_load(r->threads_used, &c) == 0)
        record_set_calibration(r, &c);
}

int exec_model_fill(RunRecord *r, const HookModel *m)
{
    double per_image = 0;

    if (!m->complete || m->steps < 1)
        return 0;
    r->have_model = 1;
    r->model.first = m->first;
    r->model.steps = m->steps;
    r->model.step_in = isnan(m->pace_in) ? NAN : m->pace_in;
    r->model.step_out = isnan(m->pace_out) ? NAN : m->pace_out;
    r->model.steps_out = isnan(m->pace_out) ? -1 : m->pace_n;
    for (int i = 0; i < m->n; i++) {
        const HookLayer *h = &m->rows[i];
        int rc;
        if (!strcmp(h->kind, "optimizer"))
            rc = add_row(r, h, "", h->fwd, 0);
        else
            rc = add_row(r, h, "fwd", h->fwd, h->flops);
        if (rc == 0 && h->bwd > 0)
            rc = add_row(r, h, "bwd", h->bwd, h->bwd_flops);
        if (rc != 0)
            return rc;
        per_image += h->img_flops * (double)h->calls / (double)m->steps;
    }
    r->flops_per_image = per_image > 0 ? per_image : NAN;
    fill_calibration(r);
    return 0;
}
