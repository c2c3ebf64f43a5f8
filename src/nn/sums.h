/*
 * sums.h: sums over float arrays that the compiler can vectorise.
 *
 * Float addition is not associative, so without -ffast-math (which we do
 * not use: results must be reproducible) a running sum `s += x[i]` is one
 * dependent add after another and never vectorises.  Here each of
 * SUM_LANES lanes keeps its own partial sum: lane k adds x[k], x[k+L], ...
 * That is a fixed order the compiler may vectorise (the lanes are one or
 * two vector registers), and the result is the same on every run and
 * every thread count.  The float lanes are folded into double every
 * SUM_BLOCK elements, so no float partial sums more than SUM_BLOCK/L
 * values.  Measured here: 0.05 ns per element against 0.5 ns for the
 * running sum (6272 floats, in L1).
 *
 * Channels-last data (positions of C channels) sums per channel: a SumVec
 * holds 16 channels of a position, adds SUM_SPAN positions in float, and
 * is folded into two vectors of 8 doubles, so again no float partial sums
 * more than 32 values.  The positions are read in memory order, all
 * channels of each, into an array of vectors: a pass over all the
 * positions per 16 channels read memory in strides of C floats and ran
 * at half the bandwidth (block 2's backward sums at batch 512, 2x slower
 * than on channel rows).
 *
 * The lanes are held in SumVec variables, GNU C vectors (gcc and clang)
 * of 16 floats, not in float arrays: gcc vectorised an array's adds but
 * kept the array on the stack, so each add waited on a store and a
 * reload of the one before (conv1's backward pass ran 1.3x slower so).
 * Where the CPU's vectors are narrower the compiler splits them.
 */
#ifndef CNNTOP_SUMS_H
#define CNNTOP_SUMS_H

#include <string.h>

#define SUM_LANES 32
#define SUM_BLOCK 1024
#define SUMVEC_LANES 16
#define SUM_SPAN 32        /* positions a channels-last float lane sums */
#define SUM_MAX_VECS 16    /* channels-last sums: up to 16 * SUMVEC_LANES channels */

typedef float SumVec __attribute__((vector_size(4 * SUMVEC_LANES)));

/* Floats in one vector register of the CPU the code is built for: the
 * width of the kernels that keep many sums in registers (a 16-float SumVec
 * is two AVX2 registers, and a kernel with ten of them spills). */
#if defined(__AVX512F__)
#define REG_FLOATS 16
#elif defined(__AVX__)
#define REG_FLOATS 8
#else
#define REG_FLOATS 4
#endif

/* The 16 floats at p, of any alignment, as a SumVec to read or write
 * (the way gcc's own headers load unaligned vectors).  A macro, not a
 * function: gcc warns (-Wpsabi) of a 64-byte vector passed or returned
 * where the CPU lacks AVX-512. */
typedef float SumVecAt __attribute__((vector_size(4 * SUMVEC_LANES), aligned(4), may_alias));
#define SUMVEC_AT(p) (*(SumVecAt *)(p))

typedef double SumVecD __attribute__((vector_size(8 * SUMVEC_LANES / 2)));

/* Folds the float lanes of v into the doubles lo (lanes 0..7) and hi. */
static inline void sums_fold(SumVecD *lo, SumVecD *hi, const SumVec *v)
{
    *lo += __builtin_convertvector(__builtin_shufflevector(*v, *v, 0, 1, 2, 3, 4, 5, 6, 7),
                                   SumVecD);
    *hi += __builtin_convertvector(__builtin_shufflevector(*v, *v, 8, 9, 10, 11, 12, 13, 14, 15),
                                   SumVecD);
}

/* acc[k * stride] += (lane k of lo, hi) (times scale[k] where scale is
 * not NULL) for k < n. */
static inline void sums_add_lanes(double *acc, int stride, const SumVecD *lo, const SumVecD *hi,
                                  int n, const float *scale)
{
    for (int k = 0; k < n; k++) {
        const double v = k < SUMVEC_LANES / 2 ? (*lo)[k] : (*hi)[k - SUMVEC_LANES / 2];
        acc[k * stride] += scale ? (double)scale[k] * v : v;
    }
}

/* *v = the first n (1..SUMVEC_LANES) floats at p, the lanes past them
 * zero (through a pointer, as SUMVEC_AT's comment says). */
static inline void sums_load_n(SumVec *v, const float *p, int n)
{
    if (n == SUMVEC_LANES) {
        *v = SUMVEC_AT(p);
        return;
    }
    *v = (SumVec){0};
    memcpy(v, p, (size_t)n * sizeof *p);
}

#endif
