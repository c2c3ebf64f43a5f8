/*
 * calibrate.h: what this machine can do, measured, and the time "on paper".
 *
 * The calibration measures, in about three seconds:
 *   - the FP32 peak of the floating-point units, with register-only loops
 *     (no memory traffic) for each vector width the CPU has: AVX-512 and
 *     AVX2 FMAs (2 FLOPs a lane), SSE muls and adds (1 FLOP a lane; SSE has
 *     no FMA), on one thread and on the T compute threads at once, best of
 *     many short windows; and one thread's clock, by a chain of dependent
 *     integer adds (one a cycle), so that FLOPs per cycle can be shown;
 *   - the SGEMM rate at the reference model's real GEMM shapes (those of one
 *     training step at batch 64 and at 512), run the way the engine runs
 *     them: T threads at once, each calling OpenBLAS with one thread;
 *   - the SGEMM rate of one large square product (2048) with OpenBLAS
 *     threads = cores: the library's own best;
 *   - the memory bandwidth, by a STREAM-style triad a[i] = b[i] + s*c[i]
 *     over the cores, counted as STREAM counts it: 3 arrays moved (two read,
 *     one written); the write-allocate read of a is not counted, so the
 *     hardware moves up to 4/3 of the figure.
 *
 * The figures are cached in a file per setup, named by
 * calibrate_cache_path() ($XDG_CACHE_HOME/cnntop/calibration-Haswell-8t, or
 * under ~/.cache), a key=value text file:
 *
 *     # comment lines
 *     cnntop-calibration 3            <- format version, always first
 *     cpu_model=Intel(R) Xeon(R) ...  <- the key: cpu_model, cores,
 *     cores=8                            blas_core and threads must all match
 *     blas_core=SkylakeX                 this machine and setup, or the file
 *     threads=8                          is measured again
 *     fma_avx512=470.000              <- FP32 peak per width, all compute
 *     fma_avx2=470.000                   threads, GFLOP/s (0: the CPU lacks
 *     fma_sse=235.000                    the width)
 *     fma1_avx512=118.000             <- the same on one thread
 *     fma1_avx2=118.000
 *     fma1_sse=59.000
 *     clock_ghz=3.690                 <- one thread's clock (0: unknown)
 *     batch_a=64                      <- the batches whose shapes were timed
 *     model_gflops_a=123.456             and the rate at each, all threads
 *     batch_b=512                        together, GFLOP/s
 *     model_gflops_b=150.000
 *     square_n=2048                   <- the square product, its OpenBLAS
 *     square_threads=8                   threads and its rate, GFLOP/s
 *     square_gflops=800.000
 *     triad_gbps=40.000               <- triad bandwidth, GB/s (1e9 bytes)
 *     triad_mib=768.000                  and its 3 arrays together, MiB
 *     llc_mib=32.000                  <- the L3 it should exceed (0: unknown)
 *     seconds=2.700                   <- time the measuring took
 *     measured_at=1700000000          <- unix time
 *     end                             <- so a truncated file is caught
 *
 * Numbers are written and read without the C locale's help ("123.456" in
 * any locale).  A file that is not exactly this (another version, a
 * missing, repeated or unknown key, a truncated tail) is ignored with a
 * one-line warning naming it, never trusted, and replaced atomically.
 *
 * The FMA peak, the yardstick, is the highest of the per-width figures on
 * all compute threads (calibrate_peak()).
 *
 * The sketch on paper turns figures into seconds for a number of images:
 *   compute = images * FLOPs per training image (executed) / FMA peak
 *             (the model SGEMM rate where no peak could be measured)
 *   memory  = images * bytes per image / triad bandwidth
 *   comm    = steps * 2(N-1)/N * gradient bytes / the link's busbw
 *             (a data-parallel job of N ranks: calibrate_sketch_comm())
 *   seconds = compute + memory + comm
 * where bytes per image = the step's bytes at its batch over its images:
 * each op's tensors read or written once (model.h's model_op_bytes_image
 * and _step: the activations per image, the parameters once a step), so
 * that the sketch is the sum of the per-op times on paper that the run
 * summary's "On paper, per part" table shows (record_layer_paper()).  The
 * rate at a batch between the two timed ones is interpolated in
 * log2(batch); outside them the nearer one is used.
 *
 * Conventions as engine.h: 0 or a negative CN_E* code, and a one-line
 * message in err.
 */
#ifndef CNNTOP_CALIBRATE_H
#define CNNTOP_CALIBRATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: the engine's GEMM shapes became Winograd's (the model rates of a
 * version-1 file are for im2col shapes).  3: F(2x2,3x3) became
 * F(4x4,3x3), its GEMMs 36 thinner ones per group instead of 16.
 * 4: the FMA peak per vector width and the clock.  5: F(4x4,3x3) became
 * F(7x7,3x3), 81 GEMMs a group over a quarter of the tiles. */
#define CALIB_FORMAT_VERSION 5
#define CALIB_DEFAULT_SECONDS 3.0 /* the measuring budget, all parts together */
#define CALIB_NBATCH 2            /* batches whose GEMM shapes are timed */
#define CALIB_BATCH_A 64
#define CALIB_BATCH_B 512
#define CALIB_SQUARE_N 2048
#define CALIB_EPOCH_IMAGES 60000  /* one epoch of the default data */
#define CALIB_GAP_FACTOR 10.0     /* measured vs sketch: warn at this ratio */
#define CALIB_NWIDTHS 3           /* vector widths measured: AVX-512, AVX2+FMA, SSE */
/* SGEMM at the model's shapes under this share of the FMA peak (both on the
 * compute threads) is a library not using the CPU's vectors (here: 73-76%
 * with AVX-512 kernels, 24-27% with Prescott's SSE3 ones), or a
 * calibration disturbed by other work (measure.c measures again). */
#define CALIB_SGEMM_LOW 0.40

/* Measured figures of one machine and setup. */
typedef struct Calibration {
    /* The key: a cached file counts only when all of these match. */
    char cpu_model[128];      /* e.g. "AMD EPYC 9B45" */
    int cores;                /* cores this process may use, e.g. 8 */
    char blas_core[64];       /* OpenBLAS kernel, e.g. "Haswell" */
    int threads;              /* compute threads measured with, e.g. 8 */
    /* The figures. */
    int batch[CALIB_NBATCH];  /* e.g. {64, 512} */
    double model_gflops[CALIB_NBATCH]; /* all threads together at that batch's
                                          step shapes, GFLOP/s */
    int square_n;             /* e.g. 2048 */
    int square_threads;       /* OpenBLAS threads in the square product */
    double square_gflops;     /* GFLOP/s */
    double fma_gflops[CALIB_NWIDTHS];  /* FP32 peak on all compute threads per
                                          width (calibrate_width_name()), GFLOP/s;
                                          0: the CPU lacks that width */
    double fma1_gflops[CALIB_NWIDTHS]; /* the same on one thread */
    double clock_ghz;         /* one thread's clock, GHz; 0: unknown */
    double triad_gbps;        /* GB/s (1e9 bytes), 3 arrays counted */
    double triad_mib;         /* the triad's 3 arrays together, MiB */
    double llc_mib;           /* L3 size, MiB; 0 unknown */
    double seconds;           /* wall time the measuring took */
    long long measured_at;    /* unix time of the measurement */
    int cached;               /* 1 when calibrate_get() read it from the cache */
} Calibration;

/* Progress while measuring, on the calling thread: `what` names the part
 * ("SGEMM at the model's shapes, 8 threads"), `done` runs 0..1 over the
 * whole calibration. */
typedef void (*CalibProgressFn)(void *userdata, const char *what, double done);

typedef struct CalibOpts {
    int threads;              /* compute threads; 0: the cores this process may use */
    double seconds;           /* measuring budget; 0: CALIB_DEFAULT_SECONDS */
    const char *cache_path;   /* NULL: calibrate_cache_path()'s answer for
                                 these threads */
    CalibProgressFn progress; /* may be NULL */
    void *userdata;           /* passed to progress */
} CalibOpts;

/*
 * Writes the path of this setup's cache file into buf:
 * $XDG_CACHE_HOME/cnntop/calibration-<kernel>-<threads>t when XDG_CACHE_HOME
 * is an absolute path, else $HOME/.cache/cnntop/calibration-<kernel>-<threads>t,
 * where <kernel> is OpenBLAS's (e.g. "Haswell") and <threads> the compute
 * threads (0: the cores this process may use).  One file per setup, so
 * that runs switching between them (--threads 1 and 2, OPENBLAS_CORETYPE
 * set and unset) each find theirs instead of measuring again.
 * Returns 0, or -CN_EINVAL when neither is set or the path does not fit.
 */
int calibrate_cache_path(char *buf, size_t len, int threads, char *err, size_t errlen);

/*
 * Measures now (opts may be NULL: defaults), ignoring and not touching the
 * cache.  Leaves OpenBLAS at one thread per call, as the engine wants it.
 * Not while an engine trains in this process: the square product sets
 * OpenBLAS's thread count for the whole process for a moment, and the
 * figures would measure the two fighting over the cores.
 * Returns 0, -CN_EINVAL (threads over CN_MAX_THREADS) or -CN_ENOMEM
 * (buffers or threads could not be had).
 */
int calibrate_measure(const CalibOpts *opts, Calibration *out, char *err, size_t errlen);

/*
 * The figures for this machine: from the cache when it holds a valid file
 * with this machine's key and `force` is 0, else measured and stored.
 * A cache that is unreadable, corrupt, of another version or another key
 * is not trusted: `warn` (may be NULL) gets one line naming the file and
 * why, and it is measured again and overwritten atomically.  A cache that
 * cannot be written also only warns (the figures are still returned).
 * out->cached says which happened; the figures are the same either way
 * (measured ones are rounded as the file holds them).  Returns 0 or what
 * calibrate_measure() returns.
 */
int calibrate_get(const CalibOpts *opts, Calibration *out, int force,
                  char *warn, size_t warnlen, char *err, size_t errlen);

/* This setup's cached figures for `threads` compute threads (0: the
 * cores), without measuring: 0 when the cache holds a valid file for this
 * machine and setup, else -1 (*out then undefined).  Where this process
 * runs OpenBLAS's fallback kernel and the compute commands would switch
 * to the CPU's (machine_blas_plan(): exec does not switch), the file
 * made for that kernel serves when this one's is missing. */
int calibrate_load(int threads, Calibration *out);

/*
 * Parses a cache file's bytes buf[0..len) (not NUL-terminated; any bytes
 * are safe: this is the fuzz target's door).  Fills *out only on success
 * (out->cached = 1).  Returns 0, or -CN_EFORMAT with the reason in err
 * ("line 3: unknown key 'foo'").  It does not compare the key with this
 * machine; see calibrate_key_matches().
 */
int calibrate_parse(const char *buf, size_t len, Calibration *out, char *err, size_t errlen);

/*
 * Writes c as the cache file's text into buf (NUL-terminated).  Returns the
 * length it needs (as snprintf does; at most 4096).
 */
size_t calibrate_format(const Calibration *c, char *buf, size_t len);

/* 1 when c was made on this machine and setup with `threads` compute
 * threads (0: the cores), else 0 with what differs in why (may be NULL). */
int calibrate_key_matches(const Calibration *c, int threads, char *why, size_t whylen);

/* Bytes moved per training image in the sketch at batch: every op's
 * (model_bytes_image()). */
double calibrate_bytes_per_image(int batch);

/* "AVX-512", "AVX2+FMA", "SSE" for width 0..CALIB_NWIDTHS-1, widest first. */
const char *calibrate_width_name(int w);

/* The FMA peak: the highest all-threads figure of c->fma_gflops, GFLOP/s,
 * with its width in *w (may be NULL; -1 when none); 0 when none was
 * measured (not x86). */
double calibrate_peak(const Calibration *c, int *w);

/*
 * When SGEMM at the model's shapes is held far below the FMA peak (under
 * CALIB_SGEMM_LOW of it, both on the compute threads), or when `narrow`
 * (the OpenBLAS kernel is narrower than the CPU, MachineInfo.blas_warning
 * set), writes one line with the measured factor ("measured: SGEMM at the
 * model's shapes 62 GFLOP/s on 2 threads is 15% of the 403 GFLOP/s AVX-512
 * FMA peak, 6.5x below it"; when not narrow, without "measured: " and with
 * ": a calibration run beside other work reads so (cnntop calibrate
 * --recalibrate ...), or OpenBLAS is slow at these shapes": the kernel is
 * as wide as the CPU, so its vectors are not the suspect) into msg and
 * returns 1;
 * else msg = "", 0.
 * calibrate_sgemm_gap() takes the figures from a calibration (the faster
 * of its two batches), calibrate_gap_text() as given (e.g. a record's).
 */
int calibrate_gap_text(double sgemm, double peak, const char *isa, int threads, int narrow,
                       char *msg, size_t len);
int calibrate_sgemm_gap(const Calibration *c, int narrow, char *msg, size_t len);

/* The time on paper for `images` training images at `batch`. */
typedef struct Sketch {
    long images;        /* e.g. 60000 */
    int batch;          /* e.g. 64 */
    double flops;       /* images * FLOPs per training image */
    double bytes;       /* images * calibrate_bytes_per_image(batch) */
    double gflops;      /* rate used: the FMA peak, or where none was measured
                           the SGEMM rate interpolated at batch, GFLOP/s */
    int peak;           /* 1: gflops is the FMA peak, 0: the SGEMM rate */
    double gbps;        /* bandwidth used, GB/s */
    double compute_s;   /* flops / rate */
    double memory_s;    /* bytes / bandwidth */
    int ranks;          /* a data-parallel job's ranks (calibrate_sketch_comm), 0: one process */
    long steps;         /* the all-reduces on paper: one a step */
    double ar_bytes;    /* gradient bytes all-reduced a step */
    double busbw;       /* the link's measured rate, GB/s (nccl-tests' busbw) */
    double comm_s;      /* steps x 2(ranks-1)/ranks x ar_bytes / busbw; 0: one process */
    double seconds;     /* compute_s + memory_s + comm_s */
} Sketch;

/* Fills *out.  Returns 0, or -CN_EINVAL when images < 0, batch < 1 or the
 * calibration's figures are not positive. */
int calibrate_sketch(const Calibration *c, long images, int batch, Sketch *out);

/* The same from the two rates a record keeps (cnntop/figures.h's
 * record_sketch()): gflops (the FMA peak when peak is 1, else the SGEMM
 * rate at batch) and gbps.  -CN_EINVAL as above when a rate is not
 * positive. */
int calibrate_sketch_at(double gflops, int peak, double gbps, long images, int batch,
                        Sketch *out);

/* Adds a data-parallel job's all-reduces to *s: `steps` of ar_bytes each
 * over `ranks`, as a ring moves them, 2(ranks-1)/ranks x ar_bytes over a
 * link of busbw GB/s (the measured one: nccl-tests' busbw, algbw x
 * 2(ranks-1)/ranks, so a step's is the all-reduce's measured time alone),
 * none of them hidden under the backward pass: s->comm_s, and s->seconds
 * grows by it.  Nothing (comm_s 0) for fewer than 2 ranks, no steps, or a
 * bandwidth that is not positive. */
void calibrate_sketch_comm(Sketch *s, int ranks, long steps, double ar_bytes, double busbw);

/* The compute rate calibrate_sketch() assumes at batch, GFLOP/s: the FMA
 * peak (*peak = 1), else the SGEMM rate interpolated there (*peak = 0); 0
 * when the calibration has neither. */
double calibrate_sketch_gflops(const Calibration *c, int batch, int *peak);

/*
 * Compares a measured time with the sketch.  When either is CALIB_GAP_FACTOR
 * times the other or more, writes "measured X s, the sketch says Y s: a 10x
 * gap is a sign of a real problem (see 'On paper' in man cnntop)" into msg and returns 1;
 * otherwise (or when either time is not positive) msg = "" and returns 0.
 */
int calibrate_check(const Sketch *s, double measured_s, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
