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
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "util/arena.h"
#include "data/augment.h"
#include "data/loader.h"
#include "nn/workpool.h"
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

/* The images come from all over a data set larger than the cache, one at
 * a time: each is asked for FILL_AHEAD images before its turn, and
 * looked up 8 pixels to a gather where the CPU has one.  At batch 64 the
 * fill took 65-70 us, 42 so (the same floats; session 26). */
#define FILL_AHEAD 2

static void image_prefetch(const uint8_t *img, int npix)
{
    for (int k = 0; k < npix; k += 64)
        __builtin_prefetch(img + k);
    __builtin_prefetch(img + npix - 1);
}

void loader_fill(float *x, uint8_t *labels, const uint8_t *images,
                 const uint8_t *all_labels, const uint32_t *idx, int n,
                 int npix, const float lut[256])
{
    for (int i = 0; i < n && i < FILL_AHEAD; i++)
        image_prefetch(images + (size_t)idx[i] * npix, npix);
    for (int i = 0; i < n; i++) {
        const uint8_t *src = images + (size_t)idx[i] * npix;
        float *dst = x + (size_t)i * npix;
        int k = 0;
        if (i + FILL_AHEAD < n)
            image_prefetch(images + (size_t)idx[i + FILL_AHEAD] * npix, npix);
#ifdef __AVX2__
        for (; k + 8 <= npix; k += 8) {
            __m256i p = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src + k)));
            _mm256_storeu_ps(dst + k, _mm256_i32gather_ps(lut, p, 4));
        }
#endif
        for (; k < npix; k++)
            dst[k] = lut[src[k]];
        labels[i] = all_labels[idx[i]];
    }
}

/* A slot's life: FREE -> FILLING (claimed for a ticket) -> READY -> TAKEN
 * (by the trainer) -> FREE; GROWING while its thread enlarges it without
 * the lock, then FREE again. */
enum { SLOT_FREE, SLOT_GROWING, SLOT_FILLING, SLOT_READY, SLOT_TAKEN };

/* slot_get(), ticket_claim(): the state may have changed while the lock
 * was released to grow a slot; look again. */
#define SLOT_RETRY (-2)

typedef struct Slot {
    int state;
    unsigned gen;       /* the flush generation it was claimed in */
    long seq;           /* its ticket */
    long epoch, pos;
    int n, cap;         /* images in it, and room for */
    int n_global, first;/* the whole step's images, and where this share begins */
    float *x;
    uint8_t *labels;
    uint32_t *idx;
} Slot;

#define LOADER_MAX_SLOTS (CN_MAX_PREFETCH + CN_MAX_WORKERS + 2)

typedef struct Worker {
    pthread_t th;       /* under ctl_mu */
    int state;          /* under mu: 0 none, 1 starting or running, 2 finished
                           (to be joined) */
} Worker;

struct Loader {
    LoaderSrc src;
    int npix;
    float lut[256];
    ThreadReg *reg;
    /* Held by loader_set_workers() and loader_free() while they start and
     * join threads (system calls), which they do without mu. */
    pthread_mutex_t ctl_mu;
    pthread_mutex_t mu;
    pthread_cond_t cond_ready;  /* a slot became ready, or workers changed */
    pthread_cond_t cond_room;   /* a ticket was taken or flushed, or workers changed */
    /* under mu: */
    unsigned gen;
    long next_seq;              /* the next ticket to issue */
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
    AugParams *inline_aug;      /* the inline fill's scratch, one per pool thread */
    Workpool *pool;             /* the trainer's compute pool, or NULL (loader_set_pool) */
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

/* Gives slot s room for n images; 0, or -1 without memory (s then has
 * none).  Its thread owns the slot (GROWING): runs without the lock. */
static int slot_grow(const Loader *l, Slot *s, int n)
{
    mem_free(s->x);
    free(s->labels);
    free(s->idx);
    s->x = mem_alloc((size_t)n * l->npix * sizeof(float));
    s->labels = malloc((size_t)n);
    s->idx = malloc((size_t)n * sizeof *s->idx);
    s->cap = s->x && s->labels && s->idx ? n : 0;
    return s->cap ? 0 : -1;
}

/* A free slot with room for n images, adding one to the set if needed;
 * under mu.  A free slot too small is grown with mu released (the
 * allocation may map memory: a system call the trainer must not wait
 * behind), and SLOT_RETRY returned.  -1: no slot, or no memory. */
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
    if (s->cap >= n)
        return i;
    s->state = SLOT_GROWING;
    pthread_mutex_unlock(&l->mu);
    int rc = slot_grow(l, s, n);
    pthread_mutex_lock(&l->mu);
    s->state = SLOT_FREE;
    pthread_cond_broadcast(&l->cond_room);
    return rc == 0 ? SLOT_RETRY : -1;
}

/* Issues ticket next_seq into a free slot; under mu.  Returns the slot
 * index, SLOT_RETRY (see slot_get), or -1 (out of memory). */
static int ticket_claim(Loader *l)
{
    long left = l->src.n - l->issue_pos;
    int ng = left < l->batch ? (int)left : l->batch;
    int ranks = l->src.ranks > 1 ? l->src.ranks : 1, r = l->src.rank;
    int first = (int)((long)r * ng / ranks);
    int n = (int)((long)(r + 1) * ng / ranks) - first;
    int i = slot_get(l, n);

    if (i < 0)
        return i;
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
    s->n_global = ng;
    s->first = first;
    memcpy(s->idx, l->perm + l->issue_pos + first, (size_t)n * sizeof *s->idx);
    l->issue_pos += ng;
    if (l->issue_pos >= l->src.n) {
        l->issue_epoch++;
        l->issue_pos = 0;
    }
    return i;
}

/* Images [i0, i1) of a claimed slot; runs without the lock. */
static void slot_fill_range(const Loader *l, Slot *s, AugParams *ap, int i0, int i1)
{
    const LoaderSrc *src = &l->src;

    if (!src->augment) {
        loader_fill(s->x + (size_t)i0 * l->npix, s->labels + i0, src->images, src->labels,
                    s->idx + i0, i1 - i0, l->npix, l->lut);
        return;
    }
    for (int i = i0; i < i1; i++) {
        uint32_t k = s->idx[i];
        augment_draw(ap, src->augment, src->rows, src->cols, src->seed, s->epoch, k);
        augment_apply(s->x + (size_t)i * l->npix, src->images + (size_t)k * l->npix, src->rows,
                      src->cols, ap);
        s->labels[i] = src->labels[k];
    }
}

/* Prepares a claimed slot; runs without the lock. */
static void slot_fill(const Loader *l, Slot *s, AugParams *ap)
{
    slot_fill_range(l, s, ap, 0, s->n);
}

/*
 * The inline fill over the compute pool: pieces of FILL_PIECE images,
 * taken by whichever thread is free, each image's draw its own (keyed by
 * seed, epoch and sample), so the batch is the same bytes as one thread's.
 * One thread filled a batch of 64 in 0.14 ms while the other compute
 * thread waited (1.4-2.9% of a step, the part of the step that did not
 * scale with the threads: bench/RESULTS.md, session 33).  Pieces rather
 * than one per thread, so that a faster core takes more of them.
 */
#define FILL_PIECE 8

typedef struct FillJob {
    const Loader *l;
    Slot *s;
} FillJob;

static void job_fill(void *ctx, int item, int tid)
{
    const FillJob *j = ctx;
    int i0 = item * FILL_PIECE, i1 = i0 + FILL_PIECE < j->s->n ? i0 + FILL_PIECE : j->s->n;

    slot_fill_range(j->l, j->s, &j->l->inline_aug[tid], i0, i1);
}

static void slot_fill_inline(const Loader *l, Slot *s)
{
    int pieces = (s->n + FILL_PIECE - 1) / FILL_PIECE;

    if (!l->pool || workpool_threads(l->pool) < 2 || pieces < 2) {
        slot_fill(l, s, l->inline_aug);
        return;
    }
    FillJob j = {.l = l, .s = s};
    workpool_run(l->pool, pieces, job_fill, &j);
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

/* Waits for room in the queue, as blocked time while a run is active,
 * else idle; under mu. */
static void worker_wait_room(Loader *l)
{
    double t0 = timer_now();
    int active = l->active;

    pthread_cond_wait(&l->cond_room, &l->mu);
    if (active)
        l->st.blocked += timer_now() - t0;
    else
        l->st.idle += timer_now() - t0;
}

/* Prepares claimed slot s with mu released, and marks it done; called and
 * returns under mu.  *named: this thread's name is in the trace. */
static void worker_fill(Loader *l, Slot *s, AugParams *ap, const char *name, int *named)
{
    /* Traced only if the trace was on when the fill began: one made
     * during the fill has its origin after t0. */
    Trace *tr = l->trace;

    pthread_mutex_unlock(&l->mu);
    double t0 = timer_now();
    slot_fill(l, s, ap);
    double t1 = timer_now(), dt = t1 - t0;
    pthread_mutex_lock(&l->mu);
    if (tr) {
        if (!*named) {
            trace_thread(tr, name);
            *named = 1;
        }
        trace_add(tr, "loader", "prepare batch", t0, t1, s->n);
    }
    l->st.prepare += dt;
    slot_done(l, s);
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
    while (!l->quit && a.id < l->workers && ap) {
        if (l->next_seq - l->take_seq >= prefetch_of(l)) {
            worker_wait_room(l);
            continue;
        }
        int i = ticket_claim(l);
        if (i >= 0)
            worker_fill(l, &l->slots[i], ap, name, &named);
        else if (i != SLOT_RETRY)
            pthread_cond_wait(&l->cond_room, &l->mu); /* no memory: wait for a slot */
    }
    l->w[a.id].state = 2;
    pthread_mutex_unlock(&l->mu);
    free(ap);
    if (l->reg)
        threadreg_leave(l->reg);
    return NULL;
}

/* Joins the threads that have left (state 2) and starts those up to
 * l->workers; under ctl_mu, without mu: pthread_join and pthread_create are
 * system calls, and the trainer takes mu for every batch.  mu is taken
 * only to read and set the workers' states. */
static int start_workers(Loader *l)
{
    int join[CN_MAX_WORKERS], start[CN_MAX_WORKERS], rc = 0;
    sigset_t all, old;

    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < CN_MAX_WORKERS; i++)
        join[i] = l->w[i].state == 2;
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < CN_MAX_WORKERS; i++)
        if (join[i])
            pthread_join(l->w[i].th, NULL);
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < CN_MAX_WORKERS; i++) {
        if (join[i])
            l->w[i].state = 0;
        start[i] = i < l->workers && l->w[i].state == 0;
        if (start[i])
            l->w[i].state = 1; /* reserved: a worker that leaves sets 2 */
    }
    pthread_mutex_unlock(&l->mu);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < CN_MAX_WORKERS; i++) {
        if (!start[i])
            continue;
        WorkerArg *a = rc ? NULL : malloc(sizeof *a);
        if (!a || (a->l = l, a->id = i, pthread_create(&l->w[i].th, NULL, worker_main, a) != 0)) {
            free(a);
            pthread_mutex_lock(&l->mu);
            l->w[i].state = 0; /* never started, nor will any after it */
            if (!rc && l->workers > i)
                l->workers = i;
            pthread_mutex_unlock(&l->mu);
            rc = -CN_ENOMEM;
        }
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
    pthread_mutex_init(&l->ctl_mu, NULL);
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

int loader_set_pool(Loader *l, Workpool *pool)
{
    int n = pool ? workpool_threads(pool) : 1;
    AugParams *aug = malloc((size_t)n * sizeof *aug);

    if (!aug)
        return -CN_ENOMEM;
    free(l->inline_aug);
    l->inline_aug = aug;
    l->pool = pool;
    return 0;
}

void loader_free(Loader *l)
{
    if (!l)
        return;
    int started[CN_MAX_WORKERS];

    pthread_mutex_lock(&l->ctl_mu);
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
    pthread_mutex_unlock(&l->ctl_mu);
    for (int i = 0; i < l->nslots; i++) {
        mem_free(l->slots[i].x);
        free(l->slots[i].labels);
        free(l->slots[i].idx);
    }
    pthread_mutex_destroy(&l->ctl_mu);
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
        if (l->slots[i].state >= SLOT_FILLING && l->slots[i].gen == l->gen &&
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
            if (i == SLOT_RETRY)
                continue;
            if (i >= 0) {
                Slot *s = &l->slots[i];
                pthread_mutex_unlock(&l->mu);
                double t0 = timer_now();
                slot_fill_inline(l, s);
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
    b->n_global = s->n_global;
    b->first = s->first;
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
    pthread_mutex_lock(&l->ctl_mu);
    pthread_mutex_lock(&l->mu);
    l->workers = workers;
    /* Surplus threads see it and leave; the trainer, inline loading with 0. */
    pthread_cond_broadcast(&l->cond_room);
    pthread_cond_broadcast(&l->cond_ready);
    pthread_mutex_unlock(&l->mu);
    rc = start_workers(l);
    pthread_mutex_lock(&l->mu);
    pthread_cond_broadcast(&l->cond_room);
    pthread_cond_broadcast(&l->cond_ready);
    pthread_mutex_unlock(&l->mu);
    pthread_mutex_unlock(&l->ctl_mu);
    return rc;
}

void loader_set_prefetch(Loader *l, int prefetch)
{
    pthread_mutex_lock(&l->mu);
    l->prefetch_set = prefetch;
    pthread_cond_broadcast(&l->cond_room);
    pthread_mutex_unlock(&l->mu);
}

/* Discards every ticket not yet taken and restarts issuing at (epoch,
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
