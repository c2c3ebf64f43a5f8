/*
 * model_backward.c: the backward pass of the reference CNN over the
 * compute pool (model.h): the fc layers, then the conv blocks, each
 * chunk's partial weight gradients summed in chunk order by one owner.
 * The reductions across chunks are phases of their own, so that each sum
 * keeps chunk order whatever the thread count.  Who may write what while a
 * phase runs: model.c's DESIGN.
 */
#include "nn/layer_bn.h"
#include "nn/layer_dropout.h"
#include "nn/layer_fc.h"
#include "nn/layer_maxpool.h"
#include "nn/model_impl.h"

/* Block 1, backward: each channel's pool gradient routed to the window
 * maxima in phases, and from it and the input the routed part of the
 * chunk's dW and db; block_backward() adds the BN mean terms from the
 * moments (layer_conv_phase.h), so the conv is not made again here. */
static void job_phase_bwd(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[0];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[0];
    const size_t L = model_spec_dwlen(0), nw = L - (size_t)cs->OC;
    float *dwp = bb->dwpart + (size_t)c * L, *dbp = dwp + nw;
    const int PW = cs->W / 2, PHW = (cs->H / 2) * PW;
    const size_t xqn = conv_phase_input_floats(cs->H, cs->W);
    PhaseBufs pb = model_phase_bufs(a, tid);
    int n0, n1;

    model_block_chunk_range(0, j->N, c, &n0, &n1);
    memset(dwp, 0, L * sizeof *dwp);
    memset(pb.dwl, 0, (size_t)cs->OC * CONV_PHASE_DW_LANES * sizeof *pb.dwl);
    /* The last row's junk columns (the others are filled by model_rows_copy);
     * conv_phase_dw_routed2 drops their lanes anyway. */
    for (int e = 0; e < 2; e++)
        memset(pb.g[e], 0, model_phase_n() * sizeof *pb.g[e]);
    memset(pb.ix, MAXPOOL_NOGRAD, model_phase_n());
    /* As job_phase_pool, PHASE_IMAGES images at a time, channel by
     * channel: each channel's lanes still sum the images in order. */
    for (int nb = n0; nb < n1; nb += PHASE_IMAGES) {
        const int nn = model_phase_split(&pb, a, nb, n1);
        for (int oc = 0; oc < cs->OC; oc += 2)
            for (int k = 0; k < nn; k++) {
                for (int e = 0; e < 2; e++) {
                    size_t po = ((size_t)(oc + e) * j->N + nb + k) * PHW;
                    model_rows_copy(pb.g[e], CONV_PHASE_Q, bb->dout + po, PW, cs->H / 2, PW,
                                    sizeof(float));
                    model_rows_copy(pb.ix, CONV_PHASE_Q, bb->idx + po, PW, cs->H / 2, PW, 1);
                    for (size_t q = 0; q < model_phase_n(); q++)
                        pb.kf[e][q] = (float)pb.ix[q];
                }
                conv_phase_dw_routed2(pb.dwl + (size_t)oc * CONV_PHASE_DW_LANES,
                                      pb.dwl + (size_t)(oc + 1) * CONV_PHASE_DW_LANES, pb.g[0],
                                      pb.g[1], pb.kf[0], pb.kf[1], pb.xq + k * xqn, cs->H,
                                      cs->W);
            }
    }
    for (int oc = 0; oc < cs->OC; oc++)
        conv_phase_dw_fold(dwp + oc * 9, dbp + oc, pb.dwl + (size_t)oc * CONV_PHASE_DW_LANES,
                           cs->W);
}

static void job_fc_bwd(void *jp, int item, int tid)
{
    StepJob *j = jp;
    const FcSpec *fs = &model_fc_specs[j->l];
    Acts *a = j->s->a;
    Params *ps = j->s->ps;

    (void)tid;
    if (item < j->nw) {
        int o0 = item * FC_OUT_BLOCK;
        int o1 = o0 + FC_OUT_BLOCK < fs->OUT ? o0 + FC_OUT_BLOCK : fs->OUT;
        fc_backward_weights(ps->g[fs->tw], ps->g[fs->tb], model_fc_doutput(a, j->l),
                            model_fc_input(a, j->l), j->N, fs->IN, fs->OUT, o0, o1, 0.0f,
                            gemm_path_dense(j->s->gemm));
    } else {
        int i0 = (item - j->nw) * FC_IN_BLOCK;
        int i1 = i0 + FC_IN_BLOCK < fs->IN ? i0 + FC_IN_BLOCK : fs->IN;
        fc_backward_input(model_fc_dinput(a, j->l), model_fc_doutput(a, j->l), ps->p[fs->tw],
                          j->N, fs->IN, fs->OUT, i0, i1, gemm_path_dense(j->s->gemm));
    }
}

static void job_relu_drop_bwd(void *jp, int c, int tid)
{
    StepJob *j = jp;
    Acts *a = j->s->a;
    /* The gradient w.r.t. fc layer l's input becomes the gradient w.r.t.
     * fc layer l-1's output before its ReLU and dropout. */
    float *d = model_fc_dinput(a, j->l);
    int n0, n1;

    (void)tid;
    model_chunk_range(j->N, c, &n0, &n1);
    dropout_relu_backward(d, d, j->l == 1 ? a->m1 : a->m2, model_fc_specs[j->l].IN, n0, n1);
}

static void fc_layer_backward(StepCtx *s, int l, int N)
{
    const FcSpec *fs = &model_fc_specs[l];
    StepJob j = {.s = s, .N = N, .l = l, .nw = model_ceil_div(fs->OUT, FC_OUT_BLOCK)};

    workpool_run(s->pool, j.nw + model_ceil_div(fs->IN, FC_IN_BLOCK), job_fc_bwd, &j);
    if (l > 0)
        workpool_run(s->pool, model_nchunks(N), job_relu_drop_bwd, &j);
}

static void job_pool_sums(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    double *acc = bb->part + (size_t)c * cs->OC * 2;
    int n0, n1;

    (void)tid;
    model_block_chunk_range(j->l, j->N, c, &n0, &n1);
    memset(acc, 0, (size_t)cs->OC * 2 * sizeof *acc);
    if (j->l == 0)
        maxpool_backward_sums_rows(acc, bb->dout, bb->idx, bb->ymax, bb->mean, bb->invstd,
                                   cs->OC, j->N, (cs->H / 2) * (cs->W / 2), n0, n1 - n0);
    else
        maxpool_backward_sums(acc, bb->dout, bb->idx, bb->ymax, bb->mean, bb->invstd, cs->OC,
                              (cs->H / 2) * (cs->W / 2), n0, n1 - n0);
}

/* Blocks 2 and 3, backward, one chunk, group by group: the gradient of
 * the conv output in place of the group's y (its images are contiguous,
 * channels-last, and stay in the cache for the transform that reads them
 * next: over the whole chunk first, a chunk of 32 images at batch 512
 * came back from memory, conv2 bwd 1.04x), then by Winograd the input
 * gradient and the chunk's E = G^T dU (layer_wino.h), summed in the
 * thread's scratch, from which the chunk's dW = E G goes to dwpart: a
 * third of E's floats.  (dU in dwpart for every chunk held 16 MiB more
 * at batch 64 and 512, at the same speed.) */
static void job_conv_bwd(void *jp, int c, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[j->l];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[j->l];
    Params *ps = j->s->ps;
    const long P = model_spec_pairs(cs);
    float *dwp = bb->dwpart + (size_t)c * model_spec_dwlen(j->l);
    float *dE = a->scratch[tid] + model_wino_scratch_floats(cs, bb->group);
    float *dx = j->l > 0 ? a->blk[j->l - 1].dout : NULL;
    int n0, n1;

    model_block_chunk_range(j->l, j->N, c, &n0, &n1);
    for (int k = 0; k < model_group_count(n0, n1, bb->group); k++) {
        int t = model_group_start(n0, n1, bb->group, k);
        int nt = model_group_start(n0, n1, bb->group, k + 1) - t;
        maxpool_backward(bb->y, bb->dout, bb->idx, ps->p[cs->tg], bb->mean, bb->invstd, bb->mdz,
                         bb->mdzx, cs->OC, cs->H, cs->W, t, nt);
        wino_backward(dx, dE, dwp + 9 * P, bb->y, model_block_input(a, j->l), cs->xl, bb->U,
                      a->scratch[tid], bb->ws, cs->C, cs->OC, j->N, t, nt,
                      t == n0 ? 0.0f : 1.0f, j->s->gemm);
    }
    wino_filter_grad(dwp, dE, cs->C, 0, P);
}

/* sum (n) = the sum over the k chunks' parts (chunk c at part + c*L), in
 * chunk order.  Chunk by chunk, so the adds run along memory and
 * vectorise; each sum still adds its chunks in chunk order. */
static void chunks_sum(float *restrict sum, const float *restrict part, size_t L, int k,
                       size_t n)
{
    memcpy(sum, part, n * sizeof *sum);
    for (int c = 1; c < k; c++)
        for (size_t i = 0; i < n; i++)
            sum[i] += part[(size_t)c * L + i];
}

/* grads = sum over chunks of the partial dW and db. */
static void job_reduce(void *jp, int item, int tid)
{
    StepJob *j = jp;
    const ConvSpec *cs = &model_conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    Params *ps = j->s->ps;
    const size_t L = model_spec_dwlen(j->l), nw = L - (size_t)cs->OC;
    size_t i0 = (size_t)item * REDUCE_BLOCK;
    size_t i1 = i0 + REDUCE_BLOCK < L ? i0 + REDUCE_BLOCK : L;

    float sum[REDUCE_BLOCK];

    (void)tid;
    chunks_sum(sum, bb->dwpart + i0, L, model_block_chunks(j->l, j->N), i1 - i0);
    for (size_t i = i0; i < i1; i++) {
        if (i < nw)
            ps->g[cs->tw][i] = sum[i - i0];
        else
            ps->g[cs->tb][i - nw] = sum[i - i0];
    }
}

/* Data-parallel, BatchNorm synchronised: block l's backward means over
 * every process's images; its dgamma and dbeta stay this process's. */
static void bn_backward_synced(StepCtx *s, int l, int N)
{
    const ConvSpec *cs = &model_conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    double g[2 * 128];

    assert(cs->OC <= 128);
    bn_parts_fold(bb->part, model_block_chunks(l, N), cs->OC);
    memcpy(g, bb->part, (size_t)cs->OC * 2 * sizeof *g);
    s->hooks->sum(s->hooks->ud, g, (size_t)cs->OC * 2);
    bn_backward_finish_split(s->ps->g[cs->tg], s->ps->g[cs->tbeta], bb->mdz, bb->mdzx, bb->part,
                             g, cs->OC, (long)s->n_global * cs->H * cs->W);
}

/* Tells the hooks that tensors t0..t1 (contiguous in the gradient block)
 * are final. */
static void grads_ready(StepCtx *s, int t0, int t1)
{
    if (!s->hooks || !s->hooks->grads_ready)
        return;
    Params *ps = s->ps;
    size_t n = ps->off[t1] + params_numel(&params_tensors[t1]) - ps->off[t0];
    s->hooks->grads_ready(s->hooks->ud, ps->g[t0], n);
}

static void block_backward(StepCtx *s, int l, int N, double *t0)
{
    const ConvSpec *cs = &model_conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    Params *ps = s->ps;
    StepJob j = {.s = s, .N = N, .l = l};

    workpool_run(s->pool, model_block_chunks(l, N), job_pool_sums, &j);
    if (model_sync_bn(s))
        bn_backward_synced(s, l, N);
    else
        bn_backward_finish(ps->g[cs->tg], ps->g[cs->tbeta], bb->mdz, bb->mdzx, bb->part,
                           model_block_chunks(l, N), cs->OC, (long)N * cs->H * cs->W);
    if (s->prof)
        profile_lap(s->prof, cs->bbn, t0);
    workpool_run(s->pool, model_block_chunks(l, N), l > 0 ? job_conv_bwd : job_phase_bwd, &j);
    workpool_run(s->pool, model_ceil_div((int)model_spec_dwlen(l), REDUCE_BLOCK), job_reduce, &j);
    if (l == 0)
        conv_phase_grad_finish(ps->g[cs->tw], ps->g[cs->tb],
                               bb->mom + (size_t)MODEL_MAX_CHUNKS * CONV_PHASE_MOMENTS,
                               ps->p[cs->tw], ps->p[cs->tb], ps->p[cs->tg], bb->mean, bb->invstd,
                               bb->mdz, bb->mdzx, cs->OC, (long)N * cs->H * cs->W);
    if (s->prof)
        profile_lap(s->prof, cs->bconv, t0);
    grads_ready(s, cs->tw, cs->tbeta);
}

void model_backward(StepCtx *s, int N)
{
    static const ProfOp bops[3] = {PROF_FC1_B, PROF_FC2_B, PROF_FC3_B};
    double t0 = timer_now();
    StepJob flat = {.s = s, .N = N, .back = 1};

    /* Every gradient is written whole by its layer, so nothing is zeroed. */
    for (int l = 2; l >= 0; l--) {
        fc_layer_backward(s, l, N);
        if (s->prof)
            profile_lap(s->prof, bops[l], &t0);
        grads_ready(s, model_fc_specs[l].tw, model_fc_specs[l].tb);
    }
    workpool_run(s->pool, model_nchunks(N), model_job_flatten, &flat);
    for (int l = MODEL_NBLOCKS - 1; l >= 0; l--)
        block_backward(s, l, N, &t0);
}
