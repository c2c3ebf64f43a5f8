/*
 * fields_dist.c: the record's fields of a data-parallel run (fields.h):
 * the job's communication and each rank's figures, the tables fields.c's
 * "dist" and "dist_ranks" entries point to.
 */
#include <math.h>
#include <stddef.h>

#include "cnntop/figures.h"
#include "cnntop/limits.h"
#include "record/fields.h"
#include "record/fields_table.h"

/* A data-parallel run's communication: nccl-tests' algbw (bytes / time)
 * and busbw (algbw x 2(N-1)/N, what each link carries in a ring), the time
 * being ar_probe, the all-reduce alone. */
static double dist_algbw(const void *base)
{
    return record_dist_algbw(&((const RunRecord *)base)->train.dist);
}

static double dist_busbw(const void *base)
{
    return record_dist_busbw(&((const RunRecord *)base)->train.dist);
}

static double dist_overlap(const void *base)
{
    const DistFigures *d = &((const RunRecord *)base)->train.dist;
    double o = d->ar_span > 0 ? 1.0 - d->ar_wait / d->ar_span : NAN;
    return o < 0 ? 0.0 : o;
}

const Field record_dist_fields[] = {
    F("ranks", FT_INT, R(train.dist.ranks), RECORD_REV_DIST, "the job's ranks",
      .hi = 1 << 24),
    F("steps", FT_INT, R(train.dist.steps), RECORD_REV_DIST, "steps of the gradients' all-reduce",
      .hi = RECORD_MAX_STEPS),
    FV("ar_wait", FT_NUM, R(train.dist.ar_wait), RECORD_REV_DIST,
       "seconds blocked on the gradients' all-reduce, summed"),
    FV("ar_span", FT_NUM, R(train.dist.ar_span), RECORD_REV_DIST,
       "seconds from a step's first all-reduce to its last seen done, summed"),
    F("ar_bytes", FT_NUM, R(train.dist.ar_bytes), RECORD_REV_DIST,
      "gradient bytes all-reduced per step"),
    FV("ar_probe", FT_NUM, R(train.dist.ar_probe), RECORD_REV_DIST,
       "seconds of one all-reduce of ar_bytes alone before training: the best of 5, each "
       "the slowest rank's time after a barrier"),
    F("ar_algorithm", FT_STR_NA, R(train.dist.ar_algorithm), RECORD_REV_DIST_PROBE,
      "the all-reduce's algorithm when MPI says it (OpenMPI's libnbc): ring, binomial, "
      "rabenseifner or recursive_doubling; null: not known"),
    FV("sum_wait", FT_NUM, R(train.dist.sum_wait), RECORD_REV_DIST,
       "seconds in the small sums (BatchNorm, loss), summed"),
    F("local_ranks", FT_INT, R(train.dist.local_ranks), RECORD_REV_DIST,
      "ranks on rank 0's machine", .hi = 1 << 24),
    F("node_cores", FT_INT, R(train.dist.node_cores), RECORD_REV_DIST,
      "that machine's cores online", .hi = CN_MAX_CORES),
    FV("algbw_gbps", FT_DERIVED, NOWHERE, RECORD_REV_DIST, "ar_bytes / ar_probe, GB/s",
       .derive = dist_algbw),
    FV("busbw_gbps", FT_DERIVED, NOWHERE, RECORD_REV_DIST, "algbw x 2(ranks-1)/ranks, GB/s",
       .derive = dist_busbw),
    FV("overlap", FT_DERIVED, NOWHERE, RECORD_REV_DIST,
       "share of the all-reduce hidden under the backward pass: 1 - ar_wait / ar_span",
       .derive = dist_overlap),
    END,
};

const Field record_dist_rank_fields[] = {
    FV("images_per_s", FT_NUM, AT(DistRank, images_per_s), RECORD_REV_DIST,
       "the rank's own images / wall"),
    FV("step_time", FT_NUM, AT(DistRank, step_time), RECORD_REV_DIST, "mean seconds a step"),
    FV("data_wait", FT_NUM, AT(DistRank, data_wait), RECORD_REV_DIST,
       "seconds waiting for batches"),
    FV("compute", FT_NUM, AT(DistRank, compute), RECORD_REV_DIST,
       "seconds in forward, backward and Adam"),
    FV("comm", FT_NUM, AT(DistRank, comm), RECORD_REV_DIST, "seconds waiting for other ranks"),
    FV("run_queue_wait", FT_NUM, AT(DistRank, run_queue_wait), RECORD_REV_DIST_WAIT,
       "share of its threads' time waiting for a CPU"),
    END,
};
