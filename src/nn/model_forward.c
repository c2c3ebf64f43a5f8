/*
 * model_forward.c: the forward pass of the reference CNN and its loss,
 * phase by phase over the compute pool (model.h): the conv blocks (block 1
 * in two passes: its input's moments for the BN statistics, then its direct
 * convolution into the pool; blocks 2 and 3 through Winograd), the flatten,
 * the fc layers with ReLU and dropout.  Who may
 * write what while a phase runs: model.c's DESIGN.
 */
#include "nn/layer_bn.h"
#include "nn/layer_dropout.h"
#include "nn/layer_fc.h"
#include "nn/layer_maxpool.h"
#include "nn/loss_xent.h"
#include "nn/model_impl.h"
#include "util/rng.h"

/* Blocks 2 and 3: U = the Winograd transform of this step's filters,
 * FILTER_PAIRS (out-channel, in-channel) pairs per item. */
static void job_filter(void *jp, int item, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[j->l];
    long P = model_spec_pairs(cs), p0 = (long)item * FILTER_PAIRS;
    long p1 = p0 + FILTER_PAIRS < P ? p0 + FILTER_PAIRS : P;

    (void)tid;
    wino_filter(j->s->a->blk[j->l].U, j->s->ps->p[cs->tw], P, p0, p1);
}

static void job_conv_fwd(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[j->l];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[j->l];
    Params *ps = j->s->ps;
    double *acc = bb->part + (size_t)c * cs->OC * 2;
    int n0, n1;

    model_block_chunk_range(j->l, j->N, c, &n0, &n1);
    if (j->train)
        memset(acc, 0, (size_t)cs->OC * 2 * sizeof *acc);
    for (int k = 0; k < model_group_count(n0, n1, bb->group); k++) {
        int t = model_group_start(n0, n1, bb->group, k);
        int nt = model_group_start(n0, n1, bb->group, k + 1) - t;
        wino_forward(bb->y, model_block_input(a, j->l), cs->xl, bb->U, ps->p[cs->tb],
                     j->train ? acc : NULL, a->scratch[tid], bb->ws, cs->C, cs->OC, j->N, t, nt,
                     j->s->gemm);
    }
}

static void job_pool_fwd(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    int n0, n1;

    (void)tid;
    model_block_chunk_range(j->l, j->N, c, &n0, &n1);
    maxpool_forward(bb->out, j->train ? bb->idx : NULL, j->train ? bb->ymax : NULL, bb->y,
                    bb->scale, bb->shift, cs->OC, cs->H, cs->W, n0, n1 - n0);
}

/* Block 1, forward, first pass: the chunk's input moments, from which
 * block_stats() makes the BN statistics of every channel with no
 * convolution (layer_conv_phase.h). */
static void job_phase_moments(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[0];
    Acts *a = j->s->a;
    double *mom = a->blk[0].mom + (size_t)c * CONV_PHASE_MOMENTS;
    PhaseBufs pb = model_phase_bufs(a, tid);
    int n0, n1;

    model_block_chunk_range(0, j->N, c, &n0, &n1);
    memset(mom, 0, CONV_PHASE_MOMENTS * sizeof *mom);
    conv_phase_moments(mom, pb.xq, a->x + (size_t)n0 * cs->H * cs->W, n1 - n0, cs->H, cs->W);
}

/* Block 1, forward, second pass: the conv output again, normalised,
 * rectified and pooled into out (and idx, ymax when training), in blocks
 * of PHASE_IMAGES images: each block's inputs split once, then channel by
 * channel, so that a channel's rows of the block's images are written in
 * one run (image by image, each image's 32 channels wrote 96 runs of 784
 * bytes, N * 784 bytes apart: bn1+relu+pool1 fwd 1.25x as long per image
 * at batch 512 as at 64; bench/RESULTS.md, session 18). */
static void job_phase_pool(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[0];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[0];
    const float *w = j->s->ps->p[cs->tw], *b = j->s->ps->p[cs->tb];
    const int PW = cs->W / 2, PHW = (cs->H / 2) * PW;
    const size_t xqn = conv_phase_input_floats(cs->H, cs->W);
    PhaseBufs pb = model_phase_bufs(a, tid);
    int n0, n1;

    model_block_chunk_range(0, j->N, c, &n0, &n1);
    for (int nb = n0; nb < n1; nb += PHASE_IMAGES) {
        const int nn = model_phase_split(&pb, a, nb, n1);
        for (int oc0 = 0; oc0 < cs->OC; oc0 += CONV_PHASE_CONV_CH)
            for (int k = 0; k < nn; k++) {
                const int nc = cs->OC - oc0 < CONV_PHASE_CONV_CH ? cs->OC - oc0
                                                                 : CONV_PHASE_CONV_CH;
                conv_phase_conv(pb.z, nc, pb.xq + k * xqn, w + oc0 * 9, b + oc0, cs->H, cs->W);
                for (int e = 0, oc = oc0; e < nc; e++, oc++) {
                    size_t po = ((size_t)oc * j->N + nb + k) * PHW;
                    maxpool_forward_phases(pb.o, j->train ? pb.ix : NULL,
                                           j->train ? pb.ym : NULL, pb.z[e],
                                           (int)model_phase_n(), bb->scale[oc], bb->shift[oc]);
                    model_rows_copy(bb->out + po, PW, pb.o, CONV_PHASE_Q, cs->H / 2, PW,
                                    sizeof(float));
                    if (j->train) {
                        model_rows_copy(bb->idx + po, PW, pb.ix, CONV_PHASE_Q, cs->H / 2, PW, 1);
                        model_rows_copy(bb->ymax + po, PW, pb.ym, CONV_PHASE_Q, cs->H / 2, PW,
                                        sizeof(float));
                    }
                }
            }
    }
}

/* Data-parallel, BatchNorm synchronised: the statistics of block l over
 * every process's images.  Block 1 sums its moments across processes
 * (its backward pass keeps this process's own, in bb->mom); blocks 2 and 3
 * fold their chunks' sums in chunk order and sum those. */
static void block_stats_synced(StepCtx *s, int l, int N)
{
    const ConvSpec *cs = &model_conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    Params *ps = s->ps;
    const long M = (long)s->n_global * cs->H * cs->W;

    if (l == 0) {
        double g[CONV_PHASE_MOMENTS];
        memcpy(g, bb->mom + (size_t)MODEL_MAX_CHUNKS * CONV_PHASE_MOMENTS, sizeof g);
        s->hooks->sum(s->hooks->ud, g, CONV_PHASE_MOMENTS);
        conv_phase_stats_moments(bb->part, g, ps->p[cs->tw], ps->p[cs->tb], cs->OC, M);
    } else {
        bn_parts_fold(bb->part, model_block_chunks(l, N), cs->OC);
        s->hooks->sum(s->hooks->ud, bb->part, (size_t)cs->OC * 2);
    }
    bn_stats_finish(bb->mean, bb->invstd, ps->r[cs->rmean], ps->r[cs->rvar], bb->part, 1,
                    cs->OC, M);
}

/* The batch's BN statistics of block l from its chunks' partial sums
 * (block 1: from the moments, summed in chunk order and kept for the
 * backward pass). */
static void block_stats(StepCtx *s, int l, int N)
{
    const ConvSpec *cs = &model_conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    Params *ps = s->ps;
    const long M = (long)N * cs->H * cs->W;
    int nparts = model_block_chunks(l, N);

    if (l == 0) {
        double *sum = bb->mom + (size_t)MODEL_MAX_CHUNKS * CONV_PHASE_MOMENTS;
        memcpy(sum, bb->mom, CONV_PHASE_MOMENTS * sizeof *sum);
        for (int c = 1; c < nparts; c++)
            for (int e = 0; e < CONV_PHASE_MOMENTS; e++)
                sum[e] += bb->mom[(size_t)c * CONV_PHASE_MOMENTS + e];
        if (model_sync_bn(s))
            return block_stats_synced(s, l, N);
        conv_phase_stats_moments(bb->part, sum, ps->p[cs->tw], ps->p[cs->tb], cs->OC, M);
        nparts = 1;
    } else if (model_sync_bn(s))
        return block_stats_synced(s, l, N);
    bn_stats_finish(bb->mean, bb->invstd, ps->r[cs->rmean], ps->r[cs->rvar], bb->part, nparts,
                    cs->OC, M);
}

static void block_forward(StepCtx *s, int l, int N, int train, double *t0)
{
    const ConvSpec *cs = &model_conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    Params *ps = s->ps;
    StepJob j = {.s = s, .N = N, .l = l, .train = train};

    if (l > 0) {
        workpool_run(s->pool, model_ceil_div((int)model_spec_pairs(cs), FILTER_PAIRS), job_filter,
                     &j);
        workpool_run(s->pool, model_block_chunks(l, N), job_conv_fwd, &j);
    }
    else if (train)
        workpool_run(s->pool, model_block_chunks(l, N), job_phase_moments, &j);
    if (s->prof)
        profile_lap(s->prof, cs->fconv, t0);
    if (train)
        block_stats(s, l, N);
    else
        bn_stats_running(bb->mean, bb->invstd, ps->r[cs->rmean], ps->r[cs->rvar], cs->OC);
    bn_affine(bb->scale, bb->shift, ps->p[cs->tg], ps->p[cs->tbeta], bb->mean,
              bb->invstd, cs->OC);
    workpool_run(s->pool, model_block_chunks(l, N), l > 0 ? job_pool_fwd : job_phase_pool, &j);
    if (s->prof)
        profile_lap(s->prof, cs->fbn, t0);
}

/* flat (N, 1152) <- block 3's out (N, 3*3, 128), channels-last, and the
 * reverse for gradients: flat keeps PyTorch's (channel, row, column)
 * order, which fc1's weights expect. */
void model_job_flatten(void *jp, int c, int tid)
{
    StepJob *j = jp;
    Acts *a = j->s->a;
    const int C = model_conv_specs[2].OC, S = MODEL_FLAT / C;
    int n0, n1;

    (void)tid;
    model_chunk_range(j->N, c, &n0, &n1);
    for (int n = n0; n < n1; n++)
        for (int ch = 0; ch < C; ch++)
            for (int k = 0; k < S; k++) {
                size_t f = (size_t)n * MODEL_FLAT + (size_t)ch * S + k;
                size_t b = ((size_t)n * S + k) * C + ch;
                if (!j->back)
                    a->flat[f] = a->blk[2].out[b];
                else
                    a->blk[2].dout[b] = a->dflat[f];
            }
}

/* An fc layer's forward: column blocks of FC_OUT_BLOCK outputs, each in
 * model_fc_row_chunks() runs of images. */
static void job_fc_fwd(void *jp, int item, int tid)
{
    StepJob *j = jp;
    const FcSpec *fs = &model_fc_specs[j->l];
    Acts *a = j->s->a;
    const int rc = model_fc_row_chunks(fs, j->N);
    int o0 = item / rc * FC_OUT_BLOCK;
    int o1 = o0 + FC_OUT_BLOCK < fs->OUT ? o0 + FC_OUT_BLOCK : fs->OUT;
    int n0 = (int)((long)(item % rc) * j->N / rc), n1 = (int)((long)(item % rc + 1) * j->N / rc);

    (void)tid;
    fc_forward(model_fc_output(a, j->l) + (size_t)n0 * fs->OUT,
               model_fc_input(a, j->l) + (size_t)n0 * fs->IN, j->s->ps->p[fs->tw],
               j->s->ps->p[fs->tb], n1 - n0, fs->IN, fs->OUT, o0, o1,
               gemm_path_dense(j->s->gemm));
}

static void job_relu_drop_fwd(void *jp, int c, int tid)
{
    StepJob *j = jp;
    Acts *a = j->s->a;
    float *h = model_fc_output(a, j->l);
    int n0, n1;

    (void)tid;
    model_chunk_range(j->N, c, &n0, &n1);
    dropout_relu_forward_at(h, j->train ? (j->l == 0 ? a->m1 : a->m2) : NULL, h,
                            model_fc_specs[j->l].OUT, n0, n1, j->key, j->s->first);
}

static void fc_layer_forward(StepCtx *s, int l, int N, int train, long step)
{
    StepJob j = {.s = s, .N = N, .l = l, .train = train};

    workpool_run(s->pool,
                 model_ceil_div(model_fc_specs[l].OUT, FC_OUT_BLOCK) *
                     model_fc_row_chunks(&model_fc_specs[l], N),
                 job_fc_fwd, &j);
    if (l < 2) {
        j.key = rng_key(s->seed, RNG_DROPOUT, (uint64_t)step * 4 + (uint64_t)l);
        workpool_run(s->pool, model_nchunks(N), job_relu_drop_fwd, &j);
    }
}

void model_forward(StepCtx *s, int N, int train, long step)
{
    double t0 = timer_now();
    StepJob flat = {.s = s, .N = N, .back = 0};

    assert(N >= 1 && N <= s->a->B);
    for (int l = 0; l < MODEL_NBLOCKS; l++)
        block_forward(s, l, N, train, &t0);
    workpool_run(s->pool, model_nchunks(N), model_job_flatten, &flat);
    static const ProfOp fops[3] = {PROF_FC1_F, PROF_FC2_F, PROF_FC3_F};
    for (int l = 0; l < 3; l++) {
        fc_layer_forward(s, l, N, train, step);
        if (s->prof)
            profile_lap(s->prof, fops[l], &t0);
    }
}

double model_loss(StepCtx *s, int N)
{
    double t0 = timer_now();
    Acts *a = s->a;
    double loss = xent_forward(a->probs, a->logits, a->labels, N, MODEL_CLASSES);

    xent_backward_over(a->dlogits, a->probs, a->labels, N, MODEL_CLASSES,
                       s->n_global ? s->n_global : N);
    if (s->prof)
        profile_lap(s->prof, PROF_LOSS, &t0);
    return loss;
}
