/*
 * vec_transpose.h: a square of vectors transposed in registers, r[k] lane
 * j <- r[j] lane k.  The rows are interleaved in pairs, then in fours
 * within each 128-bit lane, then the 128-bit lanes are moved into place.
 * Each function exists where the translation unit is compiled for its
 * instruction set (the native GEMM's files by their own flags, the
 * layers by -march=native).
 */
#ifndef CNNTOP_VEC_TRANSPOSE_H
#define CNNTOP_VEC_TRANSPOSE_H

#include <immintrin.h>

#ifdef __AVX512F__
/* 16 vectors of 16 floats. */
static inline void vec_transpose16(__m512 r[16])
{
    __m512 t[16], u[16];

    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* u[4g + m], 128-bit lane L: column 4L + m of rows 4g .. 4g+3. */
    for (int g = 0; g < 16; g += 4) {
        u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int m = 0; m < 4; m++) {
        __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88);
        __m512 w0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xDD);
        __m512 v1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
        __m512 w1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xDD);
        r[m] = _mm512_shuffle_f32x4(v0, v1, 0x88);
        r[4 + m] = _mm512_shuffle_f32x4(w0, w1, 0x88);
        r[8 + m] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
        r[12 + m] = _mm512_shuffle_f32x4(w0, w1, 0xDD);
    }
}
#endif

#ifdef __AVX2__
/* 8 vectors of 8 floats. */
static inline void vec_transpose8(__m256 r[8])
{
    __m256 t[8], u[8];

    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    /* u[4g + m], half L: column 4L + m of rows 4g .. 4g+3. */
    for (int g = 0; g < 8; g += 4) {
        u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int m = 0; m < 4; m++) {
        r[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
        r[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
    }
}
#endif

#endif
