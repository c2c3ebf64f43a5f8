/*
 * save_run.c: the `e` key: the dashboard's last run as a run record
 * (src/include/cnntop/record.h), in the format of the file's extension.
 * The record is the one the run thread built with record_fill() when the
 * run ended, as `cnntop run` builds its own; this adds what the front end
 * knows (the command line, the measured peak) and writes it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/calibrate.h"
#include "cnntop/record.h"
#include "cnntop/record_train.h"
#include "tui/save_run.h"

/* The machine's calibration for rec's setup, from the cache or measured
 * now (a few seconds, once per setup, as `cnntop run` does after its first
 * run).  No run is going (save_run() checks), so nothing competes. */
static void add_peak(Tui *t, RunRecord *rec)
{
    Calibration c;
    CalibOpts co;
    char warn[512] = "", err[512];

    if (!isnan(rec->peak_gflops) || rec->train.steps <= 0)
        return;
    if (t->have_calib) { /* loaded from the cache when the run started */
        record_set_calibration(rec, &t->calib);
        return;
    }
    memset(&co, 0, sizeof co);
    co.threads = rec->config.threads;
    if (calibrate_get(&co, &c, 0, warn, sizeof warn, err, sizeof err) != 0) {
        tui_message(t, 1, "calibration failed, no peak in the export: %s", err);
        return;
    }
    /* The run's threads, as at the run's start: the figures panel's vs-peak
     * line and later exports now use these figures too. */
    t->calib = c;
    t->have_calib = 1;
    record_set_calibration(rec, &c);
}

int save_run(Tui *t, const char *path, char *err, size_t errlen)
{
    ExportFormat fmt;

    if (t->rv.seq && t->rv.state < RUN_FINISHED) {
        snprintf(err, errlen, "run %d is going: export it when it ends (x stops it)", t->rv.seq);
        return -1;
    }
    RunRecord *rec = runthread_record(&t->run);
    if (t->rv.seq == 0 || !t->rv.have_st || !rec) {
        snprintf(err, errlen, "no finished run to export yet");
        return -1;
    }
    if (export_format(path, &fmt, err, errlen) != 0)
        return -1;
    if (!rec->command && record_set_command(rec, t->o->argc, t->o->argv) != 0) {
        snprintf(err, errlen, "%s: out of memory building the record", path);
        return -1;
    }
    add_peak(t, rec);
    return record_export(rec, path, t->o->force, err, errlen) ? -1 : 0;
}
