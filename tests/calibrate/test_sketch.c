/*
 * test_sketch.c: the sketch on paper (cnntop/calibrate.h): the model's
 * shapes, the time on paper from a calibration's figures, and the warnings
 * for a measurement far from it.  Pure: no measuring, no cache.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cnntop/calibrate.h"
#include "cnntop/engine.h"
#include "nn/model.h"

static void test_shapes(void)
{
    static const int batches[] = {1, 7, 16, 17, 64, 100, 512, 4096};
    GemmShape g[MODEL_MAX_GEMM_SHAPES];

    for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
        int n = model_gemm_shapes(batches[k], g, MODEL_MAX_GEMM_SHAPES);
        double f = 0.0;
        CHECK(n > 0 && n <= MODEL_MAX_GEMM_SHAPES);
        for (int i = 0; i < n && i < MODEL_MAX_GEMM_SHAPES; i++) {
            CHECK(g[i].M > 0 && g[i].N > 0 && g[i].K > 0 && g[i].count > 0 && g[i].par > 0);
            f += 2.0 * g[i].M * (double)g[i].N * g[i].K * (double)g[i].count;
        }
        CHECK_NEAR(f + batches[k] * 2.0 * 451584.0, batches[k] * model_flops_executed(), 0.5);
    }
    /* A short list is cut, not overrun, and the true length comes back. */
    GemmShape few[4];
    memset(few, 0, sizeof few);
    int n = model_gemm_shapes(64, few, 3);
    CHECK(n > 3);
    CHECK(few[3].what == NULL);
    CHECK_INT(model_gemm_shapes(0, g, MODEL_MAX_GEMM_SHAPES), ==, 0);
}

/*
 * Hand-computed: FLOPs of one training image (2 x multiply-adds):
 *   forward  conv1 2*32*9*784 = 451584, conv2 2*64*288*196 = 7225344,
 *            conv3 2*128*576*49 = 7225344, fc 2*(1152*256 + 256*128 + 128*10)
 *            = 657920; total 15560192
 *   backward 2 x forward - conv1's input gradient 451584 = 30668800
 *   per image 46228992.
 * Computed: conv2 and conv3 by Winograd F(7x7,3x3), 81 GEMM multiply-adds
 * per 7x7 tile and filter pair, for the forward, dW and dX each:
 *   conv2 2*81*(32*64)*(2*2) = 1327104, conv3 2*81*(64*128)*(1*1) = 1327104;
 *   per image 46228992 - 3*(2*7225344) + 3*(1327104 + 1327104) = 10839552.
 * Bytes per image: the arena's per-image buffers, in bytes:
 *   x 3136, labels 1;
 *   block1 idx 6272, ymax 25088, out 25088, dout 25088 (its conv output y
 *   is never stored: layer_conv_phase.h);
 *   block2 y 50176, idx 3136, ymax 12544, out 12544, dout 12544;
 *   block3 y 25088, idx 1152, ymax 4608, out 4608, dout 4608;
 *   flat + dflat 9216, h1 + dh1 2048, m1 256, h2 + dh2 1024, m2 128,
 *   logits + probs + dlogits 120;  sum 228473, moved 3x = 685419.
 */
static void test_sketch(void)
{
    Calibration c;
    Sketch s;

    CHECK_NEAR(engine_flops_per_image(), 46228992.0, 0.0);
    CHECK_NEAR(engine_flops_executed_per_image(), 10839552.0, 0.0);
    CHECK_NEAR(calibrate_bytes_per_image(), 685419.0, 0.0);
    memset(&c, 0, sizeof c);
    c.batch[0] = 64;
    c.batch[1] = 512;
    c.model_gflops[0] = 100.0;
    c.model_gflops[1] = 200.0;
    c.triad_gbps = 10.0;
    CHECK_INT(calibrate_sketch(&c, 60000, 64, &s), ==, 0);
    CHECK_NEAR(s.flops, 650373120000.0, 1.0);
    CHECK_NEAR(s.bytes, 41125140000.0, 1.0);
    CHECK_NEAR(s.compute_s, 6.5037312, 1e-9);
    CHECK_NEAR(s.memory_s, 4.112514, 1e-9);
    CHECK_NEAR(s.seconds, 6.5037312 + 4.112514, 1e-9);
    CHECK_INT(calibrate_sketch(&c, 60000, 512, &s), ==, 0);
    CHECK_NEAR(s.gflops, 200.0, 0.0);
    CHECK_NEAR(s.seconds, 3.2518656 + 4.112514, 1e-9);
    /* Outside the timed batches the nearer rate holds. */
    CHECK_INT(calibrate_sketch(&c, 1000, 1, &s), ==, 0);
    CHECK_NEAR(s.gflops, 100.0, 0.0);
    CHECK_INT(calibrate_sketch(&c, 1000, 65536, &s), ==, 0);
    CHECK_NEAR(s.gflops, 200.0, 0.0);
    /* Between them, linear in log2(batch): 128 is halfway from 64 to 256. */
    c.batch[1] = 256;
    CHECK_INT(calibrate_sketch(&c, 1000, 128, &s), ==, 0);
    CHECK_NEAR(s.gflops, 150.0, 1e-9);
    CHECK_NEAR(s.compute_s, 1000 * 10839552.0 / 150e9, 1e-12);
    CHECK(s.peak == 0); /* no FMA peak measured: the SGEMM rate */
    /* With a peak, the sketch uses the highest width's all-threads figure. */
    c.fma_gflops[1] = 300.0;
    c.fma_gflops[2] = 120.0;
    CHECK_INT(calibrate_sketch(&c, 1000, 128, &s), ==, 0);
    CHECK(s.peak == 1);
    CHECK_NEAR(s.gflops, 300.0, 0.0);
    CHECK_NEAR(s.compute_s, 1000 * 10839552.0 / 300e9, 1e-12);
    int w = 0;
    CHECK_NEAR(calibrate_peak(&c, &w), 300.0, 0.0);
    CHECK_INT(w, ==, 1);
    c.fma_gflops[1] = c.fma_gflops[2] = 0.0;
    CHECK_INT(calibrate_sketch(&c, 0, 64, &s), ==, 0);
    CHECK_NEAR(s.seconds, 0.0, 0.0);
    CHECK_INT(calibrate_sketch(&c, -1, 64, &s), ==, -CN_EINVAL);
    CHECK_INT(calibrate_sketch(&c, 10, 0, &s), ==, -CN_EINVAL);
    c.triad_gbps = 0.0;
    CHECK_INT(calibrate_sketch(&c, 10, 64, &s), ==, -CN_EINVAL);
}

/* SGEMM against the FMA peak: the measured factor, always when the kernel
 * is narrower, and when SGEMM is under CALIB_SGEMM_LOW of the peak. */
static void test_sgemm_gap(void)
{
    char msg[320];
    Calibration c;

    CHECK_INT(calibrate_gap_text(56.0, 234.0, "AVX-512", 2, 1, msg, sizeof msg), ==, 1);
    CHECK(!strcmp(msg, "measured: SGEMM at the model's shapes 56 GFLOP/s on 2 threads is 24% "
                       "of the 234 GFLOP/s FMA peak (AVX-512), 4.2x below it"));
    CHECK_INT(calibrate_gap_text(178.0, 235.0, "AVX-512", 2, 0, msg, sizeof msg), ==, 0);
    CHECK(msg[0] == '\0');
    CHECK_INT(calibrate_gap_text(70.0, 235.0, "AVX-512", 2, 0, msg, sizeof msg), ==, 1);
    CHECK_STR_HAS(msg, "30% of the 235 GFLOP/s FMA peak (AVX-512), 3.4x below it: a calibration "
                       "run beside other work reads so (cnntop calibrate --recalibrate");
    CHECK(strstr(msg, "vectors") == NULL); /* the kernel is as wide as the CPU */
    CHECK_INT(calibrate_gap_text(70.0, NAN, "", 2, 1, msg, sizeof msg), ==, 0); /* no peak */
    memset(&c, 0, sizeof c);
    c.threads = 2;
    c.model_gflops[0] = 50.0;
    c.model_gflops[1] = 60.0; /* the faster batch counts */
    c.fma_gflops[1] = 240.0;
    CHECK_INT(calibrate_sgemm_gap(&c, 0, msg, sizeof msg), ==, 1);
    CHECK_STR_HAS(msg, "60 GFLOP/s on 2 threads is 25% of the 240 GFLOP/s FMA peak (AVX2+FMA)");
}

static void test_gap_warning(void)
{
    Sketch s;
    char msg[256];

    memset(&s, 0, sizeof s);
    s.seconds = 10.0;
    CHECK_INT(calibrate_check(&s, 99.9, msg, sizeof msg), ==, 0);
    CHECK(msg[0] == '\0');
    CHECK_INT(calibrate_check(&s, 100.0, msg, sizeof msg), ==, 1);
    CHECK(!strcmp(msg, "measured 100 s, the sketch says 10 s: a 10x gap is a sign of a "
                       "real problem (see 'On paper' in man cnntop)"));
    CHECK_INT(calibrate_check(&s, 250.0, msg, sizeof msg), ==, 1);
    CHECK_STR_HAS(msg, "measured 250 s, the sketch says 10 s");
    /* Ten times faster than paper is just as suspicious. */
    CHECK_INT(calibrate_check(&s, 1.0, msg, sizeof msg), ==, 1);
    CHECK_STR_HAS(msg, "measured 1 s, the sketch says 10 s");
    CHECK_INT(calibrate_check(&s, 1.01, msg, sizeof msg), ==, 0);
    CHECK_INT(calibrate_check(&s, 10.0, msg, sizeof msg), ==, 0);
    CHECK_INT(calibrate_check(&s, 0.0, msg, sizeof msg), ==, 0);
    CHECK(msg[0] == '\0');
    s.seconds = 0.0;
    CHECK_INT(calibrate_check(&s, 1000.0, msg, sizeof msg), ==, 0);
    CHECK_INT(calibrate_check(NULL, 1000.0, msg, sizeof msg), ==, 0);
}

/* Parses text; returns the code and leaves the message in err. */

/* A job's all-reduces on paper: steps x 2(N-1)/N x bytes / busbw, added
 * to the seconds; nothing for one process or no bandwidth. */
static void test_sketch_comm(void)
{
    Sketch s;
    double before;

    CHECK_INT(calibrate_sketch_at(100.0, 1, 10.0, 6400, 64, &s), ==, 0);
    before = s.seconds;
    CHECK(s.comm_s == 0.0 && s.ranks == 0);
    calibrate_sketch_comm(&s, 1, 100, 1.6e6, 1.0);
    calibrate_sketch_comm(&s, 4, 100, 1.6e6, 0.0);
    calibrate_sketch_comm(&s, 4, 0, 1.6e6, 1.0);
    CHECK(s.comm_s == 0.0 && s.seconds == before);
    calibrate_sketch_comm(&s, 4, 100, 1.6e6, 1.5);
    CHECK_NEAR(s.comm_s, 100 * 1.5 * 1.6e6 / 1.5e9, 1e-12); /* 2(4-1)/4 = 1.5 */
    CHECK_NEAR(s.seconds, before + s.comm_s, 1e-12);
    CHECK_INT(s.ranks, ==, 4);
    CHECK_INT(s.steps, ==, 100);
    CHECK(s.ar_bytes == 1.6e6 && s.busbw == 1.5);
}

int main(void)
{
    test_sketch_comm();
    test_shapes();
    test_sketch();
    test_gap_warning();
    test_sgemm_gap();
    return check_report();
}
