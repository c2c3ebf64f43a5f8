/*
 * gemm_native_avx512.c: gemm_native_kern.h for AVX-512F, 16 floats a
 * vector, strips of up to 4 vectors (64 columns).  This file alone is
 * compiled with -mavx512f (src/CMakeLists.txt); gemm_native.c calls it only
 * where cpuid says the CPU has AVX-512F.
 */
#include "nn/gemm_native.h"

#include <immintrin.h>

#define KERN_VW 16
#define KERN_NV_MAX 4
/* 24 or 16 sums, the strip's vectors and a broadcast: within the 32 registers. */
#define KERN_MR(nv) ((nv) == 4 ? 4 : 8)
#define KERN_FN gemm_native_avx512

typedef __m512 KernVec;
typedef __mmask16 KernMask;
typedef __m512i KernIdx;

#define kern_mask(n) ((KernMask)(0xffffu >> (16 - (n))))
#define kern_load(p, m) _mm512_maskz_loadu_ps((m), (p))
#define kern_store(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define kern_bcast(p) _mm512_set1_ps(*(p))
#define kern_set1(x) _mm512_set1_ps(x)
#define kern_zero() _mm512_setzero_ps()
#define kern_fma(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define kern_gather(p, idx, m) _mm512_mask_i32gather_ps(_mm512_setzero_ps(), (m), (idx), (p), 4)
#define kern_lanes(s) _mm512_mullo_epi32(_mm512_set1_epi32(s), \
    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

/* o[k*ldo + j] = s[j*lds + k] for j, k < 16: the rows interleaved in pairs,
 * then in fours within each 128-bit lane, then the lanes moved into place. */
static inline void kern_transpose(float *o, long ldo, const float *s, long lds)
{
    __m512 r[16], t[16], u[16];

    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(s + i * lds);
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
        _mm512_storeu_ps(o + m * ldo, _mm512_shuffle_f32x4(v0, v1, 0x88));
        _mm512_storeu_ps(o + (4 + m) * ldo, _mm512_shuffle_f32x4(w0, w1, 0x88));
        _mm512_storeu_ps(o + (8 + m) * ldo, _mm512_shuffle_f32x4(v0, v1, 0xDD));
        _mm512_storeu_ps(o + (12 + m) * ldo, _mm512_shuffle_f32x4(w0, w1, 0xDD));
    }
}

#include "nn/gemm_native_kern.h"

