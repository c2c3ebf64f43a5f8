/*
 * pool.c: a fork-join pool for the compute threads.
 *
 * DESIGN
 * One mutex `mu` and two condition variables guard the job: pool_run()
 * publishes (fn, ctx, nitems), bumps the generation `gen` and broadcasts
 * `go`; each worker that sees a new generation takes items from the atomic
 * counter `next` until they run out, then decrements `busy` and signals
 * `done` when it reaches zero.  Items are claimed without the lock; the lock
 * is never held while an item runs.  Fields: fn, ctx, nitems, gen, busy and
 * quit are read and written under `mu` only; `next` is atomic.  The caller
 * works on items too, so a pool of one thread has no workers at all.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cnntop/engine.h"
#include "pool.h"
#include "threadreg.h"

struct Pool {
    int threads;            /* caller + workers, e.g. 2 */
    pthread_t *th;          /* (threads - 1) workers */
    pthread_mutex_t mu;
    pthread_cond_t go;      /* a new generation was published, or quit */
    pthread_cond_t done;    /* busy fell to zero */
    unsigned long gen;      /* job generation, under mu */
    int busy;               /* workers still on this generation, under mu */
    int quit;               /* under mu */
    PoolFn fn;              /* the job, under mu */
    void *ctx;
    int nitems;
    atomic_int next;        /* next unclaimed item */
    ThreadReg *reg;         /* where workers enter, or NULL */
};

typedef struct WorkerArg {
    Pool *pool;
    int tid;
} WorkerArg;

static void pool_drain(Pool *p, PoolFn fn, void *ctx, int nitems, int tid)
{
    for (;;) {
        int i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= nitems)
            break;
        fn(ctx, i, tid);
    }
}

static void *pool_worker(void *argp)
{
    WorkerArg arg = *(WorkerArg *)argp;
    Pool *p = arg.pool;
    unsigned long seen = 0;
    char name[16];

    free(argp);
    snprintf(name, sizeof name, "cnntop-comp/%d", arg.tid);
    if (p->reg)
        threadreg_enter(p->reg, CN_ROLE_TRAIN, name);
    else
        pthread_setname_np(pthread_self(), name);

    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        PoolFn fn = p->fn;
        void *ctx = p->ctx;
        int nitems = p->nitems;
        pthread_mutex_unlock(&p->mu);

        pool_drain(p, fn, ctx, nitems, arg.tid);

        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    if (p->reg)
        threadreg_leave(p->reg);
    return NULL;
}

static int pool_start_workers(Pool *p)
{
    sigset_t all, old;

    /* Workers inherit a mask with every signal blocked: only the front end's
     * thread handles signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int t = 1; t < p->threads; t++) {
        WorkerArg *arg = malloc(sizeof *arg);
        if (!arg || (arg->pool = p, arg->tid = t,
                     pthread_create(&p->th[t - 1], NULL, pool_worker, arg) != 0)) {
            free(arg);
            p->threads = t; /* join the ones that did start */
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            return -CN_ENOMEM;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return 0;
}

int pool_new(Pool **out, int threads, ThreadReg *reg)
{
    Pool *p = calloc(1, sizeof *p);

    *out = NULL;
    if (!p)
        return -CN_ENOMEM;
    p->threads = threads < 1 ? 1 : threads;
    p->reg = reg;
    p->th = calloc((size_t)p->threads, sizeof *p->th);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    if (!p->th || pool_start_workers(p) != 0) {
        pool_free(p);
        return -CN_ENOMEM;
    }
    *out = p;
    return 0;
}

void pool_free(Pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t < p->threads; t++)
        pthread_join(p->th[t - 1], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
}

void pool_run(Pool *p, int nitems, PoolFn fn, void *ctx)
{
    if (nitems <= 0)
        return;
    if (p->threads == 1 || nitems == 1) {
        for (int i = 0; i < nitems; i++)
            fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->nitems = nitems;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->busy = p->threads - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);

    pool_drain(p, fn, ctx, nitems, 0);

    pthread_mutex_lock(&p->mu);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int pool_threads(const Pool *p)
{
    return p->threads;
}
