/*
 * workpool.c: a fork-join pool for the compute threads.
 *
 * DESIGN
 * workpool_run() publishes the job (fn, ctx, nitems) under the mutex `mu`,
 * then the generation `gen` with a release store, and broadcasts `go`.
 * Each worker that sees a new generation takes items from the atomic
 * counter `next` until they run out, then decrements `busy`; the one that
 * brings it to zero signals `done` under `mu`.  The caller works on items
 * too, so a pool of one thread has no workers at all.
 *
 * A step is some 35 jobs of a few hundred microseconds with little serial
 * work between them, so waking through the condition variables each time
 * cost about 38 us per job here (a futex wake and a context switch each
 * way).  So both sides spin first: a worker watches `gen` and the caller
 * watches `busy` for up to `spin_ns` before sleeping on the condition
 * variables.  The wait that matters is the end of a conv phase, where one
 * thread finishes its last chunk up to a chunk's time (about a
 * millisecond at batch 64) before the other: with 50 us of spin the early
 * one had gone to sleep by then, and 15% of the threads' time in the
 * phases was idle; at 500 us the step ran 0.86 of its time (batch 64,
 * 7 runs alternated; 2 ms was no faster).  Spinning takes a core from
 * whatever else would run, so the long spin is for a pool with a core per
 * thread (sysinfo_cores()); a pool of more threads than that spins
 * SPIN_SHARED_NS, as before.  The sleeping paths re-check under `mu`, so no wake-up is
 * lost; the job's fields are read after an acquire load of `gen` that
 * pairs with the release store after they were written, and are not
 * written again until every worker is done with them.
 *
 * No page fault after the first step: each thread touches its stack
 * deeper than a job goes before its first item (stack_touch).  A thread
 * otherwise touches fresh stack the first time it runs a deep kind of
 * job, and a worker that other programs kept off the CPU in the first
 * steps ran some kinds first many steps on, and faulted then
 * (test_step_alloc beside test_train, 1 run in 10).  OpenBLAS's buffers,
 * slots of one table taken at call time, are model_warm's (gemm.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cnntop/counters.h"
#include "nn/workpool.h"
#include "prof/sysinfo.h"
#include "prof/threadreg.h"

#define SPIN_NS 500000      /* how long a side spins before it sleeps */
#define SPIN_SHARED_NS 50000 /* the same, with more threads than cores */

struct Workpool {
    int threads;            /* caller + workers, e.g. 2 */
    long spin_ns;           /* SPIN_NS, or SPIN_SHARED_NS */
    pthread_t *th;          /* (threads - 1) workers */
    pthread_mutex_t mu;
    pthread_cond_t go;      /* a new generation was published, or quit */
    pthread_cond_t done;    /* busy fell to zero */
    atomic_ulong gen;       /* job generation: written under mu, read anywhere */
    atomic_int busy;        /* workers still on this generation */
    atomic_int quit;
    WorkpoolFn fn;              /* the job: written under mu before gen */
    void *ctx;
    int nitems;
    int each;               /* workpool_each: item = tid, after the start barrier */
    atomic_int arrived;     /* threads at workpool_each's start barrier */
    atomic_int next;        /* next unclaimed item */
    ThreadReg *reg;         /* where workers enter, or NULL */
};

static long now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins until *gen differs from seen (returns 1) or spin_ns pass (0). */
static int spin_for_job(atomic_ulong *gen, unsigned long seen, long spin_ns)
{
    long t0 = now_ns();

    for (int i = 1;; i++) {
        if (atomic_load_explicit(gen, memory_order_acquire) != seen)
            return 1;
        cpu_relax();
        if (i % 64 == 0 && now_ns() - t0 > spin_ns)
            return 0;
    }
}

/* Spins until *busy is 0 (returns 1) or spin_ns pass (0). */
static int spin_for_workers(atomic_int *busy, long spin_ns)
{
    long t0 = now_ns();

    for (int i = 1;; i++) {
        if (atomic_load_explicit(busy, memory_order_acquire) == 0)
            return 1;
        cpu_relax();
        if (i % 64 == 0 && now_ns() - t0 > spin_ns)
            return 0;
    }
}

typedef struct WorkerArg {
    Workpool *pool;
    int tid;
} WorkerArg;

/* Bytes of stack every thread of the pool touches before its first item
 * (DESIGN): more than any job goes down (the native GEMM packs 64 KiB of
 * B there). */
#define STACK_TOUCH (256 * 1024)

static __attribute__((noinline)) void stack_touch(void)
{
    volatile char page[STACK_TOUCH];

    for (size_t i = 0; i < sizeof page; i += 1024)
        page[i] = 0;
}

static _Thread_local int stack_touched;

static void stack_touch_once(void)
{
    if (!stack_touched) {
        stack_touch();
        stack_touched = 1;
    }
}

static void pool_drain(Workpool *p, WorkpoolFn fn, void *ctx, int nitems, int tid)
{
    if (p->each) {
        atomic_fetch_add_explicit(&p->arrived, 1, memory_order_acq_rel);
        while (atomic_load_explicit(&p->arrived, memory_order_acquire) < p->threads)
            cpu_relax();
        fn(ctx, tid, tid);
        return;
    }
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
    Workpool *p = arg.pool;
    unsigned long seen = 0;
    char name[16];

    free(argp);
    stack_touch_once();
    snprintf(name, sizeof name, "cnntop-comp/%d", arg.tid);
    if (p->reg)
        threadreg_enter(p->reg, CN_ROLE_TRAIN, name);
    else
        pthread_setname_np(pthread_self(), name);

    for (;;) {
        if (!spin_for_job(&p->gen, seen, p->spin_ns)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen &&
                   !atomic_load_explicit(&p->quit, memory_order_relaxed))
                pthread_cond_wait(&p->go, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load_explicit(&p->quit, memory_order_acquire))
            break;
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        pool_drain(p, p->fn, p->ctx, p->nitems, arg.tid);
        if (atomic_fetch_sub_explicit(&p->busy, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    if (p->reg)
        threadreg_leave(p->reg);
    return NULL;
}

static int pool_start_workers(Workpool *p)
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

int workpool_new(Workpool **out, int threads, ThreadReg *reg)
{
    Workpool *p = calloc(1, sizeof *p);

    *out = NULL;
    if (!p)
        return -CN_ENOMEM;
    p->threads = threads < 1 ? 1 : threads;
    p->spin_ns = p->threads <= sysinfo_cores() ? SPIN_NS : SPIN_SHARED_NS;
    p->reg = reg;
    p->th = calloc((size_t)p->threads, sizeof *p->th);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->gen, 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->quit, 0);
    atomic_init(&p->next, 0);
    atomic_init(&p->arrived, 0);
    if (!p->th || pool_start_workers(p) != 0) {
        workpool_free(p);
        return -CN_ENOMEM;
    }
    *out = p;
    return 0;
}

void workpool_free(Workpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store_explicit(&p->quit, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release); /* wakes the spinners */
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

/* workpool_run and workpool_each: `each` as the field says. */
static void pool_run(Workpool *p, int nitems, WorkpoolFn fn, void *ctx, int each)
{
    if (nitems <= 0)
        return;
    stack_touch_once(); /* the caller takes items too */
    if (p->threads == 1 || nitems == 1) {
        for (int i = 0; i < nitems; i++)
            fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->nitems = nitems;
    p->each = each;
    atomic_store_explicit(&p->arrived, 0, memory_order_relaxed);
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->busy, p->threads - 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);

    pool_drain(p, fn, ctx, nitems, 0);

    if (!spin_for_workers(&p->busy, p->spin_ns)) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->busy, memory_order_acquire) > 0)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

void workpool_run(Workpool *p, int nitems, WorkpoolFn fn, void *ctx)
{
    pool_run(p, nitems, fn, ctx, 0);
}

void workpool_each(Workpool *p, WorkpoolFn fn, void *ctx)
{
    pool_run(p, p->threads, fn, ctx, 1);
}

int workpool_threads(const Workpool *p)
{
    return p->threads;
}
