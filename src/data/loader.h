/*
 * loader.h: the data pipeline that feeds the trainer its batches.
 *
 * A batch is N images gathered in the order of a slice of the epoch's
 * permutation, converted from uint8 to normalised floats exactly as
 * torchvision's ToTensor + Normalize((0.1307,), (0.3081,)) do in float32,
 * optionally augmented (augment.h), and written contiguously into a 64-byte
 * aligned slot: x (N, rows*cols), labels (N).
 *
 * DESIGN
 * Tickets are issued in order: ticket `seq` is the slice (epoch, pos, n)
 * of the permutation for (seed, epoch), starting where the previous ticket
 * ended, at the batch size of the moment.  With W = 0 the
 * trainer prepares its own ticket inline.  With W > 0, loader threads claim
 * tickets in order, each into a free slot, while fewer than `prefetch`
 * tickets are outstanding (claimed but not yet taken by the trainer), and
 * the trainer takes ticket after ticket strictly in order, waiting when the
 * next is not ready.  So the batch sequence is the same for any W, and W can
 * change at any moment: new threads start claiming, surplus threads leave
 * after their current batch.  A change of batch size flushes: tickets not
 * yet taken are discarded (a slot still being prepared is dropped when its
 * thread finishes, recognised by its generation) and issuing restarts at
 * the trainer's position.  Nothing is lost or repeated.  With W = 0 and the
 * trainer's compute pool lent (loader_set_pool), the inline fill runs over
 * the pool's threads, in pieces of a few images.
 *
 * Everything below `mu` in struct Loader is guarded by it; the data set is
 * read-only and shared by every thread.  Slot memory grows on demand and is
 * reused; the step never allocates once the slots exist.  No thread holds
 * mu across a system call, since the trainer takes it for every batch:
 * batches are prepared, slots grown (malloc may map memory) and threads
 * started and joined with mu released; `ctl_mu` serialises the starting
 * and joining (loader_set_workers, loader_free).
 */
#ifndef CNNTOP_LOADER_H
#define CNNTOP_LOADER_H

#include <stdatomic.h>
#include <stdint.h>

#include "cnntop/data.h"
#include "cnntop/limits.h"

#define LOADER_MEAN 0.1307f
#define LOADER_STD 0.3081f

typedef struct ThreadReg ThreadReg;

/* lut[p] = (p/255 - mean)/std in float32 for every pixel value p. */
void loader_lut(float lut[256]);

/* x (n, npix), labels (n) <- images (., npix), all_labels (.) at idx[0..n). */
void loader_fill(float *x, uint8_t *labels, const uint8_t *images,
                 const uint8_t *all_labels, const uint32_t *idx, int n,
                 int npix, const float lut[256]);

/* What the loader reads: a data set in memory, shared read-only. */
typedef struct LoaderSrc {
    const uint8_t *images;  /* (n, rows*cols) */
    const uint8_t *labels;  /* (n) */
    long n;                 /* samples per epoch */
    int rows, cols;
    uint64_t seed;          /* for the permutations and augmentation */
    unsigned augment;       /* CN_AUG_* bits */
    int rank, ranks;        /* data-parallel: each ticket's slice of the permutation is
                               the whole step's; this process takes its contiguous share
                               [rank*n/ranks, (rank+1)*n/ranks).  ranks 0 or 1: all */
} LoaderSrc;

/* A batch handed to the trainer; valid until loader_release(). */
typedef struct Batch {
    float *x;
    uint8_t *labels;
    int n;                  /* images in it */
    int n_global;           /* the step's images over every rank (n with one) */
    int first;              /* where this share begins in the step's images (0 with one) */
    long epoch, pos;        /* its place: the step's slice [pos, pos+n_global) of the
                               permutation, of which this is [pos+first, pos+first+n) */
    const uint32_t *idx;    /* (n) the sample indices, for tests */
    int slot;               /* internal */
} Batch;

/* Loader figures, for LiveStats. */
typedef struct LoaderStats {
    int workers, prefetch, batch;
    int ready;              /* batches ready now */
    double prepare, blocked, idle; /* worker seconds, summed */
    double inline_prepare;  /* trainer seconds preparing with W = 0 */
    long batches;           /* delivered to the trainer */
    long samples_prepared;  /* by workers and inline */
} LoaderStats;

typedef struct Loader Loader;

/* Starts the loader at (epoch, pos) with `workers` threads.  prefetch 0
 * means 2 per worker.  Threads enter `reg` (may be NULL). */
int loader_new(Loader **out, const LoaderSrc *src, int batch, int workers, int prefetch,
               long epoch, long pos, ThreadReg *reg);

/* Lends the loader the trainer's compute pool for its inline fills (W =
 * 0): the trainer, which calls loader_next(), also drives `pool`, and the
 * pool is idle while it waits for a batch.  Call it before the first
 * batch, on the thread that calls loader_next(); NULL takes it back.  The
 * pool must outlive the loader or be taken back first.  Returns 0 or
 * -CN_ENOMEM. */
typedef struct Workpool Workpool;
int loader_set_pool(Loader *l, Workpool *pool);

/* Stops and joins every thread, frees everything.  NULL is fine. */
void loader_free(Loader *l);

/* The next batch, in order.  Returns 0, or 1 if `stop` became non-zero while
 * waiting (checked every 50 ms). */
int loader_next(Loader *l, Batch *b, const atomic_int *stop);

/* Gives the batch's slot back. */
void loader_release(Loader *l, Batch *b);

/* Live changes, from any thread. */
int loader_set_workers(Loader *l, int workers);
void loader_set_prefetch(Loader *l, int prefetch);   /* 0: 2 per worker */
void loader_set_batch(Loader *l, int batch);         /* flushes if it differs */

/* Restarts issuing at (epoch, pos) if it is elsewhere (flushes). */
void loader_seek(Loader *l, long epoch, long pos);

/* While active, workers waiting on a full queue count as blocked, else idle. */
void loader_set_active(Loader *l, int active);

void loader_stats(Loader *l, LoaderStats *out);

/* Records each batch prepared into `t` (NULL: stop).  Set it between runs. */
typedef struct Trace Trace;
void loader_set_trace(Loader *l, Trace *t);

#endif
