/*
 * memory.c: what a batch size needs (the activation arena and the
 * parameters, plus OpenBLAS's buffers per thread), checked against the
 * machine and the process's address-space limit before anything is
 * allocated: at a run's start (engine.c) and at a live batch change
 * (live.c).
 */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cnntop/engine.h"
#include "engine/state.h"
#include "nn/model.h"
#include "nn/params.h"
#include "prof/sysinfo.h"
#include "util/err.h"

size_t engine_memory_estimate(int batch, int threads)
{
    size_t params = 4 * params_count() * sizeof(float);
    return acts_bytes(batch, threads) + params;
}

/* Address space OpenBLAS maps per thread that calls it, at its first
 * call (measured with 0.3.21: 128 MiB).  It cannot report failing to get
 * it (it retries forever), so the engine counts it before it starts. */
#define BLAS_BUFFER_BYTES ((size_t)128 << 20)

/* Bytes of address space in use now, from /proc/self/statm. */
static size_t vm_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;

    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Said before anything is allocated. */
int engine_check_memory(int batch, int threads, char *err, size_t errlen)
{
    size_t need = engine_memory_estimate(batch, threads), ram = sysinfo_ram_bytes();
    struct rlimit rl;

    if (ram && need > ram / 10 * 9)
        return cn_fail(err, errlen, -CN_ENOMEM,
                       "batch %d needs %.1f GiB of memory, the machine has %.1f GiB",
                       batch, need / 1073741824.0, ram / 1073741824.0);
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size_t used = vm_bytes(), blas = (size_t)threads * BLAS_BUFFER_BYTES;
        if (used + need + blas > rl.rlim_cur)
            return cn_fail(err, errlen, -CN_ENOMEM,
                           "batch %d needs %.0f MiB of address space with %d threads "
                           "(%.0f MiB arena, %.0f MiB OpenBLAS buffers) and the limit "
                           "(ulimit -v) leaves %.0f MiB: use a smaller batch or fewer threads",
                           batch, (need + blas) / 1048576.0, threads, need / 1048576.0,
                           blas / 1048576.0,
                           rl.rlim_cur > used ? (rl.rlim_cur - used) / 1048576.0 : 0.0);
    }
    return 0;
}
