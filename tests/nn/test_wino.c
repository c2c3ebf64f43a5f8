/*
 * test_wino.c: the Winograd convolution of blocks 2 and 3 (layer_wino.h),
 * group by group as the engine calls it: the forward against a double
 * convolution, the backward against central differences (small shapes,
 * edge tiles half outside) or a direct double loop (the model's shapes),
 * other group cuts, beta 0/1 and the dx = NULL path.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cnntop/machine.h"
#include "gradcheck.h"
#include "nn/gemm.h"
#include "nn/layer_wino.h"
#include "nntest.h"

#define K 3 /* the kernel side */

/* Float rounding against a sum of |terms|: F(7x7, 3x3)'s larger
 * constants (B^T's up to 7.2, A^T's 2^6) left up to 4.6e-5 in the
 * forward on the small shapes and 1.3e-5 on the model's (F(4x4, 3x3)
 * had 1e-6 to 4e-6); a wrong index or transform gives errors of order 1. */
#define WINO_TOL 2e-4

/* Where the GEMMs run and how x and dx lie: main() runs every test on
 * each path this CPU has, with x in channel rows and channels-last. */
static GemmPath path = GEMM_PATH_OPENBLAS;
static WinoLayout layout = WINO_ROWS;

/*
 * The engine's Winograd convolution set up for groups of up to cap images
 * of H x W: its shape, its scratch, U from w and an E (layer_wino.h).  The scratch
 * starts as NaN: a read of anything not written first shows.
 */
typedef struct WConv {
    WinoShape *t;
    float *U, *dE, *scratch;
    int C, OC, H, W;
} WConv;

static WConv wconv_make(const float *w, int C, int OC, int cap, int H, int W)
{
    WConv c = {.C = C, .OC = OC, .H = H, .W = W};
    long P = (long)OC * C, ns = wino_scratch_floats(H, W, C, OC, cap);

    c.t = xcalloc(1, sizeof *c.t);
    wino_shape_init(c.t, H, W, cap);
    c.U = fvec(WINO_P * (size_t)P);
    c.dE = fvec(WINO_E * (size_t)OC * C);
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
    free(c->dE);
    free(c->scratch);
}

/* The tests keep channel rows (C, N, H, W) for x, y, dy and dx, as the
 * references do; the calls below take y and dy channels-last and x and
 * dx as `layout` says, through copies of the whole batch (so that images
 * outside the group keep what they held). */
static float *batch_last(const float *rows, int C, int N, int HW)
{
    float *l = fvec((size_t)C * N * HW);

    relayout(l, rows, sizeof *l, C, N, HW, 1);
    return l;
}

static void batch_back(float *rows, float *last, int C, int N, int HW)
{
    relayout(rows, last, sizeof *last, C, N, HW, 0);
    free(last);
}

static void wconv_forward(WConv *c, float *y, const float *x, const float *b, int N, int n0,
                          int nt)
{
    const int HW = c->H * c->W;
    float *yl = batch_last(y, c->OC, N, HW);
    float *xl = layout == WINO_LAST ? batch_last(x, c->C, N, HW) : NULL;

    double *stats = xcalloc(2 * (size_t)c->OC, sizeof *stats);
    wino_forward(yl, xl ? xl : x, layout, c->U, b, stats, c->scratch, c->t, c->C, c->OC, N, n0,
                 nt, path);
    /* The BN statistics it summed as it went: the group's outputs' sums
     * and sums of squares, to float rounding (an index wrong by one
     * channel or position is off by far more). */
    for (int oc = 0; oc < c->OC; oc++) {
        double s1 = 0, s2 = 0, a1 = 0;
        for (long p = (long)n0 * HW; p < (long)(n0 + nt) * HW; p++) {
            const double v = yl[p * c->OC + oc];
            s1 += v;
            s2 += v * v;
            a1 += fabs(v);
        }
        CHECK(fabs(stats[2 * oc] - s1) <= 1e-5 * (a1 + 1));
        CHECK(fabs(stats[2 * oc + 1] - s2) <= 1e-5 * (s2 + 1));
    }
    free(stats);
    batch_back(y, yl, c->OC, N, HW);
    free(xl);
}

/* One group's backward, dy the whole batch's; dw = E G after it (E =
 * G^T dU, summed by wino_backward: layer_wino.h).
 * Before beta 0, E is poisoned with NaN: beta 0 must overwrite it, not
 * scale it. */
static void wconv_backward(WConv *c, float *dx, float *dw, float *db, const float *dy,
                           const float *x, int N, int n0, int nt, float beta)
{
    const int HW = c->H * c->W;
    long P = (long)c->OC * c->C;
    float *dyl = batch_last(dy, c->OC, N, HW);
    float *xl = layout == WINO_LAST ? batch_last(x, c->C, N, HW) : NULL;
    float *dxl = dx && layout == WINO_LAST ? batch_last(dx, c->C, N, HW) : NULL;

    if (beta == 0.0f)
        for (long i = 0; i < WINO_E * P; i++)
            c->dE[i] = NAN;
    wino_backward(dxl ? dxl : dx, c->dE, db, dyl, xl ? xl : x, layout, c->U, c->scratch, c->t,
                  c->C, c->OC, N, n0, nt, beta, path);
    wino_filter_grad(dw, c->dE, c->C, 0, P);
    if (dxl)
        batch_back(dx, dxl, c->C, N, HW);
    free(dyl);
    free(xl);
}

/* ---- forward ---- */

/* One shape's inputs, float and double, and the double convolution. */
typedef struct Fwd {
    int C, OC, N, H, W;
    size_t nx, ny, nw;
    float *x, *w, *b, *y;
    double *xd, *wd, *bd, *yd, *mag;
} Fwd;

static Fwd fwd_make(int C, int OC, int N, int H, int W)
{
    Fwd f = {.C = C, .OC = OC, .N = N, .H = H, .W = W, .nx = (size_t)C * N * H * W,
             .ny = (size_t)OC * N * H * W, .nw = (size_t)OC * C * 9};

    f.x = fvec(f.nx);
    f.w = fvec(f.nw);
    f.b = fvec(OC);
    f.y = fvec(f.ny);
    f.xd = dvec(f.nx);
    f.wd = dvec(f.nw);
    f.bd = dvec(OC);
    f.yd = dvec(f.ny);
    f.mag = dvec(f.ny);
    fill(f.x, f.nx, -1.0f, 1.0f);
    fill(f.w, f.nw, -0.5f, 0.5f);
    fill(f.b, OC, -0.5f, 0.5f);
    to_double(f.xd, f.x, f.nx);
    to_double(f.wd, f.w, f.nw);
    to_double(f.bd, f.b, OC);
    conv_ref(f.yd, f.mag, f.xd, f.wd, f.bd, C, OC, N, H, W, K);
    return f;
}

static void fwd_free(Fwd *f)
{
    free(f->x); free(f->w); free(f->b); free(f->y);
    free(f->xd); free(f->wd); free(f->bd); free(f->yd); free(f->mag);
}

/* The worst |y - ref| / mag over images [n0, n0 + nt); the other images
 * must still hold `sentinel` (counted in *outside when not NULL). */
static double fwd_worst(const Fwd *f, int n0, int nt, float sentinel, long *outside)
{
    const int HW = f->H * f->W;
    double worst = 0.0;

    for (int oc = 0; oc < f->OC; oc++)
        for (int n = 0; n < f->N; n++)
            for (int q = 0; q < HW; q++) {
                size_t i = ((size_t)oc * f->N + n) * HW + q;
                if (n < n0 || n >= n0 + nt) {
                    if (outside)
                        *outside += f->y[i] != sentinel;
                    continue;
                }
                worst = maxerr(worst, fabs((double)f->y[i] - f->yd[i]) / (f->mag[i] + 1e-30));
            }
    return worst;
}

static void fwd_run(Fwd *f, WConv *wc, const int *cuts, int ncut, float sentinel)
{
    for (size_t i = 0; i < f->ny; i++)
        f->y[i] = sentinel;
    for (int t = 0; t + 1 < ncut; t++)
        wconv_forward(wc, f->y, f->x, f->b, f->N, cuts[t], cuts[t + 1] - cuts[t]);
}

/*
 * Forward: wino_forward over uneven groups covering the batch, and over
 * one group alone (images outside it untouched), against conv_ref in
 * double.  Tolerance: |fast - ref| <= WINO_TOL * (|b| + sum |w||x|) per
 * element (float rounding of the transforms and GEMMs; a wrong index or
 * transform gives errors of order 1).
 */
static void test_forward(int C, int OC, int N, int H, int W, int n0, int nt)
{
    Fwd f = fwd_make(C, OC, N, H, W);
    WConv wc = wconv_make(f.w, C, OC, N, H, W);
    char what[96];

    /* uneven groups: [0,1), [1, N-1), [N-1, N) (or one group for N <= 2) */
    int cuts[4] = {0, 1, N - 1, N}, two[2] = {0, N};
    fwd_run(&f, &wc, N > 2 ? cuts : two, N > 2 ? 4 : 2, NAN);
    snprintf(what, sizeof what, "conv fwd C%d OC%d N%d %dx%d groups", C, OC, N, H, W);
    CHECK_MAXERR(fwd_worst(&f, 0, N, NAN, NULL), WINO_TOL, what);

    /* one group [n0, n0+nt) alone: the rest keeps its sentinel */
    int one[2] = {n0, n0 + nt};
    long outside = 0;
    fwd_run(&f, &wc, one, 2, 777.0f);
    double worst = fwd_worst(&f, n0, nt, 777.0f, &outside);
    CHECK_INT(outside, ==, 0);
    CHECK(worst <= WINO_TOL);

    /* as the engine runs it: a shape for groups of 2, groups that fill it */
    if (N > 2) {
        WConv w2 = wconv_make(f.w, C, OC, 2, H, W);
        int c2[16], n2 = 0;
        for (int n = 0; n < N; n += 2)
            c2[n2++] = n;
        c2[n2++] = N;
        fwd_run(&f, &w2, c2, n2, NAN);
        CHECK(fwd_worst(&f, 0, N, NAN, NULL) <= WINO_TOL);
        wconv_free(&w2);
    }
    wconv_free(&wc);
    fwd_free(&f);
}

/* ---- backward ---- */

/* The Winograd backward over the groups `cuts` (beta 0 for the first, 1
 * after; a shape for groups of up to cap images) into dw, db, dx, as the
 * engine calls it (dy read in place of the whole batch's R, rows N*H*W
 * apart).  dw and db start as NaN: beta 0 must overwrite them. */
static void conv_bwd_tiles(float *dx, float *dw, float *db, const float *R, const float *x,
                           const float *w, const int *cuts, int ncut, int cap, int C, int OC,
                           int N, int H, int W)
{
    WConv wc = wconv_make(w, C, OC, cap, H, W);

    for (size_t i = 0; i < (size_t)OC * C * 9; i++)
        dw[i] = NAN;
    for (int i = 0; i < OC; i++)
        db[i] = NAN;
    for (int t = 0; t + 1 < ncut; t++) {
        int n0 = cuts[t], nt = cuts[t + 1] - cuts[t];
        wconv_backward(&wc, dx, dw, db, R, x, N, n0, nt, t == 0 ? 0.0f : 1.0f);
    }
    wconv_free(&wc);
}

/* One small shape's inputs, its gradients over uneven groups, and the
 * double copies the finite differences move. */
typedef struct Bwd {
    int C, OC, N, H, W;
    size_t nx, ny, nw;
    float *x, *w, *R, *dx, *dw, *db;
    double *xd, *wd, *bd, *Rd, *yb;
} Bwd;

static Bwd bwd_make(int C, int OC, int N, int H, int W)
{
    Bwd b = {.C = C, .OC = OC, .N = N, .H = H, .W = W, .nx = (size_t)C * N * H * W,
             .ny = (size_t)OC * N * H * W, .nw = (size_t)OC * C * K * K};

    b.x = fvec(b.nx);
    b.w = fvec(b.nw);
    b.R = fvec(b.ny);
    b.dx = fvec(b.nx);
    b.dw = fvec(b.nw);
    b.db = fvec(OC);
    b.xd = dvec(b.nx);
    b.wd = dvec(b.nw);
    b.bd = dvec(OC);
    b.Rd = dvec(b.ny);
    b.yb = dvec(b.ny);
    fill(b.x, b.nx, -1.0f, 1.0f);
    fill(b.w, b.nw, -0.5f, 0.5f);
    fill(b.R, b.ny, -1.0f, 1.0f);
    to_double(b.xd, b.x, b.nx);
    to_double(b.wd, b.w, b.nw);
    to_double(b.Rd, b.R, b.ny);
    for (int i = 0; i < OC; i++)
        b.bd[i] = urand(-0.5f, 0.5f);
    return b;
}

static void bwd_free(Bwd *b)
{
    free(b->x); free(b->w); free(b->R); free(b->dx); free(b->dw); free(b->db);
    free(b->xd); free(b->wd); free(b->bd); free(b->Rd); free(b->yb);
}

/* The loss of the finite differences: L = sum(conv(x, w, b) * R) in double. */
static double bwd_loss(void *ctx)
{
    Bwd *b = ctx;

    conv_ref(b->yb, NULL, b->xd, b->wd, b->bd, b->C, b->OC, b->N, b->H, b->W, K);
    return ddot(b->yb, b->Rd, b->ny);
}

/* dx, dw, db against central differences of bwd_loss, eps = 1e-3 in
 * double (L is linear, so the difference is exact up to double rounding);
 * tolerance rel < 2e-2 for the float kernels (F(7x7, 3x3) left up to
 * 5.3e-3 on the small shapes, where a 9 x 9 patch is mostly padding and a
 * dw sums few terms; F(4x4, 3x3) had passed 1e-3).  A dx is a sum of up to
 * OC x 9 products of about 0.25 that can cancel to near zero, where float
 * rounding (its size depends on the GEMM's order of sums: OpenBLAS's SSE
 * kernels without FMA left 1.3e-6 on -2.3e-5) is all that is left: errors
 * are taken against 1e-2 below that, still 1e-4 of a typical value. */
static void check_bwd_fd(Bwd *b)
{
    const GradCheck gc = {.loss = bwd_loss, .ctx = b, .eps = 1e-3, .floor = 1e-2};
    const GradInput in[3] = {{.d = b->xd, .n = b->nx, .grad = b->dx},
                             {.d = b->wd, .n = b->nw, .grad = b->dw},
                             {.d = b->bd, .n = (size_t)b->OC, .grad = b->db}};
    static const char *const names[3] = {"dx", "dw", "db"};
    char what[96];

    for (int a = 0; a < 3; a++) {
        snprintf(what, sizeof what, "conv %s  vs FD C%d OC%d N%d %dx%d K%d", names[a], b->C,
                 b->OC, b->N, b->H, b->W, K);
        CHECK_GRAD(&gc, &in[a], NULL, 2e-2, what);
    }
}

/* As the engine runs it: a shape for groups of 2 and groups that fill it
 * (the last may be smaller), [0,2), [2,4), ...  The same dx, dw, db up to
 * rounding (rel 1e-3, as for beta below: other group sizes sum E = G^T dU
 * in another order).  Some dw cancel to near zero, and below 1 the error is
 * taken against 1.  A dw sums up to N*H*W = 168 products of size up to 1,
 * but by way of dU, whose 81 points weigh the inputs by B^T's entries (up
 * to 7.2, squared) before G^T dU G (entries down to 1/162) cancels them
 * again: F(7x7, 3x3) leaves up to 6.7e-5 here and 1.05e-4 for beta below
 * (F(4x4, 3x3): 1.2e-5), on some of main()'s draws (each pass draws its
 * own inputs).  A group's E lost or added twice is off by the size of a
 * dw, 0.05 to 10. */
static void check_bwd_pairs(const Bwd *b, float *dw2, float *db2)
{
    int c2[16], n2 = 0;
    float *dx2 = fvec(b->nx);
    Worst e = {.floor = 1.0};
    char what[96];

    for (int n = 0; n < b->N; n += 2)
        c2[n2++] = n;
    c2[n2++] = b->N;
    for (size_t i = 0; i < b->nx; i++)
        dx2[i] = NAN;
    conv_bwd_tiles(dx2, dw2, db2, b->R, b->x, b->w, c2, n2, b->N < 2 ? b->N : 2, b->C, b->OC,
                   b->N, b->H, b->W);
    for (size_t i = 0; i < b->nx; i++)
        worst_add(&e, (long)i, dx2[i], b->dx[i]);
    for (size_t i = 0; i < b->nw; i++)
        worst_add(&e, (long)(b->nx + i), dw2[i], b->dw[i]);
    for (int i = 0; i < b->OC; i++)
        worst_add(&e, (long)(b->nx + b->nw + i), db2[i], b->db[i]);
    snprintf(what, sizeof what, "conv groups of 2 = uneven groups C%d OC%d N%d %dx%d", b->C,
             b->OC, b->N, b->H, b->W);
    CHECK_WORST(&e, 1e-3, what);
    free(dx2);
}

/* beta: the whole batch as one group with beta 0 over garbage (NaN in E
 * and db: any leak shows) matches the grouped sum (rel 1e-3: the two sum
 * in different orders and some dw cancel, check_bwd_pairs); again with
 * beta 1 on top gives twice the first (rel 1e-6: only the final additions
 * round). */
static void check_bwd_beta(const Bwd *b, float *dw2, float *db2)
{
    WConv wc = wconv_make(b->w, b->C, b->OC, b->N, b->H, b->W);
    float *dw1 = fvec(b->nw), *db1 = fvec(b->OC);
    Worst e2 = {0}, e1 = {.floor = 1.0}; /* near-zero dw as above */

    for (int i = 0; i < b->OC; i++)
        db2[i] = NAN;
    wconv_backward(&wc, NULL, dw2, db2, b->R, b->x, b->N, 0, b->N, 0.0f);
    memcpy(dw1, dw2, b->nw * sizeof *dw1);
    memcpy(db1, db2, (size_t)b->OC * sizeof *db1);
    for (size_t i = 0; i < b->nw; i++)
        worst_add(&e1, (long)i, dw2[i], b->dw[i]);
    for (int i = 0; i < b->OC; i++)
        worst_add(&e1, (long)(b->nw + i), db2[i], b->db[i]);
    wconv_backward(&wc, NULL, dw2, db2, b->R, b->x, b->N, 0, b->N, 1.0f);
    for (size_t i = 0; i < b->nw; i++)
        worst_add(&e2, (long)i, dw2[i], 2.0 * dw1[i]);
    for (int i = 0; i < b->OC; i++)
        worst_add(&e2, (long)(b->nw + i), db2[i], 2.0 * db1[i]);
    CHECK_WORST(&e1, 1e-3, "conv beta=0 overwrites (one group = groups)");
    CHECK_WORST(&e2, 1e-6, "conv beta=1 accumulates (2x)");
    wconv_free(&wc);
    free(dw1);
    free(db1);
}

/* A middle group's dx alone: the other images keep their contents, and
 * its own are those of the grouped pass (the same computation). */
static void check_bwd_middle(const Bwd *b, float *dw2, float *db2)
{
    const int HW = b->H * b->W, n0 = 1, nt = b->N - 2;
    WConv wc = wconv_make(b->w, b->C, b->OC, b->N, b->H, b->W);
    float *dx1 = fvec(b->nx);
    long outside = 0;
    Worst e = {0};

    for (size_t i = 0; i < b->nx; i++)
        dx1[i] = 999.0f;
    wconv_backward(&wc, dx1, dw2, db2, b->R, b->x, b->N, n0, nt, 0.0f);
    for (int c = 0; c < b->C; c++)
        for (int n = 0; n < b->N; n++)
            for (int q = 0; q < HW; q++) {
                size_t i = ((size_t)c * b->N + n) * HW + q;
                if (n < n0 || n >= n0 + nt)
                    outside += dx1[i] != 999.0f;
                else
                    worst_add(&e, (long)i, dx1[i], b->dx[i]);
            }
    CHECK_INT(outside, ==, 0);
    CHECK(e.worst == 0.0);
    wconv_free(&wc);
    free(dx1);
}

/*
 * Backward on a small shape: against central differences over uneven
 * groups; dx = NULL gives the same dw, db bit for bit; other group cuts,
 * beta, and a tile's dx leaving other images alone.
 */
static void test_backward_fd(int C, int OC, int N, int H, int W)
{
    Bwd b = bwd_make(C, OC, N, H, W);
    float *dw2 = fvec(b.nw), *db2 = fvec(OC);
    int cuts[4] = {0, 1, N > 2 ? N - 1 : N, N};
    int ncut = N > 2 ? 4 : 3;

    for (size_t i = 0; i < b.nx; i++)
        b.dx[i] = NAN; /* every tile's dx must be written */
    conv_bwd_tiles(b.dx, b.dw, b.db, b.R, b.x, b.w, cuts, ncut, N, C, OC, N, H, W);
    check_bwd_fd(&b);

    conv_bwd_tiles(NULL, dw2, db2, b.R, b.x, b.w, cuts, ncut, N, C, OC, N, H, W);
    CHECK(memcmp(b.dw, dw2, b.nw * sizeof *dw2) == 0);
    CHECK(memcmp(b.db, db2, (size_t)OC * sizeof *db2) == 0);

    check_bwd_pairs(&b, dw2, db2);
    check_bwd_beta(&b, dw2, db2);
    if (N > 2)
        check_bwd_middle(&b, dw2, db2);
    free(dw2);
    free(db2);
    bwd_free(&b);
}

/*
 * Backward on the model's shapes against the direct double backward:
 * |fast - ref| <= WINO_TOL * sum |terms| per element, over the groups of
 * images [0,1), [1,N), for a shape of groups of up to cap images.
 */
static void test_backward_big_cap(int C, int OC, int N, int H, int W, int cap)
{
    const int HW = H * W, CKK = C * K * K;
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
    conv_bwd_tiles(dx, dw, db, R, x, w, cuts, N > 1 ? 3 : 2, cap, C, OC, N, H, W);
    conv_bwd_ref(rdx, rdxm, rdw, rdwm, rdb, Rd, xd, wd, C, OC, N, H, W, K);
    for (size_t i = 0; i < nx; i++)
        wx = maxerr(wx, fabs(dx[i] - rdx[i]) / (rdxm[i] + 1e-30));
    for (size_t i = 0; i < nw; i++)
        ww = maxerr(ww, fabs(dw[i] - rdw[i]) / (rdwm[i] + 1e-30));
    for (int i = 0; i < OC; i++)
        wb = maxerr(wb, fabs(db[i] - rdb[i]) / (fabs(rdb[i]) + N * HW * 1e-3));
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  conv bwd C%d OC%d N%d %dx%d: dx %.3g dw %.3g db %.3g\n", C, OC,
                N, H, W, wx, ww, wb);
    CHECK(wx <= WINO_TOL);
    CHECK(ww <= WINO_TOL);
    CHECK(wb <= WINO_TOL);
    free(x); free(w); free(R); free(dx); free(dw); free(db);
    free(xd); free(wd); free(Rd); free(rdx); free(rdxm); free(rdw); free(rdwm); free(rdb);
}

/* As test_backward_big_cap, for groups of up to N images. */
static void test_backward_big(int C, int OC, int N, int H, int W)
{
    test_backward_big_cap(C, OC, N, H, W, N);
}

/* Odd and even sizes (edge tiles half outside), one-row and one-column
 * images, wide rows (10 and 18 tiles across), and the model's blocks 2
 * and 3. */
static void test_all(void)
{
    test_forward(3, 5, 4, 7, 6, 1, 2);
    test_forward(2, 3, 3, 5, 4, 2, 1);
    test_forward(4, 2, 2, 3, 3, 0, 1);
    test_forward(2, 3, 3, 1, 5, 1, 1);
    test_forward(3, 2, 3, 6, 1, 0, 2);
    test_forward(2, 3, 2, 9, 37, 0, 2);
    test_forward(2, 2, 2, 3, 70, 1, 1);
    test_forward(32, 64, 3, 14, 14, 1, 1);
    test_forward(64, 128, 3, 7, 7, 0, 2);
    test_forward(20, 18, 3, 6, 5, 1, 2); /* a partial second block of 16 channels */

    test_backward_fd(3, 5, 4, 7, 6);
    test_backward_fd(2, 3, 3, 5, 4);
    test_backward_fd(4, 2, 2, 3, 3);
    test_backward_fd(2, 3, 3, 1, 5);
    test_backward_fd(3, 2, 3, 6, 1);
    test_backward_fd(2, 2, 1, 5, 37);
    test_backward_big(2, 3, 2, 9, 70);
    test_backward_fd(2, 3, 5, 6, 4); /* even sizes, groups of 2 fill their shape */
    test_backward_big(32, 64, 2, 14, 14);
    test_backward_big(64, 128, 2, 7, 7);
    test_backward_big(20, 18, 3, 6, 5);
    /* the model's blocks with CNNTOP_GROUP_KB=1: one image a group, its shape too */
    test_backward_big_cap(32, 64, 2, 14, 14, 1);
    test_backward_big_cap(64, 128, 2, 7, 7, 1);
}

int main(void)
{
    GemmPath paths[3];
    int npaths;

    gemm_init(); /* one OpenBLAS thread, as in training */
    /* Every path's name fits where records keep it (a longer name was
     * once cut to "openblas, forward nativ"). */
    for (int p = GEMM_PATH_OPENBLAS; p <= GEMM_PATH_AVX512; p++)
        CHECK_INT((long)strlen(gemm_path_name((GemmPath)p)), <, CN_GEMM_PATH_LEN);
    nntest_gemm_paths(paths, &npaths);
    for (int i = 0; i < npaths; i++)
        for (int l = WINO_ROWS; l <= WINO_LAST; l++) {
            path = paths[i];
            layout = (WinoLayout)l;
            printf("test_wino: GEMMs on %s, x %s\n", gemm_path_name(path),
                   l == WINO_ROWS ? "in channel rows" : "channels-last");
            test_all();
        }
    return check_report();
}
