/*
 * rng.c: the per-epoch permutation (Fisher-Yates driven by counter-based
 * draws, so it depends only on the seed and the epoch).
 */
#include "util/rng.h"

void rng_permutation(uint32_t *perm, long n, uint64_t seed, long epoch)
{
    uint64_t key = rng_key(seed, RNG_SHUFFLE, (uint64_t)epoch);

    for (long i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (long i = n - 1; i > 0; i--) {
        uint32_t j = rng_below(rng_at(key, (uint64_t)i), (uint32_t)(i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
