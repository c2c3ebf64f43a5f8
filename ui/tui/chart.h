/*
 * chart.h: time-series charts as text, braille or ASCII.
 *
 * Pure functions, no curses, unit-tested.  A chart is drawn in three
 * steps: chart_bucket() averages (t, v) samples into one value per dot
 * column over a time window, chart_nice_max() picks the y-axis top, and
 * chart_plot() fills a grid of cells, rows x cols, as an area chart:
 *
 *   braille: each cell is 2 dot columns x 4 dot rows (U+2800 + bits), so
 *            nvals = 2 * cols values give rows * 4 levels of height;
 *   ascii:   each cell is one value column; '#' is a full cell, ':' and
 *            '.' a top cell filled at least half and less than half.
 *
 * Series keeps a whole run's history at bounded memory: when full, each
 * pair of neighbours is merged (mean of values, later time), so the
 * interval doubles and the memory stays CHART_SERIES_CAP points.
 */
#ifndef CNNTOP_TUI_CHART_H
#define CNNTOP_TUI_CHART_H

#include <stddef.h>

/* The smallest of 1, 2, 2.5, 5 x 10^k that is >= v; 1 for v <= 0 or NaN. */
double chart_nice_max(double v);

#define CHART_MAX_BUCKETS 1024

/*
 * Averages the samples (t[i], v[i]), i < n, t ascending, whose t lies in
 * [t0, t1) into ncols buckets of equal width; a bucket without samples (or
 * whose values are all NaN) becomes NaN.  Returns how many buckets have a
 * value.  t1 <= t0 or ncols <= 0 gives 0 and out untouched; buckets past
 * CHART_MAX_BUCKETS become NaN.
 */
int chart_bucket(const double *t, const double *v, int n, double t0, double t1, double *out,
                 int ncols);

/* Holds the last value across NaN buckets that lie between two values
 * (a slower sampling than the bucket width leaves such holes); leading and
 * trailing NaNs stay. */
void chart_fill_gaps(double *vals, int n);

/*
 * Plots vals (2 * cols of them in braille mode, cols in ASCII mode) as an
 * area between lo (the bottom row) and hi (the top) into cells[rows * cols],
 * row 0 at the top.  A NaN value draws nothing; a value above lo draws at
 * least one dot, so a small positive figure is never mistaken for zero.
 * Braille cells hold the dot bits (0 = blank); ASCII cells hold the char
 * (' ' = blank).
 */
void chart_plot(const double *vals, double lo, double hi, int rows, int cols, int braille,
                unsigned char *cells);

/* The text of one cell: UTF-8 braille (3 bytes) or the ASCII char.  out
 * must hold 4 bytes; returns out. */
const char *chart_cell_text(unsigned char cell, int braille, char out[4]);

/* A cell that plot left empty. */
int chart_cell_blank(unsigned char cell, int braille);

#define CHART_SERIES_CAP 2048

typedef struct Series {
    double t[CHART_SERIES_CAP]; /* seconds, ascending */
    double v[CHART_SERIES_CAP]; /* values, NaN allowed ("not measured here") */
    int n;                /* points held */
} Series;

void chart_series_clear(Series *s);

/* Appends (t, v), merging neighbours first when full. */
void chart_series_add(Series *s, double t, double v);

/* 1 when some point of s holds a value (not NaN). */
int chart_series_has_value(const Series *s);

#endif
