/*
 * test_layers.c: every layer kernel of the engine, one by one.
 *
 *   conv      the first block's direct conv in pool phases against a
 *             double convolution (values, statistics, dw, db); the
 *             Winograd conv of blocks 2-3, group by group, forward against
 *             a double convolution, backward against central differences
 *             (small shapes, edge tiles half outside) or a direct double
 *             loop (the model's shapes), beta 0/1 and the dx = NULL path;
 *   bn+pool   the fused training forward against a plain unfused double
 *             reference, chunk splits, first-max ties, the backward against
 *             central differences (through the engine in float and through
 *             the reference in double), running statistics, evaluation;
 *   fc        forward against a loop, backward against central differences,
 *             column-block splits against one block (float tolerance: the
 *             BLAS kernel depends on the block width), the engine's split
 *             repeated in another order (bitwise);
 *   dropout   mask bits, kept share, forward/backward values, differences,
 *             evaluation;
 *   xent      a hand-computed loss, dlogits against differences, huge
 *             logits, the first-max rule of xent_correct;
 *   adam      two steps against hand-worked values (torch.optim.Adam);
 *   rng       rng_permutation.
 *
 * Error measure for gradients: rel(a, b) = |a - b| / max(1e-3, |a| + |b|)
 * (a larger floor where float rounding demands it, stated there).
 * Every input is drawn from the engine's own counter-based generator under
 * a fixed key, so a run is the same on every machine (up to OpenBLAS's
 * kernel, which only moves the last bits).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/gemm.h"
#include "nn/layer_bn.h"
#include "nn/layer_conv_phase.h"
#include "nn/layer_dropout.h"
#include "nn/layer_fc.h"
#include "nn/layer_maxpool.h"
#include "nn/layer_wino.h"
#include "nn/loss_xent.h"
#include "nn/optim_adam.h"
#include "util/rng.h"

/* ---- helpers ---- */

static const uint64_t test_key = 0x7e57c0de5eedULL;
static uint64_t test_ctr;

/* Uniform in [lo, hi). */
static float urand(float lo, float hi)
{
    return lo + (hi - lo) * rng_unit(rng_at(test_key, test_ctr++));
}

static void fill(float *a, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        a[i] = urand(lo, hi);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "test_layers: out of memory\n");
        exit(2);
    }
    return p;
}

static float *fvec(size_t n) { return xcalloc(n, sizeof(float)); }
static double *dvec(size_t n) { return xcalloc(n, sizeof(double)); }

static void to_double(double *d, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
}

static double rel(double a, double b, double floor)
{
    double den = fabs(a) + fabs(b);
    return fabs(a - b) / (den > floor ? den : floor);
}

/* Tracks the worst rel() of a group of comparisons and where it was;
 * floor 0 means the default 1e-3. */
typedef struct {
    double worst;
    long at;
    double a, b;
    long n;
    double floor;
} Worst;

static void worst_add(Worst *w, long i, double a, double b)
{
    double r = rel(a, b, w->floor > 0.0 ? w->floor : 1e-3);
    w->n++;
    if (r > w->worst || isnan(r)) {
        w->worst = isnan(r) ? INFINITY : r;
        w->at = i;
        w->a = a;
        w->b = b;
    }
}

/* One CHECK per group, printing the worst element when it fails. */
static void worst_check(const Worst *w, double tol, const char *what)
{
    check_count++;
    if (!(w->worst <= tol)) {
        check_failed++;
        fprintf(stderr, "%s:%d: %s: worst rel error %.3g > %.3g at %ld (%.9g vs %.9g), %ld compared\n",
                __FILE__, __LINE__, what, w->worst, tol, w->at, w->a, w->b, w->n);
    }
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  %-44s worst rel %.3g over %ld\n", what, w->worst, w->n);
}

/* ==================================================================== */
/* conv                                                                  */
/* ==================================================================== */

/* Double convolution with the layout of layer_wino.h; `mag` (optional)
 * gets |b| + sum |w||x|, the size rounding errors scale with. */
static void conv_ref(double *y, double *mag, const double *x, const double *w,
                     const double *b, int C, int OC, int N, int H, int W, int K)
{
    const int P = K / 2, HW = H * W;

    for (int oc = 0; oc < OC; oc++)
        for (int n = 0; n < N; n++)
            for (int oh = 0; oh < H; oh++)
                for (int ow = 0; ow < W; ow++) {
                    double s = b[oc], m = fabs(b[oc]);
                    for (int c = 0; c < C; c++)
                        for (int kh = 0; kh < K; kh++)
                            for (int kw = 0; kw < K; kw++) {
                                int ih = oh + kh - P, iw = ow + kw - P;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                double t = w[((oc * C + c) * K + kh) * K + kw] *
                                           x[((size_t)c * N + n) * HW + ih * W + iw];
                                s += t;
                                m += fabs(t);
                            }
                    size_t o = ((size_t)oc * N + n) * HW + oh * W + ow;
                    y[o] = s;
                    if (mag)
                        mag[o] = m;
                }
}

/* L = sum(conv(x, w, b) * R) in double. */
static double conv_loss(double *ybuf, const double *x, const double *w, const double *b,
                        const double *R, int C, int OC, int N, int H, int W, int K)
{
    double L = 0.0;
    size_t ny = (size_t)OC * N * H * W;

    conv_ref(ybuf, NULL, x, w, b, C, OC, N, H, W, K);
    for (size_t i = 0; i < ny; i++)
        L += ybuf[i] * R[i];
    return L;
}

/* Direct double backward of L = sum(y * R): dw, db, dx and their |.| sizes. */
static void conv_bwd_ref(double *dx, double *dxm, double *dw, double *dwm, double *db,
                         const double *R, const double *x, const double *w,
                         int C, int OC, int N, int H, int W, int K)
{
    const int P = K / 2, HW = H * W, CKK = C * K * K;

    memset(dx, 0, (size_t)C * N * HW * sizeof *dx);
    memset(dxm, 0, (size_t)C * N * HW * sizeof *dxm);
    memset(dw, 0, (size_t)OC * CKK * sizeof *dw);
    memset(dwm, 0, (size_t)OC * CKK * sizeof *dwm);
    for (int oc = 0; oc < OC; oc++) {
        double s = 0.0;
        for (int n = 0; n < N; n++)
            for (int q = 0; q < HW; q++)
                s += R[((size_t)oc * N + n) * HW + q];
        db[oc] = s;
    }
    for (int oc = 0; oc < OC; oc++)
        for (int c = 0; c < C; c++)
            for (int kh = 0; kh < K; kh++)
                for (int kw = 0; kw < K; kw++) {
                    int wi = ((oc * C + c) * K + kh) * K + kw;
                    for (int n = 0; n < N; n++)
                        for (int oh = 0; oh < H; oh++) {
                            int ih = oh + kh - P;
                            if (ih < 0 || ih >= H)
                                continue;
                            for (int ow = 0; ow < W; ow++) {
                                int iw = ow + kw - P;
                                if (iw < 0 || iw >= W)
                                    continue;
                                double r = R[((size_t)oc * N + n) * HW + oh * W + ow];
                                size_t xi = ((size_t)c * N + n) * HW + ih * W + iw;
                                dw[wi] += r * x[xi];
                                dwm[wi] += fabs(r * x[xi]);
                                dx[xi] += r * w[wi];
                                dxm[xi] += fabs(r * w[wi]);
                            }
                        }
                }
}

/* The pool tables of H x W planes (layer_maxpool.h). */
static MaxpoolTables *tables(int H, int W)
{
    MaxpoolTables *t = xcalloc(1, sizeof *t);
    maxpool_tables_init(t, H, W);
    return t;
}

/*
 * The engine's Winograd convolution (layer_wino.h) set up for groups of up
 * to cap images of H x W: its tables, its scratch, U from w and a dU.  The
 * tests call it as the engine does, group by group.  The scratch starts as
 * NaN: a read of anything not written first shows.
 */
typedef struct WConv {
    WinoTables *t;
    float *U, *dU, *scratch;
    int C, OC, H, W;
} WConv;

static WConv wconv_make(const float *w, int C, int OC, int cap, int H, int W)
{
    WConv c = {.C = C, .OC = OC, .H = H, .W = W};
    long P = (long)OC * C, ns = wino_scratch_floats(H, W, C, OC, cap);

    CHECK(cap <= wino_max_group(H, W));
    c.t = xcalloc(1, sizeof *c.t);
    wino_tables_init(c.t, H, W, cap);
    c.U = fvec(WINO_P * (size_t)P);
    c.dU = fvec(WINO_P * (size_t)P);
    c.scratch = fvec((size_t)ns);
    for (long i = 0; i < ns; i++)
        c.scratch[i] = NAN;
    wino_filter(c.U, w, P, 0, P);
    return c;
}

static void wconv_free(WConv *c)
{
    free(c->t);
    free(c->U);
    free(c->dU);
    free(c->scratch);
}

static void wconv_forward(WConv *c, float *y, const float *x, const float *b, int N, int n0,
                          int nt)
{
    wino_forward(y, x, c->U, b, c->scratch, c->t, c->C, c->OC, N, n0, nt);
}

/* One group's backward; dw = G^T dU G after it.  Before beta 0, dU is
 * poisoned with NaN: beta 0 must overwrite it, not scale it. */
static void wconv_backward(WConv *c, float *dx, float *dw, float *db, const float *dy,
                           int ldy, const float *x, int N, int n0, int nt, float beta)
{
    long P = (long)c->OC * c->C;

    if (beta == 0.0f)
        for (long i = 0; i < WINO_P * P; i++)
            c->dU[i] = NAN;
    wino_backward(dx, c->dU, db, dy, ldy, x, c->U, c->scratch, c->t, c->C, c->OC, N, n0, nt,
                  beta);
    wino_filter_grad(dw, c->dU, P, 0, P);
}

/*
 * Forward: wino_forward over uneven groups covering the batch, and over
 * one group alone (images outside it untouched), against conv_ref in
 * double.  Tolerance: |fast - ref| <= 1e-5 * (|b| + sum |w||x|) per element
 * (float rounding of the transforms and GEMMs; a wrong index or transform
 * gives errors of order 1).
 */
static void test_conv_forward(int C, int OC, int N, int H, int W, int n0, int nt)
{
    const int HW = H * W, K = 3;
    const size_t nx = (size_t)C * N * HW, ny = (size_t)OC * N * HW, nw = (size_t)OC * C * 9;
    float *x = fvec(nx), *w = fvec(nw), *b = fvec(OC), *y = fvec(ny);
    double *xd = dvec(nx), *wd = dvec(nw), *bd = dvec(OC), *yd = dvec(ny), *mag = dvec(ny);
    char what[96];

    fill(x, nx, -1.0f, 1.0f);
    fill(w, nw, -0.5f, 0.5f);
    fill(b, OC, -0.5f, 0.5f);
    to_double(xd, x, nx);
    to_double(wd, w, nw);
    to_double(bd, b, OC);
    conv_ref(yd, mag, xd, wd, bd, C, OC, N, H, W, K);
    WConv wc = wconv_make(w, C, OC, N, H, W);

    /* uneven groups: [0,1), [1, N-1), [N-1, N) (or one group for N <= 2) */
    int cuts[4], ncut = 0;
    cuts[ncut++] = 0;
    if (N > 2) {
        cuts[ncut++] = 1;
        cuts[ncut++] = N - 1;
    }
    cuts[ncut++] = N;
    for (size_t i = 0; i < ny; i++)
        y[i] = NAN;
    for (int t = 0; t + 1 < ncut; t++)
        wconv_forward(&wc, y, x, b, N, cuts[t], cuts[t + 1] - cuts[t]);
    double worst = 0.0;
    for (size_t i = 0; i < ny; i++) {
        double e = fabs((double)y[i] - yd[i]) / (mag[i] + 1e-30);
        worst = !(e <= worst) ? e : worst; /* NaN (unwritten) wins */
    }
    snprintf(what, sizeof what, "conv fwd C%d OC%d N%d %dx%d groups", C, OC, N, H, W);
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  %s: worst error / magnitude %.3g\n", what, worst);
    check_count++;
    if (!(worst <= 1e-5)) {
        check_failed++;
        fprintf(stderr, "%s:%d: %s: worst error / magnitude %.3g > 1e-5\n", __FILE__,
                __LINE__, what, worst);
    }

    /* one group [n0, n0+nt) alone: the rest keeps its sentinel */
    for (size_t i = 0; i < ny; i++)
        y[i] = 777.0f;
    wconv_forward(&wc, y, x, b, N, n0, nt);
    long outside = 0;
    worst = 0.0;
    for (int oc = 0; oc < OC; oc++)
        for (int n = 0; n < N; n++)
            for (int q = 0; q < HW; q++) {
                size_t i = ((size_t)oc * N + n) * HW + q;
                if (n < n0 || n >= n0 + nt) {
                    outside += y[i] != 777.0f;
                    continue;
                }
                double e = fabs((double)y[i] - yd[i]) / (mag[i] + 1e-30);
                worst = !(e <= worst) ? e : worst;
            }
    CHECK_INT(outside, ==, 0);
    CHECK(worst <= 1e-5);

    /* as the engine runs it: tables for groups of 2, groups that fill them */
    if (N > 2) {
        WConv w2 = wconv_make(w, C, OC, 2, H, W);
        for (size_t i = 0; i < ny; i++)
            y[i] = NAN;
        for (int n = 0; n < N; n += 2)
            wconv_forward(&w2, y, x, b, N, n, N - n < 2 ? N - n : 2);
        worst = 0.0;
        for (size_t i = 0; i < ny; i++) {
            double e = fabs((double)y[i] - yd[i]) / (mag[i] + 1e-30);
            worst = !(e <= worst) ? e : worst;
        }
        CHECK(worst <= 1e-5);
        wconv_free(&w2);
    }

    wconv_free(&wc);
    free(x); free(w); free(b); free(y);
    free(xd); free(wd); free(bd); free(yd); free(mag);
}

/* The Winograd backward over the groups `cuts` (beta 0 for the first, 1
 * after; tables for groups of up to cap images) into dw, db, dx, as the
 * engine calls it (dy read in place of the whole batch's R, rows N*H*W
 * apart).  dw and db start as NaN: beta 0 must overwrite them. */
static void conv_bwd_tiles(float *dx, float *dw, float *db, const float *R, const float *x,
                           const float *w, const int *cuts, int ncut, int cap, int C, int OC,
                           int N, int H, int W)
{
    const int HW = H * W;
    WConv wc = wconv_make(w, C, OC, cap, H, W);

    for (size_t i = 0; i < (size_t)OC * C * 9; i++)
        dw[i] = NAN;
    for (int i = 0; i < OC; i++)
        db[i] = NAN;
    for (int t = 0; t + 1 < ncut; t++) {
        int n0 = cuts[t], nt = cuts[t + 1] - cuts[t];
        wconv_backward(&wc, dx, dw, db, R + (size_t)n0 * HW, N * HW, x, N, n0, nt,
                       t == 0 ? 0.0f : 1.0f);
    }
    wconv_free(&wc);
}

/*
 * Backward on a small shape against central differences of
 * L = sum(conv(x, w, b) * R), computed in double with eps = 1e-3 (L is
 * linear, so the difference is exact up to double rounding); tolerance
 * rel < 1e-3 for the float kernels.  Also: beta = 1 accumulates, dx = NULL
 * gives the same dw, db, and a tile's dx leaves other images alone.
 */
static void test_conv_backward_fd(int C, int OC, int N, int H, int W)
{
    const int HW = H * W, K = 3, CKK = C * K * K;
    const size_t nx = (size_t)C * N * HW, ny = (size_t)OC * N * HW, nw = (size_t)OC * CKK;
    float *x = fvec(nx), *w = fvec(nw), *R = fvec(ny);
    float *dx = fvec(nx), *dw = fvec(nw), *db = fvec(OC);
    float *dw2 = fvec(nw), *db2 = fvec(OC);
    double *xd = dvec(nx), *wd = dvec(nw), *bd = dvec(OC), *Rd = dvec(ny), *yb = dvec(ny);
    const double eps = 1e-3;
    char what[96];
    Worst ex = {0}, ew = {0}, eb = {0};

    fill(x, nx, -1.0f, 1.0f);
    fill(w, nw, -0.5f, 0.5f);
    fill(R, ny, -1.0f, 1.0f);
    to_double(xd, x, nx);
    to_double(wd, w, nw);
    to_double(Rd, R, ny);
    for (int i = 0; i < OC; i++)
        bd[i] = urand(-0.5f, 0.5f);

    int cuts[4] = {0, 1, N > 2 ? N - 1 : N, N};
    int ncut = N > 2 ? 4 : 3;
    for (size_t i = 0; i < nx; i++)
        dx[i] = NAN; /* every tile's dx must be written */
    conv_bwd_tiles(dx, dw, db, R, x, w, cuts, ncut, N, C, OC, N, H, W);

    /* x, w and b in turn, as test_fc_case does */
    double *arrs[3] = {xd, wd, bd};
    const float *grads[3] = {dx, dw, db};
    const size_t lens[3] = {nx, nw, (size_t)OC};
    Worst *ws[3] = {&ex, &ew, &eb};
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < lens[a]; i++) {
            double v = arrs[a][i];
            arrs[a][i] = v + eps;
            double lp = conv_loss(yb, xd, wd, bd, Rd, C, OC, N, H, W, K);
            arrs[a][i] = v - eps;
            double lm = conv_loss(yb, xd, wd, bd, Rd, C, OC, N, H, W, K);
            arrs[a][i] = v;
            worst_add(ws[a], (long)i, grads[a][i], (lp - lm) / (2 * eps));
        }
    snprintf(what, sizeof what, "conv dx  vs FD C%d OC%d N%d %dx%d K%d", C, OC, N, H, W, K);
    worst_check(&ex, 1e-3, what);
    snprintf(what, sizeof what, "conv dw  vs FD C%d OC%d N%d %dx%d K%d", C, OC, N, H, W, K);
    worst_check(&ew, 1e-3, what);
    snprintf(what, sizeof what, "conv db  vs FD C%d OC%d N%d %dx%d K%d", C, OC, N, H, W, K);
    worst_check(&eb, 1e-3, what);

    /* dx = NULL: the same dw, db, bit for bit */
    conv_bwd_tiles(NULL, dw2, db2, R, x, w, cuts, ncut, N, C, OC, N, H, W);
    CHECK(memcmp(dw, dw2, nw * sizeof *dw) == 0);
    CHECK(memcmp(db, db2, (size_t)OC * sizeof *db) == 0);

    /* As the engine runs it: tables for groups of 2 and groups that fill
     * them (the last may be smaller), [0,2), [2,4), ...  The same dx, dw,
     * db up to rounding (rel 1e-4, as for beta below: other group sizes
     * sum dU in another order).  Some dw cancel to near zero, where the
     * two differ by up to 2.4e-7 against values up to 2.5-12: below 1e-2,
     * the error is taken against 1e-2. */
    {
        int c2[16], n2 = 0;
        float *dx2 = fvec(nx);
        Worst e = {.floor = 1e-2};
        for (int n = 0; n < N; n += 2)
            c2[n2++] = n;
        c2[n2++] = N;
        for (size_t i = 0; i < nx; i++)
            dx2[i] = NAN;
        conv_bwd_tiles(dx2, dw2, db2, R, x, w, c2, n2, N < 2 ? N : 2, C, OC, N, H, W);
        for (size_t i = 0; i < nx; i++)
            worst_add(&e, (long)i, dx2[i], dx[i]);
        for (size_t i = 0; i < nw; i++)
            worst_add(&e, (long)(nx + i), dw2[i], dw[i]);
        for (int i = 0; i < OC; i++)
            worst_add(&e, (long)(nx + nw + i), db2[i], db[i]);
        snprintf(what, sizeof what, "conv groups of 2 = uneven groups C%d OC%d N%d %dx%d", C,
                 OC, N, H, W);
        worst_check(&e, 1e-4, what);
        free(dx2);
    }

    /* beta: the whole batch as one group with beta 0 over garbage (NaN in
     * dU and db: any leak shows) matches the grouped sum (rel 1e-4:
     * the two sum in different orders and some dw cancel); again with
     * beta 1 on top gives twice the first (rel 1e-6: only the final
     * additions round). */
    {
        WConv wc = wconv_make(w, C, OC, N, H, W);
        float *dw1 = fvec(nw), *db1 = fvec(OC);
        Worst e2 = {0}, e1 = {.floor = 1e-2}; /* near-zero dw as above */
        for (int i = 0; i < OC; i++)
            db2[i] = NAN;
        wconv_backward(&wc, NULL, dw2, db2, R, N * HW, x, N, 0, N, 0.0f);
        memcpy(dw1, dw2, nw * sizeof *dw1);
        memcpy(db1, db2, (size_t)OC * sizeof *db1);
        for (size_t i = 0; i < nw; i++)
            worst_add(&e1, (long)i, dw2[i], dw[i]);
        for (int i = 0; i < OC; i++)
            worst_add(&e1, (long)(nw + i), db2[i], db[i]);
        wconv_backward(&wc, NULL, dw2, db2, R, N * HW, x, N, 0, N, 1.0f);
        for (size_t i = 0; i < nw; i++)
            worst_add(&e2, (long)i, dw2[i], 2.0 * dw1[i]);
        for (int i = 0; i < OC; i++)
            worst_add(&e2, (long)(nw + i), db2[i], 2.0 * db1[i]);
        worst_check(&e1, 1e-4, "conv beta=0 overwrites (one group = groups)");
        worst_check(&e2, 1e-6, "conv beta=1 accumulates (2x)");
        wconv_free(&wc);
        free(dw1);
        free(db1);
    }

    /* a middle group's dx alone: the other images keep their contents */
    if (N > 2) {
        WConv wc = wconv_make(w, C, OC, N, H, W);
        float *dx1 = fvec(nx);
        int n0 = 1, nt = N - 2;
        long outside = 0;
        Worst e = {0};
        for (size_t i = 0; i < nx; i++)
            dx1[i] = 999.0f;
        /* dy read in place of the whole batch's R: rows N*HW apart */
        wconv_backward(&wc, dx1, dw2, db2, R + (size_t)n0 * HW, N * HW, x, N, n0, nt, 0.0f);
        for (int c = 0; c < C; c++)
            for (int n = 0; n < N; n++)
                for (int q = 0; q < HW; q++) {
                    size_t i = ((size_t)c * N + n) * HW + q;
                    if (n < n0 || n >= n0 + nt)
                        outside += dx1[i] != 999.0f;
                    else
                        worst_add(&e, (long)i, dx1[i], dx[i]);
                }
        CHECK_INT(outside, ==, 0);
        CHECK(e.worst == 0.0); /* the same computation as in the grouped pass */
        wconv_free(&wc);
        free(dx1);
    }

    free(x); free(w); free(R); free(dx); free(dw); free(db); free(dw2); free(db2);
    free(xd); free(wd); free(bd); free(Rd); free(yb);
}

/*
 * Backward on the model's shapes against the direct double backward:
 * |fast - ref| <= 1e-5 * sum |terms| per element, over tiles [0,1), [1,N).
 */
static void test_conv_backward_big(int C, int OC, int N, int H, int W)
{
    const int HW = H * W, K = 3, CKK = C * K * K;
    const size_t nx = (size_t)C * N * HW, ny = (size_t)OC * N * HW, nw = (size_t)OC * CKK;
    float *x = fvec(nx), *w = fvec(nw), *R = fvec(ny);
    float *dx = fvec(nx), *dw = fvec(nw), *db = fvec(OC);
    double *xd = dvec(nx), *wd = dvec(nw), *Rd = dvec(ny);
    double *rdx = dvec(nx), *rdxm = dvec(nx), *rdw = dvec(nw), *rdwm = dvec(nw), *rdb = dvec(OC);
    int cuts[3] = {0, 1, N};
    double wx = 0.0, ww = 0.0, wb = 0.0;

    fill(x, nx, 0.0f, 2.0f); /* post-ReLU-like inputs */
    fill(w, nw, -0.1f, 0.1f);
    fill(R, ny, -1.0f, 1.0f);
    to_double(xd, x, nx);
    to_double(wd, w, nw);
    to_double(Rd, R, ny);
    conv_bwd_tiles(dx, dw, db, R, x, w, cuts, N > 1 ? 3 : 2, N, C, OC, N, H, W);
    conv_bwd_ref(rdx, rdxm, rdw, rdwm, rdb, Rd, xd, wd, C, OC, N, H, W, K);
    for (size_t i = 0; i < nx; i++) {
        double e = fabs(dx[i] - rdx[i]) / (rdxm[i] + 1e-30);
        wx = !(e <= wx) ? e : wx;
    }
    for (size_t i = 0; i < nw; i++) {
        double e = fabs(dw[i] - rdw[i]) / (rdwm[i] + 1e-30);
        ww = !(e <= ww) ? e : ww;
    }
    for (int i = 0; i < OC; i++) {
        double e = fabs(db[i] - rdb[i]) / (fabs(rdb[i]) + N * HW * 1e-3);
        wb = !(e <= wb) ? e : wb;
    }
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  conv bwd C%d OC%d N%d %dx%d: dx %.3g dw %.3g db %.3g\n", C, OC,
                N, H, W, wx, ww, wb);
    CHECK(wx <= 1e-5);
    CHECK(ww <= 1e-5);
    CHECK(wb <= 1e-5);
    free(x); free(w); free(R); free(dx); free(dw); free(db);
    free(xd); free(wd); free(Rd); free(rdx); free(rdxm); free(rdw); free(rdwm); free(rdb);
}

/*
 * The first block's direct convolution in pool phases (layer_conv_phase.h),
 * one channel of one image at a time, against conv_ref in double: every
 * phase value (|fast - ref| <= 1e-5 * mag, float rounding), the statistics
 * over the valid outputs, and the weight and bias gradients of
 * L = sum(conv * R) against conv_bwd_ref (junk columns of dz hold a large
 * value that must be ignored).
 */
static void test_conv_phase(int OC, int N, int H, int W)
{
    const int HW = H * W, PH = H / 2, PW = W / 2, n4 = PH * CONV_PHASE_Q;
    const size_t nx = (size_t)N * HW, ny = (size_t)OC * N * HW;
    float *x = fvec(nx), *w = fvec((size_t)OC * 9), *b = fvec(OC);
    float *xq = fvec(conv_phase_input_floats(H, W)), *zz[2] = {fvec(conv_phase_output_floats(H, W)),
                                                          fvec(conv_phase_output_floats(H, W))};
    float *dz = fvec(conv_phase_output_floats(H, W)), *dw = fvec((size_t)OC * 9), *db = fvec(OC);
    double *xd = dvec(nx), *wd = dvec((size_t)OC * 9), *bd = dvec(OC), *yd = dvec(ny);
    double *mag = dvec(ny), *R = dvec(ny), *dxr = dvec(nx), *dxm = dvec(nx);
    double *dwr = dvec((size_t)OC * 9), *dwm = dvec((size_t)OC * 9), *dbr = dvec(OC);
    long bad = 0, statbad = 0;

    fill(x, nx, -1.0f, 1.0f);
    fill(w, (size_t)OC * 9, -0.5f, 0.5f);
    fill(b, OC, -0.2f, 0.2f);
    to_double(xd, x, nx);
    to_double(wd, w, (size_t)OC * 9);
    to_double(bd, b, OC);
    for (size_t i = 0; i < ny; i++)
        R[i] = urand(-1.0f, 1.0f);
    conv_ref(yd, mag, xd, wd, bd, 1, OC, N, H, W, 3);
    conv_bwd_ref(dxr, dxm, dwr, dwm, dbr, R, xd, wd, 1, OC, N, H, W, 3);

    for (int n = 0; n < N; n++) {
        conv_phase_split(xq, x + (size_t)n * HW, H, W);
        for (int oc = 0; oc < OC; oc++) {
            const size_t o = ((size_t)oc * N + n) * HW;
            double acc[2] = {0.0, 0.0}, s = 0.0, ss = 0.0, sm = 0.0;
            /* Channels two at a time, and an odd OC's last alone. */
            if (oc % 2 == 0)
                conv_phase_conv(zz[0], oc + 1 < OC ? zz[1] : NULL, xq, w + oc * 9, b + oc, H, W);
            const float *z = zz[oc % 2];
            for (int k = 0; k < 4; k++)
                for (int ph = 0; ph < PH; ph++)
                    for (int q = 0; q < CONV_PHASE_Q; q++) {
                        const size_t zi = (size_t)k * n4 + (size_t)ph * CONV_PHASE_Q + q;
                        if (q >= PW) { /* junk: dz there must not count */
                            dz[zi] = 1e30f;
                            continue;
                        }
                        const size_t p = o + (size_t)(2 * ph + (k >> 1)) * W + 2 * q + (k & 1);
                        bad += !(fabs(z[zi] - yd[p]) <= 1e-5 * mag[p]);
                        dz[zi] = (float)R[p];
                        s += yd[p];
                        ss += yd[p] * yd[p];
                        sm += mag[p] * mag[p];
                    }
            conv_phase_stats(acc, z, H, W);
            statbad += !(fabs(acc[0] - s) <= 1e-5 * sm + 1e-9);
            statbad += !(fabs(acc[1] - ss) <= 1e-4 * sm + 1e-9);
            conv_phase_dw(dw + oc * 9, db + oc, dz, xq, H, W);
        }
    }
    CHECK_INT(bad, ==, 0);
    CHECK_INT(statbad, ==, 0);
    Worst ew = {0}, eb = {0};
    for (int i = 0; i < OC * 9; i++)
        worst_add(&ew, i, dw[i], dwr[i]);
    for (int i = 0; i < OC; i++)
        worst_add(&eb, i, db[i], dbr[i]);
    char what[96];
    snprintf(what, sizeof what, "conv phase dw vs double OC%d N%d %dx%d", OC, N, H, W);
    worst_check(&ew, 1e-4, what);
    snprintf(what, sizeof what, "conv phase db vs double OC%d N%d %dx%d", OC, N, H, W);
    worst_check(&eb, 1e-4, what);

    free(x); free(w); free(b); free(xq); free(zz[0]); free(zz[1]); free(dz); free(dw); free(db);
    free(xd); free(wd); free(bd); free(yd); free(mag); free(R); free(dxr); free(dxm);
    free(dwr); free(dwm); free(dbr);
}

static void test_conv(void)
{
    /* Odd and even sizes (edge tiles half outside), one-row and one-column
     * images, and the model's blocks 2 and 3. */
    test_conv_forward(3, 5, 4, 7, 6, 1, 2);
    test_conv_forward(2, 3, 3, 5, 4, 2, 1);
    test_conv_forward(4, 2, 2, 3, 3, 0, 1);
    test_conv_forward(2, 3, 3, 1, 5, 1, 1);
    test_conv_forward(3, 2, 3, 6, 1, 0, 2);
    test_conv_forward(32, 64, 3, 14, 14, 1, 1);
    test_conv_forward(64, 128, 3, 7, 7, 0, 2);

    test_conv_backward_fd(3, 5, 4, 7, 6);
    test_conv_backward_fd(2, 3, 3, 5, 4);
    test_conv_backward_fd(4, 2, 2, 3, 3);
    test_conv_backward_fd(2, 3, 3, 1, 5);
    test_conv_backward_fd(3, 2, 3, 6, 1);
    test_conv_backward_fd(2, 3, 5, 6, 4); /* even sizes, groups of 2 fill their tables */
    test_conv_backward_big(32, 64, 2, 14, 14);
    test_conv_backward_big(64, 128, 2, 7, 7);
    test_conv_phase(3, 2, 8, 8);
    test_conv_phase(32, 3, 28, 28); /* the model's first block */
}

/* ==================================================================== */
/* BatchNorm + ReLU + max-pool                                           */
/* ==================================================================== */

typedef struct {
    int C, N, H, W;
    int PH, PW, HW, PHW;
    long M;              /* values per channel: N*H*W */
    size_t ny, no;       /* sizes of y and out */
} Bnp;

static Bnp bnp_shape(int C, int N, int H, int W)
{
    Bnp s = {C, N, H, W, H / 2, W / 2, H * W, (H / 2) * (W / 2), (long)N * H * W,
             (size_t)C * N * H * W, (size_t)C * N * (H / 2) * (W / 2)};
    return s;
}

/*
 * The plain unfused reference, in double: z = gamma*(y - mean)/sqrt(var +
 * eps) + beta with the batch mean and biased variance (two-pass), or with
 * the given mean/var (evaluation); r = relu(z); out = 2x2 max over r,
 * floor (odd last row/column dropped), first maximum wins.  pat (optional)
 * gets the window index of the maximum, or MAXPOOL_NOGRAD when it is <= 0.
 * Returns sum(out * R) when R is given.
 */
static double bnp_ref(double *out, int *pat, const double *y, const double *gamma,
                      const double *beta, const double *emean, const double *evar,
                      const double *R, const Bnp *s)
{
    double L = 0.0;

    for (int c = 0; c < s->C; c++) {
        const double *yc = y + (size_t)c * s->N * s->HW;
        double mu, var;
        if (emean) {
            mu = emean[c];
            var = evar[c];
        } else {
            double sum = 0.0, sq = 0.0;
            for (long i = 0; i < s->M; i++)
                sum += yc[i];
            mu = sum / (double)s->M;
            for (long i = 0; i < s->M; i++)
                sq += (yc[i] - mu) * (yc[i] - mu);
            var = sq / (double)s->M;
        }
        const double is = 1.0 / sqrt(var + (double)BN_EPS);
        for (int n = 0; n < s->N; n++)
            for (int ph = 0; ph < s->PH; ph++)
                for (int pw = 0; pw < s->PW; pw++) {
                    double best = -INFINITY;
                    int k = 0;
                    for (int j = 0; j < 4; j++) {
                        int q = (2 * ph + j / 2) * s->W + 2 * pw + j % 2;
                        double z = gamma[c] * (yc[(size_t)n * s->HW + q] - mu) * is + beta[c];
                        double r = z > 0.0 ? z : 0.0;
                        if (r > best) {
                            best = r;
                            k = j;
                        }
                    }
                    size_t o = ((size_t)c * s->N + n) * s->PHW + ph * s->PW + pw;
                    if (out)
                        out[o] = best;
                    if (pat)
                        pat[o] = best > 0.0 ? k : MAXPOOL_NOGRAD;
                    if (R)
                        L += best * R[o];
                }
    }
    return L;
}

/* The engine's training forward: statistics over the chunks cuts[k] ..
 * cuts[k+1] (each chunk fed to bn_stats_partial two images at a time, as
 * the engine feeds it tiles), finish, affine, then maxpool_forward chunk by
 * chunk.  run_mean/run_var may be NULL. */
static void bnp_fwd(float *out, uint8_t *idx, float *ymax, float *mean, float *invstd, float *rmean,
                    float *rvar, const float *y, const float *gamma, const float *beta,
                    const int *cuts, int nparts, const Bnp *s)
{
    MaxpoolTables *pt = tables(s->H, s->W);
    double *part = dvec((size_t)nparts * s->C * 2);
    float *scale = fvec(s->C), *shift = fvec(s->C);

    for (int k = 0; k < nparts; k++)
        for (int t = cuts[k]; t < cuts[k + 1]; t += 2) {
            int nt = cuts[k + 1] - t < 2 ? cuts[k + 1] - t : 2;
            bn_stats_partial(part + (size_t)k * s->C * 2, y, s->C, s->N, s->HW, t, nt);
        }
    bn_stats_finish(mean, invstd, rmean, rvar, part, nparts, s->C, s->M);
    bn_affine(scale, shift, gamma, beta, mean, invstd, s->C);
    for (int k = 0; k < nparts; k++)
        maxpool_forward(out, idx, ymax, y, scale, shift, s->C, s->N, pt, cuts[k],
                     cuts[k + 1] - cuts[k]);
    free(part);
    free(scale);
    free(shift);
    free(pt);
}

/* The engine's backward: maxpool_backward_sums per chunk, bn_backward_finish
 * (dgamma, dbeta overwritten), then maxpool_backward in place tile by tile
 * (tiles of `tile` images) over a copy of y, which becomes dy (C, N, HW). */
static void bnp_bwd(float *dy, float *dgamma, float *dbeta, const float *dout,
                    const uint8_t *idx, const float *ymax, const float *y, const float *gamma,
                    const float *mean,
                    const float *invstd, const int *cuts, int nparts, int tile, const Bnp *s)
{
    MaxpoolTables *pt = tables(s->H, s->W);
    double *part = dvec((size_t)nparts * s->C * 2);
    float *mdz = fvec(s->C), *mdzx = fvec(s->C);

    for (int k = 0; k < nparts; k++)
        maxpool_backward_sums(part + (size_t)k * s->C * 2, dout, idx, ymax, mean, invstd, s->C,
                           s->N, (s->H / 2) * (s->W / 2), cuts[k], cuts[k + 1] - cuts[k]);
    bn_backward_finish(dgamma, dbeta, mdz, mdzx, part, nparts, s->C, s->M);
    memcpy(dy, y, s->ny * sizeof *dy);
    for (int n0 = 0; n0 < s->N; n0 += tile) {
        int nt = s->N - n0 < tile ? s->N - n0 : tile;
        maxpool_backward(dy, dout, idx, gamma, mean, invstd, mdz, mdzx, s->C, s->N, pt,
                      n0, nt);
    }
    free(part);
    free(mdz);
    free(mdzx);
    free(pt);
}

/* y (C, N, HW): per channel an offset and a spread, so that ReLU clips a
 * varying share; gamma includes a negative value, as training may give. */
static void bnp_inputs(float *y, float *gamma, float *beta, const Bnp *s)
{
    for (int c = 0; c < s->C; c++) {
        float off = urand(-1.0f, 1.0f), spread = urand(0.5f, 2.0f);
        for (long i = 0; i < s->M; i++)
            y[(size_t)c * s->M + i] = off + spread * urand(-1.0f, 1.0f);
        gamma[c] = c == 1 ? -0.8f : urand(0.5f, 1.5f);
        beta[c] = urand(-0.5f, 0.5f);
    }
}

static double dsumprod(const float *a, const float *b, size_t n)
{
    double L = 0.0;
    for (size_t i = 0; i < n; i++)
        L += (double)a[i] * b[i];
    return L;
}

/*
 * One shape: (a) forward against the reference, chunk splits; (b)
 * backward against central differences; (c) running statistics.
 */
static void test_bnp_case(int C, int N, int H, int W)
{
    const Bnp sh = bnp_shape(C, N, H, W), *s = &sh;
    float *y = fvec(s->ny), *gamma = fvec(C), *beta = fvec(C), *R = fvec(s->no);
    float *out = fvec(s->no), *out2 = fvec(s->no), *mean = fvec(C), *invstd = fvec(C);
    float *mean2 = fvec(C), *invstd2 = fvec(C), *rm = fvec(C), *rv = fvec(C);
    float *rm0 = fvec(C), *rv0 = fvec(C);
    float *dy = fvec(s->ny), *dgamma = fvec(C), *dbeta = fvec(C);
    uint8_t *idx = xcalloc(s->no, 1), *idx2 = xcalloc(s->no, 1);
    float *ym = fvec(s->no), *ym2 = fvec(s->no);
    double *yd = dvec(s->ny), *gd = dvec(C), *bd = dvec(C), *Rd = dvec(s->no);
    double *oref = dvec(s->no);
    int *pat = xcalloc(s->no, sizeof(int)), *pat2 = xcalloc(s->no, sizeof(int));
    char what[96];

    bnp_inputs(y, gamma, beta, s);
    fill(R, s->no, -1.0f, 1.0f);
    to_double(yd, y, s->ny);
    to_double(gd, gamma, C);
    to_double(bd, beta, C);
    to_double(Rd, R, s->no);

    /* (a) forward, one chunk, against the reference: |out - ref| <= 1e-5 *
     * (1 + |ref|) (float affine); idx equal where the window's top two
     * candidates differ by more than 1e-4 (else the order is float noise). */
    int one[2] = {0, N};
    fill(rm0, C, -0.5f, 0.5f);
    fill(rv0, C, 0.5f, 2.0f);
    memcpy(rm, rm0, C * sizeof *rm);
    memcpy(rv, rv0, C * sizeof *rv);
    bnp_fwd(out, idx, ym, mean, invstd, rm, rv, y, gamma, beta, one, 1, s);
    bnp_ref(oref, pat, yd, gd, bd, NULL, NULL, NULL, s);
    {
        double worst = 0.0;
        long badidx = 0, compared = 0;
        for (size_t o = 0; o < s->no; o++) {
            double e = fabs(out[o] - oref[o]) / (1.0 + fabs(oref[o]));
            worst = !(e <= worst) ? e : worst;
        }
        snprintf(what, sizeof what, "bn+pool fwd C%d N%d %dx%d: out", C, N, H, W);
        check_count++;
        if (!(worst <= 1e-5)) {
            check_failed++;
            fprintf(stderr, "%s:%d: %s: worst error %.3g > 1e-5\n", __FILE__, __LINE__, what,
                    worst);
        }
        /* the window's candidates from the reference, for the margin */
        for (int c = 0; c < C; c++) {
            double mu = 0.0, var = 0.0;
            for (long i = 0; i < s->M; i++)
                mu += yd[(size_t)c * s->M + i];
            mu /= (double)s->M;
            for (long i = 0; i < s->M; i++)
                var += (yd[(size_t)c * s->M + i] - mu) * (yd[(size_t)c * s->M + i] - mu);
            var /= (double)s->M;
            for (int n = 0; n < N; n++)
                for (int p = 0; p < s->PHW; p++) {
                    int ph = p / s->PW, pw = p % s->PW;
                    double r[4], top = -1.0, second = -1.0;
                    for (int j = 0; j < 4; j++) {
                        int q = (2 * ph + j / 2) * W + 2 * pw + j % 2;
                        double z = gd[c] * (yd[((size_t)c * N + n) * s->HW + q] - mu) /
                                       sqrt(var + (double)BN_EPS) + bd[c];
                        r[j] = z > 0.0 ? z : 0.0;
                    }
                    for (int j = 0; j < 4; j++) {
                        if (r[j] > top) {
                            second = top;
                            top = r[j];
                        } else if (r[j] > second) {
                            second = r[j];
                        }
                    }
                    size_t o = ((size_t)c * N + n) * s->PHW + p;
                    if (top - second > 1e-4 || top == 0.0) {
                        compared++;
                        badidx += idx[o] != pat[o];
                    }
                }
        }
        CHECK_INT(badidx, ==, 0);
        CHECK(compared > (long)s->no / 2);
    }
    /* statistics against the reference (two-pass double) */
    {
        Worst em = {0}, ei = {0};
        for (int c = 0; c < C; c++) {
            double mu = 0.0, var = 0.0;
            for (long i = 0; i < s->M; i++)
                mu += yd[(size_t)c * s->M + i];
            mu /= (double)s->M;
            for (long i = 0; i < s->M; i++)
                var += (yd[(size_t)c * s->M + i] - mu) * (yd[(size_t)c * s->M + i] - mu);
            var /= (double)s->M;
            worst_add(&em, c, mean[c], mu);
            worst_add(&ei, c, invstd[c], 1.0 / sqrt(var + (double)BN_EPS));
            /* (c) running statistics: momentum 0.1, unbiased variance */
            worst_add(&em, C + c, rm[c], 0.9 * rm0[c] + 0.1 * mu);
            worst_add(&ei, C + c, rv[c],
                      0.9 * rv0[c] + 0.1 * var * (double)s->M / (double)(s->M - 1));
        }
        snprintf(what, sizeof what, "bn mean, run_mean C%d N%d %dx%d", C, N, H, W);
        worst_check(&em, 1e-6, what);
        snprintf(what, sizeof what, "bn invstd, run_var C%d N%d %dx%d", C, N, H, W);
        worst_check(&ei, 1e-6, what);
    }

    /* chunk splits: the same statistics and output up to rounding.  The
     * float lanes of sums.h start at each chunk's first value, so a split
     * regroups which values share a float partial sum; the statistics then
     * differ by a few float ulps (measured 6.8e-7 relative), and an output
     * near zero, (y - mean) * invstd, carries that as an absolute error of
     * about 1e-7 (measured 2.5e-6 relative at 0.012): allow 1e-5. */
    {
        int splits[3][6] = {{0, 1, N}, {0, N / 2, N / 2 + 1, N}, {0, 1, 2, 3, N - 1, N}};
        int nparts[3] = {2, 3, 5};
        for (int k = 0; k < 3; k++) {
            if (splits[k][nparts[k]] != N || (k == 2 && N < 5))
                continue;
            Worst e = {0};
            bnp_fwd(out2, idx2, ym2, mean2, invstd2, NULL, NULL, y, gamma, beta, splits[k],
                    nparts[k], s);
            for (int c = 0; c < C; c++) {
                worst_add(&e, c, mean2[c], mean[c]);
                worst_add(&e, C + c, invstd2[c], invstd[c]);
            }
            for (size_t o = 0; o < s->no; o++)
                worst_add(&e, (long)(2 * C + o), out2[o], out[o]);
            snprintf(what, sizeof what, "bn+pool %d chunks = 1 chunk C%d N%d %dx%d",
                     nparts[k], C, N, H, W);
            worst_check(&e, 1e-5, what);
        }
    }

    /* (b) backward */
    float *dy2 = fvec(s->ny), *dg2 = fvec(C), *db2 = fvec(C);
    for (int c = 0; c < C; c++) {
        dgamma[c] = 1234.5f; /* bn_backward_finish overwrites */
        dbeta[c] = -4321.0f;
    }
    bnp_bwd(dy, dgamma, dbeta, R, idx, ym, y, gamma, mean, invstd, one, 1, 3, s);
    /* other chunkings and tile sizes of the backward agree */
    {
        int two[3] = {0, N / 2, N};
        Worst e = {0};
        bnp_bwd(dy2, dg2, db2, R, idx, ym, y, gamma, mean, invstd, two, 2, 1, s);
        for (size_t i = 0; i < s->ny; i++)
            worst_add(&e, (long)i, dy2[i], dy[i]);
        for (int c = 0; c < C; c++) {
            worst_add(&e, (long)s->ny + c, dg2[c], dgamma[c]);
            worst_add(&e, (long)s->ny + C + c, db2[c], dbeta[c]);
        }
        snprintf(what, sizeof what, "bn+pool bwd 2 chunks = 1 chunk C%d N%d %dx%d", C, N, H, W);
        worst_check(&e, 1e-5, what);
    }

    /*
     * Finite differences through the engine's float forward, L = sum(out *
     * R) summed in double.  Kink rule: an element is skipped when the pool
     * index pattern (which candidate wins each window, or MAXPOOL_NOGRAD when
     * the ReLU clipped the maximum) at +eps or -eps differs from the one
     * at the base point: the perturbation crossed a ReLU kink or a pool
     * tie somewhere in the channel, where L is not differentiable.
     *
     * Float limits this check: moving one y moves the channel's mean and
     * variance by ~eps/M, so the ~N*PH*PW outputs of the channel change by
     * a few ulps each, and the rounding of L is ~4e-7 / eps in the
     * quotient.  Non-pooled positions have true gradients of only 1e-5..
     * 1e-3 (the BN mean terms), which eps = 1e-3 cannot resolve (errors up
     * to 4e-4 seen).  So: eps = 1e-2 (errors seen <= 6e-5), rel with a
     * floor of 2e-2, i.e. |a - b| / max(2e-2, |a| + |b|) < 1e-2 (absolute
     * 2e-4 for the small gradients, 1% for the pooled ones, ~1).  The
     * double check below resolves the small gradients tightly.
     */
    {
        const float eps = 1e-2f;
        Worst ey = {.floor = 2e-2}, eg = {.floor = 2e-2}, eb = {.floor = 2e-2};
        long skipped = 0;
        for (size_t i = 0; i < s->ny; i++) {
            float v = y[i];
            y[i] = v + eps;
            bnp_fwd(out2, idx2, ym2, mean2, invstd2, NULL, NULL, y, gamma, beta, one, 1, s);
            double lp = dsumprod(out2, R, s->no);
            int kink = memcmp(idx, idx2, s->no) != 0;
            y[i] = v - eps;
            bnp_fwd(out2, idx2, ym2, mean2, invstd2, NULL, NULL, y, gamma, beta, one, 1, s);
            double lm = dsumprod(out2, R, s->no);
            kink |= memcmp(idx, idx2, s->no) != 0;
            y[i] = v;
            if (kink) {
                skipped++;
                continue;
            }
            worst_add(&ey, (long)i, dy[i], (lp - lm) / (2.0 * eps));
        }
        for (int c = 0; c < C; c++)
            for (int which = 0; which < 2; which++) {
                float *p = which ? beta : gamma, v = p[c];
                p[c] = v + eps;
                bnp_fwd(out2, idx2, ym2, mean2, invstd2, NULL, NULL, y, gamma, beta, one, 1, s);
                double lp = dsumprod(out2, R, s->no);
                int kink = memcmp(idx, idx2, s->no) != 0;
                p[c] = v - eps;
                bnp_fwd(out2, idx2, ym2, mean2, invstd2, NULL, NULL, y, gamma, beta, one, 1, s);
                double lm = dsumprod(out2, R, s->no);
                kink |= memcmp(idx, idx2, s->no) != 0;
                p[c] = v;
                if (kink) {
                    skipped++;
                    continue;
                }
                worst_add(which ? &eb : &eg, c, which ? dbeta[c] : dgamma[c],
                          (lp - lm) / (2.0 * eps));
            }
        snprintf(what, sizeof what, "bn+pool dy     vs float FD C%d N%d %dx%d", C, N, H, W);
        worst_check(&ey, 1e-2, what);
        snprintf(what, sizeof what, "bn+pool dgamma vs float FD C%d N%d %dx%d", C, N, H, W);
        worst_check(&eg, 1e-2, what);
        snprintf(what, sizeof what, "bn+pool dbeta  vs float FD C%d N%d %dx%d", C, N, H, W);
        worst_check(&eb, 1e-2, what);
        /* the rule may not skip most of the test */
        CHECK(skipped < (long)(s->ny + 2 * C) / 4);
        CHECK(ey.n > 0 && eg.n > 0 && eb.n > 0);
    }

    /*
     * The same in double through the reference (eps = 1e-4 in double, the
     * same kink rule on the reference's pattern): a tighter check of the
     * float kernels, rel < 2e-4.
     */
    {
        const double eps = 1e-4;
        Worst ey = {0}, eg = {0}, eb = {0};
        for (size_t i = 0; i < s->ny; i++) {
            double v = yd[i];
            yd[i] = v + eps;
            double lp = bnp_ref(NULL, pat2, yd, gd, bd, NULL, NULL, Rd, s);
            int kink = memcmp(pat, pat2, s->no * sizeof *pat) != 0;
            yd[i] = v - eps;
            double lm = bnp_ref(NULL, pat2, yd, gd, bd, NULL, NULL, Rd, s);
            kink |= memcmp(pat, pat2, s->no * sizeof *pat) != 0;
            yd[i] = v;
            if (!kink)
                worst_add(&ey, (long)i, dy[i], (lp - lm) / (2.0 * eps));
        }
        for (int c = 0; c < C; c++)
            for (int which = 0; which < 2; which++) {
                double *p = which ? bd : gd, v = p[c];
                p[c] = v + eps;
                double lp = bnp_ref(NULL, pat2, yd, gd, bd, NULL, NULL, Rd, s);
                int kink = memcmp(pat, pat2, s->no * sizeof *pat) != 0;
                p[c] = v - eps;
                double lm = bnp_ref(NULL, pat2, yd, gd, bd, NULL, NULL, Rd, s);
                kink |= memcmp(pat, pat2, s->no * sizeof *pat) != 0;
                p[c] = v;
                if (!kink)
                    worst_add(which ? &eb : &eg, c, which ? dbeta[c] : dgamma[c],
                              (lp - lm) / (2.0 * eps));
            }
        snprintf(what, sizeof what, "bn+pool dy     vs double FD C%d N%d %dx%d", C, N, H, W);
        worst_check(&ey, 2e-4, what);
        snprintf(what, sizeof what, "bn+pool dgamma vs double FD C%d N%d %dx%d", C, N, H, W);
        worst_check(&eg, 2e-4, what);
        snprintf(what, sizeof what, "bn+pool dbeta  vs double FD C%d N%d %dx%d", C, N, H, W);
        worst_check(&eb, 2e-4, what);
    }

    /*
     * (d) evaluation: bn_stats_running gives mean = run_mean (exactly) and
     * invstd = 1/sqrt(run_var + 1e-5) (rel 1e-6); maxpool_forward with
     * idx = NULL normalises with them (reference with the running mean and
     * variance, 1e-5 * (1 + |ref|)) and writes the same values as with idx.
     */
    {
        double *em = dvec(C), *ev = dvec(C);
        float *scale = fvec(C), *shift = fvec(C);
        Worst ei = {0};
        long meq = 0;
        bn_stats_running(mean2, invstd2, rm, rv, C);
        for (int c = 0; c < C; c++) {
            meq += mean2[c] == rm[c];
            worst_add(&ei, c, invstd2[c], 1.0 / sqrt((double)rv[c] + 1e-5));
            em[c] = rm[c];
            ev[c] = rv[c];
        }
        CHECK_INT(meq, ==, C);
        worst_check(&ei, 1e-6, "bn_stats_running invstd");
        bn_affine(scale, shift, gamma, beta, mean2, invstd2, C);
        for (size_t o = 0; o < s->no; o++)
            out[o] = NAN;
        MaxpoolTables *pt = tables(H, W);
        maxpool_forward(out, NULL, NULL, y, scale, shift, C, N, pt, 0, N);
        bnp_ref(oref, NULL, yd, gd, bd, em, ev, NULL, s);
        double worst = 0.0;
        for (size_t o = 0; o < s->no; o++) {
            double e = fabs(out[o] - oref[o]) / (1.0 + fabs(oref[o]));
            worst = !(e <= worst) ? e : worst;
        }
        CHECK(worst <= 1e-5);
        maxpool_forward(out2, idx2, ym2, y, scale, shift, C, N, pt, 0, N);
        CHECK(memcmp(out, out2, s->no * sizeof *out) == 0);
        free(em); free(ev); free(scale); free(shift);
        free(pt);
    }

    free(y); free(gamma); free(beta); free(R); free(out); free(out2); free(mean);
    free(invstd); free(mean2); free(invstd2); free(rm); free(rv); free(rm0); free(rv0);
    free(dy); free(dgamma); free(dbeta); free(idx); free(idx2); free(ym); free(ym2);
    free(yd); free(gd);
    free(bd); free(Rd); free(oref); free(pat); free(pat2); free(dy2); free(dg2); free(db2);
}

/* Ties: equal inputs give equal z, and the first maximum in row-major
 * window order wins; a window that ReLU clipped entirely is MAXPOOL_NOGRAD. */
static void test_pool_ties(void)
{
    /* one channel, one image, 2 x 8: four windows (columns 2pw, 2pw+1)
     *   w0 = [0.5 2 | 2 1]   -> max 2 at 1 (the top-right, before bottom-left)
     *   w1 = [3 3 | 3 3]     -> 0
     *   w2 = [1 1 | 3 3]     -> 2
     *   w3 = [-3 -3 | -3 -3] -> clipped: MAXPOOL_NOGRAD, out 0 */
    const float y[16] = {0.5f, 2.0f, 3.0f, 3.0f, 1.0f, 1.0f, -3.0f, -3.0f,
                         2.0f, 1.0f, 3.0f, 3.0f, 3.0f, 3.0f, -3.0f, -3.0f};
    const float scale = 1.0f, shift = 0.0f;
    float out[4], ym[4];
    uint8_t idx[4];

    MaxpoolTables *pt = tables(2, 8);
    maxpool_forward(out, idx, ym, y, &scale, &shift, 1, 1, pt, 0, 1);
    CHECK_INT(idx[0], ==, 1);
    CHECK_INT(idx[1], ==, 0);
    CHECK_INT(idx[2], ==, 2);
    CHECK_INT(idx[3], ==, MAXPOOL_NOGRAD);
    CHECK(out[0] == 2.0f && out[1] == 3.0f && out[2] == 3.0f && out[3] == 0.0f);
    CHECK(ym[0] == 2.0f && ym[1] == 3.0f && ym[2] == 3.0f); /* y at each maximum */

    /* the same windows split into their four elements (layer_conv_phase.h) */
    float z[16], out2[4], ym2[4];
    uint8_t idx2[4];
    for (int pw = 0; pw < 4; pw++)
        for (int k = 0; k < 4; k++)
            z[k * 4 + pw] = y[(k >> 1) * 8 + 2 * pw + (k & 1)];
    maxpool_forward_phases(out2, idx2, ym2, z, 4, scale, shift);
    CHECK(memcmp(out, out2, sizeof out) == 0 && memcmp(idx, idx2, sizeof idx) == 0);
    CHECK(memcmp(ym, ym2, 3 * sizeof *ym) == 0);

    /* the gradient of a tied window goes to the winner only: with
     * mdz = mdzx = 0 maxpool_backward routes k1 * dout to that position */
    const float dout[4] = {1.0f, 2.0f, 4.0f, 8.0f}, gamma = 1.0f, mean = 0.0f, invstd = 1.0f;
    const float zero = 0.0f;
    float dy[16];
    memcpy(dy, y, sizeof dy);
    maxpool_backward(dy, dout, idx, &gamma, &mean, &invstd, &zero, &zero, 1, 1, pt, 0, 1);
    const float want[16] = {0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
    long bad = 0;
    for (int i = 0; i < 16; i++)
        bad += dy[i] != want[i]; /* by value: the mean terms may give -0 */
    CHECK_INT(bad, ==, 0);
    free(pt);
}

/* The one-pass variance (E[y^2] - mean^2 from float per-image sums) on
 * the first block's shape with an offset mean: how far invstd is from the
 * two-pass value.  |mean| / std = 4 is well beyond what the conv outputs
 * of this model show; tolerance rel 1e-4. */
static void test_bn_offset(void)
{
    const Bnp sh = bnp_shape(4, 16, 28, 28), *s = &sh;
    float *y = fvec(s->ny), *mean = fvec(s->C), *invstd = fvec(s->C);
    double *part = dvec((size_t)s->C * 2);
    Worst e = {0};

    for (int c = 0; c < s->C; c++)
        for (long i = 0; i < s->M; i++)
            y[(size_t)c * s->M + i] = (float)(c + 1) + 1.7320508f * urand(-1.0f, 1.0f);
    bn_stats_partial(part, y, s->C, s->N, s->HW, 0, s->N);
    bn_stats_finish(mean, invstd, NULL, NULL, part, 1, s->C, s->M);
    for (int c = 0; c < s->C; c++) {
        double mu = 0.0, var = 0.0;
        for (long i = 0; i < s->M; i++)
            mu += y[(size_t)c * s->M + i];
        mu /= (double)s->M;
        for (long i = 0; i < s->M; i++)
            var += (y[(size_t)c * s->M + i] - mu) * (y[(size_t)c * s->M + i] - mu);
        var /= (double)s->M;
        worst_add(&e, c, invstd[c], 1.0 / sqrt(var + (double)BN_EPS));
    }
    worst_check(&e, 1e-4, "bn invstd, mean/std up to 4, 28x28 x 16");
    free(y);
    free(mean);
    free(invstd);
    free(part);
}

static void test_bnpool(void)
{
    test_bnp_case(3, 4, 7, 7);  /* odd: 7x7 -> 3x3, the last row/column dropped */
    test_bnp_case(2, 5, 6, 8);  /* even */
    test_bnp_case(3, 6, 5, 4);  /* odd rows, even columns */
    test_pool_ties();
    test_bn_offset();
}

/* ==================================================================== */
/* fc                                                                    */
/* ==================================================================== */

/* out = inp w^T + b in double; mag (optional) = |b| + sum |inp||w|. */
static void fc_ref(double *out, double *mag, const double *inp, const double *w,
                   const double *b, int N, int IN, int OUT)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OUT; o++) {
            double s = b[o], m = fabs(b[o]);
            for (int i = 0; i < IN; i++) {
                double t = inp[(size_t)n * IN + i] * w[(size_t)o * IN + i];
                s += t;
                m += fabs(t);
            }
            out[(size_t)n * OUT + o] = s;
            if (mag)
                mag[(size_t)n * OUT + o] = m;
        }
}

static double fc_loss(double *obuf, const double *inp, const double *w, const double *b,
                      const double *R, int N, int IN, int OUT)
{
    double L = 0.0;
    fc_ref(obuf, NULL, inp, w, b, N, IN, OUT);
    for (size_t i = 0; i < (size_t)N * OUT; i++)
        L += obuf[i] * R[i];
    return L;
}

/* Splits [0, n) into blocks of `blk` (the engine's way), or one block. */
static int block_cuts(int *cuts, int n, int blk)
{
    int k = 0;
    for (int a = 0; a < n; a += blk)
        cuts[k++] = a;
    cuts[k] = n;
    return k;
}

/*
 * Forward against the loop (|err| <= 1e-5 * (|b| + sum |x||w|)); column
 * block splits (below); when `fd`, backward against central differences of L = sum(out * R) in
 * double, eps = 1e-3 (linear: exact), rel < 1e-3, and beta 0/1.
 */
static void test_fc_case(int N, int IN, int OUT, int fd)
{
    const size_t ni = (size_t)N * IN, nw = (size_t)OUT * IN, no = (size_t)N * OUT;
    float *inp = fvec(ni), *w = fvec(nw), *b = fvec(OUT), *R = fvec(no);
    float *out = fvec(no), *out2 = fvec(no), *dw = fvec(nw), *dw2 = fvec(nw);
    float *db = fvec(OUT), *db2 = fvec(OUT), *dinp = fvec(ni), *dinp2 = fvec(ni);
    double *id = dvec(ni), *wd = dvec(nw), *bd = dvec(OUT), *Rd = dvec(no);
    double *od = dvec(no), *mag = dvec(no);
    int *cuts = xcalloc((size_t)(OUT > IN ? OUT : IN) + 2, sizeof(int));
    char what[96];

    fill(inp, ni, -1.0f, 1.0f);
    fill(w, nw, -0.2f, 0.2f);
    fill(b, OUT, -0.5f, 0.5f);
    fill(R, no, -1.0f, 1.0f);
    to_double(id, inp, ni);
    to_double(wd, w, nw);
    to_double(bd, b, OUT);
    to_double(Rd, R, no);

    for (size_t i = 0; i < no; i++)
        out[i] = NAN;
    fc_forward(out, inp, w, b, N, IN, OUT, 0, OUT);
    fc_ref(od, mag, id, wd, bd, N, IN, OUT);
    double worst = 0.0;
    for (size_t i = 0; i < no; i++) {
        double e = fabs(out[i] - od[i]) / (mag[i] + 1e-30);
        worst = !(e <= worst) ? e : worst;
    }
    snprintf(what, sizeof what, "fc fwd N%d IN%d OUT%d vs loop", N, IN, OUT);
    check_count++;
    if (!(worst <= 1e-5)) {
        check_failed++;
        fprintf(stderr, "%s:%d: %s: worst error / magnitude %.3g\n", __FILE__, __LINE__, what,
                worst);
    }

    fc_backward_weights(dw, db, R, inp, N, IN, OUT, 0, OUT, 0.0f);
    fc_backward_input(dinp, R, w, N, IN, OUT, 0, IN);

    /*
     * Column blocks.  Each output (or dinp) column is the same dot product
     * whatever the block, but OpenBLAS picks its kernel and K blocking by
     * the matrix sizes (0.3.21 here: 1- or 7-wide blocks of the 5x37x23
     * case and every block of the 8x1152x256 layer differ from the full
     * width, up to thousands of ulps on near-cancelling sums), so other
     * splits are compared with the float tolerance: |a - b| <= 1e-5 *
     * sum |terms|.  What the engine relies on is bitwise: its own split
     * (32 outputs, 64 inputs per item, whatever the thread count) gives the
     * same bits again, in any block order, and covers every column.
     */
    {
        const int blks[4] = {1, 7, 32, 64};
        double *mw = dvec(nw), *mb = dvec(OUT), *mi = dvec(ni);
        long nbits = 0;
        double wf = 0.0, ww = 0.0, wi = 0.0;
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OUT; o++) {
                double r = fabs(R[(size_t)n * OUT + o]);
                mb[o] += r;
                for (int i = 0; i < IN; i++) {
                    mw[(size_t)o * IN + i] += r * fabs(inp[(size_t)n * IN + i]);
                    mi[(size_t)n * IN + i] += r * fabs(w[(size_t)o * IN + i]);
                }
            }
        for (int k = 0; k < 4; k++) {
            int nb = block_cuts(cuts, OUT, blks[k]);
            for (size_t i = 0; i < no; i++)
                out2[i] = NAN;
            for (size_t i = 0; i < nw; i++)
                dw2[i] = NAN;
            for (int j = 0; j < nb; j++) {
                fc_forward(out2, inp, w, b, N, IN, OUT, cuts[j], cuts[j + 1]);
                fc_backward_weights(dw2, db2, R, inp, N, IN, OUT, cuts[j], cuts[j + 1], 0.0f);
            }
            nb = block_cuts(cuts, IN, blks[k]);
            for (size_t i = 0; i < ni; i++)
                dinp2[i] = NAN;
            for (int j = 0; j < nb; j++)
                fc_backward_input(dinp2, R, w, N, IN, OUT, cuts[j], cuts[j + 1]);
            nbits += memcmp(out, out2, no * sizeof *out) != 0;
            nbits += memcmp(dw, dw2, nw * sizeof *dw) != 0;
            nbits += memcmp(db, db2, (size_t)OUT * sizeof *db) != 0;
            nbits += memcmp(dinp, dinp2, ni * sizeof *dinp) != 0;
            for (size_t i = 0; i < no; i++) {
                double e = fabs(out2[i] - out[i]) / (mag[i] + 1e-30);
                wf = !(e <= wf) ? e : wf;
            }
            for (size_t i = 0; i < nw; i++) {
                double e = fabs(dw2[i] - dw[i]) / (mw[i] + 1e-30);
                ww = !(e <= ww) ? e : ww;
            }
            for (int i = 0; i < OUT; i++) {
                double e = fabs(db2[i] - db[i]) / (mb[i] + 1e-30);
                ww = !(e <= ww) ? e : ww;
            }
            for (size_t i = 0; i < ni; i++) {
                double e = fabs(dinp2[i] - dinp[i]) / (mi[i] + 1e-30);
                wi = !(e <= wi) ? e : wi;
            }
        }
        if (getenv("CNNTOP_TEST_VERBOSE"))
            fprintf(stderr, "  fc N%d IN%d OUT%d splits: %ld of 16 not bitwise; worst "
                            "fwd %.3g, weights %.3g, input %.3g\n",
                    N, IN, OUT, nbits, wf, ww, wi);
        CHECK(wf <= 1e-5);
        CHECK(ww <= 1e-5);
        CHECK(wi <= 1e-5);

        /* the engine's split, forward order and reverse order: same bits */
        float *out3 = fvec(no), *dw3 = fvec(nw), *db3 = fvec(OUT), *dinp3 = fvec(ni);
        for (int pass = 0; pass < 2; pass++) {
            float *o_ = pass ? out3 : out2, *w_ = pass ? dw3 : dw2;
            float *b_ = pass ? db3 : db2, *i_ = pass ? dinp3 : dinp2;
            int nb = block_cuts(cuts, OUT, 32);
            for (size_t i = 0; i < no; i++)
                o_[i] = NAN;
            for (size_t i = 0; i < nw; i++)
                w_[i] = NAN;
            for (int jj = 0; jj < nb; jj++) {
                int j = pass ? nb - 1 - jj : jj;
                fc_forward(o_, inp, w, b, N, IN, OUT, cuts[j], cuts[j + 1]);
                fc_backward_weights(w_, b_, R, inp, N, IN, OUT, cuts[j], cuts[j + 1], 0.0f);
            }
            nb = block_cuts(cuts, IN, 64);
            for (size_t i = 0; i < ni; i++)
                i_[i] = NAN;
            for (int jj = 0; jj < nb; jj++) {
                int j = pass ? nb - 1 - jj : jj;
                fc_backward_input(i_, R, w, N, IN, OUT, cuts[j], cuts[j + 1]);
            }
        }
        CHECK(memcmp(out2, out3, no * sizeof *out2) == 0);
        CHECK(memcmp(dw2, dw3, nw * sizeof *dw2) == 0);
        CHECK(memcmp(db2, db3, (size_t)OUT * sizeof *db2) == 0);
        CHECK(memcmp(dinp2, dinp3, ni * sizeof *dinp2) == 0);
        free(out3); free(dw3); free(db3); free(dinp3);
        free(mw); free(mb); free(mi);
    }

    if (fd) {
        const double eps = 1e-3;
        Worst ew = {0}, eb = {0}, ei = {0};
        double *arrs[3] = {wd, bd, id};
        const float *grads[3] = {dw, db, dinp};
        const size_t lens[3] = {nw, (size_t)OUT, ni};
        Worst *ws[3] = {&ew, &eb, &ei};
        for (int a = 0; a < 3; a++)
            for (size_t i = 0; i < lens[a]; i++) {
                double v = arrs[a][i];
                arrs[a][i] = v + eps;
                double lp = fc_loss(od, id, wd, bd, Rd, N, IN, OUT);
                arrs[a][i] = v - eps;
                double lm = fc_loss(od, id, wd, bd, Rd, N, IN, OUT);
                arrs[a][i] = v;
                worst_add(ws[a], (long)i, grads[a][i], (lp - lm) / (2 * eps));
            }
        worst_check(&ew, 1e-3, "fc dw   vs FD");
        worst_check(&eb, 1e-3, "fc db   vs FD");
        worst_check(&ei, 1e-3, "fc dinp vs FD");

        /* beta = 0 overwrites garbage, beta = 1 adds the same again */
        Worst e0 = {0}, e1 = {0};
        for (size_t i = 0; i < nw; i++)
            dw2[i] = -2.0e30f;
        for (int i = 0; i < OUT; i++)
            db2[i] = 2.0e30f;
        fc_backward_weights(dw2, db2, R, inp, N, IN, OUT, 0, OUT, 0.0f);
        for (size_t i = 0; i < nw; i++)
            worst_add(&e0, (long)i, dw2[i], dw[i]);
        for (int i = 0; i < OUT; i++)
            worst_add(&e0, (long)(nw + i), db2[i], db[i]);
        fc_backward_weights(dw2, db2, R, inp, N, IN, OUT, 0, OUT, 1.0f);
        for (size_t i = 0; i < nw; i++)
            worst_add(&e1, (long)i, dw2[i], 2.0 * dw[i]);
        for (int i = 0; i < OUT; i++)
            worst_add(&e1, (long)(nw + i), db2[i], 2.0 * db[i]);
        worst_check(&e0, 0.0, "fc beta=0 overwrites");
        worst_check(&e1, 1e-6, "fc beta=1 accumulates (2x)");
    }

    free(inp); free(w); free(b); free(R); free(out); free(out2); free(dw); free(dw2);
    free(db); free(db2); free(dinp); free(dinp2); free(id); free(wd); free(bd); free(Rd);
    free(od); free(mag); free(cuts);
}

static void test_fc(void)
{
    test_fc_case(5, 37, 23, 1);
    test_fc_case(3, 70, 10, 1);
    test_fc_case(8, 1152, 256, 0); /* the model's first fc */
    test_fc_case(8, 256, 128, 0);
    test_fc_case(8, 128, 10, 0);
}

/* ==================================================================== */
/* relu + dropout                                                        */
/* ==================================================================== */

static void test_dropout(void)
{
    const uint64_t key = rng_key(42, RNG_DROPOUT, 7);
    const int N = 100, F = 1000; /* 100k elements; rows start mid-word (1000 % 64) */
    const size_t ne = (size_t)N * F;
    float *z = fvec(ne), *h = fvec(ne), *h2 = fvec(ne), *dh = fvec(ne), *dz = fvec(ne);
    uint8_t *mask = xcalloc(ne, 1), *mask2 = xcalloc(ne, 1);

    fill(z, ne, -1.0f, 1.0f);
    for (size_t e = 0; e < ne; e += 997)
        z[e] = 0.0f; /* ReLU's edge: 0 is not > 0 */
    dropout_relu_forward(h, mask, z, F, 0, N, key);

    long kept = 0, badmask = 0, badh = 0;
    for (size_t e = 0; e < ne; e++) {
        int keep = dropout_keep(key, e);
        kept += keep;
        badmask += mask[e] != (keep && z[e] > 0.0f);
        float want = keep && z[e] > 0.0f ? z[e] * 2.0f : 0.0f; /* 1/(1-p) = 2 */
        badh += h[e] != want;
    }
    CHECK_INT(badmask, ==, 0);
    CHECK_INT(badh, ==, 0);
    /* binomial(100000, 0.5): sd 0.0016, so +-0.01 is 6 sd */
    CHECK_NEAR((double)kept / (double)ne, 0.5, 0.01);
    /* the bits themselves: keep is bit e%64 of draw e/64 */
    CHECK_INT(dropout_keep(key, 130), ==, (int)((rng_at(key, 2) >> 2) & 1));

    /* row blocks [0,37), [37,38), [38,100) and in place: the same */
    memcpy(h2, z, ne * sizeof *z);
    memset(mask2, 0xaa, ne);
    dropout_relu_forward(h2, mask2, h2, F, 0, 37, key);
    dropout_relu_forward(h2, mask2, h2, F, 37, 38, key);
    dropout_relu_forward(h2, mask2, h2, F, 38, N, key);
    CHECK(memcmp(h, h2, ne * sizeof *h) == 0);
    CHECK(memcmp(mask, mask2, ne) == 0);

    /* another key: other masks */
    dropout_relu_forward(h2, mask2, z, F, 0, N, key + 1);
    CHECK(memcmp(mask, mask2, ne) != 0);

    /* backward: dz = dh * 2 where mask, else 0 (also in place, in blocks) */
    fill(dh, ne, -1.0f, 1.0f);
    dropout_relu_backward(dz, dh, mask, F, 0, N);
    long baddz = 0;
    for (size_t e = 0; e < ne; e++)
        baddz += dz[e] != (mask[e] ? dh[e] * 2.0f : 0.0f);
    CHECK_INT(baddz, ==, 0);
    memcpy(h2, dh, ne * sizeof *dh);
    dropout_relu_backward(h2, h2, mask, F, 0, 50);
    dropout_relu_backward(h2, h2, mask, F, 50, N);
    CHECK(memcmp(dz, h2, ne * sizeof *dz) == 0);

    /*
     * Finite differences of L = sum(h * R) w.r.t. z with the same key,
     * eps = 1e-3 in float, L in double; elements with |z| < 2 eps are
     * skipped (the ReLU kink lies within the difference).  rel < 1e-2.
     */
    {
        const int n = 3, f = 70;
        const size_t m = (size_t)n * f;
        const float eps = 1e-3f;
        float *zz = fvec(m), *hh = fvec(m), *R = fvec(m), *g = fvec(m);
        uint8_t *mk = xcalloc(m, 1);
        Worst e = {0};
        long skipped = 0;
        fill(zz, m, -1.0f, 1.0f);
        fill(R, m, -1.0f, 1.0f);
        dropout_relu_forward(hh, mk, zz, f, 0, n, key);
        dropout_relu_backward(g, R, mk, f, 0, n);
        for (size_t i = 0; i < m; i++) {
            if (fabsf(zz[i]) < 2 * eps) {
                skipped++;
                continue;
            }
            float v = zz[i];
            zz[i] = v + eps;
            dropout_relu_forward(hh, mk, zz, f, 0, n, key);
            double lp = dsumprod(hh, R, m);
            zz[i] = v - eps;
            dropout_relu_forward(hh, mk, zz, f, 0, n, key);
            double lm = dsumprod(hh, R, m);
            zz[i] = v;
            worst_add(&e, (long)i, g[i], (lp - lm) / (2.0 * eps));
        }
        worst_check(&e, 1e-2, "relu+dropout dz vs FD");
        CHECK(skipped < (long)m / 10);
        free(zz); free(hh); free(R); free(g); free(mk);
    }

    /* evaluation: mask NULL is plain ReLU, whatever the key */
    dropout_relu_forward(h2, NULL, z, F, 0, N, key);
    long badeval = 0;
    for (size_t e = 0; e < ne; e++)
        badeval += h2[e] != (z[e] > 0.0f ? z[e] : 0.0f);
    CHECK_INT(badeval, ==, 0);

    free(z); free(h); free(h2); free(dh); free(dz); free(mask); free(mask2);
}

/* ==================================================================== */
/* softmax cross-entropy                                                 */
/* ==================================================================== */

static void test_xent(void)
{
    /*
     * By hand, logits [[1, 2, 3], [1, -1, 0.5]], labels [2, 0]:
     *   row 0: lse = 3 + ln(1 + e^-1 + e^-2) = 3 + ln(1.503214724) = 3.407605964
     *          loss = lse - 3 = 0.407605964
     *          probs = e^(l - lse) = 0.0900305732, 0.2447284711, 0.6652409558
     *   row 1: lse = 1 + ln(1 + e^-2 + e^-1.5) = 1 + ln(1.741865948) = 1.554956920
     *          loss = lse - 1 = 0.554956920
     *          probs = 0.5740969930, 0.0776955791, 0.3482074279
     *   mean loss = (0.407605964 + 0.554956920) / 2 = 0.481281442
     * dlogits = (probs - onehot) / 2.
     */
    const float logits[6] = {1, 2, 3, 1, -1, 0.5f};
    const uint8_t labels[2] = {2, 0};
    const double probs_hand[6] = {0.0900305732, 0.2447284711, 0.6652409558,
                                  0.5740969930, 0.0776955791, 0.3482074279};
    float probs[6], dl[6];

    double loss = xent_forward(probs, logits, labels, 2, 3);
    CHECK_NEAR(loss, 0.481281442, 1e-6);
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(probs[i], probs_hand[i], 1e-6);
    xent_backward(dl, probs, labels, 2, 3);
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(dl[i], (probs_hand[i] - (i == 2 || i == 3 ? 1.0 : 0.0)) / 2.0, 1e-6);

    /* dlogits vs central differences of the returned loss: eps = 1e-3 in
     * float, the loss returned in double; rel < 1e-2.  The loss is smooth. */
    {
        enum { N = 4, NC = 10 };
        float lg[N * NC], pr[N * NC], g[N * NC];
        const uint8_t lb[N] = {3, 0, 9, 3};
        const float eps = 1e-3f;
        Worst e = {0};
        fill(lg, N * NC, -3.0f, 3.0f);
        xent_forward(pr, lg, lb, N, NC);
        xent_backward(g, pr, lb, N, NC);
        for (int i = 0; i < N * NC; i++) {
            float v = lg[i];
            lg[i] = v + eps;
            double lp = xent_forward(pr, lg, lb, N, NC);
            lg[i] = v - eps;
            double lm = xent_forward(pr, lg, lb, N, NC);
            lg[i] = v;
            worst_add(&e, i, g[i], (lp - lm) / (2.0 * eps));
        }
        worst_check(&e, 1e-2, "xent dlogits vs FD");
    }

    /* huge logits: finite loss (log-sum-exp), probabilities 1 and 0 */
    {
        const float big[6] = {1000.0f, -1000.0f, 0.0f, -1000.0f, 1000.0f, 1000.0f};
        const uint8_t lb1[2] = {1, 1}, lb0[2] = {0, 2};
        float pr[6];
        double l1 = xent_forward(pr, big, lb1, 2, 3);
        CHECK(isfinite(l1));
        /* row 0: 2000; row 1: ln 2 */
        CHECK_NEAR(l1, (2000.0 + log(2.0)) / 2.0, 1e-3);
        double l0 = xent_forward(pr, big, lb0, 2, 3);
        CHECK_NEAR(l0, log(2.0) / 2.0, 1e-6);
        long bad = 0;
        for (int i = 0; i < 6; i++)
            bad += !isfinite(pr[i]);
        CHECK_INT(bad, ==, 0);
        CHECK_NEAR(pr[0], 1.0, 1e-7);
        CHECK_NEAR(pr[4], 0.5, 1e-7);
    }

    /* xent_correct: the first maximum wins a tie */
    {
        const float lg[9] = {1, 3, 3, 5, 5, 5, -1, -2, -1};
        const uint8_t first[3] = {1, 0, 0}, second[3] = {2, 1, 2}, mixed[3] = {1, 2, 0};
        CHECK_INT(xent_correct(lg, first, 3, 3), ==, 3);
        CHECK_INT(xent_correct(lg, second, 3, 3), ==, 0);
        CHECK_INT(xent_correct(lg, mixed, 3, 3), ==, 2);
    }
}

/* ==================================================================== */
/* Adam                                                                  */
/* ==================================================================== */

static void test_adam(void)
{
    /*
     * lr 0.1, b1 0.9, b2 0.999, eps 1e-8; p0 = [1, -0.5, 2];
     * g1 = [0.5, -0.25, 0], g2 = [-0.1, 0.3, 0.001].
     * Step 1 (1-b1 = 0.1, 1-b2 = 0.001, lr/(1-b1) = 1, sqrt(1-b2) = 0.0316228):
     *   m = 0.1 g1 = [0.05, -0.025, 0];  v = 0.001 g1^2 = [2.5e-4, 6.25e-5, 0]
     *   sqrt(v)/sqrt(0.001) = |g1| = [0.5, 0.25, 0]
     *   p -= 1 * m / (|g1| + 1e-8): [0.05/0.50000001, -0.025/0.25000001, 0/1e-8]
     *   p1 = [0.900000002, -0.400000004, 2]
     * Step 2 (1-b1^2 = 0.19, 1-b2^2 = 0.001999, lr/0.19 = 0.526315789):
     *   m = 0.9 m + 0.1 g2 = [0.035, 0.0075, 1e-4]
     *   v = 0.999 v + 0.001 g2^2 = [2.5975e-4, 1.524375e-4, 1e-9]
     *   sqrt(v)/sqrt(0.001999) = [0.360472, 0.276146, 7.07284e-4]
     *   p -= 0.526315789 * m / (that + 1e-8)
     *   p2 = [0.8488973957, -0.4142944765, 1.9255873697]
     * (the same as torch.optim.Adam in double.)
     */
    float p[3] = {1.0f, -0.5f, 2.0f}, m[3] = {0}, v[3] = {0};
    const float g1[3] = {0.5f, -0.25f, 0.0f};
    float g2[3] = {-0.1f, 0.3f, 0.001f};
    const double p1[3] = {0.900000002, -0.4000000039999998, 2.0};
    const double p2[3] = {0.8488973956993239, -0.414294476547747, 1.9255873697336898};

    adam_update(p, m, v, g1, 0, 3, 1, 0.1);
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(p[i], p1[i], 1e-6);
    /* in two ranges, as the engine splits the flat parameter array */
    adam_update(p, m, v, g2, 0, 1, 2, 0.1);
    adam_update(p, m, v, g2, 1, 3, 2, 0.1);
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(p[i], p2[i], 1e-6);
    /* m, v after step 2 (torch keeps them in float: 0.035 and 1.524375e-4
     * to float precision, ~6e-8 relative; 1e-6 relative allowed) */
    CHECK_NEAR(m[0], 0.035, 0.035 * 1e-6);
    CHECK_NEAR(v[1], 1.524375e-4, 1.524375e-4 * 1e-6);
    /* outside [i0, i1): untouched */
    float q[4] = {5, 5, 5, 5}, qm[4] = {0}, qv[4] = {0};
    const float qg[4] = {1, 1, 1, 1};
    adam_update(q, qm, qv, qg, 1, 3, 1, 0.1);
    CHECK(q[0] == 5.0f && q[3] == 5.0f && qm[0] == 0.0f && qv[3] == 0.0f);
    CHECK_NEAR(q[1], 4.9, 1e-6);
    /* Moments that would fall below FLT_MIN become 0 (no subnormals:
     * optim_adam.c); ones above it stay. */
    {
        float r[3] = {1, 1, 1}, rm[3] = {1.2e-38f, -1.2e-38f, 1.0e-37f};
        float rv[3] = {1.0e-38f, 1.176e-38f, 1.0e-37f};
        const float rg[3] = {0, 0, 0};
        adam_update(r, rm, rv, rg, 0, 3, 5, 0.1);
        CHECK(rm[0] == 0.0f && rm[1] == 0.0f && rv[0] == 0.0f);
        CHECK(rv[1] == 0.0f); /* normal, but 0.999 of it is below FLT_MIN */
        CHECK_NEAR(rm[2], 0.9e-37, 1e-44);
        CHECK(rv[2] > 0.0f && isnormal(rv[2]));
        /* such moments move p by ~1e-30: not at all, in float */
        CHECK(r[0] == 1.0f && r[1] == 1.0f && r[2] == 1.0f);
    }
}

/* ==================================================================== */
/* rng                                                                   */
/* ==================================================================== */

static int is_permutation(const uint32_t *p, long n)
{
    uint8_t *seen = xcalloc((size_t)n, 1);
    int ok = 1;
    for (long i = 0; i < n && ok; i++) {
        if (p[i] >= (uint32_t)n || seen[p[i]])
            ok = 0;
        else
            seen[p[i]] = 1;
    }
    free(seen);
    return ok;
}

static void test_rng(void)
{
    const long ns[4] = {1, 2, 10, 60000};
    uint32_t *a = xcalloc(60000, sizeof *a), *b = xcalloc(60000, sizeof *b);

    for (int k = 0; k < 4; k++) {
        long n = ns[k];
        rng_permutation(a, n, 1234, 3);
        CHECK(is_permutation(a, n));
        rng_permutation(b, n, 1234, 3);
        CHECK(memcmp(a, b, (size_t)n * sizeof *a) == 0); /* a pure function */
        if (n >= 10) {
            rng_permutation(b, n, 1235, 3);
            CHECK(is_permutation(b, n));
            CHECK(memcmp(a, b, (size_t)n * sizeof *a) != 0); /* seed matters */
            rng_permutation(b, n, 1234, 4);
            CHECK(memcmp(a, b, (size_t)n * sizeof *a) != 0); /* epoch matters */
            long fixed = 0;
            for (long i = 0; i < n; i++)
                fixed += a[i] == (uint32_t)i;
            CHECK(fixed < n / 2); /* it does shuffle */
        }
    }
    /* n = 2 over 4000 epochs: both orders, near half each (sd 32) */
    long swapped = 0;
    for (long e = 0; e < 4000; e++) {
        rng_permutation(a, 2, 99, e);
        swapped += a[0] == 1;
    }
    CHECK_NEAR((double)swapped, 2000.0, 200.0);
    /* n = 3 over 30000 epochs: each of the 6 orders 5000 +- 400 (sd 65) */
    long counts[9] = {0};
    for (long e = 0; e < 30000; e++) {
        rng_permutation(a, 3, 7, e);
        counts[a[0] * 3 + a[1]]++;
    }
    for (int i = 0; i < 9; i++)
        if (i / 3 != i % 3)
            CHECK_NEAR((double)counts[i], 5000.0, 400.0);
    free(a);
    free(b);
}

int main(void)
{
    gemm_init(); /* one OpenBLAS thread, as in training */
    test_conv();
    test_bnpool();
    test_fc();
    test_dropout();
    test_xent();
    test_adam();
    test_rng();
    return check_report();
}
