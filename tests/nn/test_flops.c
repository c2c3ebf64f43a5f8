/*
 * test_flops.c: the two FLOP counts of each op of the step (nn/model.h):
 * the model's (the direct convolution's, PyTorch's; every GFLOP/s labelled
 * "model") and the executed (what the engine runs; "executed"), computed
 * by hand for the reference model.
 *
 * conv2 and conv3 run Winograd F(7x7, 3x3): per image, 81 x C x OC
 * multiply-adds per 7x7 output tile (4 tiles at 14x14, 1 at 7x7) where the
 * direct convolution does 441 x C x OC per tile, 5.4x more; their
 * backward, dW and dX, twice the forward.  Every other op executes what
 * the model counts.  The executed count adds Winograd's transforms
 * (layer_wino.c: FLOPs a tile and channel, input 1386, output 977, dy
 * 832, dx 1386) and, in the backward, the filters' gradient (384 a pair:
 * E = G^T dU's 288 once a group and dg = E G's 96 once a chunk, one
 * group of 8 images a chunk in conv2, of 32 in conv3).  Block 1's forward
 * runs in two passes: conv1 fwd its input's moments (90000, derived in
 * tests/calibrate/test_sketch.c), bn1+relu+pool1 fwd its convolution.
 * The per-op counts sum
 * to the per-image totals the record gives (flops_per_image,
 * flops_executed_per_image).
 */
#include "check.h"
#include "cnntop/engine.h"
#include "nn/model.h"

int main(void)
{
    /* conv2: 32 -> 64 channels at 14 x 14; conv3: 64 -> 128 at 7 x 7. */
    const double c2_direct = 2.0 * 64 * 32 * 9 * 14 * 14, c2_wino = 2.0 * 81 * 32 * 64 * 4;
    const double c3_direct = 2.0 * 128 * 64 * 9 * 7 * 7, c3_wino = 2.0 * 81 * 64 * 128 * 1;
    const double c2_tf = 4 * (32 * 1386.0 + 64 * 977), c3_tf = 64 * 1386.0 + 128 * 977;
    const double c2_tb = 4 * (32 * 1386.0 + 64 * 832 + 32 * 1386) + 384.0 * 2048 / 8;
    const double c3_tb = 64 * 1386.0 + 128 * 832 + 64 * 1386 + 384.0 * 8192 / 32;
    double model = 0, executed = 0;

    CHECK_NEAR(model_op_flops(PROF_CONV2_F), c2_direct, 0);
    CHECK_NEAR(model_op_flops_executed(PROF_CONV2_F), c2_wino + c2_tf, 0);
    CHECK_NEAR(model_op_flops_executed(PROF_CONV2_B), 2 * c2_wino + c2_tb, 0);
    CHECK_NEAR(model_op_flops(PROF_CONV3_F), c3_direct, 0);
    CHECK_NEAR(model_op_flops_executed(PROF_CONV3_F), c3_wino + c3_tf, 0);
    CHECK_NEAR(model_op_flops_executed(PROF_CONV3_B), 2 * c3_wino + c3_tb, 0);
    CHECK_NEAR(c2_direct / c2_wino, 5.44, 0.01);
    for (int op = 0; op < PROF_NOPS; op++) {
        double m = model_op_flops((ProfOp)op), x = model_op_flops_executed((ProfOp)op);
        int wino = op == PROF_CONV2_F || op == PROF_CONV2_B || op == PROF_CONV3_F ||
                   op == PROF_CONV3_B;
        if (op == PROF_CONV1_F)
            CHECK_NEAR(x, 90000.0, 0); /* the moments */
        else if (op == PROF_BN1_F)
            CHECK_NEAR(x, model_op_flops(PROF_CONV1_F), 0); /* conv1's convolution */
        else if (!wino)
            CHECK_NEAR(x, m, 0); /* conv1 bwd (direct), the fc layers, 0 for the rest */
        else
            CHECK(x < m);
        model += m;
        executed += x;
    }
    CHECK_NEAR(model, engine_flops_per_image(), 0);
    CHECK_NEAR(executed, engine_flops_executed_per_image(), 0);
    CHECK_NEAR(model, 46228992.0, 0);   /* the man page's flops_per_image */
    CHECK_NEAR(executed, 12619152.0, 0); /* and flops_executed_per_image */
    return check_report();
}
