/*
 * model_cost.c: what one step of the reference CNN costs, without running
 * it: the FLOPs of the model and of each profiled op, and the SGEMM calls
 * of a step at batch N as the work partition cuts them (for the
 * calibration).
 */
#include <string.h>

#include "nn/model_impl.h"

/* ---- FLOPs ---- */

double model_flops_forward(void)
{
    double f = 0.0;

    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        f += 2.0 * cs->OC * model_spec_ckk(cs) * cs->H * cs->W;
    }
    for (int l = 0; l < 3; l++)
        f += 2.0 * model_fc_specs[l].IN * model_fc_specs[l].OUT;
    return f;
}

double model_op_flops(ProfOp op)
{
    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        double f = 2.0 * cs->OC * model_spec_ckk(cs) * cs->H * cs->W;
        if (op == cs->fconv)
            return f;
        if (op == cs->bconv) /* dW, and dx except for the first layer */
            return l == 0 ? f : 2.0 * f;
    }
    static const ProfOp ff[3] = {PROF_FC1_F, PROF_FC2_F, PROF_FC3_F};
    static const ProfOp fb[3] = {PROF_FC1_B, PROF_FC2_B, PROF_FC3_B};
    for (int l = 0; l < 3; l++) {
        double f = 2.0 * model_fc_specs[l].IN * model_fc_specs[l].OUT;
        if (op == ff[l])
            return f;
        if (op == fb[l])
            return 2.0 * f;
    }
    return 0.0; /* elementwise layers: not counted as FLOPs */
}

double model_flops_backward(void)
{
    /* Weight and input gradients each cost a forward's GEMM, except that
     * conv1 needs no input gradient. */
    const ConvSpec *c1 = &model_conv_specs[0];
    return 2.0 * model_flops_forward() - 2.0 * c1->OC * model_spec_ckk(c1) * c1->H * c1->W;
}

double model_op_flops_executed(ProfOp op)
{
    /* Block 1's forward runs in two passes (model_forward.c): conv1 fwd
     * takes its input's moments, bn1+relu+pool1 fwd its direct
     * convolution (counted as the model counts it; the padding lanes of
     * the phase planes are left out) beside the BN, ReLU and pool. */
    const ConvSpec *c1 = &model_conv_specs[0];
    if (op == c1->fconv)
        return conv_phase_moments_flops(c1->H, c1->W);
    if (op == c1->fbn)
        return model_op_flops(c1->fconv);
    for (int l = 1; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        double wino = 2.0 * WINO_P * model_spec_pairs(cs) * (double)wino_tiles(cs->H, cs->W);
        if (op == cs->fconv)
            return wino + wino_transform_flops(cs->H, cs->W, cs->C, cs->OC, 0, 0);
        /* dW and dX (every Winograd block passes its input gradient on),
         * and dg = G^T dU G: its 9 columns of E = G^T dU once a group (of
         * the chunk's images at most), dg = E G once a chunk
         * (model_backward.c, layer_wino.h). */
        if (op == cs->bconv) {
            const int sg = model_spec_group(cs), g = sg < cs->chunk ? sg : cs->chunk;
            return 2.0 * wino + wino_transform_flops(cs->H, cs->W, cs->C, cs->OC, 1, 1) +
                   WINO_A * wino_filter_grad_column_flops(model_spec_pairs(cs)) / g +
                   wino_filter_grad_flops(model_spec_pairs(cs)) / cs->chunk;
        }
    }
    return model_op_flops(op); /* conv1 runs direct; the fc layers as counted */
}

double model_flops_executed(void)
{
    double f = 0.0;

    for (int op = 0; op < PROF_NOPS; op++)
        f += model_op_flops_executed((ProfOp)op);
    return f;
}

/* ---- bytes: what each op moves to or from memory (model.h) ---- */

#define F4 4.0 /* bytes a float */

static double spec_in(const ConvSpec *cs)
{
    return (double)cs->C * cs->H * cs->W;
}

static double spec_y(const ConvSpec *cs)
{
    return (double)cs->OC * cs->H * cs->W;
}

/* Positions after the 2x2 pool: an odd last row or column is dropped. */
static double spec_pooled(const ConvSpec *cs)
{
    const int ph = cs->H / 2, pw = cs->W / 2;

    return (double)cs->OC * ph * pw;
}

/* Floats of a block's weights and its transformed filters U. */
static double spec_w(const ConvSpec *cs)
{
    return (double)cs->OC * model_spec_ckk(cs);
}

static double spec_u(const ConvSpec *cs)
{
    return cs == &model_conv_specs[0] ? 0.0 : (double)WINO_P * model_spec_pairs(cs);
}

double model_op_bytes_image(ProfOp op)
{
    const double x = (double)MODEL_H * MODEL_W * F4;

    if (op == PROF_DATA)
        return x + 1.0; /* the batch's images and labels */
    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        /* after the pool: out and ymax (floats) and idx (a byte) */
        const double pool = spec_pooled(cs) * (2 * F4 + 1), in = spec_in(cs) * F4;
        const double y = spec_y(cs) * F4, dout = spec_pooled(cs) * F4;
        if (op == cs->fconv) /* block 1: the input's moments; else in -> y */
            return l == 0 ? x : in + y;
        if (op == cs->fbn) /* block 1 makes its conv again from x here */
            return (l == 0 ? x : y) + pool;
        if (op == cs->bbn) /* dout, idx, ymax (as out, idx, ymax); the last block's
                              flatten back first */
            return pool + (l == MODEL_NBLOCKS - 1 ? 2 * (double)MODEL_FLAT * F4 : 0.0);
        if (op == cs->bconv) /* dout, idx and the input; y read and dy written, dx */
            return dout + spec_pooled(cs) + in + (l == 0 ? 0.0 : 2 * y + in);
    }
    static const ProfOp ff[3] = {PROF_FC1_F, PROF_FC2_F, PROF_FC3_F};
    static const ProfOp fb[3] = {PROF_FC1_B, PROF_FC2_B, PROF_FC3_B};
    for (int l = 0; l < 3; l++) {
        const FcSpec *fs = &model_fc_specs[l];
        const double in = fs->IN * F4, out = fs->OUT * F4, mask = l < 2 ? fs->OUT : 0.0;
        if (op == ff[l]) /* fc1 flattens first: block 3's out to flat */
            return in + out + mask + (l == 0 ? 2 * (double)MODEL_FLAT * F4 : 0.0);
        if (op == fb[l]) /* dy and the mask, x for dW, dx */
            return out + mask + 2 * in;
    }
    if (op == PROF_LOSS) /* logits and label in, probabilities and dlogits out */
        return 3.0 * MODEL_CLASSES * F4 + 1.0;
    return 0.0; /* the optimizer: per step */
}

double model_op_bytes_step(ProfOp op)
{
    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        const double w = (spec_w(cs) + cs->OC) * F4, u = spec_u(cs) * F4;
        if (op == cs->fconv) /* w and b read; U written and read */
            return w + 2 * u;
        if (op == cs->bconv) /* U read (dx), dW and db written */
            return u + w;
    }
    static const ProfOp ff[3] = {PROF_FC1_F, PROF_FC2_F, PROF_FC3_F};
    static const ProfOp fb[3] = {PROF_FC1_B, PROF_FC2_B, PROF_FC3_B};
    for (int l = 0; l < 3; l++) {
        const double w = ((double)model_fc_specs[l].IN * model_fc_specs[l].OUT +
                          model_fc_specs[l].OUT) * F4;
        if (op == ff[l])
            return w;
        if (op == fb[l]) /* W read (dx), dW and db written */
            return 2 * w;
    }
    if (op == PROF_OPTIM) /* p, g, m, v read; p, m, v written */
        return 7.0 * (double)params_count() * F4;
    return 0.0;
}

double model_bytes_image(int batch)
{
    double b = 0.0;

    for (int op = 0; op < PROF_NOPS; op++)
        b += model_op_bytes_image((ProfOp)op) +
             model_op_bytes_step((ProfOp)op) / (batch > 0 ? batch : 1);
    return b;
}

/* ---- the SGEMM shapes of a step, for the calibration ---- */

/* Walks the same partition as the step (chunks, Winograd groups, column blocks)
 * without touching any buffer, so the calibration times the calls that
 * training really makes. */
typedef struct ShapeList {
    GemmShape *out;
    int max, n;
} ShapeList;

static void shape_add(ShapeList *sl, const char *what, int ta, int tb, int M, int N,
                      int K, int par)
{
    for (int i = 0; i < sl->n && i < sl->max; i++) {
        GemmShape *g = &sl->out[i];
        if (!strcmp(g->what, what) && g->ta == ta && g->tb == tb && g->M == M &&
            g->N == N && g->K == K) {
            g->count++;
            return;
        }
    }
    if (sl->n < sl->max)
        sl->out[sl->n] = (GemmShape){.what = what, .ta = ta, .tb = tb, .M = M,
                                     .N = N, .K = K, .count = 1, .par = par};
    sl->n++;
}

/* dir 0: forward, 1: weight gradient, 2: input gradient: the 81 GEMMs of
 * each Winograd group (layer_wino.h). */
static void conv_shapes(ShapeList *sl, int l, int N, int dir)
{
    static const char *const names[MODEL_NBLOCKS][3] = {
        {"conv1 fwd", "conv1 dW", "conv1 dX"},
        {"conv2 fwd", "conv2 dW", "conv2 dX"},
        {"conv3 fwd", "conv3 dW", "conv3 dX"}};
    const ConvSpec *cs = &model_conv_specs[l];
    const int group = model_spec_group(cs), C = cs->C, OC = cs->OC;
    const int TT = wino_tiles(cs->H, cs->W);
    const char *what = names[l][dir];

    for (int c = 0; c < model_block_chunks(l, N); c++) {
        int n0, n1;
        model_block_chunk_range(l, N, c, &n0, &n1);
        for (int k = 0; k < model_group_count(n0, n1, group); k++) {
            int t0 = model_group_start(n0, n1, group, k);
            int T = (model_group_start(n0, n1, group, k + 1) - t0) * TT;
            for (int x = 0; x < WINO_P; x++) {
                if (dir == 0)
                    shape_add(sl, what, 0, 0, OC, T, C, model_block_chunks(l, N));
                else if (dir == 1)
                    shape_add(sl, what, 0, 1, OC, C, T, model_block_chunks(l, N));
                else
                    shape_add(sl, what, 1, 0, C, T, OC, model_block_chunks(l, N));
            }
        }
    }
}

static void fc_shapes(ShapeList *sl, int l, int N, int back)
{
    static const char *const names[3][3] = {
        {"fc1 fwd", "fc1 dW", "fc1 dX"},
        {"fc2 fwd", "fc2 dW", "fc2 dX"},
        {"fc3 fwd", "fc3 dW", "fc3 dX"}};
    const FcSpec *fs = &model_fc_specs[l];
    const int nw = model_ceil_div(fs->OUT, FC_OUT_BLOCK), ni = model_ceil_div(fs->IN, FC_IN_BLOCK);
    const int rc = model_fc_row_chunks(fs, N);

    for (int o0 = 0; o0 < fs->OUT; o0 += FC_OUT_BLOCK) {
        int no = fs->OUT - o0 < FC_OUT_BLOCK ? fs->OUT - o0 : FC_OUT_BLOCK;
        if (!back)
            for (int r = 0; r < rc; r++)
                shape_add(sl, names[l][0], 0, 1, (r + 1) * N / rc - r * N / rc, no, fs->IN,
                          nw * rc);
        else
            shape_add(sl, names[l][1], 1, 0, no, fs->IN, N, nw + ni);
    }
    for (int i0 = 0; back && i0 < fs->IN; i0 += FC_IN_BLOCK) {
        int nin = fs->IN - i0 < FC_IN_BLOCK ? fs->IN - i0 : FC_IN_BLOCK;
        shape_add(sl, names[l][2], 0, 0, N, nin, fs->OUT, nw + ni);
    }
}

int model_gemm_shapes(int N, GemmShape *out, int max)
{
    ShapeList sl = {.out = out, .max = max < 0 ? 0 : max, .n = 0};

    if (N < 1)
        return 0;
    /* Block 1's conv is not an SGEMM (layer_conv_phase.h). */
    for (int l = 1; l < MODEL_NBLOCKS; l++)
        conv_shapes(&sl, l, N, 0);
    for (int l = 0; l < 3; l++)
        fc_shapes(&sl, l, N, 0);
    for (int l = 2; l >= 0; l--)
        fc_shapes(&sl, l, N, 1);
    for (int l = MODEL_NBLOCKS - 1; l >= 1; l--) {
        conv_shapes(&sl, l, N, 1);
        conv_shapes(&sl, l, N, 2);
    }
    return sl.n;
}
