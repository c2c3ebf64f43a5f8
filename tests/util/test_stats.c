/*
 * test_stats.c: the statistics of repeated runs against values worked out
 * by hand (shown beside each check), and Student's t tail against its
 * closed forms for 1 and 2 degrees of freedom.
 */
#include <math.h>

#include "check.h"
#include "cnntop/stats.h"

static void test_basic(void)
{
    /* mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; sd = sqrt(32/7) */
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    const double odd[] = {3, 1, 2};
    StatsSummary s;

    CHECK_NEAR(stats_mean(x, 8), 5.0, 1e-15);
    CHECK_NEAR(stats_sd(x, 8), sqrt(32.0 / 7.0), 1e-15);
    CHECK_NEAR(stats_sd(x, 8), 2.138089935299395, 1e-12);
    CHECK_NEAR(stats_median(x, 8), 4.5, 0);     /* (4 + 5) / 2 */
    CHECK_NEAR(stats_median(odd, 3), 2.0, 0);   /* unsorted input */
    CHECK_NEAR(stats_min(x, 8), 2.0, 0);
    CHECK_NEAR(stats_max(x, 8), 9.0, 0);
    CHECK(odd[0] == 3 && odd[1] == 1); /* input untouched */

    CHECK_INT(stats_summarize(x, 8, &s), ==, 0);
    CHECK_INT(s.n, ==, 8);
    CHECK_NEAR(s.mean, 5.0, 1e-15);
    CHECK_NEAR(s.median, 4.5, 0);

    /* Unknown stays unknown. */
    CHECK(isnan(stats_mean(x, 0)));
    CHECK(isnan(stats_sd(x, 1)));
    CHECK(isnan(stats_median(x, 0)));
    CHECK(isnan(stats_min(x, 0)) && isnan(stats_max(x, 0)));
    stats_summarize(x, 1, &s);
    CHECK(isnan(s.sd) && s.mean == 2 && s.median == 2);

    /* Spread tiny against the mean: the two-pass sd keeps its digits. */
    const double big[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    CHECK_NEAR(stats_sd(big, 3), 1.0, 1e-9);
}

static void test_outliers(void)
{
    /* median 10; |dev| sorted 0 0 .1 .1 .2 .2 20 -> MAD .1, sigma ~ .1/.6745;
     * 30 scores 20/.148 = 135, 10.2 scores 1.35. */
    const double x[] = {10, 10.1, 9.9, 10.2, 9.8, 10, 30};
    /* MAD 0: mean absolute deviation 0.2, sigma ~ 0.2507; 6 scores 3.99. */
    const double flat[] = {5, 5, 5, 5, 6};
    const double same[] = {7, 7, 7, 7};
    unsigned char f[8];

    CHECK_INT(stats_outliers(x, 7, STATS_OUTLIER_Z, f), ==, 1);
    CHECK(f[6] == 1 && f[0] == 0 && f[3] == 0 && f[4] == 0);
    CHECK_INT(stats_outliers(x, 7, 200, NULL), ==, 0); /* threshold is used */
    CHECK_INT(stats_outliers(flat, 5, STATS_OUTLIER_Z, f), ==, 1);
    CHECK(f[4] == 1 && f[0] == 0);
    CHECK_INT(stats_outliers(flat, 5, 4.0, f), ==, 0);
    CHECK_INT(stats_outliers(same, 4, STATS_OUTLIER_Z, f), ==, 0);
    CHECK_INT(stats_outliers(x, 2, STATS_OUTLIER_Z, f), ==, 0);
}

static void test_noisy(void)
{
    StatsSummary s = {.n = 5, .mean = 100, .sd = 4};

    CHECK(!stats_noisy(&s)); /* CV 4% */
    s.sd = 6;
    CHECK(stats_noisy(&s)); /* CV 6% */
    s.n = 1;
    s.sd = NAN;
    CHECK(!stats_noisy(&s));
}

static void test_ratio(void)
{
    double r, u;

    /* 10 +- 1 over 5 +- 0.5: 2 * sqrt(0.1^2 + 0.1^2) = 0.28284271 */
    stats_ratio(10, 1, 5, 0.5, &r, &u);
    CHECK_NEAR(r, 2.0, 1e-15);
    CHECK_NEAR(u, 0.282842712474619, 1e-12);
    /* hyperfine's example shape: 11.4 +- 0.2 against 1.2 +- 0.4 */
    stats_ratio(11.4, 0.2, 1.2, 0.4, &r, &u);
    CHECK_NEAR(r, 9.5, 1e-12);
    CHECK_NEAR(u, 9.5 * sqrt(pow(0.2 / 11.4, 2) + pow(0.4 / 1.2, 2)), 1e-12);
    stats_ratio(3, NAN, 1.5, 0.1, &r, &u);
    CHECK_NEAR(r, 2.0, 1e-15);
    CHECK(isnan(u));
    stats_ratio(3, 0.1, 0, 0.1, &r, &u);
    CHECK(isnan(r) && isnan(u));
}

static void test_t(void)
{
    /* df = 1 (Cauchy): P(|T| > t) = 1 - 2 atan(t) / pi; df = 2: 1 - t / sqrt(2 + t^2). */
    for (double t = 0.25; t < 20; t *= 1.7) {
        CHECK_NEAR(stats_t_tail2(t, 1), 1 - 2 * atan(t) / M_PI, 1e-12);
        CHECK_NEAR(stats_t_tail2(-t, 2), 1 - t / sqrt(2 + t * t), 1e-12);
    }
    CHECK_NEAR(stats_t_tail2(1, 1), 0.5, 1e-14);
    CHECK_NEAR(stats_t_tail2(0, 5), 1.0, 1e-14);
    /* By numerical integration of the density (Python, 2e5 points). */
    CHECK_NEAR(stats_t_tail2(2, 8), 0.0805162379573, 1e-9);
    CHECK_NEAR(stats_t_tail2(1.5, 3.7), 0.2135981692022, 1e-9);
    CHECK_NEAR(stats_t_tail2(3, 30), 0.0053899640656, 1e-9);
    /* The 97.5% quantile of t with 8 df is 2.306004: p = 0.05 there. */
    CHECK_NEAR(stats_t_tail2(2.306004, 8), 0.05, 1e-6);
}

static void test_welch(void)
{
    /* Means 3 and 5, both sd sqrt(2.5): se = 1, t = -2, df = 1 / (2 * 0.5^2 / 4) = 8. */
    const double a[] = {1, 2, 3, 4, 5}, b[] = {3, 4, 5, 6, 7};
    const double c[] = {10, 10.1, 9.9, 10.05, 9.95}, d[] = {11, 11.1, 10.9, 11.05, 10.95};
    StatsSummary sa, sb, sc, sd;
    StatsWelch w;

    stats_summarize(a, 5, &sa);
    stats_summarize(b, 5, &sb);
    stats_summarize(c, 5, &sc);
    stats_summarize(d, 5, &sd);
    CHECK_INT(stats_welch(&sa, &sb, &w), ==, 0);
    CHECK_NEAR(w.t, -2.0, 1e-12);
    CHECK_NEAR(w.df, 8.0, 1e-12);
    CHECK_NEAR(w.p, 0.0805162379573, 1e-9);
    CHECK(!w.distinguishable);
    CHECK_INT(stats_welch(&sc, &sd, &w), ==, 0);
    CHECK(w.distinguishable && w.p < 1e-6);
    CHECK_INT(stats_welch(&sc, &sc, &w), ==, 0);
    CHECK(!w.distinguishable && w.p == 1.0);

    /* Unequal variances and sizes: df by Welch-Satterthwaite, by hand:
     * va = 4/4 = 1, vb = 1/2 = 0.5 -> df = 2.25 / (1/3 + 0.25/1) = 3.857142857 */
    StatsSummary e = {.n = 4, .mean = 10, .sd = 2}, f = {.n = 2, .mean = 12, .sd = 1};
    CHECK_INT(stats_welch(&e, &f, &w), ==, 0);
    CHECK_NEAR(w.df, 2.25 / (1.0 / 3 + 0.25), 1e-12);
    CHECK_NEAR(w.t, -2 / sqrt(1.5), 1e-12);

    /* Zero spread on both sides: distinguishable exactly when the means differ. */
    StatsSummary g = {.n = 3, .mean = 1, .sd = 0}, h = {.n = 3, .mean = 2, .sd = 0};
    CHECK_INT(stats_welch(&g, &h, &w), ==, 0);
    CHECK(w.distinguishable);
    CHECK_INT(stats_welch(&g, &g, &w), ==, 0);
    CHECK(!w.distinguishable);

    /* One run is too few to tell. */
    StatsSummary one = {.n = 1, .mean = 1, .sd = NAN};
    CHECK_INT(stats_welch(&one, &sa, &w), ==, -1);
    CHECK(!w.distinguishable && isnan(w.p));
}

int main(void)
{
    test_basic();
    test_outliers();
    test_noisy();
    test_ratio();
    test_t();
    test_welch();
    return check_report();
}
