/*
 * summary_dist.c: the summary's part for a data-parallel run (summary.h):
 * the job, each rank and the slowest, and the all-reduce's row of the
 * layer table, from the record alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/figures.h"
#include "cmd/summary.h"

/* A rank's own seconds a step, waiting for the others left out: the
 * slowest rank is the one the others wait for. */
static double own_time(const DistRank *k, long steps)
{
    return (k->compute + k->data_wait) / (double)steps;
}

/* Ranks x (compute threads + loader workers) on rank 0's machine against
 * its cores, and the knobs when they are more. */
static void print_oversub(FILE *f, const RunRecord *r)
{
    const DistFigures *d = &r->train.dist;
    int threads = r->threads_used, workers = r->config.workers;
    long need = (long)d->local_ranks * (threads + workers);

    if (d->local_ranks < 1 || d->node_cores < 1 || threads < 1)
        return;
    fprintf(f, "  Threads per machine:  %d rank%s x (%d compute + %d loader) = %ld on %d core%s",
            d->local_ranks, d->local_ranks == 1 ? "" : "s", threads, workers, need,
            d->node_cores, d->node_cores == 1 ? "" : "s");
    if (need > d->node_cores) {
        int per = d->node_cores / d->local_ranks;
        const char *sep = "";
        fprintf(f, ": oversubscribed across ranks; ");
        if (threads > (per > 0 ? per : 1)) {
            fprintf(f, "give each rank --threads %d", per > 0 ? per : 1);
            sep = ", ";
        }
        if (workers > 0) {
            fprintf(f, "%sfewer --workers (0: load on the trainer)", sep);
            sep = ", ";
        }
        if (d->local_ranks > d->node_cores)
            fprintf(f, "%sat most %d ranks on it", sep, d->node_cores);
    }
    fputc('\n', f);
}

void summary_print_dist(FILE *f, const RunRecord *r)
{
    const DistFigures *d = &r->train.dist;
    long steps = r->train.steps > 0 ? r->train.steps : 1;
    size_t slow = 0, fast = 0;

    if (!r->have_dist)
        return;
    fprintf(f, "  Ranks:                %d (MPI), BatchNorm %s; %.1f images/s for the job\n",
            d->ranks, d->bn_local ? "local to each rank" : "synchronised", r->train.images_per_s);
    for (size_t i = 0; i < r->n_dist_ranks; i++) {
        const DistRank *k = &r->dist_ranks[i];
        fprintf(f, "  %-22srank %zu: %.1f images/s, step %.2f ms: compute %.2f, data wait %.2f, "
                "comm %.2f ms/step", i == 0 ? "Per rank:" : "", i, k->images_per_s,
                1e3 * k->step_time, 1e3 * k->compute / (double)steps,
                1e3 * k->data_wait / (double)steps, 1e3 * k->comm / (double)steps);
        if (isfinite(k->run_queue_wait))
            fprintf(f, "; run-queue wait %.1f%%", 100 * k->run_queue_wait);
        fputc('\n', f);
        if (own_time(k, steps) > own_time(&r->dist_ranks[slow], steps))
            slow = i;
        if (own_time(k, steps) < own_time(&r->dist_ranks[fast], steps))
            fast = i;
    }
    if (r->n_dist_ranks > 1 && own_time(&r->dist_ranks[fast], steps) > 0)
        fprintf(f, "  Slowest rank:         rank %zu, %.2f ms/step of its own work, %.2fx rank "
                "%zu's: the others wait for it\n", slow,
                1e3 * own_time(&r->dist_ranks[slow], steps),
                own_time(&r->dist_ranks[slow], steps) / own_time(&r->dist_ranks[fast], steps),
                fast);
    print_oversub(f, r);
}

void summary_print_allreduce_row(FILE *f, const RunRecord *r, double total)
{
    const DistFigures *d = &r->train.dist;
    long steps = r->train.steps > 0 ? r->train.steps : 1;
    double wait = d->ar_wait, bw = record_dist_algbw(d);

    if (!r->have_dist)
        return;
    fprintf(f, "  %-22s %10.3f %6.1f%%   (waiting; %.2f MB/step", "all-reduce",
            1e3 * wait / (double)steps, total > 0 ? 100 * wait / total : 0.0,
            d->ar_bytes * 1e-6);
    if (!isnan(bw))
        fprintf(f, ", algbw %.2f GB/s, busbw %.2f GB/s, %.0f%% hidden under backward", bw,
                record_dist_busbw(d),
                100 * (d->ar_span > 0 && d->ar_wait < d->ar_span ? 1 - d->ar_wait / d->ar_span
                                                                   : 0.0));
    if (*d->ar_algorithm)
        fprintf(f, ", %s", d->ar_algorithm);
    fprintf(f, ")\n");
    if (!strcmp(d->ar_algorithm, "binomial") && d->ranks > 1)
        fprintf(f, "  %-22s %s\n", "",
                "(binomial: a reduce, then a broadcast, about 2x a ring's time on a link; "
                "the ring: --mpirun-args '--mca coll_libnbc_iallreduce_algorithm 1')");
    /* The BatchNorm sums' waits are inside the BatchNorm rows' laps: said,
     * not counted twice. */
    if (d->sum_wait > 0)
        fprintf(f, "  %-22s %10.3f          (waiting for the ranks' small sums: BatchNorm's, "
                "inside its rows, and the loss)\n", "rank sums", 1e3 * d->sum_wait / (double)steps);
}
