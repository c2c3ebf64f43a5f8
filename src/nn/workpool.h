/*
 * workpool.h: the compute threads.
 *
 * A Workpool runs a function over items 0..n-1 on T threads: T-1 workers plus
 * the calling thread, which takes items too.  Items are handed out in any
 * order to any thread; a function that writes only item-owned memory (and
 * per-thread scratch indexed by `tid`) therefore gives the same result for
 * any T.  That is how cnntop's losses stay bit-identical across --threads.
 */
#ifndef CNNTOP_WORKPOOL_H
#define CNNTOP_WORKPOOL_H

/* Work on item `item` using thread `tid`'s scratch (0 <= tid < threads). */
typedef void (*WorkpoolFn)(void *ctx, int item, int tid);

typedef struct Workpool Workpool;
typedef struct ThreadReg ThreadReg;

/* Starts threads-1 workers (named "cnntop-comp/N", all signals blocked),
 * entered in `reg` (may be NULL) as role CN_ROLE_TRAIN.  Returns 0 or a
 * negative CN_E* code. */
int workpool_new(Workpool **out, int threads, ThreadReg *reg);

/* Stops and joins the workers.  NULL is fine. */
void workpool_free(Workpool *p);

/* Calls fn(ctx, i, tid) for every i in [0, nitems) and returns when all are
 * done.  Only one thread may call workpool_run on a pool at a time. */
void workpool_run(Workpool *p, int nitems, WorkpoolFn fn, void *ctx);

/* Calls fn(ctx, tid, tid) once on every thread of the pool, the caller
 * as tid 0, all started together (each waits for the others first), and
 * returns when all are done. */
void workpool_each(Workpool *p, WorkpoolFn fn, void *ctx);

/* Threads in the pool, the caller included. */
int workpool_threads(const Workpool *p);

#endif
