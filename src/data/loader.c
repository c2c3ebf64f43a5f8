/*
 * loader.c: the batch pipeline (see loader.h for the design).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/arena.h"
#include "data/augment.h"
#include "data/loader.h"
#include "util/rng.h"
#include "prof/threadreg.h"
#include "prof/profile.h"
#include "prof/trace.h"

void loader_lut(float lut[256])
{
    for (int p = 0; p < 256; p++) {
        float t = (float)p / 255.0f;
        lut[p] = (t - LOADER_MEAN) / LOADER_STD;
    }
}

void loader_fill(float *x, uint8_t *labels, const uint8_t *images,
                 const uint8_t *all_labels, const uint32_t *idx, int n,
                 int npix, const float lut[256])
{
    for (int i = 0; i < n; i++) {
        const uint8_t *src = images + (size_t)idx[i] * npix;
        float *dst = x + (size_t)i * npix;
        for (int k = 0; k < npix; k++)
            dst[k] = lut[src[k]];
        labels[i] = all_labels[idx[i]];
    }
}

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_TAKEN };

typedef struct Slot {
    int state;
    unsigned gen;       /* the flush generation it was claimed in */
    long seq;           /* its ticket */
    long epoch, pos;
    int n, cap;         /* images in it, and room for */
    float *x;
    uint8_t *labels;
    uint32_t *idx;
} Slot;

#define LOADER_MAX_SLOTS (CN_MAX_PREFETCH + CN_MAX_WORKERS + 2)

typedef struct Worker {
    pthread_t th;
    int state;          /* 0 none, 1 running, 2 finished (to be joined) */
} Worker;

struct Loader {
    LoaderSrc src;
    int npix;
    float lut[256];
    ThreadReg *reg;
    pthread_mutex_t mu;
    pthread_cond_t cond_ready;  /* a slot became ready, or workers changed */
    pthread_cond_t cond_room;   /* a ticket was taken or flushed, or workers changed */
    /* under mu: */
    unsigned gen;
    long next_seq;              /* the next ticket to hand out */
    long take_seq;              /* the next ticket the trainer takes */
    long issue_epoch, issue_pos;/* where ticket next_seq starts */
    long perm_epoch;            /* the epoch perm holds */
    uint32_t *perm;             /* (n) */
    int batch;
    int prefetch_set;           /* as asked, 0: 2 per worker */
    int workers;                /* target */
    int active;
    int quit;
    Slot slots[LOADER_MAX_SLOTS];
    int nslots;
    Worker w[CN_MAX_WORKERS];
    LoaderStats st;
    AugParams *inline_aug;      /* the trainer's scratch */
    Trace *trace;               /* or NULL; read and set under mu */
};

typedef struct WorkerArg {
    Loader *l;
    int id;
} WorkerArg;

static int prefetch_of(const Loader *l)
{
    int p = l->prefetch_set ? l->prefetch_set : 2 * l->workers;
    return p < 1 ? 1 : p;
}

/* A free slot with room for n images, growing the set if needed; under mu.
 * Returns -1 when memory cannot be had. */
static int slot_get(Loader *l, int n)
{
    int i;

    for (i = 0; i < l->nslots; i++)
        if (l->slots[i].state == SLOT_FREE)
            break;
    if (i == l->nslots) {
        if (l->nslots == LOADER_MAX_SLOTS)
            return -1;
        l->nslots++;
    }
    Slot *s = &l->slots[i];
    if (s->cap < n) {
        mem_free(s->x);
        free(s->labels);
        free(s->idx);
        s->x = mem_alloc((size_t)n * l->npix * sizeof(float));
        s->labels = malloc((size_t)n);
        s->idx = malloc((size_t)n * sizeof *s->idx);
        s->cap = s->x && s->labels && s->idx ? n : 0;
        if (!s->cap)
            return -1;
    }
    return i;
}

/* Hands out ticket next_seq into a free slot; under mu.  Returns the slot
 * index, or -1 (out of memory). */
static int ticket_claim(Loader *l)
{
    long left = l->src.n - l->issue_pos;
    int n = left < l->batch ? (int)left : l->batch;
    int i = slot_get(l, n);

    if (i < 0)
        return -1;
    if (l->perm_epoch != l->issue_epoch) {
        rng_permutation(l->perm, l->src.n, l->src.seed, l->issue_epoch);
        l->perm_epoch = l->issue_epoch;
    }
    Slot *s = &l->slots[i];
    s->state = SLOT_FILLING;
    s->gen = l->gen;
    s->seq = l->next_seq++;
    s->epoch = l->issue_epoch;
    s->pos = l->issue_pos;
    s->n = n;
    memcpy(s->idx, l->perm + l->issue_pos, (size_t)n * sizeof *s->idx);
    l->issue_pos += n;
    if (l->issue_pos >= l->src.n) {
        l->issue_epoch++;
        l->issue_pos = 0;
    }
    return i;
}

/* Prepares a claimed slot; runs without the lock. */
static void slot_fill(const Loader *l, Slot *s, AugParams *ap)
{
    const LoaderSrc *src = &l->src;

    if (!src->augment) {
        loader_fill(s->x, s->labels, src->images, src->labels, s->idx, s->n, l->npix, l->lut);
        return;
    }
    for (int i = 0; i < s->n; i++) {
        uint32_t k = s->idx[i];
        augment_draw(ap, src->augment, src->rows, src->cols, src->seed, s->epoch, k);
        augment_apply(s->x + (size_t)i * l->npix, src->images + (size_t)k * l->npix, src->rows,
                      src->cols, ap);
        s->labels[i] = src->labels[k];
    }
}

/* Marks a filled slot ready, or frees it if a flush made it stale; under mu. */
static void slot_done(Loader *l, Slot *s)
{
    if (s->gen == l->gen) {
        s->state = SLOT_READY;
        l->st.samples_prepared += s->n;
        pthread_cond_broadcast(&l->cond_ready);
    } else {
        s->state = SLOT_FREE;
        pthread_cond_broadcast(&l->cond_room);
    }
}

static void *worker_main(void *argp)
{
    WorkerArg a = *(WorkerArg *)argp;
    Loader *l = a.l;
    AugParams *ap = malloc(sizeof *ap);
    char name[16];
    int named = 0;

    free(argp);
    snprintf(name, sizeof name, "cnntop-load/%d", a.id);
    if (l->reg)
        threadreg_enter(l->reg, CN_ROLE_LOAD, name);
    else
        pthread_setname_np(pthread_self(), name);
    pthread_mutex_lock(&l->mu);
    for (;;) {
        if (l->quit || a.id >= l->workers || !ap)
            break;
        if (l->next_seq - l->take_seq >= prefetch_of(l)) {
            double t0 = timer_now();
            int active = l->active;
            pthread_cond_wait(&l->cond_room, &l->mu);
            if (active)
                l->st.blocked += timer_now() - t0;
            else
                l->st.idle += timer_now() - t0;
            continue;
        }
        int i = ticket_claim(l);
        if (i < 0) {
            pthread_cond_wait(&l->cond_room, &l->mu);
            continue;
        }
        Slot *s = &l->slots[i];
        /* Traced only if the trace was on when the fill began: one made
         * during the fill has its origin after t0. */
        Trace *tr = l->trace;
        pthread_mutex_unlock(&l->mu);
        double t0 = timer_now();
        slot_fill(l, s, ap);
        double t1 = timer_now(), dt = t1 - t0;
        pthread_mutex_lock(&l->mu);
        if (tr) {
            if (!named) {
                trace_thread(tr, name);
                named = 1;
            }
            trace_add(tr, "loader", "prepare batch", t0, t1, s->n);
        }
        l->st.prepare += dt;
        slot_done(l, s);
    }
    l->w[a.id].state = 2;
    pthread_mutex_unlock(&l->mu);
    free(ap);
    if (l->reg)
        threadreg_leave(l->reg);
    return NULL;
}

/* Joins threads that have left; under mu (they no longer need it). */
static void join_finished(Loader *l)
{
    for (int i = 0; i < CN_MAX_WORKERS; i++)
        if (l->w[i].state == 2) {
            pthread_join(l->w[i].th, NULL);
            l->w[i].state = 0;
        }
}

/* Starts threads up to l->workers; under mu. */
static int start_workers(Loader *l)
{
    sigset_t all, old;
    int rc = 0;

    join_finished(l);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < l->workers; i++) {
        if (l->w[i].state != 0)
            continue;
        WorkerArg *a = malloc(sizeof *a);
        if (!a || (a->l = l, a->id = i, pthread_create(&l->w[i].th, NULL, worker_main, a) != 0)) {
            free(a);
            l->workers = i;
            rc = -CN_ENOMEM;
            break;
        }
        l->w[i].state = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int loader_new(Loader **out, const LoaderSrc *src, int batch, int workers, int prefetch,
               long epoch, long pos, ThreadReg *reg)
{
    Loader *l = calloc(1, sizeof *l);

    *out = NULL;
    if (!l)
        return -CN_ENOMEM;
    l->src = *src;
    l->npix = src->rows * src->cols;
    loader_lut(l->lut);
    l->reg = reg;
    l->batch = batch;
    l->prefetch_set = prefetch;
    l->issue_epoch = epoch;
    l->issue_pos = pos;
    l->perm_epoch = -1;
    l->perm = malloc((size_t)src->n * sizeof *l->perm);
    l->inline_aug = malloc(sizeof *l->inline_aug);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cond_ready, NULL);
    pthread_cond_init(&l->cond_room, NULL);
    if (!l->perm || !l->inline_aug || l->npix > AUG_MAX_PIX) {
        loader_free(l);
        return -CN_ENOMEM;
    }
    if (workers > 0 && loader_set_workers(l, workers) != 0) {
        loader_free(l);
        return -CN_ENOMEM;
    }
    *out = l;
    return 0;
}

void loader_free(Loader *l)
{
    if (!l)
        return;
    int started[CN_MAX_WORKERS];

    pthread_mutex_lock(&l->mu);
    l->quit = 1;
    pthread_cond_broadcast(&l->cond_room);
    pthread_cond_broadcast(&l->cond_ready);
    for (int i = 0; i < CN_MAX_WORKERS; i++)
        started[i] = l->w[i].state != 0;
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < CN_MAX_WORKERS; i++)
        if (started[i])
            pthread_join(l->w[i].th, NULL);
    for (int i = 0; i < l->nslots; i++) {
        mem_free(l->slots[i].x);
        free(l->slots[i].labels);
        free(l->slots[i].idx);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cond_ready);
    pthread_cond_destroy(&l->cond_room);
    free(l->perm);
    free(l->inline_aug);
    free(l);
}

/* The slot holding ticket seq of this generation, or -1; under mu. */
static int slot_of(const Loader *l, long seq)
{
    for (int i = 0; i < l->nslots; i++)
        if (l->slots[i].state != SLOT_FREE && l->slots[i].gen == l->gen &&
            l->slots[i].seq == seq)
            return i;
    return -1;
}

int loader_next(Loader *l, Batch *b, const atomic_int *stop)
{
    int i;

    pthread_mutex_lock(&l->mu);
    for (;;) {
        i = slot_of(l, l->take_seq);
        if (i >= 0 && l->slots[i].state == SLOT_READY)
            break;
        if (i < 0 && l->workers == 0 && l->next_seq == l->take_seq) {
            /* No loader threads: prepare this ticket here, inline. */
            i = ticket_claim(l);
            if (i >= 0) {
                Slot *s = &l->slots[i];
                pthread_mutex_unlock(&l->mu);
                double t0 = timer_now();
                slot_fill(l, s, l->inline_aug);
                double t1 = timer_now(), dt = t1 - t0;
                pthread_mutex_lock(&l->mu);
                if (l->trace)
                    trace_add(l->trace, "loader", "prepare batch inline", t0, t1, s->n);
                l->st.inline_prepare += dt;
                slot_done(l, s);
                continue;
            }
        }
        if (stop && atomic_load(stop)) {
            pthread_mutex_unlock(&l->mu);
            return 1;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&l->cond_ready, &l->mu, &ts);
    }
    Slot *s = &l->slots[i];
    s->state = SLOT_TAKEN;
    l->take_seq++;
    l->st.batches++;
    pthread_cond_broadcast(&l->cond_room);
    pthread_mutex_unlock(&l->mu);
    b->x = s->x;
    b->labels = s->labels;
    b->n = s->n;
    b->epoch = s->epoch;
    b->pos = s->pos;
    b->idx = s->idx;
    b->slot = i;
    return 0;
}

void loader_release(Loader *l, Batch *b)
{
    pthread_mutex_lock(&l->mu);
    l->slots[b->slot].state = SLOT_FREE;
    pthread_cond_broadcast(&l->cond_room);
    pthread_mutex_unlock(&l->mu);
}

int loader_set_workers(Loader *l, int workers)
{
    int rc;

    if (workers < 0 || workers > CN_MAX_WORKERS)
        return -CN_EINVAL;
    pthread_mutex_lock(&l->mu);
    l->workers = workers;
    rc = start_workers(l);
    pthread_cond_broadcast(&l->cond_room);
    pthread_cond_broadcast(&l->cond_ready);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

void loader_set_prefetch(Loader *l, int prefetch)
{
    pthread_mutex_lock(&l->mu);
    l->prefetch_set = prefetch;
    pthread_cond_broadcast(&l->cond_room);
    pthread_mutex_unlock(&l->mu);
}

/* Discards every ticket not yet taken and restarts the sampler at (epoch,
 * pos); under mu. */
static void flush(Loader *l, long epoch, long pos)
{
    l->gen++;
    for (int i = 0; i < l->nslots; i++)
        if (l->slots[i].state == SLOT_READY)
            l->slots[i].state = SLOT_FREE;
    l->next_seq = l->take_seq;
    l->issue_epoch = epoch;
    l->issue_pos = pos;
    pthread_cond_broadcast(&l->cond_room);
}

/* Where the trainer's next batch starts; under mu. */
static void take_position(const Loader *l, long *epoch, long *pos)
{
    int i = slot_of(l, l->take_seq);

    if (i >= 0) {
        *epoch = l->slots[i].epoch;
        *pos = l->slots[i].pos;
    } else {
        *epoch = l->issue_epoch;
        *pos = l->issue_pos;
    }
}

void loader_set_batch(Loader *l, int batch)
{
    pthread_mutex_lock(&l->mu);
    if (batch != l->batch) {
        long epoch, pos;
        take_position(l, &epoch, &pos);
        l->batch = batch;
        flush(l, epoch, pos);
    }
    pthread_mutex_unlock(&l->mu);
}

void loader_seek(Loader *l, long epoch, long pos)
{
    long e, p;

    pthread_mutex_lock(&l->mu);
    take_position(l, &e, &p);
    if (e != epoch || p != pos)
        flush(l, epoch, pos);
    pthread_mutex_unlock(&l->mu);
}

void loader_set_active(Loader *l, int active)
{
    pthread_mutex_lock(&l->mu);
    l->active = active;
    pthread_mutex_unlock(&l->mu);
}

void loader_stats(Loader *l, LoaderStats *out)
{
    pthread_mutex_lock(&l->mu);
    *out = l->st;
    out->workers = l->workers;
    out->prefetch = prefetch_of(l);
    out->batch = l->batch;
    out->ready = 0;
    for (int i = 0; i < l->nslots; i++)
        if (l->slots[i].state == SLOT_READY && l->slots[i].gen == l->gen)
            out->ready++;
    pthread_mutex_unlock(&l->mu);
}

void loader_set_trace(Loader *l, Trace *t)
{
    pthread_mutex_lock(&l->mu);
    l->trace = t;
    pthread_mutex_unlock(&l->mu);
}
