/*
 * layer_conv_phase.c: 3x3 convolution of one channel in pool phases.
 *
 * Shape letters: H x W the image, PH = H/2, PW = W/2, Q = CONV_PHASE_Q.
 * The padded input xp (H+2, W+2) has xp[i][j] = x[i-1][j-1] inside and 0
 * on the border.  Input plane (e, f) holds xp[2r+e][2s+f] at r*Q + s for
 * r <= PH, s <= PW.  Output (2ph+di, 2pw+dj) reads xp[2ph+di+kh][2pw+dj+kw]
 * for tap (kh, kw); with u = di+kh, v = dj+kw that is input plane
 * (u&1, v&1) at (ph + u/2, pw + v/2): a constant offset from ph*Q + pw.
 * Where v/2 is 1 the tap reads a copy of the plane moved one column on
 * (planes 4-7), at (ph + u/2, pw): every tap's loads then start on a row,
 * which is one 64-byte line, where an offset of one float split each
 * 16-float load across two lines (bn1+relu+pool1 ran 10-15% slower so).
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "nn/layer_conv_phase.h"
#include "nn/sums.h"

static size_t plane_in(int H)
{
    return (size_t)(H / 2 + 1) * CONV_PHASE_Q;
}

size_t conv_phase_input_floats(int H, int W)
{
    (void)W;
    return 8 * plane_in(H);
}

size_t conv_phase_output_floats(int H, int W)
{
    (void)W;
    return 4 * (size_t)(H / 2) * CONV_PHASE_Q;
}

void conv_phase_split(float *xq, const float *x, int H, int W)
{
    const size_t P = plane_in(H);

    /* Even rows per phase: the sums take two rows (32 lanes) at a time. */
    assert(H % 4 == 0 && W % 2 == 0 && W / 2 + 1 <= CONV_PHASE_Q);
    memset(xq, 0, conv_phase_input_floats(H, W) * sizeof *xq);
    for (int i = 0; i < H; i++) {
        /* x[i][j] is xp[i+1][j+1]: row (i+1)/2 of the planes with e = (i+1)&1;
         * even j go to f = 1 at column j/2, odd j to f = 0 at (j+1)/2. */
        const int u = i + 1;
        const float *restrict xr = x + (size_t)i * W;
        float *restrict odd = xq + (size_t)(2 * (u & 1) + 1) * P + (size_t)(u >> 1) * CONV_PHASE_Q;
        float *restrict even = xq + (size_t)(2 * (u & 1)) * P + (size_t)(u >> 1) * CONV_PHASE_Q + 1;
        for (int s = 0; s < W / 2; s++) {
            odd[s] = xr[2 * s];
            even[s] = xr[2 * s + 1];
        }
    }
    /* The copies one column on: plane 4 + p at r*Q + s is plane p at
     * r*Q + s + 1 (the last float of the last row, junk, is 0). */
    for (int p = 0; p < 4; p++)
        memcpy(xq + (size_t)(4 + p) * P, xq + (size_t)p * P + 1, (P - 1) * sizeof *xq);
}

/* The nine sources of output phase k: tap t = 3*kh + kw. */
static void phase_sources(const float *src[9], const float *xq, int H, int k)
{
    const size_t P = plane_in(H);
    const int di = k >> 1, dj = k & 1;

    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++) {
            int u = di + kh, v = dj + kw;
            src[3 * kh + kw] = xq + (size_t)(4 * (v >> 1) + 2 * (u & 1) + (v & 1)) * P +
                               (size_t)(u >> 1) * CONV_PHASE_Q;
        }
}

/* Vectors of one register (sums.h's REG_FLOATS floats), loaded and
 * stored at any alignment. */
typedef float RegVec __attribute__((vector_size(4 * REG_FLOATS)));
typedef float RegVecAt __attribute__((vector_size(4 * REG_FLOATS), aligned(4), may_alias));
#define REGVEC_AT(p) (*(RegVecAt *)(p))
_Static_assert(CONV_PHASE_Q % REG_FLOATS == 0, "a phase row is whole vectors");

/*
 * One output phase of nc channels: z[c] = b[c] + sum over taps t of
 * w[9c + t] * s_t, n values, each channel's sum in the order one channel
 * alone would take.  One load of each source serves every channel: with
 * two channels a pass the 9 loads and the weights' broadcasts per 18
 * multiply-adds bound it at about 60 GFLOP/s a thread on the Xeon of
 * session 30; four ran it 1.25x as fast (bench/RESULTS.md, session 30).
 */
static void phase_taps(float *const z[], int nc, const float *const s[9], const float *w,
                       const float *b, int n)
{
    for (int q = 0; q < n; q += REG_FLOATS) {
        RegVec v[9];
        for (int t = 0; t < 9; t++)
            v[t] = REGVEC_AT(s[t] + q);
        for (int c = 0; c < nc; c++) {
            const float *wc = w + 9 * c;
            RegVec acc = b[c] + wc[0] * v[0];
            for (int t = 1; t < 9; t++)
                acc += wc[t] * v[t];
            REGVEC_AT(z[c] + q) = acc;
        }
    }
}

void conv_phase_conv(float *const z[], int nc, const float *xq, const float *w, const float *b,
                     int H, int W)
{
    const int n = (H / 2) * CONV_PHASE_Q;

    (void)W;
    assert(nc >= 1 && nc <= CONV_PHASE_CONV_CH);
    for (int k = 0; k < 4; k++) {
        const float *s[9];
        float *zk[CONV_PHASE_CONV_CH];
        phase_sources(s, xq, H, k);
        for (int c = 0; c < nc; c++)
            zk[c] = z[c] + (size_t)k * n;
        phase_taps(zk, nc, s, w, b, n);
    }
}

/*
 * conv_phase_dw_routed2 keeps its sums in registers, in vectors of the
 * CPU's width, DW_CH channels at a time:
 * with 32 vector registers (AVX-512) two channels' 20 sums fit and each
 * input load serves both; with 16 (AVX2, SSE) one channel's 10 do.  Two
 * channels of 16-float sums on AVX2 were 40 ymm registers: gcc kept them
 * on the stack, 1927 stack references for 144 FMAs, and conv1 bwd ran at 7
 * GFLOP/s (bench/RESULTS.md, session 22).  Lane by lane the sums add in
 * the same order whatever the width, so the results are the same bits.
 */
#define DW_LANES REG_FLOATS
#define DW_CH (REG_FLOATS == 16 ? 2 : 1) /* AVX-512's 32 registers hold two channels */

typedef RegVec DwVec;
typedef int32_t DwIdx __attribute__((vector_size(4 * DW_LANES)));
#define DWVEC_AT(p) REGVEC_AT(p)

/*
 * The sums below keep one float partial sum per column (lane l adds
 * column l of every row), which vectorises under strict float semantics
 * (see sums.h), and add only the valid columns l < PW at the end.  Rows
 * go two at a time: lanes l and l + Q are two SumVecs.
 */
_Static_assert(CONV_PHASE_Q == SUMVEC_LANES, "a phase row is one SumVec");

/* The valid columns of lanes a: l and l + Q for l < PW. */
static float phase_lanes(const float *a, int PW)
{
    float sum = 0.0f;

    for (int l = 0; l < PW; l++)
        sum += a[l] + a[l + CONV_PHASE_Q];
    return sum;
}

void conv_phase_dw_fold(float *dw, float *db, const float *lanes, int W)
{
    const int PW = W / 2;

    for (int t = 0; t < 9; t++)
        dw[t] += phase_lanes(lanes + t * 2 * CONV_PHASE_Q, PW);
    *db += phase_lanes(lanes + 9 * 2 * CONV_PHASE_Q, PW);
}

/* Input plane and row offset of tap t of output phase k (phase_sources). */
static inline int tap_plane(int k, int t)
{
    const int u = (k >> 1) + t / 3, v = (k & 1) + t % 3;
    return 4 * (v >> 1) + 2 * (u & 1) + (v & 1);
}

static inline int tap_row(int k, int t)
{
    return ((k >> 1) + t / 3) >> 1;
}

void conv_phase_dw_routed2(float *la, float *lb, const float *ga, const float *gb,
                           const float *ka, const float *kb, const float *xq, int H, int W)
{
    const size_t P = plane_in(H);
    float *const lane[2] = {la, lb};
    const float *const gs[2] = {ga, gb}, *const ks[2] = {ka, kb};

    (void)W;
    for (int e0 = 0; e0 < 2; e0 += DW_CH)
        for (int h = 0; h < CONV_PHASE_Q; h += DW_LANES) {
            DwVec a[DW_CH][10];
            for (int c = 0; c < DW_CH; c++)
                for (int t = 0; t < 10; t++)
                    a[c][t] = DWVEC_AT(lane[e0 + c] + t * 2 * CONV_PHASE_Q + h);
            for (int r = 0; r < H / 2; r++) {
                DwVec g[DW_CH], kf[DW_CH];
                for (int c = 0; c < DW_CH; c++) {
                    g[c] = DWVEC_AT(gs[e0 + c] + r * CONV_PHASE_Q + h);
                    kf[c] = DWVEC_AT(ks[e0 + c] + r * CONV_PHASE_Q + h);
                    a[c][9] += (DwVec)((DwIdx)g[c] & (kf[c] < 4.0f));
                }
#pragma GCC unroll 4
                for (int k = 0; k < 4; k++) {
                    DwVec d[DW_CH]; /* g where the window's maximum is phase k, else 0 */
                    for (int c = 0; c < DW_CH; c++)
                        d[c] = (DwVec)((DwIdx)g[c] & (kf[c] == (float)k));
#pragma GCC unroll 9
                    for (int t = 0; t < 9; t++) {
                        const DwVec v = DWVEC_AT(xq + (size_t)tap_plane(k, t) * P +
                                                 (size_t)(r + tap_row(k, t)) * CONV_PHASE_Q + h);
                        for (int c = 0; c < DW_CH; c++)
                            a[c][t] += d[c] * v;
                    }
                }
            }
            for (int c = 0; c < DW_CH; c++)
                for (int t = 0; t < 10; t++)
                    DWVEC_AT(lane[e0 + c] + t * 2 * CONV_PHASE_Q + h) = a[c][t];
        }
}

/* ---- the input's moments (layer_conv_phase.h) ---- */

#define MOM_S 0 /* S_t at mom[MOM_S + t] */
#define MOM_G 9 /* G_st at mom[MOM_G + 9*s + t] */

/*
 * The moments of one image from its padded copy xp ((H + 2) rows of RW
 * floats, x at row 1 + i, column 1 + j, zero elsewhere): output position
 * (r, c) sees tap t = 3 kh + kw at xp[r + kh][c + kw], so a vector of ML
 * positions of a row is one unaligned load per tap.  Pass s makes S_s and
 * G_st for t >= s (the others are the same by symmetry): 10 - s sums in
 * registers (AVX2's 16 hold no more; SSE splits each in two and spills), the
 * pass's s a constant (moments_image calls it so) so that they unroll.
 * Lanes past the image's width in the last vector of a row are masked
 * off.  Each float lane sums MOM_FOLD_ROWS rows (56 terms at 28 x 28) and
 * is then added into double; the lanes are summed in double at the end,
 * in one order.  The pass over the phase planes this replaced (three taps
 * a call, two rows of phase lanes a vector) ran 6.1 us an image, this 2.4
 * (one thread, 28 x 28; bench/RESULTS.md, session 25).
 */
#define ML 8 /* lanes a vector, on every CPU: what is executed, and so its count, is the same */
typedef float MomVec __attribute__((vector_size(4 * ML)));
typedef float MomVecAt __attribute__((vector_size(4 * ML), aligned(4), may_alias));
#define MOMVEC_AT(p) (*(const MomVecAt *)(p))
#define MOM_FOLD_ROWS 14

static inline __attribute__((always_inline)) void moments_pass(double *mom, const float *xp,
                                                               int H, int nb, int RW,
                                                               MomVec last, const int s)
{
    const int os = (s / 3) * RW + s % 3, nsums = 10 - s;
    double d[10][ML];

    memset(d, 0, sizeof d);
    for (int r0 = 0; r0 < H; r0 += MOM_FOLD_ROWS) {
        const int r1 = r0 + MOM_FOLD_ROWS < H ? r0 + MOM_FOLD_ROWS : H;
        MomVec acc[10];
        #pragma GCC unroll 10
        for (int k = 0; k < 10; k++)
            acc[k] = (MomVec){0};
        for (int r = r0; r < r1; r++) {
            const float *row = xp + (size_t)r * RW;
            for (int v = 0; v < nb; v++) {
                MomVec xs = MOMVEC_AT(row + v * ML + os);
                if (v == nb - 1)
                    xs *= last;
                acc[0] += xs;
                #pragma GCC unroll 9
                for (int t = s; t < 9; t++)
                    acc[1 + t - s] += xs * MOMVEC_AT(row + v * ML + (t / 3) * RW + t % 3);
            }
        }
        #pragma GCC unroll 10
        for (int k = 0; k < nsums; k++)
            for (int l = 0; l < ML; l++)
                d[k][l] += acc[k][l];
    }
    for (int k = 0; k < nsums; k++) {
        double v = 0.0;
        for (int l = 0; l < ML; l++)
            v += d[k][l];
        if (k == 0) {
            mom[MOM_S + s] += v;
            continue;
        }
        const int t = s + k - 1;
        mom[MOM_G + 9 * s + t] += v;
        if (t != s)
            mom[MOM_G + 9 * t + s] += v;
    }
}

/* Vectors of ML positions a row of W: the padded copy's rows are one
 * vector longer, so that every tap's load stays inside its row. */
static int moments_vectors(int W)
{
    return (W + ML - 1) / ML;
}

static void moments_image(double *mom, float *xp, const float *x, int H, int W)
{
    const int nb = moments_vectors(W), RW = (nb + 1) * ML;
    MomVec last = {0};

    for (int l = 0; l < ML; l++)
        last[l] = (nb - 1) * ML + l < W ? 1.0f : 0.0f;
    memset(xp, 0, (size_t)(H + 2) * RW * sizeof *xp);
    for (int i = 0; i < H; i++)
        memcpy(xp + (size_t)(i + 1) * RW + 1, x + (size_t)i * W, (size_t)W * sizeof *xp);
    moments_pass(mom, xp, H, nb, RW, last, 0);
    moments_pass(mom, xp, H, nb, RW, last, 1);
    moments_pass(mom, xp, H, nb, RW, last, 2);
    moments_pass(mom, xp, H, nb, RW, last, 3);
    moments_pass(mom, xp, H, nb, RW, last, 4);
    moments_pass(mom, xp, H, nb, RW, last, 5);
    moments_pass(mom, xp, H, nb, RW, last, 6);
    moments_pass(mom, xp, H, nb, RW, last, 7);
    moments_pass(mom, xp, H, nb, RW, last, 8);
}

void conv_phase_moments(double *mom, float *xq, const float *x, int nimg, int H, int W)
{
    /* The padded copy fits the scratch of the phase planes. */
    assert((size_t)(H + 2) * (moments_vectors(W) + 1) * ML <= conv_phase_input_floats(H, W));
    for (int n = 0; n < nimg; n++)
        moments_image(mom, xq, x + (size_t)n * H * W, H, W);
}

double conv_phase_moments_flops(int H, int W)
{
    const double lanes = (double)H * moments_vectors(W) * ML; /* positions, masked ones too */
    const int folds = (H + MOM_FOLD_ROWS - 1) / MOM_FOLD_ROWS; /* float lanes into double */

    /* Per lane a sum of each of 9 taps (an add) and 45 products (a
     * multiply-add); then the 54 sums' folds into double and lane sums. */
    return lanes * (9 + 45 * 2) + 54.0 * ML * (double)(folds + 1);
}

/* w.S and w'Gw of one channel's filter w (9). */
static void moments_forms(double *ws, double *wgw, double gw[9], const double *mom,
                          const float *w)
{
    *ws = 0.0;
    *wgw = 0.0;
    for (int t = 0; t < 9; t++) {
        gw[t] = 0.0;
        for (int s = 0; s < 9; s++)
            gw[t] += mom[MOM_G + 9 * t + s] * w[s];
        *ws += w[t] * mom[MOM_S + t];
        *wgw += w[t] * gw[t];
    }
}

void conv_phase_stats_moments(double *acc, const double *mom, const float *w, const float *b,
                              int OC, long M)
{
    for (int oc = 0; oc < OC; oc++) {
        double ws, wgw, gw[9], bo = b[oc];
        moments_forms(&ws, &wgw, gw, mom, w + 9 * oc);
        acc[2 * oc] = (double)M * bo + ws;
        acc[2 * oc + 1] = (double)M * bo * bo + 2.0 * bo * ws + wgw;
    }
}

/*
 * dz = a + bx*xhat + k1*r with xhat = (z - mu)*is is c0 + c1*z + k1*r with
 * c1 = bx*is, c0 = a - c1*mu, so sum_p dz X_t = c0 S_t + c1 (b S_t + (Gw)_t)
 * + k1 sum_p r X_t, and sum_p dz = c0 M + c1 (M b + w.S) + k1 sum_p r.
 */
void conv_phase_grad_finish(float *dw, float *db, const double *mom, const float *w,
                            const float *b, const float *gamma, const float *mean,
                            const float *invstd, const float *mdz, const float *mdzx, int OC,
                            long M)
{
    for (int oc = 0; oc < OC; oc++) {
        const double k1 = (double)gamma[oc] * invstd[oc], bo = b[oc];
        const double c1 = -k1 * mdzx[oc] * invstd[oc];
        const double c0 = -k1 * mdz[oc] - c1 * mean[oc];
        double ws, wgw, gw[9];
        moments_forms(&ws, &wgw, gw, mom, w + 9 * oc);
        for (int t = 0; t < 9; t++) {
            const double st = mom[MOM_S + t];
            dw[9 * oc + t] = (float)(k1 * dw[9 * oc + t] + c0 * st + c1 * (bo * st + gw[t]));
        }
        db[oc] = (float)(k1 * db[oc] + c0 * (double)M + c1 * ((double)M * bo + ws));
    }
}
