/*
 * sketch.c: the time on paper (cnntop/calibrate.h says the arithmetic):
 * compute at the FMA peak plus memory traffic at the triad's bandwidth,
 * and the check of a measured time against it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/calibrate.h"
#include "cnntop/err.h"
#include "nn/model.h"

double calibrate_bytes_per_image(int batch)
{
    return model_bytes_image(batch);
}

/* The model-shape rate at `batch`, interpolated in log2(batch). */
static double rate_at(const Calibration *c, int batch)
{
    double b0 = c->batch[0], b1 = c->batch[1], r0 = c->model_gflops[0],
           r1 = c->model_gflops[1];

    if (b1 <= b0 || batch <= b0)
        return r0;
    if (batch >= b1)
        return r1;
    double w = (log2(batch) - log2(b0)) / (log2(b1) - log2(b0));
    return r0 + w * (r1 - r0);
}

int calibrate_sketch(const Calibration *c, long images, int batch, Sketch *out)
{
    memset(out, 0, sizeof *out);
    if (!c || batch < 1 || c->batch[0] < 1 || !(c->model_gflops[0] > 0.0) ||
        !(c->model_gflops[1] > 0.0))
        return -CN_EINVAL;
    double peak = calibrate_peak(c, NULL);
    return calibrate_sketch_at(peak > 0.0 ? peak : rate_at(c, batch), peak > 0.0, c->triad_gbps,
                               images, batch, out);
}

int calibrate_sketch_at(double gflops, int peak, double gbps, long images, int batch,
                        Sketch *out)
{
    memset(out, 0, sizeof *out);
    if (images < 0 || batch < 1 || !(gflops > 0.0) || !(gbps > 0.0))
        return -CN_EINVAL;
    out->images = images;
    out->batch = batch;
    out->flops = (double)images * model_flops_executed();
    out->bytes = (double)images * calibrate_bytes_per_image(batch);
    out->peak = peak != 0;
    out->gflops = gflops;
    out->gbps = gbps;
    out->compute_s = out->flops / (out->gflops * 1e9);
    out->memory_s = out->bytes / (out->gbps * 1e9);
    out->seconds = out->compute_s + out->memory_s;
    return 0;
}

void calibrate_sketch_comm(Sketch *s, int ranks, long steps, double ar_bytes, double busbw)
{
    if (ranks < 2 || steps <= 0 || !(ar_bytes > 0.0) || !(busbw > 0.0))
        return;
    s->ranks = ranks;
    s->steps = steps;
    s->ar_bytes = ar_bytes;
    s->busbw = busbw;
    s->comm_s = (double)steps * 2.0 * (ranks - 1) / ranks * ar_bytes / (busbw * 1e9);
    s->seconds += s->comm_s;
}

/* The rate the sketch assumes at batch: the FMA peak, else the SGEMM rate
 * there; 0 when the calibration has neither.  *peak: which. */
double calibrate_sketch_gflops(const Calibration *c, int batch, int *peak)
{
    double p = calibrate_peak(c, NULL);

    *peak = p > 0.0;
    if (*peak)
        return p;
    return c->batch[0] >= 1 && c->model_gflops[0] > 0.0 && c->model_gflops[1] > 0.0
               ? rate_at(c, batch) : 0.0;
}

int calibrate_check(const Sketch *s, double measured_s, char *msg, size_t len)
{
    if (msg && len)
        msg[0] = '\0';
    if (!s || !(s->seconds > 0.0) || !(measured_s > 0.0))
        return 0;
    double ratio = measured_s > s->seconds ? measured_s / s->seconds : s->seconds / measured_s;
    if (ratio < CALIB_GAP_FACTOR)
        return 0;
    if (msg && len)
        snprintf(msg, len, "measured %.3g s, the sketch says %.3g s: a %gx gap is a sign "
                 "of a real problem (see 'On paper' in man cnntop)", measured_s, s->seconds,
                 CALIB_GAP_FACTOR);
    return 1;
}
