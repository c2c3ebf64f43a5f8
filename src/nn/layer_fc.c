/*
 * layer_fc.c: Linear forward and backward as products (gemm_on) on column
 * blocks.
 */
#include "nn/gemm.h"
#include "nn/layer_fc.h"

void fc_forward(float *out, const float *inp, const float *w, const float *b,
                int N, int IN, int OUT, int o0, int o1, GemmPath path)
{
    const int no = o1 - o0;

    gemm_on(path, 0, 1, N, no, IN, 1.0f, inp, IN, w + (size_t)o0 * IN, IN, 0.0f, out + o0, OUT);
    for (int n = 0; n < N; n++) {
        float *row = out + (size_t)n * OUT + o0;
        for (int o = 0; o < no; o++)
            row[o] += b[o0 + o];
    }
}

void fc_backward_weights(float *dw, float *db, const float *dout, const float *inp,
                         int N, int IN, int OUT, int o0, int o1, float beta, GemmPath path)
{
    const int no = o1 - o0;

    gemm_on(path, 1, 0, no, IN, N, 1.0f, dout + o0, OUT, inp, IN, beta, dw + (size_t)o0 * IN,
            IN);
    for (int o = o0; o < o1; o++) {
        float s = 0.0f;
        for (int n = 0; n < N; n++)
            s += dout[(size_t)n * OUT + o];
        db[o] = beta == 0.0f ? s : beta * db[o] + s;
    }
}

void fc_backward_input(float *dinp, const float *dout, const float *w,
                       int N, int IN, int OUT, int i0, int i1, GemmPath path)
{
    gemm_on(path, 0, 0, N, i1 - i0, OUT, 1.0f, dout, OUT, w + i0, IN, 0.0f, dinp + i0, IN);
}
