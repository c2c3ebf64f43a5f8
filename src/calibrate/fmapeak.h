/*
 * fmapeak.h: register-only loops that run the CPU's floating-point units
 * at their peak, one per vector width, and a loop that counts the clock.
 *
 * Each width's loop keeps many independent chains of one vector
 * instruction in registers (no memory traffic), enough to cover the
 * instruction's latency on every FMA port of current x86 cores:
 *   AVX-512   24 chains of a = a*b + c on 16 floats (vfmadd, zmm)
 *   AVX2+FMA  12 chains of a = a*b + c on 8 floats  (vfmadd, ymm)
 *   SSE       6 chains of x = x*b and 6 of y = y+c on 4 floats (mulps,
 *             addps: SSE has no FMA; what the SSE kernels can run)
 * FLOPs are counted as 2 per lane of an FMA, 1 per lane of a mul or add.
 * The clock loop is a chain of dependent register-to-register integer
 * adds, one per cycle on every x86 core.
 *
 * On other architectures no width is available and the clock reads 0.
 */
#ifndef CNNTOP_FMAPEAK_H
#define CNNTOP_FMAPEAK_H

/* The widths, widest first (the order of Calibration's fma arrays). */
typedef enum PeakWidth { PEAK_AVX512, PEAK_AVX2, PEAK_SSE, PEAK_NWIDTHS } PeakWidth;

typedef struct PeakLoop {
    const char *name;     /* e.g. "AVX-512" */
    unsigned need;        /* SYSINFO_* bits the loop needs */
    int lanes;            /* floats per vector, e.g. 16 */
    double flops_per_iter;/* FLOPs of one iteration of run() */
    /* Runs `iters` iterations; returns a checksum (finite; keeps the
     * compiler from dropping the work). */
    double (*run)(long iters);
} PeakLoop;

/* The loop of width w (never NULL for w < PEAK_NWIDTHS). */
const PeakLoop *fmapeak_loop(PeakWidth w);

/* 1 when `features` (SYSINFO_* bits) can run width w's loop. */
int fmapeak_available(PeakWidth w, unsigned features);

/* Runs iters x FMAPEAK_CLOCK_ADDS dependent integer adds (that many
 * cycles); 0 when there is no such loop here (not x86). */
#define FMAPEAK_CLOCK_ADDS 64
int fmapeak_clock(long iters);

#endif
