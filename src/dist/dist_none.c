/*
 * dist_none.c: cnntop/dist.h and dist/dist.h in a build without MPI: one
 * process, and dist_start() says why there can be no more.
 */
#include <string.h>

#include "dist/dist.h"
#include "util/err.h"

int dist_available(void)
{
    return 0;
}

int dist_start(char *err, size_t errlen)
{
    return cn_fail(err, errlen, -CN_EINVAL, "this cnntop was built without MPI");
}

int dist_started(void)
{
    return 0;
}

int dist_rank(void)
{
    return 0;
}

int dist_size(void)
{
    return 1;
}

int dist_local_size(void)
{
    return 1;
}

void dist_finish(void)
{
}

void dist_abort(int code)
{
    (void)code;
}

/* Never reached: dist_start() fails first. */
static int none(char *err, size_t errlen)
{
    return cn_fail(err, errlen, -CN_ESTATE, "this cnntop was built without MPI");
}

int dist_bcast_floats(float *v, size_t n, char *err, size_t errlen)
{
    (void)v, (void)n;
    return none(err, errlen);
}

int dist_sum_doubles(double *v, size_t n, char *err, size_t errlen)
{
    (void)v, (void)n;
    return none(err, errlen);
}

int dist_check_same(uint64_t h, const char *what, char *err, size_t errlen)
{
    (void)h, (void)what;
    return none(err, errlen);
}

int dist_gather_doubles(const double *mine, int n, double *all, char *err, size_t errlen)
{
    (void)mine, (void)n, (void)all;
    return none(err, errlen);
}

int dist_grads_start(float *v, size_t n, char *err, size_t errlen)
{
    (void)v, (void)n;
    return none(err, errlen);
}

int dist_grads_wait(DistWait *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    return none(err, errlen);
}

int dist_probe_allreduce(float *v, size_t n, int tries, double *best, char *err,
                         size_t errlen)
{
    (void)v, (void)n, (void)tries;
    *best = 0.0;
    return none(err, errlen);
}

const char *dist_allreduce_algorithm(void)
{
    return "";
}
