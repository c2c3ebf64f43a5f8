/*
 * calibrate.c: the machine's SGEMM rates and memory bandwidth, measured and
 * cached; the sketch on paper.  See cnntop/calibrate.h for the file format
 * and the arithmetic.
 *
 * DESIGN
 * Each measurement is one "crew" of T threads started for it and joined
 * after it; the calling thread is member 0.  Members share only the bench
 * struct of their phase: read-only inputs set before the crew starts, one
 * output slot per member, and a pthread barrier that starts every timed
 * part at the same moment (so the T threads contend for the caches and
 * memory as the engine's compute threads do).  Member 0 alone writes the
 * triad's stop flag, between two barriers, so no lock is needed.  Buffers
 * are allocated and touched once per member, inside the member (fresh
 * pages are slow on some VMs, and touching them in parallel spreads that
 * cost), and reused for every shape.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/arena.h"
#include "cnntop/calibrate.h"
#include "cnntop/limits.h"
#include "cnntop/machine.h"
#include "util/err.h"
#include "cnntop/fileio.h"
#include "calibrate/fmapeak.h"
#include "nn/gemm.h"
#include "nn/model.h"
#include "prof/sysinfo.h"
#include "prof/profile.h"

#define CALIB_FILE_MAX (64 * 1024) /* a cache file larger than this is foreign */
#define CALIB_LINE_MAX 512
#define MIB (1024.0 * 1024.0)
#define GEMM_WINDOWS 3             /* timing windows per model shape, best kept */
#define PEAK_WINDOW_S 0.002        /* one timing window of a peak loop, seconds */
_Static_assert(CALIB_NWIDTHS == PEAK_NWIDTHS, "one figure per width of fmapeak.h");

/* ---- the crew: T threads for one measurement ---- */

typedef void (*CrewFn)(void *bench, int tid);

/* The start gate: members wait until every thread exists (go = 1), or
 * leave at once when one could not be made (go = -1), so that no member is
 * ever left waiting at a barrier for a thread that does not exist. */
typedef struct CrewGate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} CrewGate;

typedef struct CrewArg {
    CrewFn fn;
    void *bench;
    int tid;
    CrewGate *gate;
} CrewArg;

static void *crew_main(void *p)
{
    CrewArg *a = p;
    int go;

    pthread_mutex_lock(&a->gate->mu);
    while (a->gate->go == 0)
        pthread_cond_wait(&a->gate->cv, &a->gate->mu);
    go = a->gate->go;
    pthread_mutex_unlock(&a->gate->mu);
    if (go > 0)
        a->fn(a->bench, a->tid);
    return NULL;
}

/* Runs fn(bench, tid) for tid 0..T-1, tid 0 on the calling thread, and
 * returns when all are done.  The others start with the asynchronous
 * signals blocked, so that those still reach the UI thread.  Returns 0, or
 * -CN_ENOMEM when a thread could not start (then fn ran nowhere). */
static int crew_run(int T, CrewFn fn, void *bench, char *err, size_t errlen)
{
    pthread_t th[CN_MAX_THREADS];
    CrewArg args[CN_MAX_THREADS];
    CrewGate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    sigset_t async, old;
    int n = 1, rc = 0;

    sigfillset(&async);
    sigdelset(&async, SIGSEGV);
    sigdelset(&async, SIGBUS);
    sigdelset(&async, SIGFPE);
    sigdelset(&async, SIGILL);
    pthread_sigmask(SIG_SETMASK, &async, &old);
    for (; n < T; n++) {
        args[n] = (CrewArg){fn, bench, n, &gate};
        int e = pthread_create(&th[n], NULL, crew_main, &args[n]);
        if (e != 0) {
            rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: thread %d of %d: %s", n,
                         T, strerror(e));
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&gate.mu);
    gate.go = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    if (rc == 0)
        fn(bench, 0);
    for (int i = 1; i < n; i++)
        pthread_join(th[i], NULL);
    return rc;
}

/* ---- timing windows: every member's start and end ---- */

typedef struct Window {
    double *t0, *t1;          /* [T] each member's start and end of the window */
} Window;

static int window_alloc(Window *w, int T, char *err, size_t errlen)
{
    w->t0 = calloc((size_t)T, sizeof *w->t0);
    w->t1 = calloc((size_t)T, sizeof *w->t1);
    if (w->t0 && w->t1)
        return 0;
    free(w->t0);
    free(w->t1);
    w->t0 = w->t1 = NULL;
    return cn_fail(err, errlen, -CN_ENOMEM, "calibration: out of memory");
}

static void window_free(Window *w)
{
    free(w->t0);
    free(w->t1);
}

/* From the first member's start to the last one's end, seconds. */
static double window_span(const Window *w, int T)
{
    double lo = w->t0[0], hi = w->t1[0];

    for (int m = 1; m < T; m++) {
        lo = w->t0[m] < lo ? w->t0[m] : lo;
        hi = w->t1[m] > hi ? w->t1[m] : hi;
    }
    return hi - lo;
}

/* ---- SGEMM at the model's shapes ---- */

typedef struct GemmBench {
    const GemmShape *shapes;
    int nshapes;
    const double *slot;       /* [nshapes] seconds each shape is timed */
    double *percall;          /* [T][nshapes] seconds per call, per member */
    size_t na, nb, nc;        /* floats of A, B, C each member needs */
    pthread_barrier_t bar;
    atomic_int failed;        /* a member could not allocate */
} GemmBench;

/* Leading dimensions of a packed row-major op(A) (M, K), op(B) (K, N). */
static void shape_ld(const GemmShape *g, int *lda, int *ldb)
{
    *lda = g->ta ? g->M : g->K;
    *ldb = g->tb ? g->K : g->N;
}

static void gemm_once(const GemmShape *g, const float *A, const float *B, float *C)
{
    int lda, ldb;

    shape_ld(g, &lda, &ldb);
    gemm(g->ta, g->tb, g->M, g->N, g->K, 1.0f, A, lda, B, ldb, 0.0f, C, g->N);
}

static float *bench_buf(size_t n)
{
    float *p = mem_alloc(n * sizeof(float));

    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)(i % 13) * 0.01f;
    return p;
}

static void gemm_member(void *bp, int tid)
{
    GemmBench *b = bp;
    float *A = bench_buf(b->na), *B = bench_buf(b->nb), *C = bench_buf(b->nc);

    if (!A || !B || !C)
        atomic_store(&b->failed, 1);
    for (int i = 0; i < b->nshapes; i++) {
        /* Every member starts each shape together, as a pool phase does. */
        pthread_barrier_wait(&b->bar);
        if (atomic_load(&b->failed))
            break;
        const GemmShape *g = &b->shapes[i];
        gemm_once(g, A, B, C); /* warm: OpenBLAS sets up its buffers */
        /* The fastest of a few windows, so that a neighbour's burst on a
         * shared machine does not stick to one shape. */
        double best = 0.0;
        for (int w = 0; w < GEMM_WINDOWS; w++) {
            double t0 = timer_now(), t;
            long calls = 0;
            do {
                gemm_once(g, A, B, C);
                calls++;
                t = timer_now() - t0;
            } while (t < b->slot[i] / GEMM_WINDOWS);
            best = w == 0 || t / (double)calls < best ? t / (double)calls : best;
        }
        b->percall[(size_t)tid * b->nshapes + i] = best;
    }
    mem_free(A);
    mem_free(B);
    mem_free(C);
}

static double shape_flops(const GemmShape *g)
{
    return 2.0 * g->M * (double)g->N * g->K * (double)g->count;
}

/*
 * The step's GEMM time on T threads: each shape's calls run as the engine's
 * phase runs them, over its `par` items on T threads, in ceil(par/T) rounds,
 * each call taking the per-call time measured with T threads at once.
 * Returns the rate, all threads together, GFLOP/s.
 */
static double step_rate(const GemmBench *b, int first, int n, int T)
{
    double flops = 0.0, secs = 0.0;

    for (int i = first; i < first + n; i++) {
        const GemmShape *g = &b->shapes[i];
        double t = 0.0;
        for (int m = 0; m < T; m++)
            t += b->percall[(size_t)m * b->nshapes + i] / T;
        int par = g->par > 0 ? g->par : 1;
        double rounds = ceil((double)par / (double)T); /* rounds of T parallel calls */
        flops += shape_flops(g);
        secs += (double)g->count * t * rounds / par;
    }
    return secs > 0.0 ? flops / secs * 1e-9 : 0.0;
}

/* Slots: half the budget by FLOP share, half evenly, so small shapes still
 * get enough calls to be timed. */
static void plan_slots(const GemmShape *g, int n, double budget, double *slot)
{
    double total = 0.0;

    for (int i = 0; i < n; i++)
        total += shape_flops(&g[i]);
    for (int i = 0; i < n; i++)
        slot[i] = budget * (0.5 * shape_flops(&g[i]) / total + 0.5 / n);
}

static void buf_need(GemmBench *b, const GemmShape *g)
{
    size_t a = (size_t)g->M * g->K, bb = (size_t)g->K * g->N, c = (size_t)g->M * g->N;

    b->na = a > b->na ? a : b->na;
    b->nb = bb > b->nb ? bb : b->nb;
    b->nc = c > b->nc ? c : b->nc;
}

/* Times both batches' shapes in one crew (buffers made once) and fills
 * out->model_gflops. */
static int measure_model(Calibration *out, int T, double budget, char *err, size_t errlen)
{
    GemmShape shapes[CALIB_NBATCH * MODEL_MAX_GEMM_SHAPES];
    double slot[CALIB_NBATCH * MODEL_MAX_GEMM_SHAPES];
    int first[CALIB_NBATCH], count[CALIB_NBATCH], n = 0, rc;
    GemmBench b = {.shapes = shapes, .slot = slot};

    for (int k = 0; k < CALIB_NBATCH; k++) {
        first[k] = n;
        count[k] = model_gemm_shapes(out->batch[k], shapes + n, MODEL_MAX_GEMM_SHAPES);
        if (count[k] > MODEL_MAX_GEMM_SHAPES)
            return cn_fail(err, errlen, -CN_EINVAL, "calibration: batch %d has %d GEMM "
                           "shapes, more than %d", out->batch[k], count[k],
                           MODEL_MAX_GEMM_SHAPES);
        plan_slots(shapes + n, count[k], budget / CALIB_NBATCH, slot + n);
        n += count[k];
    }
    b.nshapes = n;
    for (int i = 0; i < n; i++)
        buf_need(&b, &shapes[i]);
    b.percall = calloc((size_t)T * n, sizeof *b.percall);
    if (!b.percall)
        return cn_fail(err, errlen, -CN_ENOMEM, "calibration: out of memory");
    atomic_init(&b.failed, 0);
    pthread_barrier_init(&b.bar, NULL, (unsigned)T);
    rc = crew_run(T, gemm_member, &b, err, errlen);
    pthread_barrier_destroy(&b.bar);
    if (rc == 0 && atomic_load(&b.failed))
        rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: SGEMM buffers: out of memory");
    for (int k = 0; rc == 0 && k < CALIB_NBATCH; k++)
        out->model_gflops[k] = step_rate(&b, first[k], count[k], T);
    free(b.percall);
    return rc;
}

/* ---- SGEMM, one large square, OpenBLAS threads = cores ---- */

static int measure_square(Calibration *out, double budget, char *err, size_t errlen)
{
    const int n = out->square_n;
    size_t nn = (size_t)n * n;
    float *A = bench_buf(nn), *B = bench_buf(nn), *C = bench_buf(nn);
    int rc = 0;

    if (!A || !B || !C) {
        rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: %d x %d SGEMM: out of memory",
                     n, n);
        goto done;
    }
    gemm_set_threads(out->square_threads);
    /* The first call (OpenBLAS waking its threads) counts within the
     * budget, and a slow machine stops after it: best of what fits. */
    double best = 0.0, t_end = timer_now() + budget;
    do {
        double t0 = timer_now();
        gemm(0, 0, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        double g = 2.0 * n * (double)n * n / (timer_now() - t0) * 1e-9;
        best = g > best ? g : best;
    } while (timer_now() < t_end);
    out->square_gflops = best;
done:
    gemm_set_threads(1);
    mem_free(A);
    mem_free(B);
    mem_free(C);
    return rc;
}

/* ---- the FMA peak: register-only loops ---- */

/* Each window starts all members together at a barrier and lasts from the
 * first start to the last end; the best window is kept.  Windows are
 * short, so that on a shared machine some of them run with no neighbour
 * scheduled in between: the figure is what the units can do, not what a
 * busy machine left. */
typedef struct PeakBench {
    const PeakLoop *loop;
    long iters;               /* iterations of loop->run per member per window */
    int windows;
    int T;
    Window win;
    double best;              /* GFLOP/s of the best window (member 0) */
    double sink;              /* checksums (member 0 only) */
    pthread_barrier_t bar;
} PeakBench;

static void peak_member(void *bp, int tid)
{
    PeakBench *b = bp;

    for (int w = 0; w < b->windows; w++) {
        pthread_barrier_wait(&b->bar);
        b->win.t0[tid] = timer_now();
        double cs = b->loop->run(b->iters);
        b->win.t1[tid] = timer_now();
        pthread_barrier_wait(&b->bar);
        if (tid != 0)
            continue;
        double span = window_span(&b->win, b->T);
        double g = (double)b->T * (double)b->iters * b->loop->flops_per_iter / span * 1e-9;
        b->best = span > 0.0 && g > b->best ? g : b->best;
        b->sink += cs;
    }
}

/* Iterations of run() that take about one window, from a short probe. */
static long peak_iters(const PeakLoop *l)
{
    double best = 0.0;

    for (int i = 0; i < 3; i++) {
        double t0 = timer_now();
        l->run(1000);
        double t = timer_now() - t0;
        best = i == 0 || t < best ? t : best;
    }
    long n = best > 0.0 ? (long)(PEAK_WINDOW_S / best * 1000.0) : 100000;
    return n < 1000 ? 1000 : n;
}

/* The best window's GFLOP/s of loop l on T threads, within `budget` s. */
static int measure_peak_loop(const PeakLoop *l, int T, double budget, double *out, char *err,
                             size_t errlen)
{
    PeakBench b = {.loop = l, .T = T, .iters = peak_iters(l)};
    int rc;

    b.windows = (int)(budget / PEAK_WINDOW_S);
    b.windows = b.windows < 5 ? 5 : b.windows > 200 ? 200 : b.windows;
    if (window_alloc(&b.win, T, err, errlen) != 0)
        return -CN_ENOMEM;
    pthread_barrier_init(&b.bar, NULL, (unsigned)T);
    rc = crew_run(T, peak_member, &b, err, errlen);
    pthread_barrier_destroy(&b.bar);
    if (rc == 0 && !isfinite(b.sink))
        rc = cn_fail(err, errlen, -CN_EINVAL, "calibration: the %s peak loop computed "
                     "non-finite values", l->name);
    *out = rc == 0 ? b.best : 0.0;
    window_free(&b.win);
    return rc;
}

/* The share of T x one thread's figure below which T threads' figure is
 * measured again. */
#define PEAK_SCALE_MIN 0.75

/* One thread's clock: dependent adds, best of short windows; 0 unknown. */
static double measure_clock(double budget)
{
    const long iters = 20000; /* 1.28 M cycles: a third of a millisecond at 4 GHz */
    double best = 0.0, t_end = timer_now() + budget;

    if (!fmapeak_clock(1))
        return 0.0;
    do {
        double t0 = timer_now();
        fmapeak_clock(iters);
        double t = timer_now() - t0;
        best = best == 0.0 || t < best ? t : best;
    } while (timer_now() < t_end);
    return best > 0.0 ? (double)iters * FMAPEAK_CLOCK_ADDS / best * 1e-9 : 0.0;
}

/* Every width the CPU runs, on one thread and on T; then the clock. */
static int measure_peaks(Calibration *out, int T, double budget, char *err, size_t errlen)
{
    unsigned f = sysinfo_cpu_features();
    int n = 1, rc = 0;

    for (int w = 0; w < PEAK_NWIDTHS; w++)
        n += fmapeak_available((PeakWidth)w, f) ? 2 : 0;
    for (int w = 0; w < PEAK_NWIDTHS && rc == 0; w++) {
        if (!fmapeak_available((PeakWidth)w, f))
            continue;
        const PeakLoop *l = fmapeak_loop((PeakWidth)w);
        rc = measure_peak_loop(l, 1, budget / n, &out->fma1_gflops[w], err, errlen);
        /* T threads of register-only loops scale with the cores: far less
         * than that means a neighbour held a core through every window
         * (seen once on this VM: 117 against 2 x 118 GFLOP/s).  Measure
         * again, twice at most, and keep the best. */
        for (int k = 0; rc == 0 && k < 3; k++) {
            double g = 0.0;
            rc = measure_peak_loop(l, T, budget / n, &g, err, errlen);
            out->fma_gflops[w] = g > out->fma_gflops[w] ? g : out->fma_gflops[w];
            if (out->fma_gflops[w] >= PEAK_SCALE_MIN * T * out->fma1_gflops[w])
                break;
        }
    }
    out->clock_ghz = rc == 0 ? measure_clock(budget / n) : 0.0;
    return rc;
}

const char *calibrate_width_name(int w)
{
    return w >= 0 && w < PEAK_NWIDTHS ? fmapeak_loop((PeakWidth)w)->name : "none";
}

double calibrate_peak(const Calibration *c, int *w)
{
    double best = 0.0;
    int at = -1;

    for (int i = 0; c && i < CALIB_NWIDTHS; i++)
        if (c->fma_gflops[i] > best) {
            best = c->fma_gflops[i];
            at = i;
        }
    if (w)
        *w = at;
    return best;
}

int calibrate_gap_text(double sgemm, double peak, const char *isa, int threads, int narrow,
                       char *msg, size_t len)
{
    if (msg && len)
        msg[0] = '\0';
    if (!(peak > 0.0) || !(sgemm > 0.0))
        return 0;
    double share = sgemm / peak;
    if (share >= CALIB_SGEMM_LOW && !narrow)
        return 0;
    if (msg && len)
        snprintf(msg, len, "%sSGEMM at the model's shapes %.0f GFLOP/s on %d threads is %.0f%% "
                 "of the %.0f GFLOP/s FMA peak (%s), %.1fx below it%s", narrow ? "measured: " : "",
                 sgemm, threads, 100.0 * share, peak, isa, 1.0 / share,
                 narrow ? "" : ": OpenBLAS may not be using the CPU's vectors");
    return 1;
}

int calibrate_sgemm_gap(const Calibration *c, int narrow, char *msg, size_t len)
{
    int w;
    double peak = calibrate_peak(c, &w);
    double sgemm = c->model_gflops[0] > c->model_gflops[1] ? c->model_gflops[0]
                                                           : c->model_gflops[1];

    return calibrate_gap_text(sgemm, peak, calibrate_width_name(w), c->threads, narrow, msg, len);
}

/* ---- memory bandwidth: the triad ---- */

typedef struct TriadBench {
    size_t per;               /* floats per array per member */
    double budget;            /* seconds of timed passes, normally at least 3 */
    Window win;               /* the current pass */
    double start;             /* when the first pass began (member 0) */
    double best;              /* seconds of the fastest pass (member 0) */
    int passes;               /* passes done (member 0) */
    int stop;                 /* written by member 0 between barriers */
    int T;
    pthread_barrier_t bar;
    atomic_int failed;
    atomic_int wrong;         /* a result was not b + s*c */
} TriadBench;

/* a[i] = b[i] + s * c[i]: kept out of line so the compiler cannot fold
 * passes together. */
__attribute__((noinline)) static void triad(float *restrict a, const float *restrict b,
                                            const float *restrict c, float s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static void triad_member(void *bp, int tid)
{
    TriadBench *b = bp;
    float *a = mem_alloc(b->per * sizeof(float));
    float *x = mem_alloc(b->per * sizeof(float));
    float *y = mem_alloc(b->per * sizeof(float));

    if (!a || !x || !y)
        atomic_store(&b->failed, 1);
    for (size_t i = 0; a && x && y && i < b->per; i++) {
        x[i] = 1.0f;
        y[i] = 2.0f;
    }
    for (;;) {
        pthread_barrier_wait(&b->bar);
        if (b->stop || atomic_load(&b->failed))
            break;
        b->win.t0[tid] = timer_now();
        if (tid == 0 && b->passes == 0)
            b->start = b->win.t0[0];
        triad(a, x, y, 3.0f, b->per);
        b->win.t1[tid] = timer_now();
        pthread_barrier_wait(&b->bar);
        if (tid == 0) {
            double span = window_span(&b->win, b->T);
            if (b->passes == 0 || span < b->best)
                b->best = span;
            b->passes++;
            /* Best of at least 3 passes, unless passes are so slow (a
             * sanitizer build, a busy machine) that the budget is gone. */
            double spent = timer_now() - b->start;
            b->stop = (b->passes >= 3 && spent >= b->budget) || spent >= 3.0 * b->budget ||
                      b->passes >= 100;
        }
    }
    if (a && b->per && (a[0] != 7.0f || a[b->per - 1] != 7.0f))
        atomic_store(&b->wrong, 1);
    mem_free(a);
    mem_free(x);
    mem_free(y);
}

/*
 * The triad's arrays should be well beyond the last-level cache: 4 x L3 for
 * the three together, at least 64 MiB and at most 1 GiB or a quarter of
 * the memory.  Touching fresh pages can be slow (about 14 us a page on
 * some VMs), so a probe times the touch of 8 MiB (best of two) and the
 * size shrinks to what `touch_budget` seconds can touch; triad_mib and
 * llc_mib in the figures then tell that the arrays did not clear the cache.
 */
static size_t triad_bytes(size_t llc, double touch_budget)
{
    size_t want = llc ? 4 * llc : (size_t)(256 * MIB), ram = sysinfo_ram_bytes();
    const size_t lo = (size_t)(64 * MIB), hi = (size_t)(1024 * MIB), probe = 8u << 20;

    want = want < lo ? lo : want > hi ? hi : want;
    if (ram && want > ram / 4)
        want = ram / 4;
    /* The faster of two probes: one may be slowed by a neighbour. */
    double per_byte = 0.0;
    for (int i = 0; i < 2; i++) {
        double t0 = timer_now();
        void *p = mem_alloc(probe);
        double t = (timer_now() - t0) / (double)probe;
        mem_free(p);
        per_byte = i == 0 || t < per_byte ? t : per_byte;
    }
    if (per_byte > 0.0 && per_byte * (double)want > touch_budget)
        want = (size_t)(touch_budget / per_byte);
    return want < (size_t)(48 * MIB) ? (size_t)(48 * MIB) : want;
}

static int measure_triad(Calibration *out, int T, double budget, double touch_budget,
                         size_t llc, char *err, size_t errlen)
{
    TriadBench b = {.T = T, .budget = budget};
    size_t bytes = triad_bytes(llc, touch_budget);
    int rc;

    b.per = bytes / 3 / sizeof(float) / (size_t)T;
    b.per -= b.per % 16;
    if (window_alloc(&b.win, T, err, errlen) != 0)
        return -CN_ENOMEM;
    atomic_init(&b.failed, 0);
    atomic_init(&b.wrong, 0);
    pthread_barrier_init(&b.bar, NULL, (unsigned)T);
    rc = crew_run(T, triad_member, &b, err, errlen);
    pthread_barrier_destroy(&b.bar);
    if (rc == 0 && atomic_load(&b.failed))
        rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: triad arrays (%.0f MiB): "
                     "out of memory", (double)bytes / MIB);
    else if (rc == 0 && atomic_load(&b.wrong))
        rc = cn_fail(err, errlen, -CN_EINVAL, "calibration: the triad computed wrong "
                     "values (a compiler or memory fault)");
    if (rc == 0) {
        double moved = 3.0 * (double)b.per * (double)T * sizeof(float);
        out->triad_gbps = moved / b.best * 1e-9;
        out->triad_mib = moved / MIB;
    }
    window_free(&b.win);
    return rc;
}

/* ---- measuring ---- */

/* Keys and quoted text stay printable ASCII, so the file stays one line
 * per key and the comparison with a fresh reading is exact. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            *s = '?';
}

static void key_fill(Calibration *c, int threads)
{
    MachineInfo mi;

    machine_info(&mi);
    snprintf(c->cpu_model, sizeof c->cpu_model, "%s", mi.cpu_model);
    snprintf(c->blas_core, sizeof c->blas_core, "%s", mi.blas_core);
    sanitize(c->cpu_model);
    sanitize(c->blas_core);
    c->cores = mi.cores;
    c->threads = threads > 0 ? threads : mi.cores;
    c->llc_mib = (double)mi.l3_bytes / MIB;
}

static void progress(const CalibOpts *o, const char *what, double done)
{
    if (o && o->progress)
        o->progress(o->userdata, what, done);
}

int calibrate_measure(const CalibOpts *opts, Calibration *out, char *err, size_t errlen)
{
    double S = opts && opts->seconds > 0.0 ? opts->seconds : CALIB_DEFAULT_SECONDS;
    double start = timer_now();
    char what[96];
    int rc;

    memset(out, 0, sizeof *out);
    key_fill(out, opts ? opts->threads : 0);
    if (out->threads > CN_MAX_THREADS)
        return cn_fail(err, errlen, -CN_EINVAL, "calibration: %d threads, at most %d",
                       out->threads, CN_MAX_THREADS);
    out->batch[0] = CALIB_BATCH_A;
    out->batch[1] = CALIB_BATCH_B;
    out->square_n = CALIB_SQUARE_N;
    out->square_threads = out->cores;
    gemm_init();
    /* Budget: 30% GEMM at model shapes, 17% the square, for the triad up
     * to 20% touching its arrays plus 13% timing them, 12% the peaks. */
    snprintf(what, sizeof what, "SGEMM at the model's shapes, %d threads", out->threads);
    progress(opts, what, 0.0);
    rc = measure_model(out, out->threads, 0.30 * S, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(what, sizeof what, "SGEMM %d x %d, %d OpenBLAS threads", out->square_n,
             out->square_n, out->square_threads);
    progress(opts, what, 0.30);
    rc = measure_square(out, 0.17 * S, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(what, sizeof what, "memory bandwidth (triad), %d threads", out->threads);
    progress(opts, what, 0.55);
    rc = measure_triad(out, out->threads, 0.13 * S, 0.20 * S, (size_t)(out->llc_mib * MIB),
                       err, errlen);
    if (rc != 0)
        return rc;
    snprintf(what, sizeof what, "FMA peak per vector width, 1 and %d threads", out->threads);
    progress(opts, what, 0.88);
    rc = measure_peaks(out, out->threads, 0.12 * S, err, errlen);
    if (rc != 0)
        return rc;
    out->seconds = timer_now() - start;
    out->measured_at = (long long)time(NULL);
    progress(opts, "done", 1.0);
    return 0;
}

/* ---- the cache file ---- */

typedef enum FieldKind { FK_STR, FK_INT, FK_NUM, FK_TIME } FieldKind;

typedef struct Field {
    const char *key;
    FieldKind kind;
    size_t off;       /* offset in Calibration */
    size_t size;      /* FK_STR: the buffer's size */
    double lo, hi;    /* allowed range (inclusive) */
} Field;

#define CF(m) offsetof(Calibration, m)

static const Field fields[] = {
    {"cpu_model", FK_STR, CF(cpu_model), sizeof(((Calibration *)0)->cpu_model), 0, 0},
    {"cores", FK_INT, CF(cores), 0, 1, 1 << 20},
    {"blas_core", FK_STR, CF(blas_core), sizeof(((Calibration *)0)->blas_core), 0, 0},
    {"threads", FK_INT, CF(threads), 0, 1, CN_MAX_THREADS},
    {"batch_a", FK_INT, CF(batch), 0, 1, CN_MAX_BATCH},
    {"model_gflops_a", FK_NUM, CF(model_gflops), 0, 1e-3, 1e9},
    {"batch_b", FK_INT, CF(batch) + sizeof(int), 0, 1, CN_MAX_BATCH},
    {"model_gflops_b", FK_NUM, CF(model_gflops) + sizeof(double), 0, 1e-3, 1e9},
    {"square_n", FK_INT, CF(square_n), 0, 1, 1 << 16},
    {"square_threads", FK_INT, CF(square_threads), 0, 1, 1 << 20},
    {"square_gflops", FK_NUM, CF(square_gflops), 0, 1e-3, 1e9},
    {"fma_avx512", FK_NUM, CF(fma_gflops) + PEAK_AVX512 * sizeof(double), 0, 0, 1e9},
    {"fma_avx2", FK_NUM, CF(fma_gflops) + PEAK_AVX2 * sizeof(double), 0, 0, 1e9},
    {"fma_sse", FK_NUM, CF(fma_gflops) + PEAK_SSE * sizeof(double), 0, 0, 1e9},
    {"fma1_avx512", FK_NUM, CF(fma1_gflops) + PEAK_AVX512 * sizeof(double), 0, 0, 1e9},
    {"fma1_avx2", FK_NUM, CF(fma1_gflops) + PEAK_AVX2 * sizeof(double), 0, 0, 1e9},
    {"fma1_sse", FK_NUM, CF(fma1_gflops) + PEAK_SSE * sizeof(double), 0, 0, 1e9},
    {"clock_ghz", FK_NUM, CF(clock_ghz), 0, 0, 1e3},
    {"triad_gbps", FK_NUM, CF(triad_gbps), 0, 1e-3, 1e9},
    {"triad_mib", FK_NUM, CF(triad_mib), 0, 1e-3, 1e9},
    {"llc_mib", FK_NUM, CF(llc_mib), 0, 0, 1e9},
    {"seconds", FK_NUM, CF(seconds), 0, 0, 1e6},
    {"measured_at", FK_TIME, CF(measured_at), 0, 0, 1e15},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Fixed-point text with 3 decimals, independent of the C locale. */
static void num_format(double v, char *buf, size_t len)
{
    long long m = (long long)llround(v * 1000.0);

    snprintf(buf, len, "%s%lld.%03lld", m < 0 ? "-" : "", llabs(m) / 1000, llabs(m) % 1000);
}

/* [0-9]{1,13}(.[0-9]{1,9})? -> *v; 0 or -1. */
static int num_parse(const char *s, double *v)
{
    double whole = 0.0, frac = 0.0, scale = 1.0;
    int nd = 0, nf = 0;

    for (; *s >= '0' && *s <= '9'; s++, nd++)
        whole = whole * 10.0 + (*s - '0');
    if (nd < 1 || nd > 13)
        return -1;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, nf++) {
            scale /= 10.0;
            frac += (*s - '0') * scale;
        }
        if (nf < 1 || nf > 9)
            return -1;
    }
    *v = whole + frac;
    return *s ? -1 : 0;
}

size_t calibrate_format(const Calibration *c, char *buf, size_t len)
{
    size_t n = 0;
    int w = snprintf(buf, len,
                     "# cnntop calibration: this machine's measured FMA peak, SGEMM "
                     "rates and memory bandwidth.\n# Written by `cnntop calibrate`; delete it (or use "
                     "--recalibrate) to measure again.\ncnntop-calibration %d\n",
                     CALIB_FORMAT_VERSION);
    n = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < NFIELDS; i++) {
        const Field *f = &fields[i];
        const char *p = (const char *)c + f->off;
        char val[160];
        if (f->kind == FK_STR) {
            snprintf(val, sizeof val, "%s", p);
            sanitize(val);
        } else if (f->kind == FK_INT) {
            snprintf(val, sizeof val, "%d", *(const int *)(const void *)p);
        } else if (f->kind == FK_NUM) {
            num_format(*(const double *)(const void *)p, val, sizeof val);
        } else {
            snprintf(val, sizeof val, "%lld", *(const long long *)(const void *)p);
        }
        w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "%s=%s\n", f->key, val);
        n += w > 0 ? (size_t)w : 0;
    }
    w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "end\n");
    return n + (w > 0 ? (size_t)w : 0);
}

/* A copy of bytes for a message: printable, at most 40 characters. */
static void quote(const char *s, size_t n, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s%s", (int)(n < 40 ? n : 40), s, n > 40 ? "..." : "");
    sanitize(buf);
}

static int field_set(const Field *f, const char *v, Calibration *c)
{
    char *p = (char *)c + f->off;
    double d;

    if (f->kind == FK_STR) {
        size_t n = strlen(v);
        if (n == 0 || n >= f->size)
            return -1;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
                return -1;
        memcpy(p, v, n + 1);
        return 0;
    }
    if (f->kind == FK_NUM || strchr(v, '.') == NULL) {
        if (num_parse(v, &d) != 0 || d < f->lo || d > f->hi)
            return -1;
    } else {
        return -1; /* an integer field with a fraction */
    }
    if (f->kind == FK_INT)
        *(int *)(void *)p = (int)d;
    else if (f->kind == FK_NUM)
        *(double *)(void *)p = d;
    else
        *(long long *)(void *)p = (long long)d;
    return 0;
}

/* One "key=value" line into c; `seen` marks fields already set. */
static int parse_pair(const char *line, Calibration *c, unsigned *seen, int lineno,
                      char *err, size_t errlen)
{
    const char *eq = strchr(line, '=');
    char q[64];

    if (!eq) {
        quote(line, strlen(line), q, sizeof q);
        return cn_fail(err, errlen, -CN_EFORMAT, "line %d: '%s' is not key=value", lineno, q);
    }
    for (int i = 0; i < NFIELDS; i++) {
        if (strlen(fields[i].key) != (size_t)(eq - line) ||
            strncmp(fields[i].key, line, (size_t)(eq - line)) != 0)
            continue;
        if (*seen & (1u << i))
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: '%s' given twice", lineno,
                           fields[i].key);
        *seen |= 1u << i;
        if (field_set(&fields[i], eq + 1, c) != 0) {
            quote(eq + 1, strlen(eq + 1), q, sizeof q);
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: bad %s '%s'", lineno,
                           fields[i].key, q);
        }
        return 0;
    }
    quote(line, (size_t)(eq - line), q, sizeof q);
    return cn_fail(err, errlen, -CN_EFORMAT, "line %d: unknown key '%s'", lineno, q);
}

/* The version line, the first that is not blank or a comment. */
static int parse_version(const char *line, char *err, size_t errlen)
{
    static const char magic[] = "cnntop-calibration ";
    char want[32], q[64];

    snprintf(want, sizeof want, "%s%d", magic, CALIB_FORMAT_VERSION);
    if (!strcmp(line, want))
        return 0;
    if (!strncmp(line, magic, sizeof magic - 1)) {
        quote(line + sizeof magic - 1, strlen(line + sizeof magic - 1), q, sizeof q);
        return cn_fail(err, errlen, -CN_EFORMAT, "format version '%s', this cnntop reads %d",
                       q, CALIB_FORMAT_VERSION);
    }
    quote(line, strlen(line), q, sizeof q);
    return cn_fail(err, errlen, -CN_EFORMAT, "not a cnntop calibration file (begins '%s')", q);
}

/* Steps through one line at a time: 0 not yet versioned, 1 in the body, 2 after "end". */
static int parse_line(const char *line, int *state, Calibration *c, unsigned *seen,
                      int lineno, char *err, size_t errlen)
{
    if (*state == 2)
        return cn_fail(err, errlen, -CN_EFORMAT, "line %d: text after 'end'", lineno);
    if (line[0] == '\0' || line[0] == '#')
        return 0;
    if (*state == 0) {
        int rc = parse_version(line, err, errlen);
        *state = rc == 0 ? 1 : 0;
        return rc;
    }
    if (!strcmp(line, "end")) {
        *state = 2;
        return 0;
    }
    return parse_pair(line, c, seen, lineno, err, errlen);
}

int calibrate_parse(const char *buf, size_t len, Calibration *out, char *err, size_t errlen)
{
    Calibration c;
    unsigned seen = 0;
    int state = 0, lineno = 0;
    size_t pos = 0;

    memset(&c, 0, sizeof c);
    if (!buf)
        len = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        char line[CALIB_LINE_MAX];
        lineno++;
        if (!nl)
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: no newline at the end "
                           "(truncated?)", lineno);
        if (n >= sizeof line)
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: longer than %d bytes",
                           lineno, CALIB_LINE_MAX - 1);
        if (memchr(buf + pos, '\0', n))
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: a NUL byte (binary data)",
                           lineno);
        memcpy(line, buf + pos, n);
        line[n] = '\0';
        int rc = parse_line(line, &state, &c, &seen, lineno, err, errlen);
        if (rc != 0)
            return rc;
        pos += n + 1;
    }
    if (state == 0)
        return cn_fail(err, errlen, -CN_EFORMAT, "empty: no 'cnntop-calibration %d' line",
                       CALIB_FORMAT_VERSION);
    for (int i = 0; i < NFIELDS; i++)
        if (!(seen & (1u << i)))
            return cn_fail(err, errlen, -CN_EFORMAT, "'%s' missing", fields[i].key);
    if (state != 2)
        return cn_fail(err, errlen, -CN_EFORMAT, "no 'end' line (truncated?)");
    c.cached = 1;
    *out = c;
    return 0;
}

int calibrate_key_matches(const Calibration *c, int threads, char *why, size_t whylen)
{
    Calibration now;

    memset(&now, 0, sizeof now);
    key_fill(&now, threads);
    const char *what = strcmp(c->cpu_model, now.cpu_model) ? "CPU model"
                       : c->cores != now.cores             ? "cores"
                       : strcmp(c->blas_core, now.blas_core) ? "OpenBLAS core"
                       : c->threads != now.threads           ? "threads"
                                                             : NULL;
    if (why && whylen)
        why[0] = '\0';
    if (!what)
        return 1;
    if (why && whylen)
        snprintf(why, whylen, "its %s differs: %s, cores %d, %s, threads %d here", what,
                 now.cpu_model, now.cores, now.blas_core, now.threads);
    return 0;
}

int calibrate_cache_path(char *buf, size_t len, int threads, char *err, size_t errlen)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    Calibration key;
    char core[sizeof key.blas_core];
    int n;

    /* The file is named for the setup: OpenBLAS's kernel (letters, digits,
     * '.', '_' and '-' kept, anything else '_') and the compute threads. */
    memset(&key, 0, sizeof key);
    key_fill(&key, threads);
    snprintf(core, sizeof core, "%s", key.blas_core[0] ? key.blas_core : "unknown");
    for (char *q = core; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '.' && *q != '_' && *q != '-')
            *q = '_';
    /* The XDG spec says a relative XDG_CACHE_HOME is invalid: ignore it. */
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, len, "%s/cnntop/calibration-%s-%dt", xdg, core, key.threads);
    else if (home && home[0])
        n = snprintf(buf, len, "%s/.cache/cnntop/calibration-%s-%dt", home, core, key.threads);
    else
        return cn_fail(err, errlen, -CN_EINVAL,
                       "no cache directory: neither XDG_CACHE_HOME nor HOME is set");
    if (n < 0 || (size_t)n >= len)
        return cn_fail(err, errlen, -CN_EINVAL, "cache path too long");
    return 0;
}

/* Loads the cache; 0 when it holds this machine's figures.  Otherwise -1,
 * with a warning unless there simply is no file yet. */
static int cache_load(const char *path, int threads, Calibration *out, char *warn,
                      size_t warnlen)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    char msg[384];
    struct stat st;

    if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
        return -1; /* nothing there yet: measuring is no news */
    if (fileio_read_all(path, CALIB_FILE_MAX, &buf, &len, msg, sizeof msg) != 0) {
        cn_fail(warn, warnlen, -1, "calibration cache %s ignored (%s); measuring again",
                path, msg);
        return -1;
    }
    int rc = calibrate_parse((const char *)buf, len, out, msg, sizeof msg);
    free(buf);
    if (rc != 0) {
        cn_fail(warn, warnlen, -1, "calibration cache %s ignored (%s); measuring again",
                path, msg);
        return -1;
    }
    if (!calibrate_key_matches(out, threads, msg, sizeof msg)) {
        cn_fail(warn, warnlen, -1, "calibration cache %s is for another machine or setup "
                "(%s); measuring again", path, msg);
        return -1;
    }
    return 0;
}

static void cache_store(const char *path, const Calibration *c, char *warn, size_t warnlen)
{
    char text[4096], msg[384];
    size_t n = calibrate_format(c, text, sizeof text);

    if (n >= sizeof text)
        n = sizeof text - 1;
    if (fileio_make_parent_dirs(path, 0700, msg, sizeof msg) == 0 && /* 0700: XDG */
        fileio_write_atomic(path, text, n, msg, sizeof msg) == 0)
        return;
    /* Keep an earlier warning (why the old file was not used): it says more. */
    if (warn && warnlen && !warn[0])
        snprintf(warn, warnlen, "calibration not cached: %s", msg);
}

int calibrate_load(int threads, Calibration *out)
{
    char path[4096];

    if (calibrate_cache_path(path, sizeof path, threads, NULL, 0) != 0)
        return -1;
    return cache_load(path, threads, out, NULL, 0);
}

/* c's figures as the cache file holds them (3 decimals), so that a run
 * reports the same peak whether it measured it or read it back.  Left as
 * measured if the text does not read back (a figure under the file's
 * minimum: the next run measures again anyway). */
static void as_stored(Calibration *c)
{
    char text[4096];
    Calibration back;
    size_t n = calibrate_format(c, text, sizeof text);

    if (n < sizeof text && calibrate_parse(text, n, &back, NULL, 0) == 0)
        *c = back;
}

int calibrate_get(const CalibOpts *opts, Calibration *out, int force,
                  char *warn, size_t warnlen, char *err, size_t errlen)
{
    char path[4096], msg[384];
    int threads = opts ? opts->threads : 0, rc;
    const char *p = opts && opts->cache_path ? opts->cache_path : NULL;

    if (warn && warnlen)
        warn[0] = '\0';
    if (!p && calibrate_cache_path(path, sizeof path, threads, msg, sizeof msg) == 0)
        p = path;
    else if (!p && warn && warnlen)
        snprintf(warn, warnlen, "calibration not cached: %s", msg);
    if (p && !force && cache_load(p, threads, out, warn, warnlen) == 0)
        return 0;
    rc = calibrate_measure(opts, out, err, errlen);
    if (rc != 0)
        return rc;
    as_stored(out);
    if (p)
        cache_store(p, out, warn, warnlen);
    out->cached = 0;
    return 0;
}

/* ---- the sketch on paper ---- */

double calibrate_bytes_per_image(void)
{
    /* The arena's growth from B to 2B images is exactly the per-image
     * buffers (everything else depends on the threads or the model). */
    const int B = 1024;
    double per = (double)(acts_bytes(2 * B, 1) - acts_bytes(B, 1)) / B;

    return 3.0 * per;
}

/* The model-shape rate at `batch`, interpolated in log2(batch). */
static double rate_at(const Calibration *c, int batch)
{
    double b0 = c->batch[0], b1 = c->batch[1], r0 = c->model_gflops[0],
           r1 = c->model_gflops[1];

    if (b1 <= b0 || batch <= b0)
        return r0;
    if (batch >= b1)
        return r1;
    double w = (log2(batch) - log2(b0)) / (log2(b1) - log2(b0));
    return r0 + w * (r1 - r0);
}

int calibrate_sketch(const Calibration *c, long images, int batch, Sketch *out)
{
    memset(out, 0, sizeof *out);
    if (!c || images < 0 || batch < 1 || c->batch[0] < 1 || !(c->model_gflops[0] > 0.0) ||
        !(c->model_gflops[1] > 0.0) || !(c->triad_gbps > 0.0))
        return -CN_EINVAL;
    out->images = images;
    out->batch = batch;
    out->flops = (double)images * model_flops_executed();
    out->bytes = (double)images * calibrate_bytes_per_image();
    double peak = calibrate_peak(c, NULL);
    out->peak = peak > 0.0;
    out->gflops = out->peak ? peak : rate_at(c, batch);
    out->gbps = c->triad_gbps;
    out->compute_s = out->flops / (out->gflops * 1e9);
    out->memory_s = out->bytes / (out->gbps * 1e9);
    out->seconds = out->compute_s + out->memory_s;
    return 0;
}

int calibrate_check(const Sketch *s, double measured_s, char *msg, size_t len)
{
    if (msg && len)
        msg[0] = '\0';
    if (!s || !(s->seconds > 0.0) || !(measured_s > 0.0))
        return 0;
    double ratio = measured_s > s->seconds ? measured_s / s->seconds : s->seconds / measured_s;
    if (ratio < CALIB_GAP_FACTOR)
        return 0;
    if (msg && len)
        snprintf(msg, len, "measured %.3g s, the sketch says %.3g s: a %gx gap is a sign "
                 "of a real problem (see DESIGN.md)", measured_s, s->seconds,
                 CALIB_GAP_FACTOR);
    return 1;
}
