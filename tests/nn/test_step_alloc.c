/*
 * test_step_alloc.c: a training step after the first allocates nothing and
 * takes no page fault (issue 21's target; model.h: the arena is planned
 * once, and fresh memory is slow to touch).
 *
 * The whole step of the engine's model (forward, loss, backward, Adam) at
 * batch 64, with 1 and 2 compute threads and every GEMM path the CPU
 * runs, after two warm-up steps: over each window of 4 steps, the calls to malloc and its
 * family (counted by wrappers that this binary puts in front of glibc's,
 * so OpenBLAS's calls count too) must be 0, and the process's minor page
 * faults (getrusage) 0 in at least one of 6 windows.  A window may
 * catch a fault the kernel makes for its own reasons (a NUMA balancing
 * scan, a page migrated), or one in OpenBLAS's buffers, which are shared
 * slots taken at call time (gemm.h): under load a slot can meet a larger
 * product first a few steps on.  A step that touches fresh memory faults
 * in every window.  A step that called malloc once failed the test, and so
 * did a buffer of 64 KiB from mmap touched anew each step (checked while
 * writing it).  Run beside another busy test (test_train), it failed 1
 * run in 10: a thread kept off the CPU in the first steps ran some kinds
 * of job first much later, and faulted then.  With the pool touching its
 * threads' stacks and model_warm touching OpenBLAS's buffers (workpool.c,
 * gemm.h), 1 run in 40 with 3 windows, none of 40 with 6.
 *
 * Sanitizer builds replace malloc and fault on their shadow memory, so
 * there the test skips.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "nn/gemm.h"
#include "nn/model.h"
#include "nntest.h"
#include "util/rng.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SANITIZED 1
#endif
#endif

#define B 64
#define WARM 2
#define WINDOWS 6
#define STEPS 4

#ifndef SANITIZED
static _Atomic long allocs; /* calls into the malloc family since the start */

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
    allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    allocs++;
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    allocs++;
    return __libc_realloc(p, n);
}

void *aligned_alloc(size_t a, size_t n)
{
    allocs++;
    return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
    allocs++;
    *out = __libc_memalign(a, n);
    return *out ? 0 : 12; /* ENOMEM */
}
#endif

static long alloc_count(void)
{
#ifndef SANITIZED
    return allocs;
#else
    return 0;
#endif
}

static long minor_faults(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static void fill_batch(Acts *a)
{
    uint64_t key = rng_key(42, 99, 1);

    for (int i = 0; i < B * MODEL_H * MODEL_W; i++)
        a->x[i] = 2.0f * rng_unit(rng_at(key, (uint64_t)i)) - 0.5f;
    for (int n = 0; n < B; n++)
        a->labels[n] = (uint8_t)(n * 7 % MODEL_CLASSES);
}

static void step(StepCtx *s, long k)
{
    model_forward(s, B, 1, k);
    model_loss(s, B);
    model_backward(s, B);
    model_update(s, 1e-3);
}

static void test_steps(int threads, GemmPath path)
{
    Params ps;
    Acts a;
    Workpool *pool;

    CHECK_INT(params_init(&ps, 3), ==, 0);
    CHECK_INT(acts_init(&a, B, threads), ==, 0);
    CHECK_INT(workpool_new(&pool, threads, NULL), ==, 0);
    CHECK_INT(model_warm(pool), ==, 0); /* as the engine does */
    StepCtx s = {.ps = &ps, .a = &a, .pool = pool, .prof = NULL, .seed = 5, .gemm = path};
    long k = 0, best_faults = -1, most_allocs = 0;

    fill_batch(&a);
    for (; k < WARM; k++)
        step(&s, k);
    for (int w = 0; w < WINDOWS; w++) {
        long a0 = alloc_count();
        long f0 = minor_faults();
        for (int i = 0; i < STEPS; i++, k++)
            step(&s, k);
        long f = minor_faults() - f0;
        long n = alloc_count() - a0;
        best_faults = best_faults < 0 || f < best_faults ? f : best_faults;
        most_allocs = n > most_allocs ? n : most_allocs;
    }
    fprintf(stderr, "%d thread(s), %s: %ld allocations at most and %ld page faults at least "
            "in %d steps\n", threads, gemm_path_name(path), most_allocs, best_faults, STEPS);
    CHECK_INT(most_allocs, ==, 0);
    CHECK_INT(best_faults, ==, 0);
    workpool_free(pool);
    acts_done(&a);
    params_done(&ps);
}

int main(void)
{
#ifdef SANITIZED
    check_skip("a sanitizer build replaces malloc and faults on its shadow memory");
#endif
    GemmPath paths[3];
    int npaths;

    gemm_init(); /* one OpenBLAS thread, as in training */
    nntest_gemm_paths(paths, &npaths);
    for (int i = 0; i < npaths; i++)
        for (int threads = 1; threads <= 2; threads++)
            test_steps(threads, paths[i]);
    return check_report();
}
