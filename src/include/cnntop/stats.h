/*
 * stats.h: statistics over repeated runs.
 *
 * cnntop repeats a configuration (--runs R) and compares configurations the
 * way hyperfine compares commands: mean and standard deviation, median,
 * range, outliers by the modified Z-score, a warning when the machine is too
 * noisy for the figures to mean much, the speedup of one configuration over
 * another with its uncertainty, and a test that says whether two
 * configurations can be told apart at all.
 *
 * All functions take plain arrays of doubles (e.g. seconds or images/s),
 * never modify them and never print.  A figure that cannot be computed from
 * the data given (the standard deviation of one value, anything of zero
 * values) is NAN, never 0, so that "unknown" stays distinct from "none".
 */
#ifndef CNNTOP_STATS_H
#define CNNTOP_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The modified Z-score of Iglewicz and Hoaglin: M = 0.6745 (x - median) / MAD,
 * where MAD is the median absolute deviation.  |M| above this cut-off marks
 * an outlier; 3.5 is the value Iglewicz and Hoaglin recommend.  (hyperfine
 * uses the same score with a far more lenient cut-off for its warning.)
 */
#define STATS_OUTLIER_Z 3.5

/*
 * A set of runs whose coefficient of variation (sd / mean) exceeds this is
 * "noisy": 5% run-to-run spread on a training step means something else is
 * competing for the machine (other processes, frequency scaling, a busy
 * hypervisor), and differences smaller than that spread are not findings.
 */
#define STATS_NOISY_CV 0.05

/* Welch's t-test is run two-sided at this significance level (95%). */
#define STATS_ALPHA 0.05

/* The usual figures of a sample. */
typedef struct StatsSummary {
    size_t n;       /* values */
    double mean;    /* NAN if n == 0 */
    double sd;      /* standard deviation with n-1; NAN if n < 2 */
    double median;  /* middle value, mean of the two middle ones for even n */
    double min, max;
} StatsSummary;

/* Mean of x[0..n); NAN for n == 0. */
double stats_mean(const double *x, size_t n);

/* Sample standard deviation (divisor n-1); NAN for n < 2. */
double stats_sd(const double *x, size_t n);

/* Median; NAN for n == 0 or when the scratch copy cannot be allocated. */
double stats_median(const double *x, size_t n);

/* Smallest and largest value; NAN for n == 0. */
double stats_min(const double *x, size_t n);
double stats_max(const double *x, size_t n);

/* Fills *out with all of the above.  Returns 0, or -1 when the median's
 * scratch copy could not be allocated (median is NAN then). */
int stats_summarize(const double *x, size_t n, StatsSummary *out);

/*
 * Marks outliers by the modified Z-score: flags[i] = 1 when
 * |0.6745 (x[i] - median) / MAD| > threshold (e.g. STATS_OUTLIER_Z), else 0.
 * When MAD is 0 (more than half of the values are equal) the score uses the
 * mean absolute deviation from the median instead, scaled by 1.253314 to
 * stay consistent with sigma; when that is 0 too, no value is an outlier.
 * flags may be NULL.  Returns the number of outliers, or -1 on allocation
 * failure.  Needs n >= 3 to find anything.
 */
long stats_outliers(const double *x, size_t n, double threshold, unsigned char *flags);

/* 1 when the sample's coefficient of variation sd/mean exceeds
 * STATS_NOISY_CV; 0 when not, or when it is unknown (n < 2, mean 0). */
int stats_noisy(const StatsSummary *s);

/*
 * The ratio a/b of two means and its uncertainty, propagated from both
 * standard deviations as for independent errors:
 *   ratio = a / b,  u = ratio * sqrt((sa/a)^2 + (sb/b)^2).
 * For times, the speedup of X over Y is time_Y / time_X; for throughputs it
 * is ips_X / ips_Y.  A NAN sd (one run) gives a NAN uncertainty; b == 0
 * gives a NAN ratio.
 */
void stats_ratio(double a, double sa, double b, double sb, double *ratio, double *u);

/* The result of Welch's unequal-variances t-test. */
typedef struct StatsWelch {
    double t;            /* (mean_a - mean_b) / standard error */
    double df;           /* Welch-Satterthwaite degrees of freedom */
    double p;            /* two-sided p-value */
    int distinguishable; /* 1 when p < STATS_ALPHA */
} StatsWelch;

/*
 * Welch's t-test of "a and b have the same mean", two-sided.  Needs n >= 2
 * on both sides: otherwise returns -1 and sets p to NAN and distinguishable
 * to 0 (too few runs to tell).  When both standard deviations are 0 the
 * samples are distinguishable exactly when the means differ.  Returns 0.
 */
int stats_welch(const StatsSummary *a, const StatsSummary *b, StatsWelch *out);

/* Two-sided tail probability P(|T| > |t|) of Student's t with df > 0
 * degrees of freedom (df need not be whole). */
double stats_t_tail2(double t, double df);

#ifdef __cplusplus
}
#endif
#endif
