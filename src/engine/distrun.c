/*
 * distrun.c: the engine as one rank of a data-parallel job (distrun.h).
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/version.h"
#include "dist/dist.h"
#include "engine/state.h"
#include "prof/procfs.h"
#include "prof/sysinfo.h"
#include "util/err.h"

/* FNV-1a, 64-bit, over n bytes, from h. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

#define HASH_FIELD(h, v) hash_bytes((h), &(v), sizeof(v))

/* What every rank must agree on: the version, the data set's sizes and
 * every setting but the per-rank ones (threads, workers, prefetch). */
static uint64_t config_hash(const Engine *e)
{
    const RunConfig *c = &e->cfg;
    uint64_t h = hash_bytes(0xcbf29ce484222325ULL, CNNTOP_VERSION, sizeof CNNTOP_VERSION);
    int live = e->dist.live_path[0] != '\0';

    h = HASH_FIELD(h, c->batch);
    h = HASH_FIELD(h, c->epochs);
    h = HASH_FIELD(h, c->steps);
    h = HASH_FIELD(h, c->lr);
    h = HASH_FIELD(h, c->seed);
    h = HASH_FIELD(h, c->augment);
    h = HASH_FIELD(h, c->eval_every);
    h = HASH_FIELD(h, c->gemm);
    h = HASH_FIELD(h, c->bn_local);
    h = HASH_FIELD(h, live); /* the live lines' gather: on every rank or none */
    h = HASH_FIELD(h, e->n_train);
    return HASH_FIELD(h, e->n_test);
}

/* The parameters, and the BatchNorm running statistics unless each rank
 * keeps its own (--bn local: rank 0's are the checkpoint's, as PyTorch DDP
 * keeps rank 0's buffers). */
static uint64_t params_hash(const Params *ps, int bn_local)
{
    uint64_t h = hash_bytes(0xcbf29ce484222325ULL, ps->params, ps->nfloats * sizeof(float));

    return bn_local ? h : hash_bytes(h, ps->running, ps->nrunning * sizeof(float));
}

/* Keeps a hook's first error for the step's end to report. */
static void hook_fail(DistRun *d, int rc, const char *msg)
{
    if (d->rc)
        return;
    d->rc = rc;
    snprintf(d->err, sizeof d->err, "%s", msg);
}

static void hook_grads(void *ud, float *g, size_t n)
{
    DistRun *d = ud;
    char err[256];
    int rc = dist_grads_start(g, n, err, sizeof err);

    if (rc)
        hook_fail(d, rc, err);
}

static void hook_sum(void *ud, double *v, size_t n)
{
    DistRun *d = ud;
    char err[256];
    double t0 = timer_now();
    int rc = dist_sum_doubles(v, n, err, sizeof err);
    double t1 = timer_now();

    d->hook_wait += t1 - t0;
    if (d->trace)
        trace_add(d->trace, "comm", "BN sums", t0, t1, -1);
    if (rc)
        hook_fail(d, rc, err);
}

int distrun_open(Engine *e, char *err, size_t errlen)
{
    DistRun *d = &e->dist;
    int rc;

    memset(d, 0, sizeof *d);
    if (e->cfg.dist != CN_DIST_MPI)
        return 0;
    if ((rc = dist_start(err, errlen)) != 0)
        return rc;
    d->on = 1;
    d->rank = dist_rank();
    d->size = dist_size();
    const char *live = getenv(DIST_LIVE_ENV);
    if (live && *live && d->size <= DIST_LIVE_MAX_RANKS)
        snprintf(d->live_path, sizeof d->live_path, "%s", live);
    if (e->cfg.batch % d->size != 0)
        return cn_fail(err, errlen, -CN_EINVAL,
                       "--batch %d does not split over %d ranks (a multiple of %d is needed)",
                       e->cfg.batch, d->size, d->size);
    /* Threads: the cores mpirun bound this rank to, or, unbound, the
     * machine's shared among its ranks. */
    if (!e->cfg.threads) {
        int mine = sysinfo_cores(), all = sysinfo_cores_online();
        int t = mine < all ? mine : all / dist_local_size();
        e->threads = t > 0 ? t : 1;
    }
    d->hooks = (StepHooks){.ud = d, .grads_ready = hook_grads, .sum = hook_sum,
                           .sync_bn = e->cfg.bn_local == CN_BN_SYNC};
    d->fig.ranks = d->size;
    d->fig.bn_local = e->cfg.bn_local;
    d->fig.local_ranks = dist_local_size();
    d->fig.node_cores = sysinfo_cores_online();
    snprintf(d->fig.ar_algorithm, sizeof d->fig.ar_algorithm, "%s", dist_allreduce_algorithm());
    return 0;
}

/* The gradients' all-reduce alone (dist_probe_allreduce), on the gradient
 * block (all zeros before training; it stays so). */
static int probe_allreduce(Engine *e, char *err, size_t errlen)
{
    return dist_probe_allreduce(e->ps.grads, e->ps.nfloats, DIST_PROBE_TRIES, &e->dist.probe,
                                err, errlen);
}

int distrun_share_params(Engine *e, char *err, size_t errlen)
{
    DistRun *d = &e->dist;
    long last = e->n_train % e->cfg.batch;
    int rc;

    if (!d->on)
        return 0;
    /* --bn local: room for this rank's running statistics while an
     * evaluation uses rank 0's, made before any collective that needs it */
    if (e->cfg.bn_local == CN_BN_LOCAL &&
        !(d->own_running = malloc(e->ps.nrunning * sizeof *d->own_running)))
        return cn_fail(err, errlen, -CN_ENOMEM, "out of memory for the running statistics");
    if ((rc = dist_check_same(config_hash(e), "version, data set or settings", err, errlen)))
        return rc;
    if (last > 0 && last < d->size)
        return cn_fail(err, errlen, -CN_EINVAL,
                       "the epoch's last batch of %ld image%s cannot give each of %d ranks one "
                       "(change --batch or --limit)", last, last == 1 ? "" : "s", d->size);
    if ((rc = dist_bcast_floats(e->ps.params, e->ps.nfloats, err, errlen)) != 0 ||
        (rc = dist_bcast_floats(e->ps.running, e->ps.nrunning, err, errlen)) != 0)
        return rc;
    if ((rc = dist_check_same(params_hash(&e->ps, 0), "parameters after the broadcast", err,
                              errlen)) != 0)
        return rc;
    return probe_allreduce(e, err, errlen);
}

void distrun_run_reset(Engine *e)
{
    DistRun *d = &e->dist;
    DistFigures keep = d->fig;

    memset(&d->fig, 0, sizeof d->fig);
    d->fig.ranks = keep.ranks;
    d->fig.bn_local = keep.bn_local;
    d->fig.local_ranks = keep.local_ranks;
    d->fig.node_cores = keep.node_cores;
    memcpy(d->fig.ar_algorithm, keep.ar_algorithm, sizeof d->fig.ar_algorithm);
    d->fig.ar_probe = d->probe;
    d->images = 0;
    d->stop_agreed = 0;
    d->rc = 0;
    d->trace = e->trace;
    int threads;
    d->sched_t0 = procfs_self_sched(&d->sched0, &threads) == 0 && d->sched0.have_sched
                      ? timer_now() : 0.0;
    d->w_t0 = timer_now();
    d->w_steps = 0;
    d->w_images0 = 0;
}

/* This process's run-queue wait since the run's start: the threads' wait
 * over their time (threads x wall); NAN without schedstat. */
static double own_run_queue_wait(const DistRun *d)
{
    SchedThread now, delta;
    int threads;

    memset(&delta, 0, sizeof delta);
    if (!(d->sched_t0 > 0) || procfs_self_sched(&now, &threads) != 0 || threads < 1)
        return NAN;
    double wall = timer_now() - d->sched_t0;
    schedstat_add_delta(&delta, &now, &d->sched0);
    return wall > 0 && delta.have_sched ? (double)delta.wait_ns * 1e-9 / (threads * wall) : NAN;
}

void distrun_step_begin(Engine *e, StepCtx *s, const Batch *b)
{
    DistRun *d = &e->dist;

    if (!d->on)
        return;
    s->hooks = &d->hooks;
    s->n_global = b->n_global;
    s->first = b->first;
    d->hook_wait = 0.0;
    d->images += b->n;
}

int distrun_grads_wait(Engine *e, double *comm, char *err, size_t errlen)
{
    DistRun *d = &e->dist;
    DistWait w;
    int rc;

    *comm = 0.0;
    if (!d->on)
        return 0;
    if (d->rc)
        return cn_fail(err, errlen, d->rc, "%s", d->err);
    if ((rc = dist_grads_wait(&w, err, errlen)) != 0)
        return rc;
    if (d->trace && w.nreq > 0) /* what the backward pass did not hide */
        trace_add(d->trace, "comm", "all-reduce wait", timer_now() - w.wait, timer_now(), -1);
    d->fig.ar_wait += w.wait;
    d->fig.ar_span += w.span;
    d->fig.ar_bytes = w.bytes;
    d->fig.sum_wait += d->hook_wait;
    *comm = w.wait + d->hook_wait;
    return 0;
}

int distrun_step_end(Engine *e, double *loss, int nb, int n_global, double *comm, char *err,
                     size_t errlen)
{
    DistRun *d = &e->dist;
    double v[2] = {*loss * nb, atomic_load(&e->stop) ? 1.0 : 0.0}, t0 = timer_now();
    int rc;

    if (!d->on)
        return 0;
    if ((rc = dist_sum_doubles(v, 2, err, errlen)) != 0)
        return rc;
    double dt = timer_now() - t0;
    if (d->trace)
        trace_add(d->trace, "comm", "loss and stop sum", t0, t0 + dt, -1);
    d->fig.sum_wait += dt;
    d->fig.steps++;
    *comm += dt;
    d->step_comm = *comm;
    *loss = v[0] / n_global;
    d->stop_agreed = v[1] > 0.0;
    return 0;
}

int distrun_eval_begin(Engine *e, long n, long *lo, long *hi, char *err, size_t errlen)
{
    DistRun *d = &e->dist;

    *lo = 0;
    *hi = n;
    if (!d->on || d->size < 2)
        return 0;
    *lo = n * d->rank / d->size;
    *hi = n * (d->rank + 1) / d->size;
    if (!d->own_running)
        return 0; /* synchronised: the running statistics are the same everywhere */
    memcpy(d->own_running, e->ps.running, e->ps.nrunning * sizeof *d->own_running);
    return dist_bcast_floats(e->ps.running, e->ps.nrunning, err, errlen);
}

int distrun_eval_end(Engine *e, double *v, size_t k, char *err, size_t errlen)
{
    DistRun *d = &e->dist;

    if (!d->on || d->size < 2)
        return 0;
    if (d->own_running)
        memcpy(e->ps.running, d->own_running, e->ps.nrunning * sizeof *d->own_running);
    return dist_sum_doubles(v, k, err, errlen);
}

void distrun_close(Engine *e)
{
    free(e->dist.own_running);
    e->dist.own_running = NULL;
}

static void live_write(Engine *e, const Progress *p);

int distrun_finish(Engine *e, char *err, size_t errlen)
{
    DistRun *d = &e->dist;
    const TrainStats *st = &e->stats;
    const StepSplit *sp = &st->split;
    int rc;

    if (!d->on)
        return 0;
#define RANK_FIGS 6
    double mine[RANK_FIGS] = {
        st->wall > 0 ? (double)d->images / st->wall : 0.0,
        st->steps > 0 ? st->wall / (double)st->steps : 0.0,
        sp->data, sp->forward + sp->backward + sp->optimizer, sp->comm,
        own_run_queue_wait(d),
    };
    double all[RANK_FIGS * CN_MAX_RANKS];
    int n = d->size < CN_MAX_RANKS ? d->size : CN_MAX_RANKS;

    if ((rc = dist_check_same(params_hash(&e->ps, e->cfg.bn_local),
                                     "parameters after training", err, errlen)))
        return rc;
    live_write(e, &d->live_last);
    e->stats.dist = d->fig;
    if (d->size > CN_MAX_RANKS)
        return 0; /* too many to keep: the job's figures alone */
    if ((rc = dist_gather_doubles(mine, RANK_FIGS, all, err, errlen)) != 0)
        return rc;
    d->fig.nrank = d->rank == 0 ? n : 0;
    for (int r = 0; r < d->fig.nrank; r++) {
        const double *a = &all[RANK_FIGS * r];
        d->fig.rank[r] = (DistRank){.images_per_s = a[0], .step_time = a[1], .data_wait = a[2],
                                    .compute = a[3], .comm = a[4], .run_queue_wait = a[5]};
    }
    e->stats.dist = d->fig;
    return 0;
}

/* Rank 0: the interval's line appended to the live file (opened for each
 * line, so that nothing stays open; a reader gone loses the line only). */
static void live_write(Engine *e, const Progress *p)
{
    DistRun *d = &e->dist;
    DistLive l = {.step = p->step, .steps = p->steps, .epoch = p->epoch, .epochs = p->epochs,
                  .elapsed = p->elapsed, .images = p->images, .loss = p->loss,
                  .ranks = d->size};
    double wall = timer_now() - d->w_t0, share = 0.0;
    char line[DIST_LIVE_LINE];

    if (d->rank != 0 || !d->live_path[0] || d->w_steps == 0 || p->step < 1)
        return;
    l.ips = wall > 0 ? (double)(p->images - d->w_images0) / wall : 0.0;
    for (int r = 0; r < d->size; r++) {
        double step = d->w_busy[r] + d->w_comm[r];
        l.step_time[r] = d->w_busy[r] / (double)d->w_steps;
        share += step > 0 ? d->w_comm[r] / step : 0.0;
    }
    l.comm = share / d->size;
    int n = dist_live_format(&l, line, sizeof line);
    int fd = n > 0 ? open(d->live_path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
    if (fd >= 0) {
        ssize_t w = write(fd, line, (size_t)n);
        (void)w; /* a line lost is a gap in the chart, no more */
        close(fd);
    }
    memset(d->w_busy, 0, sizeof d->w_busy);
    memset(d->w_comm, 0, sizeof d->w_comm);
    d->w_steps = 0;
    d->w_images0 = p->images;
    d->w_t0 = timer_now();
}

int distrun_live_step(Engine *e, const Progress *p, double step_time, char *err,
                      size_t errlen)
{
    DistRun *d = &e->dist;
    double mine[2] = {step_time - d->step_comm, d->step_comm}, all[2 * DIST_LIVE_MAX_RANKS];
    int rc;

    if (!d->on || !d->live_path[0])
        return 0;
    if ((rc = dist_gather_doubles(mine, 2, all, err, errlen)) != 0)
        return rc;
    d->live_last = *p;
    if (d->rank != 0)
        return 0;
    for (int r = 0; r < d->size; r++) {
        d->w_busy[r] += all[2 * r] > 0 ? all[2 * r] : 0.0;
        d->w_comm[r] += all[2 * r + 1];
    }
    d->w_steps++;
    if (timer_now() - d->w_t0 >= 0.25)
        live_write(e, p);
    return 0;
}
