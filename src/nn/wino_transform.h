/*
 * wino_transform.h: the Winograd F(7x7, 3x3) tile transforms, 1-D over
 * 9 (or 7) vectors `is` apart, then 2-D over a vector of a tile's channels (VL)
 * (private to layer_wino.c, and bench/wino_rate.c, which times them alone;
 * inline, so that each call site unrolls them).
 * The matrices and the points they come from are below; layer_wino.h
 * gives the algorithm.
 */
#ifndef CNNTOP_WINO_TRANSFORM_H
#define CNNTOP_WINO_TRANSFORM_H

#include "nn/wino_vec.h"

/*
 * The interpolation points: +-p for the four p of WP, in the order
 * (+p0, -p0, +p1, -p1, ...), then infinity (point 8).  Symmetric pairs
 * let each 1-D transform split into even and odd parts, about half the
 * multiply-adds of a dense 9 x 9 matrix.  Of the symmetric sets of
 * simple fractions tried, (1, 2, 1/4, 3/4) rounds least in float: 1.7e-5
 * of a 7 x 7 tile's largest output over 64 channels, where F(4x4, 3x3)'s
 * (0, +-1, +-2) gave 2.6e-6 and (1, 2, 1/2, 3) 5e-4 (bench/RESULTS.md,
 * session 17).
 *
 * With a_j the points, the Toom-Cook matrices are
 *   A^T (7 x 9): a_j^i, and 1 at (6, 8);
 *   B^T (9 x 9): row j the coefficients of prod over l != j of (x - a_l),
 *                row 8 those of prod over all l;
 *   G   (9 x 3): row j (1, a_j, a_j^2) / prod over l != j of (a_j - a_l),
 *                row 8 (0, 0, 1).
 * For the pair +-p, prod over l != +-p of (x - a_l) = (x +- p) S(x), S
 * the product of (x^2 - q^2) over the other three pairs: its odd
 * coefficients are S's, its even ones +-p times S's.  WC holds S's
 * coefficients of x^0, x^2, x^4, x^6 for each pair, WE those of x^0 ...
 * x^8 of the product over all eight points; both are exact in float.
 * G's row for +p divides by 2 p prod (p^2 - q^2), the -p row by its
 * negative (WG, with the filters, in double).
 */
static const float WP[WINO_PAIRS] = {1.0f, 2.0f, 0.25f, 0.75f};
static const float WC[WINO_PAIRS][4] = {{-9.0f / 64, 649.0f / 256, -37.0f / 8, 1.0f},
                                        {-9.0f / 256, 169.0f / 256, -13.0f / 8, 1.0f},
                                        {-9.0f / 4, 109.0f / 16, -89.0f / 16, 1.0f},
                                        {-1.0f / 4, 69.0f / 16, -81.0f / 16, 1.0f}};
static const float WE[5] = {9.0f / 64, -685.0f / 256, 1833.0f / 256, -45.0f / 8, 1.0f};

/* p^i: the entries of A^T for the point p. */
static inline float wpow(int k, int i)
{
    float v = 1.0f;

    for (int n = 0; n < i; n++)
        v *= WP[k];
    return v;
}

/* o = B^T i. */
static inline void bt9(vf *o, int os, const vf *i, int is)
{
    vf last = WE[4] * i[8 * is];

    #pragma GCC unroll 4
    for (int m = 0; m < 4; m++)
        last += WE[m] * i[2 * m * is];
    #pragma GCC unroll 4
    for (int k = 0; k < WINO_PAIRS; k++) {
        vf e = WC[k][0] * i[0], d = WC[k][0] * i[is];
        #pragma GCC unroll 3
        for (int m = 1; m < 4; m++) {
            e += WC[k][m] * i[2 * m * is];
            d += WC[k][m] * i[(2 * m + 1) * is];
        }
        o[2 * k * os] = d + WP[k] * e;
        o[(2 * k + 1) * os] = d - WP[k] * e;
    }
    o[8 * os] = last;
}

/* o = B i: the adjoint of bt9. */
static inline void b9(vf *o, int os, const vf *i, int is)
{
    vf s[WINO_PAIRS], t[WINO_PAIRS];

    #pragma GCC unroll 4
    for (int k = 0; k < WINO_PAIRS; k++) {
        s[k] = i[2 * k * is] + i[(2 * k + 1) * is];
        t[k] = WP[k] * (i[2 * k * is] - i[(2 * k + 1) * is]);
    }
    #pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        vf odd = WC[0][m] * s[0], even = WE[m] * i[8 * is];
        #pragma GCC unroll 4
        for (int k = 1; k < WINO_PAIRS; k++)
            odd += WC[k][m] * s[k];
        #pragma GCC unroll 4
        for (int k = 0; k < WINO_PAIRS; k++)
            even += WC[k][m] * t[k];
        o[2 * m * os] = even;
        o[(2 * m + 1) * os] = odd;
    }
    o[8 * os] = WE[4] * i[8 * is];
}

/* o (7) = A^T i (9). */
static inline void at9(vf *o, int os, const vf *i, int is)
{
    vf s[WINO_PAIRS], d[WINO_PAIRS];

    #pragma GCC unroll 4
    for (int k = 0; k < WINO_PAIRS; k++) {
        s[k] = i[2 * k * is] + i[(2 * k + 1) * is];
        d[k] = i[2 * k * is] - i[(2 * k + 1) * is];
    }
    #pragma GCC unroll 7
    for (int r = 0; r < M; r++) {
        const vf *u = r % 2 ? d : s;
        vf v = r == M - 1 ? i[8 * is] : (vf){0};
        #pragma GCC unroll 4
        for (int k = 0; k < WINO_PAIRS; k++)
            v += wpow(k, r) * u[k];
        o[r * os] = v;
    }
}

/* o (9) = A i (7): the adjoint of at9. */
static inline void a9(vf *o, int os, const vf *i, int is)
{
    #pragma GCC unroll 4
    for (int k = 0; k < WINO_PAIRS; k++) {
        vf e = i[0], d = WP[k] * i[is];
        #pragma GCC unroll 5
        for (int r = 2; r < M; r++) {
            if (r % 2)
                d += wpow(k, r) * i[r * is];
            else
                e += wpow(k, r) * i[r * is];
        }
        o[2 * k * os] = e + d;
        o[(2 * k + 1) * os] = e - d;
    }
    o[8 * os] = i[(M - 1) * is];
}

/*
 * The 2-D transforms of VL of one tile's channels, each a pass of the 1-D
 * transform down the columns and one along the rows.  The first pass
 * transforms each column (or row) as it is loaded and the second stores
 * each row (or column) as it is made, straight from and to the planes and
 * the images: only the 9 x 9 between the passes goes through the stack.
 * Loading all 81 points into an array first, and storing from another,
 * spilled both and cost 1.1-1.25x as much (bench/RESULTS.md, session 18).
 * The planes' points are pt = 9 r + k, pl floats apart from p.
 */

/* col[r] = point (r, k) of the planes at p. */
static inline void plane_column(vf col[A], const float *p, long pl, int k)
{
    #pragma GCC unroll 9
    for (int r = 0; r < A; r++)
        col[r] = vld(p + (A * r + k) * pl);
}

/* V's 81 points at v = B^T d B of the 9 x 9 patch at d (rows rs, columns
 * cs floats apart). */
static inline void tile_input(float *restrict v, long pl, const float *restrict d, long rs,
                              long cs)
{
    vf e[WINO_P];

    #pragma GCC unroll 9
    for (int k = 0; k < A; k++) {
        vf col[A];
        #pragma GCC unroll 9
        for (int r = 0; r < A; r++)
            col[r] = vld(d + r * rs + k * cs);
        bt9(e + k, A, col, 1);
    }
    #pragma GCC unroll 9
    for (int r = 0; r < A; r++) {
        vf row[A];
        bt9(row, 1, e + A * r, 1);
        #pragma GCC unroll 9
        for (int k = 0; k < A; k++)
            vst(v + (A * r + k) * pl, row[k]);
    }
}

/* The 9 x 9 patch at d (rows rs, columns cs floats apart) = B v B^T, the
 * adjoint of tile_input, added to what is there in the first ra rows and
 * the first ka columns (where the tiles above and to the left wrote). */
static inline void tile_input_adj(float *restrict d, long rs, long cs, int ra, int ka,
                                  const float *restrict v, long pl)
{
    vf e[WINO_P];

    #pragma GCC unroll 9
    for (int k = 0; k < A; k++) {
        vf col[A];
        plane_column(col, v, pl, k);
        b9(e + k, A, col, 1);
    }
    #pragma GCC unroll 9
    for (int r = 0; r < A; r++) {
        vf row[A];
        b9(row, 1, e + A * r, 1);
        #pragma GCC unroll 9
        for (int k = 0; k < A; k++) {
            float *q = d + r * rs + k * cs;
            vst(q, r < ra || k < ka ? vld(q) + row[k] : row[k]);
        }
    }
}

/* The 7 x 7 outputs at o (rows rs, columns cs floats apart) = A^T m A +
 * bv, m's 81 points at m; *s1 += the sum of the 49 outputs, *s2 += the
 * sum of their squares (BatchNorm's statistics, as the outputs are made). */
static inline void tile_output_sums(float *restrict o, long rs, long cs, const float *restrict m,
                                    long pl, vf bv, vf *s1, vf *s2)
{
    vf s[M * A], a1 = {0}, a2 = {0};

    #pragma GCC unroll 9
    for (int k = 0; k < A; k++) {
        vf col[A];
        plane_column(col, m, pl, k);
        at9(s + k, A, col, 1);
    }
    #pragma GCC unroll 7
    for (int a = 0; a < M; a++) {
        vf row[M];
        at9(row, 1, s + A * a, 1);
        #pragma GCC unroll 7
        for (int k = 0; k < M; k++) {
            const vf v = row[k] + bv;
            vst(o + a * rs + k * cs, v);
            a1 += v;
            a2 += v * v;
        }
    }
    *s1 += a1;
    *s2 += a2;
}

/* m's 81 points at m = A d A^T, the adjoint of tile_output_sums, of the 7 x 7
 * at src[7 a + k] + c0; returns point WINO_SUM_POINT, the sum of the 49. */
static inline vf tile_output_adj(float *restrict m, long pl, const float *const src[M * M],
                                 int c0)
{
    vf s[M * A], sum = {0};

    #pragma GCC unroll 7
    for (int a = 0; a < M; a++) {
        vf row[M];
        #pragma GCC unroll 7
        for (int k = 0; k < M; k++)
            row[k] = vld(src[M * a + k] + c0);
        a9(s + A * a, 1, row, 1);
    }
    #pragma GCC unroll 9
    for (int k = 0; k < A; k++) {
        vf col[A];
        a9(col, 1, s + k, A);
        #pragma GCC unroll 9
        for (int r = 0; r < A; r++)
            vst(m + (A * r + k) * pl, col[r]);
        if (k == WINO_SUM_POINT % A)
            sum = col[WINO_SUM_POINT / A];
    }
    return sum;
}

#endif
