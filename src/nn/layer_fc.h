/*
 * layer_fc.h: fully connected (Linear) layer on SGEMM.
 *
 * Layout: inp (N, IN) row-major, one image per row; w (OUT, IN) as PyTorch
 * stores it; b (OUT); out (N, OUT).  Each function works on a block of
 * output or input columns so that the caller can split a layer into items
 * that do not depend on the thread count.  path: where the products run
 * (gemm_path_dense()).
 */
#ifndef CNNTOP_LAYER_FC_H
#define CNNTOP_LAYER_FC_H

#include "nn/gemm.h"

/* out[:, o0:o1] = inp * w[o0:o1]^T + b[o0:o1]. */
void fc_forward(float *out, const float *inp, const float *w, const float *b,
                int N, int IN, int OUT, int o0, int o1, GemmPath path);

/* dw[o0:o1] (OUT, IN) = beta*dw + dout[:, o0:o1]^T * inp,
 * db[o0:o1] = beta*db + column sums of dout. */
void fc_backward_weights(float *dw, float *db, const float *dout, const float *inp,
                         int N, int IN, int OUT, int o0, int o1, float beta, GemmPath path);

/* dinp[:, i0:i1] (N, IN) = dout (N, OUT) * w[:, i0:i1]. */
void fc_backward_input(float *dinp, const float *dout, const float *w,
                       int N, int IN, int OUT, int i0, int i1, GemmPath path);

#endif
