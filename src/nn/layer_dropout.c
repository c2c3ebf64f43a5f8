/*
 * layer_dropout.c: fused ReLU + inverted dropout.
 */
#include <stddef.h>

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

void dropout_relu_forward_at(float *h, uint8_t *mask, const float *z, int F,
                             int n0, int n1, uint64_t key, long first)
{
    const float scale = 1.0f / (1.0f - DROPOUT_P);

    for (int n = n0; n < n1; n++) {
        size_t base = (size_t)n * F;
        uint64_t kbase = (uint64_t)(first + n) * (uint64_t)F, bits = 0;
        for (int f = 0; f < F; f++) {
            size_t e = base + (size_t)f;
            uint64_t k = kbase + (uint64_t)f;
            float v = z[e] > 0.0f ? z[e] : 0.0f;
            if (!mask) {
                h[e] = v;
                continue;
            }
            if (f == 0 || (k & 63) == 0)
                bits = rng_at(key, k >> 6);
            int keep = (int)((bits >> (k & 63)) & 1u);
            mask[e] = (uint8_t)(keep && v > 0.0f);
            h[e] = keep ? v * scale : 0.0f;
        }
    }
}

void dropout_relu_backward(float *dz, const float *dh, const uint8_t *mask,
                           int F, int n0, int n1)
{
    const float scale = 1.0f / (1.0f - DROPOUT_P);

    for (size_t e = (size_t)n0 * F; e < (size_t)n1 * F; e++)
        dz[e] = mask[e] ? dh[e] * scale : 0.0f;
}
