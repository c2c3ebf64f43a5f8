/*
 * layer_wino.c: 3x3 convolution by Winograd F(7x7, 3x3) (layer_wino.h).
 *
 * Channels-last inside a group: the group's images are copied into
 * padded buffers of (row, column, channel), a row at a time or, from
 * channel rows, by 16 x 16 transposes in registers, and the transforms
 * then run tile by tile on vectors of 16 channels (GNU C
 * vectors: one AVX-512 register, two AVX2 ones), every load and store
 * contiguous.  The channel-major tiles they replaced put consecutive tiles
 * in the lanes, 4 columns apart, and loaded them by gathers: the
 * transforms cost more than the products (F(4x4, 3x3)'s conv2 forward
 * 1.3-1.5 ms against 1.03, one thread, batch 64; bench/RESULTS.md,
 * session 13).
 */
#include <assert.h>
#include <string.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include "nn/vec_transpose.h"
#endif

#include "nn/gemm.h"
#include "nn/layer_wino.h"

#define M WINO_M
#define A WINO_A
#define VL 16 /* floats a vector: channels at a point */

typedef float vf __attribute__((vector_size(VL * sizeof(float))));

static inline vf vld(const float *p)
{
    vf v;

    memcpy(&v, p, sizeof v);
    return v;
}

static inline void vst(float *p, vf v)
{
    memcpy(p, &v, sizeof v);
}

/* n rounded up to whole vectors. */
static int pad_vl(int n)
{
    return (n + VL - 1) / VL * VL;
}

static int tiles_across(int n)
{
    return (n + M - 1) / M;
}

int wino_tiles(int H, int W)
{
    return tiles_across(H) * tiles_across(W);
}

void wino_shape_init(WinoShape *s, int H, int W, int cap)
{
    assert(H >= 1 && W >= 1 && cap >= 1);
    s->H = H;
    s->W = W;
    s->TI = tiles_across(H);
    s->TJ = tiles_across(W);
    s->TT = s->TI * s->TJ;
    s->PH = M * s->TI + 2;
    s->PW = M * s->TJ + 2;
    s->cap = cap;
}

/*
 * The distance between two of the 81 planes of an array (T x rows): a
 * cache line more than the plane.  A transform writes or reads one vector
 * in each of the 81 planes at once; T * rows is often a multiple of 4 KiB
 * (F(4x4, 3x3)'s conv2 V at 8 images: 128 x 32 floats), and at such a
 * distance all 81 lines fall in one set of the L1 cache, which holds 12.
 */
static long plane_stride(int rows, long T)
{
    return pad_vl(rows) * T + VL;
}

/*
 * The scratch of a group, in floats, each region a whole number of
 * vectors:
 *   R1  V, then dV (81 planes);
 *   R2  the padded input of the group channels-last, then M or DY (81
 *       planes); in the backward, after the products, dx padded;
 *   R3  one image's y or dy on the tile grid, channels-last (dy only
 *       where OC is not whole vectors; else its first OCp floats are
 *       the zeros dy_group reads past the image);
 *   R4  the bias, or the sums of db (OC);
 *   R5  the offsets of the group's positions in a channels-last buffer
 *       (an input in channel rows only, WINO_ROWS).
 * The transposes into and out of R2 run over the whole group, so that
 * each channel's rows are read and written in one run of nt*H*W floats
 * (an image at a time, the 64 rows of conv2's output were 784 bytes each,
 * written in 16-row blocks that missed the cache).
 */
typedef struct Regions {
    long r1, r2, r3, r4, r5;
} Regions;

static long whole_vectors(long n)
{
    return (n + VL - 1) / VL * VL;
}

static Regions regions(const WinoShape *s, int C, int OC, int nt)
{
    const long T = (long)nt * s->TT, grid = (long)M * M * s->TT, padded = (long)s->PH * s->PW;
    const long v = WINO_P * plane_stride(C, T), m = WINO_P * plane_stride(OC, T);
    const long xp = nt * padded * pad_vl(C);
    Regions r = {.r1 = whole_vectors(v), .r2 = whole_vectors(m > xp ? m : xp),
                 .r3 = grid * pad_vl(OC), .r4 = whole_vectors(OC),
                 .r5 = whole_vectors((long)nt * s->H * s->W * (long)(sizeof(long) / sizeof(float)))};
    return r;
}

long wino_scratch_floats(int H, int W, int C, int OC, int cap)
{
    WinoShape s;

    wino_shape_init(&s, H, W, cap);
    Regions r = regions(&s, C, OC, cap);
    return r.r1 + r.r2 + r.r3 + r.r4 + r.r5;
}

/* ---- the transforms: 1-D over 9 (or 7) vectors `is` apart, then 2-D ---- */

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
#define WINO_PAIRS 4
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
 * The 2-D transforms of one tile's 16 channels, each a pass of the 1-D
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
 * bv, m's 81 points at m. */
static inline void tile_output(float *restrict o, long rs, long cs, const float *restrict m,
                               long pl, vf bv)
{
    vf s[M * A];

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
        for (int k = 0; k < M; k++)
            vst(o + a * rs + k * cs, row[k] + bv);
    }
}

/* m's 81 points at m = A d A^T, the adjoint of tile_output, of the 7 x 7
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

/* ---- between channel rows and channels-last vectors ---- */

/*
 * o[k][r] = s[r][k] for k < no, r < nw (a block of up to 16 x 16 floats,
 * transposed in registers): rows r >= ns of s, and floats k >= nk of a
 * row, read as zero; o[k] is written in its first nw floats only.
 * Channel rows to channels-last vectors: s the rows of ns channels, nk
 * positions, nw = 16 (the lanes past the channels zeroed).  Back: s the
 * vectors of ns positions, nk channels, nw = ns.
 */
static void transpose_block(float *const *o, int no, int nw, const float *const *s, int ns,
                            int nk)
{
#if defined(__AVX512F__)
    __m512 r[VL];
    const __mmask16 mk = (__mmask16)((1u << nk) - 1), mw = (__mmask16)((1u << nw) - 1);

    for (int i = 0; i < VL; i++)
        r[i] = i < ns ? _mm512_maskz_loadu_ps(mk, s[i]) : _mm512_setzero_ps();
    vec_transpose16(r);
    for (int k = 0; k < no; k++)
        _mm512_mask_storeu_ps(o[k], mw, r[k]);
#elif defined(__AVX2__)
    /* Four 8 x 8 quarters: source rows qr.., floats qc.. */
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

    for (int qr = 0; qr < VL; qr += 8)
        for (int qc = 0; qc < VL; qc += 8) {
            if (qc >= no || qr >= nw)
                continue;
            const __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(nk - qc), lane);
            const __m256i mw = _mm256_cmpgt_epi32(_mm256_set1_epi32(nw - qr), lane);
            __m256 r[8];
            for (int i = 0; i < 8; i++)
                r[i] = qr + i < ns ? _mm256_maskload_ps(s[qr + i] + qc, mk) : _mm256_setzero_ps();
            vec_transpose8(r);
            for (int k = 0; k < 8 && qc + k < no; k++)
                _mm256_maskstore_ps(o[qc + k] + qr, mw, r[k]);
        }
#else
    for (int k = 0; k < no; k++)
        for (int r = 0; r < nw; r++)
            o[k][r] = r < ns && k < nk ? s[r][k] : 0.0f;
#endif
}

/* ---- the filters ---- */

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

/* Where a group's positions lie in a channels-last buffer: image n's
 * row h, column w at ((n*rows + h + top)*width + w + left)*lanes floats. */
typedef struct Layout {
    int rows, width, top, left, lanes;
} Layout;

/* off[p] for the nt*H*W positions p of a group, image-major, row-major. */
static void layout_offsets(long *off, const Layout *L, int nt, int H, int W)
{
    for (int n = 0; n < nt; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++)
                *off++ = (((long)n * L->rows + h + L->top) * L->width + w + L->left) * L->lanes;
}

/* buf's P positions (at off) <- those of nc channel rows of src, rows ld
 * floats apart; in each vector the channels past nc are zeroed. */
static void rows_to_lanes(float *buf, const long *off, const float *src, long ld, int nc, int P)
{
    for (int c0 = 0; c0 < nc; c0 += VL) {
        const int n = nc - c0 < VL ? nc - c0 : VL;
        for (int p0 = 0; p0 < P; p0 += VL) {
            const int np = P - p0 < VL ? P - p0 : VL;
            float *o[VL];
            const float *s[VL];
            for (int k = 0; k < np; k++)
                o[k] = buf + off[p0 + k] + c0;
            for (int r = 0; r < n; r++) {
                s[r] = src + (c0 + r) * ld + p0;
                /* 16 rows at once are more streams than the hardware
                 * prefetcher follows: each row's line 4 blocks on. */
                if (p0 + 5 * VL <= P)
                    __builtin_prefetch(s[r] + 4 * VL);
            }
            transpose_block(o, np, VL, s, n, np);
        }
    }
}

/* The P positions of nc channel rows of dst, rows ld floats apart <- buf's
 * (at off). */
static void lanes_to_rows(float *dst, long ld, int nc, const float *buf, const long *off, int P)
{
    for (int c0 = 0; c0 < nc; c0 += VL) {
        const int n = nc - c0 < VL ? nc - c0 : VL;
        for (int p0 = 0; p0 < P; p0 += VL) {
            const int np = P - p0 < VL ? P - p0 : VL;
            float *o[VL];
            const float *s[VL];
            for (int k = 0; k < n; k++) {
                o[k] = dst + (c0 + k) * ld + p0;
                if (p0 + 5 * VL <= P) /* as rows_to_lanes, to write */
                    __builtin_prefetch(o[k] + 4 * VL, 1);
            }
            for (int r = 0; r < np; r++)
                s[r] = buf + off[p0 + r] + c0;
            transpose_block(o, n, np, s, np, n);
        }
    }
}

/*
 * w positions of nc channels from src, positions ss floats apart, to dst,
 * ds floats apart (ss, ds >= nc); the floats of a dst position past nc are
 * zeroed.  A row of channels-last images into or out of a padded buffer.
 */
static void positions_copy(float *restrict dst, int ds, const float *restrict src, int ss, int w,
                           int nc)
{
    if (ds == nc && ss == nc) {
        memcpy(dst, src, (size_t)w * nc * sizeof *dst);
        return;
    }
    for (int p = 0; p < w; p++) {
        memcpy(dst + (long)p * ds, src + (long)p * ss, (size_t)nc * sizeof *dst);
        memset(dst + (long)p * ds + nc, 0, (size_t)(ds - nc) * sizeof *dst);
    }
}

/* ---- a group ---- */

static Layout padded_layout(const WinoShape *s, int C)
{
    return (Layout){.rows = s->PH, .width = s->PW, .top = 1, .left = 1, .lanes = pad_vl(C)};
}

/* V (81, T, Cp), planes pv apart, for images [n0, n0+nt) of x, laid out
 * as xl says; xp: the group's padded images, channels-last; off: R5. */
static void input_group(float *restrict V, long pv, const float *x, WinoLayout xl,
                        float *restrict xp, long *off, const WinoShape *s, int C, int N, int n0,
                        int nt)
{
    const Layout L = padded_layout(s, C);
    const int Cp = L.lanes, PW = s->PW, HW = s->H * s->W;
    const long rs = (long)PW * Cp, img = s->PH * rs;

    /* The borders of the padded images. */
    for (int n = 0; n < nt; n++)
        for (int r = 0; r < s->PH; r++) {
            float *row = xp + n * img + r * rs;
            if (r == 0 || r > s->H)
                memset(row, 0, (size_t)rs * sizeof *xp);
            else {
                memset(row, 0, (size_t)Cp * sizeof *xp);
                memset(row + (long)(s->W + 1) * Cp, 0, (size_t)(PW - s->W - 1) * Cp * sizeof *xp);
            }
        }
    if (xl == WINO_ROWS) {
        layout_offsets(off, &L, nt, s->H, s->W);
        rows_to_lanes(xp, off, x + (long)n0 * HW, (long)N * HW, C, nt * HW);
    } else
        for (int n = 0; n < nt; n++)
            for (int h = 0; h < s->H; h++)
                positions_copy(xp + n * img + (h + 1) * rs + Cp, Cp,
                               x + (((long)(n0 + n) * s->H + h) * s->W) * C, C, s->W, C);
    for (int n = 0; n < nt; n++)
        for (int i = 0; i < s->TI; i++)
            for (int j = 0; j < s->TJ; j++) {
                const long t = (long)n * s->TT + i * s->TJ + j;
                const float *d = xp + n * img + M * i * rs + (long)M * j * Cp;
                for (int c0 = 0; c0 < Cp; c0 += VL)
                    tile_input(V + t * Cp + c0, pv, d + c0, rs, Cp);
            }
}

void wino_forward(float *y, const float *x, WinoLayout xl, const float *U, const float *b,
                  float *scratch, const WinoShape *s, int C, int OC, int N, int n0, int nt,
                  GemmPath path)
{
    const int Cp = pad_vl(C), OCp = pad_vl(OC), HW = s->H * s->W;
    const long T = (long)nt * s->TT, pv = plane_stride(C, T), pm = plane_stride(OC, T);
    const int QW = M * s->TJ;
    const Regions R = regions(s, C, OC, nt);
    float *V = scratch, *Mp = V + R.r1, *grid = Mp + R.r2, *bias = grid + R.r3;
    long *off = (long *)(void *)(bias + R.r4);

    assert(nt >= 1 && nt <= s->cap);
    input_group(V, pv, x, xl, Mp, off, s, C, N, n0, nt);
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 0, 1, (int)T, OC, C, 1.0f, V + xi * pv, Cp, U + (long)xi * OC * C, C,
                0.0f, Mp + xi * pm, OCp);
    memset(bias, 0, (size_t)OCp * sizeof *bias);
    memcpy(bias, b, (size_t)OC * sizeof *bias);
    /* y = A^T M A + b, tile by tile: where the tiles are whole and the
     * channels whole vectors (the model's layers) straight into y, else
     * an image at a time onto its tile grid (R3), whose rows inside the
     * image are then copied out (stores into y that skip the points past
     * the image were masked and branchy: conv2 forward 1.1x slower).
     * The copy cost conv2 0.28 ms against 0.22 straight (one thread,
     * batch 64: bench/RESULTS.md, session 18). */
    const int direct = OC == OCp && s->H == M * s->TI && s->W == QW;
    const long rs = direct ? (long)s->W * OC : (long)QW * OCp;
    for (int n = 0; n < nt; n++) {
        float *yn = y + (long)(n0 + n) * HW * OC;
        for (int i = 0; i < s->TI; i++)
            for (int j = 0; j < s->TJ; j++) {
                const long t = (long)n * s->TT + i * s->TJ + j;
                float *o = (direct ? yn : grid) + (M * i * rs + (long)M * j * OCp);
                for (int c0 = 0; c0 < OCp; c0 += VL)
                    tile_output(o + c0, rs, OCp, Mp + t * OCp + c0, pm, vld(bias + c0));
            }
        if (!direct)
            for (int h = 0; h < s->H; h++)
                positions_copy(yn + (long)h * s->W * OC, OC, grid + (long)h * QW * OCp, OCp,
                               s->W, OC);
    }
}

/* DY and db's sums for tile t of one image, whose dy's points (a, k) of
 * the tile's 7 x 7 lie at src[a*7 + k] (OCp floats each; a point past
 * the image reads OCp zeros). */
static inline void dy_tile(float *restrict DY, long pm, float *restrict dbs, long t,
                           const float *const src[M * M], int OCp)
{
    for (int c0 = 0; c0 < OCp; c0 += VL) {
        /* Point (+1, +1) of A d A^T is the sum of the tile's 49 values of
         * dy: summed over the tiles, it is db. */
        const vf sum = tile_output_adj(DY + t * OCp + c0, pm, src, c0);
        vst(dbs + c0, vld(dbs + c0) + sum);
    }
}

/* DY (81, T, OCp), planes pm apart, from images [n0, n0+nt) of dy
 * (N, H, W, OC), and db's sums over the tiles into dbs (OCp).  Where OC
 * is whole vectors (the model's 64 and 128) the transform reads dy in
 * place, the points past the image from OCp zeros at dq; else each image
 * is copied first onto its tile grid dq (channels-last, OCp floats a
 * point, zero past the image and past OC).  Reading in place ran conv2's
 * backward 0.96 of the copy's time (one thread), conv3's the same
 * (bench/RESULTS.md, session 16). */
static void dy_group(float *restrict DY, long pm, float *restrict dbs, const float *dy,
                     float *restrict dq, const WinoShape *s, int OC, int n0, int nt)
{
    const int OCp = pad_vl(OC), HW = s->H * s->W, QW = M * s->TJ, QH = M * s->TI;
    const int direct = OCp == OC;
    const float *zeros = dq;

    if (direct)
        memset(dq, 0, (size_t)OCp * sizeof *dq);
    else /* the grid past the image: zero for every image */
        for (int h = 0; h < QH; h++)
            for (int w = h < s->H ? s->W : 0; w < QW; w++)
                memset(dq + ((long)h * QW + w) * OCp, 0, (size_t)OCp * sizeof *dq);
    memset(dbs, 0, (size_t)OCp * sizeof *dbs);
    for (int n = 0; n < nt; n++) {
        const float *img = dy + (long)(n0 + n) * HW * OC;
        if (!direct)
            for (int h = 0; h < s->H; h++)
                positions_copy(dq + (long)h * QW * OCp, OCp, img + (long)h * s->W * OC, OC,
                               s->W, OC);
        for (int i = 0; i < s->TI; i++)
            for (int j = 0; j < s->TJ; j++) {
                const float *src[M * M];
                for (int a = 0; a < M; a++)
                    for (int k = 0; k < M; k++) {
                        const int h = M * i + a, w = M * j + k;
                        src[M * a + k] = !direct ? dq + ((long)h * QW + w) * OCp
                                         : h < s->H && w < s->W ? img + ((long)h * s->W + w) * OC
                                                                 : zeros;
                    }
                dy_tile(DY, pm, dbs, (long)n * s->TT + i * s->TJ + j, src, OCp);
            }
    }
}

/* dx's images [n0, n0+nt), laid out as xl says, = the sum over patches
 * of B dV B^T, dV (81, T, Cp); zp: the group's padded images,
 * channels-last. */
static void dx_group(float *dx, WinoLayout xl, const float *restrict dV, long pv,
                     float *restrict zp, long *off, const WinoShape *s, int C, int N, int n0,
                     int nt)
{
    const Layout L = padded_layout(s, C);
    const int Cp = L.lanes, PW = s->PW, HW = s->H * s->W;
    const long rs = (long)PW * Cp, img = s->PH * rs;

    for (int n = 0; n < nt; n++)
        for (int i = 0; i < s->TI; i++)
            for (int j = 0; j < s->TJ; j++) {
                const long t = (long)n * s->TT + i * s->TJ + j;
                float *o = zp + n * img + M * i * rs + (long)M * j * Cp;
                /* Patches overlap by 2 rows and 2 columns: the tile above
                 * and the one to the left have written there first. */
                const int ra = i > 0 ? 2 : 0, ka = j > 0 ? 2 : 0;
                for (int c0 = 0; c0 < Cp; c0 += VL)
                    tile_input_adj(o + c0, rs, Cp, ra, ka, dV + t * Cp + c0, pv);
            }
    if (xl == WINO_ROWS) {
        layout_offsets(off, &L, nt, s->H, s->W);
        lanes_to_rows(dx + (long)n0 * HW, (long)N * HW, C, zp, off, nt * HW);
    } else
        for (int n = 0; n < nt; n++)
            for (int h = 0; h < s->H; h++)
                positions_copy(dx + (((long)(n0 + n) * s->H + h) * s->W) * C, C,
                               zp + n * img + (h + 1) * rs + Cp, Cp, s->W, C);
}

void wino_backward(float *dx, float *dU, float *db, const float *dy, const float *x,
                   WinoLayout xl, const float *U, float *scratch, const WinoShape *s, int C,
                   int OC, int N, int n0, int nt, float beta, GemmPath path)
{
    const int Cp = pad_vl(C), OCp = pad_vl(OC);
    const long T = (long)nt * s->TT, pv = plane_stride(C, T), pm = plane_stride(OC, T);
    const long pu = wino_du_ld(C, OC);
    const Regions R = regions(s, C, OC, nt);
    /* dV takes V's place once the dU products have read V, and dx DY's
     * once the dV products have read DY. */
    float *V = scratch, *DY = V + R.r1, *dq = DY + R.r2, *dbs = dq + R.r3, *dV = V, *zp = DY;
    long *off = (long *)(void *)(dbs + R.r4);

    assert(nt >= 1 && nt <= s->cap);
    input_group(V, pv, x, xl, DY, off, s, C, N, n0, nt);
    dy_group(DY, pm, dbs, dy, dq, s, OC, n0, nt);
    for (int oc = 0; oc < OC; oc++)
        db[oc] = beta == 0.0f ? dbs[oc] : beta * db[oc] + dbs[oc];
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 1, 0, OC, C, (int)T, 1.0f, DY + xi * pm, OCp, V + xi * pv, Cp, beta,
                dU + xi * pu, C);
    if (!dx)
        return;
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 0, 0, (int)T, C, OC, 1.0f, DY + xi * pm, OCp, U + (long)xi * OC * C, C,
                0.0f, dV + xi * pv, Cp);
    dx_group(dx, xl, dV, pv, zp, off, s, C, N, n0, nt);
}
