/*
 * blaskernel.c: OpenBLAS's kernel family against the CPU's vector width,
 * and cnntop's choice (see blaskernel.h).
 *
 * Two tables hold the knowledge: the class of every kernel name OpenBLAS
 * 0.3.x reports on x86 (core_classes), and the kernel to run for a
 * feature set, widest first (cpu_kernels).  Everything else reads them.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nn/blaskernel.h"
#include "nn/gemm.h"
#include "prof/sysinfo.h"

static const struct {
    const char *name;
    IsaClass isa;
} core_classes[] = {
    {"Katmai", ISA_SSE},      {"Coppermine", ISA_SSE},   {"Northwood", ISA_SSE},
    {"Prescott", ISA_SSE},    {"Banias", ISA_SSE},       {"Atom", ISA_SSE},
    {"Core2", ISA_SSE},       {"Penryn", ISA_SSE},       {"Dunnington", ISA_SSE},
    {"Nehalem", ISA_SSE},     {"Athlon", ISA_SSE},       {"Opteron", ISA_SSE},
    {"Opteron_SSE3", ISA_SSE},{"Barcelona", ISA_SSE},    {"Nano", ISA_SSE},
    {"Bobcat", ISA_SSE},      {"Sandybridge", ISA_AVX},  {"Bulldozer", ISA_AVX},
    {"Piledriver", ISA_AVX},  {"Steamroller", ISA_AVX},  {"Excavator", ISA_AVX},
    {"Haswell", ISA_AVX2},    {"Zen", ISA_AVX2},         {"SkylakeX", ISA_AVX512},
    {"Cooperlake", ISA_AVX512}, {"SapphireRapids", ISA_AVX512},
};

#define AVX512_BASE (SYSINFO_AVX512F | SYSINFO_AVX512DQ | SYSINFO_AVX512BW | SYSINFO_AVX512VL)

/* First match wins: the kernel of the widest class the features cover. */
static const struct {
    unsigned need;
    IsaClass isa;
    const char *kernel;
} cpu_kernels[] = {
    {AVX512_BASE | SYSINFO_AVX512BF16, ISA_AVX512, "Cooperlake"},
    {AVX512_BASE, ISA_AVX512, "SkylakeX"},
    {SYSINFO_AVX2 | SYSINFO_FMA, ISA_AVX2, "Haswell"},
    {SYSINFO_AVX, ISA_AVX, "Sandybridge"},
    {SYSINFO_SSE3, ISA_SSE, "Prescott"},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *blaskernel_isa_name(IsaClass c)
{
    static const char *const names[] = {"none", "SSE", "AVX", "AVX2+FMA", "AVX-512"};

    return c >= ISA_NONE && c <= ISA_AVX512 ? names[c] : "unknown";
}

static int isa_bits(IsaClass c)
{
    return c == ISA_AVX512 ? 512 : c >= ISA_AVX ? 256 : c == ISA_SSE ? 128 : 0;
}

IsaClass blaskernel_cpu_class(unsigned features)
{
    for (size_t i = 0; i < NELEM(cpu_kernels); i++)
        if ((features & cpu_kernels[i].need) == cpu_kernels[i].need)
            return cpu_kernels[i].isa;
    return ISA_NONE;
}

IsaClass blaskernel_core_class(const char *core)
{
    for (size_t i = 0; core && i < NELEM(core_classes); i++)
        if (!strcasecmp(core, core_classes[i].name))
            return core_classes[i].isa;
    return ISA_UNKNOWN;
}

const char *blaskernel_for_cpu(unsigned features)
{
    for (size_t i = 0; i < NELEM(cpu_kernels); i++)
        if ((features & cpu_kernels[i].need) == cpu_kernels[i].need)
            return cpu_kernels[i].kernel;
    return NULL;
}

/* ---- the environment ---- */

/* Splits the next space-delimited word of *s into buf; 0 or -1 (none). */
static int next_word(const char **s, char *buf, size_t len)
{
    const char *p = *s;
    size_t n;

    while (*p == ' ')
        p++;
    n = strcspn(p, " ");
    if (n == 0 || n >= len)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    *s = p + n;
    return 0;
}

/* "unset" -> 0, "empty" -> 1, else -1. */
static int orig_state(const char *w)
{
    return !strcmp(w, "unset") ? 0 : !strcmp(w, "empty") ? 1 : -1;
}

/* Parses a marker into out (setter CNNTOP or FALLBACK); -1 when malformed. */
static int parse_marker(const char *m, BlasEnv *out)
{
    char verb[16], state[16];

    if (next_word(&m, verb, sizeof verb) || next_word(&m, out->kernel, sizeof out->kernel))
        return -1;
    if (!strcmp(verb, "auto")) {
        if (next_word(&m, out->own, sizeof out->own) || next_word(&m, state, sizeof state) ||
            *m)
            return -1;
        out->setter = BLAS_SET_CNNTOP;
    } else if (!strcmp(verb, "failed")) {
        if (next_word(&m, state, sizeof state))
            return -1;
        snprintf(out->why, sizeof out->why, "%s", *m == ' ' ? m + 1 : m);
        out->setter = BLAS_SET_FALLBACK;
    } else {
        return -1;
    }
    out->orig_empty = orig_state(state);
    return out->orig_empty < 0 ? -1 : 0;
}

void blaskernel_env(const char *coretype, const char *marker, BlasEnv *out)
{
    BlasEnv m;

    memset(out, 0, sizeof *out);
    out->setter = !coretype ? BLAS_SET_NONE : !coretype[0] ? BLAS_SET_EMPTY : BLAS_SET_USER;
    snprintf(out->value, sizeof out->value, "%s", coretype ? coretype : "");
    memset(&m, 0, sizeof m);
    if (!marker || parse_marker(marker, &m) != 0)
        return;
    /* The marker counts only while the variable is what cnntop left:
     * its kernel (auto), or the user's unset/empty state (failed). */
    int agrees = m.setter == BLAS_SET_CNNTOP
                     ? coretype && !strcmp(coretype, m.kernel)
                     : m.orig_empty ? coretype && !coretype[0] : !coretype;
    if (agrees) {
        snprintf(m.value, sizeof m.value, "%s", out->value);
        *out = m;
    }
}

void blaskernel_marker_auto(char *buf, size_t len, const char *kernel, const char *own,
                            int orig_empty)
{
    snprintf(buf, len, "auto %s %s %s", kernel, own && own[0] ? own : "unknown",
             orig_empty ? "empty" : "unset");
}

void blaskernel_marker_failed(char *buf, size_t len, const char *kernel, int orig_empty,
                              const char *why)
{
    snprintf(buf, len, "failed %s %s %s", kernel, orig_empty ? "empty" : "unset", why);
}

/* ---- the choice ---- */

void blaskernel_choose(unsigned features, const char *core, const BlasEnv *env, int keep_own,
                       BlasChoice *out)
{
    const char *k = blaskernel_for_cpu(features);

    memset(out, 0, sizeof *out);
    out->cpu = blaskernel_cpu_class(features);
    out->core = blaskernel_core_class(core);
    out->narrow = out->core != ISA_UNKNOWN && out->core < out->cpu;
    snprintf(out->kernel, sizeof out->kernel, "%s", k ? k : "");
    out->switch_to = out->narrow && !keep_own && k &&
                     (env->setter == BLAS_SET_NONE || env->setter == BLAS_SET_EMPTY);
}

/* Who chose the kernel, when it is worth a line: in full, or (brief) in
 * one status row of an 80-column screen, beside the dashboard's tabs. */
static void describe_note(const char *core, const BlasEnv *env, const BlasChoice *ch,
                          int brief, char *note, size_t len)
{
    const char *cpu = blaskernel_isa_name(ch->cpu);
    const char *own = blaskernel_isa_name(blaskernel_core_class(env->own));

    if (env->setter == BLAS_SET_CNNTOP && brief)
        snprintf(note, len, "OpenBLAS chose %s (%s); cnntop runs %s", env->own, own, core);
    else if (env->setter == BLAS_SET_CNNTOP)
        snprintf(note, len, "OpenBLAS chose %s (%s) on this %s CPU; cnntop runs its %s "
                 "kernels, checked against a plain SGEMM (--blas-kernel openblas keeps "
                 "OpenBLAS's choice)", env->own, own, cpu, core);
    else if (env->setter == BLAS_SET_FALLBACK && brief)
        snprintf(note, len, "%s failed cnntop's check; %s runs", env->kernel, core);
    else if (env->setter == BLAS_SET_FALLBACK)
        snprintf(note, len, "cnntop's choice %s failed its check (%s): OpenBLAS's own %s "
                 "kernels run", env->kernel, env->why, core);
    else if (env->setter == BLAS_SET_USER && strcasecmp(env->value, core) && brief)
        snprintf(note, len, "OPENBLAS_CORETYPE names no kernel: %s runs", core);
    else if (env->setter == BLAS_SET_USER && strcasecmp(env->value, core))
        snprintf(note, len, "OPENBLAS_CORETYPE=%s names no kernel this OpenBLAS knows: "
                 "it runs %s", env->value, core);
    else if (env->setter == BLAS_SET_USER && brief) /* the user's value: any length */
        snprintf(note, len, "OPENBLAS_CORETYPE selects the %s kernels", core);
    else if (env->setter == BLAS_SET_USER)
        snprintf(note, len, "OPENBLAS_CORETYPE=%s selects the %s kernels", env->value, core);
    else if (env->setter == BLAS_SET_EMPTY && brief)
        snprintf(note, len, "OPENBLAS_CORETYPE is empty: read as unset");
    else if (env->setter == BLAS_SET_EMPTY)
        snprintf(note, len, "OPENBLAS_CORETYPE is set but empty: it names no kernel, so "
                 "cnntop treats it as unset (OpenBLAS runs %s)", core);
}

void blaskernel_describe(unsigned features, const char *core, const BlasEnv *env,
                         BlasTexts *out)
{
    BlasChoice ch;

    blaskernel_choose(features, core, env, 0, &ch);
    memset(out, 0, sizeof *out);
    describe_note(core, env, &ch, 0, out->note, sizeof out->note);
    describe_note(core, env, &ch, 1, out->brief, sizeof out->brief);
    if (!ch.narrow)
        return;
    const char *cause = env->setter == BLAS_SET_USER ? "OPENBLAS_CORETYPE forces it"
                        : env->setter == BLAS_SET_FALLBACK ? "cnntop's choice failed its check"
                        : env->setter == BLAS_SET_CNNTOP ? "OpenBLAS did not take cnntop's choice"
                                                          : "OpenBLAS chose it";
    char fix[160];
    if (env->setter == BLAS_SET_USER)
        snprintf(fix, sizeof fix, "unset OPENBLAS_CORETYPE (then %s kernels run: OpenBLAS's "
                 "own where as wide, else cnntop's %s)", blaskernel_isa_name(ch.cpu), ch.kernel);
    else if (env->setter == BLAS_SET_FALLBACK)
        snprintf(fix, sizeof fix, "a newer OpenBLAS");
    else
        snprintf(fix, sizeof fix, "drop --blas-kernel openblas (or set OPENBLAS_CORETYPE=%s)",
                 ch.kernel);
    snprintf(out->warn, sizeof out->warn, "OpenBLAS runs %s kernels (%s, %d-bit) on a CPU with %s "
             "(%d-bit) (%s); fix: %s", core, blaskernel_isa_name(ch.core), isa_bits(ch.core),
             blaskernel_isa_name(ch.cpu), isa_bits(ch.cpu), cause, fix);
}

/* ---- the check ---- */

typedef struct VerifyShape {
    int M, N, K, ta, tb;
    float beta;
} VerifyShape;

/* Odd sizes (edge tiles), every transpose, beta 0 and 1. */
static const VerifyShape verify_shapes[] = {
    {37, 53, 29, 0, 0, 0.0f},  {64, 64, 64, 1, 0, 0.0f},  {33, 130, 70, 0, 1, 1.0f},
    {128, 96, 200, 1, 1, 0.0f}, {1, 300, 17, 0, 0, 1.0f}, {200, 7, 129, 0, 1, 0.0f},
};

/* A value in [-1, 1) from an index, deterministic. */
static float verify_value(size_t i, unsigned salt)
{
    unsigned x = (unsigned)i * 2654435761u ^ salt * 40503u;

    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (float)(x & 0xffff) / 32768.0f - 1.0f;
}

/* The worst |C - ref| / bound of one shape (> 1 fails). */
static double verify_one(const VerifyShape *s, float *A, float *B, float *C)
{
    int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
    double worst = 0.0;

    for (size_t i = 0; i < (size_t)s->M * s->K; i++)
        A[i] = verify_value(i, 1);
    for (size_t i = 0; i < (size_t)s->K * s->N; i++)
        B[i] = verify_value(i, 2);
    for (size_t i = 0; i < (size_t)s->M * s->N; i++)
        C[i] = verify_value(i, 3);
    gemm(s->ta, s->tb, s->M, s->N, s->K, 1.0f, A, lda, B, ldb, s->beta, C, s->N);
    for (int m = 0; m < s->M; m++)
        for (int n = 0; n < s->N; n++) {
            double ref = s->beta * (double)verify_value((size_t)m * s->N + n, 3), mag = fabs(ref);
            for (int k = 0; k < s->K; k++) {
                double a = s->ta ? A[(size_t)k * lda + m] : A[(size_t)m * lda + k];
                double b = s->tb ? B[(size_t)n * ldb + k] : B[(size_t)k * ldb + n];
                ref += a * b;
                mag += fabs(a * b);
            }
            /* Float rounding grows with K: a bound of K ulps of the sum of magnitudes. */
            double bound = (s->K + 2) * (double)FLT_EPSILON * mag + 1e-30;
            double e = fabs(C[(size_t)m * s->N + n] - ref) / bound;
            if (isnan(e))
                e = INFINITY;
            worst = e > worst ? e : worst;
        }
    return worst;
}

int blaskernel_verify(char *why, size_t len)
{
    size_t most = 0;
    int rc = 0;
    /* One OpenBLAS thread, as the engine calls it: the kernel under test,
     * not OpenBLAS's threading, and nothing a race detector cannot see. */
    int had = gemm_init();

    for (size_t i = 0; i < NELEM(verify_shapes); i++) {
        const VerifyShape *s = &verify_shapes[i];
        size_t a = (size_t)s->M * s->K, b = (size_t)s->K * s->N, c = (size_t)s->M * s->N;
        most = a > most ? a : most;
        most = b > most ? b : most;
        most = c > most ? c : most;
    }
    float *A = malloc(most * sizeof *A), *B = malloc(most * sizeof *B);
    float *C = malloc(most * sizeof *C);
    if (!A || !B || !C) {
        snprintf(why, len, "out of memory for the check");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < NELEM(verify_shapes); i++) {
        const VerifyShape *s = &verify_shapes[i];
        double e = verify_one(s, A, B, C);
        if (e > 1.0) {
            snprintf(why, len, "SGEMM %dx%dx%d%s%s off a plain loop by %.3g x the float "
                     "tolerance", s->M, s->N, s->K, s->ta ? " A^T" : "", s->tb ? " B^T" : "", e);
            rc = -1;
        }
    }
    free(A);
    free(B);
    free(C);
    gemm_set_threads(had);
    return rc;
}
