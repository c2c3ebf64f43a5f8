/*
 * blas_shim.c: a test double for OpenBLAS's CPU detection, loaded with
 * LD_PRELOAD into one cnntop command by test_cli.sh.
 *
 * On this project's machines OpenBLAS usually picks the right kernel, so
 * the path where it falls back narrower (and cnntop runs itself again with
 * the matching kernel) would go untested.  This shim makes
 * openblas_get_corename() answer $CNNTOP_SHIM_CORE (e.g. "Prescott") in the
 * first process only (before cnntop's marker CNNTOP_BLAS_AUTO is set), or
 * in every process when CNNTOP_SHIM_ALWAYS is set (then cnntop's check that
 * OpenBLAS took its choice fails, and the fallback runs).  Everything
 * else, the kernels included, is the real OpenBLAS; OPENBLAS_CORETYPE is
 * not touched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

char *openblas_get_corename(void);

char *openblas_get_corename(void)
{
    char *(*real)(void) = (char *(*)(void))dlsym(RTLD_NEXT, "openblas_get_corename");
    char *fake = getenv("CNNTOP_SHIM_CORE");

    if (fake && (getenv("CNNTOP_SHIM_ALWAYS") || !getenv("CNNTOP_BLAS_AUTO")))
        return fake;
    return real ? real() : fake;
}
