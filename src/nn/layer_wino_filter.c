/*
 * layer_wino_filter.c: the Winograd layer's filters (layer_wino.h):
 * U = G g G^T for the forward and dg = G^T dU G for the weight gradient.
 */
#include "nn/gemm.h"
#include "nn/layer_wino.h"
#include "nn/wino_vec.h"

/*
 * G's +p rows, (1, p, p^2) / (2 p prod over the other pairs q of
 * (p^2 - q^2)), as exact fractions; the -p row is (-1, p, -p^2) over the
 * same, and row 8 (0, 0, 1).
 */
static const double WG[WINO_PAIRS][3] = {{-128.0 / 315, -128.0 / 315, -128.0 / 315},
                                         {64.0 / 10395, 128.0 / 10395, 256.0 / 10395},
                                         {-1024.0 / 945, -256.0 / 945, -64.0 / 945},
                                         {1024.0 / 1155, 768.0 / 1155, 576.0 / 1155}};

/*
 * U = G g G^T is one small GEMM with GG = G (x) G (81, 9), the Kronecker
 * square of G: U[r*9+c] = sum over (i, j) of G[r][i] G[c][j] g[i*3+j],
 * each entry rounded once from double.  (As loops, the stride-9 reads of
 * w do not vectorise.)  dg = G^T dU G, the same matrix transposed, runs
 * in two passes of G's columns instead (gt9, from the same table).
 */
static void wino_gg(float gg[WINO_P * 9])
{
    double G[A][3] = {{0}};

    for (int k = 0; k < WINO_PAIRS; k++)
        for (int c = 0; c < 3; c++) {
            G[2 * k][c] = WG[k][c];
            G[2 * k + 1][c] = c % 2 ? WG[k][c] : -WG[k][c];
        }
    G[A - 1][2] = 1.0;
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
    /* U[:, p0:p1] (81, n) = GG (81, 9) * w[p0:p1]^T (9, n) */
    gemm(0, 1, WINO_P, (int)(p1 - p0), 9, 1.0f, gg, 9, w + 9 * p0, 9, 0.0f, U + p0, (int)npairs);
}

/* o (3) = G^T i (9), a pair's two rows at once from its sum and
 * difference. */
static inline void gt9(vf *o, int os, const vf *i, int is)
{
    vf o0 = {0}, o1 = {0}, o2 = i[8 * is];

    #pragma GCC unroll 4
    for (int k = 0; k < WINO_PAIRS; k++) {
        const vf s = i[2 * k * is] + i[(2 * k + 1) * is], d = i[2 * k * is] - i[(2 * k + 1) * is];
        o0 += (float)WG[k][0] * d;
        o1 += (float)WG[k][1] * s;
        o2 += (float)WG[k][2] * d;
    }
    o[0] = o0;
    o[os] = o1;
    o[2 * os] = o2;
}

/*
 * dw[p0:p1] (n, 9) = G^T dU G for each pair, dU (81, pairs) with planes
 * ld floats apart: 16 pairs in the lanes, G^T applied down the columns
 * and then along the rows (a third of the operations of the 81 x 9
 * matrix of both).  A GEMM with 9 columns ran at 47 GFLOP/s here
 * (OpenBLAS, one thread, 8192 pairs), and the backward makes one per
 * chunk.  The 144 scalar copies out of the lanes into the filters' order
 * cost about what the arithmetic does; dW kept transposed (9, pairs) for
 * vector stores moved them into the reduction, at the same cost
 * (bench/RESULTS.md, session 16).
 */
long wino_du_ld(int C, int OC)
{
    return (long)OC * C + VL;
}

/* gt9: per pair, the sum and difference and three multiply-adds. */
double wino_filter_grad_flops(long pairs)
{
    return (double)pairs * (A + 3) * WINO_PAIRS * (2 + 3 * 2);
}

void wino_filter_grad(float *dw, const float *dU, long ld, long p0, long p1)
{
    for (long p = p0; p < p1; p += VL) {
        const int n = p1 - p < VL ? (int)(p1 - p) : VL;
        vf d[WINO_P], e[3 * A], g[9];
        float t[9][VL];
        for (int x = 0; x < WINO_P; x++) {
            if (n == VL)
                d[x] = vld(dU + x * ld + p);
            else {
                d[x] = (vf){0};
                memcpy(&d[x], dU + x * ld + p, (size_t)n * sizeof(float));
            }
        }
        #pragma GCC unroll 9
        for (int c = 0; c < A; c++) /* e (3 x 9) = G^T dU */
            gt9(e + c, A, d + c, A);
        #pragma GCC unroll 3
        for (int r = 0; r < 3; r++) /* g (3 x 3) = e G */
            gt9(g + 3 * r, 1, e + A * r, 1);
        for (int k = 0; k < 9; k++)
            vst(t[k], g[k]);
        for (int l = 0; l < n; l++)
            for (int k = 0; k < 9; k++)
                dw[(p + l) * 9 + k] = t[k][l];
    }
}
