/*
 * sweep.h: `cnntop sweep`: the grid of batch sizes x loader workers x
 * compute threads, each configuration trained (with --runs R --warmup K),
 * a table with speedups and their uncertainty against the first
 * configuration, and a recommendation that says when the top two cannot be
 * told apart and when the fastest learns clearly less.
 */
#ifndef CNNTOP_SWEEP_H
#define CNNTOP_SWEEP_H

#include "cnntop/record.h"
#include "cnntop/stats.h"
#include "common/options.h"

/* Percentage points of test accuracy below the best configuration's that
 * count as "clearly lower" in the recommendation. */
#define SWEEP_ACCURACY_SLACK 1.0

/* One configuration of the grid and its figures over the repeats. */
typedef struct SweepRow {
    RunRecord rec;
    int done;           /* trained (perhaps interrupted) */
    StatsSummary ips;   /* images/s over the repeats */
    StatsSummary wall;  /* seconds */
    double accuracy;    /* mean over the repeats, 0..1; NAN: none */
    double wait_share;  /* data wait / step time */
    double tta;         /* seconds to --target-accuracy; NAN: not reached */
    int ranks;          /* the job's ranks (run --ranks; --cmd: {ranks}), 0: in this process */
    int group;          /* the grid's configuration but the ranks (batch, workers, threads) */
} SweepRow;

/* `cnntop sweep`: the grid of cnntop's own training, or with --cmd the
 * grid of a command (sweep_cmd.c).  Returns the exit code. */
int sweep_main(const Options *o, int argc, char **argv);

/* `cnntop sweep --cmd TEMPLATE` (sweep_cmd.c), its options checked first
 * (validate_command()). */
int sweep_cmd_main(const Options *o, int argc, char **argv);

/* Everything about --cmd known before a run, for every configuration: the
 * template's placeholders against the lists, and each command line's
 * length.  0, or -1 with a one-line message in err. */
int sweep_cmd_check(const Options *o, char *err, size_t len);

/*
 * The recommendation under the table: the fastest configuration that ended
 * well, whether Welch's t-test tells it from the runner-up, and whether it
 * learns clearly less than the most accurate.  Ranked by images/s, or with
 * by_time by the mean wall time (a command with no images/s).  The ranking
 * is record_rank()'s, which the Markdown export uses too.  Returns the row
 * recommended, or -1.
 */
int sweep_recommend(SweepRow *rows, int n, int by_time);

/* Fills the row's figures over its repeats from its record (record_figures():
 * images/s only when every run has one), for the table and the ranking. */
void sweep_row_figures(SweepRow *w);

/* The speedup of w over base, ± its uncertainty (record_speedup(): by
 * images/s, or with by_time by wall time), or "1 (baseline)", into buf. */
void sweep_speedup_text(const SweepRow *w, const SweepRow *base, int by_time, char *buf,
                        size_t len);

/* sweep --ranks: what `run --ranks` refuses (ranks_check()), for every
 * batch and ranks of the grid, before the first run: 0, or 2 after one line. */
int sweep_ranks_check(const Options *o);

/* One configuration of the grid as `cnntop run --ranks N` with the sweep's
 * other options (a child process through mpirun; its summary dropped, its
 * progress on stderr after a line with `prefix`), its record (exported to
 * a temporary file, then removed) read into rec.  A stop signal the sweep
 * catches is passed on.  Returns the run's exit code (1 after a line when
 * its record cannot be read). */
int sweep_ranks_run(const Options *o, const RunConfig *cfg, int ranks, const char *prefix,
                    int argc, char **argv, RunRecord *rec);

/* The scaling efficiency of row i, a job of N ranks: its images/s / (N x
 * the images/s of the row of its group, the same batch, workers and
 * threads, at 1 rank).  NAN: no such row ran, or row i is not a job. */
double sweep_scaling(const SweepRow *rows, int n, int i);

/* A grid of ranks' two cells of row i, each `len` bytes: its ranks
 * (" %5d") into rk, its scaling efficiency (" %6.0f%%", " n/m" when
 * sweep_scaling() has none) into eff. */
void sweep_ranks_cells(const SweepRow *rows, int n, int i, char *rk, char *eff, size_t len);

/* Under a grid of ranks (--ranks) where no row has a scaling efficiency,
 * a line saying why (no row of 1 rank ran, or the rows lack images/s). */
void sweep_print_scaling_note(const Options *o, const SweepRow *rows, int n);

/* Seconds on a monotonic clock, for --budget. */
double sweep_clock(void);

/* --budget: whether the next configuration may start, `elapsed` seconds
 * into the sweep after `ran` configurations: the time left must cover the
 * mean time of those (the first always starts; without --budget, every
 * one does).  Once started, a configuration finishes, so every row is a
 * whole measurement. */
int sweep_may_start(const Options *o, double elapsed, int ran);

/* Under the table, when skipped > 0: "Budget of S s spent: N
 * configurations not run." */
void sweep_print_skipped(const Options *o, int skipped);

/* Writes the rows that ran (done) to --export as one sweep record (partial:
 * say so).  0, or -1 after the one-line error on stderr. */
int sweep_export(const Options *o, const SweepRow *rows, int n, int partial);

#endif
