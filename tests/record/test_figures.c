/*
 * test_figures.c: the figures derived from a record (cnntop/figures.h), the
 * one place every front end reads them from.
 *
 * - mean ± σ of the repeats' wall times and throughputs; images/s unknown
 *   (mean NAN, n 0) unless every run has one, as an exec run without the
 *   hook's figures;
 * - the data-wait share of a step split and of a record: NAN, never 0,
 *   when nothing was timed; an exec record's is the hook's;
 * - the share of the FMA peak, and NAN when a figure is missing;
 * - the model's GFLOP/s (images/s x FLOPs per image), a layer's rate, the
 *   step split's shares, the cores kept busy and a segment's change: NAN
 *   (or refused) when a figure is unknown, never 0;
 * - a counter found by role and name, and NULL when absent;
 * - the verdict's input from a training record and an exec record, and the
 *   verdict of an unknown data wait saying n/a rather than compute-bound;
 * - a part's time on paper, and the parts of a record with one, summed;
 *   where a layer's executed FLOPs differ from the model's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cnntop/figures.h"
#include "cnntop/verdict.h"

static void add_repeat(RunRecord *r, double wall, double ips, double acc)
{
    RecordRepeat rep = {.wall = wall, .images_per_s = ips, .accuracy = acc};
    CHECK(record_add_repeat(r, &rep) == 0);
}

static void test_summaries(void)
{
    RunRecord r;
    RecordFigures f;

    record_init(&r);
    add_repeat(&r, 1.0, 100, 0.9);
    add_repeat(&r, 3.0, 300, NAN);
    CHECK(record_figures(&r, &f) == 0);
    CHECK_INT(f.time.n, ==, 2);
    CHECK_NEAR(f.time.mean, 2.0, 1e-12);
    CHECK_NEAR(f.time.sd, sqrt(2.0), 1e-12);
    CHECK_NEAR(f.ips.mean, 200, 1e-9);
    CHECK_NEAR(f.accuracy, 0.9, 1e-12); /* the evaluated repeat alone */
    CHECK(isnan(f.mfu));                /* no FMA peak */
    r.fma_peak_gflops = 100;
    r.flops_per_image = 1e9;
    CHECK(record_figures(&r, &f) == 0);
    CHECK_NEAR(f.mfu, 2.0, 1e-12);      /* 200 images/s x 1 GFLOP / 100 GFLOP/s */
    add_repeat(&r, 2.0, NAN, NAN);      /* a run without images/s */
    record_figures(&r, &f);
    CHECK(isnan(f.ips.mean) && f.ips.n == 0);
    CHECK(isnan(f.mfu));
    CHECK_INT(f.time.n, ==, 3);
    record_done(&r);
}

static void test_wait_share(void)
{
    StepSplit none = {0}, s = {.data = 1, .forward = 2, .backward = 1, .optimizer = 0};
    RunRecord r;

    CHECK(isnan(figures_wait_share(&none)));
    CHECK_NEAR(figures_wait_share(&s), 0.25, 1e-12);
    record_init(&r);
    CHECK(isnan(record_wait_share(&r))); /* nothing trained: unknown, not 0 */
    r.train.split = s;
    CHECK_NEAR(record_wait_share(&r), 0.25, 1e-12);
    r.have_train = 0;
    r.have_exec = 1;
    CHECK(isnan(record_wait_share(&r))); /* no hook figures */
    r.exec.data_wait_share = 0.5;
    CHECK_NEAR(record_wait_share(&r), 0.5, 1e-12);
    record_done(&r);
}

static void test_peak_share(void)
{
    CHECK_NEAR(figures_peak_share(100, 1e9, 200), 0.5, 1e-12);
    CHECK(isnan(figures_peak_share(100, 1e9, NAN)));
    CHECK(isnan(figures_peak_share(100, 1e9, 0)));
    CHECK(isnan(figures_peak_share(NAN, 1e9, 200)));
    CHECK(isnan(figures_peak_share(100, NAN, 200)));
}

/* An exec job of torch.distributed ranks: its peak is the ranks'. */
static void test_exec_job_peak(void)
{
    RunRecord r;
    RecordExecRank k = {0};

    record_init(&r);
    r.fma_peak_gflops = 100.0;
    r.threads_used = 1;
    r.machine.cores = 2;
    CHECK_NEAR(record_job_peak(&r, NULL), 100.0, 1e-9);
    CHECK_INT(record_job_ranks(&r), ==, 1);
    r.have_exec = 1;
    for (int i = 0; i < 2; i++) {
        k.rank = i;
        CHECK_INT(record_add_exec_rank(&r, &k), ==, 0);
    }
    CHECK_INT(record_job_ranks(&r), ==, 2);
    CHECK_NEAR(record_job_peak(&r, NULL), 200.0, 1e-9);
    r.threads_used = 2; /* 2 ranks x 2 threads on 2 cores */
    CHECK_NEAR(record_job_peak(&r, NULL), 100.0, 1e-9);
    record_done(&r);
}

static void test_rates(void)
{
    RunRecord r;
    RecordFigures f;

    CHECK_NEAR(figures_gflops(1000, 2e6), 2.0, 1e-12);
    CHECK_NEAR(figures_gflops(0, 2e6), 0.0, 1e-12); /* measured 0 stays 0 */
    CHECK(isnan(figures_gflops(NAN, 2e6)));
    CHECK(isnan(figures_gflops(1000, NAN)));
    CHECK(isnan(figures_gflops(INFINITY, 2e6)));
    CHECK(isnan(figures_gflops(-1, 2e6)));
    CHECK_NEAR(figures_rate_gflops(3e9, 2.0), 1.5, 1e-12);
    CHECK(isnan(figures_rate_gflops(3e9, 0))); /* nothing timed: unknown, not 0 */
    CHECK(isnan(figures_rate_gflops(0, 2.0)));  /* an elementwise layer */
    CHECK(isnan(figures_rate_gflops(NAN, 2.0)));
    CHECK_NEAR(figures_cores_busy(3.0, 2.0), 1.5, 1e-12);
    CHECK(isnan(figures_cores_busy(3.0, 0)));
    CHECK(isnan(figures_cores_busy(NAN, 2.0)));

    record_init(&r);
    add_repeat(&r, 1.0, 100, NAN);
    add_repeat(&r, 1.0, 300, NAN);
    r.flops_per_image = 1e7;
    CHECK(record_figures(&r, &f) == 0);
    CHECK_NEAR(f.gflops, 2.0, 1e-12); /* the mean images/s x FLOPs per image */
    r.flops_per_image = NAN;
    CHECK(record_figures(&r, &f) == 0);
    CHECK(isnan(f.gflops));
    record_done(&r);
}

static void test_split_shares(void)
{
    StepSplit none = {0}, s = {.data = 1, .forward = 2, .backward = 4, .optimizer = 1},
              d = {.data = 1, .forward = 2, .backward = 4, .optimizer = 1, .comm = 2};
    double sh[SPLIT_PARTS];

    figures_split_shares(&s, sh);
    CHECK_NEAR(sh[0], 0.125, 1e-12);
    CHECK_NEAR(sh[1], 0.25, 1e-12);
    CHECK_NEAR(sh[2], 0.5, 1e-12);
    CHECK_NEAR(sh[3], 0.125, 1e-12);
    CHECK_NEAR(sh[4], 0.0, 1e-12);
    figures_split_shares(&d, sh); /* a data-parallel run: comm is a part of the step */
    CHECK_NEAR(sh[0], 0.1, 1e-12);
    CHECK_NEAR(sh[4], 0.2, 1e-12);
    figures_split_shares(&none, sh);
    for (int k = 0; k < SPLIT_PARTS; k++)
        CHECK(isnan(sh[k]));
}

static void test_segment_change(void)
{
    Segment before = {.steps = 12, .warmup_steps = 2, .images_per_s = 100, .images_per_s_sd = 10};
    Segment now = {.steps = 12, .warmup_steps = 2, .images_per_s = 150, .images_per_s_sd = 10};
    double x, u;
    int real;

    CHECK(figures_segment_change(&now, &before, &x, &u, &real) == 0);
    CHECK_NEAR(x, 1.5, 1e-12);
    /* Each mean's standard error is 10 / sqrt(10). */
    double se = 10 / sqrt(10.0);
    CHECK_NEAR(u, 1.5 * sqrt(pow(se / 150, 2) + pow(se / 100, 2)), 1e-12);
    CHECK_INT(real, ==, 1);
    now.images_per_s = 102; /* 2 img/s is under 2 SE (about 8.9) */
    CHECK(figures_segment_change(&now, &before, &x, &u, &real) == 0);
    CHECK_INT(real, ==, 0);
    now.steps = 3; /* one measured step after the warm-up */
    CHECK(figures_segment_change(&now, &before, &x, &u, &real) == -1);
    CHECK(isnan(x) && isnan(u));
    CHECK_INT(real, ==, 0);
    now.steps = 12;
    before.images_per_s = 0;
    CHECK(figures_segment_change(&now, &before, &x, &u, &real) == -1);
}

static void test_counter_find(void)
{
    RecordCounter v[3] = {{.role = CN_ROLE_TRAIN, .name = "cycles"},
                          {.role = CN_ROLE_LOAD, .name = "cycles"},
                          {.role = CN_ROLE_TRAIN, .name = "instructions"}};

    CHECK(record_counter_find(v, 3, CN_ROLE_LOAD, "cycles") == &v[1]);
    CHECK(record_counter_find(v, 3, CN_ROLE_TRAIN, "instructions") == &v[2]);
    CHECK(record_counter_find(v, 3, CN_ROLE_LOAD, "instructions") == NULL);
    CHECK(record_counter_find(v, 0, CN_ROLE_TRAIN, "cycles") == NULL);
}

static void test_verdict_input(void)
{
    RunRecord r;
    VerdictInput in;
    Verdict v;
    Segment seg = {.workers = 3};

    record_init(&r);
    r.threads_used = 2;
    r.machine.cores = 4;
    r.config.workers = 1;
    r.run_queue_wait = 0.01;
    record_verdict_input(&r, &in);
    CHECK(isnan(in.data_wait_share));
    CHECK_INT(in.workers, ==, 1);
    verdict_judge(&in, &v);
    CHECK(!v.loader_bound);
    CHECK(strstr(v.bound, "n/a") == v.bound); /* unknown is said so, not "compute-bound" */
    CHECK(strstr(v.bound_brief, "n/a") == v.bound_brief);
    r.train.split = (StepSplit){.data = 1, .forward = 1};
    CHECK(record_add_segment(&r, &seg) == 0);
    record_verdict_input(&r, &in);
    CHECK_NEAR(in.data_wait_share, 0.5, 1e-12);
    CHECK_INT(in.workers, ==, 3); /* the last segment's, not the configuration's */
    CHECK_INT(in.threads, ==, 2);
    CHECK_INT(in.cores, ==, 4);
    CHECK_NEAR(in.run_queue_wait, 0.01, 1e-12);
    CHECK(in.knobs == NULL);
    verdict_judge(&in, &v);
    CHECK(v.loader_bound);

    r.have_train = 0;
    r.have_exec = 1;
    r.exec.worker_procs = 4;
    r.exec.busy_threads = -1;
    snprintf(r.exec.torch, sizeof r.exec.torch, "2.1.0");
    record_verdict_input(&r, &in);
    CHECK(isnan(in.data_wait_share));
    CHECK_INT(in.workers, ==, 4);
    CHECK_INT(in.threads, ==, 0);
    CHECK(in.knobs == &verdict_knobs_pytorch);
    record_done(&r);
}

/* A data-parallel record: the verdict's comm share against the largest
 * other share, and the sketch's all-reduces at the measured busbw. */
static void test_dist_figures(void)
{
    RunRecord r;
    VerdictInput in;
    Verdict v;
    Sketch plain, sk;

    record_init(&r);
    r.have_train = 1;
    r.config.batch = 64;
    r.threads_used = 1;
    r.machine.cores = 4;
    r.train.split = (StepSplit){.data = 1, .forward = 1, .backward = 2, .optimizer = 0.5,
                                .comm = 3};
    r.train.images = 6400;
    r.train.steps = 100;
    r.sketch_gflops = 100.0;
    r.fma_peak_gflops = 100.0;
    r.triad_gbps = 10.0;
    CHECK_INT(record_sketch(&r, &plain), ==, 0);
    record_verdict_input(&r, &in);
    CHECK_INT(in.ranks, ==, 0); /* one process: no dist */
    r.have_dist = 1;
    r.train.dist = (DistFigures){.ranks = 4, .steps = 100, .ar_bytes = 1.6e6, .ar_probe = 0.002};
    record_verdict_input(&r, &in);
    CHECK_INT(in.ranks, ==, 4);
    CHECK_INT(in.batch, ==, 64);
    CHECK_NEAR(in.comm_share, 3 / 7.5, 1e-12);
    CHECK_NEAR(in.other_share, 2 / 7.5, 1e-12);
    verdict_judge(&in, &v);
    CHECK(v.comm_bound && strstr(v.comm, "--batch 128") && strstr(v.comm, "--ranks 3"));
    CHECK_INT(record_sketch(&r, &sk), ==, 0);
    CHECK_INT(sk.ranks, ==, 4);
    CHECK_NEAR(sk.busbw, 1.6e6 / 0.002 * 1e-9 * 1.5, 1e-12);
    CHECK_NEAR(sk.comm_s, 100 * 0.002, 1e-12); /* 2(N-1)/N x bytes / busbw = the probe's time */
    /* the job computes on its 4 ranks at once: 4 x one rank's peak */
    CHECK_NEAR(sk.gflops, 400.0, 1e-9);
    CHECK_NEAR(sk.compute_s, plain.compute_s / 4, 1e-12);
    CHECK_NEAR(sk.seconds, sk.compute_s + plain.memory_s + sk.comm_s, 1e-12);
    int capped = -1;
    r.flops_per_image = 1e9;
    CHECK_NEAR(record_job_peak(&r, &capped), 400.0, 1e-9); /* 4 ranks x 1 thread, 4 cores */
    CHECK_INT(capped, ==, 0);
    CHECK_NEAR(record_mfu(&r, 100.0), 0.25, 1e-12);
    r.train.dist.local_ranks = 4;
    r.train.dist.node_cores = 2; /* 4 ranks on 2 cores: the machine's 2 threads' worth */
    CHECK_NEAR(record_job_peak(&r, &capped), 200.0, 1e-9);
    CHECK_INT(capped, ==, 1);
    r.train.dist.local_ranks = 2; /* 2 here on 2 cores, 2 elsewhere */
    CHECK_NEAR(record_job_peak(&r, &capped), 400.0, 1e-9);
    CHECK_INT(capped, ==, 0);
    r.threads_used = 2; /* 2 x 2 threads on 2 cores: half of that */
    CHECK_NEAR(record_job_peak(&r, &capped), 300.0, 1e-9);
    CHECK_INT(capped, ==, 1);
    r.threads_used = 8; /* more threads than cores: each rank's peak is the 2 cores' */
    CHECK_NEAR(record_job_peak(&r, &capped), 300.0, 1e-9);
    r.threads_used = 1 << 24; /* no overflow, whatever the record says */
    r.train.dist.local_ranks = 1 << 20;
    CHECK(isfinite(record_job_peak(&r, &capped)));
    r.train.dist.local_ranks = 2;
    r.threads_used = 1;
    r.train.dist.ar_probe = 0; /* no probe: no link rate, nothing on paper */
    CHECK_INT(record_sketch(&r, &sk), ==, 0);
    CHECK(sk.comm_s == 0.0);
    record_done(&r);
}

/* figures_paper, and record_paper_parts over a record whose layers have
 * bytes (two: one with executed FLOPs, one elementwise) or none (left out). */
static void test_paper(void)
{
    RunRecord r;
    double c, m;
    PaperPart *p, tot;
    size_t n = 9;

    CHECK(figures_paper(4e9, 2e9, 200, 10, &c, &m) == 0);
    CHECK_NEAR(c, 0.02, 1e-15);
    CHECK_NEAR(m, 0.2, 1e-15);
    CHECK(figures_paper(NAN, 2e9, 200, 10, &c, &m) == 0 && c == 0.0); /* elementwise */
    CHECK(figures_paper(4e9, 0, 200, 10, &c, &m) != 0 && isnan(c) && isnan(m)); /* no bytes */
    CHECK(figures_paper(4e9, 2e9, NAN, 10, &c, &m) != 0);                      /* no rate */
    CHECK(figures_paper(4e9, 2e9, 200, 0, &c, &m) != 0);
    /* Where the executed rate is shown: counts that differ, or executed
     * FLOPs the model does not count; not where none ran (0 or NAN). */
    CHECK(record_flops_differ(8e9, 2e9) && !record_flops_differ(8e9, 8e9));
    CHECK(record_flops_differ(0, 2e9) && record_flops_differ(NAN, 2e9));
    CHECK(!record_flops_differ(8e9, 0) && !record_flops_differ(8e9, NAN));
    CHECK(!record_flops_differ(0, 0) && !record_flops_differ(NAN, NAN));

    record_init(&r);
    LayerTime lt[3] = {{.name = "conv2 fwd", .seconds = 0.5, .calls = 10, .flops = 8e9,
                        .flops_executed = 2e9, .bytes = 1e9},
                       {.name = "bn2 bwd", .seconds = 0.25, .calls = 10, .bytes = 3e9},
                       {.name = "exec layer", .seconds = 1.0, .calls = 10}};
    for (int i = 0; i < 3; i++)
        CHECK(record_add_layer(&r, &lt[i]) == 0);
    CHECK(record_paper_parts(&r, &n, &tot) == NULL && n == 0); /* not calibrated */
    r.sketch_gflops = 100;
    r.triad_gbps = 10;
    p = record_paper_parts(&r, &n, &tot);
    CHECK(p != NULL && n == 2);
    if (!p) {
        record_done(&r);
        return;
    }
    CHECK(p[0].l == &r.layers[0] && p[1].l == &r.layers[1] && tot.l == NULL);
    CHECK_NEAR(p[0].compute_s, 0.02, 1e-15);
    CHECK_NEAR(p[0].memory_s, 0.1, 1e-15);
    CHECK_NEAR(p[1].compute_s, 0.0, 0);
    CHECK_NEAR(tot.seconds, 0.75, 1e-15);
    CHECK_NEAR(tot.bytes, 4e9, 0);
    CHECK_NEAR(tot.compute_s, 0.02, 1e-15);
    CHECK_NEAR(tot.memory_s, 0.4, 1e-15);
    free(p);
    record_done(&r);
    record_init(&r); /* no layers: no parts */
    r.sketch_gflops = 100;
    r.triad_gbps = 10;
    CHECK(record_paper_parts(&r, &n, &tot) == NULL && n == 0);
    record_done(&r);
}

int main(void)
{
    test_paper();
    test_dist_figures();
    test_summaries();
    test_wait_share();
    test_peak_share();
    test_exec_job_peak();
    test_rates();
    test_split_shares();
    test_segment_change();
    test_counter_find();
    test_verdict_input();
    return check_report();
}
