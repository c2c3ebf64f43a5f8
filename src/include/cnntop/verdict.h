/*
 * verdict.h: what bounds a run, in one sentence, for every front end.
 *
 * The dashboard's verdict line, `cnntop run`'s summary and `cnntop report`
 * all say it from the same figures with verdict_judge(): loader-bound or
 * compute-bound (data wait against CN_LOADER_BOUND of the step), and
 * whether the run was oversubscribed, weighed by what was measured:
 * threads waiting for a CPU more than CTR_OVERSUB_WAIT of their time is
 * contention, said with that cost and what to try; more loader workers
 * plus compute threads than cores is contention only where the wait was
 * not measured, and where it was and stayed low it is said as harmless.
 * A data-parallel job counts its ranks on this machine x (compute threads
 * + loader workers), and the advice names the per-rank knobs and the
 * number of processes; it is communication-bound when the wait for the
 * other ranks is the step's largest share.
 * Pure: no engine, no I/O.
 */
#ifndef CNNTOP_VERDICT_H
#define CNNTOP_VERDICT_H

#ifdef __cplusplus
extern "C" {
#endif

/* One knob: how to set a count, with each '#' standing for the number
 * ("--workers #", "DataLoader(num_workers=#)", "{workers} #"); NULL: the
 * front end has no knob for it. */
typedef struct VerdictKnobs {
    const char *workers;    /* the loader workers' knob, or NULL */
    const char *threads;    /* the compute threads' knob, or NULL */
    const char *join;       /* between two knobs in one piece of advice: " ", " and " */
    const char *inline_note;/* after the workers' knob at 0: " (load inline on the trainer)" */
} VerdictKnobs;

/* The knobs of the front ends (verdict.c's table). */
extern const VerdictKnobs verdict_knobs_cnntop;  /* --workers #, --threads # */
extern const VerdictKnobs verdict_knobs_pytorch; /* DataLoader(num_workers=#), torch.set_num_threads(#) */
extern const VerdictKnobs verdict_knobs_none;    /* a command with no known knob */

typedef struct VerdictInput {
    double data_wait_share; /* share of the step spent waiting for data, 0..1; NAN:
                               unknown (bound says "n/a: ...", not loader-bound) */
    int workers;            /* loader threads; 0: inline on the trainer */
    int threads;            /* compute threads, e.g. 2 */
    int cores;              /* cores the process may use; <= 0: unknown */
    double run_queue_wait;  /* share of the threads' time runnable but waiting
                               for a CPU, 0..1 (counters_wait_share); NAN: unknown */
    const VerdictKnobs *knobs; /* what the advice names; NULL: cnntop's own options */
    int intra_op;           /* the compute threads each process was given (a PyTorch
                               script's torch.get_num_threads()), what the count
                               quotes when threads (the busy ones measured) differ;
                               <= 0: unknown */
    int ranks;              /* processes of a data-parallel job, each with its own
                               compute threads and loader workers (workers and
                               threads are their totals); <= 1: one process */
    int node_ranks;         /* of them, those on this machine (what the count and the
                               advice per rank read); <= 0: all of them */
    int batch;              /* the job's batch (the advice's larger one), 0: unknown */
    double comm_share;      /* share of the step waiting for the other ranks, 0..1 */
    double other_share;     /* the largest other share of the step (data wait,
                               forward, backward, Adam), 0..1 */
} VerdictInput;

typedef struct Verdict {
    int loader_bound;       /* data wait above CN_LOADER_BOUND */
    int comm_bound;         /* several ranks, and waiting for them is the step's largest
                               share: bound says "communication-bound", comm the knobs */
    int oversubscribed;     /* threads wait for a CPU more than CTR_OVERSUB_WAIT, or
                               exceed the cores where the wait was not measured */
    int harmless;           /* more threads than cores, but they rarely waited for a
                               CPU (measured): said in oversub, not oversubscribed */
    char count[256];        /* what is counted against the cores, e.g. "2 loader workers +
                               2 compute threads on 2 cores", "2 ranks x (1 compute
                               thread + 1 loader worker) = 4 threads on 2 cores" */
    char bound[128];        /* "loader-bound (data wait 12.3% of the step, above 10%)" */
    char bound_brief[64];   /* the same for a narrow screen: "loader-bound: data wait 12.3%" */
    char oversub[640];      /* "" or e.g. "oversubscribed: 2 loader workers + 2 compute
                               threads on 2 cores (run-queue wait 31% of thread time);
                               try --workers 0" */
    char brief[160];        /* the same for a narrow screen, e.g.
                               "2+2 threads on 2 cores: try --workers 0" */
    char comm[192];         /* "" or, when comm_bound, what to try: "try a larger batch
                               per rank (--batch 128), fewer ranks (--ranks 1) or a
                               faster link" */
} Verdict;

/* Judges `in` into *out.  Only in->knobs is pointed to, and only while it
 * runs. */
void verdict_judge(const VerdictInput *in, Verdict *out);

#ifdef __cplusplus
}
#endif
#endif
