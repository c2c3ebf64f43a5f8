/*
 * hist.c: session history, repeats, speedups and the --history
 * file (see hist.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/stats.h"
#include "common/options.h"
#include "tui/hist.h"
#include "common/config.h"

void hist_init(TuiHistory *h)
{
    h->n = 0;
    h->baseline = -1;
}

void hist_add(TuiHistory *h, const HistRow *r)
{
    if (h->n == HIST_MAX) {
        memmove(h->rows, h->rows + 1, sizeof h->rows[0] * (HIST_MAX - 1));
        h->n--;
        if (h->baseline >= 0)
            h->baseline--;
    }
    h->rows[h->n++] = *r;
}

int hist_same_config(const HistRow *a, const HistRow *b)
{
    return a->batch == b->batch && a->workers == b->workers && a->prefetch == b->prefetch &&
           a->threads == b->threads && a->augment == b->augment && a->epochs == b->epochs &&
           a->steps == b->steps && a->limit == b->limit;
}

const char *hist_why_not(const HistRow *r)
{
    if (!strcmp(r->state, "failed"))
        return "failed";
    if (r->live)
        return "live change";
    if (!(r->ips > 0))
        return "no step trained";
    return NULL;
}

static int comparable(const HistRow *r)
{
    return hist_why_not(r) == NULL;
}

int hist_group(const TuiHistory *h, int i, double *mean, double *sd)
{
    double *ips;
    size_t n = 0;

    *mean = NAN;
    *sd = NAN;
    if (i < 0 || i >= h->n || !comparable(&h->rows[i]))
        return 0;
    if (!(ips = malloc((size_t)h->n * sizeof *ips)))
        return 0;
    for (int k = 0; k < h->n; k++)
        if (comparable(&h->rows[k]) && hist_same_config(&h->rows[k], &h->rows[i]))
            ips[n++] = h->rows[k].ips;
    /* The statistics are util's (cnntop/stats.h), as every front end's. */
    *mean = stats_mean(ips, n);
    *sd = n > 1 ? stats_sd(ips, n) : 0.0;
    free(ips);
    return (int)n;
}

int hist_speedup(const TuiHistory *h, int i, double *ratio, double *err)
{
    double ma, sa, mb, sb;
    int na = hist_group(h, i, &ma, &sa), nb = hist_group(h, h->baseline, &mb, &sb);

    *ratio = NAN;
    *err = NAN;
    if (na == 0 || nb == 0)
        return -1;
    stats_ratio(ma, sa, mb, sb, ratio, err);
    if (na < 2 || nb < 2)
        *err = NAN; /* one run has no spread */
    return 0;
}

void hist_format_line(const HistRow *r, char *buf, size_t len)
{
    char aug[64];

    options_format_augment(r->augment, aug, sizeof aug);
    snprintf(buf, len,
             "when=%ld\trun=%d\tbatch=%d\tworkers=%d\tprefetch=%d\tthreads=%d\taugment=%s\tepochs=%d\t"
             "steps=%ld\tlimit=%ld\tlr=%.9g\tseed=%llu\twall=%.6g\timages=%ld\tsteps_done=%ld\t"
             "ips=%.6g\taccuracy=%.6g\tloss=%.6g\tstate=%s\tlive=%d",
             r->when, r->run, r->batch, r->workers, r->prefetch, r->threads, aug, r->epochs, r->steps,
             r->limit, r->lr, r->seed, r->wall, r->images, r->steps_done, r->ips, r->accuracy,
             r->loss, r->state, r->live);
}

/* Parses a number field; returns 0 or -1. */
static int num(const char *v, double *out)
{
    char *end;

    if (!strcmp(v, "nan")) {
        *out = NAN;
        return 0;
    }
    errno = 0;
    *out = strtod(v, &end);
    return *v && !*end && errno != ERANGE ? 0 : -1;
}

static int set_field(HistRow *r, const char *k, const char *v, char *err, size_t errlen)
{
    double x;

    if (!strcmp(k, "augment"))
        return options_parse_augment(v, &r->augment, err, errlen);
    if (!strcmp(k, "state")) {
        snprintf(r->state, sizeof r->state, "%s", v);
        return 0;
    }
    static const char *const numeric[] = {
        "when", "run", "batch", "workers", "prefetch", "threads", "epochs", "steps", "limit",
        "lr", "seed", "wall", "images", "steps_done", "ips", "accuracy", "loss", "live",
    };
    size_t i = 0;
    while (i < sizeof numeric / sizeof numeric[0] && strcmp(k, numeric[i]))
        i++;
    if (i == sizeof numeric / sizeof numeric[0])
        return 0; /* unknown keys: from a later version, ignored */
    if (num(v, &x)) {
        snprintf(err, errlen, "%s: '%.40s' is not a number", k, v);
        return -1;
    }
    if (!strcmp(k, "when")) r->when = (long)x;
    else if (!strcmp(k, "run")) r->run = (int)x;
    else if (!strcmp(k, "batch")) r->batch = (int)x;
    else if (!strcmp(k, "workers")) r->workers = (int)x;
    else if (!strcmp(k, "prefetch")) r->prefetch = (int)x;
    else if (!strcmp(k, "threads")) r->threads = (int)x;
    else if (!strcmp(k, "epochs")) r->epochs = (int)x;
    else if (!strcmp(k, "steps")) r->steps = (long)x;
    else if (!strcmp(k, "limit")) r->limit = (long)x;
    else if (!strcmp(k, "lr")) r->lr = x;
    else if (!strcmp(k, "seed")) r->seed = (unsigned long long)x;
    else if (!strcmp(k, "wall")) r->wall = x;
    else if (!strcmp(k, "images")) r->images = (long)x;
    else if (!strcmp(k, "steps_done")) r->steps_done = (long)x;
    else if (!strcmp(k, "ips")) r->ips = x;
    else if (!strcmp(k, "accuracy")) r->accuracy = x;
    else if (!strcmp(k, "loss")) r->loss = x;
    else r->live = (int)x;
    return 0;
}

int hist_parse_line(const char *line, HistRow *r, char *err, size_t errlen)
{
    char *buf = strdup(line);
    int rc = 0;

    memset(r, 0, sizeof *r);
    r->accuracy = NAN;
    snprintf(r->state, sizeof r->state, "finished");
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (char *save = NULL, *f = strtok_r(buf, "\t\n", &save); f && rc == 0;
         f = strtok_r(NULL, "\t\n", &save)) {
        char *eq = strchr(f, '=');
        if (!eq) {
            snprintf(err, errlen, "field '%.40s' is not key=value", f);
            rc = -1;
        } else {
            *eq = '\0';
            rc = set_field(r, f, eq + 1, err, errlen) ? -1 : 0;
        }
    }
    free(buf);
    if (rc == 0 && r->batch <= 0) {
        snprintf(err, errlen, "no batch size");
        rc = -1;
    }
    return rc;
}

int hist_load(TuiHistory *h, const char *path, char *err, size_t errlen)
{
    char *line = NULL, msg[256];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    FILE *f = fopen(path, "r");

    if (!f) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* getline: a line longer than any buffer is one line, not two. */
    while (getline(&line, &cap, f) >= 0) {
        HistRow r;
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (hist_parse_line(line, &r, msg, sizeof msg)) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
            rc = -1;
            break;
        }
        r.session = 0;
        hist_add(h, &r);
    }
    free(line);
    fclose(f);
    return rc;
}

int hist_save(const TuiHistory *h, const char *path, char *err, size_t errlen)
{
    size_t cap = 256 + (size_t)h->n * 600, n = 0;
    char *text = malloc(cap);
    int rc;

    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    n += (size_t)snprintf(text, cap,
                          "# cnntop run history: one run per line, tab-separated key=value.\n");
    for (int i = 0; i < h->n && n < cap; i++) {
        hist_format_line(&h->rows[i], text + n, cap - n);
        n += strlen(text + n);
        if (n + 1 < cap)
            text[n++] = '\n';
    }
    rc = settings_write_atomic(path, text, n < cap ? n : cap - 1, err, errlen);
    free(text);
    return rc;
}
