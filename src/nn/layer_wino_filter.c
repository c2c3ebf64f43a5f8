/*
 * layer_wino_filter.c: the Winograd layer's filters (layer_wino.h):
 * U = G g G^T for the forward and dg = G^T dU G for the weight gradient.
 */
#include "nn/layer_wino.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__AVX2__)
#include "nn/vec_transpose.h"
#endif
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

/* o (9) = G i (3), a pair's two rows from the same three products:
 * row 2k (a, b, c) is q + r and row 2k+1 (-a, b, -c) q - r, with
 * r = a i0 + c i2, q = b i1. */
static inline void g9(vf *o, int os, const vf *i, int is)
{
    #pragma GCC unroll 4
    for (int k = 0; k < WINO_PAIRS; k++) {
        const vf r = (float)WG[k][0] * i[0] + (float)WG[k][2] * i[2 * is],
                 q = (float)WG[k][1] * i[is];
        o[2 * k * os] = q + r;
        o[(2 * k + 1) * os] = q - r;
    }
    o[8 * os] = i[2 * is];
}

#if defined(__AVX512F__)
/* Lane l's offset of a pair's tap: l * 9 (the 16 pairs' filters are 144
 * consecutive floats). */
static inline __m512i tap_lanes(void)
{
    return _mm512_setr_epi32(0, 9, 18, 27, 36, 45, 54, 63, 72, 81, 90, 99, 108, 117, 126, 135);
}
#endif

/* u (81 vectors) = G g G^T for the VL pairs from p (n of them; the
 * lanes past n are zero). */
static void filter_pairs(vf u[WINO_P], const float *w, long p, int n)
{
    vf g[9], e[3 * A];

#if defined(__AVX512F__)
    if (n == VL) { /* tap k of the 16 pairs, 9 floats apart: a gather each
                      (U 1.11-1.33x as fast as through the copy below; dg's
                      stores as scatters were 1.05x slower than its copy) */
        const __m512i idx = tap_lanes();
        for (int k = 0; k < 9; k++)
            g[k] = (vf)_mm512_i32gather_ps(idx, w + p * 9 + k, 4);
    } else
#elif defined(__AVX2__)
    if (n == VL) { /* taps 0-7 of the 8 pairs transposed in registers */
        const float *q = w + p * 9;
        __m256 r[8];
        for (int l = 0; l < 8; l++)
            r[l] = _mm256_loadu_ps(q + l * 9);
        vec_transpose8(r);
        for (int k = 0; k < 8; k++)
            g[k] = (vf)r[k];
        g[8] = (vf)_mm256_setr_ps(q[8], q[17], q[26], q[35], q[44], q[53], q[62], q[71]);
    } else
#endif
    {
        float t[9][VL] = {{0}};
        for (int l = 0; l < n; l++)
            for (int k = 0; k < 9; k++)
                t[k][l] = w[(p + l) * 9 + k];
        for (int k = 0; k < 9; k++)
            g[k] = vld(t[k]);
    }
    #pragma GCC unroll 3
    for (int c = 0; c < 3; c++) /* e (9 x 3) = G g */
        g9(e + c, 3, g + c, 3);
    #pragma GCC unroll 9
    for (int r = 0; r < A; r++) /* u (9 x 9) = e G^T */
        g9(u + A * r, 1, e + 3 * r, 1);
}

/*
 * U[:, p0:p1] (81, pairs) = G g G^T for each pair, VL pairs in the lanes:
 * G down the filter's columns, then along the rows.  FILTER_RUN pairs
 * are made into a buffer in L1 and then copied to their 81 planes, a
 * run of whole cache lines each: stored vector by vector to the 81
 * planes, the stores took 65% of the time.  (As a GEMM of G (x) G
 * (81 x 9) by the filters, OpenBLAS zeroed U, then read and wrote it
 * again: 3.3 MB three times a step, 4-6% of a step at batch 64 for
 * 15 MFLOP.)
 */
#define FILTER_RUN (8 * VL)

void wino_filter(float *U, const float *w, long npairs, long p0, long p1)
{
    /* Thread-local rather than on the stack: on the stack conv3's U took
     * 0.156-0.164 ms against 0.142-0.145 (wino_rate, alternated). */
    static _Thread_local vf buf[FILTER_RUN / VL][WINO_P];

    for (long r = p0; r < p1; r += FILTER_RUN) {
        const long rn = p1 - r < FILTER_RUN ? p1 - r : FILTER_RUN;
        const int nv = (int)((rn + VL - 1) / VL);
        for (int v = 0; v < nv; v++) {
            const long p = r + (long)v * VL;
            filter_pairs(buf[v], w, p, p1 - p < VL ? (int)(p1 - p) : VL);
        }
        for (int x = 0; x < WINO_P; x++) {
            float *o = U + x * npairs + r;
            for (int v = 0; v < nv; v++) {
                const long k = rn - (long)v * VL;
                if (k >= VL)
                    vst(o + v * VL, buf[v][x]);
                else
                    memcpy(o + v * VL, &buf[v][x], (size_t)k * sizeof(float));
            }
        }
    }
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
 * dg = G^T dU G for each filter pair, in two halves (layer_wino.h):
 * wino_backward reduces each column of dU's 9 x 9 as the column's 9
 * products are made, E (3 x 9) = G^T dU (wino_filter_grad_column), and
 * wino_filter_grad makes dw = E G from E once a chunk.  VL pairs in the
 * lanes, one out-channel's run of a row's points read as one stream.  A
 * GEMM with 9 columns ran at 47 GFLOP/s here (OpenBLAS, one thread, 8192
 * pairs), and the backward makes one per chunk.  The copy out of the
 * lanes into the filters' order is a transpose in registers on AVX2 (as
 * 144 scalar copies it cost about what the arithmetic does).  With dU's
 * 81 planes apart (81, OC, C), their loads were 77% of the function's
 * samples, 81 streams that no prefetcher follows (bench/RESULTS.md,
 * session 24); with dU whole, (OC, 81, C), its 2.65 MB at conv3 went out
 * to L3 and back between the products and dg (session 29).
 */
/* gt9: per pair, the sum and difference and three multiply-adds; 9 of
 * them a pair for E, 3 for dw. */
double wino_filter_grad_column_flops(long pairs)
{
    return (double)pairs * WINO_PAIRS * (2 + 3 * 2);
}

double wino_filter_grad_flops(long pairs)
{
    return (double)pairs * 3 * WINO_PAIRS * (2 + 3 * 2);
}

/* d[x] for x < np = point x of pairs [p, p+n) (n <= VL; the lanes past n
 * zero) of a (OC, np, C): pair p's point x at a[(p / C * np + x) C + p % C]. */
static void pairs_load(vf *d, const float *a, int np, int C, long p, int n)
{
    if (n == VL && p % C + VL <= C) { /* the VL pairs in one row */
        const float *q = a + (p / C * np) * C + p % C;
        for (int x = 0; x < np; x++)
            d[x] = vld(q + (long)x * C);
    } else
        for (int x = 0; x < np; x++)
            for (int l = 0; l < VL; l++)
                d[x][l] = l < n ? a[((p + l) / C * np + x) * C + (p + l) % C] : 0.0f;
}

void wino_filter_grad_column(float *E, const float *col, int C, int OC, int k, float beta)
{
    const long P = (long)OC * C;

    for (long p = 0; p < P; p += VL) {
        const int n = P - p < VL ? (int)(P - p) : VL;
        const long oc = p / C, c = p % C;
        vf d[A], e[3];
        pairs_load(d, col, A, C, p, n);
        gt9(e, 1, d, 1);
        for (int i = 0; i < 3; i++) {
            if (n == VL && c + VL <= C) {
                float *o = E + (oc * WINO_E + i * A + k) * C + c;
                vst(o, beta == 0.0f ? e[i] : beta * vld(o) + e[i]);
                continue;
            }
            for (int l = 0; l < n; l++) {
                float *o = E + ((p + l) / C * WINO_E + i * A + k) * C + (p + l) % C;
                *o = beta == 0.0f ? e[i][l] : beta * *o + e[i][l];
            }
        }
    }
}

void wino_filter_grad(float *dw, const float *E, int C, long p0, long p1)
{
    for (long p = p0; p < p1; p += VL) {
        const int n = p1 - p < VL ? (int)(p1 - p) : VL;
        vf e[WINO_E], g[9];
        float t[9][VL];
        pairs_load(e, E, WINO_E, C, p, n);
        #pragma GCC unroll 3
        for (int r = 0; r < 3; r++) /* g (3 x 3) = e G */
            gt9(g + 3 * r, 1, e + A * r, 1);
#if defined(__AVX2__) && !defined(__AVX512F__)
        if (n == VL) { /* taps 0-7 of the 8 pairs transposed in registers */
            float *q = dw + p * 9;
            __m256 r[8];
            for (int k = 0; k < 8; k++)
                r[k] = (__m256)g[k];
            vec_transpose8(r);
            for (int l = 0; l < 8; l++) {
                _mm256_storeu_ps(q + l * 9, r[l]);
                q[l * 9 + 8] = g[8][l];
            }
            continue;
        }
#endif
        for (int k = 0; k < 9; k++)
            vst(t[k], g[k]);
        for (int l = 0; l < n; l++)
            for (int k = 0; k < 9; k++)
                dw[(p + l) * 9 + k] = t[k][l];
    }
}
