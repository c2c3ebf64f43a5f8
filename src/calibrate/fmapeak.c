/*
 * fmapeak.c: the peak loops and the clock loop (see fmapeak.h).
 *
 * Each loop is compiled for its instruction set with a target attribute
 * and called only when cpuid says the CPU (and the OS) runs it.  The
 * chains start from different values so that the compiler cannot merge
 * them, and a = a*0.999 + 0.001 stays near 1 (no overflow, no denormals:
 * both would slow the units and the figure would not be the peak).
 */
#include <stddef.h>
#include <stdint.h>

#include "calibrate/fmapeak.h"
#include "prof/sysinfo.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define X6(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define X8(M) X6(M) M(6) M(7)
#define X12(M) X8(M) M(8) M(9) M(10) M(11)
#define X24(M) X12(M) M(12) M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) \
    M(22) M(23)

/* Read through volatile: the compiler must not know the values, or it
 * folds the chains that one step leaves unchanged (a fixed point in float
 * rounding) out of the loop. */
static volatile float peak_b = 0.999f, peak_c = 0.001f, peak_a = 1.0f;

#define AVX512_CHAINS 24
#define AVX2_CHAINS 12
#define SSE_CHAINS 6 /* of each of mul and add: 12 + 3 constants fill the 16 registers */

__attribute__((target("avx512f"))) static double run_avx512(long iters)
{
    const __m512 b = _mm512_set1_ps(peak_b), c = _mm512_set1_ps(peak_c);
    __m512 s = _mm512_setzero_ps();
#define DECL(k) __m512 a##k = _mm512_set1_ps(peak_a + 0.001f * (k));
#define STEP(k) a##k = _mm512_fmadd_ps(a##k, b, c);
#define SUM(k) s = _mm512_add_ps(s, a##k);
    X24(DECL)
    for (long i = 0; i < iters; i++) {
        X24(STEP)
    }
    X24(SUM)
#undef DECL
#undef STEP
#undef SUM
    return (double)_mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static double run_avx2(long iters)
{
    const __m256 b = _mm256_set1_ps(peak_b), c = _mm256_set1_ps(peak_c);
    __m256 s = _mm256_setzero_ps();
    float out[8];
#define DECL(k) __m256 a##k = _mm256_set1_ps(peak_a + 0.001f * (k));
#define STEP(k) a##k = _mm256_fmadd_ps(a##k, b, c);
#define SUM(k) s = _mm256_add_ps(s, a##k);
    X12(DECL)
    for (long i = 0; i < iters; i++) {
        X12(STEP)
    }
    X12(SUM)
#undef DECL
#undef STEP
#undef SUM
    _mm256_storeu_ps(out, s);
    return (double)out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

/* Multiplies by b then by 1/b, adds c then subtracts it: each chain stays
 * put, and the muls and adds are independent of each other. */
__attribute__((target("sse2"))) static double run_sse(long iters)
{
    const __m128 b = _mm_set1_ps(peak_b), binv = _mm_set1_ps(1.0f / peak_b),
                 c = _mm_set1_ps(peak_c);
    __m128 s = _mm_setzero_ps();
    float out[4];
#define DECL(k) __m128 x##k = _mm_set1_ps(peak_a + 0.001f * (k)), \
                         y##k = _mm_set1_ps(peak_a + 1.0f + 0.001f * (k));
#define STEP1(k) x##k = _mm_mul_ps(x##k, b); y##k = _mm_add_ps(y##k, c);
#define STEP2(k) x##k = _mm_mul_ps(x##k, binv); y##k = _mm_sub_ps(y##k, c);
#define SUM(k) s = _mm_add_ps(s, _mm_add_ps(x##k, y##k));
    X6(DECL)
    for (long i = 0; i < iters; i++) {
        X6(STEP1)
        X6(STEP2)
    }
    X6(SUM)
#undef DECL
#undef STEP1
#undef STEP2
#undef SUM
    _mm_storeu_ps(out, s);
    return (double)out[0] + out[1] + out[2] + out[3];
}

#define REP8(s) s s s s s s s s
#define REP64(s) REP8(REP8(s))

static volatile uint64_t clock_sink;

int fmapeak_clock(long iters)
{
    uint64_t x = 0, one = 1;

    /* Register-to-register: no core folds these the way some fold
     * add-immediate chains at rename. */
    for (long i = 0; i < iters; i++)
        __asm__ volatile(REP64("add %1, %0\n\t") : "+r"(x) : "r"(one));
    clock_sink = x;
    return 1;
}

#define LOOP(fn) fn
#else
#define AVX512_CHAINS 0
#define AVX2_CHAINS 0
#define SSE_CHAINS 0
#define LOOP(fn) NULL

int fmapeak_clock(long iters)
{
    (void)iters;
    return 0;
}
#endif

static const PeakLoop loops[PEAK_NWIDTHS] = {
    [PEAK_AVX512] = {"AVX-512", SYSINFO_AVX512F, 16, AVX512_CHAINS * 16 * 2.0, LOOP(run_avx512)},
    [PEAK_AVX2] = {"AVX2+FMA", SYSINFO_AVX2 | SYSINFO_FMA, 8, AVX2_CHAINS * 8 * 2.0,
                   LOOP(run_avx2)},
    [PEAK_SSE] = {"SSE", SYSINFO_SSE3, 4, SSE_CHAINS * 2 * 2 * 4.0, LOOP(run_sse)},
};

const PeakLoop *fmapeak_loop(PeakWidth w)
{
    return &loops[w];
}

int fmapeak_available(PeakWidth w, unsigned features)
{
    return loops[w].run && (features & loops[w].need) == loops[w].need;
}
