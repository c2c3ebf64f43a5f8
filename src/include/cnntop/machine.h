/*
 * machine.h: facts about the machine and the libraries cnntop runs on, and the choice of
 * OpenBLAS kernel.  Nothing here is about an Engine.
 */
#ifndef CNNTOP_MACHINE_H
#define CNNTOP_MACHINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Facts about the machine and the libraries the engine runs on. */
typedef struct MachineInfo {
    char cpu_model[128];    /* e.g. "AMD EPYC 9B45" */
    int cores;              /* cores this process may use */
    char blas_core[64];     /* OpenBLAS kernel in use, e.g. "Haswell" */
    char blas_config[128];  /* OpenBLAS build string */
    char blas_warning[320]; /* non-empty when OpenBLAS runs narrower vectors than the
                               CPU has: the cause and the fix */
    char blas_note[320];    /* who chose the kernel, when worth saying ("" otherwise),
                               e.g. "OpenBLAS chose Prescott ...; cnntop runs ..." */
    char blas_brief[96];    /* the note in at most 56 columns, for a status row */
    char cpu_isa[16];       /* the CPU's widest vector set, e.g. "AVX-512" */
    char blas_isa[16];      /* the running kernel's, e.g. "SSE"; "unknown" */
    char blas_version[32];  /* OpenBLAS release, e.g. "0.3.21", or "unknown" */
    char blas_threading[16];/* "pthreads", "OpenMP" or "sequential" */
    size_t l1d_bytes;       /* cpu0's L1 data cache, e.g. 49152; 0 unknown */
    size_t l2_bytes;        /* its L2, e.g. 2097152; 0 unknown */
    size_t l3_bytes;        /* its L3 (shared), e.g. 33554432; 0 unknown */
    char kernel[64];        /* uname release, e.g. "6.1.0-18-amd64" */
} MachineInfo;

/* Describes the machine; never fails (unknown fields say "unknown"). */
void machine_info(MachineInfo *out);

/* Peak resident memory of this process so far, KiB. */
long machine_peak_rss_kib(void);

/* Where the Winograd convolutions' GEMMs run (RunConfig.gemm). */
typedef enum CnGemm {
    CN_GEMM_AUTO,     /* the fastest measured: today what native runs (the native
                         kernels beat OpenBLAS's at these shapes on AVX2 and on
                         AVX-512 CPUs); the name stays so that a later rule may
                         differ from native */
    CN_GEMM_OPENBLAS, /* OpenBLAS's SGEMM */
    CN_GEMM_NATIVE    /* cnntop's own kernels, the widest the CPU has (cpuid); OpenBLAS
                         where it has neither AVX2 nor AVX-512 */
} CnGemm;

/* What a CN_GEMM_* choice runs on this machine: "openblas", "native
 * AVX-512" or "native AVX2" (a static string of fewer than
 * CN_GEMM_PATH_LEN bytes). */
#define CN_GEMM_PATH_LEN 32
const char *machine_gemm_path(int choice);

/* What to do about OpenBLAS's kernel, before anything else runs. */
typedef enum BlasAction {
    CN_BLAS_KEEP,   /* nothing to do */
    CN_BLAS_SWITCH, /* run the program again with OPENBLAS_CORETYPE=kernel and
                       CNNTOP_BLAS_AUTO=marker (OpenBLAS reads it once, at load) */
    CN_BLAS_VERIFY  /* cnntop's own choice runs: check it with machine_blas_verify();
                       on failure run again with OPENBLAS_CORETYPE as the user had
                       it (unset, or empty when orig_empty) and CNNTOP_BLAS_AUTO
                       as machine_blas_verify() gives it */
} BlasAction;

#define CN_BLAS_ENV "OPENBLAS_CORETYPE"   /* OpenBLAS's kernel family, read at load */
#define CN_BLAS_MARKER "CNNTOP_BLAS_AUTO" /* what cnntop did about it (blaskernel.h) */

typedef struct BlasPlan {
    BlasAction action;
    char kernel[32];        /* SWITCH: the kernel to run; VERIFY: the one running */
    char marker[96];        /* SWITCH: CNNTOP_BLAS_AUTO's value */
    int orig_empty;         /* VERIFY: the user's OPENBLAS_CORETYPE was set but empty */
} BlasPlan;

/*
 * Decides, from the CPU's vector instruction sets (cpuid), OpenBLAS's
 * running kernel and the environment (OPENBLAS_CORETYPE, CNNTOP_BLAS_AUTO),
 * whether OpenBLAS should run a wider kernel: only when the user has not
 * named one (the variable unset or empty) and keep_own is 0.  A user's
 * OPENBLAS_CORETYPE is always kept.
 */
void machine_blas_plan(int keep_own, BlasPlan *out);

/*
 * Checks the running OpenBLAS kernel: that it is the one the plan chose
 * (OpenBLAS ignores names it does not know) and that small SGEMMs match a
 * plain loop within float tolerance.  Returns 0, or -1 with why, and the
 * CNNTOP_BLAS_AUTO value that records the failure in marker.
 */
int machine_blas_verify(const BlasPlan *p, char *why, size_t whylen, char *marker,
                        size_t markerlen);

#ifdef __cplusplus
}
#endif
#endif
