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
        /* The executed FLOPs less block 1's (its convolution, weight
         * gradient and input moments) and the Winograd transforms
         * (hand-computed below): the GEMMs. */
        CHECK_NEAR(f + batches[k] * (2.0 * 451584.0 + 90000.0 + 1689600.0),
                   batches[k] * model_flops_executed(), 0.5);
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
 *   products per image 46228992 - 3*(2*7225344) + 3*(1327104 + 1327104) = 10839552.
 * Their transforms (layer_wino.c), FLOPs a tile and channel: input 18 x 77
 * = 1386 (9 columns and 9 rows of B^T at 77), output 16 x 58 + 49 = 977
 * (A^T at 58, and the bias), dy 16 x 52 = 832 (A at 52), dx 18 x 77 = 1386
 * (B at 77); the filters' gradient 12 x 32 = 384 a pair, once a chunk
 * (conv2 8 images, conv3 32):
 *   conv2 (4 tiles) fwd 4*(32*1386 + 64*977) = 427520,
 *         bwd 4*(32*1386 + 64*832 + 32*1386) + 384*2048/8 = 666112;
 *   conv3 (1 tile)  fwd 64*1386 + 128*977 = 213760,
 *         bwd 64*1386 + 128*832 + 64*1386 + 384*8192/32 = 382208;
 *   1689600 in all.
 * Block 1's forward runs its input's moments first (layer_conv_phase.c):
 * 9 tap sums and 45 products over 28 rows of 4 vectors of 8 lanes (the
 * last 4 lanes of a row masked), a FLOP a sum's lane and 2 a product's,
 * then the 54 sums' 8 lanes added into double twice (every 14 rows) and
 * summed once: 896*(9 + 45*2) + 54*8*3 = 90000 (its convolution is the
 * model's 451584, counted under the pass that runs it).
 * Executed: 10839552 + 1689600 + 90000 = 12619152 an image.
 * Bytes (nn/model.h: each op's tensors read or written once, in bytes;
 * a float 4, a pool index 1):
 *   per image: data x 3136 + label 1 = 3137; conv1 fwd x 3136;
 *   bn1 fwd x + out, ymax 25088 each + idx 6272 = 59584;
 *   conv2 fwd in 25088 + y 50176 = 75264; bn2 fwd y + out, ymax 12544
 *   each + idx 3136 = 78400; conv3 fwd 12544 + 25088 = 37632;
 *   bn3 fwd 25088 + 4608 * 2 + 1152 = 35456;
 *   fc1 fwd flatten 2 * 4608, flat 4608, h1 1024, mask 256 = 15104;
 *   fc2 fwd 1024 + 512 + 128 = 1664; fc3 fwd 512 + 40 = 552;
 *   softmax xent 3 * 40 + 1 = 121; fc3 bwd 40 + 2 * 512 = 1064;
 *   fc2 bwd 512 + 128 + 2 * 1024 = 2688; fc1 bwd 1024 + 256 + 2 * 4608 = 10496;
 *   bn3 bwd flatten back 2 * 4608 + dout, ymax 4608 each + idx 1152 = 19584;
 *   conv3 bwd dout 4608 + idx 1152 + in 12544 + y and dy 2 * 25088 + dx
 *   12544 = 81024; bn2 bwd 12544 * 2 + 3136 = 28224;
 *   conv2 bwd 12544 + 3136 + 25088 + 2 * 50176 + 25088 = 166208;
 *   bn1 bwd 25088 * 2 + 6272 = 56448; conv1 bwd 25088 + 6272 + 3136 = 34496;
 *   sum 710282.
 *   per step (parameters): conv1 fwd and bwd w and b 320 floats = 1280 each;
 *   conv2 fwd w, b (18496 floats) 73984 + U (81 * 2048 floats) written and
 *   read 2 * 663552 = 1401088, bwd U + dW 737536; conv3 fwd 295424 + 2 *
 *   2654208 = 5603840, bwd 2949632; fc1 (294912 + 256 floats) 1180672 fwd,
 *   twice bwd; fc2 131584, fc3 5160 likewise; adam 7 * 4 * 422474 =
 *   11829272; sum 26476176, at batch 64 413690.25 an image.
 */
static void test_bytes(void)
{
    double img = 0.0, step = 0.0;

    CHECK_NEAR(model_op_bytes_image(PROF_DATA), 3137.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_BN1_F), 59584.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_CONV2_F), 75264.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_CONV2_B), 166208.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_BN3_B), 19584.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_FC1_F), 15104.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_CONV1_B), 34496.0, 0.0);
    CHECK_NEAR(model_op_bytes_image(PROF_OPTIM), 0.0, 0.0);
    CHECK_NEAR(model_op_bytes_step(PROF_CONV2_F), 1401088.0, 0.0);
    CHECK_NEAR(model_op_bytes_step(PROF_CONV3_B), 2949632.0, 0.0);
    CHECK_NEAR(model_op_bytes_step(PROF_FC1_B), 2361344.0, 0.0);
    CHECK_NEAR(model_op_bytes_step(PROF_OPTIM), 11829272.0, 0.0);
    CHECK_NEAR(model_op_bytes_step(PROF_BN2_F), 0.0, 0.0);
    for (int op = 0; op < PROF_NOPS; op++) {
        img += model_op_bytes_image((ProfOp)op);
        step += model_op_bytes_step((ProfOp)op);
    }
    CHECK_NEAR(img, 710282.0, 0.0);
    CHECK_NEAR(step, 26476176.0, 0.0);
    CHECK_NEAR(model_bytes_image(64), 710282.0 + 413690.25, 1e-6);
    CHECK_NEAR(calibrate_bytes_per_image(512), 710282.0 + 26476176.0 / 512, 1e-6);
}

/* The time on paper from a calibration's figures. */
static void test_sketch(void)
{
    Calibration c;
    Sketch s;

    CHECK_NEAR(engine_flops_per_image(), 46228992.0, 0.0);
    CHECK_NEAR(engine_flops_executed_per_image(), 12619152.0, 0.0);
    memset(&c, 0, sizeof c);
    c.batch[0] = 64;
    c.batch[1] = 512;
    c.model_gflops[0] = 100.0;
    c.model_gflops[1] = 200.0;
    c.triad_gbps = 10.0;
    CHECK_INT(calibrate_sketch(&c, 60000, 64, &s), ==, 0);
    CHECK_NEAR(s.flops, 757149120000.0, 1.0);
    CHECK_NEAR(s.bytes, 60000 * 1123972.25, 1.0);
    CHECK_NEAR(s.compute_s, 7.5714912, 1e-9);
    CHECK_NEAR(s.memory_s, 6.7438335, 1e-9);
    CHECK_NEAR(s.seconds, 7.5714912 + 6.7438335, 1e-9);
    CHECK_INT(calibrate_sketch(&c, 60000, 512, &s), ==, 0);
    CHECK_NEAR(s.gflops, 200.0, 0.0);
    CHECK_NEAR(s.seconds, 3.7857456 + 60000 * (710282.0 + 26476176.0 / 512) / 10e9, 1e-9);
    /* Outside the timed batches the nearer rate holds. */
    CHECK_INT(calibrate_sketch(&c, 1000, 1, &s), ==, 0);
    CHECK_NEAR(s.gflops, 100.0, 0.0);
    CHECK_INT(calibrate_sketch(&c, 1000, 65536, &s), ==, 0);
    CHECK_NEAR(s.gflops, 200.0, 0.0);
    /* Between them, linear in log2(batch): 128 is halfway from 64 to 256. */
    c.batch[1] = 256;
    CHECK_INT(calibrate_sketch(&c, 1000, 128, &s), ==, 0);
    CHECK_NEAR(s.gflops, 150.0, 1e-9);
    CHECK_NEAR(s.compute_s, 1000 * 12619152.0 / 150e9, 1e-12);
    CHECK(s.peak == 0); /* no FMA peak measured: the SGEMM rate */
    /* With a peak, the sketch uses the highest width's all-threads figure. */
    c.fma_gflops[1] = 300.0;
    c.fma_gflops[2] = 120.0;
    CHECK_INT(calibrate_sketch(&c, 1000, 128, &s), ==, 0);
    CHECK(s.peak == 1);
    CHECK_NEAR(s.gflops, 300.0, 0.0);
    CHECK_NEAR(s.compute_s, 1000 * 12619152.0 / 300e9, 1e-12);
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
    test_bytes();
    test_sketch();
    test_gap_warning();
    test_sgemm_gap();
    return check_report();
}
