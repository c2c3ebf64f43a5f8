/*
 * test_maxpool.c: the max-pool's ties (layer_maxpool.h): equal inputs give
 * equal z, and the first maximum in row-major window order wins, in the
 * channels-last kernel (a vector of channels and a tail) and in the phase
 * kernel of block 1 alike; a window that
 * ReLU clipped entirely is MAXPOOL_NOGRAD; the gradient of a tied window
 * goes to the winner only.  The fused BN + ReLU + pool against its
 * reference: test_bn.c.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "nn/layer_maxpool.h"

/* Channels per test: a vector of 16 and a tail, each channel the same. */
#define TC 17

static void test_ties(void)
{
    /* one image, 2 x 8: four windows (columns 2pw, 2pw+1)
     *   w0 = [0.5 2 | 2 1]   -> max 2 at 1 (the top-right, before bottom-left)
     *   w1 = [3 3 | 3 3]     -> 0
     *   w2 = [1 1 | 3 3]     -> 2
     *   w3 = [-3 -3 | -3 -3] -> clipped: MAXPOOL_NOGRAD, out 0 */
    const float y[16] = {0.5f, 2.0f, 3.0f, 3.0f, 1.0f, 1.0f, -3.0f, -3.0f,
                         2.0f, 1.0f, 3.0f, 3.0f, 3.0f, 3.0f, -3.0f, -3.0f};
    const uint8_t want_idx[4] = {1, 0, 2, MAXPOOL_NOGRAD};
    const float want_out[4] = {2.0f, 3.0f, 3.0f, 0.0f}, want_ym[3] = {2.0f, 3.0f, 3.0f};
    float scale[TC], shift[TC], yl[16 * TC], out[4 * TC], ym[4 * TC];
    uint8_t idx[4 * TC];
    long bad = 0;

    /* channels-last (layer_maxpool.h): every channel holds the same plane */
    for (int c = 0; c < TC; c++) {
        scale[c] = 1.0f;
        shift[c] = 0.0f;
        for (int p = 0; p < 16; p++)
            yl[p * TC + c] = y[p];
    }
    maxpool_forward(out, idx, ym, yl, scale, shift, TC, 2, 8, 0, 1);
    for (int q = 0; q < 4; q++)
        for (int c = 0; c < TC; c++) {
            bad += idx[q * TC + c] != want_idx[q] || out[q * TC + c] != want_out[q];
            bad += q < 3 && ym[q * TC + c] != want_ym[q]; /* y at each maximum */
        }
    CHECK_INT(bad, ==, 0);

    /* the same windows split into their four elements (layer_conv_phase.h) */
    float z[16], out2[4], ym2[4];
    uint8_t idx2[4];
    for (int pw = 0; pw < 4; pw++)
        for (int k = 0; k < 4; k++)
            z[k * 4 + pw] = y[(k >> 1) * 8 + 2 * pw + (k & 1)];
    maxpool_forward_phases(out2, idx2, ym2, z, 4, 1.0f, 0.0f);
    CHECK(memcmp(want_out, out2, sizeof out2) == 0 && memcmp(want_idx, idx2, sizeof idx2) == 0);
    CHECK(memcmp(want_ym, ym2, sizeof want_ym) == 0);

    /* the gradient of a tied window goes to the winner only: with
     * mdz = mdzx = 0 maxpool_backward routes k1 * dout to that position */
    const float dout[4] = {1.0f, 2.0f, 4.0f, 8.0f};
    const float want[16] = {0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
    float gamma[TC], mean[TC], invstd[TC], zero[TC], dl[4 * TC], dy[16 * TC];
    for (int c = 0; c < TC; c++) {
        gamma[c] = invstd[c] = 1.0f;
        mean[c] = zero[c] = 0.0f;
        for (int q = 0; q < 4; q++)
            dl[q * TC + c] = dout[q];
    }
    memcpy(dy, yl, sizeof dy);
    maxpool_backward(dy, dl, idx, gamma, mean, invstd, zero, zero, TC, 2, 8, 0, 1);
    bad = 0;
    for (int p = 0; p < 16; p++)
        for (int c = 0; c < TC; c++)
            bad += dy[p * TC + c] != want[p]; /* by value: the mean terms may give -0 */
    CHECK_INT(bad, ==, 0);
}

int main(void)
{
    test_ties();
    return check_report();
}
