/*
 * test_bn.c: BatchNorm fused with ReLU and max-pool (layer_bn.h,
 * layer_maxpool.h), as the engine runs it: the training forward against a
 * plain unfused double reference, chunk splits, the backward against
 * central differences (through the engine in float and through the
 * reference in double), running statistics, evaluation, and the one-pass
 * variance on an offset mean.  Ties of the pool alone: test_maxpool.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "nn/layer_bn.h"
#include "nn/layer_maxpool.h"
#include "nntest.h"

/* One shape of y (C, N, H, W) and its pooled output (C, N, H/2, W/2). */
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

/* maxpool_forward over images [n0, n0+nt) of y, the results in channel
 * rows as the reference keeps them (idx, ymax NULL in evaluation); yl, ol,
 * il, ml: channels-last scratch of y's, out's, idx's and ymax's size. */
static void pool_fwd(float *out, uint8_t *idx, float *ymax, const float *yl, float *ol,
                     uint8_t *il, float *ml, const float *scale, const float *shift, int n0,
                     int nt, const Bnp *s)
{
    maxpool_forward(ol, idx ? il : NULL, idx ? ml : NULL, yl, scale, shift, s->C, s->H, s->W, n0,
                    nt);
    relayout(out, ol, sizeof *out, s->C, s->N, s->PHW, 0);
    if (idx) {
        relayout(idx, il, 1, s->C, s->N, s->PHW, 0);
        relayout(ymax, ml, sizeof *ymax, s->C, s->N, s->PHW, 0);
    }
}

/* acc (C, 2) += {sum, sum of squares} of the n positions of y (n, C),
 * channels-last, in double: the partial sums wino_forward makes as its
 * outputs come (layer_wino.h; tests/nn/test_wino.c checks them). */
static void stats_partial(double *acc, const float *y, int C, long n)
{
    for (long p = 0; p < n; p++)
        for (int c = 0; c < C; c++) {
            const double v = y[p * C + c];
            acc[2 * c] += v;
            acc[2 * c + 1] += v * v;
        }
}

/* The engine's training forward: statistics over the chunks cuts[k] ..
 * cuts[k+1] (each chunk's partial sums made two images at a time, as the
 * engine's groups make them), finish, affine, then maxpool_forward chunk
 * by chunk, channels-last; out, idx, ymax come back in channel rows.
 * run_mean/run_var may be NULL. */
static void bnp_fwd(float *out, uint8_t *idx, float *ymax, float *mean, float *invstd, float *rmean,
                    float *rvar, const float *y, const float *gamma, const float *beta,
                    const int *cuts, int nparts, const Bnp *s)
{
    double *part = dvec((size_t)nparts * s->C * 2);
    float *scale = fvec(s->C), *shift = fvec(s->C);
    float *yl = fvec(s->ny), *ol = fvec(s->no), *ml = fvec(s->no);
    uint8_t *il = xcalloc(s->no, 1);

    relayout(yl, y, sizeof *y, s->C, s->N, s->HW, 1);
    for (int k = 0; k < nparts; k++)
        for (int t = cuts[k]; t < cuts[k + 1]; t += 2) {
            int nt = cuts[k + 1] - t < 2 ? cuts[k + 1] - t : 2;
            stats_partial(part + (size_t)k * s->C * 2, yl + (size_t)t * s->HW * s->C, s->C,
                          (long)nt * s->HW);
        }
    bn_stats_finish(mean, invstd, rmean, rvar, part, nparts, s->C, s->M);
    bn_affine(scale, shift, gamma, beta, mean, invstd, s->C);
    for (int k = 0; k < nparts; k++)
        pool_fwd(out, idx, ymax, yl, ol, il, ml, scale, shift, cuts[k], cuts[k + 1] - cuts[k], s);
    free(part);
    free(scale);
    free(shift);
    free(yl);
    free(ol);
    free(ml);
    free(il);
}

/* The engine's backward: the BN sums per chunk, by maxpool_backward_sums
 * channels-last or, with rows set, by block 1's maxpool_backward_sums_rows
 * on channel rows; bn_backward_finish (dgamma, dbeta overwritten), then
 * maxpool_backward in place, channels-last, tile by tile (tiles of `tile`
 * images) over a copy of y, which becomes dy, returned in channel rows
 * (C, N, HW). */
static void bnp_bwd(float *dy, float *dgamma, float *dbeta, const float *dout,
                    const uint8_t *idx, const float *ymax, const float *y, const float *gamma,
                    const float *mean, const float *invstd, const int *cuts, int nparts,
                    int tile, int rows, const Bnp *s)
{
    double *part = dvec((size_t)nparts * s->C * 2);
    float *mdz = fvec(s->C), *mdzx = fvec(s->C);
    float *dl = fvec(s->ny), *gl = fvec(s->no), *ml = fvec(s->no);
    uint8_t *il = xcalloc(s->no, 1);

    relayout(gl, dout, sizeof *dout, s->C, s->N, s->PHW, 1);
    relayout(il, idx, 1, s->C, s->N, s->PHW, 1);
    relayout(ml, ymax, sizeof *ymax, s->C, s->N, s->PHW, 1);
    for (int k = 0; k < nparts; k++) {
        double *acc = part + (size_t)k * s->C * 2;
        if (rows)
            maxpool_backward_sums_rows(acc, dout, idx, ymax, mean, invstd, s->C, s->N, s->PHW,
                                       cuts[k], cuts[k + 1] - cuts[k]);
        else
            maxpool_backward_sums(acc, gl, il, ml, mean, invstd, s->C, s->PHW, cuts[k],
                                  cuts[k + 1] - cuts[k]);
    }
    bn_backward_finish(dgamma, dbeta, mdz, mdzx, part, nparts, s->C, s->M);
    relayout(dl, y, sizeof *y, s->C, s->N, s->HW, 1);
    for (int n0 = 0; n0 < s->N; n0 += tile) {
        int nt = s->N - n0 < tile ? s->N - n0 : tile;
        maxpool_backward(dl, gl, il, gamma, mean, invstd, mdz, mdzx, s->C, s->H, s->W, n0, nt);
    }
    relayout(dy, dl, sizeof *dy, s->C, s->N, s->HW, 0);
    free(part);
    free(mdz);
    free(mdzx);
    free(dl);
    free(gl);
    free(ml);
    free(il);
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

/* The mean and biased variance of n values, two-pass in double. */
static void moments(const double *y, long n, double *mu, double *var)
{
    double m = 0.0, v = 0.0;
    for (long i = 0; i < n; i++)
        m += y[i];
    m /= (double)n;
    for (long i = 0; i < n; i++)
        v += (y[i] - m) * (y[i] - m);
    *mu = m;
    *var = v / (double)n;
}

/* One shape's inputs, its training forward over one chunk, its backward,
 * and the double copies of the inputs. */
typedef struct Case {
    Bnp s;
    float *y, *gamma, *beta, *R, *out, *mean, *invstd, *rm, *rv, *rm0, *rv0, *ym;
    float *dy, *dgamma, *dbeta;
    uint8_t *idx;
    double *yd, *gd, *bd, *Rd, *oref;
    int *pat;                        /* the reference's pool pattern */
    /* scratch of the splits and the finite differences */
    float *out2, *mean2, *invstd2, *ym2;
    uint8_t *idx2;
    int *pat2;
} Case;

static Case case_make(int C, int N, int H, int W)
{
    Case k = {.s = bnp_shape(C, N, H, W)};
    const Bnp *s = &k.s;
    float **fv[] = {&k.gamma, &k.beta, &k.mean, &k.invstd, &k.rm, &k.rv, &k.rm0, &k.rv0,
                    &k.dgamma, &k.dbeta, &k.mean2, &k.invstd2};
    for (size_t i = 0; i < sizeof fv / sizeof *fv; i++)
        *fv[i] = fvec(C);
    k.y = fvec(s->ny);
    k.dy = fvec(s->ny);
    k.R = fvec(s->no);
    k.out = fvec(s->no);
    k.out2 = fvec(s->no);
    k.ym = fvec(s->no);
    k.ym2 = fvec(s->no);
    k.idx = xcalloc(s->no, 1);
    k.idx2 = xcalloc(s->no, 1);
    k.yd = dvec(s->ny);
    k.gd = dvec(C);
    k.bd = dvec(C);
    k.Rd = dvec(s->no);
    k.oref = dvec(s->no);
    k.pat = xcalloc(s->no, sizeof(int));
    k.pat2 = xcalloc(s->no, sizeof(int));
    bnp_inputs(k.y, k.gamma, k.beta, s);
    fill(k.R, s->no, -1.0f, 1.0f);
    to_double(k.yd, k.y, s->ny);
    to_double(k.gd, k.gamma, C);
    to_double(k.bd, k.beta, C);
    to_double(k.Rd, k.R, s->no);
    return k;
}

static void case_free(Case *k)
{
    free(k->y); free(k->gamma); free(k->beta); free(k->R); free(k->out); free(k->mean);
    free(k->invstd); free(k->rm); free(k->rv); free(k->rm0); free(k->rv0); free(k->ym);
    free(k->dy); free(k->dgamma); free(k->dbeta); free(k->idx); free(k->yd); free(k->gd);
    free(k->bd); free(k->Rd); free(k->oref); free(k->pat); free(k->out2); free(k->mean2);
    free(k->invstd2); free(k->ym2); free(k->idx2); free(k->pat2);
}

/* Pool windows whose index the engine chose otherwise than the reference,
 * among those whose top two candidates differ by more than 1e-4 (else the
 * order is float noise); *compared counts those. */
static long idx_mismatches(const Case *k, long *compared)
{
    const Bnp *s = &k->s;
    long bad = 0;

    for (int c = 0; c < s->C; c++) {
        double mu, var;
        moments(k->yd + (size_t)c * s->M, s->M, &mu, &var);
        for (int n = 0; n < s->N; n++)
            for (int p = 0; p < s->PHW; p++) {
                int ph = p / s->PW, pw = p % s->PW;
                double top = -1.0, second = -1.0;
                for (int j = 0; j < 4; j++) {
                    int q = (2 * ph + j / 2) * s->W + 2 * pw + j % 2;
                    double z = k->gd[c] * (k->yd[((size_t)c * s->N + n) * s->HW + q] - mu) /
                                   sqrt(var + (double)BN_EPS) + k->bd[c];
                    double r = z > 0.0 ? z : 0.0;
                    if (r > top) {
                        second = top;
                        top = r;
                    } else if (r > second) {
                        second = r;
                    }
                }
                size_t o = ((size_t)c * s->N + n) * s->PHW + p;
                if (top - second > 1e-4 || top == 0.0) {
                    (*compared)++;
                    bad += k->idx[o] != k->pat[o];
                }
            }
    }
    return bad;
}

/* (a) The forward, one chunk, against the reference: |out - ref| <= 1e-5
 * * (1 + |ref|) (float affine); the pool's choices. */
static void check_forward(Case *k, const int *one)
{
    const Bnp *s = &k->s;
    double worst = 0.0;
    long compared = 0;
    char what[96];

    fill(k->rm0, s->C, -0.5f, 0.5f);
    fill(k->rv0, s->C, 0.5f, 2.0f);
    memcpy(k->rm, k->rm0, s->C * sizeof *k->rm);
    memcpy(k->rv, k->rv0, s->C * sizeof *k->rv);
    bnp_fwd(k->out, k->idx, k->ym, k->mean, k->invstd, k->rm, k->rv, k->y, k->gamma, k->beta,
            one, 1, s);
    bnp_ref(k->oref, k->pat, k->yd, k->gd, k->bd, NULL, NULL, NULL, s);
    for (size_t o = 0; o < s->no; o++)
        worst = maxerr(worst, fabs(k->out[o] - k->oref[o]) / (1.0 + fabs(k->oref[o])));
    snprintf(what, sizeof what, "bn+pool fwd C%d N%d %dx%d: out", s->C, s->N, s->H, s->W);
    CHECK_MAXERR(worst, 1e-5, what);
    CHECK_INT(idx_mismatches(k, &compared), ==, 0);
    CHECK(compared > (long)s->no / 2);
}

/* The statistics against the reference (two-pass double), and (c) the
 * running statistics: momentum 0.1, unbiased variance. */
static void check_stats(const Case *k)
{
    const Bnp *s = &k->s;
    const int C = s->C;
    Worst em = {0}, ei = {0};
    char what[96];

    for (int c = 0; c < C; c++) {
        double mu, var;
        moments(k->yd + (size_t)c * s->M, s->M, &mu, &var);
        worst_add(&em, c, k->mean[c], mu);
        worst_add(&ei, c, k->invstd[c], 1.0 / sqrt(var + (double)BN_EPS));
        worst_add(&em, C + c, k->rm[c], 0.9 * k->rm0[c] + 0.1 * mu);
        worst_add(&ei, C + c, k->rv[c],
                  0.9 * k->rv0[c] + 0.1 * var * (double)s->M / (double)(s->M - 1));
    }
    snprintf(what, sizeof what, "bn mean, run_mean C%d N%d %dx%d", C, s->N, s->H, s->W);
    CHECK_WORST(&em, 1e-6, what);
    snprintf(what, sizeof what, "bn invstd, run_var C%d N%d %dx%d", C, s->N, s->H, s->W);
    CHECK_WORST(&ei, 1e-6, what);
}

/* Chunk splits: the same statistics and output up to rounding.  The float
 * lanes of sums.h start at each chunk's first value, so a split regroups
 * which values share a float partial sum; the statistics then differ by a
 * few float ulps (measured 6.8e-7 relative), and an output near zero,
 * (y - mean) * invstd, carries that as an absolute error of about 1e-7
 * (measured 2.5e-6 relative at 0.012): allow 1e-5. */
static void check_splits(Case *k)
{
    const Bnp *s = &k->s;
    const int C = s->C, N = s->N;
    int splits[3][6] = {{0, 1, N}, {0, N / 2, N / 2 + 1, N}, {0, 1, 2, 3, N - 1, N}};
    int nparts[3] = {2, 3, 5};
    char what[96];

    for (int p = 0; p < 3; p++) {
        if (splits[p][nparts[p]] != N || (p == 2 && N < 5))
            continue;
        Worst e = {0};
        bnp_fwd(k->out2, k->idx2, k->ym2, k->mean2, k->invstd2, NULL, NULL, k->y, k->gamma,
                k->beta, splits[p], nparts[p], s);
        for (int c = 0; c < C; c++) {
            worst_add(&e, c, k->mean2[c], k->mean[c]);
            worst_add(&e, C + c, k->invstd2[c], k->invstd[c]);
        }
        for (size_t o = 0; o < s->no; o++)
            worst_add(&e, (long)(2 * C + o), k->out2[o], k->out[o]);
        snprintf(what, sizeof what, "bn+pool %d chunks = 1 chunk C%d N%d %dx%d", nparts[p], C,
                 N, s->H, s->W);
        CHECK_WORST(&e, 1e-5, what);
    }
}

/* (b) The backward over one chunk in tiles of 3, into k->dy, dgamma,
 * dbeta (which it overwrites); other chunkings and tile sizes agree, and
 * so do block 1's sums on channel rows. */
static void check_backward(Case *k, const int *one)
{
    const Bnp *s = &k->s;
    const int C = s->C, N = s->N;
    float *dy2 = fvec(s->ny), *dg2 = fvec(C), *db2 = fvec(C);
    int two[3] = {0, N / 2, N};
    char what[96];

    for (int c = 0; c < C; c++) {
        k->dgamma[c] = 1234.5f; /* bn_backward_finish overwrites */
        k->dbeta[c] = -4321.0f;
    }
    bnp_bwd(k->dy, k->dgamma, k->dbeta, k->R, k->idx, k->ym, k->y, k->gamma, k->mean,
            k->invstd, one, 1, 3, 0, s);
    for (int rows = 0; rows < 2; rows++) {
        /* dy away from the maxima is the mean terms alone, a - bx*xhat,
         * about 1e-4 and cancelling: the sums' order moves mdz and mdzx
         * by float rounding, which leaves up to 1.5e-8 there (measured);
         * below 1e-2 the error is taken against 1e-2, 1e-2 of the routed
         * gradient. */
        Worst e = {.floor = 1e-2};
        bnp_bwd(dy2, dg2, db2, k->R, k->idx, k->ym, k->y, k->gamma, k->mean, k->invstd,
                rows ? one : two, rows ? 1 : 2, 1, rows, s);
        for (size_t i = 0; i < s->ny; i++)
            worst_add(&e, (long)i, dy2[i], k->dy[i]);
        for (int c = 0; c < C; c++) {
            worst_add(&e, (long)s->ny + c, dg2[c], k->dgamma[c]);
            worst_add(&e, (long)s->ny + C + c, db2[c], k->dbeta[c]);
        }
        snprintf(what, sizeof what, "bn+pool bwd %s = 1 chunk C%d N%d %dx%d",
                 rows ? "sums on rows" : "2 chunks", C, N, s->H, s->W);
        CHECK_WORST(&e, 1e-5, what);
    }
    free(dy2);
    free(dg2);
    free(db2);
}

/* The engine's float forward as a loss: L = sum(out * R) in double. */
static double loss_float(void *ctx)
{
    Case *k = ctx;
    int one[2] = {0, k->s.N};

    bnp_fwd(k->out2, k->idx2, k->ym2, k->mean2, k->invstd2, NULL, NULL, k->y, k->gamma,
            k->beta, one, 1, &k->s);
    return dsumprod(k->out2, k->R, k->s.no);
}

/* The kink rule: the pool index pattern (which candidate wins each window,
 * or MAXPOOL_NOGRAD when the ReLU clipped the maximum) differs from the one
 * at the base point, so the step crossed a ReLU kink or a pool tie
 * somewhere in the channel, where L is not differentiable. */
static int kink_float(void *ctx)
{
    const Case *k = ctx;
    return memcmp(k->idx, k->idx2, k->s.no) != 0;
}

/* The reference as a loss, in double, and the same kink rule on its
 * pattern. */
static double loss_double(void *ctx)
{
    Case *k = ctx;
    return bnp_ref(NULL, k->pat2, k->yd, k->gd, k->bd, NULL, NULL, k->Rd, &k->s);
}

static int kink_double(void *ctx)
{
    const Case *k = ctx;
    return memcmp(k->pat, k->pat2, k->s.no * sizeof *k->pat) != 0;
}

/*
 * Finite differences through the engine's float forward.
 *
 * Float limits this check: moving one y moves the channel's mean and
 * variance by ~eps/M, so the ~N*PH*PW outputs of the channel change by a
 * few ulps each, and the rounding of L is ~4e-7 / eps in the quotient.
 * Non-pooled positions have true gradients of only 1e-5..1e-3 (the BN
 * mean terms), which eps = 1e-3 cannot resolve (errors up to 4e-4 seen).
 * So: eps = 1e-2 (errors seen <= 6e-5), rel with a floor of 2e-2, i.e.
 * |a - b| / max(2e-2, |a| + |b|) < 1e-2 (absolute 2e-4 for the small
 * gradients, 1% for the pooled ones, ~1).  The double check below
 * resolves the small gradients tightly.
 */
static void check_fd_float(Case *k)
{
    const Bnp *s = &k->s;
    const GradCheck gc = {.loss = loss_float, .kink = kink_float, .ctx = k, .eps = 1e-2f,
                          .floor = 2e-2};
    const GradInput in[3] = {{.f = k->y, .n = s->ny, .grad = k->dy},
                             {.f = k->gamma, .n = (size_t)s->C, .grad = k->dgamma},
                             {.f = k->beta, .n = (size_t)s->C, .grad = k->dbeta}};
    static const char *const names[3] = {"dy    ", "dgamma", "dbeta "};
    long skipped = 0, compared[3];
    char what[96];

    for (int a = 0; a < 3; a++) {
        Worst w = gradcheck_run(&gc, &in[a], &skipped);
        snprintf(what, sizeof what, "bn+pool %s vs float FD C%d N%d %dx%d", names[a], s->C,
                 s->N, s->H, s->W);
        CHECK_WORST(&w, 1e-2, what);
        compared[a] = w.n;
    }
    /* the rule may not skip most of the test */
    CHECK(skipped < (long)(s->ny + 2 * s->C) / 4);
    CHECK(compared[0] > 0 && compared[1] > 0 && compared[2] > 0);
}

/* The same in double through the reference (eps = 1e-4 in double, the
 * same kink rule on the reference's pattern): a tighter check of the float
 * kernels, rel < 2e-4. */
static void check_fd_double(Case *k)
{
    const Bnp *s = &k->s;
    const GradCheck gc = {.loss = loss_double, .kink = kink_double, .ctx = k, .eps = 1e-4};
    const GradInput in[3] = {{.d = k->yd, .n = s->ny, .grad = k->dy},
                             {.d = k->gd, .n = (size_t)s->C, .grad = k->dgamma},
                             {.d = k->bd, .n = (size_t)s->C, .grad = k->dbeta}};
    static const char *const names[3] = {"dy    ", "dgamma", "dbeta "};
    char what[96];

    for (int a = 0; a < 3; a++) {
        snprintf(what, sizeof what, "bn+pool %s vs double FD C%d N%d %dx%d", names[a], s->C,
                 s->N, s->H, s->W);
        CHECK_GRAD(&gc, &in[a], NULL, 2e-4, what);
    }
}

/*
 * (d) Evaluation: bn_stats_running gives mean = run_mean (exactly) and
 * invstd = 1/sqrt(run_var + 1e-5) (rel 1e-6); maxpool_forward with
 * idx = NULL normalises with them (reference with the running mean and
 * variance, 1e-5 * (1 + |ref|)) and writes the same values as with idx.
 */
static void check_eval(Case *k)
{
    const Bnp *s = &k->s;
    const int C = s->C;
    double *em = dvec(C), *ev = dvec(C), worst = 0.0;
    float *scale = fvec(C), *shift = fvec(C);
    float *yl = fvec(s->ny), *ol = fvec(s->no), *ml = fvec(s->no);
    uint8_t *il = xcalloc(s->no, 1);
    Worst ei = {0};
    long meq = 0;

    bn_stats_running(k->mean2, k->invstd2, k->rm, k->rv, C);
    for (int c = 0; c < C; c++) {
        meq += k->mean2[c] == k->rm[c];
        worst_add(&ei, c, k->invstd2[c], 1.0 / sqrt((double)k->rv[c] + 1e-5));
        em[c] = k->rm[c];
        ev[c] = k->rv[c];
    }
    CHECK_INT(meq, ==, C);
    CHECK_WORST(&ei, 1e-6, "bn_stats_running invstd");
    bn_affine(scale, shift, k->gamma, k->beta, k->mean2, k->invstd2, C);
    for (size_t o = 0; o < s->no; o++)
        k->out[o] = NAN;
    relayout(yl, k->y, sizeof *yl, C, s->N, s->HW, 1);
    pool_fwd(k->out, NULL, NULL, yl, ol, il, ml, scale, shift, 0, s->N, s);
    bnp_ref(k->oref, NULL, k->yd, k->gd, k->bd, em, ev, NULL, s);
    for (size_t o = 0; o < s->no; o++)
        worst = maxerr(worst, fabs(k->out[o] - k->oref[o]) / (1.0 + fabs(k->oref[o])));
    CHECK(worst <= 1e-5);
    pool_fwd(k->out2, k->idx2, k->ym2, yl, ol, il, ml, scale, shift, 0, s->N, s);
    CHECK(memcmp(k->out, k->out2, s->no * sizeof *k->out) == 0);
    free(em); free(ev); free(scale); free(shift); free(yl); free(ol); free(ml); free(il);
}

/* One shape, every check in order: each uses what the one before left. */
static void test_bnp_case(int C, int N, int H, int W)
{
    Case k = case_make(C, N, H, W);
    int one[2] = {0, N};

    check_forward(&k, one);
    check_stats(&k);
    check_splits(&k);
    check_backward(&k, one);
    check_fd_float(&k);
    check_fd_double(&k);
    check_eval(&k);
    case_free(&k);
}

/* The one-pass variance (E[y^2] - mean^2 from float per-image sums) on
 * the first block's shape with an offset mean: how far invstd is from the
 * two-pass value.  |mean| / std = 4 is well beyond what the conv outputs
 * of this model show; tolerance rel 1e-4. */
static void test_bn_offset(void)
{
    const Bnp sh = bnp_shape(4, 16, 28, 28), *s = &sh;
    float *y = fvec(s->ny), *mean = fvec(s->C), *invstd = fvec(s->C);
    double *part = dvec((size_t)s->C * 2), *yd = dvec(s->ny);
    Worst e = {0};

    for (int c = 0; c < s->C; c++)
        for (long i = 0; i < s->M; i++)
            y[(size_t)c * s->M + i] = (float)(c + 1) + 1.7320508f * urand(-1.0f, 1.0f);
    float *yl = fvec(s->ny);
    relayout(yl, y, sizeof *y, s->C, s->N, s->HW, 1);
    stats_partial(part, yl, s->C, s->M);
    free(yl);
    bn_stats_finish(mean, invstd, NULL, NULL, part, 1, s->C, s->M);
    to_double(yd, y, s->ny);
    for (int c = 0; c < s->C; c++) {
        double mu, var;
        moments(yd + (size_t)c * s->M, s->M, &mu, &var);
        worst_add(&e, c, invstd[c], 1.0 / sqrt(var + (double)BN_EPS));
    }
    CHECK_WORST(&e, 1e-4, "bn invstd, mean/std up to 4, 28x28 x 16");
    free(y);
    free(yd);
    free(mean);
    free(invstd);
    free(part);
}

int main(void)
{
    test_bnp_case(3, 4, 7, 7); /* odd: 7x7 -> 3x3, the last row/column dropped */
    test_bnp_case(2, 5, 6, 8); /* even */
    test_bnp_case(2, 3, 14, 14); /* block 2: even, the row-pair path of 7 windows */
    test_bnp_case(3, 6, 5, 4); /* odd rows, even columns */
    test_bn_offset();
    return check_report();
}
