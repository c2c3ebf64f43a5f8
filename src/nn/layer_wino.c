/*
 * layer_wino.c: 3x3 convolution by Winograd F(7x7, 3x3) (layer_wino.h).
 *
 * Channels-last inside a group: the group's images are copied into
 * padded buffers of (row, column, channel), a row at a time or, from
 * channel rows, by VL x VL transposes in registers, and the transforms
 * then run tile by tile on vectors of VL channels (GNU C vectors of
 * one register, wino_vec.h), every load and store
 * contiguous.  The channel-major tiles they replaced put consecutive tiles
 * in the lanes, 4 columns apart, and loaded them by gathers: the
 * transforms cost more than the products (F(4x4, 3x3)'s conv2 forward
 * 1.3-1.5 ms against 1.03, one thread, batch 64; bench/RESULTS.md,
 * session 13).
 *
 * Three files: this one cuts a batch into groups, moves them between the
 * caller's layouts and the padded channels-last buffers and runs the
 * products; wino_transform.h holds the tile transforms (inline, so that
 * each call site unrolls them) and layer_wino_filter.c the filters.
 */
#include <assert.h>
#include <string.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include "nn/vec_transpose.h"
#endif

#include "nn/gemm.h"
#include "nn/layer_wino.h"
#include "nn/wino_transform.h"

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
 *       (an input in channel rows only, WINO_ROWS);
 *   R6  in the backward, dU's products of one column of the 9 x 9
 *       points, (OC, 9, C).
 * The transposes into and out of R2 run over the whole group, so that
 * each channel's rows are read and written in one run of nt*H*W floats
 * (an image at a time, the 64 rows of conv2's output were 784 bytes each,
 * written in 16-row blocks that missed the cache).
 */
typedef struct Regions {
    long r1, r2, r3, r4, r5, r6;
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
                 .r5 = whole_vectors((long)nt * s->H * s->W * (long)(sizeof(long) / sizeof(float))),
                 .r6 = whole_vectors((long)A * OC * C)};
    return r;
}

/*
 * The FLOPs of the 1-D transforms of wino_transform.h, each in its even
 * and odd parts over the four pairs of points: B^T (bt9) 9 for the last
 * output and 17 a pair (two sums of four products, p e, and d +- p e);
 * B (b9) 3 a pair for its inputs' sum and scaled difference, 16 an output
 * pair, 1 for the last; A^T (at9) 8 for the sums and differences, 7 a row
 * (four products summed) and 1 more for the last; A (a9) 13 a pair.
 * A 2-D transform is a 1-D one down each column, then one along each row.
 */
enum { FLOPS_BT9 = 9 + 4 * 17, FLOPS_B9 = 4 * 3 + 4 * 16 + 1, FLOPS_AT9 = 8 + 7 * 7 + 1,
       FLOPS_A9 = 4 * 13 };

double wino_transform_flops(int H, int W, int C, int OC, int backward, int dx)
{
    const double input = 2.0 * A * FLOPS_BT9;            /* tile_input */
    const double output = (A + M) * FLOPS_AT9 + M * M;   /* tile_output_sums, with the bias */
    const double dy = (M + A) * FLOPS_A9;                /* tile_output_adj */
    const double dinput = 2.0 * A * FLOPS_B9;            /* tile_input_adj */
    const double per_tile = backward ? C * input + OC * dy + (dx ? C * dinput : 0.0)
                                     : C * input + OC * output;

    return per_tile * wino_tiles(H, W);
}

long wino_scratch_floats(int H, int W, int C, int OC, int cap)
{
    WinoShape s;

    wino_shape_init(&s, H, W, cap);
    Regions r = regions(&s, C, OC, cap);
    return r.r1 + r.r2 + r.r3 + r.r4 + r.r5 + r.r6;
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
    /* 8 x 8 quarters: source rows qr.., floats qc..  Whole rows load and
     * store unmasked: vmaskmovps's store is slow on AMD's cores, and with
     * it for every row rows_to_lanes was 12% of conv2's forward (one
     * thread, batch 64; 4.6% unmasked: bench/RESULTS.md, session 25). */
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

    for (int qr = 0; qr < VL; qr += 8)
        for (int qc = 0; qc < VL; qc += 8) {
            if (qc >= no || qr >= nw)
                continue;
            const __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(nk - qc), lane);
            const __m256i mw = _mm256_cmpgt_epi32(_mm256_set1_epi32(nw - qr), lane);
            const int whole_k = nk - qc >= 8, whole_w = nw - qr >= 8;
            __m256 r[8];
            for (int i = 0; i < 8; i++)
                r[i] = qr + i >= ns ? _mm256_setzero_ps()
                       : whole_k    ? _mm256_loadu_ps(s[qr + i] + qc)
                                    : _mm256_maskload_ps(s[qr + i] + qc, mk);
            vec_transpose8(r);
            for (int k = 0; k < 8 && qc + k < no; k++) {
                if (whole_w)
                    _mm256_storeu_ps(o[qc + k] + qr, r[k]);
                else
                    _mm256_maskstore_ps(o[qc + k] + qr, mw, r[k]);
            }
        }
#else
    for (int k = 0; k < no; k++)
        for (int r = 0; r < nw; r++)
            o[k][r] = r < ns && k < nk ? s[r][k] : 0.0f;
#endif
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

/* stats (OC, 2) += each channel's sum and sum of squares over the H x W
 * positions of one image's y (n, H, W, OC): where wino_forward's outputs
 * go through the tile grid. */
static void image_sums(double *stats, const float *yn, long HW, int OC)
{
    for (long p = 0; p < HW; p++)
        for (int c = 0; c < OC; c++) {
            const double v = yn[p * OC + c];
            stats[2 * c] += v;
            stats[2 * c + 1] += v * v;
        }
}

void wino_forward(float *y, const float *x, WinoLayout xl, const float *U, const float *b,
                  double *stats, float *scratch, const WinoShape *s, int C, int OC, int N,
                  int n0, int nt, GemmPath path)
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
                for (int c0 = 0; c0 < OCp; c0 += VL) {
                    /* The BN statistics as the tile's outputs are made,
                     * its 49 summed in float, the tiles in double (the
                     * pass over the group's y they replace was 3.3% of
                     * a step at batch 64: bench/RESULTS.md, session 23);
                     * on the tile grid, from the image's rows below. */
                    vf s1 = {0}, s2 = {0};
                    tile_output_sums(o + c0, rs, OCp, Mp + t * OCp + c0, pm, vld(bias + c0),
                                     &s1, &s2);
                    if (!direct || !stats)
                        continue;
                    for (int l = 0; l < VL; l++) {
                        stats[2 * (c0 + l)] += s1[l];
                        stats[2 * (c0 + l) + 1] += s2[l];
                    }
                }
            }
        if (!direct) {
            for (int h = 0; h < s->H; h++)
                positions_copy(yn + (long)h * s->W * OC, OC, grid + (long)h * QW * OCp, OCp,
                               s->W, OC);
            if (stats)
                image_sums(stats, yn, HW, OC);
        }
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

void wino_backward(float *dx, float *dE, float *db, const float *dy, const float *x,
                   WinoLayout xl, const float *U, float *scratch, const WinoShape *s, int C,
                   int OC, int N, int n0, int nt, float beta, GemmPath path)
{
    const int Cp = pad_vl(C), OCp = pad_vl(OC);
    const long T = (long)nt * s->TT, pv = plane_stride(C, T), pm = plane_stride(OC, T);
    const Regions R = regions(s, C, OC, nt);
    /* dV takes V's place once the dU products have read V, and dx DY's
     * once the dV products have read DY. */
    float *V = scratch, *DY = V + R.r1, *dq = DY + R.r2, *dbs = dq + R.r3, *dV = V, *zp = DY;
    long *off = (long *)(void *)(dbs + R.r4);
    float *col = (float *)(void *)off + R.r5;

    assert(nt >= 1 && nt <= s->cap);
    input_group(V, pv, x, xl, DY, off, s, C, N, n0, nt);
    dy_group(DY, pm, dbs, dy, dq, s, OC, n0, nt);
    for (int oc = 0; oc < OC; oc++)
        db[oc] = beta == 0.0f ? dbs[oc] : beta * db[oc] + dbs[oc];
    /* dU's products a column of the 9 x 9 at a time into R6, each column
     * reduced to E's three points at once while it is in L2.  A column's
     * rows lie 9 C floats apart, where gemm() would zero them one by one
     * for beta 0 on OpenBLAS's path (9 x OC memsets): zeroed here in one
     * pass instead.  The native kernels write beta 0 without reading. */
    const int zero = path == GEMM_PATH_OPENBLAS;
    for (int k = 0; k < A; k++) {
        if (zero)
            memset(col, 0, (size_t)A * OC * C * sizeof *col);
        for (int r = 0; r < A; r++) {
            const int xi = A * r + k;
            gemm_on(path, 1, 0, OC, C, (int)T, 1.0f, DY + xi * pm, OCp, V + xi * pv, Cp,
                    zero ? 1.0f : 0.0f, col + r * C, A * C);
        }
        wino_filter_grad_column(dE, col, C, OC, k, beta);
    }
    if (!dx)
        return;
    for (int xi = 0; xi < WINO_P; xi++)
        gemm_on(path, 0, 0, (int)T, C, OC, 1.0f, DY + xi * pm, OCp, U + (long)xi * OC * C, C,
                0.0f, dV + xi * pv, Cp);
    dx_group(dx, xl, dV, pv, zp, off, s, C, N, n0, nt);
}
