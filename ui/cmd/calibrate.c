/*
 * calibrate.c: `cnntop calibrate`: measure (or read the cached
 * figures), then print them and the sketch on paper.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/calibrate.h"
#include "cnntop/calibrate.h"
#include "common/exit.h"
#include "common/fmt.h"

/* Progress: on a terminal one line rewritten in place, else one per part. */
static void on_progress(void *ud, const char *what, double done)
{
    int tty = *(const int *)ud;

    if (tty)
        fprintf(stderr, "\r\033[Kcalibrating: %3.0f%% %s%s", done * 100.0, what,
                done >= 1.0 ? "\n" : "");
    else
        fprintf(stderr, "calibrating: %3.0f%% %s\n", done * 100.0, what);
    fflush(stderr);
}

/* 49152 -> "48 KiB", 2097152 -> "2 MiB"; 0 -> "unknown". */
static const char *cache_size(size_t b, char *buf, size_t len)
{
    if (b == 0)
        snprintf(buf, len, "unknown");
    else if (b % (1024 * 1024) == 0)
        snprintf(buf, len, "%zu MiB", b / (1024 * 1024));
    else
        snprintf(buf, len, "%zu KiB", b / 1024);
    return buf;
}

static void print_machine(const MachineInfo *m)
{
    char l1[32], l2[32], l3[32];

    printf("machine     %s, %d core%s, Linux %s\n", m->cpu_model, m->cores, fmt_plural(m->cores),
           m->kernel);
    printf("caches      L1d %s, L2 %s, L3 %s\n", cache_size(m->l1d_bytes, l1, sizeof l1),
           cache_size(m->l2_bytes, l2, sizeof l2), cache_size(m->l3_bytes, l3, sizeof l3));
    printf("OpenBLAS    %s, %s kernels (%s; the CPU has %s), %s\n", m->blas_version,
           m->blas_core, m->blas_isa, m->cpu_isa, m->blas_threading);
    if (m->blas_note[0])
        printf("note        %s\n", m->blas_note);
    if (m->blas_warning[0])
        printf("warning     %s\n", m->blas_warning);
}

/* One line per vector width, the yardstick, and SGEMM against it. */
static void print_peaks(const Calibration *c, const MachineInfo *mi)
{
    char gap[320];
    int best;
    double peak = calibrate_peak(c, &best);

    for (int w = 0, first = 1; w < CALIB_NWIDTHS; w++) {
        if (!(c->fma_gflops[w] > 0.0))
            continue;
        printf("%-11s %-9s %7.1f GFLOP/s on %d threads, %.1f on one", first-- > 0 ? "FMA peak" : "",
               calibrate_width_name(w), c->fma_gflops[w], c->threads, c->fma1_gflops[w]);
        if (c->clock_ghz > 0.0)
            printf(" (%.1f FLOP/cycle)", c->fma1_gflops[w] / c->clock_ghz);
        printf("%s\n", strcmp(calibrate_width_name(w), "SSE") ? "" : "; mul + add, SSE has no FMA");
    }
    if (!(peak > 0.0)) {
        printf("FMA peak    not measured: no vector width this build knows (not x86)\n");
        return;
    }
    printf("%-11s %.1f GFLOP/s (%s) is the yardstick of MFU and the sketch; SGEMM at the "
           "model's shapes is %.0f%%-%.0f%% of it", "", peak, calibrate_width_name(best),
           100.0 * c->model_gflops[0] / peak,
           100.0 * c->model_gflops[1] / peak);
    if (c->clock_ghz > 0.0)
        printf("; clock %.2f GHz (one thread, dependent adds)", c->clock_ghz);
    printf("\n");
    if (calibrate_sgemm_gap(c, mi->blas_warning[0] != '\0', gap, sizeof gap))
        printf("warning     %s\n", gap);
}

static void print_figures(const Calibration *c, const char *path)
{
    for (int k = 0; k < CALIB_NBATCH; k++)
        printf("%-11s %.1f GFLOP/s at the model's shapes, batch %d, %d thread%s "
               "(%.1f per thread)\n", k == 0 ? "SGEMM" : "", c->model_gflops[k],
               c->batch[k], c->threads, fmt_plural(c->threads), c->model_gflops[k] / c->threads);
    printf("%-11s %.1f GFLOP/s at %d x %d, %d OpenBLAS thread%s\n", "", c->square_gflops,
           c->square_n, c->square_n, c->square_threads, fmt_plural(c->square_threads));
    printf("bandwidth   %.1f GB/s, triad a = b + s*c over %.0f MiB (3 arrays counted), "
           "%d thread%s%s\n", c->triad_gbps, c->triad_mib, c->threads, fmt_plural(c->threads),
           c->llc_mib > 0 && c->triad_mib < 2.0 * c->llc_mib ? "; the arrays are not "
           "well beyond the L3, so this may be partly cache" : "");
    if (c->cached) {
        char when[64] = "?";
        time_t t = (time_t)c->measured_at;
        struct tm tm;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        printf("cache       %s (cached, measured %s; --recalibrate measures again)\n",
               path, when);
    } else {
        printf("cache       %s (measured now, in %.1f s)\n", path[0] ? path : "none",
               c->seconds);
    }
}

static void print_sketch(const Calibration *c)
{
    static const int batches[] = {64, 512};

    printf("on paper    one epoch of the default data (%d images): %.2f TFLOP of model "
           "work, %.2f TFLOP computed (Winograd)\n", CALIB_EPOCH_IMAGES,
           CALIB_EPOCH_IMAGES * engine_flops_per_image() * 1e-12,
           CALIB_EPOCH_IMAGES * engine_flops_executed_per_image() * 1e-12);
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        Sketch s;
        if (calibrate_sketch(c, CALIB_EPOCH_IMAGES, batches[i], &s) != 0)
            continue;
        printf("%-11s batch %-4d %6.1f s = compute %.1f s (at %.1f GFLOP/s, %s) + memory "
               "%.1f s (%.1f GB at %.1f GB/s)\n", "", batches[i], s.seconds, s.compute_s,
               s.gflops, s.peak ? "the FMA peak" : "SGEMM", s.memory_s, s.bytes * 1e-9, s.gbps);
    }
}

int calibrate_main(const Options *o)
{
    Calibration c;
    char warn[1024], err[512], path[4096] = "";
    int tty = isatty(STDERR_FILENO);
    CalibOpts opts = {.threads = o->cfg.threads, .progress = on_progress, .userdata = &tty};

    if (calibrate_cache_path(path, sizeof path, o->cfg.threads, err, sizeof err) != 0)
        path[0] = '\0';
    if (calibrate_get(&opts, &c, o->recalibrate, warn, sizeof warn, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        return EXIT_FAIL;
    }
    if (warn[0])
        fprintf(stderr, "cnntop: warning: %s\n", warn);
    MachineInfo mi;
    machine_info(&mi);
    print_machine(&mi);
    print_peaks(&c, &mi);
    print_figures(&c, path);
    print_sketch(&c);
    return EXIT_OK;
}
