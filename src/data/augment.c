/*
 * augment.c: shift, rotation and elastic distortion (see augment.h).
 */
#include <math.h>
#include <string.h>

#include "data/augment.h"
#include "cnntop/data.h"
#include "data/loader.h"
#include "util/rng.h"

#define KRADIUS 12 /* 3 sigma */

/* The normalised Gaussian kernel of AUG_ELASTIC_SIGMA, computed once. */
static void gauss_kernel(float k[2 * KRADIUS + 1])
{
    double sum = 0.0, w[2 * KRADIUS + 1];
    for (int i = -KRADIUS; i <= KRADIUS; i++) {
        w[i + KRADIUS] = exp(-(double)(i * i) / (2.0 * AUG_ELASTIC_SIGMA * AUG_ELASTIC_SIGMA));
        sum += w[i + KRADIUS];
    }
    for (int i = 0; i < 2 * KRADIUS + 1; i++)
        k[i] = (float)(w[i] / sum);
}

/* f <- alpha * (G * f), separable, zero outside the image. */
static void smooth(float *f, int rows, int cols, const float *k, float *tmp)
{
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            float s = 0.0f;
            for (int d = -KRADIUS; d <= KRADIUS; d++)
                if (x + d >= 0 && x + d < cols)
                    s += k[d + KRADIUS] * f[y * cols + x + d];
            tmp[y * cols + x] = s;
        }
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            float s = 0.0f;
            for (int d = -KRADIUS; d <= KRADIUS; d++)
                if (y + d >= 0 && y + d < rows)
                    s += k[d + KRADIUS] * tmp[(y + d) * cols + x];
            f[y * cols + x] = AUG_ELASTIC_ALPHA * s;
        }
}

void augment_draw(AugParams *ap, unsigned aug, int rows, int cols, uint64_t seed, long epoch,
                  uint32_t sample)
{
    uint64_t key = rng_key(seed, RNG_AUGMENT, ((uint64_t)epoch << 32) ^ sample);
    int n = rows * cols;

    ap->tx = ap->ty = 0;
    ap->theta = 0.0f;
    ap->elastic = 0;
    if (aug & CN_AUG_SHIFT) {
        ap->tx = (int)rng_below(rng_at(key, 0), 2 * AUG_SHIFT_MAX + 1) - AUG_SHIFT_MAX;
        ap->ty = (int)rng_below(rng_at(key, 1), 2 * AUG_SHIFT_MAX + 1) - AUG_SHIFT_MAX;
    }
    if (aug & CN_AUG_ROTATE) {
        float deg = (2.0f * rng_unit(rng_at(key, 2)) - 1.0f) * AUG_ROTATE_MAX_DEG;
        ap->theta = deg * (float)(M_PI / 180.0);
    }
    if ((aug & CN_AUG_ELASTIC) && n <= AUG_MAX_PIX) {
        float k[2 * KRADIUS + 1], tmp[AUG_MAX_PIX];
        gauss_kernel(k);
        for (int i = 0; i < n; i++) {
            uint64_t b = rng_at(key, 16 + (uint64_t)i);
            ap->ex[i] = 2.0f * rng_unit(b) - 1.0f;
            ap->ey[i] = 2.0f * rng_unit(b << 24) - 1.0f;
        }
        smooth(ap->ex, rows, cols, k, tmp);
        smooth(ap->ey, rows, cols, k, tmp);
        ap->elastic = 1;
    }
}

static inline float pixel(const uint8_t *src, int rows, int cols, int x, int y)
{
    return x >= 0 && x < cols && y >= 0 && y < rows ? (float)src[y * cols + x] : 0.0f;
}

void augment_apply(float *out, const uint8_t *src, int rows, int cols, const AugParams *ap)
{
    const float cx = 0.5f * (float)(cols - 1), cy = 0.5f * (float)(rows - 1);
    const float c = cosf(ap->theta), s = sinf(ap->theta);

    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            int p = y * cols + x;
            /* Inverse map: where in the input this output pixel comes from. */
            float px = (float)(x - ap->tx) - cx, py = (float)(y - ap->ty) - cy;
            float sx = c * px + s * py + cx, sy = -s * px + c * py + cy;
            if (ap->elastic) {
                sx += ap->ex[p];
                sy += ap->ey[p];
            }
            float fx0 = floorf(sx), fy0 = floorf(sy);
            int x0 = (int)fx0, y0 = (int)fy0;
            float fx = sx - fx0, fy = sy - fy0, v;
            if (fx == 0.0f && fy == 0.0f)
                v = pixel(src, rows, cols, x0, y0);
            else {
                float a = pixel(src, rows, cols, x0, y0), b = pixel(src, rows, cols, x0 + 1, y0);
                float d = pixel(src, rows, cols, x0, y0 + 1);
                float e = pixel(src, rows, cols, x0 + 1, y0 + 1);
                v = (1.0f - fy) * ((1.0f - fx) * a + fx * b) + fy * ((1.0f - fx) * d + fx * e);
            }
            out[p] = (v / 255.0f - LOADER_MEAN) / LOADER_STD;
        }
}
