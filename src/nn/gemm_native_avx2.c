/*
 * gemm_native_avx2.c: gemm_native_kern.h for AVX2 with FMA, 8 floats a
 * vector, strips of up to 2 vectors (16 columns), for CPUs without
 * AVX-512.  This file alone is compiled with -mavx2 -mfma
 * (src/CMakeLists.txt); gemm_native.c calls it only where cpuid says the
 * CPU has both.
 */
#include "nn/gemm_native.h"

#include <immintrin.h>

#include "nn/vec_transpose.h"

#define KERN_VW 8
#define KERN_NV_MAX 2
/* 12 or 8 sums, the strip's vectors and a broadcast: within the 16 registers. */
#define KERN_MR(nv) ((nv) == 2 ? 6 : 8)
#define KERN_FN gemm_native_avx2

typedef __m256 KernVec;
typedef __m256i KernMask;
typedef __m256i KernIdx;

/* Lane i is on where i < n: (n - 1 - i) >= 0, its sign bit clear. */
#define kern_mask(n) _mm256_cmpgt_epi32(_mm256_set1_epi32(n), \
    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define kern_load(p, m) _mm256_maskload_ps((p), (m))
#define kern_store(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define kern_loadu(p) _mm256_loadu_ps(p)
#define kern_storeu(p, v) _mm256_storeu_ps((p), (v))
#define kern_bcast(p) _mm256_broadcast_ss(p)
#define kern_set1(x) _mm256_set1_ps(x)
#define kern_zero() _mm256_setzero_ps()
#define kern_fma(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define kern_gather(p, idx, m) \
    _mm256_mask_i32gather_ps(_mm256_setzero_ps(), (p), (idx), _mm256_castsi256_ps(m), 4)
#define kern_lanes(s) _mm256_mullo_epi32(_mm256_set1_epi32(s), \
    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))

/* o[k*ldo + j] = s[j*lds + k] for j, k < 8. */
static inline void kern_transpose(float *o, long ldo, const float *s, long lds)
{
    __m256 r[8];

    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(s + i * lds);
    vec_transpose8(r);
    for (int i = 0; i < 8; i++)
        _mm256_storeu_ps(o + i * ldo, r[i]);
}

#include "nn/gemm_native_kern.h"

