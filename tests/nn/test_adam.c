/*
 * test_adam.c: the Adam step (optim_adam.h): two steps against
 * hand-worked values (torch.optim.Adam), split ranges, untouched
 * neighbours, and moments that would be subnormal.
 */
#include <math.h>

#include "check.h"
#include "nn/optim_adam.h"

static void test_adam(void)
{
    /*
     * lr 0.1, b1 0.9, b2 0.999, eps 1e-8; p0 = [1, -0.5, 2];
     * g1 = [0.5, -0.25, 0], g2 = [-0.1, 0.3, 0.001].
     * Step 1 (1-b1 = 0.1, 1-b2 = 0.001, lr/(1-b1) = 1, sqrt(1-b2) = 0.0316228):
     *   m = 0.1 g1 = [0.05, -0.025, 0];  v = 0.001 g1^2 = [2.5e-4, 6.25e-5, 0]
     *   sqrt(v)/sqrt(0.001) = |g1| = [0.5, 0.25, 0]
     *   p -= 1 * m / (|g1| + 1e-8): [0.05/0.50000001, -0.025/0.25000001, 0/1e-8]
     *   p1 = [0.900000002, -0.400000004, 2]
     * Step 2 (1-b1^2 = 0.19, 1-b2^2 = 0.001999, lr/0.19 = 0.526315789):
     *   m = 0.9 m + 0.1 g2 = [0.035, 0.0075, 1e-4]
     *   v = 0.999 v + 0.001 g2^2 = [2.5975e-4, 1.524375e-4, 1e-9]
     *   sqrt(v)/sqrt(0.001999) = [0.360472, 0.276146, 7.07284e-4]
     *   p -= 0.526315789 * m / (that + 1e-8)
     *   p2 = [0.8488973957, -0.4142944765, 1.9255873697]
     * (the same as torch.optim.Adam in double.)
     */
    float p[3] = {1.0f, -0.5f, 2.0f}, m[3] = {0}, v[3] = {0};
    const float g1[3] = {0.5f, -0.25f, 0.0f};
    float g2[3] = {-0.1f, 0.3f, 0.001f};
    const double p1[3] = {0.900000002, -0.4000000039999998, 2.0};
    const double p2[3] = {0.8488973956993239, -0.414294476547747, 1.9255873697336898};

    adam_update(p, m, v, g1, 0, 3, 1, 0.1);
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(p[i], p1[i], 1e-6);
    /* in two ranges, as the engine splits the flat parameter array */
    adam_update(p, m, v, g2, 0, 1, 2, 0.1);
    adam_update(p, m, v, g2, 1, 3, 2, 0.1);
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(p[i], p2[i], 1e-6);
    /* m, v after step 2 (torch keeps them in float: 0.035 and 1.524375e-4
     * to float precision, ~6e-8 relative; 1e-6 relative allowed) */
    CHECK_NEAR(m[0], 0.035, 0.035 * 1e-6);
    CHECK_NEAR(v[1], 1.524375e-4, 1.524375e-4 * 1e-6);
    /* outside [i0, i1): untouched */
    float q[4] = {5, 5, 5, 5}, qm[4] = {0}, qv[4] = {0};
    const float qg[4] = {1, 1, 1, 1};
    adam_update(q, qm, qv, qg, 1, 3, 1, 0.1);
    CHECK(q[0] == 5.0f && q[3] == 5.0f && qm[0] == 0.0f && qv[3] == 0.0f);
    CHECK_NEAR(q[1], 4.9, 1e-6);
    /* Moments that would fall below FLT_MIN become 0 (no subnormals:
     * optim_adam.c); ones above it stay. */
    {
        float r[3] = {1, 1, 1}, rm[3] = {1.2e-38f, -1.2e-38f, 1.0e-37f};
        float rv[3] = {1.0e-38f, 1.176e-38f, 1.0e-37f};
        const float rg[3] = {0, 0, 0};
        adam_update(r, rm, rv, rg, 0, 3, 5, 0.1);
        CHECK(rm[0] == 0.0f && rm[1] == 0.0f && rv[0] == 0.0f);
        CHECK(rv[1] == 0.0f); /* normal, but 0.999 of it is below FLT_MIN */
        CHECK_NEAR(rm[2], 0.9e-37, 1e-44);
        CHECK(rv[2] > 0.0f && isnormal(rv[2]));
        /* such moments move p by ~1e-30: not at all, in float */
        CHECK(r[0] == 1.0f && r[1] == 1.0f && r[2] == 1.0f);
    }
}

int main(void)
{
    test_adam();
    return check_report();
}
