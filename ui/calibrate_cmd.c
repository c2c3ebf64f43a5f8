/*
 * calibrate_cmd.c: `cnntop calibrate`: measure (or read the cached
 * figures), then print them and the sketch on paper.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate_cmd.h"
#include "cnntop/calibrate.h"
#include "headless.h"

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
static const char *fmt_bytes(size_t b, char *buf, size_t len)
{
    if (b == 0)
        snprintf(buf, len, "unknown");
    else if (b % (1024 * 1024) == 0)
        snprintf(buf, len, "%zu MiB", b / (1024 * 1024));
    else
        snprintf(buf, len, "%zu KiB", b / 1024);
    return buf;
}

static void print_machine(void)
{
    MachineInfo mi;
    char l1[32], l2[32], l3[32];

    engine_machine_info(&mi);
    printf("machine     %s, %d core%s, Linux %s\n", mi.cpu_model, mi.cores, PLURAL(mi.cores),
           mi.kernel);
    printf("caches      L1d %s, L2 %s, L3 %s\n", fmt_bytes(mi.l1d_bytes, l1, sizeof l1),
           fmt_bytes(mi.l2_bytes, l2, sizeof l2), fmt_bytes(mi.l3_bytes, l3, sizeof l3));
    printf("OpenBLAS    %s, %s kernels, %s\n", mi.blas_version, mi.blas_core,
           mi.blas_threading);
    if (mi.blas_warning[0])
        printf("note        %s\n", mi.blas_warning);
}

static void print_figures(const Calibration *c, const char *path)
{
    for (int k = 0; k < CALIB_NBATCH; k++)
        printf("%-11s %.1f GFLOP/s at the model's shapes, batch %d, %d thread%s "
               "(%.1f per thread)\n", k == 0 ? "SGEMM" : "", c->model_gflops[k],
               c->batch[k], c->threads, PLURAL(c->threads), c->model_gflops[k] / c->threads);
    printf("%-11s %.1f GFLOP/s at %d x %d, %d OpenBLAS thread%s\n", "", c->square_gflops,
           c->square_n, c->square_n, c->square_threads, PLURAL(c->square_threads));
    printf("bandwidth   %.1f GB/s, triad a = b + s*c over %.0f MiB (3 arrays counted), "
           "%d thread%s%s\n", c->triad_gbps, c->triad_mib, c->threads, PLURAL(c->threads),
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
           "work, %.2f TFLOP computed (Winograd), %.1f GB moved\n", CALIB_EPOCH_IMAGES,
           CALIB_EPOCH_IMAGES * engine_flops_per_image() * 1e-12,
           CALIB_EPOCH_IMAGES * engine_flops_executed_per_image() * 1e-12,
           CALIB_EPOCH_IMAGES * calibrate_bytes_per_image() * 1e-9);
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        Sketch s;
        if (calibrate_sketch(c, CALIB_EPOCH_IMAGES, batches[i], &s) != 0)
            continue;
        printf("%-11s batch %-4d %6.1f s = compute %.1f s (at %.1f GFLOP/s) + memory "
               "%.1f s (at %.1f GB/s)\n", "", batches[i], s.seconds, s.compute_s, s.gflops,
               s.memory_s, s.gbps);
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
    print_machine();
    print_figures(&c, path);
    print_sketch(&c);
    return EXIT_OK;
}
