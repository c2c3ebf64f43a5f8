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

/* One output phase: zk = b + sum over t of w[t] * s_t, n values. */
static void phase_taps(float *restrict zk, const float *restrict s0, const float *restrict s1,
                       const float *restrict s2, const float *restrict s3,
                       const float *restrict s4, const float *restrict s5,
                       const float *restrict s6, const float *restrict s7,
                       const float *restrict s8, const float *restrict w, float b, int n)
{
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6],
                w7 = w[7], w8 = w[8];

    for (int q = 0; q < n; q++)
        zk[q] = b + w0 * s0[q] + w1 * s1[q] + w2 * s2[q] + w3 * s3[q] + w4 * s4[q] +
                w5 * s5[q] + w6 * s6[q] + w7 * s7[q] + w8 * s8[q];
}

/* Two output channels' phase, zk as phase_taps makes it, from one load of
 * each source: the 9 loads per 16 outputs were what bound phase_taps (the
 * stats pass took 0.27-0.29 ms a step at batch 64, 0.22-0.24 so). */
static void phase_taps2(float *restrict za, float *restrict zb, const float *restrict s0,
                        const float *restrict s1, const float *restrict s2,
                        const float *restrict s3, const float *restrict s4,
                        const float *restrict s5, const float *restrict s6,
                        const float *restrict s7, const float *restrict s8,
                        const float *restrict w, float ba, float bb, int n)
{
    const float a0 = w[0], a1 = w[1], a2 = w[2], a3 = w[3], a4 = w[4], a5 = w[5], a6 = w[6],
                a7 = w[7], a8 = w[8];
    const float c0 = w[9], c1 = w[10], c2 = w[11], c3 = w[12], c4 = w[13], c5 = w[14],
                c6 = w[15], c7 = w[16], c8 = w[17];

    for (int q = 0; q < n; q++) {
        const float v0 = s0[q], v1 = s1[q], v2 = s2[q], v3 = s3[q], v4 = s4[q], v5 = s5[q],
                    v6 = s6[q], v7 = s7[q], v8 = s8[q];
        za[q] = ba + a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3 + a4 * v4 + a5 * v5 + a6 * v6 +
                a7 * v7 + a8 * v8;
        zb[q] = bb + c0 * v0 + c1 * v1 + c2 * v2 + c3 * v3 + c4 * v4 + c5 * v5 + c6 * v6 +
                c7 * v7 + c8 * v8;
    }
}

void conv_phase_conv(float *z0, float *z1, const float *xq, const float *w, const float *b, int H,
                int W)
{
    const int n = (H / 2) * CONV_PHASE_Q;

    (void)W;
    for (int k = 0; k < 4; k++) {
        const float *s[9];
        phase_sources(s, xq, H, k);
        if (z1)
            phase_taps2(z0 + (size_t)k * n, z1 + (size_t)k * n, s[0], s[1], s[2], s[3], s[4],
                        s[5], s[6], s[7], s[8], w, b[0], b[1], n);
        else
            phase_taps(z0 + (size_t)k * n, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8],
                       w, b[0], n);
    }
}

/*
 * The sums below keep one float partial sum per column (lane l adds
 * column l of every row), which vectorises under strict float semantics
 * (see sums.h), and add only the valid columns l < PW at the end.  Rows
 * go two at a time: lanes l and l + Q are two SumVecs.
 */
_Static_assert(CONV_PHASE_Q == SUMVEC_LANES, "a phase row is one SumVec");

void conv_phase_stats(double acc[2], const float *restrict z, int H, int W)
{
    const int n = 4 * (H / 2) * CONV_PHASE_Q, PW = W / 2;
    SumVec s0 = {0}, s1 = {0}, q0 = {0}, q1 = {0};
    float s[2 * CONV_PHASE_Q], ss[2 * CONV_PHASE_Q];

    for (int i = 0; i < n; i += 2 * CONV_PHASE_Q) {
        SumVec v0 = SUMVEC_AT(z + i), v1 = SUMVEC_AT(z + i + CONV_PHASE_Q);
        s0 += v0;
        s1 += v1;
        q0 += v0 * v0;
        q1 += v1 * v1;
    }
    SUMVEC_AT(s) = s0;
    SUMVEC_AT(s + CONV_PHASE_Q) = s1;
    SUMVEC_AT(ss) = q0;
    SUMVEC_AT(ss + CONV_PHASE_Q) = q1;
    for (int l = 0; l < PW; l++) {
        acc[0] += s[l] + s[l + CONV_PHASE_Q];
        acc[1] += ss[l] + ss[l + CONV_PHASE_Q];
    }
}

/* a0, a1, a2 (2Q lanes each) += g * s0, g * s1, g * s2 over n floats,
 * two rows at a time: three taps share each load of g, and six
 * independent vector sums keep the adder busy (one tap alone waits on the
 * latency of its two). */
static void phase_dot3(float *restrict a0, float *restrict a1, float *restrict a2,
                       const float *restrict g, const float *restrict s0,
                       const float *restrict s1, const float *restrict s2, int n)
{
    SumVec t0 = SUMVEC_AT(a0), u0 = SUMVEC_AT(a0 + CONV_PHASE_Q);
    SumVec t1 = SUMVEC_AT(a1), u1 = SUMVEC_AT(a1 + CONV_PHASE_Q);
    SumVec t2 = SUMVEC_AT(a2), u2 = SUMVEC_AT(a2 + CONV_PHASE_Q);

    for (int i = 0; i < n; i += 2 * CONV_PHASE_Q) {
        SumVec g0 = SUMVEC_AT(g + i), g1 = SUMVEC_AT(g + i + CONV_PHASE_Q);
        t0 += g0 * SUMVEC_AT(s0 + i);
        u0 += g1 * SUMVEC_AT(s0 + i + CONV_PHASE_Q);
        t1 += g0 * SUMVEC_AT(s1 + i);
        u1 += g1 * SUMVEC_AT(s1 + i + CONV_PHASE_Q);
        t2 += g0 * SUMVEC_AT(s2 + i);
        u2 += g1 * SUMVEC_AT(s2 + i + CONV_PHASE_Q);
    }
    SUMVEC_AT(a0) = t0;
    SUMVEC_AT(a0 + CONV_PHASE_Q) = u0;
    SUMVEC_AT(a1) = t1;
    SUMVEC_AT(a1 + CONV_PHASE_Q) = u1;
    SUMVEC_AT(a2) = t2;
    SUMVEC_AT(a2 + CONV_PHASE_Q) = u2;
}

/* The valid columns of lanes a: l and l + Q for l < PW. */
static float phase_lanes(const float *a, int PW)
{
    float sum = 0.0f;

    for (int l = 0; l < PW; l++)
        sum += a[l] + a[l + CONV_PHASE_Q];
    return sum;
}

/* a (2Q lanes) += g over n floats, two rows at a time. */
static void phase_sum(float *restrict a, const float *restrict g, int n)
{
    SumVec t = SUMVEC_AT(a), u = SUMVEC_AT(a + CONV_PHASE_Q);

    for (int i = 0; i < n; i += 2 * CONV_PHASE_Q) {
        t += SUMVEC_AT(g + i);
        u += SUMVEC_AT(g + i + CONV_PHASE_Q);
    }
    SUMVEC_AT(a) = t;
    SUMVEC_AT(a + CONV_PHASE_Q) = u;
}

void conv_phase_dw(float *dw, float *db, const float *dz, const float *xq, int H, int W)
{
    const int n = (H / 2) * CONV_PHASE_Q, PW = W / 2;
    float a[10][2 * CONV_PHASE_Q] = {{0}};

    for (int k = 0; k < 4; k++) {
        const float *s[9];
        phase_sources(s, xq, H, k);
        for (int t = 0; t < 9; t += 3)
            phase_dot3(a[t], a[t + 1], a[t + 2], dz + (size_t)k * n, s[t], s[t + 1], s[t + 2], n);
    }
    phase_sum(a[9], dz, 4 * n);
    for (int t = 0; t < 9; t++)
        dw[t] += phase_lanes(a[t], PW);
    *db += phase_lanes(a[9], PW);
}
