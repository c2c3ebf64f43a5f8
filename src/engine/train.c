/*
 * train.c: the train loop, engine_train() (see the DESIGN comment in
 * engine.c and the field ownership in state.h).
 *
 * The trainer owns the model, the arena, the profile and its own figures
 * (e->stats, epochs_done, epoch_pos) and writes them without a lock.  After
 * every step it takes live_mu once, briefly, to publish: the progress, the
 * step's times, the segment's rates and a copy of its figures (e->pub) for
 * engine_snapshot().  It makes no system call while holding it.
 */
#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "engine/state.h"
#include "nn/loss_xent.h"
#include "util/err.h"

static long steps_per_epoch(const Engine *e)
{
    return (e->n_train + e->cfg.batch - 1) / e->cfg.batch;
}

/* Steps left to the end of the run: --steps, or to the end of the current
 * epoch and then whole epochs up to `end_epoch`. */
static long steps_left(const Engine *e, long end_epoch)
{
    long left = (e->n_train - e->epoch_pos + e->cfg.batch - 1) / e->cfg.batch;
    return left + (end_epoch - e->epochs_done - 1) * steps_per_epoch(e);
}

static double tv_seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

typedef struct RunClock {
    double t0;
    struct rusage ru0;
} RunClock;

static void run_clock_finish(Engine *e, const RunClock *rc)
{
    struct rusage ru;
    TrainStats *st = &e->stats;

    getrusage(RUSAGE_SELF, &ru);
    st->wall = timer_now() - rc->t0;
    st->images_per_s = st->wall > 0 ? (double)st->images / st->wall : 0.0;
    st->cpu_user = tv_seconds(ru.ru_utime) - tv_seconds(rc->ru0.ru_utime);
    st->cpu_sys = tv_seconds(ru.ru_stime) - tv_seconds(rc->ru0.ru_stime);
    st->minor_faults = ru.ru_minflt - rc->ru0.ru_minflt;
}

/* The state of one engine_train() call, the trainer's. */
typedef struct TrainRun {
    RunClock clock;
    Progress p;
    double epoch_loss;   /* summed over the epoch's steps so far */
    long epoch_steps;
    int first_epoch;     /* e->epochs_done when the run began */
    long end_epoch;      /* with --epochs: the run ends at the end of epoch end_epoch - 1 */
} TrainRun;

/* Evaluates in the middle of a run with the training clock stopped: the
 * run's start times move forward by the evaluation's length, which this
 * returns.  The point is stored, and published, under live_mu. */
static double eval_during(Engine *e, RunClock *rc, const Progress *p, int epoch_end, int epoch)
{
    EvalPoint ep = {.step = p->step, .epoch_end = epoch_end, .epoch = epoch,
                    .train_loss = p->epoch_loss};
    double t0 = timer_now();

    pthread_mutex_lock(&e->live_mu);
    e->evaluating = 1; /* the sampler skips the evaluation */
    pthread_mutex_unlock(&e->live_mu);
    ep.wall = t0 - rc->t0;
    engine_evaluate(e, &ep.r, NULL, 0);
    double dt = timer_now() - t0;
    rc->t0 += dt;
    pthread_mutex_lock(&e->live_mu);
    e->evals[e->nevals < CN_MAX_EVALS ? e->nevals++ : CN_MAX_EVALS - 1] = ep;
    e->pub.nevals = e->nevals;
    e->t0 += dt;
    e->evaluating = 0;
    pthread_mutex_unlock(&e->live_mu);
    return dt;
}

/* One training step; returns 0, or 1 when stopped while waiting for data. */
static int train_step(Engine *e, int *nb, double *loss_out, double *wait, char *err,
                      size_t errlen)
{
    StepCtx s = {.ps = &e->ps, .a = &e->acts, .pool = e->pool, .prof = &e->prof,
                 .seed = e->cfg.seed, .gemm = e->gemm};
    StepSplit *sp = &e->stats.split;
    double t0 = timer_now(), t1, t2, t3, t4, comm_f = 0.0, comm_b = 0.0, comm = 0.0;
    Batch b;
    int rc;

    if (e->prof.want)
        profile_counters_mark(&e->prof);
    /* A rank never leaves a step alone: the others would wait for it. */
    if (loader_next(e->loader, &b, e->dist.on ? &e->never : &e->stop) != 0)
        return 1;
    if (e->prof.want)
        profile_counters_lap(&e->prof, PROF_DATA);
    if (e->trace)
        trace_add(e->trace, "wait", "data wait", t0, timer_now(), -1);
    distrun_step_begin(e, &s, &b);
    if (b.epoch != e->epochs_done || b.pos != e->epoch_pos)
        return cn_fail(err, errlen, -CN_ESTATE,
                       "internal error: the loader gave the batch at epoch %ld image %ld, "
                       "expected epoch %ld image %ld", b.epoch, b.pos, e->epochs_done,
                       e->epoch_pos);
    *nb = b.n_global;
    t1 = timer_now();
    e->prof.seconds[PROF_DATA] += t1 - t0;
    e->prof.calls[PROF_DATA]++;
    float *x = e->acts.x;
    uint8_t *labels = e->acts.labels;
    e->acts.x = b.x;
    e->acts.labels = b.labels;
    model_forward(&s, b.n, 1, e->ps.adam_t);
    double loss = model_loss(&s, b.n);
    t2 = timer_now();
    comm_f = e->dist.hook_wait;
    model_backward(&s, b.n);
    rc = distrun_grads_wait(e, &comm, err, errlen);
    comm_b = comm - comm_f;
    t3 = timer_now();
    if (rc == 0)
        model_update(&s, e->cfg.lr);
    t4 = timer_now();
    if (rc == 0)
        rc = distrun_step_end(e, &loss, b.n, b.n_global, &comm, err, errlen);
    t4 += comm - comm_f - comm_b; /* the loss's sum, after Adam, is the step's comm */
    e->acts.x = x;
    e->acts.labels = labels;
    loader_release(e->loader, &b);
    if (rc != 0)
        return rc;
    sp->data += t1 - t0;
    sp->forward += t2 - t1 - comm_f;
    sp->backward += t3 - t2 - comm_b;
    sp->optimizer += t4 - t3 - (comm - comm_f - comm_b);
    sp->comm += comm;
    *wait = t1 - t0;
    *loss_out = loss;
    if (e->trace)
        trace_add(e->trace, "step", "step", t0, t4, (long)e->ps.adam_t);
    return 0;
}

/* Whether the run stops before the next step: at once when asked, or, as
 * one rank of a job, when any rank asked by the last step's end. */
static int run_stopping(Engine *e)
{
    return e->dist.on ? e->dist.stop_agreed : atomic_load(&e->stop);
}

/* Publishes the step just done: progress, times, the segment's figures and
 * the trainer's own (e->pub).  One short hold of live_mu, no system call. */
static void publish_step(Engine *e, const Progress *p, int nb, double dt, double wait)
{
    LiveStats *L = &e->live;

    pthread_mutex_lock(&e->live_mu);
    L->p = *p;
    L->step_time = dt;
    L->data_wait = wait;
    L->split = e->stats.split;
    double busy = L->split.data + L->split.forward + L->split.backward + L->split.optimizer +
                  L->split.comm;
    L->data_wait_share = busy > 0 ? L->split.data / busy : 0.0;
    L->loader_bound = L->data_wait_share > CN_LOADER_BOUND;
    live_segment_step(e, nb, dt, p->elapsed);
    snapshot_publish(e);
    pthread_mutex_unlock(&e->live_mu);
}

/* Refuses a run that would take the epochs or Adam steps counted so far
 * (from a checkpoint, or earlier runs) past what the engine holds.  A step
 * ends at most one epoch; at most n_train steps make one (batch 1). */
static int check_totals(const Engine *e, char *err, size_t errlen)
{
    long epochs = e->cfg.steps ? e->cfg.steps : e->cfg.epochs;
    long steps = e->cfg.steps ? e->cfg.steps : e->cfg.epochs * e->n_train;

    if (e->epochs_done > CN_MAX_EPOCHS_DONE - epochs)
        return cn_fail(err, errlen, -CN_EINVAL,
                       "%ld epochs trained already: %ld more could pass the limit of %ld",
                       e->epochs_done, epochs, CN_MAX_EPOCHS_DONE);
    if (e->ps.adam_t > CN_MAX_ADAM_STEPS - steps)
        return cn_fail(err, errlen, -CN_EINVAL,
                       "%ld Adam steps taken already: %ld more could pass the limit of %ld",
                       e->ps.adam_t, steps, CN_MAX_ADAM_STEPS);
    return 0;
}

/* Clears the last run's figures: stats, profile, evaluations. */
static void run_reset(Engine *e)
{
    e->prof.trace = e->trace;
    profile_reset(&e->prof, e->cs);
    e->nevals = 0;
    atomic_store(&e->stop, 0);
    distrun_run_reset(e);
}

/* Starts the run's clock and its own live record (history, segments), the
 * loader at the engine's position, and the sampler. */
static void run_begin(Engine *e, TrainRun *run)
{
    LoaderStats ls;

    memset(run, 0, sizeof *run);
    run->first_epoch = (int)e->epochs_done;
    threadreg_enter(&e->reg, CN_ROLE_TRAIN, "cnntop-train");
    if (e->trace)
        trace_thread(e->trace, "cnntop-train");
    run->clock.t0 = timer_now();
    getrusage(RUSAGE_SELF, &run->clock.ru0);
    loader_stats(e->loader, &ls);
    pthread_mutex_lock(&e->live_mu);
    unsigned gen = e->hist.gen;
    history_init(&e->hist);
    e->hist.gen = gen + 1;
    memset(&e->live, 0, sizeof e->live);
    e->nseg = 0;
    e->t0 = run->clock.t0;
    e->live.running = 1;
    e->live.batch = e->cfg.batch;
    live_put_loader(&e->live, &ls);
    live_segment_begin(e, 0, 0.0);
    snapshot_publish(e);
    pthread_mutex_unlock(&e->live_mu);
    loader_seek(e->loader, e->epochs_done, e->epoch_pos);
    loader_set_active(e->loader, 1);
    sampler_start(e);
}

/* The run's length in steps and epochs, at the batch size in effect. */
static void run_plan(Engine *e, TrainRun *run)
{
    Progress *p = &run->p;

    /* With --epochs the run ends at the end of epoch end_epoch - 1; a
     * mid-epoch start (a checkpoint) counts its partial epoch as one. */
    run->end_epoch = e->epochs_done + e->cfg.epochs;
    p->steps = e->cfg.steps ? e->cfg.steps : steps_left(e, run->end_epoch);
    p->steps_per_epoch = steps_per_epoch(e);
    p->epochs = e->cfg.steps ? (int)((e->epoch_pos / e->cfg.batch + p->steps +
                                      p->steps_per_epoch - 1) / p->steps_per_epoch)
                             : e->cfg.epochs;
}

/* Counts step `step` (0-based) of nb images and loss `loss` into the
 * stats, the epoch and the progress; -CN_EDIVERGED when the loss is not
 * finite. */
static int run_count_step(Engine *e, TrainRun *run, long step, int nb, double loss, char *err,
                          size_t errlen)
{
    Progress *p = &run->p;

    e->stats.steps++;
    e->stats.images += nb;
    e->stats.last_loss = (float)loss;
    run->epoch_loss += loss;
    run->epoch_steps++;
    e->stats.final_loss = run->epoch_loss / (double)run->epoch_steps;
    if (!isfinite(loss))
        return cn_fail(err, errlen, -CN_EDIVERGED,
                       "training diverged: loss is %f at step %ld (epoch %ld)", loss, step + 1,
                       e->epochs_done + 1);
    e->epoch_pos += nb;
    p->epoch = (int)(e->epochs_done - run->first_epoch);
    p->step = step + 1;
    p->step_in_epoch = (e->epoch_pos + e->cfg.batch - 1) / e->cfg.batch;
    p->images = e->stats.images;
    p->elapsed = timer_now() - run->clock.t0;
    p->images_per_s = p->elapsed > 0 ? (double)p->images / p->elapsed : 0.0;
    p->loss = (float)loss;
    p->epoch_loss = run->epoch_loss / (double)run->epoch_steps;
    if (e->epoch_pos >= e->n_train) {
        e->epochs_done++;
        e->epoch_pos = 0;
        e->stats.epochs_done++;
        if (step + 1 < p->steps) {
            run->epoch_loss = 0.0;
            run->epoch_steps = 0;
        }
    }
    return 0;
}

/* The evaluations due after step `step` (0-based); returns their seconds. */
static double run_evals(Engine *e, TrainRun *run, long step)
{
    int ended = e->epoch_pos == 0;

    if ((ended && e->cfg.eval_epochs) ||
        (e->cfg.eval_every && (step + 1) % e->cfg.eval_every == 0))
        return eval_during(e, &run->clock, &run->p, ended,
                           ended ? run->p.epoch : (int)(e->epochs_done - run->first_epoch));
    return 0.0;
}

/* Stops the sampler and the loader's accounting, and publishes the run's
 * final figures. */
static void run_end(Engine *e, TrainRun *run, int ret)
{
    LoaderStats ls;

    e->stats.stopped = ret == 0 && e->stats.steps < run->p.steps;
    run_clock_finish(e, &run->clock);
    sampler_stop(e);
    loader_set_active(e->loader, 0);
    loader_stats(e->loader, &ls);
    pthread_mutex_lock(&e->live_mu);
    live_put_loader(&e->live, &ls);
    e->live.running = 0;
    if (e->nseg > 0)
        e->seg[e->nseg - 1].wall = timer_now() - e->t0 - e->seg[e->nseg - 1].t0;
    snapshot_publish(e);
    pthread_mutex_unlock(&e->live_mu);
    threadreg_leave(&e->reg);
}

int engine_train(Engine *e, ProgressFn fn, void *userdata, char *err, size_t errlen)
{
    TrainRun run;
    int ret;

    if (e->cfg.test_only)
        return cn_fail(err, errlen, -CN_ESTATE, "this engine holds only the test split "
                       "(test_only): it evaluates, it cannot train");
    memset(&e->stats, 0, sizeof e->stats);
    if ((ret = check_totals(e, err, errlen)) != 0) {
        pthread_mutex_lock(&e->live_mu);
        snapshot_publish(e); /* the cleared stats */
        pthread_mutex_unlock(&e->live_mu);
        return ret;
    }
    run_reset(e);
    run_begin(e, &run);
    live_apply_batch(e);
    run_plan(e, &run);
    for (long step = 0; step < run.p.steps && !run_stopping(e); step++) {
        int nb = 0;
        double loss = 0.0, wait = 0.0, ts = timer_now();
        if (step > 0 && atomic_load(&e->pending_batch)) {
            live_apply_batch(e);
            run.p.steps_per_epoch = steps_per_epoch(e);
            if (!e->cfg.steps)
                run.p.steps = step + steps_left(e, run.end_epoch);
        }
        int st = train_step(e, &nb, &loss, &wait, err, errlen);
        if (st == 0)
            st = run_count_step(e, &run, step, nb, loss, err, errlen);
        if (st < 0) /* a bug (nothing trained on it) or divergence: ends with its message */
            ret = st;
        if (st != 0) /* 1: stopped while waiting for data */
            break;
        ts += run_evals(e, &run, step);
        publish_step(e, &run.p, nb, timer_now() - ts, wait);
        if ((st = distrun_live_step(e, &run.p, timer_now() - ts, err, errlen)) != 0) {
            ret = st;
            break;
        }
        if (fn && fn(&run.p, userdata)) {
            if (!e->dist.on)
                break;
            atomic_store(&e->stop, 1); /* every rank stops after the next step */
        }
    }
    run_end(e, &run, ret);
    if (e->dist.on && ret == 0 && e->stats.steps > 0) {
        ret = distrun_finish(e, err, errlen);
        pthread_mutex_lock(&e->live_mu);
        snapshot_publish(e); /* with every rank's figures */
        pthread_mutex_unlock(&e->live_mu);
    }
    return ret;
}
