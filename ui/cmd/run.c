/*
 * run.c: `cnntop run` and `cnntop eval`.
 *
 * Progress goes to stderr: on a terminal one line rewritten in place at
 * most 10 times a second, otherwise a plain line every 5 seconds.  The
 * summary goes to stdout, in the spirit of perf stat and hyperfine.
 * The work itself is the runner's (runner.c: repeats, the record, signals);
 * the summary is summary.c's, shared with `cnntop report`.
 * SIGINT, SIGTERM and SIGHUP ask the engine to stop after the current step;
 * the summary of what was done is still printed and the exit code is
 * 128+sig (eval ends at once: signals.h).  SIGPIPE is ignored, so a
 * reader that goes away (`cnntop run | head -1`)
 * shows up as EPIPE, which ends the output quietly: the run still finishes
 * and saves what it was asked to save.  Any other failure to write the
 * summary (a full disk) is an error, exit 1.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/dist.h"
#include "cnntop/record_train.h"
#include "common/exit.h"
#include "common/fmt.h"
#include "cmd/ranks.h"
#include "cmd/run.h"
#include "cmd/runner.h"
#include "cmd/summary.h"

static int stdout_errno; /* errno of the first failed flush of stdout, 0: none */

static void stdout_flush(void)
{
    errno = 0;
    if (fflush(stdout) != 0 && !stdout_errno)
        stdout_errno = errno ? errno : EIO;
}

/* Whether stdout is a pipe or socket whose reader has gone (poll() says
 * POLLERR or POLLHUP): for when a write failed inside printf(), where its
 * errno could not be kept. */
static int stdout_reader_gone(void)
{
    struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};

    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/* Flushes the summary; returns rc, or EXIT_FAIL when stdout could not be
 * written for any reason but a reader that went away (EPIPE). */
int run_stdout_done(int rc)
{
    stdout_flush();
    if (!stdout_errno && !ferror(stdout))
        return rc;
    if (stdout_errno == EPIPE || stdout_reader_gone())
        return rc;
    fprintf(stderr, "cnntop: standard output: %s\n",
            strerror(stdout_errno ? stdout_errno : EIO));
    return rc == EXIT_OK ? EXIT_FAIL : rc;
}

/* --dist mpi: joins the job (dist_start) and refuses a batch that does not
 * split over its ranks, before any work (rank 0 says why). */
static int run_dist_join(const Options *o, RunnerOpts *ro)
{
    char err[512];

    if (dist_start(err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: --dist mpi: %s\n", err);
        return EXIT_USAGE;
    }
    if (o->cfg.batch % dist_size() != 0) {
        if (dist_rank() == 0)
            fprintf(stderr, "cnntop: --batch: %d does not split over %d ranks "
                    "(a multiple of %d is needed)\n", o->cfg.batch, dist_size(), dist_size());
        dist_finish();
        return EXIT_USAGE;
    }
    ro->silent = dist_rank() > 0;
    return EXIT_OK;
}

/* A rank other than 0: trains its share, prints and writes nothing (but
 * its own errors); an error of its own ends the whole job. */
static int run_dist_rank(RunnerOpts *ro, int argc, char **argv)
{
    RunRecord rec;
    int rc;

    ro->save = ro->trace = NULL;
    record_init(&rec);
    record_set_command(&rec, argc, argv);
    rc = runner_run(ro, &rec, NULL, NULL);
    record_done(&rec);
    if (rc == EXIT_FAIL && dist_size() > 1)
        dist_abort(rc); /* the others would wait for this rank for ever */
    dist_finish();
    return rc;
}

int run_main(const Options *o, int argc, char **argv)
{
    RunnerOpts ro = {.cfg = o->cfg, .runs = o->runs, .warmup = o->warmup,
                     .vary_seed = o->vary_seed, .events = o->events, .load = o->load,
                     .save = o->save, .trace = o->trace, .prefix = "",
                     .target = o->target_accuracy};
    Calibration calib;
    const Calibration *cal = NULL;
    RunRecord rec;
    Engine *e = NULL;
    CounterSet *cs = NULL;
    char err[512];
    int rc;

    if (o->ranks > 0)
        return ranks_main(o, argc, argv);
    if (o->mpirun_args) {
        fprintf(stderr, "cnntop: --mpirun-args: only with --ranks (cnntop starts mpirun)\n");
        return EXIT_USAGE;
    }
    if (o->cfg.dist == CN_DIST_MPI && (rc = run_dist_join(o, &ro)) != EXIT_OK)
        return rc;
    if (dist_rank() > 0) /* the other ranks train, rank 0 alone speaks */
        return run_dist_rank(&ro, argc, argv);
    runner_signals();
    record_init(&rec);
    record_set_command(&rec, argc, argv);
    rc = runner_run(&ro, &rec, &e, &cs);
    if (rc == EXIT_USAGE) { /* a bad -e list: nothing ran */
        record_done(&rec);
        dist_finish();
        return rc;
    }
    if (rc == EXIT_FAIL && dist_size() > 1 && rec.train.steps > 0)
        dist_abort(rc); /* failed mid-run: the others would wait for rank 0 for ever */
    /* The sketch needs the machine's calibration at the threads in effect
     * (a rank's, in a distributed run): from the cache, or measured now,
     * after the run, on first use. */
    if (rec.train.steps > 0 && !runner_signal() &&
        (cal = runner_calibration(rec.threads_used > 0 ? rec.threads_used : o->cfg.threads,
                                  o->recalibrate, &calib)))
        record_set_calibration(&rec, cal);
    if (e || rec.train.steps > 0)
        summary_print(stdout, &rec); /* what `report` of its export prints */
    engine_free(e);
    counters_free(cs);
    /* A run that failed or was stopped before its first step has nothing
     * to record: no export (its error is on stderr), as no checkpoint. */
    if (o->export_path && rec.train.steps > 0) {
        if (record_export(&rec, o->export_path, o->force, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: --export: %s\n", err);
            rc = rc ? rc : EXIT_FAIL;
        } else
            fprintf(stderr, "cnntop: %s written to %s\n",
                    rec.interrupted ? "the partial run record (interrupted)" : "the run record",
                    o->export_path);
    }
    record_done(&rec);
    dist_finish();
    return run_stdout_done(rc);
}

int run_eval(const Options *o)
{
    Engine *e;
    char err[512];
    RunRecord rec;
    EngineSnapshot snap;

    record_init(&rec);
    if (record_evaluate(&o->cfg, o->load, &rec, &e, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        record_done(&rec);
        return EXIT_FAIL;
    }
    engine_snapshot(e, &snap);
    summary_print_header(stdout, &rec, "eval");
    long done = snap.epochs_done, part = snap.epoch_images;
    printf("  Checkpoint:           %s (%ld epoch%s complete", o->load, done, fmt_plural(done));
    if (part > 0)
        printf(", then %ld image%s of epoch %ld", part, fmt_plural(part), done + 1);
    printf(")\n");
    summary_print_eval(stdout, &rec);
    record_done(&rec);
    engine_free(e);
    return run_stdout_done(EXIT_OK);
}
