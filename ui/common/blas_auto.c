/*
 * blas_auto.c: the once-only re-execution that gives OpenBLAS the kernel
 * matching the CPU (see blas_auto.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/blas_auto.h"
#include "cnntop/engine.h"
#include "common/config.h"

#define BLAS_ENV CN_BLAS_ENV
#define BLAS_MARKER CN_BLAS_MARKER

/* Runs this program again with the environment as set; returns only on
 * failure, with errno's text in why. */
static void reexec(char **argv, char *why, size_t len)
{
    fflush(NULL);
    execv("/proc/self/exe", argv);
    snprintf(why, len, "%s", strerror(errno));
}

/* OPENBLAS_CORETYPE as the user had it: unset, or set but empty. */
static void restore_user_env(int orig_empty)
{
    if (orig_empty)
        setenv(BLAS_ENV, "", 1);
    else
        unsetenv(BLAS_ENV);
}

static void switch_kernel(char **argv, const BlasPlan *p)
{
    const char *was = getenv(BLAS_ENV);
    int orig_empty = was != NULL; /* the plan switches only from unset or empty */
    char why[256];

    setenv(BLAS_ENV, p->kernel, 1);
    setenv(BLAS_MARKER, p->marker, 1);
    reexec(argv, why, sizeof why);
    restore_user_env(orig_empty);
    unsetenv(BLAS_MARKER);
    fprintf(stderr, "cnntop: warning: could not run again with %s=%s (%s); OpenBLAS's own "
            "kernels stay\n", BLAS_ENV, p->kernel, why);
}

static void verify_kernel(char **argv, const BlasPlan *p)
{
    char why[160], marker[320], err[256];

    if (machine_blas_verify(p, why, sizeof why, marker, sizeof marker) == 0)
        return;
    fprintf(stderr, "cnntop: warning: OpenBLAS's %s kernels failed cnntop's check (%s); "
            "running with OpenBLAS's own choice\n", p->kernel, why);
    restore_user_env(p->orig_empty);
    setenv(BLAS_MARKER, marker, 1);
    reexec(argv, err, sizeof err);
    /* Still on the failed kernel: say so, and stop rather than train on it. */
    fprintf(stderr, "cnntop: could not run again without %s=%s (%s)\n", BLAS_ENV, p->kernel,
            err);
    exit(1);
}

void blas_auto_apply(char **argv, int keep_own)
{
    BlasPlan p;

    machine_blas_plan(keep_own, &p);
    if (p.action == CN_BLAS_SWITCH)
        switch_kernel(argv, &p);
    else if (p.action == CN_BLAS_VERIFY)
        verify_kernel(argv, &p);
}

int blas_auto_config_keep(void)
{
    TuiSettings s;
    char path[4096], err[512];

    memset(&s, 0, sizeof s);
    /* 2: some other line was bad, the good ones (this among them) apply. */
    if (settings_path(path, sizeof path) != 0 || settings_load(&s, path, 0, err, sizeof err) < 0)
        return 0;
    return s.blas_keep;
}
