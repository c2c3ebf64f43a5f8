/*
 * blaskernel.h: which OpenBLAS kernel family runs, how wide its vectors
 * are against the CPU's, and which kernel cnntop would choose instead.
 *
 * OpenBLAS built with DYNAMIC_ARCH picks a kernel family ("core") when it
 * loads: from the variable OPENBLAS_CORETYPE when set, else from its own
 * CPU detection, which falls back to a narrow one (Prescott: SSE3) on CPUs
 * it does not know.  cnntop compares the family's vector width with the
 * CPU's (cpuid feature bits, sysinfo.h) and, when the user has not named a
 * kernel, runs OpenBLAS again with the matching one (ui/common/blas_auto.c
 * re-executes the program with the variable set, since OpenBLAS reads it
 * once, at load).
 *
 * Everything here but blaskernel_verify() is a pure function of its
 * arguments (table-driven, tested in tests/nn/test_blaskernel.c).
 *
 * The environment carries the state across the re-execution: cnntop sets
 * OPENBLAS_CORETYPE=<kernel> and CNNTOP_BLAS_AUTO to one of
 *   "auto <kernel> <own> <unset|empty>"     cnntop chose <kernel>; OpenBLAS's own
 *                                           was <own>; the user's variable was
 *                                           unset or set but empty
 *   "failed <kernel> <unset|empty> <why>"   <kernel> failed its check: the
 *                                           variable is back as the user had it
 * A marker whose kernel is not the variable's value is stale, and the
 * variable then counts as the user's.
 */
#ifndef CNNTOP_BLASKERNEL_H
#define CNNTOP_BLASKERNEL_H

#include <stddef.h>

#include "cnntop/machine.h"

#define BLASKERNEL_ENV CN_BLAS_ENV
#define BLASKERNEL_MARKER CN_BLAS_MARKER
#define BLASKERNEL_NAME_MAX 32

/* Vector instruction-set classes, narrowest first. */
typedef enum IsaClass {
    ISA_UNKNOWN = -1, /* a kernel name this table does not know */
    ISA_NONE = 0,     /* no x86 vector unit known (another architecture) */
    ISA_SSE,          /* 128-bit SSE family (SSE3 on x86-64) */
    ISA_AVX,          /* 256-bit, no FMA */
    ISA_AVX2,         /* 256-bit with FMA */
    ISA_AVX512        /* 512-bit (F, DQ, BW, VL) */
} IsaClass;

/* "SSE", "AVX", "AVX2+FMA", "AVX-512", "none", "unknown". */
const char *blaskernel_isa_name(IsaClass c);

/* The widest class a SYSINFO_* feature set covers. */
IsaClass blaskernel_cpu_class(unsigned features);

/* The class of an OpenBLAS core name ("Prescott" -> ISA_SSE, "Zen" ->
 * ISA_AVX2, "SkylakeX" -> ISA_AVX512), case-insensitive; ISA_UNKNOWN when
 * the name is not in the table. */
IsaClass blaskernel_core_class(const char *core);

/* The kernel that matches a feature set ("Cooperlake" with AVX-512 BF16,
 * "SkylakeX", "Haswell", "Sandybridge", "Prescott"), or NULL for none. */
const char *blaskernel_for_cpu(unsigned features);

/* Who set OPENBLAS_CORETYPE. */
typedef enum BlasSetter {
    BLAS_SET_NONE,     /* unset: OpenBLAS chose */
    BLAS_SET_EMPTY,    /* set but empty: it names no kernel, OpenBLAS chose */
    BLAS_SET_USER,     /* the user named a kernel: always respected */
    BLAS_SET_CNNTOP,   /* cnntop set it (the marker says so) */
    BLAS_SET_FALLBACK  /* cnntop's choice failed its check; OpenBLAS's own runs */
} BlasSetter;

typedef struct BlasEnv {
    BlasSetter setter;
    char value[BLASKERNEL_NAME_MAX];  /* OPENBLAS_CORETYPE, "" when unset or empty */
    char kernel[BLASKERNEL_NAME_MAX]; /* CNNTOP, FALLBACK: cnntop's choice */
    char own[BLASKERNEL_NAME_MAX];    /* CNNTOP: OpenBLAS's own choice before it */
    int orig_empty;                   /* CNNTOP, FALLBACK: the user's variable was set
                                         but empty (else unset) */
    char why[160];                    /* FALLBACK: why the check failed */
} BlasEnv;

/* Classifies the variable (coretype = getenv(OPENBLAS_CORETYPE), may be
 * NULL) and the marker (getenv(CNNTOP_BLAS_AUTO), may be NULL). */
void blaskernel_env(const char *coretype, const char *marker, BlasEnv *out);

/* The marker for cnntop choosing `kernel` over OpenBLAS's `own`, or for
 * `kernel` having failed its check (`why`), into buf. */
void blaskernel_marker_auto(char *buf, size_t len, const char *kernel, const char *own,
                            int orig_empty);
void blaskernel_marker_failed(char *buf, size_t len, const char *kernel, int orig_empty,
                              const char *why);

typedef struct BlasChoice {
    IsaClass cpu;                     /* the CPU's widest class */
    IsaClass core;                    /* the running kernel's class */
    int narrow;                       /* 1: the kernel is narrower than the CPU */
    int switch_to;                    /* 1: run OpenBLAS again with `kernel` */
    char kernel[BLASKERNEL_NAME_MAX]; /* the kernel matching the CPU ("" none) */
} BlasChoice;

/*
 * The decision: switch only when nobody named a kernel (setter NONE or
 * EMPTY), keep_own is 0, the running kernel's class is known and narrower
 * than the CPU's, and the table has a wider kernel.  A user's variable,
 * cnntop's own earlier choice and a fallback are always kept.
 */
void blaskernel_choose(unsigned features, const char *core, const BlasEnv *env, int keep_own,
                       BlasChoice *out);

/* One-line texts for the machine description ("" where nothing is worth
 * saying). */
typedef struct BlasTexts {
    char note[320]; /* who chose the kernel */
    char brief[96]; /* the same in at most 56 columns (the dashboard's status
                       row beside its tabs at 80 columns) */
    char warn[320]; /* the kernel is narrower than the CPU: the cause and the fix */
} BlasTexts;

void blaskernel_describe(unsigned features, const char *core, const BlasEnv *env,
                         BlasTexts *out);

/*
 * Checks the running kernel: a few small SGEMMs on one OpenBLAS thread
 * (every transpose, odd sizes, beta 0 and 1) against a plain
 * double-precision loop.  Leaves OpenBLAS's thread count as it was.
 * Returns 0, or -1 with the failing shape and its error in why.
 */
int blaskernel_verify(char *why, size_t len);

#endif
