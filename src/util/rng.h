/*
 * rng.h: counter-based random numbers.
 *
 * Every random choice in cnntop (initial weights, the shuffle of each epoch,
 * dropout masks, augmentation) is a pure function of (seed, stream, counter):
 * a 64-bit hash, not a sequential generator.  So a run's numbers do not
 * depend on how many threads drew them or in which order.
 */
#ifndef CNNTOP_RNG_H
#define CNNTOP_RNG_H

#include <stdint.h>

/* Streams keep the uses apart: the same seed gives unrelated numbers in each. */
enum {
    RNG_INIT = 1,    /* weight initialisation, counter = tensor, element */
    RNG_SHUFFLE = 2, /* per-epoch permutation, counter = epoch, position */
    RNG_DROPOUT = 3, /* dropout masks, counter = step, layer, word */
    RNG_AUGMENT = 4  /* loader augmentation, counter = epoch, sample */
};

/* SplitMix64's finaliser: a bijective 64-bit mix with good avalanche. */
static inline uint64_t rng_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A key for (seed, stream, a): hash it once, then draw with rng_at(). */
static inline uint64_t rng_key(uint64_t seed, uint64_t stream, uint64_t a)
{
    return rng_mix(rng_mix(rng_mix(seed) ^ stream) ^ a);
}

/* The counter-th 64 random bits under `key`. */
static inline uint64_t rng_at(uint64_t key, uint64_t counter)
{
    return rng_mix(key ^ rng_mix(counter ^ 0x6a09e667f3bcc909ULL));
}

/* Uniform in [0, 1) with 24 bits, exact as a float. */
static inline float rng_unit(uint64_t bits)
{
    return (float)(bits >> 40) * (1.0f / 16777216.0f);
}

/* Uniform integer in [0, n) by multiply-shift (n < 2^32). */
static inline uint32_t rng_below(uint64_t bits, uint32_t n)
{
    return (uint32_t)(((bits >> 32) * (uint64_t)n) >> 32);
}

/* Fills perm[0..n) with the permutation of 0..n-1 for (seed, epoch). */
void rng_permutation(uint32_t *perm, long n, uint64_t seed, long epoch);

#endif
