/*
 * gemm_native_avx512.c: gemm_native_kern.h for AVX-512F, 16 floats a
 * vector, strips of up to 4 vectors (64 columns).  This file alone is
 * compiled with -mavx512f (src/CMakeLists.txt); gemm_native.c calls it only
 * where cpuid says the CPU has AVX-512F.
 */
#include "nn/gemm_native.h"

#include <immintrin.h>

#include "nn/vec_transpose.h"

#define KERN_VW 16
#define KERN_NV_MAX 4
/* 24 sums (8 for a strip of one vector), the strip's vectors and a
 * broadcast: within the 32 registers.  Blocks of 4 rows of 4 vectors and
 * 8 of 2 (16 sums) ran the products 2-6% slower on a Xeon (bench/
 * wino_rate, session 27). */
#define KERN_MR(nv) ((nv) == 4 ? 6 : (nv) == 2 ? 12 : 8)
#define KERN_FN gemm_native_avx512

typedef __m512 KernVec;
typedef __mmask16 KernMask;
typedef __m512i KernIdx;

#define kern_mask(n) ((KernMask)(0xffffu >> (16 - (n))))
#define kern_load(p, m) _mm512_maskz_loadu_ps((m), (p))
#define kern_store(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define kern_loadu(p) _mm512_loadu_ps(p)
#define kern_storeu(p, v) _mm512_storeu_ps((p), (v))
#define kern_bcast(p) _mm512_set1_ps(*(p))
#define kern_set1(x) _mm512_set1_ps(x)
#define kern_zero() _mm512_setzero_ps()
#define kern_fma(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define kern_gather(p, idx, m) _mm512_mask_i32gather_ps(_mm512_setzero_ps(), (m), (idx), (p), 4)
#define kern_lanes(s) _mm512_mullo_epi32(_mm512_set1_epi32(s), \
    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

/* o[k*ldo + j] = s[j*lds + k] for j, k < 16. */
static inline void kern_transpose(float *o, long ldo, const float *s, long lds)
{
    __m512 r[16];

    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(s + i * lds);
    vec_transpose16(r);
    for (int i = 0; i < 16; i++)
        _mm512_storeu_ps(o + i * ldo, r[i]);
}

#include "nn/gemm_native_kern.h"

