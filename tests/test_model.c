/*
 * test_model.c: the whole network's gradient against central finite
 * differences of its loss, on a tiny batch.
 *
 * For every learnable tensor, the 3 elements with the largest analytic
 * gradient and 2 random ones are perturbed by +-eps (eps = 1e-3, float),
 * the loss recomputed with the same batch and the same dropout masks (the
 * same step number keys them), and (L+ - L-)/2eps compared with the
 * analytic gradient: |fd - g| <= 5% |g| + 3e-4 (float noise of a loss near
 * 2.3 divided by 2eps is about 1e-4).  A perturbation that flips a ReLU or
 * a pooling choice can break the bound for one element; at most one miss
 * per tensor is allowed and reported.  Conv biases feed BatchNorm, so their
 * true gradient is 0: they must be within 1e-4 of the largest weight
 * gradient of their layer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"
#include "rng.h"

#define N 4
#define EPS 1e-3f

static double loss_at(StepCtx *s)
{
    model_forward(s, N, 1, 7);
    return model_loss(s, N);
}

static void fill_batch(Acts *a)
{
    uint64_t key = rng_key(42, 99, 0);
    for (int i = 0; i < N * MODEL_H * MODEL_W; i++)
        a->x[i] = 2.0f * rng_unit(rng_at(key, (uint64_t)i)) - 0.5f;
    for (int n = 0; n < N; n++)
        a->labels[n] = (uint8_t)(n * 3 % MODEL_CLASSES);
}

/* Indices of the k largest |g| in g[0..n). */
static void top_k(const float *g, size_t n, size_t *out, int k)
{
    for (int j = 0; j < k; j++) {
        size_t best = 0;
        float bv = -1.0f;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (int q = 0; q < j; q++)
                taken |= out[q] == i;
            if (!taken && fabsf(g[i]) > bv) {
                bv = fabsf(g[i]);
                best = i;
            }
        }
        out[j] = best;
    }
}

static void check_tensor(StepCtx *s, const float *gsave, int t)
{
    Params *ps = s->ps;
    const TensorDesc *d = &model_tensors[t];
    size_t n = tensor_numel(d), pick[5];
    const float *g = gsave + ps->off[t];
    int misses = 0;

    top_k(g, n, pick, 3);
    pick[3] = rng_at(rng_key(1, 2, (uint64_t)t), 0) % n;
    pick[4] = rng_at(rng_key(1, 2, (uint64_t)t), 1) % n;
    for (int j = 0; j < 5; j++) {
        float *w = ps->p[t] + pick[j], keep = *w;
        *w = keep + EPS;
        double lp = loss_at(s);
        *w = keep - EPS;
        double lm = loss_at(s);
        *w = keep;
        double fd = (lp - lm) / (2.0 * EPS), an = g[pick[j]];
        if (fabs(fd - an) > 0.05 * fabs(an) + 3e-4) {
            misses++;
            fprintf(stderr, "%s[%zu]: analytic %.6g, finite difference %.6g\n", d->name,
                    pick[j], an, fd);
        }
    }
    CHECK_INT(misses, <=, 1);
}

int main(void)
{
    Params ps;
    Acts a;
    Pool *pool;
    StepCtx s;

    CHECK_INT(params_init(&ps, 3), ==, 0);
    CHECK_INT(acts_init(&a, N, 1), ==, 0);
    CHECK_INT(pool_new(&pool, 1, NULL), ==, 0);
    s = (StepCtx){.ps = &ps, .a = &a, .pool = pool, .prof = NULL, .seed = 5};
    fill_batch(&a);

    double l0 = loss_at(&s);
    model_backward(&s, N);
    float *gsave = malloc(ps.nfloats * sizeof(float));
    memcpy(gsave, ps.grads, ps.nfloats * sizeof(float));
    fprintf(stderr, "loss %.6f\n", l0);
    CHECK(l0 > 1.0 && l0 < 5.0);

    static const int conv_bias[3] = {T_C1B, T_C2B, T_C3B}, conv_w[3] = {T_C1W, T_C2W, T_C3W};
    for (int t = 0; t < MODEL_NTENSORS; t++) {
        int is_bias = t == conv_bias[0] || t == conv_bias[1] || t == conv_bias[2];
        if (!is_bias)
            check_tensor(&s, gsave, t);
    }
    for (int l = 0; l < 3; l++) {
        size_t nb = tensor_numel(&model_tensors[conv_bias[l]]);
        size_t nw = tensor_numel(&model_tensors[conv_w[l]]);
        float gb = 0, gw = 0;
        for (size_t i = 0; i < nb; i++)
            gb = fmaxf(gb, fabsf(gsave[ps.off[conv_bias[l]] + i]));
        for (size_t i = 0; i < nw; i++)
            gw = fmaxf(gw, fabsf(gsave[ps.off[conv_w[l]] + i]));
        CHECK(gb <= 1e-4f * gw);
    }
    free(gsave);
    pool_free(pool);
    acts_done(&a);
    params_done(&ps);
    return check_report();
}
