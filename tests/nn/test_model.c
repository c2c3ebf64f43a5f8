/*
 * test_model.c: the whole network's gradient against central finite
 * differences of its loss, on a tiny batch.
 *
 * For every learnable tensor, the 3 elements with the largest analytic
 * gradient and 2 random ones are perturbed by +-eps (eps = 1e-3, float),
 * the loss recomputed with the same batch and the same dropout masks (the
 * same step number keys them), and (L+ - L-)/2eps compared with the
 * analytic gradient: |fd - g| <= 5% |g| + 3e-4.  The float loss's rounding
 * noise divided by 2eps reached 3e-3 at eps 1e-3 (bn1's weights, on a Xeon
 * whose build sums conv1's moments in other lanes than the AVX2 one), so
 * an element outside the bound is measured again at 3 eps, a third of the
 * noise, and misses only when both are outside.  A perturbation that flips
 * a ReLU or a pooling choice can break the bound for one element; at most
 * one miss per tensor is allowed and reported.  Conv biases feed
 * BatchNorm, so their true gradient is 0: they must be within 1e-4 of the
 * largest weight gradient of their layer.
 *
 * Then the Winograd groups: with groups of one image (CNNTOP_GROUP_KB=1,
 * read when the Acts are made) every chunk sums its dU over one group per
 * image (beta 1: 8 in block 2, 16 in block 3) where the default runs one
 * or two.  The gradients are the same up to rounding: each tensor's within
 * 1e-4 of its largest |g|, a conv bias's of its layer's largest weight
 * gradient.  Measured: 4e-6 to 3e-5.  A chunk that kept only its last
 * group's dU is 0.2 to 1 off.  The products' rounding differs with the
 * group (OpenBLAS picks its kernels by shape), and where two values of a
 * pooling window lie within it the window's maximum can move, sending the
 * window's whole gradient elsewhere: a 2% difference in conv2's weight
 * gradient, once, in the portable build without FMA.  So the second run's
 * conv outputs are first checked against the first's (1e-4 of the largest)
 * and its backward then routed by the first run's choices.  Compared on one step, not on the losses of a training
 * run: Adam divides each gradient by its own size, so rounding-sized
 * gradients take full-sized steps whose sign is the rounding's, and two
 * runs' losses part by 1e-7 on one CPU and 1e-4 on another in five steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "nn/model.h"
#include "nn/model_impl.h"
#include "util/rng.h"

#define N 4
#define EPS 1e-3f

/* The loss of the step at the parameters' current values (ctx: StepCtx). */
static double loss_at(void *ctx)
{
    StepCtx *s = ctx;

    model_forward(s, N, 1, 7);
    return model_loss(s, N);
}

static void fill_batch(Acts *a, int nb)
{
    uint64_t key = rng_key(42, 99, 0);
    for (int i = 0; i < nb * MODEL_H * MODEL_W; i++)
        a->x[i] = 2.0f * rng_unit(rng_at(key, (uint64_t)i)) - 0.5f;
    for (int n = 0; n < nb; n++)
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
    const TensorDesc *d = &params_tensors[t];
    size_t n = params_numel(d), pick[5];
    const float *g = gsave + ps->off[t];
    int misses = 0;

    top_k(g, n, pick, 3);
    pick[3] = rng_at(rng_key(1, 2, (uint64_t)t), 0) % n;
    pick[4] = rng_at(rng_key(1, 2, (uint64_t)t), 1) % n;
    const GradCheck gc = {.loss = loss_at, .ctx = s, .eps = EPS},
                    wide = {.loss = loss_at, .ctx = s, .eps = 3 * EPS};
    const GradInput in = {.f = ps->p[t], .n = n, .grad = g};

    for (int j = 0; j < 5; j++) {
        double an = g[pick[j]], tol = 0.05 * fabs(an) + 3e-4;
        double fd = gradcheck_diff(&gc, &in, pick[j], NULL), fdw = NAN;
        if (fabs(fd - an) > tol)
            fdw = gradcheck_diff(&wide, &in, pick[j], NULL);
        if (!isnan(fdw) && fabs(fdw - an) > tol) {
            misses++;
            fprintf(stderr, "%s[%zu]: analytic %.6g, finite difference %.6g (eps %g), %.6g "
                    "(eps %g)\n", d->name, pick[j], an, fd, (double)EPS, fdw, 3.0 * EPS);
        }
    }
    CHECK_INT(misses, <=, 1);
}

/* max |g| over tensor t. */
static float tensor_max(const Params *ps, const float *g, int t)
{
    size_t n = params_numel(&params_tensors[t]);
    float m = 0.0f;
    for (size_t i = 0; i < n; i++)
        m = fmaxf(m, fabsf(g[ps->off[t] + i]));
    return m;
}

/* The conv layers' bias and weight tensors, layer by layer. */
static const int conv_bias[3] = {T_C1B, T_C2B, T_C3B}, conv_w[3] = {T_C1W, T_C2W, T_C3W};

static int is_conv_bias(int t)
{
    return t == conv_bias[0] || t == conv_bias[1] || t == conv_bias[2];
}

/* What one step's forward chose, for the other grouping to route by: the
 * conv outputs of blocks 2 and 3 and every block's pooling choices. */
#define NG 16
typedef struct Pooled {
    float *y[MODEL_NBLOCKS];
    uint8_t *idx[MODEL_NBLOCKS];
} Pooled;

static size_t block_ny(int l)
{
    const ConvSpec *cs = &model_conv_specs[l];
    return l == 0 ? 0 : (size_t)cs->OC * NG * cs->H * cs->W;
}

static size_t block_nidx(int l)
{
    const ConvSpec *cs = &model_conv_specs[l];
    return (size_t)cs->OC * NG * (cs->H / 2) * (cs->W / 2);
}

/* Keeps a's forward's choices in p (ref NULL), or (ref given) checks that
 * a's conv outputs are ref's up to rounding (1e-4 of the largest |y|) and
 * then routes a's backward as ref's forward chose: a window whose maximum
 * the rounding moved (two values within that tolerance) would send its
 * whole gradient to the other position, a difference of choice, not of
 * arithmetic.  Block 1's input is the batch itself: its choices must be
 * the same.  Returns the windows whose choice the rounding moved. */
static long pooled_match(Acts *a, Pooled *p, const Pooled *ref)
{
    long moved = 0;

    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const BlockBufs *bb = &a->blk[l];
        const size_t ny = block_ny(l), ni = block_nidx(l);
        if (!ref) {
            p->y[l] = ny ? malloc(ny * sizeof(float)) : NULL;
            p->idx[l] = malloc(ni);
            if (ny)
                memcpy(p->y[l], bb->y, ny * sizeof(float));
            memcpy(p->idx[l], bb->idx, ni);
            continue;
        }
        float big = 0.0f, worst = 0.0f;
        for (size_t i = 0; i < ny; i++) {
            big = fmaxf(big, fabsf(ref->y[l][i]));
            worst = fmaxf(worst, fabsf(bb->y[i] - ref->y[l][i]));
        }
        if (!(worst <= 1e-4f * big))
            fprintf(stderr, "groups of one image: block %d's conv output differs by %.3g "
                    "(largest |y| %.3g)\n", l + 1, worst, big);
        CHECK(worst <= 1e-4f * big);
        long m = 0;
        for (size_t i = 0; i < ni; i++)
            m += bb->idx[i] != ref->idx[l][i];
        if (l == 0)
            CHECK_INT(m, ==, 0);
        memcpy(bb->idx, ref->idx[l], ni);
        moved += m;
    }
    return moved;
}

static void pooled_free(Pooled *p)
{
    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        free(p->y[l]);
        free(p->idx[l]);
    }
}

/* The gradients of one step on a batch of NG (blocks 1-2: 2 chunks of 8
 * images; block 3: one of 16), the Acts made with CNNTOP_GROUP_KB = kb
 * (NULL: unset); its forward's choices kept in p (ref NULL) or matched to
 * ref's (pooled_match, *moved). */
static float *group_grads(Params *ps, Workpool *pool, const char *kb, int *group2, Pooled *p,
                          const Pooled *ref, long *moved)
{
    Acts a;
    float *g = malloc(ps->nfloats * sizeof(float));

    if (kb)
        setenv("CNNTOP_GROUP_KB", kb, 1);
    else
        unsetenv("CNNTOP_GROUP_KB");
    CHECK_INT(acts_init(&a, NG, 1), ==, 0);
    unsetenv("CNNTOP_GROUP_KB");
    *group2 = a.blk[1].group;
    fill_batch(&a, NG);
    StepCtx s = {.ps = ps, .a = &a, .pool = pool, .prof = NULL, .seed = 5};
    model_forward(&s, NG, 1, 3);
    *moved = pooled_match(&a, p, ref);
    model_loss(&s, NG);
    model_backward(&s, NG);
    memcpy(g, ps->grads, ps->nfloats * sizeof(float));
    acts_done(&a);
    return g;
}

static void test_groups(Params *ps, Workpool *pool)
{
    int gdef, gone;
    double most = 0.0;
    Pooled p0 = {.y = {NULL}};
    long moved;
    float *g0 = group_grads(ps, pool, NULL, &gdef, &p0, NULL, &moved);
    float *g1 = group_grads(ps, pool, "1", &gone, NULL, &p0, &moved);

    CHECK_INT(gone, ==, 1);
    CHECK_INT(gdef, >, 1);
    for (int t = 0; t < MODEL_NTENSORS; t++) {
        size_t n = params_numel(&params_tensors[t]);
        float ref = tensor_max(ps, g0, t), worst = 0.0f;
        for (int l = 0; l < 3; l++)
            if (t == conv_bias[l])
                ref = tensor_max(ps, g0, conv_w[l]);
        for (size_t i = 0; i < n; i++)
            worst = fmaxf(worst, fabsf(g1[ps->off[t] + i] - g0[ps->off[t] + i]));
        if (!(worst <= 1e-4f * ref))
            fprintf(stderr, "groups of one image: %s differs by %.3g (largest |g| %.3g)\n",
                    params_tensors[t].name, worst, ref);
        CHECK(worst <= 1e-4f * ref);
        if (ref > 0.0f && worst / ref > most)
            most = worst / ref;
        CHECK(ref > 0.0f || is_conv_bias(t));
    }
    fprintf(stderr, "groups of one image against %d: gradients within %.2g of each "
            "tensor's largest (%ld pooling windows' maxima moved by rounding)\n", gdef, most,
            moved);
    pooled_free(&p0);
    free(g0);
    free(g1);
}

/* model_block_chunk_most(l, B) bounds the chunks of every batch up to B
 * (acts_init caps the Winograd groups by it), and some batch reaches it. */
static void test_chunk_most(void)
{
    static const int Bs[] = {1, 7, 8, 9, 64, 127, 128, 129, 255, 256, 257, 512, 1000};

    for (int l = 0; l < MODEL_NBLOCKS; l++)
        for (size_t b = 0; b < sizeof Bs / sizeof *Bs; b++) {
            int most = 0;
            for (int n = 1; n <= Bs[b]; n++)
                for (int c = 0; c < model_block_chunks(l, n); c++) {
                    int n0, n1;
                    model_block_chunk_range(l, n, c, &n0, &n1);
                    most = n1 - n0 > most ? n1 - n0 : most;
                }
            CHECK_INT(most, ==, model_block_chunk_most(l, Bs[b]));
        }
}

int main(void)
{
    Params ps;
    Acts a;
    Workpool *pool;
    StepCtx s;

    test_chunk_most();
    CHECK_INT(params_init(&ps, 3), ==, 0);
    CHECK_INT(acts_init(&a, N, 1), ==, 0);
    CHECK_INT(workpool_new(&pool, 1, NULL), ==, 0);
    s = (StepCtx){.ps = &ps, .a = &a, .pool = pool, .prof = NULL, .seed = 5};
    fill_batch(&a, N);

    double l0 = loss_at(&s);
    model_backward(&s, N);
    float *gsave = malloc(ps.nfloats * sizeof(float));
    memcpy(gsave, ps.grads, ps.nfloats * sizeof(float));
    fprintf(stderr, "loss %.6f\n", l0);
    CHECK(l0 > 1.0 && l0 < 5.0);

    for (int t = 0; t < MODEL_NTENSORS; t++) {
        if (!is_conv_bias(t))
            check_tensor(&s, gsave, t);
    }
    for (int l = 0; l < 3; l++) {
        size_t nb = params_numel(&params_tensors[conv_bias[l]]);
        size_t nw = params_numel(&params_tensors[conv_w[l]]);
        float gb = 0, gw = 0;
        for (size_t i = 0; i < nb; i++)
            gb = fmaxf(gb, fabsf(gsave[ps.off[conv_bias[l]] + i]));
        for (size_t i = 0; i < nw; i++)
            gw = fmaxf(gw, fabsf(gsave[ps.off[conv_w[l]] + i]));
        CHECK(gb <= 1e-4f * gw);
    }
    free(gsave);
    test_groups(&ps, pool);
    workpool_free(pool);
    acts_done(&a);
    params_done(&ps);
    return check_report();
}
