/*
 * layer_wino.c: 3x3 convolution by Winograd F(4x4, 3x3) (layer_wino.h).
 *
 * The transforms run over all the tiles of a group in one flat loop per
 * channel, loading through the tables (gathers, gather_block()), so they
 * vectorise across tiles; the 36 GEMMs per direction do the arithmetic
 * that matters.
 *
 * IVDEP: a tile loop reads or writes 36 planes a runtime stride apart,
 * which gcc cannot prove disjoint (it gives up after ten run-time alias
 * checks and leaves the loop scalar: conv3 ran 1.8x slower forward and 2x
 * backward, one thread, under F(2x2, 3x3)); they are disjoint by
 * construction.  `#pragma GCC unroll` flattens the 6x6 transforms before
 * the vectoriser sees them.
 */
#include <assert.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "nn/gemm.h"
#include "nn/layer_wino.h"
#include "nn/sums.h"

/* gcc's ivdep (see above).  clang's nearest, vectorize(assume_safety),
 * is a demand: where clang cannot vectorise (the fuzzing builds), it is a
 * warning, an error under -Werror; clang builds go without. */
#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#else
#define IVDEP
#endif

#define M WINO_M
#define A WINO_A

static int tiles_across(int n)
{
    return (n + M - 1) / M;
}

int wino_tiles(int H, int W)
{
    return tiles_across(H) * tiles_across(W);
}

int wino_max_group(int H, int W)
{
    int pp = (M * tiles_across(H) + 2) * (M * tiles_across(W) + 2);
    return pp <= WINO_MAX_POS ? WINO_MAX_POS / pp : 0;
}

void wino_tables_init(WinoTables *t, int H, int W, int cap)
{
    memset(t, 0, sizeof *t);
    t->H = H;
    t->W = W;
    t->TI = tiles_across(H);
    t->TJ = tiles_across(W);
    t->TT = t->TI * t->TJ;
    t->PH = M * t->TI + 2;
    t->PW = M * t->TJ + 2;
    assert(cap >= 1 && cap <= wino_max_group(H, W));
    t->cap = cap;

    const int HW = H * W, PP = t->PH * t->PW, Tc = cap * t->TT;
    for (int n = 0; n < cap; n++) {
        for (int i = 0; i < t->TI; i++)
            for (int j = 0; j < t->TJ; j++) {
                int tt = n * t->TT + i * t->TJ + j;
                t->xoff[tt] = n * PP + M * i * t->PW + M * j;
                for (int a = 0; a < M; a++)
                    for (int b = 0; b < M; b++) {
                        int h = M * i + a, w = M * j + b, in = h < H && w < W;
                        t->yo[M * a + b][tt] = in ? n * HW + h * W + w : 0;
                        t->ym[M * a + b][tt] = in ? 1.0f : 0.0f;
                    }
            }
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                int p = n * HW + h * W + w, R = h + 1, K = w + 1;
                t->yq[p] = (M * (h % M) + w % M) * Tc + n * t->TT + (h / M) * t->TJ + w / M;
                /* The padded position (R, K) lies in the patches of tiles
                 * i = R/M - 1 + e, j = K/M - 1 + f that exist and reach it
                 * (R - M*i < A), at place (R - M*i, K - M*j). */
                for (int e = 0; e < 2; e++)
                    for (int f = 0; f < 2; f++) {
                        int i = R / M - 1 + e, j = K / M - 1 + f;
                        int in = i >= 0 && i < t->TI && j >= 0 && j < t->TJ &&
                                 R - M * i < A && K - M * j < A;
                        int place = (R - M * i) * A + (K - M * j);
                        t->zsrc[2 * e + f][p] = in ? place * Tc + n * t->TT + i * t->TJ + j : 0;
                        t->zmask[2 * e + f][p] = in ? 1.0f : 0.0f;
                    }
            }
    }
}

/*
 * The distance between two of the 36 planes of an array (rows x T): a
 * cache line more than the plane.  A transform writes or reads one vector
 * in each of the 36 planes at once; rows * T is often a multiple of 4 KiB
 * (conv2's V at 7 images: 32 x 112 floats is not, but 32 x 64 is), and at
 * such a distance all 36 lines fall in one set of the L1 cache, which
 * holds 12.
 */
static long plane_stride(int rows, long T)
{
    return rows * T + 16;
}

long wino_scratch_floats(int H, int W, int C, int OC, int cap)
{
    long T = (long)cap * wino_tiles(H, W);
    return WINO_P * (plane_stride(C, T) + plane_stride(OC, T)) + WINO_MAX_POS + WINO_P * T;
}

/* ---- the transforms: 1-D over 6 (or 4) values `is` apart, then 2-D ---- */

/* o = B^T i: the rows of B^T are (4 0 -5 0 1 0), (0 -4 -4 1 1 0),
 * (0 4 -4 -1 1 0), (0 -2 -1 2 1 0), (0 2 -1 -2 1 0), (0 4 0 -5 0 1). */
static inline void bt6(float *o, int os, const float *i, int is)
{
    const float d0 = i[0], d1 = i[is], d2 = i[2 * is], d3 = i[3 * is], d4 = i[4 * is],
                d5 = i[5 * is];

    o[0] = 4.0f * d0 - 5.0f * d2 + d4;
    o[os] = (d3 + d4) - 4.0f * (d1 + d2);
    o[2 * os] = (d4 - d3) + 4.0f * (d1 - d2);
    o[3 * os] = (d4 - d2) + 2.0f * (d3 - d1);
    o[4 * os] = (d4 - d2) - 2.0f * (d3 - d1);
    o[5 * os] = 4.0f * d1 - 5.0f * d3 + d5;
}

/* o = B i: the adjoint of bt6. */
static inline void b6(float *o, int os, const float *i, int is)
{
    const float v0 = i[0], v1 = i[is], v2 = i[2 * is], v3 = i[3 * is], v4 = i[4 * is],
                v5 = i[5 * is];

    o[0] = 4.0f * v0;
    o[os] = 4.0f * (v2 - v1) + 2.0f * (v4 - v3) + 4.0f * v5;
    o[2 * os] = -5.0f * v0 - 4.0f * (v1 + v2) - (v3 + v4);
    o[3 * os] = (v1 - v2) + 2.0f * (v3 - v4) - 5.0f * v5;
    o[4 * os] = v0 + v1 + v2 + v3 + v4;
    o[5 * os] = v5;
}

/* o (4) = A^T i (6): the rows of A^T are (1 1 1 1 1 0), (0 1 -1 2 -2 0),
 * (0 1 1 4 4 0), (0 1 -1 8 -8 1). */
static inline void at6(float *o, int os, const float *i, int is)
{
    const float m0 = i[0], p = i[is] + i[2 * is], q = i[is] - i[2 * is],
                r = i[3 * is] + i[4 * is], s = i[3 * is] - i[4 * is];

    o[0] = m0 + p + r;
    o[os] = q + 2.0f * s;
    o[2 * os] = p + 4.0f * r;
    o[3 * os] = q + 8.0f * s + i[5 * is];
}

/* o (6) = A i (4): the adjoint of at6. */
static inline void a6(float *o, int os, const float *i, int is)
{
    const float d0 = i[0], d1 = i[is], d2 = i[2 * is], d3 = i[3 * is];
    const float e = d0 + d2, f = d1 + d3, g = d0 + 4.0f * d2, h = 2.0f * d1 + 8.0f * d3;

    o[0] = d0;
    o[os] = e + f;
    o[2 * os] = e - f;
    o[3 * os] = g + h;
    o[4 * os] = g - h;
    o[5 * os] = d3;
}

/* V = B^T d B (6x6). */
static inline void tf_input(float v[WINO_P], const float d[WINO_P])
{
    float e[WINO_P];

    #pragma GCC unroll 6
    for (int k = 0; k < A; k++)
        bt6(e + k, A, d + k, A);
    #pragma GCC unroll 6
    for (int r = 0; r < A; r++)
        bt6(v + A * r, 1, e + A * r, 1);
}

/* d = B v B^T: the adjoint of tf_input. */
static inline void tf_input_adj(float d[WINO_P], const float v[WINO_P])
{
    float e[WINO_P];

    #pragma GCC unroll 6
    for (int k = 0; k < A; k++)
        b6(e + k, A, v + k, A);
    #pragma GCC unroll 6
    for (int r = 0; r < A; r++)
        b6(d + A * r, 1, e + A * r, 1);
}

/* y (4x4) = A^T m A. */
static inline void tf_output(float y[M * M], const float m[WINO_P])
{
    float s[M * A];

    #pragma GCC unroll 6
    for (int k = 0; k < A; k++)
        at6(s + k, A, m + k, A);
    #pragma GCC unroll 4
    for (int a = 0; a < M; a++)
        at6(y + M * a, 1, s + A * a, 1);
}

/* m = A d A^T: the adjoint of tf_output. */
static inline void tf_output_adj(float m[WINO_P], const float d[M * M])
{
    float s[M * A];

    #pragma GCC unroll 4
    for (int a = 0; a < M; a++)
        a6(s + A * a, 1, d + M * a, 1);
    #pragma GCC unroll 6
    for (int k = 0; k < A; k++)
        a6(m + k, A, s + k, A);
}

/* ---- the filters ---- */

/*
 * Both filter transforms are one small GEMM with GG = G (x) G (36, 9), the
 * Kronecker square of G: U[r*6+c] = sum over (i, j) of G[r][i] G[c][j]
 * g[i*3+j], and dg = G^T dU G is the same matrix transposed.  Its entries
 * are products of G's (1/4, 1/6, 1/12, 1/24, 1), each rounded once from
 * double.  (As loops, the stride-9 reads of w do not vectorise.)
 */
static void wino_gg(float gg[WINO_P * 9])
{
    static const double G[A][3] = {{1.0 / 4, 0.0, 0.0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0.0, 0.0, 1.0}};

    for (int r = 0; r < A; r++)
        for (int c = 0; c < A; c++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    gg[(r * A + c) * 9 + i * 3 + j] = (float)(G[r][i] * G[c][j]);
}

void wino_filter(float *U, const float *w, long npairs, long p0, long p1)
{
    float gg[WINO_P * 9];

    if (p1 <= p0)
        return;
    wino_gg(gg);
    /* U[:, p0:p1] (36, n) = GG (36, 9) * w[p0:p1]^T (9, n) */
    gemm(0, 1, WINO_P, (int)(p1 - p0), 9, 1.0f, gg, 9, w + 9 * p0, 9, 0.0f, U + p0, (int)npairs);
}

void wino_filter_grad(float *dw, const float *dU, long ld, long p0, long p1)
{
    float gg[WINO_P * 9];

    if (p1 <= p0)
        return;
    wino_gg(gg);
    /* dw[p0:p1] (n, 9) = dU[:, p0:p1]^T (n, 36) * GG (36, 9) */
    gemm(1, 0, (int)(p1 - p0), 9, WINO_P, 1.0f, dU + p0, (int)ld, gg, 9, 0.0f, dw + 9 * p0, 9);
}

/* ---- loads through the index tables ---- */

#define LANES 16 /* tiles (or positions) a block of the loops below */

/*
 * o[l] = base[idx[l] + add] for l < n (o: a block of LANES), 0 where mask
 * (may be NULL) is 0.  With AVX-512 one hardware gather: gcc's generic
 * tuning (what -march=native gives on CPUs it does not know) would load
 * the elements one by one and insert them, and the transforms ran 1.4-1.6x
 * slower so (bench/RESULTS.md, session 12).
 */
static inline void gather_block(float *restrict o, const float *restrict base,
                                const int *restrict idx, int add, const float *restrict mask,
                                int n)
{
#ifdef __AVX512F__
    const __mmask16 lanes = n >= LANES ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
    const __m512i i = _mm512_add_epi32(_mm512_maskz_loadu_epi32(lanes, idx),
                                       _mm512_set1_epi32(add));
    const __m512 zero = _mm512_setzero_ps();
    const __mmask16 m =
        mask ? _mm512_mask_cmp_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, mask), zero, _CMP_NEQ_OQ)
             : lanes;

    _mm512_mask_storeu_ps(o, lanes, _mm512_mask_i32gather_ps(zero, m, i, base, 4));
#else
    for (int l = 0; l < n; l++) {
        const float v = base[idx[l] + add];
        o[l] = !mask || mask[l] != 0.0f ? v : 0.0f;
    }
#endif
}

/* ---- one channel of a group ---- */

/* V[x*ps + tt] for the T tiles of channel xc (nt images, contiguous). */
static void input_channel(float *restrict V, long ps, const float *restrict xc,
                          float *restrict xp, const WinoTables *t, int nt)
{
    const int T = nt * t->TT, PW = t->PW, PP = t->PH * PW, H = t->H, W = t->W;

    /* The image rows into the padded planes; their borders stay as
     * input_group() zeroed them (the same cells for every channel). */
    for (int n = 0; n < nt; n++)
        for (int h = 0; h < H; h++)
            memcpy(xp + n * PP + (h + 1) * PW + 1, xc + ((long)n * H + h) * W,
                   (size_t)W * sizeof *xp);
    for (int t0 = 0; t0 < T; t0 += LANES) {
        const int nl = T - t0 < LANES ? T - t0 : LANES;
        float d[WINO_P][LANES];
        for (int r = 0; r < A; r++)
            for (int k = 0; k < A; k++)
                gather_block(d[A * r + k], xp, t->xoff + t0, r * PW + k, NULL, nl);
        IVDEP
        for (int l = 0; l < nl; l++) {
            float e[WINO_P], v[WINO_P];
            #pragma GCC unroll 36
            for (int x = 0; x < WINO_P; x++)
                e[x] = d[x][l];
            tf_input(v, e);
            #pragma GCC unroll 36
            for (int x = 0; x < WINO_P; x++)
                V[x * ps + t0 + l] = v[x];
        }
    }
}

/* Output channel: yc (nt*H*W) = A^T M A + bias, M (Mp) its 36 planes ps apart. */
static void output_channel(float *restrict yc, const float *restrict Mp, long ps, float bias,
                           float *restrict yq, const WinoTables *t, int nt)
{
    const int T = nt * t->TT, Tc = t->cap * t->TT, n = nt * t->H * t->W;

    IVDEP
    for (int tt = 0; tt < T; tt++) {
        float m[WINO_P], y[M * M];
        #pragma GCC unroll 36
        for (int x = 0; x < WINO_P; x++)
            m[x] = Mp[x * ps + tt];
        tf_output(y, m);
        #pragma GCC unroll 16
        for (int a = 0; a < M * M; a++)
            yq[a * Tc + tt] = y[a] + bias;
    }
    for (int p = 0; p < n; p += LANES)
        gather_block(yc + p, yq, t->yq + p, 0, NULL, n - p < LANES ? n - p : LANES);
}

/* DY[x*ps + tt] = A dy A^T for output-gradient channel dyc (nt*H*W). */
static void dy_channel(float *restrict DY, long ps, const float *restrict dyc,
                       const WinoTables *t, int nt)
{
    const int T = nt * t->TT;

    for (int t0 = 0; t0 < T; t0 += LANES) {
        const int nl = T - t0 < LANES ? T - t0 : LANES;
        float d[M * M][LANES];
        for (int a = 0; a < M * M; a++)
            gather_block(d[a], dyc, t->yo[a] + t0, 0, t->ym[a] + t0, nl);
        IVDEP
        for (int l = 0; l < nl; l++) {
            float e[M * M], m[WINO_P];
            #pragma GCC unroll 16
            for (int a = 0; a < M * M; a++)
                e[a] = d[a][l];
            tf_output_adj(m, e);
            #pragma GCC unroll 36
            for (int x = 0; x < WINO_P; x++)
                DY[x * ps + t0 + l] = m[x];
        }
    }
}

/* dxc (nt*H*W) = the sum over patches of B dV B^T, dV's planes ps apart. */
static void dx_channel(float *restrict dxc, const float *restrict dV, long ps,
                       float *restrict z, const WinoTables *t, int nt)
{
    const int T = nt * t->TT, Tc = t->cap * t->TT, n = nt * t->H * t->W;

    IVDEP
    for (int tt = 0; tt < T; tt++) {
        float v[WINO_P], d[WINO_P];
        #pragma GCC unroll 36
        for (int x = 0; x < WINO_P; x++)
            v[x] = dV[x * ps + tt];
        tf_input_adj(d, v);
        #pragma GCC unroll 36
        for (int x = 0; x < WINO_P; x++)
            z[x * Tc + tt] = d[x];
    }
    for (int p0 = 0; p0 < n; p0 += LANES) {
        const int nl = n - p0 < LANES ? n - p0 : LANES;
        float g[4][LANES];
        for (int e = 0; e < 4; e++)
            gather_block(g[e], z, t->zsrc[e] + p0, 0, t->zmask[e] + p0, nl);
        for (int l = 0; l < nl; l++)
            dxc[p0 + l] = ((g[0][l] + g[1][l]) + g[2][l]) + g[3][l];
    }
}

/* ---- a group ---- */

static void input_group(float *V, long pv, const float *x, float *xp, const WinoTables *t,
                        int C, int N, int n0, int nt)
{
    const long HW = (long)t->H * t->W, T = (long)nt * t->TT;

    memset(xp, 0, (size_t)nt * t->PH * t->PW * sizeof *xp);
    for (int c = 0; c < C; c++) {
        /* The next channel's images, while this one is transformed: the
         * input comes from the whole batch's activations, out of cache,
         * and the gathers that read it would wait on each line. */
        if (c + 1 < C)
            for (long q = 0; q < nt * HW; q += 16)
                __builtin_prefetch(x + ((long)(c + 1) * N + n0) * HW + q);
        input_channel(V + c * T, pv, x + ((long)c * N + n0) * HW, xp, t, nt);
    }
}

void wino_forward(float *y, const float *x, const float *U, const float *b,
                  float *scratch, const WinoTables *t, int C, int OC, int N, int n0, int nt,
                  GemmPath path)
{
    const long HW = (long)t->H * t->W, T = (long)nt * t->TT;
    const long pv = plane_stride(C, T), pm = plane_stride(OC, T);
    float *V = scratch, *Mp = V + WINO_P * pv, *xp = Mp + WINO_P * pm;
    float *yq = xp + WINO_MAX_POS;

    assert(nt >= 1 && nt <= t->cap);
    input_group(V, pv, x, xp, t, C, N, n0, nt);
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 0, 0, OC, (int)T, C, 1.0f, U + (long)xi * OC * C, C, V + xi * pv, (int)T,
                0.0f, Mp + xi * pm, (int)T);
    for (int oc = 0; oc < OC; oc++)
        output_channel(y + ((long)oc * N + n0) * HW, Mp + oc * T, pm, b[oc], yq, t, nt);
}

void wino_backward(float *dx, float *dU, float *db, const float *dy, int ldy,
                   const float *x, const float *U, float *scratch, const WinoTables *t,
                   int C, int OC, int N, int n0, int nt, float beta, GemmPath path)
{
    const long HW = (long)t->H * t->W, T = (long)nt * t->TT;
    const long pv = plane_stride(C, T), pm = plane_stride(OC, T);
    /* dV takes V's place once the dU products have read V. */
    float *V = scratch, *DY = V + WINO_P * pv, *dV = V;
    float *xp = DY + WINO_P * pm, *z = xp + WINO_MAX_POS;

    assert(nt >= 1 && nt <= t->cap);
    input_group(V, pv, x, xp, t, C, N, n0, nt);
    for (int oc = 0; oc < OC; oc++) {
        dy_channel(DY + oc * T, pm, dy + (long)oc * ldy, t, nt);
        /* Point (1, 1) of A d A^T is the sum of the tile's 16 values of
         * dy: summed over the tiles, it is db, from a sixteenth of the
         * values. */
        float s = (float)sums_plain(DY + WINO_SUM_POINT * pm + oc * T, T);
        db[oc] = beta == 0.0f ? s : beta * db[oc] + s;
    }
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 0, 1, OC, C, (int)T, 1.0f, DY + xi * pm, (int)T, V + xi * pv, (int)T,
                beta, dU + (long)xi * OC * C, C);
    if (!dx)
        return;
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 1, 0, C, (int)T, OC, 1.0f, U + (long)xi * OC * C, C, DY + xi * pm,
                (int)T, 0.0f, dV + xi * pv, (int)T);
    for (int c = 0; c < C; c++)
        dx_channel(dx + ((long)c * N + n0) * HW, dV + c * T, pv, z, t, nt);
}
