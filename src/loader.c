/*
 * loader.c: inline batch assembly on the training thread.
 */
#include <stddef.h>

#include "loader.h"

void loader_lut(float lut[256])
{
    for (int p = 0; p < 256; p++) {
        float t = (float)p / 255.0f;
        lut[p] = (t - LOADER_MEAN) / LOADER_STD;
    }
}

void loader_fill(float *x, uint8_t *labels, const uint8_t *images,
                 const uint8_t *all_labels, const uint32_t *idx, int n,
                 int npix, const float lut[256])
{
    for (int i = 0; i < n; i++) {
        const uint8_t *src = images + (size_t)idx[i] * npix;
        float *dst = x + (size_t)i * npix;
        for (int k = 0; k < npix; k++)
            dst[k] = lut[src[k]];
        labels[i] = all_labels[idx[i]];
    }
}
