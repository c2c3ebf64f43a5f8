/*
 * tui_export.c: the `e` key: the dashboard's last run as a run record
 * (src/include/cnntop/record.h), in the format of the file's extension.
 * Everything comes from what the dashboard already copied (tui_poll): the
 * run's view, its samples and segments, its profile and evaluation.
 */
#include <math.h>
#include <stdio.h>

#include "cnntop/record.h"
#include "runner.h"
#include "tui_export.h"

static int fill(const Tui *t, RunRecord *r)
{
    const RunView *v = &t->rv;
    RunConfig cfg = v->cfg;
    int rc = 0;

    cfg.data_dir = t->engine ? engine_data_dir(t->engine) : NULL;
    rc |= record_set_config(r, &cfg);
    if (cfg.data_dir)
        rc |= record_set_data_dir(r, cfg.data_dir);
    r->train_images = v->train_images;
    r->test_images = v->test_images;
    r->threads_used = v->threads;
    r->machine = t->mi;
    r->flops_per_image = t->flops_per_image;
    r->flops_executed_per_image = t->flops_executed_per_image;
    if (t->have_calib)
        runner_set_peak(r, &t->calib);
    r->train = v->st;
    r->have_eval = v->have_ev;
    r->eval = v->ev;
    r->peak_rss_kib = engine_peak_rss_kib();
    if (v->state == RUN_FAILED)
        rc |= record_set_error(r, v->reason);
    for (int i = 0; i < t->nsamples; i++)
        rc |= record_add_sample(r, &t->samples[i], -1, NAN, NAN);
    for (int i = 0; i < t->nsegs; i++)
        rc |= record_add_segment(r, &t->segs[i]);
    for (int i = 0; i < v->nprof; i++) {
        rc |= record_add_layer(r, &v->prof[i], v->prof[i].flops > 0 ? v->prof[i].flops : NAN);
    }
    return rc;
}

int tui_export(const Tui *t, const char *path, char *err, size_t errlen)
{
    RunRecord r;
    ExportFormat fmt;

    if (t->rv.seq && t->rv.state < RUN_FINISHED) {
        snprintf(err, errlen, "run %d is going: export it when it ends (x stops it)", t->rv.seq);
        return -1;
    }
    if (t->rv.seq == 0 || !t->rv.have_st) {
        snprintf(err, errlen, "no finished run to export yet");
        return -1;
    }
    if (export_format(path, &fmt, err, errlen) != 0)
        return -1;
    record_init(&r);
    int rc = fill(t, &r);
    if (rc != 0)
        snprintf(err, errlen, "%s: out of memory building the record", path);
    else
        rc = record_export(&r, path, t->o->force, err, errlen);
    record_done(&r);
    return rc ? -1 : 0;
}
