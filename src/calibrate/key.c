/*
 * key.c: the machine and setup a calibration belongs to (see key.h).
 */
#include <stdio.h>
#include <string.h>

#include "calibrate/key.h"
#include "calibrate/measure.h"
#include "cnntop/machine.h"

/* Keys and quoted text stay printable ASCII, so the file stays one line
 * per key and the comparison with a fresh reading is exact. */
void key_sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            *s = '?';
}

void key_fill(Calibration *c, int threads, const char *core)
{
    MachineInfo mi;

    machine_info(&mi);
    snprintf(c->cpu_model, sizeof c->cpu_model, "%s", mi.cpu_model);
    snprintf(c->blas_core, sizeof c->blas_core, "%s", core ? core : mi.blas_core);
    key_sanitize(c->cpu_model);
    key_sanitize(c->blas_core);
    c->cores = mi.cores;
    c->threads = threads > 0 ? threads : mi.cores;
    c->llc_mib = (double)mi.l3_bytes / MIB;
}

int key_matches(const Calibration *c, int threads, const char *core, char *why, size_t whylen)
{
    Calibration now;

    memset(&now, 0, sizeof now);
    key_fill(&now, threads, core);
    const char *what = strcmp(c->cpu_model, now.cpu_model) ? "CPU model"
                       : c->cores != now.cores             ? "cores"
                       : strcmp(c->blas_core, now.blas_core) ? "OpenBLAS core"
                       : c->threads != now.threads           ? "threads"
                                                             : NULL;
    if (why && whylen)
        why[0] = '\0';
    if (!what)
        return 1;
    if (why && whylen)
        snprintf(why, whylen, "its %s differs: %s, cores %d, %s, threads %d here", what,
                 now.cpu_model, now.cores, now.blas_core, now.threads);
    return 0;
}

int calibrate_key_matches(const Calibration *c, int threads, char *why, size_t whylen)
{
    return key_matches(c, threads, NULL, why, whylen);
}
