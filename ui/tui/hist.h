/*
 * hist.h: the session's finished runs, compared as hyperfine does.
 *
 * A HistRow is one run: its settings, its figures and its test accuracy.
 * Runs with the same settings (batch, workers, prefetch, threads, augment,
 * epochs/steps, limit; the seed may differ) are repeats of one
 * configuration: their images/s give a mean and a standard deviation, and
 * the speedup of one configuration over the baseline's carries the
 * uncertainty ratio * sqrt((sd_a/mean_a)^2 + (sd_b/mean_b)^2).  A run whose
 * settings changed live is a mixture and is compared with nothing.
 *
 * --history FILE keeps the rows across sessions, one run per line,
 * tab-separated key=value fields, '#' lines are comments:
 *
 *   when=1718000000  run=1  batch=64  workers=2  prefetch=0  threads=4  augment=none
 *   epochs=1  steps=0  limit=2000  lr=0.001  seed=1  wall=1.32  images=2000
 *   steps_done=32  ips=1515.2  accuracy=0.711  loss=1.6036  state=finished
 *   live=0
 *
 * (one line in the file; unknown keys are ignored, so later versions can
 * add fields).  The file is rewritten atomically after each run.
 */
#ifndef CNNTOP_TUI_HIST_H
#define CNNTOP_TUI_HIST_H

#include <stddef.h>

#define HIST_MAX 512

typedef struct HistRow {
    long when;          /* unix time the run ended */
    int session;        /* 1: run in this session; 0: read from --history */
    int run;            /* its number in its session, 1-based; 0: unknown */
    int batch, workers, prefetch, threads;
    unsigned augment;   /* CN_AUG_* bits */
    int epochs;
    long steps, limit;  /* 0: whole epochs / all images */
    double lr;
    unsigned long long seed;
    double wall;        /* seconds of training */
    long images;        /* images trained on */
    long steps_done;
    double ips;         /* images per second over the run */
    double accuracy;    /* test accuracy 0..1; NaN: not evaluated */
    double loss;        /* mean training loss of the last epoch */
    char state[12];     /* "finished", "stopped" or "failed" */
    char why[160];      /* a failed run's reason (not in the file) */
    int live;           /* 1: settings changed while it ran */
} HistRow;

typedef struct TuiHistory {
    HistRow rows[HIST_MAX]; /* oldest first */
    int n;
    int baseline;           /* row index of the baseline, -1: none */
} TuiHistory;

void hist_init(TuiHistory *h);

/* Appends r; when full, the oldest row goes (and the baseline index moves). */
void hist_add(TuiHistory *h, const HistRow *r);

/* 1 when rows a and b are repeats of one configuration. */
int hist_same_config(const HistRow *a, const HistRow *b);

/*
 * Why row r cannot be compared with any other, or NULL when it can: a run
 * whose settings changed live mixes two configurations, a failed run and
 * one stopped before its first step have no images/s.
 */
const char *hist_why_not(const HistRow *r);

/* Mean and sample standard deviation (0 for one run) of images/s over the
 * comparable repeats of row i; returns how many there are (0: row i is not
 * comparable: live-changed, failed or without a rate). */
int hist_group(const TuiHistory *h, int i, double *mean, double *sd);

/*
 * Speedup of row i's configuration over the baseline's (mean images/s
 * ratio).  *err is its standard deviation, or NaN when either side has a
 * single run.  Returns 0, or -1 when there is no baseline or either side is
 * not comparable.
 */
int hist_speedup(const TuiHistory *h, int i, double *ratio, double *err);

/* One line of the --history file (no newline). */
void hist_format_line(const HistRow *r, char *buf, size_t len);

/* Parses one line; returns 0, or -1 with err saying which field is bad. */
int hist_parse_line(const char *line, HistRow *r, char *err, size_t errlen);

/* Reads `path` into h (rows marked session 0).  Returns 0, 1 when the file
 * does not exist, -1 with err "path:line: problem" (the rows before it are
 * kept). */
int hist_load(TuiHistory *h, const char *path, char *err, size_t errlen);

/* Writes every row to `path` atomically.  Returns 0 or -1 with err. */
int hist_save(const TuiHistory *h, const char *path, char *err, size_t errlen);

#endif
