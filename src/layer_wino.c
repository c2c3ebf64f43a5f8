/*
 * layer_wino.c: 3x3 convolution by Winograd F(2x2, 3x3) (layer_wino.h).
 *
 * The transforms run over all the tiles of a group in one flat loop per
 * channel, loading through the tables (gathers), so they vectorise across
 * tiles; the 16 GEMMs per direction do the arithmetic that matters.
 *
 * IVDEP: a tile loop reads or writes 16 planes a runtime stride apart,
 * which gcc cannot prove disjoint (it gives up after ten run-time alias
 * checks and leaves the loop scalar: conv3 ran 1.8x slower forward and 2x
 * backward, one thread); they are disjoint by construction.  `#pragma GCC unroll` flattens the 4x4
 * transforms before the vectoriser sees them.
 */
#include <assert.h>
#include <string.h>

#include "gemm.h"
#include "layer_wino.h"
#include "sums.h"

/* gcc's ivdep (see above).  clang's nearest, vectorize(assume_safety),
 * is a demand: where clang cannot vectorise (the fuzzing builds), it is a
 * warning, an error under -Werror; clang builds go without. */
#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#else
#define IVDEP
#endif

int wino_max_group(int H, int W)
{
    int pp = (2 * ((H + 1) / 2) + 2) * (2 * ((W + 1) / 2) + 2);
    return pp <= WINO_MAX_POS ? WINO_MAX_POS / pp : 0;
}

void wino_tables_init(WinoTables *t, int H, int W, int cap)
{
    memset(t, 0, sizeof *t);
    t->H = H;
    t->W = W;
    t->TI = (H + 1) / 2;
    t->TJ = (W + 1) / 2;
    t->TT = t->TI * t->TJ;
    t->PH = 2 * t->TI + 2;
    t->PW = 2 * t->TJ + 2;
    assert(cap >= 1 && cap <= wino_max_group(H, W));
    t->cap = cap;

    const int HW = H * W, PP = t->PH * t->PW, Tc = cap * t->TT;
    for (int n = 0; n < cap; n++) {
        for (int r = 0; r < t->PH; r++)
            for (int k = 0; k < t->PW; k++) {
                int q = n * PP + r * t->PW + k, h = r - 1, w = k - 1;
                int in = h >= 0 && h < H && w >= 0 && w < W;
                t->xsrc[q] = in ? n * HW + h * W + w : 0;
                t->xmask[q] = in ? 1.0f : 0.0f;
            }
        for (int i = 0; i < t->TI; i++)
            for (int j = 0; j < t->TJ; j++) {
                int tt = n * t->TT + i * t->TJ + j;
                t->xoff[tt] = n * PP + 2 * i * t->PW + 2 * j;
                #pragma GCC unroll 16
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) {
                        int h = 2 * i + a, w = 2 * j + b, in = h < H && w < W;
                        t->yo[2 * a + b][tt] = in ? n * HW + h * W + w : 0;
                        t->ym[2 * a + b][tt] = in ? 1.0f : 0.0f;
                    }
            }
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                int p = n * HW + h * W + w, R = h + 1, K = w + 1;
                t->yq[p] = (2 * (h & 1) + (w & 1)) * Tc + n * t->TT + (h / 2) * t->TJ + w / 2;
                /* The padded position (R, K) lies in the patches of tiles
                 * i = R/2 - 1 + e, j = K/2 - 1 + f, at place (R - 2i, K - 2j). */
                #pragma GCC unroll 16
                for (int e = 0; e < 2; e++)
                    for (int f = 0; f < 2; f++) {
                        int i = R / 2 - 1 + e, j = K / 2 - 1 + f;
                        int in = i >= 0 && i < t->TI && j >= 0 && j < t->TJ;
                        int place = (R - 2 * i) * 4 + (K - 2 * j);
                        t->zsrc[2 * e + f][p] = in ? place * Tc + n * t->TT + i * t->TJ + j : 0;
                        t->zmask[2 * e + f][p] = in ? 1.0f : 0.0f;
                    }
            }
    }
}

long wino_scratch_floats(int H, int W, int C, int OC, int cap)
{
    long T = (long)cap * ((H + 1) / 2) * ((W + 1) / 2);
    return 16 * T * (2L * C + OC) + WINO_MAX_POS + 16 * T;
}

/* ---- the transforms, each over one 4x4 (or 3x3, 2x2) array ---- */

/* V = B^T d B. */
static inline void tf_input(float v[16], const float d[16])
{
    float e[16];

    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        e[0 + k] = d[0 + k] - d[8 + k];
        e[4 + k] = d[4 + k] + d[8 + k];
        e[8 + k] = d[8 + k] - d[4 + k];
        e[12 + k] = d[4 + k] - d[12 + k];
    }
    #pragma GCC unroll 16
    for (int r = 0; r < 4; r++) {
        v[4 * r + 0] = e[4 * r + 0] - e[4 * r + 2];
        v[4 * r + 1] = e[4 * r + 1] + e[4 * r + 2];
        v[4 * r + 2] = e[4 * r + 2] - e[4 * r + 1];
        v[4 * r + 3] = e[4 * r + 1] - e[4 * r + 3];
    }
}

/* d = B v B^T: the adjoint of tf_input. */
static inline void tf_input_adj(float d[16], const float v[16])
{
    float e[16];

    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        e[0 + k] = v[0 + k];
        e[4 + k] = v[4 + k] - v[8 + k] + v[12 + k];
        e[8 + k] = v[4 + k] + v[8 + k] - v[0 + k];
        e[12 + k] = -v[12 + k];
    }
    #pragma GCC unroll 16
    for (int r = 0; r < 4; r++) {
        d[4 * r + 0] = e[4 * r + 0];
        d[4 * r + 1] = e[4 * r + 1] - e[4 * r + 2] + e[4 * r + 3];
        d[4 * r + 2] = e[4 * r + 1] + e[4 * r + 2] - e[4 * r + 0];
        d[4 * r + 3] = -e[4 * r + 3];
    }
}

/* y (2x2) = A^T m A. */
static inline void tf_output(float y[4], const float m[16])
{
    float s[8];

    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        s[k] = m[k] + m[4 + k] + m[8 + k];
        s[4 + k] = m[4 + k] - m[8 + k] - m[12 + k];
    }
    #pragma GCC unroll 16
    for (int a = 0; a < 2; a++) {
        y[2 * a + 0] = s[4 * a + 0] + s[4 * a + 1] + s[4 * a + 2];
        y[2 * a + 1] = s[4 * a + 1] - s[4 * a + 2] - s[4 * a + 3];
    }
}

/* m = A d A^T: the adjoint of tf_output. */
static inline void tf_output_adj(float m[16], const float d[4])
{
    float s[8];

    #pragma GCC unroll 16
    for (int a = 0; a < 2; a++) {
        s[4 * a + 0] = d[2 * a];
        s[4 * a + 1] = d[2 * a] + d[2 * a + 1];
        s[4 * a + 2] = d[2 * a] - d[2 * a + 1];
        s[4 * a + 3] = -d[2 * a + 1];
    }
    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        m[k] = s[k];
        m[4 + k] = s[k] + s[4 + k];
        m[8 + k] = s[k] - s[4 + k];
        m[12 + k] = -s[4 + k];
    }
}

/* ---- the filters ---- */

/*
 * Both filter transforms are one small GEMM with GG = G (x) G (16, 9), the
 * Kronecker square of G: U[r*4+c] = sum over (i, j) of G[r][i] G[c][j]
 * g[i*3+j], and dg = G^T dU G is the same matrix transposed.  Its entries
 * are 0, +-1/4, +-1/2 and 1, all exact in float.  (As loops, the stride-9
 * reads of w do not vectorise: 32 ns a pair.)
 */
static void wino_gg(float gg[16 * 9])
{
    static const float G[4][3] = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f},
                                  {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};

    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    gg[(r * 4 + c) * 9 + i * 3 + j] = G[r][i] * G[c][j];
}

void wino_filter(float *U, const float *w, long npairs, long p0, long p1)
{
    float gg[16 * 9];

    if (p1 <= p0)
        return;
    wino_gg(gg);
    /* U[:, p0:p1] (16, n) = GG (16, 9) * w[p0:p1]^T (9, n) */
    gemm(0, 1, 16, (int)(p1 - p0), 9, 1.0f, gg, 9, w + 9 * p0, 9, 0.0f, U + p0, (int)npairs);
}

void wino_filter_grad(float *dw, const float *dU, long ld, long p0, long p1)
{
    float gg[16 * 9];

    if (p1 <= p0)
        return;
    wino_gg(gg);
    /* dw[p0:p1] (n, 9) = dU[:, p0:p1]^T (n, 16) * GG (16, 9) */
    gemm(1, 0, (int)(p1 - p0), 9, 16, 1.0f, dU + p0, (int)ld, gg, 9, 0.0f, dw + 9 * p0, 9);
}

/* ---- one channel of a group ---- */

/* V[x*ps + tt] for the T tiles of channel xc (nt images, contiguous). */
static void input_channel(float *restrict V, long ps, const float *restrict xc,
                          float *restrict xp, const WinoTables *t, int nt)
{
    const int np = nt * t->PH * t->PW, T = nt * t->TT, PW = t->PW;

    IVDEP
    for (int q = 0; q < np; q++) {
        const float v = xc[t->xsrc[q]];
        xp[q] = t->xmask[q] != 0.0f ? v : 0.0f;
    }
    IVDEP
    for (int tt = 0; tt < T; tt++) {
        const int o = t->xoff[tt];
        float d[16], v[16];
        #pragma GCC unroll 16
        for (int r = 0; r < 4; r++)
            #pragma GCC unroll 16
            for (int k = 0; k < 4; k++)
                d[4 * r + k] = xp[o + r * PW + k];
        tf_input(v, d);
        #pragma GCC unroll 16
        for (int x = 0; x < 16; x++)
            V[x * ps + tt] = v[x];
    }
}

/* Output channel: yc (nt*H*W) = A^T M A + bias, M its 16 planes ps apart. */
static void output_channel(float *restrict yc, const float *restrict M, long ps, float bias,
                           float *restrict yq, const WinoTables *t, int nt)
{
    const int T = nt * t->TT, Tc = t->cap * t->TT, n = nt * t->H * t->W;

    IVDEP
    for (int tt = 0; tt < T; tt++) {
        float m[16], y[4];
        #pragma GCC unroll 16
        for (int x = 0; x < 16; x++)
            m[x] = M[x * ps + tt];
        tf_output(y, m);
        #pragma GCC unroll 16
        for (int a = 0; a < 4; a++)
            yq[a * Tc + tt] = y[a];
    }
    IVDEP
    for (int p = 0; p < n; p++)
        yc[p] = yq[t->yq[p]] + bias;
}

/* DY[x*ps + tt] = A dy A^T for output-gradient channel dyc (nt*H*W). */
static void dy_channel(float *restrict DY, long ps, const float *restrict dyc,
                       const WinoTables *t, int nt)
{
    const int T = nt * t->TT;

    IVDEP
    for (int tt = 0; tt < T; tt++) {
        float d[4], m[16];
        #pragma GCC unroll 16
        for (int a = 0; a < 4; a++) {
            const float v = dyc[t->yo[a][tt]];
            d[a] = t->ym[a][tt] != 0.0f ? v : 0.0f;
        }
        tf_output_adj(m, d);
        #pragma GCC unroll 16
        for (int x = 0; x < 16; x++)
            DY[x * ps + tt] = m[x];
    }
}

/* dxc (nt*H*W) = the sum over patches of B dV B^T, dV's planes ps apart. */
static void dx_channel(float *restrict dxc, const float *restrict dV, long ps,
                       float *restrict z, const WinoTables *t, int nt)
{
    const int T = nt * t->TT, Tc = t->cap * t->TT, n = nt * t->H * t->W;

    IVDEP
    for (int tt = 0; tt < T; tt++) {
        float v[16], d[16];
        #pragma GCC unroll 16
        for (int x = 0; x < 16; x++)
            v[x] = dV[x * ps + tt];
        tf_input_adj(d, v);
        #pragma GCC unroll 16
        for (int x = 0; x < 16; x++)
            z[x * Tc + tt] = d[x];
    }
    IVDEP
    for (int p = 0; p < n; p++) {
        float s = 0.0f;
        #pragma GCC unroll 16
        for (int e = 0; e < 4; e++) {
            const float v = z[t->zsrc[e][p]];
            s += t->zmask[e][p] != 0.0f ? v : 0.0f;
        }
        dxc[p] = s;
    }
}

/* ---- a group ---- */

static void input_group(float *V, const float *x, float *xp, const WinoTables *t, int C,
                        int N, int n0, int nt)
{
    const long HW = (long)t->H * t->W, T = (long)nt * t->TT;

    for (int c = 0; c < C; c++) {
        /* The next channel's images, while this one is transformed: the
         * input comes from the whole batch's activations, out of cache,
         * and the gathers that read it would wait on each line. */
        if (c + 1 < C)
            for (long q = 0; q < nt * HW; q += 16)
                __builtin_prefetch(x + ((long)(c + 1) * N + n0) * HW + q);
        input_channel(V + c * T, C * T, x + ((long)c * N + n0) * HW, xp, t, nt);
    }
}

void wino_forward(float *y, const float *x, const float *U, const float *b,
                  float *scratch, const WinoTables *t, int C, int OC, int N, int n0, int nt)
{
    const long HW = (long)t->H * t->W, T = (long)nt * t->TT;
    float *V = scratch, *M = V + 16 * C * T, *xp = M + 16 * OC * T, *yq = xp + WINO_MAX_POS;

    assert(nt >= 1 && nt <= t->cap);
    input_group(V, x, xp, t, C, N, n0, nt);
    for (int x16 = 0; x16 < 16; x16++)
        gemm(0, 0, OC, (int)T, C, 1.0f, U + (long)x16 * OC * C, C, V + x16 * C * T, (int)T,
             0.0f, M + x16 * OC * T, (int)T);
    for (int oc = 0; oc < OC; oc++)
        output_channel(y + ((long)oc * N + n0) * HW, M + oc * T, OC * T, b[oc], yq, t, nt);
}

void wino_backward(float *dx, float *dU, float *db, const float *dy, int ldy,
                   const float *x, const float *U, float *scratch, const WinoTables *t,
                   int C, int OC, int N, int n0, int nt, float beta)
{
    const long HW = (long)t->H * t->W, T = (long)nt * t->TT;
    float *V = scratch, *DY = V + 16 * C * T, *dV = DY + 16 * OC * T;
    float *xp = dV + 16 * C * T, *z = xp + WINO_MAX_POS;

    assert(nt >= 1 && nt <= t->cap);
    input_group(V, x, xp, t, C, N, n0, nt);
    for (int oc = 0; oc < OC; oc++) {
        dy_channel(DY + oc * T, OC * T, dy + (long)oc * ldy, t, nt);
        /* Point 5 of A d A^T is d0 + d1 + d2 + d3, the sum of the tile's
         * gradient: summed over the tiles, it is db, from a quarter of
         * the values. */
        float s = (float)sums_plain(DY + 5 * OC * T + oc * T, T);
        db[oc] = beta == 0.0f ? s : beta * db[oc] + s;
    }
    for (int x16 = 0; x16 < 16; x16++)
        gemm(0, 1, OC, C, (int)T, 1.0f, DY + x16 * OC * T, (int)T, V + x16 * C * T, (int)T,
             beta, dU + (long)x16 * OC * C, C);
    if (!dx)
        return;
    for (int x16 = 0; x16 < 16; x16++)
        gemm(1, 0, C, (int)T, OC, 1.0f, U + (long)x16 * OC * C, C, DY + x16 * OC * T, (int)T,
             0.0f, dV + x16 * C * T, (int)T);
    for (int c = 0; c < C; c++)
        dx_channel(dx + ((long)c * N + n0) * HW, dV + c * T, C * T, z, t, nt);
}
