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
 * The lanes are held in SumVec variables, GNU C vectors (gcc and clang)
 * of 16 floats, not in float arrays: gcc vectorised an array's adds but
 * kept the array on the stack, so each add waited on a store and a
 * reload of the one before (conv1's backward pass ran 1.3x slower so).
 * A vector holds lanes k..k+15 and adds them as the array did, so the
 * sums are the same to the bit.  Where the CPU's vectors are narrower
 * the compiler splits them.
 */
#ifndef CNNTOP_SUMS_H
#define CNNTOP_SUMS_H

#define SUM_LANES 32
#define SUM_BLOCK 1024
#define SUMVEC_LANES 16

typedef float SumVec __attribute__((vector_size(4 * SUMVEC_LANES)));

/* The 16 floats at p, of any alignment, as a SumVec to read or write
 * (the way gcc's own headers load unaligned vectors).  A macro, not a
 * function: gcc warns (-Wpsabi) of a 64-byte vector passed or returned
 * where the CPU lacks AVX-512. */
typedef float SumVecAt __attribute__((vector_size(4 * SUMVEC_LANES), aligned(4), may_alias));
#define SUMVEC_AT(p) (*(SumVecAt *)(p))

/* s + v[0] + v[1] + ... + v[15], in that order, in double. */
static inline double sums_vec_fold(double s, const SumVec *v)
{
    for (int k = 0; k < SUMVEC_LANES; k++)
        s += (*v)[k];
    return s;
}

/* *s += sum x[i], *ss += sum x[i]^2 over i < n. */
static inline void sums_sq(const float *restrict x, long n, double *s, double *ss)
{
    double S = 0.0, SS = 0.0;
    long i = 0;

    while (n - i >= SUM_LANES) {
        SumVec a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0};
        long end = n - i > SUM_BLOCK ? i + SUM_BLOCK : n - (n - i) % SUM_LANES;
        for (; i < end; i += SUM_LANES) {
            SumVec v0 = SUMVEC_AT(x + i), v1 = SUMVEC_AT(x + i + SUMVEC_LANES);
            a0 += v0;
            a1 += v1;
            b0 += v0 * v0;
            b1 += v1 * v1;
        }
        S = sums_vec_fold(sums_vec_fold(S, &a0), &a1);
        SS = sums_vec_fold(sums_vec_fold(SS, &b0), &b1);
    }
    for (; i < n; i++) {
        S += x[i];
        SS += (double)x[i] * x[i];
    }
    *s += S;
    *ss += SS;
}

/* sum x[i] over i < n. */
static inline double sums_plain(const float *restrict x, long n)
{
    double S = 0.0;
    long i = 0;

    while (n - i >= SUM_LANES) {
        SumVec a0 = {0}, a1 = {0};
        long end = n - i > SUM_BLOCK ? i + SUM_BLOCK : n - (n - i) % SUM_LANES;
        for (; i < end; i += SUM_LANES) {
            a0 += SUMVEC_AT(x + i);
            a1 += SUMVEC_AT(x + i + SUMVEC_LANES);
        }
        S = sums_vec_fold(sums_vec_fold(S, &a0), &a1);
    }
    for (; i < n; i++)
        S += x[i];
    return S;
}

#endif
