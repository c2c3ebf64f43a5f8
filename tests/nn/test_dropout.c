/*
 * test_dropout.c: ReLU fused with dropout (layer_dropout.h): the mask bits
 * and the kept share, forward and backward values, row blocks and in place,
 * rows offset in the step (forward_at), NaN, infinities and -0, central
 * differences, evaluation.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "nn/layer_dropout.h"
#include "nntest.h"
#include "util/rng.h"

enum { N = 100, F = 1000 }; /* 100k elements; rows start mid-word (1000 % 64) */

/* The forward's masks and values, and its blocks and keys. */
static void test_forward(uint64_t key, const float *z, float *h, uint8_t *mask)
{
    const size_t ne = (size_t)N * F;
    float *h2 = fvec(ne);
    uint8_t *mask2 = xcalloc(ne, 1);
    long kept = 0, badmask = 0, badh = 0, negzero = 0;

    dropout_relu_forward(h, mask, z, F, 0, N, key);
    for (size_t e = 0; e < ne; e++) {
        int keep = dropout_keep(key, e);
        kept += keep;
        badmask += mask[e] != (keep && z[e] > 0.0f);
        float want = keep && z[e] > 0.0f ? z[e] * 2.0f : 0.0f; /* 1/(1-p) = 2 */
        badh += h[e] != want;
        negzero += signbit(h[e]) != 0;
    }
    CHECK_INT(badmask, ==, 0);
    CHECK_INT(badh, ==, 0);
    CHECK_INT(negzero, ==, 0); /* a dropped or negative input gives +0 */
    /* binomial(100000, 0.5): sd 0.0016, so +-0.01 is 6 sd */
    CHECK_NEAR((double)kept / (double)ne, 0.5, 0.01);
    /* the bits themselves: keep is bit e%64 of draw e/64 */
    CHECK_INT(dropout_keep(key, 130), ==, (int)((rng_at(key, 2) >> 2) & 1));

    /* row blocks [0,37), [37,38), [38,100) and in place: the same */
    memcpy(h2, z, ne * sizeof *z);
    memset(mask2, 0xaa, ne);
    dropout_relu_forward(h2, mask2, h2, F, 0, 37, key);
    dropout_relu_forward(h2, mask2, h2, F, 37, 38, key);
    dropout_relu_forward(h2, mask2, h2, F, 38, N, key);
    CHECK(memcmp(h, h2, ne * sizeof *h) == 0);
    CHECK(memcmp(mask, mask2, ne) == 0);

    /* rows first + n of the step's: rows [37, 100) from a block whose
     * first is 37 are those of the whole forward's (each row starts at a
     * different bit of a draw: 1000 % 64 = 40) */
    dropout_relu_forward_at(h2, mask2, z + 37 * (size_t)F, F, 0, N - 37, key, 37);
    CHECK(memcmp(h + 37 * (size_t)F, h2, (N - 37) * (size_t)F * sizeof *h) == 0);
    CHECK(memcmp(mask + 37 * (size_t)F, mask2, (N - 37) * (size_t)F) == 0);

    /* another key: other masks */
    dropout_relu_forward(h2, mask2, z, F, 0, N, key + 1);
    CHECK(memcmp(mask, mask2, ne) != 0);
    free(h2);
    free(mask2);
}

/* Backward: dz = dh * 2 where mask, else 0 (also in place, in blocks). */
static void test_backward(const uint8_t *mask)
{
    const size_t ne = (size_t)N * F;
    float *dh = fvec(ne), *dz = fvec(ne), *d2 = fvec(ne);
    long baddz = 0;

    fill(dh, ne, -1.0f, 1.0f);
    dropout_relu_backward(dz, dh, mask, F, 0, N);
    for (size_t e = 0; e < ne; e++)
        baddz += dz[e] != (mask[e] ? dh[e] * 2.0f : 0.0f);
    CHECK_INT(baddz, ==, 0);
    memcpy(d2, dh, ne * sizeof *dh);
    dropout_relu_backward(d2, d2, mask, F, 0, 50);
    dropout_relu_backward(d2, d2, mask, F, 50, N);
    CHECK(memcmp(dz, d2, ne * sizeof *dz) == 0);
    free(dh);
    free(dz);
    free(d2);
}

/* A small layer for the finite differences. */
typedef struct Small {
    int n, f;
    uint64_t key;
    float *z, *h, *R;
    uint8_t *mask;
} Small;

/* L = sum(h * R) in double, with the same key (so the same masks). */
static double small_loss(void *ctx)
{
    Small *s = ctx;
    dropout_relu_forward(s->h, s->mask, s->z, s->f, 0, s->n, s->key);
    return dsumprod(s->h, s->R, (size_t)s->n * s->f);
}

/* Finite differences w.r.t. z, eps = 1e-3 in float, L in double; elements
 * with |z| < 2 eps are skipped (the ReLU kink lies within the
 * difference).  rel < 1e-2. */
static void test_fd(uint64_t key)
{
    const size_t m = 3 * 70;
    Small s = {.n = 3, .f = 70, .key = key, .z = fvec(m), .h = fvec(m), .R = fvec(m),
               .mask = xcalloc(m, 1)};
    float *g = fvec(m);
    long skipped = 0;

    fill(s.z, m, -1.0f, 1.0f);
    fill(s.R, m, -1.0f, 1.0f);
    dropout_relu_forward(s.h, s.mask, s.z, s.f, 0, s.n, key);
    dropout_relu_backward(g, s.R, s.mask, s.f, 0, s.n);
    const GradCheck gc = {.loss = small_loss, .ctx = &s, .eps = 1e-3f, .skip_below = 2 * 1e-3f};
    const GradInput in = {.f = s.z, .n = m, .grad = g};
    CHECK_GRAD(&gc, &in, &skipped, 1e-2, "relu+dropout dz vs FD");
    CHECK(skipped < (long)m / 10);
    free(s.z); free(s.h); free(s.R); free(s.mask); free(g);
}

int main(void)
{
    const uint64_t key = rng_key(42, RNG_DROPOUT, 7);
    const size_t ne = (size_t)N * F;
    float *z = fvec(ne), *h = fvec(ne);
    uint8_t *mask = xcalloc(ne, 1);
    long badeval = 0;

    fill(z, ne, -1.0f, 1.0f);
    for (size_t e = 0; e < ne; e += 997)
        z[e] = 0.0f; /* ReLU's edge: 0 is not > 0 */
    /* values a select by bit masks must treat as the comparisons do: NaN
     * and -0 and -inf are not > 0 (h = +0, no gradient), +inf is */
    for (size_t e = 501; e < ne; e += 4999) {
        z[e] = NAN;
        z[e + 1] = -0.0f;
        z[e + 2] = -INFINITY;
        z[e + 3] = INFINITY;
    }
    test_forward(key, z, h, mask);
    test_backward(mask);
    test_fd(key);
    /* evaluation: mask NULL is plain ReLU, whatever the key */
    dropout_relu_forward(h, NULL, z, F, 0, N, key);
    for (size_t e = 0; e < ne; e++)
        badeval += h[e] != (z[e] > 0.0f ? z[e] : 0.0f);
    CHECK_INT(badeval, ==, 0);
    free(z);
    free(h);
    free(mask);
    return check_report();
}
