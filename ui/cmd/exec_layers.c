/*
 * exec_layers.c: the user's model in exec's summary and `report` (see
 * exec.h): the hook's layer window as cnntop's own layer table
 * (summary_print_layers()), the FLOPs per training image, the model's
 * rate against the calibrated FMA peak, the time on paper, and what the
 * window cost.  Everything comes from the record.
 */
#include <math.h>
#include <stdio.h>

#include "cnntop/calibrate.h"
#include "cmd/exec.h"
#include "cmd/summary.h"
#include "common/fmt.h"

/* The images the time on paper is said for. */
#define PAPER_IMAGES 1000

/* cnntop's own model (src/nn): a script training the same shapes counts
 * the same FLOPs per image, to this share. */
#define OWN_MODEL_FLOPS 46.2e6
#define OWN_MODEL_TOLERANCE 0.005

static void print_peak(FILE *f, const RunRecord *r)
{
    double ips = r->exec.images_per_s, mfu = record_mfu(r, ips);

    if (isnan(ips)) {
        fprintf(f, "  Against the peak:     unknown (no images/s: the hook saw no DataLoader "
                   "batches)\n");
        return;
    }
    if (isnan(mfu)) {
        fprintf(f, "  Against the peak:     unknown (no FMA peak in the calibration cache for %d "
                   "thread%s: cnntop calibrate --threads %d)\n", r->threads_used,
                fmt_plural(r->threads_used), r->threads_used);
        return;
    }
    char of[192];
    summary_peak_text(r, of, sizeof of);
    fprintf(f, "  Against the peak:     MFU %.2f%% (%.1f images/s x %.3f MFLOP/image = %.2f "
            "GFLOP/s of %s)\n", 100 * mfu, ips, r->flops_per_image * 1e-6,
            ips * r->flops_per_image * 1e-9, of);
    /* The time on paper, compute only: the user's model's bytes are not
     * known, so the bandwidth term of the engine's sketch is left out. */
    Sketch sk = {.images = PAPER_IMAGES, .gflops = record_job_peak(r, NULL), .peak = 1};
    char msg[256];
    sk.flops = PAPER_IMAGES * r->flops_per_image;
    sk.compute_s = sk.seconds = sk.flops / (sk.gflops * 1e9);
    double measured = PAPER_IMAGES / ips;
    fprintf(f, "  On paper:             %.3g s for %d images (%.3g GFLOP at the FMA peak; the "
            "model's memory traffic not counted); measured %.3g s\n", sk.seconds, PAPER_IMAGES,
            sk.flops * 1e-9, measured);
    if (calibrate_check(&sk, measured, msg, sizeof msg))
        fprintf(f, "  Warning:              %s\n", msg);
}

static void print_cost(FILE *f, const RunRecord *r)
{
    const RecordModel *m = &r->model;
    double cost = record_model_overhead(r);

    if (isnan(cost)) {
        fprintf(f, "  Window's cost:        unknown (no steps after the window to compare: "
                   "a longer run, or --layers with an earlier window)\n");
        return;
    }
    fprintf(f, "  Window's cost:        a step took %.3f ms in the window, %.3f ms after it "
            "(medians, %ld step%s): %+.1f%% while measured\n", 1e3 * m->step_in,
            1e3 * m->step_out, m->steps_out, fmt_plural(m->steps_out), 100 * cost);
}

void exec_layers_print(FILE *f, const RunRecord *r)
{
    const RecordModel *m = &r->model;

    if (!r->have_model)
        return;
    fprintf(f, "\n Model, layer by layer (optimizer steps %d..%ld, the hook's layer window; "
            "leaf modules with gradients on):", m->first, m->first + m->steps - 1);
    summary_print_layers(f, r);
    fprintf(f, "  (model GFLOP/s: Conv and Linear FLOPs as PyTorch counts them, 2 x the "
               "multiply-adds, backward as much again per gradient, per second)\n");
    if (isfinite(r->flops_per_image)) {
        fprintf(f, "  FLOPs per image:      %.3f MFLOP per training image (as PyTorch counts: "
                "forward x 3, less the input gradient no layer needs)", r->flops_per_image * 1e-6);
        if (fabs(r->flops_per_image / OWN_MODEL_FLOPS - 1) < OWN_MODEL_TOLERANCE)
            fprintf(f, ": cnntop's own model's count; `cnntop run` trains it here");
        fputc('\n', f);
        print_peak(f, r);
    }
    print_cost(f, r);
}
