/*
 * verdict.c: the verdict's figures for an exec run (cnntop/exec.h), from
 * the live tree and the hook's figures or from the run's record, so that
 * the dashboard, the summary and the record judge alike.
 */
#include <math.h>

#include "cnntop/exec.h"
#include "cnntop/machine.h"

/* A thread on a CPU more than this share of its time counts as a compute
 * thread for the verdict (PyTorch keeps idle helper threads too). */
#define EXEC_BUSY_SHARE 0.10

void exec_verdict_of(ProcTree *t, const HookFigures *fig, VerdictInput *in)
{
    MachineInfo m;
    CounterSched s;
    double wait = 0.0, wall = 0.0;
    int have = 0;

    machine_info(&m);
    for (int r = 0; r < PROC_ROLES; r++) {
        proctree_sched(t, (ProcRole)r, &s);
        if (!s.available || !s.have_wait)
            continue;
        wait += s.wait;
        wall += s.thread_wall;
        have = 1;
    }
    *in = (VerdictInput){
        .data_wait_share = fig && fig->ok ? fig->data_wait_share : NAN,
        .workers = proctree_role_peak_live(t, PROC_ROLE_WORKER),
        .threads = proctree_busy_threads(t, PROC_ROLE_MAIN, EXEC_BUSY_SHARE) +
                   proctree_busy_threads(t, PROC_ROLE_RANK, EXEC_BUSY_SHARE),
        .cores = m.cores,
        .run_queue_wait = have && wall >= CTR_OVERSUB_MIN_WALL ? wait / wall : NAN,
        .knobs = (fig && fig->hello) || proctree_role_procs(t, PROC_ROLE_RANK)
                     ? &verdict_knobs_pytorch : &verdict_knobs_none,
        .intra_op = -1,
        .ranks = proctree_role_procs(t, PROC_ROLE_RANK),
    };
}

void exec_verdict(ProcTree *t, const HookFigures *fig, VerdictInput *in, Verdict *v)
{
    /* Without the hook's figures the data wait stays unknown: the verdict
     * says n/a with its reason rather than judge a wait of 0. */
    exec_verdict_of(t, fig, in);
    verdict_judge(in, v);
}
