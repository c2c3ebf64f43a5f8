/*
 * chart.c: scaling, bucketing and plotting of the dashboard's charts
 * (see chart.h for the cell encoding).
 */
#include <math.h>
#include <string.h>

#include "tui/chart.h"

double chart_nice_max(double v)
{
    static const double steps[] = {1.0, 2.0, 2.5, 5.0, 10.0};

    if (!(v > 0) || !isfinite(v))
        return 1.0;
    double p = pow(10.0, floor(log10(v)));
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v * (1 - 1e-12))
            return steps[i] * p;
    return 10.0 * p;
}

int chart_bucket(const double *t, const double *v, int n, double t0, double t1, double *out,
                 int ncols)
{
    int filled = 0;

    if (!(t1 > t0) || ncols <= 0)
        return 0;
    /* out holds the running sums; counts live on the stack, so a chart is
     * at most CHART_MAX_BUCKETS dot columns wide (wider ones are clipped). */
    int counts[CHART_MAX_BUCKETS] = {0};
    int nc = ncols > CHART_MAX_BUCKETS ? CHART_MAX_BUCKETS : ncols;
    for (int c = 0; c < nc; c++) {
        out[c] = 0.0;
        counts[c] = 0;
    }
    double w = (t1 - t0) / nc;
    for (int i = 0; i < n; i++) {
        if (!(t[i] >= t0 && t[i] < t1) || !isfinite(v[i]))
            continue;
        int c = (int)((t[i] - t0) / w);
        if (c >= nc)
            c = nc - 1;
        out[c] += v[i];
        counts[c]++;
    }
    for (int c = 0; c < ncols; c++) {
        if (c < nc && counts[c]) {
            out[c] /= counts[c];
            filled++;
        } else
            out[c] = NAN;
    }
    return filled;
}

void chart_fill_gaps(double *vals, int n)
{
    int last = -1;

    for (int i = 0; i < n; i++) {
        if (isnan(vals[i]))
            continue;
        for (int j = last + 1; last >= 0 && j < i; j++)
            vals[j] = vals[last];
        last = i;
    }
}

/* Height of a value in levels 0..max. */
static int level_of(double v, double lo, double hi, int max)
{
    if (isnan(v) || !(hi > lo) || v <= lo)
        return 0;
    double f = (v - lo) / (hi - lo);
    int h = (int)(f * max + 0.5);
    if (h < 1)
        h = 1;
    return h > max ? max : h;
}

/* Braille dot bits of dot row r (0 top .. 3 bottom) in dot column dc (0, 1). */
static unsigned char braille_bit(int r, int dc)
{
    static const unsigned char left[4] = {0x01, 0x02, 0x04, 0x40};
    static const unsigned char right[4] = {0x08, 0x10, 0x20, 0x80};
    return dc ? right[r] : left[r];
}

static void plot_braille(const double *vals, double lo, double hi, int rows, int cols,
                         unsigned char *cells)
{
    int dots = rows * 4;

    for (int x = 0; x < 2 * cols; x++) {
        int h = level_of(vals[x], lo, hi, dots);
        for (int d = 0; d < h; d++) {
            int y = dots - 1 - d; /* dot row from the top */
            cells[(y / 4) * cols + x / 2] |= braille_bit(y % 4, x % 2);
        }
    }
}

static void plot_ascii(const double *vals, double lo, double hi, int rows, int cols,
                       unsigned char *cells)
{
    for (int x = 0; x < cols; x++) {
        int h = level_of(vals[x], lo, hi, rows * 4); /* quarter cells */
        for (int r = 0; r < rows && h > 0; r++, h -= 4) {
            int y = rows - 1 - r;
            cells[y * cols + x] = h >= 4 ? '#' : h >= 2 ? ':' : '.';
        }
    }
}

void chart_plot(const double *vals, double lo, double hi, int rows, int cols, int braille,
                unsigned char *cells)
{
    if (rows <= 0 || cols <= 0)
        return;
    memset(cells, braille ? 0 : ' ', (size_t)rows * (size_t)cols);
    if (braille)
        plot_braille(vals, lo, hi, rows, cols, cells);
    else
        plot_ascii(vals, lo, hi, rows, cols, cells);
}

const char *chart_cell_text(unsigned char cell, int braille, char out[4])
{
    if (!braille) {
        out[0] = (char)cell;
        out[1] = '\0';
        return out;
    }
    if (cell == 0) {
        out[0] = ' ';
        out[1] = '\0';
        return out;
    }
    unsigned cp = 0x2800u + cell;
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    out[3] = '\0';
    return out;
}

int chart_cell_blank(unsigned char cell, int braille)
{
    return braille ? cell == 0 : cell == ' ';
}

void chart_series_clear(Series *s)
{
    s->n = 0;
}

void chart_series_add(Series *s, double t, double v)
{
    if (s->n == CHART_SERIES_CAP) {
        for (int i = 0; i < CHART_SERIES_CAP / 2; i++) {
            double a = s->v[2 * i], b = s->v[2 * i + 1];
            s->t[i] = s->t[2 * i + 1];
            s->v[i] = isnan(a) ? b : isnan(b) ? a : 0.5 * (a + b);
        }
        s->n = CHART_SERIES_CAP / 2;
    }
    s->t[s->n] = t;
    s->v[s->n] = v;
    s->n++;
}

int chart_series_has_value(const Series *s)
{
    for (int i = 0; i < s->n; i++)
        if (!isnan(s->v[i]))
            return 1;
    return 0;
}
