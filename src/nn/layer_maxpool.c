/*
 * layer_maxpool.c: the fused BN-apply + ReLU + max-pool kernels.
 *
 * Shape letters as in layer_wino.h; PH = H/2, PW = W/2.  Every loop here is
 * flat over windows or positions (through offset tables where the layout
 * has rows) and selects rather than branches, so that gcc vectorises it:
 * the data decides every comparison, and branches on it mispredict.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>
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

void maxpool_tables_init(MaxpoolTables *t, int H, int W)
{
    const int PH = H / 2, PW = W / 2, PHW = PH * PW, HW = H * W;

    assert(HW >= 1 && HW <= MAXPOOL_MAX_PLANE);
    memset(t, 0, sizeof *t);
    t->H = H;
    t->W = W;
    t->G = MAXPOOL_MAX_PLANE / HW;
    for (int g = 0; g < t->G; g++) {
        for (int q = 0; q < PHW; q++)
            t->off[g * PHW + q] = g * HW + 2 * (q / PW) * W + 2 * (q % PW);
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                int in = h < 2 * PH && w < 2 * PW, p = g * HW + h * W + w;
                t->win[p] = g * PHW + (in ? (h / 2) * PW + w / 2 : 0);
                t->kp[p] = in ? (float)(2 * (h & 1) + (w & 1)) : 9.0f;
            }
    }
}

static void pool_plane_train(float *restrict o, uint8_t *restrict ix, float *restrict ym,
                             const float *restrict y, const int *restrict off, int n, int W,
                             float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        const int p = off[q];
        Win w = pool_window(y[p], y[p + 1], y[p + W], y[p + W + 1], sc, sh);
        o[q] = w.o;
        ix[q] = (uint8_t)w.k;
        ym[q] = w.y;
    }
}

static void pool_plane_eval(float *restrict o, const float *restrict y,
                            const int *restrict off, int n, int W, float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        const int p = off[q];
        float m = max4(y[p] * sc + sh, y[p + 1] * sc + sh, y[p + W] * sc + sh,
                       y[p + W + 1] * sc + sh);
        o[q] = m > 0.0f ? m : 0.0f;
    }
}

/*
 * Planes of even H and W <= SUMVEC_LANES: a pair of rows is two vectors,
 * and their even and odd columns two shuffles of them, so a window's four
 * elements are four lanes and no load is a gather (Zen 4 gathers made the
 * table loops cost 1.6 ns a window in L1 and 4.6 from memory).  Lanes
 * 0..7 of each half-result hold the top row's windows and lanes 8..15 the
 * bottom row's.  The first maximum is found as pool_window finds it:
 * within each row's pair the left one wins a tie, then the top row.
 */
typedef int32_t PoolMask __attribute__((vector_size(4 * SUMVEC_LANES)));
typedef uint8_t PoolBytes __attribute__((vector_size(SUMVEC_LANES)));

#define POOL_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define POOL_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define POOL_SWAP 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7

/* a where m is set, else b, lane by lane. */
static inline SumVec pool_sel(PoolMask m, SumVec a, SumVec b)
{
    return (SumVec)(((PoolMask)a & m) | ((PoolMask)b & ~m));
}

/* The PW windows of rows r0 and r1 (W floats each, 16 readable at each).
 * n: how many outputs to write, PW or, where the next pair's outputs
 * follow, a fixed POOL_STORE (one vector store; a copy of PW values was a
 * call to memcpy). */
#define POOL_STORE (SUMVEC_LANES / 2)

static inline void pool_pair(float *o, uint8_t *ix, float *ym, const float *r0, const float *r1,
                             int n, float sc, float sh)
{
    const SumVec t = SUMVEC_AT(r0), b = SUMVEC_AT(r1), zero = {0}, one = zero + 1.0f;
    const SumVec e = __builtin_shufflevector(t, b, POOL_EVEN);
    const SumVec d = __builtin_shufflevector(t, b, POOL_ODD);
    const SumVec ea = e * sc + sh, da = d * sc + sh;
    const PoolMask right = ea < da;
    const SumVec hm = pool_sel(right, da, ea), hy = pool_sel(right, d, e);
    const SumVec hk = pool_sel(right, one, zero);
    const SumVec bm = __builtin_shufflevector(hm, hm, POOL_SWAP);
    const SumVec by = __builtin_shufflevector(hy, hy, POOL_SWAP);
    const SumVec bk = __builtin_shufflevector(hk, hk, POOL_SWAP);
    const PoolMask low = hm < bm, pos = pool_sel(low, bm, hm) > zero;
    const SumVec m = pool_sel(low, bm, hm), k = pool_sel(low, bk + 2.0f, hk);
    float lane[SUMVEC_LANES] = {0}; /* zeroed for the analyser: written whole below */

    SUMVEC_AT(lane) = pool_sel(pos, m, zero);
    memcpy(o, lane, (size_t)n * sizeof *o);
    if (!ix || !ym) /* evaluation: both NULL */
        return;
    SUMVEC_AT(lane) = pool_sel(low, by, hy);
    memcpy(ym, lane, (size_t)n * sizeof *ym);
    PoolBytes kb = __builtin_convertvector(
        __builtin_convertvector(pool_sel(pos, k, zero + (float)MAXPOOL_NOGRAD), PoolMask),
        PoolBytes);
    memcpy(ix, &kb, (size_t)n);
}

/* The np row pairs from y (np, 2, W) into o, ix, ym (np, PW); ix and ym
 * NULL in evaluation; PW <= POOL_STORE.  A pair's fixed-size stores run
 * into the next pair's outputs, which are written after, so the last pair
 * writes its PW alone, and reads through a copy: its 16-float loads
 * would read past y. */
static void pool_pairs(float *o, uint8_t *ix, float *ym, const float *y, int np, int W, float sc,
                       float sh)
{
    const int PW = W / 2;
    float last[4 * SUMVEC_LANES] = {0};

    for (int r = 0; r + 1 < np; r++) {
        const size_t q = (size_t)r * PW;
        pool_pair(o + q, ix ? ix + q : NULL, ym ? ym + q : NULL, y + 2 * q * 2,
                  y + 2 * q * 2 + W, POOL_STORE, sc, sh);
    }
    const size_t q = (size_t)(np - 1) * PW;
    memcpy(last, y + 4 * q, 2 * (size_t)W * sizeof *y);
    pool_pair(o + q, ix ? ix + q : NULL, ym ? ym + q : NULL, last, last + W, PW, sc, sh);
}

void maxpool_forward(float *out, uint8_t *idx, float *ymax, const float *y, const float *scale,
                  const float *shift, int C, int N, const MaxpoolTables *t, int n0, int nt)
{
    const int W = t->W, HW = t->H * W, PHW = (t->H / 2) * (W / 2), G = t->G;

    if (t->H % 2 == 0 && W % 2 == 0 && W / 2 <= POOL_STORE && nt > 0) {
        for (int c = 0; c < C; c++) {
            size_t po = ((size_t)c * N + n0) * PHW;
            pool_pairs(out + po, idx ? idx + po : NULL, idx ? ymax + po : NULL,
                       y + ((size_t)c * N + n0) * HW, nt * (t->H / 2), W, scale[c], shift[c]);
        }
        return;
    }
    for (int c = 0; c < C; c++)
        for (int n = n0; n < n0 + nt; n += G) {
            const int nq = (n0 + nt - n < G ? n0 + nt - n : G) * PHW;
            size_t po = ((size_t)c * N + n) * PHW;
            const float *yp = y + ((size_t)c * N + n) * HW;
            if (idx)
                pool_plane_train(out + po, idx + po, ymax + po, yp, t->off, nq, W, scale[c],
                                 shift[c]);
            else
                pool_plane_eval(out + po, yp, t->off, nq, W, scale[c], shift[c]);
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

void maxpool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
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

/* One pair of rows (2ph, 2ph+1) of dy: the mean terms everywhere, plus
 * k1*g at each window's maximum. */
/* One plane in place, y in and dy out, flat over its positions with the
 * window's gradient and index loaded through win (MaxpoolTables).  The
 * indices go to floats first (kf, one per window): a byte cannot be
 * gathered, and a float keeps every lane the same width. */
static void unpool_plane(float *restrict d, const float *restrict g,
                         const uint8_t *restrict ix, float *restrict kf,
                         const int *restrict win, const float *restrict kp, int n, int nw,
                         float a, float bx, float mu, float is, float k1)
{
    for (int q = 0; q < nw; q++)
        kf[q] = (float)ix[q];
    for (int p = 0; p < n; p++) {
        const int q = win[p];
        const float gq = g[q], kq = kf[q]; /* loaded always: no masked gather */
        d[p] = a + bx * ((d[p] - mu) * is) + (kq == kp[p] ? k1 * gq : 0.0f);
    }
}

/* One channel's BN backward constants (maxpool_backward). */
typedef struct PoolBack {
    float a, bx, mu, is, k1;
} PoolBack;

/* One row of dy from y, its windows' gradients and phases each repeated
 * twice (ge, ke), and the phase of each column in its window (kp). */
static inline SumVec unpool_row(SumVec y, SumVec ge, SumVec ke, SumVec kp, const PoolBack *c)
{
    const SumVec zero = {0};

    return c->a + c->bx * ((y - c->mu) * c->is) + pool_sel(ke == kp, c->k1 * ge, zero);
}

#define POOL_TWICE 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7

/*
 * maxpool_backward of the np row pairs of yd (np, 2, W), from g and ix
 * (np, PW), PW <= POOL_STORE, np * PW <= MAXPOOL_MAX_PLANE / 4: the mirror
 * of pool_pairs.  In place, so each row's 16-lane store, which runs two
 * floats into the next row, comes after that row is loaded: the next
 * pair's top row is loaded before this pair's bottom row is stored; the
 * last pair stores W floats a row.  g and the phases (as floats: a byte
 * vector converts one byte at a time) are copied first, with room for the
 * 16-lane loads.
 */
static void unpool_pairs(float *yd, const float *g, const uint8_t *ix, int np, int W,
                         const PoolBack *c)
{
    const int PW = W / 2, nq = np * PW;
    const SumVec kpt = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, kpb = kpt + 2.0f;
    float gb[MAXPOOL_MAX_PLANE / 4 + SUMVEC_LANES] = {0};
    float kf[MAXPOOL_MAX_PLANE / 4 + SUMVEC_LANES] = {0};
    float last[2 * SUMVEC_LANES] = {0};

    memcpy(gb, g, (size_t)nq * sizeof *g);
    for (int q = 0; q < nq; q++)
        kf[q] = (float)ix[q];
    SumVec t = SUMVEC_AT(yd);
    for (int r = 0; r < np; r++) {
        float *r0 = yd + (size_t)r * 2 * W, *r1 = r0 + W;
        const SumVec gv = SUMVEC_AT(gb + r * PW), kv = SUMVEC_AT(kf + r * PW);
        const SumVec ge = __builtin_shufflevector(gv, gv, POOL_TWICE);
        const SumVec ke = __builtin_shufflevector(kv, kv, POOL_TWICE);
        if (r + 1 == np) {
            memcpy(last, r1, (size_t)W * sizeof *r1);
            SUMVEC_AT(last) = unpool_row(SUMVEC_AT(last), ge, ke, kpb, c);
            SUMVEC_AT(last + SUMVEC_LANES) = unpool_row(t, ge, ke, kpt, c);
            memcpy(r0, last + SUMVEC_LANES, (size_t)W * sizeof *r0);
            memcpy(r1, last, (size_t)W * sizeof *r1);
            break;
        }
        const SumVec b = SUMVEC_AT(r1), tn = SUMVEC_AT(r1 + W);
        SUMVEC_AT(r0) = unpool_row(t, ge, ke, kpt, c);
        SUMVEC_AT(r1) = unpool_row(b, ge, ke, kpb, c);
        t = tn;
    }
}

void maxpool_backward(float *yd, const float *dout, const uint8_t *idx, const float *gamma,
                   const float *mean, const float *invstd, const float *mdz, const float *mdzx,
                   int C, int N, const MaxpoolTables *t, int n0, int nt)
{
    const int HW = t->H * t->W, PHW = (t->H / 2) * (t->W / 2), G = t->G;
    /* zeroed for the analyser: only the filled prefix is read */
    float kf[MAXPOOL_MAX_PLANE / 4] = {0};
    const float none = 0.0f;

    const int pairs = t->H % 2 == 0 && t->W % 2 == 0 && t->W / 2 <= POOL_STORE;

    for (int c = 0; c < C; c++) {
        const float k1 = gamma[c] * invstd[c];
        const float a = -k1 * mdz[c], bx = -k1 * mdzx[c];
        const PoolBack pc = {a, bx, mean[c], invstd[c], k1};
        for (int n = n0; n < n0 + nt; n += G) {
            const int g = n0 + nt - n < G ? n0 + nt - n : G;
            size_t o = (size_t)c * N + n;
            if (pairs) {
                unpool_pairs(yd + o * HW, dout + o * PHW, idx + o * PHW, g * (t->H / 2), t->W,
                             &pc);
                continue;
            }
            /* A plane of under 2 x 2 has no window: every kp is 9, and the
             * loads through win read a zero in place of a gradient. */
            unpool_plane(yd + o * HW, PHW ? dout + o * PHW : &none, idx + o * PHW, kf, t->win,
                         t->kp, g * HW, g * PHW, a, bx, mean[c], invstd[c], k1);
        }
    }
}
