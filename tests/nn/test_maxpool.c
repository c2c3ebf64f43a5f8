/*
 * test_maxpool.c: the max-pool's ties (layer_maxpool.h): equal inputs give
 * equal z, and the first maximum in row-major window order wins, in the
 * plane kernel and in the phase kernel of block 1 alike; a window that
 * ReLU clipped entirely is MAXPOOL_NOGRAD; the gradient of a tied window
 * goes to the winner only.  The fused BN + ReLU + pool against its
 * reference: test_bn.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/layer_maxpool.h"
#include "nntest.h"

static void test_ties(void)
{
    /* one channel, one image, 2 x 8: four windows (columns 2pw, 2pw+1)
     *   w0 = [0.5 2 | 2 1]   -> max 2 at 1 (the top-right, before bottom-left)
     *   w1 = [3 3 | 3 3]     -> 0
     *   w2 = [1 1 | 3 3]     -> 2
     *   w3 = [-3 -3 | -3 -3] -> clipped: MAXPOOL_NOGRAD, out 0 */
    const float y[16] = {0.5f, 2.0f, 3.0f, 3.0f, 1.0f, 1.0f, -3.0f, -3.0f,
                         2.0f, 1.0f, 3.0f, 3.0f, 3.0f, 3.0f, -3.0f, -3.0f};
    const float scale = 1.0f, shift = 0.0f;
    float out[4], ym[4];
    uint8_t idx[4];

    MaxpoolTables *pt = xcalloc(1, sizeof *pt);

    maxpool_tables_init(pt, 2, 8);
    maxpool_forward(out, idx, ym, y, &scale, &shift, 1, 1, pt, 0, 1);
    CHECK_INT(idx[0], ==, 1);
    CHECK_INT(idx[1], ==, 0);
    CHECK_INT(idx[2], ==, 2);
    CHECK_INT(idx[3], ==, MAXPOOL_NOGRAD);
    CHECK(out[0] == 2.0f && out[1] == 3.0f && out[2] == 3.0f && out[3] == 0.0f);
    CHECK(ym[0] == 2.0f && ym[1] == 3.0f && ym[2] == 3.0f); /* y at each maximum */

    /* the same windows split into their four elements (layer_conv_phase.h) */
    float z[16], out2[4], ym2[4];
    uint8_t idx2[4];
    for (int pw = 0; pw < 4; pw++)
        for (int k = 0; k < 4; k++)
            z[k * 4 + pw] = y[(k >> 1) * 8 + 2 * pw + (k & 1)];
    maxpool_forward_phases(out2, idx2, ym2, z, 4, scale, shift);
    CHECK(memcmp(out, out2, sizeof out) == 0 && memcmp(idx, idx2, sizeof idx) == 0);
    CHECK(memcmp(ym, ym2, 3 * sizeof *ym) == 0);

    /* the gradient of a tied window goes to the winner only: with
     * mdz = mdzx = 0 maxpool_backward routes k1 * dout to that position */
    const float dout[4] = {1.0f, 2.0f, 4.0f, 8.0f}, gamma = 1.0f, mean = 0.0f, invstd = 1.0f;
    const float zero = 0.0f;
    float dy[16];
    memcpy(dy, y, sizeof dy);
    maxpool_backward(dy, dout, idx, &gamma, &mean, &invstd, &zero, &zero, 1, 1, pt, 0, 1);
    const float want[16] = {0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
    long bad = 0;
    for (int i = 0; i < 16; i++)
        bad += dy[i] != want[i]; /* by value: the mean terms may give -0 */
    CHECK_INT(bad, ==, 0);
    free(pt);
}

int main(void)
{
    test_ties();
    return check_report();
}
