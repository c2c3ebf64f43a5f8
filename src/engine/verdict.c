/*
 * verdict.c: loader-bound, compute-bound or communication-bound, and
 * oversubscription (see
 * cnntop/verdict.h).  The thresholds are the engine's (CN_LOADER_BOUND)
 * and the counters' (CTR_OVERSUB_WAIT); the advice keeps the threads
 * within the cores: fewer loader workers when the loader is not what
 * bounds the run, fewer compute threads when it is, named by the front
 * end's knobs (the table below; VerdictInput.knobs picks one).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/counters.h"
#include "cnntop/engine.h"
#include "cnntop/verdict.h"

static const char *plural(int n)
{
    return n == 1 ? "" : "s";
}

const VerdictKnobs verdict_knobs_cnntop = {"--workers #", "--threads #", " ",
                                           " (load inline on the trainer)"};
const VerdictKnobs verdict_knobs_pytorch = {
    "DataLoader(num_workers=#)", "torch.set_num_threads(#) (or OMP_NUM_THREADS=#)", " and ",
    " (load in the main process)"};
const VerdictKnobs verdict_knobs_none = {NULL, NULL, " and ", " (load in the main process)"};

/* The knob set to n ("--workers 2"), or with no knob the count in words
 * ("2 loader workers"): what a front end without the option can still
 * act on. */
static void knob_text(const char *knob, int n, const char *noun, char *buf, size_t len)
{
    size_t o = 0;

    if (!knob) {
        snprintf(buf, len, "%d %s%s", n, noun, plural(n));
        return;
    }
    buf[0] = '\0';
    for (const char *k = knob; *k && o + 1 < len; k++) {
        int m = *k == '#' ? snprintf(buf + o, len - o, "%d", n)
                          : snprintf(buf + o, len - o, "%c", *k);
        o += m > 0 ? (size_t)m : 0;
    }
    if (o >= len)
        buf[len - 1] = '\0';
}

/* What to try so that loader workers + compute threads fit the cores
 * (over: they do not), or so that fewer of them wait when they do;
 * terse: the knobs alone. */
static void advice(const VerdictInput *in, int loader_bound, int over, int terse, char *buf,
                   size_t len)
{
    const VerdictKnobs *k = in->knobs ? in->knobs : &verdict_knobs_cnntop;
    char a[56], b[56];

    if (in->workers > 0 && !loader_bound) {
        int w = over ? in->cores - in->threads : in->workers - 1;
        w = w > 0 ? w : 0;
        knob_text(k->workers, w, "loader worker", a, sizeof a);
        snprintf(buf, len, "try %s%s", a, w || terse || !k->inline_note ? "" : k->inline_note);
    } else if (in->workers > 0) {
        int t = over ? in->cores - in->workers : in->threads - 1;
        knob_text(k->threads, t >= 1 ? t : 1, "compute thread", a, sizeof a);
        knob_text(k->workers, in->cores > 1 ? in->cores - 1 : 0, "loader worker", b, sizeof b);
        if (t >= 1)
            snprintf(buf, len, "try %s%s", a, terse ? "" : " so that the loader keeps its cores");
        else
            snprintf(buf, len, "try %s%s%s", a, k->join, b);
    } else {
        int t = over ? in->cores : in->threads - 1;
        knob_text(k->threads, t, "compute thread", a, sizeof a);
        if (t >= 1)
            snprintf(buf, len, "try %s%s", a, over || terse ? "" : ", or close other programs");
        else
            snprintf(buf, len, "close other programs");
    }
}

/* Communication-bound: a job of several ranks whose wait for the others
 * is the step's largest share; the knobs that shrink it (a larger batch
 * per rank makes the all-reduce, of the same bytes, rarer per image). */
static int judge_comm(const VerdictInput *in, Verdict *out)
{
    if (in->ranks < 2 || !(in->comm_share > 0) || isnan(in->other_share) ||
        in->comm_share <= in->other_share)
        return 0;
    out->comm_bound = 1;
    snprintf(out->bound, sizeof out->bound,
             "communication-bound (waiting for the other ranks %.1f%% of the step, its "
             "largest share)", 100 * in->comm_share);
    snprintf(out->bound_brief, sizeof out->bound_brief, "comm-bound: comm %.1f%%",
             100 * in->comm_share);
    if (in->batch > 0)
        snprintf(out->comm, sizeof out->comm, "try a larger batch per rank (--batch %d), fewer "
                 "ranks (--ranks %d) or a faster link", 2 * in->batch, in->ranks - 1);
    else
        snprintf(out->comm, sizeof out->comm, "try a larger batch per rank, fewer ranks or a "
                 "faster link");
    return 1;
}

void verdict_judge(const VerdictInput *in, Verdict *out)
{
    int busy = in->threads + in->workers;
    int over = in->cores > 0 && busy > in->cores;
    int waits = isfinite(in->run_queue_wait) && in->run_queue_wait > CTR_OVERSUB_WAIT;
    char wait[48] = "", tip[128], short_tip[96];

    memset(out, 0, sizeof *out);
    out->loader_bound = in->data_wait_share > CN_LOADER_BOUND;
    if (isnan(in->data_wait_share)) {
        /* Unknown is said so, never judged as a wait of 0. */
        snprintf(out->bound, sizeof out->bound, "n/a: no data-wait figure");
        snprintf(out->bound_brief, sizeof out->bound_brief, "n/a: no data wait");
    } else {
        snprintf(out->bound, sizeof out->bound, "%s (data wait %.1f%% of the step, %s %.0f%%)",
                 out->loader_bound ? "loader-bound" : "compute-bound", 100 * in->data_wait_share,
                 out->loader_bound ? "above" : "at most", 100 * CN_LOADER_BOUND);
        snprintf(out->bound_brief, sizeof out->bound_brief, "%s: data wait %.1f%%",
                 out->loader_bound ? "loader-bound" : "compute-bound", 100 * in->data_wait_share);
    }
    judge_comm(in, out);
    out->oversubscribed = over || waits;
    if (!out->oversubscribed)
        return;
    if (isfinite(in->run_queue_wait))
        snprintf(wait, sizeof wait, "run-queue wait %.0f%% of thread time",
                 100 * in->run_queue_wait);
    advice(in, out->loader_bound, over, 0, tip, sizeof tip);
    advice(in, out->loader_bound, over, 1, short_tip, sizeof short_tip);
    if (over)
        snprintf(out->brief, sizeof out->brief, "%d+%d threads on %d core%s: %s", in->workers,
                 in->threads, in->cores, plural(in->cores), short_tip);
    else
        snprintf(out->brief, sizeof out->brief, "threads wait %.0f%% for a CPU: %s",
                 100 * in->run_queue_wait, short_tip);
    if (over)
        snprintf(out->oversub, sizeof out->oversub,
                 "oversubscribed: %d loader worker%s + %d compute thread%s on %d core%s%s%s%s; %s",
                 in->workers, plural(in->workers), in->threads, plural(in->threads), in->cores,
                 plural(in->cores), wait[0] ? " (" : "", wait, wait[0] ? ")" : "", tip);
    else
        snprintf(out->oversub, sizeof out->oversub,
                 "oversubscribed: %s, more than %.0f%% (other programs on the cores?); %s", wait,
                 100 * CTR_OVERSUB_WAIT, tip);
}
