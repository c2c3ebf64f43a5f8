/*
 * layer_dropout.c: fused ReLU + inverted dropout.
 *
 * The keep bits are random, so a branch on them mispredicts half the
 * time.  Written with `keep ? v * scale : 0`, gcc kept the conditional
 * float multiply as a branch (the default trapping-math rules forbid
 * making it unconditional): the forward took 5-7 ns an element, and the
 * backward's `mask ? dh * scale : 0` 3 ns on AVX2 (AVX-512's masked
 * multiply had vectorised that one).  Both now compute every product and
 * select by bit masks, with no branch and no conditional float
 * operation, and vectorise on every width: 0.3-0.6 ns an element, the
 * same bits (bench/RESULTS.md, session 30).
 */
#include <stddef.h>
#include <string.h>

#include "nn/layer_dropout.h"
#include "util/rng.h"

int dropout_keep(uint64_t key, uint64_t e)
{
    return (int)((rng_at(key, e >> 6) >> (e & 63)) & 1u);
}

void dropout_relu_forward(float *h, uint8_t *mask, const float *z, int F,
                          int n0, int n1, uint64_t key)
{
    dropout_relu_forward_at(h, mask, z, F, n0, n1, key, 0);
}

/* x's bits where m is 1, +0 where it is 0. */
static inline float select_bits(float x, uint32_t m)
{
    uint32_t b;

    memcpy(&b, &x, sizeof b);
    b &= 0u - m;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* Elements [0, n) of a row, n <= 32, element i kept where bit i of w is 1. */
static void relu_drop_bits(float *h, uint8_t *mask, const float *z, int n, uint32_t w,
                           float scale)
{
    for (int i = 0; i < n; i++) {
        const uint32_t pos = z[i] > 0.0f, keep = (w >> i) & 1u;
        h[i] = select_bits(select_bits(z[i], pos) * scale, keep);
        mask[i] = (uint8_t)(keep & pos);
    }
}

void dropout_relu_forward_at(float *h, uint8_t *mask, const float *z, int F,
                             int n0, int n1, uint64_t key, long first)
{
    const float scale = 1.0f / (1.0f - DROPOUT_P);

    if (!mask) {
        for (size_t e = (size_t)n0 * F; e < (size_t)n1 * F; e++)
            h[e] = select_bits(z[e], z[e] > 0.0f);
        return;
    }
    for (int n = n0; n < n1; n++) {
        const size_t base = (size_t)n * F;
        const uint64_t kbase = (uint64_t)(first + n) * (uint64_t)F;
        /* Element f takes bit k & 63 of draw k >> 6, k = kbase + f: the row
         * in runs that share a draw, each in halves of 32 bits. */
        for (int f = 0; f < F;) {
            const uint64_t k = kbase + (uint64_t)f;
            const int s = (int)(k & 63), run = 64 - s < F - f ? 64 - s : F - f;
            const uint64_t bits = rng_at(key, k >> 6) >> s;
            relu_drop_bits(h + base + f, mask + base + f, z + base + f, run < 32 ? run : 32,
                           (uint32_t)bits, scale);
            if (run > 32)
                relu_drop_bits(h + base + f + 32, mask + base + f + 32, z + base + f + 32,
                               run - 32, (uint32_t)(bits >> 32), scale);
            f += run;
        }
    }
}

void dropout_relu_backward(float *dz, const float *dh, const uint8_t *mask,
                           int F, int n0, int n1)
{
    const float scale = 1.0f / (1.0f - DROPOUT_P);

    for (size_t e = (size_t)n0 * F; e < (size_t)n1 * F; e++)
        dz[e] = select_bits(dh[e] * scale, mask[e] != 0);
}
