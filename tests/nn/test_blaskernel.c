/*
 * test_blaskernel.c: the OpenBLAS kernel choice as a pure function of the
 * CPU's feature set, OpenBLAS's core name and the environment, one table
 * row per case; the marker grammar; and the SGEMM check on the running
 * kernel.
 */
#include <stdio.h>
#include <string.h>

#include "nn/blaskernel.h"
#include "check.h"
#include "prof/sysinfo.h"

#define SSE3 SYSINFO_SSE3
#define AVX (SSE3 | SYSINFO_AVX)
#define AVX2 (AVX | SYSINFO_FMA | SYSINFO_AVX2)
#define AVX512 (AVX2 | SYSINFO_AVX512F | SYSINFO_AVX512DQ | SYSINFO_AVX512BW | SYSINFO_AVX512VL)
#define AVX512BF16 (AVX512 | SYSINFO_AVX512BF16)

static const struct {
    const char *what;
    unsigned features;
    const char *core;     /* what openblas_get_corename() says */
    const char *coretype; /* OPENBLAS_CORETYPE; NULL unset */
    const char *marker;   /* CNNTOP_BLAS_AUTO; NULL unset */
    int keep_own;         /* --blas-kernel openblas */
    int want_switch;
    const char *want_kernel; /* the kernel matching the CPU */
    int want_narrow;
    const char *note_has, *warn_has; /* "" : must be empty */
} cases[] = {
    {"Xeon with AVX-512, OpenBLAS fell back to Prescott", AVX512BF16, "Prescott", NULL, NULL,
     0, 1, "Cooperlake", 1, "", "Prescott kernels (SSE, 128-bit) on a CPU with AVX-512"},
    {"AVX-512 without BF16 + Prescott", AVX512, "Prescott", NULL, NULL, 0, 1, "SkylakeX", 1, "",
     "fix: drop --blas-kernel openblas (or set OPENBLAS_CORETYPE=SkylakeX)"},
    {"AVX2 + Prescott", AVX2, "Prescott", NULL, NULL, 0, 1, "Haswell", 1, "", "AVX2+FMA"},
    {"AVX + Prescott", AVX, "Prescott", NULL, NULL, 0, 1, "Sandybridge", 1, "", "AVX"},
    {"AVX-512 (Zen 4) + Zen", AVX512BF16, "Zen", NULL, NULL, 0, 1, "Cooperlake", 1, "",
     "Zen kernels (AVX2+FMA, 256-bit)"},
    {"AVX-512 + Haswell", AVX512, "Haswell", NULL, NULL, 0, 1, "SkylakeX", 1, "", "Haswell"},
    {"a right choice is kept", AVX512BF16, "Cooperlake", NULL, NULL, 0, 0, "Cooperlake", 0, "",
     ""},
    {"SkylakeX on a BF16 CPU is as wide: kept", AVX512BF16, "SkylakeX", NULL, NULL, 0, 0,
     "Cooperlake", 0, "", ""},
    {"AVX2 CPU on Haswell: kept", AVX2, "Haswell", NULL, NULL, 0, 0, "Haswell", 0, "", ""},
    {"AVX2 CPU on Zen: kept", AVX2, "Zen", NULL, NULL, 0, 0, "Haswell", 0, "", ""},
    {"SSE3-only CPU on Prescott: kept", SSE3, "Prescott", NULL, NULL, 0, 0, "Prescott", 0, "",
     ""},
    {"a user-set variable is kept, and remarked on when narrower", AVX512, "Prescott",
     "Prescott", NULL, 0, 0, "SkylakeX", 1, "OPENBLAS_CORETYPE=Prescott selects",
     "(OPENBLAS_CORETYPE forces it); fix: unset OPENBLAS_CORETYPE (then AVX-512 kernels run: "
     "OpenBLAS's own where as wide, else cnntop's SkylakeX)"},
    {"a user-set wide kernel is kept", AVX512, "SkylakeX", "SkylakeX", NULL, 0, 0, "SkylakeX",
     0, "OPENBLAS_CORETYPE=SkylakeX selects the SkylakeX kernels", ""},
    {"a name OpenBLAS does not know", AVX512, "Cooperlake", "SapphireRapidz", NULL, 0, 0,
     "SkylakeX", 0, "names no kernel this OpenBLAS knows: it runs Cooperlake", ""},
    {"set but empty counts as unset: switched", AVX512, "Prescott", "", NULL, 0, 1, "SkylakeX",
     1, "set but empty", "OpenBLAS chose it"},
    {"set but empty, OpenBLAS right: kept, remarked", AVX512BF16, "Cooperlake", "", NULL, 0, 0,
     "Cooperlake", 0, "set but empty", ""},
    {"--blas-kernel openblas keeps OpenBLAS's choice", AVX512, "Prescott", NULL, NULL, 1, 0,
     "SkylakeX", 1, "", "(OpenBLAS chose it)"},
    {"cnntop's own choice, after the re-run: kept", AVX512, "SkylakeX", "SkylakeX",
     "auto SkylakeX Prescott unset", 0, 0, "SkylakeX", 0,
     "OpenBLAS chose Prescott (SSE) on this AVX-512 CPU; cnntop runs its SkylakeX", ""},
    {"a stale marker: the variable is the user's", AVX512, "Haswell", "Haswell",
     "auto SkylakeX Prescott unset", 0, 0, "SkylakeX", 1, "OPENBLAS_CORETYPE=Haswell selects",
     "OPENBLAS_CORETYPE forces it"},
    {"cnntop's choice failed its check: OpenBLAS's own kept", AVX512, "Prescott", NULL,
     "failed SkylakeX unset SGEMM 37x53x29 off", 0, 0, "SkylakeX", 1,
     "cnntop's choice SkylakeX failed its check (SGEMM 37x53x29 off)",
     "(cnntop's choice failed its check); fix: a newer OpenBLAS"},
    {"a failure marker for an empty variable, now unset: stale, switched again", AVX512,
     "Prescott", NULL, "failed SkylakeX empty why", 0, 1, "SkylakeX", 1, "", "OpenBLAS chose it"},
    {"a malformed marker is ignored", AVX512, "Prescott", NULL, "auto", 0, 1, "SkylakeX", 1, "",
     "OpenBLAS chose it"},
    {"an unknown core name: never switched", AVX512, "NEOVERSEN1", NULL, NULL, 0, 0, "SkylakeX",
     0, "", ""},
    {"not x86: nothing to choose", 0, "ARMV8", NULL, NULL, 0, 0, "", 0, "", ""},
};

static void check_text(const char *what, const char *text, const char *want)
{
    if (!want[0]) {
        CHECK(text[0] == '\0');
        if (text[0])
            fprintf(stderr, "  %s: unexpected '%s'\n", what, text);
        return;
    }
    CHECK_STR_HAS(text, want);
}

static void test_table(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        BlasEnv env;
        BlasChoice ch;
        BlasTexts tx;
        int before = check_failed;
        blaskernel_env(cases[i].coretype, cases[i].marker, &env);
        blaskernel_choose(cases[i].features, cases[i].core, &env, cases[i].keep_own, &ch);
        CHECK_INT(ch.switch_to, ==, cases[i].want_switch);
        CHECK(!strcmp(ch.kernel, cases[i].want_kernel));
        CHECK_INT(ch.narrow, ==, cases[i].want_narrow);
        blaskernel_describe(cases[i].features, cases[i].core, &env, &tx);
        check_text("note", tx.note, cases[i].note_has);
        check_text("warning", tx.warn, cases[i].warn_has);
        /* The brief is there exactly when the note is, and fits its row. */
        CHECK_INT(!tx.brief[0], ==, !tx.note[0]);
        CHECK_INT((long)strlen(tx.brief), <=, 56);
        if (check_failed != before)
            fprintf(stderr, "  in case %zu: %s (kernel '%s', note '%s', warning '%s')\n", i,
                    cases[i].what, ch.kernel, tx.note, tx.warn);
    }
}

static void test_classes(void)
{
    CHECK_INT(blaskernel_core_class("prescott"), ==, ISA_SSE);
    CHECK_INT(blaskernel_core_class("ZEN"), ==, ISA_AVX2);
    CHECK_INT(blaskernel_core_class("SkylakeX"), ==, ISA_AVX512);
    CHECK_INT(blaskernel_core_class("Sandybridge"), ==, ISA_AVX);
    CHECK_INT(blaskernel_core_class("Unheard"), ==, ISA_UNKNOWN);
    CHECK_INT(blaskernel_core_class(NULL), ==, ISA_UNKNOWN);
    CHECK_INT(blaskernel_cpu_class(AVX512BF16), ==, ISA_AVX512);
    /* AVX-512F alone (no BW/DQ/VL) is not what the SkylakeX kernels need. */
    CHECK_INT(blaskernel_cpu_class(AVX2 | SYSINFO_AVX512F), ==, ISA_AVX2);
    CHECK_INT(blaskernel_cpu_class(AVX | SYSINFO_AVX2), ==, ISA_AVX); /* AVX2 without FMA */
    CHECK_INT(blaskernel_cpu_class(0), ==, ISA_NONE);
    CHECK(!strcmp(blaskernel_isa_name(ISA_AVX512), "AVX-512"));
    CHECK(!strcmp(blaskernel_isa_name(ISA_UNKNOWN), "unknown"));
}

/* The markers cnntop writes read back as what they say. */
static void test_markers(void)
{
    char m[160];
    BlasEnv env;

    blaskernel_marker_auto(m, sizeof m, "SkylakeX", "Prescott", 1);
    CHECK(!strcmp(m, "auto SkylakeX Prescott empty"));
    blaskernel_env("SkylakeX", m, &env);
    CHECK_INT(env.setter, ==, BLAS_SET_CNNTOP);
    CHECK(!strcmp(env.own, "Prescott") && env.orig_empty == 1);
    blaskernel_marker_failed(m, sizeof m, "SkylakeX", 1, "SGEMM off by 3 x");
    blaskernel_env("", m, &env);
    CHECK_INT(env.setter, ==, BLAS_SET_FALLBACK);
    CHECK(!strcmp(env.why, "SGEMM off by 3 x") && env.orig_empty == 1);
    blaskernel_env(NULL, m, &env); /* empty was the user's: unset now is stale */
    CHECK_INT(env.setter, ==, BLAS_SET_NONE);
}

/* The running kernel passes the check (whichever it is here). */
static void test_verify(void)
{
    char why[200] = "";

    CHECK_INT(blaskernel_verify(why, sizeof why), ==, 0);
    if (why[0])
        fprintf(stderr, "verify: %s\n", why);
    printf("cpu class %s\n", blaskernel_isa_name(blaskernel_cpu_class(sysinfo_cpu_features())));
}

int main(void)
{
    test_classes();
    test_table();
    test_markers();
    test_verify();
    return check_report();
}
