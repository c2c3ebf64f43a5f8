/*
 * layer_maxpool.c: the fused BN-apply + ReLU + max-pool kernels.
 *
 * Shape letters as in layer_wino.h; PH = H/2, PW = W/2.  Every loop here
 * selects rather than branches, so that gcc vectorises it: the data
 * decides every comparison, and branches on it mispredict.  Channels-last,
 * the loops run over the channels of a window or position, contiguous in
 * memory: the channel rows they replaced had rows of 7 or 3 windows, which
 * needed offset tables and gathers or shuffles to fill a vector.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nn/sums.h"

#include "nn/layer_maxpool.h"

/*
 * relu(max(z)) = max(relu(z)), and while that maximum is positive the first
 * z equal to it is also the first maximum after ReLU, so a window is
 * reduced on z before the ReLU.
 */
static inline float max4(float a, float b, float c, float d)
{
    float m1 = a >= b ? a : b, m2 = c >= d ? c : d;
    return m1 >= m2 ? m1 : m2;
}

/* One window (a b / c d) of conv outputs: the pooled value, the index of
 * the first maximum, or MAXPOOL_NOGRAD, and y there.  The first maximum is
 * found by a chain of strict "<" that only ever moves to a later element
 * when it is larger; unlike a test of each element for equality with the
 * maximum, that needs no NaN check, so even gcc's scalar code selects
 * instead of branching (measured 1.6-1.8x faster in row loops). */
typedef struct Win {
    float o, y;
    int k;
} Win;

static inline Win pool_window(float ya, float yb, float yc, float yd, float sc, float sh)
{
    float a = ya * sc + sh, b = yb * sc + sh, c = yc * sc + sh, d = yd * sc + sh;
    float m = a, y = ya, k = 0.0f; /* k as a float: every lane the same width */

    y = m < b ? yb : y;
    k = m < b ? 1.0f : k;
    m = m < b ? b : m;
    y = m < c ? yc : y;
    k = m < c ? 2.0f : k;
    m = m < c ? c : m;
    y = m < d ? yd : y;
    k = m < d ? 3.0f : k;
    m = m < d ? d : m;
    return (Win){.o = m > 0.0f ? m : 0.0f, .y = y, .k = m > 0.0f ? (int)k : MAXPOOL_NOGRAD};
}

/* One window's C channels, corners a b / c d (C floats each). */
static void pool_channels_train(float *restrict o, uint8_t *restrict ix, float *restrict ym,
                                const float *restrict a, const float *restrict b,
                                const float *restrict c, const float *restrict d,
                                const float *restrict sc, const float *restrict sh, int C)
{
    for (int k = 0; k < C; k++) {
        Win w = pool_window(a[k], b[k], c[k], d[k], sc[k], sh[k]);
        o[k] = w.o;
        ix[k] = (uint8_t)w.k;
        ym[k] = w.y;
    }
}

static void pool_channels_eval(float *restrict o, const float *restrict a,
                               const float *restrict b, const float *restrict c,
                               const float *restrict d, const float *restrict sc,
                               const float *restrict sh, int C)
{
    for (int k = 0; k < C; k++) {
        float m = max4(a[k] * sc[k] + sh[k], b[k] * sc[k] + sh[k], c[k] * sc[k] + sh[k],
                       d[k] * sc[k] + sh[k]);
        o[k] = m > 0.0f ? m : 0.0f;
    }
}

void maxpool_forward(float *out, uint8_t *idx, float *ymax, const float *y, const float *scale,
                     const float *shift, int C, int H, int W, int n0, int nt)
{
    const int PH = H / 2, PW = W / 2;
    const size_t rs = (size_t)W * C;

    for (int n = n0; n < n0 + nt; n++)
        for (int ph = 0; ph < PH; ph++)
            for (int pw = 0; pw < PW; pw++) {
                const float *a = y + ((size_t)n * H + 2 * ph) * rs + (size_t)2 * pw * C;
                const size_t q = (((size_t)n * PH + ph) * PW + pw) * C;
                if (idx)
                    pool_channels_train(out + q, idx + q, ymax + q, a, a + C, a + rs, a + rs + C,
                                        scale, shift, C);
                else
                    pool_channels_eval(out + q, a, a + C, a + rs, a + rs + C, scale, shift, C);
            }
}

static void pool_phases_train(float *restrict o, uint8_t *restrict ix, float *restrict ym,
                              const float *restrict z0, const float *restrict z1,
                              const float *restrict z2, const float *restrict z3, int n,
                              float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        Win w = pool_window(z0[q], z1[q], z2[q], z3[q], sc, sh);
        o[q] = w.o;
        ix[q] = (uint8_t)w.k;
        ym[q] = w.y;
    }
}

static void pool_phases_eval(float *restrict o, const float *restrict z0,
                             const float *restrict z1, const float *restrict z2,
                             const float *restrict z3, int n, float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        float m = max4(z0[q] * sc + sh, z1[q] * sc + sh, z2[q] * sc + sh, z3[q] * sc + sh);
        o[q] = m > 0.0f ? m : 0.0f;
    }
}

void maxpool_forward_phases(float *out, uint8_t *idx, float *ymax, const float *z, int n,
                         float scale, float shift)
{
    const float *z1 = z + n, *z2 = z + 2 * (size_t)n, *z3 = z + 3 * (size_t)n;

    if (idx)
        pool_phases_train(out, idx, ymax, z, z1, z2, z3, n, scale, shift);
    else
        pool_phases_eval(out, z, z1, z2, z3, n, scale, shift);
}

void maxpool_backward_sums_rows(double *acc, const float *dout, const uint8_t *idx,
                                const float *ymax, const float *mean, const float *invstd,
                                int C, int N, int PHW, int n0, int nt)
{
    const long len = (long)nt * PHW;

    for (int c = 0; c < C; c++) {
        const size_t o = ((size_t)c * N + n0) * PHW;
        const float *restrict g = dout + o, *restrict ym = ymax + o;
        const uint8_t *restrict ix = idx + o;
        const float mu = mean[c];
        double s = 0.0, sx = 0.0;
        long i = 0;
        /* Lanes as in sums.h; a window without gradient adds zero. */
        while (len - i >= SUM_LANES) {
            float a[SUM_LANES] = {0}, b[SUM_LANES] = {0};
            long end = len - i > SUM_BLOCK ? i + SUM_BLOCK : len - (len - i) % SUM_LANES;
            for (; i < end; i += SUM_LANES)
                for (int k = 0; k < SUM_LANES; k++) {
                    float gk = ix[i + k] == MAXPOOL_NOGRAD ? 0.0f : g[i + k];
                    a[k] += gk;
                    b[k] += gk * (ym[i + k] - mu);
                }
            for (int k = 0; k < SUM_LANES; k++) {
                s += a[k];
                sx += b[k];
            }
        }
        for (; i < len; i++) { /* multiplied, not branched: the data is random */
            float gk = (float)(ix[i] != MAXPOOL_NOGRAD) * g[i];
            s += gk;
            sx += gk * (ym[i] - mu);
        }
        acc[2 * c] += s;
        acc[2 * c + 1] += sx * invstd[c];
    }
}

typedef int32_t PoolMask __attribute__((vector_size(4 * SUMVEC_LANES)));
typedef uint8_t PoolBytes8 __attribute__((vector_size(8)));
typedef int8_t PoolFlags8 __attribute__((vector_size(8)));
typedef int32_t PoolMask8 __attribute__((vector_size(32)));

/*
 * -1 in the lanes of the 8 window indices at p that are k, else 0:
 * compared as bytes, then widened.  The int32 lanes widened first, or the
 * second 8 of 16 bytes widened, gcc built lane by lane through the stack
 * (cmpb, vpextrb, vpinsrd); 8 bytes compared and widened are vmovq,
 * vpcmpeqb, vpmovsxbd (bench/RESULTS.md, session 26).
 */
static inline PoolMask8 pool_eq8(const uint8_t *p, uint8_t k)
{
    PoolBytes8 b;

    memcpy(&b, p, sizeof b);
    return __builtin_convertvector((PoolFlags8)(b == k), PoolMask8);
}

/* The same for 16 indices (the sums' SumVec lanes, as many). */
typedef int32_t PoolMask16 __attribute__((vector_size(64)));
_Static_assert(SUMVEC_LANES == 16, "maxpool_backward_sums's masks are pool_eq16's");
static inline PoolMask16 pool_eq16(const uint8_t *p, uint8_t k)
{
    return __builtin_shufflevector(pool_eq8(p, k), pool_eq8(p + 8, k), 0, 1, 2, 3, 4, 5, 6, 7, 8,
                                   9, 10, 11, 12, 13, 14, 15);
}

/* a where m is set, else b, lane by lane. */
static inline SumVec pool_sel(PoolMask m, SumVec a, SumVec b)
{
    return (SumVec)(((PoolMask)a & m) | ((PoolMask)b & ~m));
}

void maxpool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
                           const float *ymax, const float *mean, const float *invstd, int C,
                           int PHW, int n0, int nt)
{
    const long len = (long)nt * PHW, o = (long)n0 * PHW * C;
    const int nv = (C + SUMVEC_LANES - 1) / SUMVEC_LANES;
    SumVecD s[2 * SUM_MAX_VECS] = {{0}}, x[2 * SUM_MAX_VECS] = {{0}};
    SumVec mu[SUM_MAX_VECS];

    assert(nv <= SUM_MAX_VECS);
    for (int v = 0; v < nv; v++) {
        const int c0 = v * SUMVEC_LANES;
        sums_load_n(&mu[v], mean + c0, C - c0 < SUMVEC_LANES ? C - c0 : SUMVEC_LANES);
    }
    for (long q0 = 0; q0 < len; q0 += SUM_SPAN) {
        const long q1 = len - q0 < SUM_SPAN ? len : q0 + SUM_SPAN;
        SumVec a[SUM_MAX_VECS] = {{0}}, b[SUM_MAX_VECS] = {{0}};
        for (long q = q0; q < q1; q++)
            for (int v = 0; v < nv; v++) {
                const int c0 = v * SUMVEC_LANES;
                const int nc = C - c0 < SUMVEC_LANES ? C - c0 : SUMVEC_LANES;
                const long i = o + q * C + c0;
                SumVec g, ym, zero = {0};
                uint8_t part[SUMVEC_LANES] = {0};
                const uint8_t *kb = idx + i;
                sums_load_n(&g, dout + i, nc);
                sums_load_n(&ym, ymax + i, nc);
                if (nc < SUMVEC_LANES) /* the lanes past C: g is 0 there */
                    kb = memcpy(part, idx + i, (size_t)nc);
                /* a window without gradient adds zero */
                const PoolMask on = ~pool_eq16(kb, MAXPOOL_NOGRAD);
                const SumVec gk = pool_sel(on, g, zero);
                a[v] += gk;
                b[v] += gk * (ym - mu[v]);
            }
        for (int v = 0; v < nv; v++) {
            sums_fold(&s[2 * v], &s[2 * v + 1], &a[v]);
            sums_fold(&x[2 * v], &x[2 * v + 1], &b[v]);
        }
    }
    for (int v = 0; v < nv; v++) {
        const int c0 = v * SUMVEC_LANES, nc = C - c0 < SUMVEC_LANES ? C - c0 : SUMVEC_LANES;
        sums_add_lanes(acc + 2 * c0, 2, &s[2 * v], &s[2 * v + 1], nc, NULL);
        sums_add_lanes(acc + 2 * c0 + 1, 2, &x[2 * v], &x[2 * v + 1], nc, invstd + c0);
    }
}

/*
 * maxpool_backward's per-channel factors, made once a call: gcc left
 * the loop that made them at every position scalar (28 vmulss for 4 ymm
 * instructions), and the unpool was 7% of a step at batch 64 (session 22).
 * The loop over a position's channels runs on vectors one register wide.
 */
#define UP_LANES REG_FLOATS
typedef float UpVec __attribute__((vector_size(4 * UP_LANES)));
typedef int32_t UpMask __attribute__((vector_size(4 * UP_LANES)));
typedef uint8_t UpBytes __attribute__((vector_size(UP_LANES)));
typedef int8_t UpFlags __attribute__((vector_size(UP_LANES)));
#define UP_MAX_C 128

typedef struct UnpoolK {
    float k1[UP_MAX_C], a[UP_MAX_C], bx[UP_MAX_C], mean[UP_MAX_C], invstd[UP_MAX_C];
} UnpoolK;

static inline UpVec up_ld(const float *p)
{
    UpVec v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* One position's C channels in place, y in and dy out: the mean terms,
 * plus k1*g where the position is its window's maximum (place kp there);
 * g NULL for a position in no window (an odd last row or column). */
static void unpool_channels(float *restrict d, const float *restrict g,
                            const uint8_t *restrict ix, int kp, const UnpoolK *restrict f, int C)
{
    int k = 0;

    for (; k + UP_LANES <= C; k += UP_LANES) {
        const UpVec y = up_ld(d + k);
        UpVec v = up_ld(f->a + k) +
                  up_ld(f->bx + k) * ((y - up_ld(f->mean + k)) * up_ld(f->invstd + k));
        if (g) {
#if UP_LANES == 16
            const UpMask at = pool_eq16(ix + k, (uint8_t)kp);
#elif UP_LANES == 8
            const UpMask at = pool_eq8(ix + k, (uint8_t)kp);
#else
            UpBytes kb;
            memcpy(&kb, ix + k, sizeof kb);
            const UpMask at = __builtin_convertvector((UpFlags)(kb == (uint8_t)kp), UpMask);
#endif
            v += (UpVec)((UpMask)(up_ld(f->k1 + k) * up_ld(g + k)) & at);
        }
        memcpy(d + k, &v, sizeof v);
    }
    for (; k < C; k++)
        d[k] = f->a[k] + f->bx[k] * ((d[k] - f->mean[k]) * f->invstd[k]) +
               (g && ix[k] == kp ? f->k1[k] * g[k] : 0.0f);
}

void maxpool_backward(float *yd, const float *dout, const uint8_t *idx, const float *gamma,
                      const float *mean, const float *invstd, const float *mdz,
                      const float *mdzx, int C, int H, int W, int n0, int nt)
{
    const int PH = H / 2, PW = W / 2;
    UnpoolK f;

    assert(C <= UP_MAX_C);
    for (int k = 0; k < C; k++) {
        f.k1[k] = gamma[k] * invstd[k];
        f.a[k] = -f.k1[k] * mdz[k];
        f.bx[k] = -f.k1[k] * mdzx[k];
        f.mean[k] = mean[k];
        f.invstd[k] = invstd[k];
    }
    for (int n = n0; n < n0 + nt; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                float *d = yd + (((size_t)n * H + h) * W + w) * C;
                const size_t q = (((size_t)n * PH + h / 2) * PW + w / 2) * C;
                const int in = h < 2 * PH && w < 2 * PW;
                unpool_channels(d, in ? dout + q : NULL, in ? idx + q : NULL,
                                2 * (h & 1) + (w & 1), &f, C);
            }
}
