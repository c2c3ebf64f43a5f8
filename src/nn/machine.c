/*
 * machine.c: the public machine facts (include/cnntop/machine.h): the CPU
 * and its caches (prof/sysinfo), OpenBLAS's build and running kernel
 * (nn/gemm), whether a wider kernel should run (nn/blaskernel), and where
 * a GEMM-path choice runs (nn/gemm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cnntop/machine.h"
#include "nn/blaskernel.h"
#include "nn/gemm.h"
#include "prof/sysinfo.h"

static void blas_env_now(BlasEnv *env)
{
    blaskernel_env(getenv(BLASKERNEL_ENV), getenv(BLASKERNEL_MARKER), env);
}

void machine_info(MachineInfo *out)
{
    unsigned features = sysinfo_cpu_features();
    BlasEnv env;
    BlasTexts texts;

    memset(out, 0, sizeof *out);
    sysinfo_cpu_model(out->cpu_model, sizeof out->cpu_model);
    out->cores = sysinfo_cores();
    gemm_describe(out->blas_core, sizeof out->blas_core, out->blas_config,
                  sizeof out->blas_config);
    gemm_runtime(out->blas_version, sizeof out->blas_version, out->blas_threading,
                 sizeof out->blas_threading);
    sysinfo_cache_sizes(&out->l1d_bytes, &out->l2_bytes, &out->l3_bytes);
    sysinfo_kernel_release(out->kernel, sizeof out->kernel);
    snprintf(out->cpu_isa, sizeof out->cpu_isa, "%s",
             blaskernel_isa_name(blaskernel_cpu_class(features)));
    snprintf(out->blas_isa, sizeof out->blas_isa, "%s",
             blaskernel_isa_name(blaskernel_core_class(out->blas_core)));
    blas_env_now(&env);
    blaskernel_describe(features, out->blas_core, &env, &texts);
    snprintf(out->blas_note, sizeof out->blas_note, "%s", texts.note);
    snprintf(out->blas_brief, sizeof out->blas_brief, "%s", texts.brief);
    snprintf(out->blas_warning, sizeof out->blas_warning, "%s", texts.warn);
}

void machine_blas_plan(int keep_own, BlasPlan *out)
{
    char core[64], config[128];
    BlasEnv env;
    BlasChoice ch;

    memset(out, 0, sizeof *out);
    gemm_describe(core, sizeof core, config, sizeof config);
    blas_env_now(&env);
    if (env.setter == BLAS_SET_CNNTOP) {
        out->action = CN_BLAS_VERIFY;
        snprintf(out->kernel, sizeof out->kernel, "%s", env.kernel);
        out->orig_empty = env.orig_empty;
        return;
    }
    blaskernel_choose(sysinfo_cpu_features(), core, &env, keep_own, &ch);
    if (!ch.switch_to)
        return;
    out->action = CN_BLAS_SWITCH;
    snprintf(out->kernel, sizeof out->kernel, "%s", ch.kernel);
    blaskernel_marker_auto(out->marker, sizeof out->marker, ch.kernel, core,
                           env.setter == BLAS_SET_EMPTY);
}

int machine_blas_verify(const BlasPlan *p, char *why, size_t whylen, char *marker,
                        size_t markerlen)
{
    char core[64], config[128], msg[160];

    gemm_describe(core, sizeof core, config, sizeof config);
    if (strcasecmp(core, p->kernel) != 0)
        snprintf(msg, sizeof msg, "OpenBLAS runs %s when asked for %s (a name this build "
                 "does not know)", core, p->kernel);
    else if (blaskernel_verify(msg, sizeof msg) == 0)
        return 0;
    snprintf(why, whylen, "%s", msg);
    blaskernel_marker_failed(marker, markerlen, p->kernel, p->orig_empty, msg);
    return -1;
}

long machine_peak_rss_kib(void)
{
    return sysinfo_peak_rss_kib();
}

const char *machine_gemm_path(int choice)
{
    return gemm_path_name(gemm_path_of(choice));
}
