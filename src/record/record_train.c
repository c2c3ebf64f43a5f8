/*
 * record_train.c: one configuration trained into a RunRecord, warm-ups and
 * repeats, and a checkpoint evaluated into one (record_train.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/dist.h"
#include "cnntop/err.h"
#include "cnntop/machine.h"
#include "cnntop/record_train.h"

/* The job's state across its repeats. */
typedef struct Train {
    const RecordTrainJob *job;
    RunRecord *rec;
    char *err;
    size_t errlen;
    int rc;           /* the first error, 0: none */
} Train;

static int stopping(const Train *t)
{
    return t->job->stopping ? t->job->stopping(t->job->ud) : 0;
}

static void phase(const Train *t, RecordTrainPhase ph, Engine *e, int r)
{
    if (t->job->phase)
        t->job->phase(t->job->ud, ph, e, r);
}

/* Keeps the first error (the one returned) and its message. */
static void fail(Train *t, int rc, const char *prefix, const char *msg)
{
    if (t->rc)
        return;
    t->rc = rc < 0 ? rc : -CN_EIO;
    snprintf(t->err, t->errlen, "%s%s", prefix, msg);
}

/* Makes repeat r's engine (loaded from the checkpoint, tracing when it is
 * the last); NULL after fail(). */
static Engine *repeat_open(Train *t, int r, int is_last)
{
    const RecordTrainJob *job = t->job;
    char err[512];
    RunConfig cfg = job->cfg;
    Engine *e = NULL;
    int rc;

    if (job->vary_seed)
        cfg.seed += (uint64_t)r;
    cfg.eval_epochs = 1; /* the test accuracy at each epoch's end */
    if ((rc = engine_new(&e, &cfg, err, sizeof err)) != 0 ||
        (job->load && (rc = engine_load(e, job->load, err, sizeof err)) != 0)) {
        fail(t, rc, "", err);
        engine_free(e);
        return NULL;
    }
    if (is_last && job->trace && (rc = engine_set_trace(e, job->trace, err, sizeof err)) != 0) {
        fail(t, rc, "--trace: ", err);
        engine_free(e);
        return NULL;
    }
    return e;
}

/* What one repeat's training gave. */
typedef struct Repeat {
    RecordRepeat rep;
    TrainStats st;
    EvalResult er;
    int have_er;    /* er holds the final evaluation */
    int trained;    /* engine_train() returned 0 */
    int stopped;    /* a stop ended it early */
} Repeat;

/* Trains repeat r and evaluates it (the stopped-run rule of record_train.h). */
static void repeat_train(Train *t, Engine *e, int r, Repeat *out)
{
    char err[512];
    EngineSnapshot snap;
    int trc = 0;

    memset(out, 0, sizeof *out);
    if (!stopping(t))
        trc = engine_train(e, t->job->progress, t->job->ud, err, sizeof err);
    engine_snapshot(e, &snap);
    out->st = snap.train;
    out->rep = (RecordRepeat){.wall = out->st.wall, .images_per_s = out->st.images_per_s,
                              .user = out->st.cpu_user, .system = out->st.cpu_sys,
                              .accuracy = NAN};
    out->trained = trc == 0;
    out->stopped = stopping(t) != 0 || out->st.stopped;
    phase(t, RECORD_TRAIN_TRAINED, e, r);
    if (trc != 0) {
        fail(t, trc, "", err);
        record_set_error(t->rec, err);
        out->rep.exit_code = trc == -CN_EDIVERGED ? 3 : 1;
        return;
    }
    /* A second stop request skips the evaluation, but not on a rank of a
     * distributed run: the evaluation is collective (every rank evaluates
     * its share), and a signal reaches one rank before another. */
    if (out->st.steps <= 0 || (stopping(t) == 2 && t->job->cfg.dist != CN_DIST_MPI))
        return;
    phase(t, RECORD_TRAIN_EVALUATING, e, r);
    if (engine_evaluate_final(e, &out->er, err, sizeof err) == 0) {
        out->have_er = 1;
        out->rep.accuracy = out->er.accuracy;
    }
}

/* The kept repeat: its record, checkpoint and trace. */
static void repeat_keep(Train *t, Engine *e, const Repeat *rp, int is_last, RecordTrainResult *res)
{
    const RecordTrainJob *job = t->job;
    char err[512];
    int rc;

    if (record_fill(t->rec, e, job->cs, rp->have_er ? &rp->er : NULL) != 0)
        fail(t, -CN_ENOMEM, "", "out of memory building the run record");
    /* a run stopped before its first step saves no checkpoint */
    if (rp->trained && rp->st.steps > 0 && job->save &&
        (rc = engine_save(e, job->save, err, sizeof err)) != 0) {
        fail(t, rc, "", err);
        record_set_error(t->rec, err); /* the record says why the run failed */
    }
    if (job->trace && is_last && rp->st.steps > 0) {
        if ((rc = engine_write_trace(e, err, sizeof err)) != 0) {
            fail(t, rc, "", err);
            record_set_error(t->rec, err);
        } else
            res->trace_written = 1;
    }
}

int record_train(const RecordTrainJob *job, RunRecord *rec, RecordTrainResult *res, Engine **last,
                 char *err, size_t errlen)
{
    Train t = {.job = job, .rec = rec, .err = err, .errlen = errlen};
    RecordTrainResult dummy;
    int total = job->warmup + job->runs;

    if (!res)
        res = &dummy;
    memset(res, 0, sizeof *res);
    if (last)
        *last = NULL;
    if (job->target > 0)
        rec->target_accuracy = job->target;
    for (int r = 0; r < total && !res->stopped && t.rc == 0 && !stopping(&t); r++) {
        int measured = r >= job->warmup, is_last = r == total - 1;
        Engine *e = repeat_open(&t, r, is_last);
        Repeat rp;

        if (!e)
            break;
        if (measured && job->cs)
            engine_set_counters(e, job->cs);
        phase(&t, RECORD_TRAIN_OPENED, e, r);
        repeat_train(&t, e, r, &rp);
        res->stopped = rp.stopped;
        res->train = rp.st;
        if (measured && (job->runs > 1 || job->warmup > 0) && record_add_repeat(rec, &rp.rep) != 0)
            fail(&t, -CN_ENOMEM, "", "out of memory building the run record");
        int keep = measured && (is_last || rp.stopped || t.rc != 0);
        if (keep) {
            res->kept = 1;
            res->trained = rp.trained;
            res->have_eval = rp.have_er;
            res->eval = rp.er;
            repeat_keep(&t, e, &rp, is_last, res);
        }
        if (keep && last) {
            *last = e; /* the counter set stays attached: engine_free() detaches it */
            break;
        }
        phase(&t, RECORD_TRAIN_CLOSING, e, r);
        if (measured && job->cs)
            engine_set_counters(e, NULL);
        engine_free(e);
        if (keep)
            break;
    }
    if (job->calib)
        record_set_calibration(rec, job->calib);
    return t.rc;
}

int record_evaluate(const RunConfig *cfg, const char *load, RunRecord *rec, Engine **out,
                    char *err, size_t errlen)
{
    RunConfig c = *cfg;
    Engine *e = NULL;
    EngineSnapshot snap;
    int rc;

    *out = NULL;
    c.test_only = 1; /* evaluating needs the test split alone */
    if ((rc = engine_new(&e, &c, err, errlen)) != 0 ||
        (load && (rc = engine_load(e, load, err, errlen)) != 0) ||
        (rc = engine_evaluate(e, &rec->eval, err, errlen)) != 0) {
        engine_free(e);
        return rc;
    }
    engine_snapshot(e, &snap);
    if (record_set_config(rec, &snap.cfg) != 0 || record_set_data_dir(rec, snap.data_dir) != 0) {
        snprintf(err, errlen, "out of memory building the record");
        engine_free(e);
        return -CN_ENOMEM;
    }
    rec->train_images = -1; /* not read */
    rec->test_images = snap.test_images;
    rec->threads_used = snap.threads;
    machine_info(&rec->machine);
    rec->have_eval = 1;
    *out = e;
    return 0;
}
