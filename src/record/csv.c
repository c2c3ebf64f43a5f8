/*
 * csv.c: a record as CSV (record.h): one row per interval sample for a run,
 * one row per configuration for a sweep (hyperfine's --export-csv columns
 * first).  Unknown figures are empty cells, never 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"
#include "cnntop/figures.h"
#include "record/formats.h"
#include "util/err.h"

static void csv_float(TextBuf *t, float x, const char *sep)
{
    char b[64];

    textbuf_printf(t, "%s%s", json_format_float(x, b, sizeof b) == 0 ? b : "", sep);
}

int record_csv_run(const RunRecord *r, char **out, size_t *len)
{
    TextBuf text = {0}, *t = &text;

    textbuf_printf(t, "t,dt,epoch,step,images_per_s,loss,queue_fill,data_wait_share,workers,batch,"
               "segment,ipc,miss_rate\n");
    for (size_t i = 0; i < r->n_samples; i++) {
        const RecordSample *rs = &r->samples[i];
        const Sample *s = &rs->s;
        record_csv_num(t, s->t, ",");
        record_csv_num(t, s->dt, ",");
        if (rs->epoch >= 0)
            textbuf_printf(t, "%d,", rs->epoch);
        else
            textbuf_printf(t, ",");
        textbuf_printf(t, "%ld,", s->step);
        csv_float(t, s->images_per_s, ",");
        csv_float(t, s->loss, ",");
        csv_float(t, s->queue_fill < 0 ? NAN : s->queue_fill, ",");
        csv_float(t, s->data_wait_share, ",");
        textbuf_printf(t, "%d,%d,%d,", s->workers, s->batch, s->segment);
        record_csv_num(t, rs->ipc, ",");
        record_csv_num(t, rs->miss_rate, "\n");
    }
    return record_text_finish(t, 0, out, len);
}

/* One row of the sweep table. */
static int csv_sweep_row(TextBuf *t, const RunRecord *r)
{
    char label[160], aug[64];
    RecordFigures fg;

    if (record_figures(r, &fg) != 0)
        return -CN_ENOMEM;
    const StatsSummary s = fg.time, ips = fg.ips;
    size_t nt = s.n;
    record_csv_str(t, record_label(r, label, sizeof label), ",");
    record_csv_num(t, s.mean, ",");
    record_csv_num(t, s.sd, ",");
    record_csv_num(t, s.median, ",");
    record_csv_num(t, record_mean_cpu(r, 0), ",");
    record_csv_num(t, record_mean_cpu(r, 1), ",");
    record_csv_num(t, s.min, ",");
    record_csv_num(t, s.max, ",");
    record_augment_text(r->config.augment, aug, sizeof aug);
    textbuf_printf(t, "%d,%d,%d,%d,", r->config.batch, r->config.workers, r->config.prefetch,
            r->threads_used);
    record_csv_str(t, aug, ",");
    textbuf_printf(t, "%zu,", nt);
    record_csv_num(t, ips.mean, ",");
    record_csv_num(t, ips.sd, ",");
    record_csv_num(t, record_mean_accuracy(r), ",");
    record_csv_num(t, record_mfu(r, ips.mean), ",");
    record_csv_num(t, record_executed_share(r, ips.mean), "\n");
    return 0;
}

int record_csv_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    TextBuf text = {0}, *t = &text;
    int rc = 0;

    textbuf_printf(t, "command,mean,stddev,median,user,system,min,max,batch,workers,prefetch,"
               "threads,augment,runs,images_per_s,images_per_s_stddev,accuracy,mfu,"
               "executed_share\n");
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = csv_sweep_row(t, runs[i]);
    return record_text_finish(t, rc, out, len);
}
