/*
 * test_verdict.c: the verdict every front end shows (cnntop/verdict.h):
 * loader- or compute-bound at CN_LOADER_BOUND; oversubscribed when loader
 * workers plus compute threads exceed the cores (the issue's 2 workers +
 * 2 threads on 2 cores) or the run-queue wait is above CTR_OVERSUB_WAIT,
 * with the figure and advice that fits the threads into the cores;
 * communication-bound when a job's wait for its ranks is the step's
 * largest share.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "cnntop/counters.h"
#include "cnntop/engine.h"
#include "cnntop/verdict.h"

static Verdict judge(double share, int workers, int threads, int cores, double wait)
{
    VerdictInput in = {.data_wait_share = share, .workers = workers, .threads = threads,
                       .cores = cores, .run_queue_wait = wait};
    Verdict v;

    verdict_judge(&in, &v);
    return v;
}

static void test_bound(void)
{
    Verdict v = judge(0.05, 0, 2, 2, NAN);
    CHECK(!v.loader_bound && !v.oversubscribed);
    CHECK(strstr(v.bound, "compute-bound (data wait 5.0% of the step, at most 10%)") == v.bound);
    CHECK(!strcmp(v.bound_brief, "compute-bound: data wait 5.0%"));
    CHECK(v.oversub[0] == '\0' && v.brief[0] == '\0');
    v = judge(CN_LOADER_BOUND + 0.01, 0, 2, 2, 0.01);
    CHECK(v.loader_bound && !v.oversubscribed);
    CHECK(strstr(v.bound, "loader-bound") == v.bound);
    CHECK(!strcmp(v.bound_brief, "loader-bound: data wait 11.0%"));
}

static void test_too_many_threads(void)
{
    /* The issue's run: 2 workers slowed a 2-core run that loads fast enough inline. */
    Verdict v = judge(0.01, 2, 2, 2, 0.31);
    CHECK(v.oversubscribed);
    CHECK(strstr(v.oversub, "2 loader workers + 2 compute threads on 2 cores") != NULL);
    CHECK(strstr(v.oversub, "run-queue wait 31% of thread time") != NULL);
    CHECK(strstr(v.oversub, "try --workers 0") != NULL);
    CHECK(strstr(v.brief, "2+2 threads on 2 cores: try --workers 0") == v.brief);
    /* Unknown wait: the count alone says it. */
    v = judge(0.01, 1, 2, 2, NAN);
    CHECK(v.oversubscribed && !strstr(v.oversub, "wait"));
    CHECK(strstr(v.oversub, "1 loader worker + 2 compute threads on 2 cores; try --workers 0") != NULL);
    /* Loader-bound: keep the workers, give up compute threads. */
    v = judge(0.5, 2, 4, 4, NAN);
    CHECK(v.oversubscribed && strstr(v.oversub, "try --threads 2 ") != NULL);
    v = judge(0.5, 2, 1, 2, NAN);
    CHECK(strstr(v.oversub, "try --threads 1 --workers 1") != NULL);
    /* Inline loading, more threads than cores. */
    v = judge(0.0, 0, 8, 2, NAN);
    CHECK(v.oversubscribed && strstr(v.oversub, "try --threads 2") != NULL);
}

static void test_waiting(void)
{
    /* Fits the cores, but the threads wait: someone else is on them. */
    Verdict v = judge(0.02, 0, 2, 2, CTR_OVERSUB_WAIT + 0.05);
    CHECK(v.oversubscribed);
    CHECK(strstr(v.oversub, "run-queue wait 25% of thread time") != NULL);
    CHECK(strstr(v.oversub, "other programs") != NULL);
    v = judge(0.02, 0, 2, 2, CTR_OVERSUB_WAIT - 0.05);
    CHECK(!v.oversubscribed);
    v = judge(0.02, 0, 2, 0, NAN); /* cores unknown: no claim */
    CHECK(!v.oversubscribed);
}

/* The advice names the front end's knobs: a PyTorch script's, a sweep
 * template's placeholders, or none (a plain command: counts in words). */
static void test_knobs(void)
{
    VerdictInput in = {.data_wait_share = 0.01, .workers = 2, .threads = 2, .cores = 2,
                       .run_queue_wait = 0.31, .knobs = &verdict_knobs_pytorch};
    const VerdictKnobs tmpl = {"{workers} #", NULL, ", ", NULL};
    Verdict v;

    verdict_judge(&in, &v);
    CHECK(strstr(v.oversub, "try DataLoader(num_workers=0)") != NULL);
    CHECK(!strstr(v.oversub, "--"));
    in.data_wait_share = 0.5;
    in.threads = 1;
    verdict_judge(&in, &v);
    CHECK(strstr(v.oversub, "try torch.set_num_threads(1) (or OMP_NUM_THREADS=1) and "
                            "DataLoader(num_workers=1)") != NULL);
    in.knobs = &verdict_knobs_none;
    verdict_judge(&in, &v);
    CHECK(strstr(v.oversub, "try 1 compute thread and 1 loader worker") != NULL);
    CHECK(!strstr(v.oversub, "--") && !strstr(v.brief, "--"));
    in = (VerdictInput){.data_wait_share = 0.0, .workers = 0, .threads = 8, .cores = 2,
                        .run_queue_wait = NAN, .knobs = &verdict_knobs_none};
    verdict_judge(&in, &v);
    CHECK(strstr(v.oversub, "8 compute threads on 2 cores; try 2 compute threads") != NULL);
    in = (VerdictInput){.data_wait_share = 0.0, .workers = 3, .threads = 1, .cores = 2,
                        .run_queue_wait = NAN, .knobs = &tmpl};
    verdict_judge(&in, &v);
    CHECK(strstr(v.oversub, "try {workers} 1") != NULL);
    CHECK(strstr(v.brief, "3+1 threads on 2 cores: try {workers} 1") == v.brief);
}

/* More threads than cores weighed by what was measured: rarely waiting
 * is harmless, said with the wait; the busy threads quoted are the ones
 * explained, beside torch's own count. */
static void test_weighed(void)
{
    VerdictInput in = {.data_wait_share = 0.01, .workers = 4, .threads = 3, .cores = 2,
                       .run_queue_wait = 0.004, .knobs = &verdict_knobs_pytorch, .intra_op = 1};
    Verdict v;

    verdict_judge(&in, &v);
    CHECK(!v.oversubscribed && v.harmless);
    CHECK(strstr(v.oversub, "more threads than cores, harmless: 4 loader workers + 3 busy "
                            "compute threads (torch's intra-op: 1) on 2 cores, "
                            "run-queue wait 0.4% of thread time (at most 20%)") == v.oversub);
    in.run_queue_wait = 0.35;
    verdict_judge(&in, &v);
    CHECK(v.oversubscribed && !v.harmless);
    CHECK(strstr(v.oversub, "(run-queue wait 35% of thread time, time lost waiting for a CPU)"));
    in.run_queue_wait = NAN; /* not measured: the count alone */
    verdict_judge(&in, &v);
    CHECK(v.oversubscribed && !v.harmless);
}

/* A data-parallel job: ranks x (compute threads + loader workers), the
 * knobs per rank and the number of processes. */
static void test_ranks(void)
{
    VerdictInput in = {.data_wait_share = 0.01, .workers = 2, .threads = 2, .cores = 2,
                       .run_queue_wait = 0.4, .knobs = &verdict_knobs_pytorch, .intra_op = 1,
                       .ranks = 2};
    Verdict v;

    verdict_judge(&in, &v);
    CHECK(v.oversubscribed);
    CHECK(!strcmp(v.count, "2 ranks x (1 compute thread + 1 loader worker) = 4 on 2 cores"));
    CHECK(strstr(v.oversub, "oversubscribed: 2 ranks x (1 compute thread + 1 loader worker) = 4 "
                            "on 2 cores (run-queue wait 40% of thread time") == v.oversub);
    CHECK(strstr(v.oversub, "try torch.set_num_threads(1) (or OMP_NUM_THREADS=1) and "
                            "DataLoader(num_workers=0) per rank, or fewer than 2 ranks"));
    in.workers = 0;
    in.run_queue_wait = 0.02;
    verdict_judge(&in, &v);
    CHECK(!v.oversubscribed && !v.harmless);
    CHECK(!strcmp(v.count, "2 ranks x (1 compute thread + 0 loader workers) = 2 on 2 cores"));
}

/* A job of several ranks whose wait for the others is the step's largest
 * share: communication-bound, with the knobs; not when another share is
 * larger, with one process, or with the other shares unknown. */
static void test_comm_bound(void)
{
    VerdictInput in = {.data_wait_share = 0.05, .threads = 1, .cores = 2,
                       .run_queue_wait = NAN, .ranks = 2, .batch = 32, .comm_share = 0.5,
                       .other_share = 0.3};
    Verdict v;

    verdict_judge(&in, &v);
    CHECK(v.comm_bound && !v.loader_bound);
    CHECK(strstr(v.bound, "communication-bound (waiting for the other ranks 50.0% of the "
                          "step, its largest share)") == v.bound);
    CHECK(!strcmp(v.bound_brief, "comm-bound: comm 50.0%"));
    CHECK(!strcmp(v.comm, "try a larger batch per rank (--batch 64), fewer ranks (--ranks 1) "
                          "or a faster link"));
    in.batch = 0;
    verdict_judge(&in, &v);
    CHECK(v.comm_bound && strstr(v.comm, "larger batch per rank, fewer ranks") != NULL);
    in.comm_share = 0.25;
    verdict_judge(&in, &v);
    CHECK(!v.comm_bound && v.comm[0] == '\0' && strstr(v.bound, "compute-bound") == v.bound);
    in.comm_share = 0.5;
    in.ranks = 1;
    verdict_judge(&in, &v);
    CHECK(!v.comm_bound);
    in.ranks = 3;
    in.other_share = NAN;
    verdict_judge(&in, &v);
    CHECK(!v.comm_bound);
}

int main(void)
{
    test_weighed();
    test_ranks();
    test_comm_bound();
    test_knobs();
    test_bound();
    test_too_many_threads();
    test_waiting();
    return check_report();
}
