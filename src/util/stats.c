/*
 * stats.c: mean, spread, outliers, speedup and Welch's t-test over the
 * figures of repeated runs.  See stats.h for the definitions and the
 * thresholds, and why they were chosen.
 *
 * Student's t tail comes from the regularised incomplete beta function,
 * evaluated by its continued fraction (modified Lentz method), which
 * converges quickly on the side of the symmetry point where it is used.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/stats.h"

double stats_mean(const double *x, size_t n)
{
    double s = 0;

    if (n == 0)
        return NAN;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s / (double)n;
}

double stats_sd(const double *x, size_t n)
{
    double m = stats_mean(x, n), s = 0;

    if (n < 2)
        return NAN;
    /* Two passes: the textbook one-pass formula loses all its digits when
     * the spread is tiny against the mean, as it is for run times. */
    for (size_t i = 0; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (double)(n - 1));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Median of an array that may be reordered. */
static double median_inplace(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double stats_median(const double *x, size_t n)
{
    double *v, m;

    if (n == 0)
        return NAN;
    v = malloc(n * sizeof *v);
    if (!v)
        return NAN;
    memcpy(v, x, n * sizeof *v);
    m = median_inplace(v, n);
    free(v);
    return m;
}

double stats_min(const double *x, size_t n)
{
    double m = n ? x[0] : NAN;

    for (size_t i = 1; i < n; i++)
        if (x[i] < m)
            m = x[i];
    return m;
}

double stats_max(const double *x, size_t n)
{
    double m = n ? x[0] : NAN;

    for (size_t i = 1; i < n; i++)
        if (x[i] > m)
            m = x[i];
    return m;
}

int stats_summarize(const double *x, size_t n, StatsSummary *out)
{
    out->n = n;
    out->mean = stats_mean(x, n);
    out->sd = stats_sd(x, n);
    out->median = stats_median(x, n);
    out->min = stats_min(x, n);
    out->max = stats_max(x, n);
    return n > 0 && isnan(out->median) && !isnan(out->mean) ? -1 : 0;
}

long stats_outliers(const double *x, size_t n, double threshold, unsigned char *flags)
{
    double *dev, med, scale;
    long count = 0;

    if (flags)
        memset(flags, 0, n);
    if (n < 3)
        return 0;
    dev = malloc(n * sizeof *dev);
    if (!dev)
        return -1;
    med = stats_median(x, n);
    if (isnan(med)) {
        free(dev);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(x[i] - med);
    /* sigma ~ MAD / 0.6745 for normal data; when MAD is 0, sigma ~
     * 1.253314 * mean absolute deviation (sqrt(pi/2)). */
    scale = median_inplace(dev, n) / 0.6745;
    if (!(scale > 0)) {
        for (size_t i = 0; i < n; i++)
            dev[i] = fabs(x[i] - med);
        scale = 1.253314 * stats_mean(dev, n);
    }
    if (scale > 0) {
        for (size_t i = 0; i < n; i++) {
            int out = fabs(x[i] - med) / scale > threshold;
            count += out;
            if (flags)
                flags[i] = (unsigned char)out;
        }
    }
    free(dev);
    return count;
}

int stats_noisy(const StatsSummary *s)
{
    if (s->n < 2 || !(fabs(s->mean) > 0) || isnan(s->sd))
        return 0;
    return s->sd / fabs(s->mean) > STATS_NOISY_CV;
}

void stats_ratio(double a, double sa, double b, double sb, double *ratio, double *u)
{
    if (b == 0 || isnan(a) || isnan(b)) {
        *ratio = NAN;
        *u = NAN;
        return;
    }
    *ratio = a / b;
    if (a == 0) {
        /* The relative error of a is undefined; the absolute one is not. */
        *u = sa / fabs(b);
        return;
    }
    *u = fabs(*ratio) * sqrt((sa / a) * (sa / a) + (sb / b) * (sb / b));
}

/* Continued fraction of the incomplete beta function (Lentz's method). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1), h;

    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    h = d;
    for (int m = 1; m <= 1000; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        for (int half = 0; half < 2; half++) {
            d = 1 + num * d;
            if (fabs(d) < tiny)
                d = tiny;
            c = 1 + num / c;
            if (fabs(c) < tiny)
                c = tiny;
            d = 1 / d;
            h *= d * c;
            num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        }
        if (fabs(d * c - 1) < eps)
            break;
    }
    return h;
}

/* The regularised incomplete beta function I_x(a, b), 0 <= x <= 1. */
static double beta_inc(double a, double b, double x)
{
    double front;

    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double stats_t_tail2(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    return beta_inc(df / 2, 0.5, df / (df + t * t));
}

int stats_welch(const StatsSummary *a, const StatsSummary *b, StatsWelch *out)
{
    double va, vb, se2;

    memset(out, 0, sizeof *out);
    out->t = out->df = out->p = NAN;
    if (a->n < 2 || b->n < 2 || isnan(a->sd) || isnan(b->sd))
        return -1;
    va = a->sd * a->sd / (double)a->n;
    vb = b->sd * b->sd / (double)b->n;
    se2 = va + vb;
    if (se2 == 0) {
        out->p = a->mean == b->mean ? 1.0 : 0.0;
        out->t = a->mean == b->mean ? 0.0 : (a->mean > b->mean ? INFINITY : -INFINITY);
        out->df = (double)(a->n + b->n - 2);
        out->distinguishable = a->mean != b->mean;
        return 0;
    }
    out->t = (a->mean - b->mean) / sqrt(se2);
    out->df = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
    out->p = stats_t_tail2(out->t, out->df);
    out->distinguishable = out->p < STATS_ALPHA;
    return 0;
}
