/*
 * figures.c: figures derived from a record for its exports (figures.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/fields.h"
#include "record/figures.h"
#include "util/err.h"

double record_mean_cpu(const RunRecord *r, int which)
{
    double s = 0;

    if (r->n_repeats == 0)
        return which ? r->train.cpu_sys : r->train.cpu_user;
    for (size_t i = 0; i < r->n_repeats; i++)
        s += which ? r->repeats[i].system : r->repeats[i].user;
    return s / (double)r->n_repeats;
}

int record_times_summary(const RunRecord *r, double **times, size_t *n, StatsSummary *s)
{
    size_t cap = r->n_repeats ? r->n_repeats : 1;

    *n = 0;
    *times = malloc(cap * sizeof **times);
    if (!*times)
        return -CN_ENOMEM;
    *n = record_times(r, *times, cap);
    return stats_summarize(*times, *n, s) == 0 ? 0 : -CN_ENOMEM;
}

void record_throughput_summary(const RunRecord *r, StatsSummary *s)
{
    size_t cap = r->n_repeats ? r->n_repeats : 1;
    double *v = malloc(cap * sizeof *v);

    if (!v) {
        memset(s, 0, sizeof *s);
        s->mean = s->sd = s->median = s->min = s->max = NAN;
        return;
    }
    stats_summarize(v, record_throughputs(r, v, cap), s);
    free(v);
}

double record_mean_accuracy(const RunRecord *r)
{
    double s = 0;
    size_t n = 0;

    for (size_t i = 0; i < r->n_repeats; i++)
        if (!isnan(r->repeats[i].accuracy))
            s += r->repeats[i].accuracy, n++;
    if (n)
        return s / (double)n;
    return r->have_eval ? r->eval.accuracy : NAN;
}

void record_augment_text(unsigned aug, char *buf, size_t len)
{
    const FieldNames *names = &record_aug_names;
    size_t o = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < names->n; i++)
        if (aug & names->v[i].value)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "",
                                  names->v[i].name);
    if (!o)
        snprintf(buf, len, "none");
}
