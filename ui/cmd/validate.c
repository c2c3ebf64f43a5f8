/*
 * validate.c: the one pass over a command's input before any work
 * (validate.h).  Each check is the engine's or the record's own: the
 * front end only picks which apply to the command and says whose they are.
 */
#include <stdio.h>

#include "cmd/sweep.h"
#include "cmd/validate.h"
#include "cnntop/counters.h"
#include "cnntop/err.h"
#include "cnntop/fileio.h"
#include "cnntop/record.h"
#include "common/exit.h"

/* The largest of a sweep's list, or the one value when none was given. */
static int list_max(const int *v, int n, int one)
{
    int m = one;

    for (int i = 0; i < n; i++)
        m = i == 0 || v[i] > m ? v[i] : m;
    return m;
}

/* --export, --save and --trace: each writable, before anything runs.  The
 * dashboard's --export is only the name its export key offers, so an
 * existing file there is its prompt's question, not an error here. */
static int paths_check(const Options *o, char *err, size_t errlen)
{
    char why[512];

    if (o->export_path &&
        export_check(o->export_path, o->force || o->cmd == CMD_TUI, why, sizeof why) != 0) {
        snprintf(err, errlen, "--export: %s", why);
        return EXIT_FAIL;
    }
    if (o->save && fileio_check_writable(o->save, why, sizeof why) != 0) {
        snprintf(err, errlen, "--save: %s", why);
        return EXIT_FAIL;
    }
    if (o->trace && fileio_check_writable(o->trace, why, sizeof why) != 0) {
        snprintf(err, errlen, "--trace: %s", why);
        return EXIT_FAIL;
    }
    return 0;
}

/* The data set and the memory of the run (of a sweep: of its largest
 * configuration, as the memory grows with each of batch, workers and
 * threads). */
static int run_check(const Options *o, const RunConfig *cfg, char *err, size_t errlen)
{
    RunConfig c = *cfg;
    int rc;

    c.test_only = o->cmd == CMD_EVAL;
    if (o->cmd == CMD_SWEEP) {
        c.batch = list_max(o->batch_list, o->n_batch, c.batch);
        c.workers = list_max(o->workers_list, o->n_workers, c.workers);
        c.threads = list_max(o->threads_list, o->n_threads, c.threads);
    }
    rc = engine_check_start(&c, err, errlen);
    if (rc == 0)
        return 0;
    return rc == -CN_EINVAL ? EXIT_USAGE : EXIT_FAIL;
}

int validate_command(const Options *o, const RunConfig *cfg, char *err, size_t errlen)
{
    int rc;
    char why[400];

    /* -e as perf stat -e: a name no PMU or table knows is a usage error;
     * a known event this machine cannot count stays n/a with its reason. */
    if (o->events && counters_check_spec(o->events, why, sizeof why) != 0) {
        snprintf(err, errlen, "-e: %s", why);
        return EXIT_USAGE;
    }
    if (o->cmd == CMD_SWEEP && o->sweep_cmd && sweep_cmd_check(o, err, errlen) != 0)
        return EXIT_USAGE;
    if ((rc = paths_check(o, err, errlen)) != 0)
        return rc;
    switch (o->cmd) {
    case CMD_RUN:
    case CMD_EVAL:
    case CMD_TUI:
        return cfg ? run_check(o, cfg, err, errlen) : 0;
    case CMD_SWEEP:
        return cfg && !o->sweep_cmd ? run_check(o, cfg, err, errlen) : 0;
    default:
        return 0;
    }
}
