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

/* The ranks on this machine, counted against its cores. */
static int here(const VerdictInput *in)
{
    return in->node_ranks > 0 ? in->node_ranks : in->ranks;
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

/* The compute threads counted: the busy ones measured, with the count
 * each process was given beside them when it differs (so the figure
 * quoted is the one explained). */
static void threads_text(const VerdictInput *in, char *buf, size_t len)
{
    if (in->intra_op > 0 && in->intra_op != in->threads && here(in) <= 1)
        snprintf(buf, len, "%d busy compute thread%s (torch's intra-op: %d)",
                 in->threads, plural(in->threads), in->intra_op);
    else
        snprintf(buf, len, "%d compute thread%s", in->threads, plural(in->threads));
}

/* What is counted against the cores; *busy the total. */
static void count_text(const VerdictInput *in, int *busy, char *buf, size_t len)
{
    char th[128];

    int n = here(in);

    if (n > 1) {
        int t = in->intra_op > 0 ? in->intra_op : (in->threads + n - 1) / n;
        int w = (in->workers + n - 1) / n;
        *busy = n * (t + w);
        snprintf(buf, len, "%d ranks x (%d compute thread%s + %d loader worker%s) = %d on %d "
                 "core%s", n, t, plural(t), w, plural(w), *busy, in->cores,
                 plural(in->cores));
        return;
    }
    *busy = in->threads + in->workers;
    threads_text(in, th, sizeof th);
    snprintf(buf, len, "%d loader worker%s + %s on %d core%s", in->workers, plural(in->workers),
             th, in->cores, plural(in->cores));
}

static void judge_bound(const VerdictInput *in, Verdict *out)
{
    out->loader_bound = in->data_wait_share > CN_LOADER_BOUND;
    if (isnan(in->data_wait_share)) {
        /* Unknown is said so, never judged as a wait of 0. */
        snprintf(out->bound, sizeof out->bound, "n/a: no data-wait figure");
        snprintf(out->bound_brief, sizeof out->bound_brief, "n/a: no data wait");
        return;
    }
    snprintf(out->bound, sizeof out->bound, "%s (data wait %.1f%% of the step, %s %.0f%%)",
             out->loader_bound ? "loader-bound" : "compute-bound", 100 * in->data_wait_share,
             out->loader_bound ? "above" : "at most", 100 * CN_LOADER_BOUND);
    snprintf(out->bound_brief, sizeof out->bound_brief, "%s: data wait %.1f%%",
             out->loader_bound ? "loader-bound" : "compute-bound", 100 * in->data_wait_share);
}

/* The advice for a data-parallel job: the knobs per rank, or fewer ranks. */
static void rank_advice(const VerdictInput *in, int loader_bound, char *buf, size_t len)
{
    const VerdictKnobs *k = in->knobs ? in->knobs : &verdict_knobs_cnntop;
    int per = in->cores / here(in) > 0 ? in->cores / here(in) : 1;
    char a[96], b[96];

    knob_text(k->threads, loader_bound && per > 1 ? per - 1 : per, "compute thread", a,
              sizeof a);
    knob_text(k->workers, loader_bound ? (per > 1 ? 1 : 0) : 0, "loader worker", b, sizeof b);
    snprintf(buf, len, "try %s%s%s per rank, or fewer than %d ranks", a, k->join, b, here(in));
}

void verdict_judge(const VerdictInput *in, Verdict *out)
{
    int busy;
    int measured = isfinite(in->run_queue_wait);
    int waits = measured && in->run_queue_wait > CTR_OVERSUB_WAIT;
    char wait[96] = "", tip[256], short_tip[96];

    memset(out, 0, sizeof *out);
    judge_bound(in, out);
    judge_comm(in, out);
    count_text(in, &busy, out->count, sizeof out->count);
    int over = in->cores > 0 && busy > in->cores;
    out->oversubscribed = waits || (over && !measured);
    out->harmless = over && measured && !waits;
    if (out->harmless) {
        snprintf(out->oversub, sizeof out->oversub,
                 "more threads than cores, harmless: %s, run-queue wait %.1f%% of thread "
                 "time (at most %.0f%%)", out->count, 100 * in->run_queue_wait,
                 100 * CTR_OVERSUB_WAIT);
        snprintf(out->brief, sizeof out->brief, "%d threads on %d cores: harmless (wait %.0f%%)",
                 busy, in->cores, 100 * in->run_queue_wait);
        return;
    }
    if (!out->oversubscribed)
        return;
    if (measured)
        snprintf(wait, sizeof wait, "run-queue wait %.0f%% of thread time",
                 100 * in->run_queue_wait);
    if (here(in) > 1) {
        rank_advice(in, out->loader_bound, tip, sizeof tip);
        snprintf(short_tip, sizeof short_tip, "fewer ranks or threads");
    } else {
        advice(in, out->loader_bound, over, 0, tip, sizeof tip);
        advice(in, out->loader_bound, over, 1, short_tip, sizeof short_tip);
    }
    if (over)
        snprintf(out->brief, sizeof out->brief, "%d+%d threads on %d core%s: %s", in->workers,
                 in->threads, in->cores, plural(in->cores), short_tip);
    else
        snprintf(out->brief, sizeof out->brief, "threads wait %.0f%% for a CPU: %s",
                 100 * in->run_queue_wait, short_tip);
    if (over)
        snprintf(out->oversub, sizeof out->oversub, "oversubscribed: %s%s%s%s; %s", out->count,
                 wait[0] ? " (" : "", wait, wait[0] ? ", time lost waiting for a CPU)" : "",
                 tip);
    else
        snprintf(out->oversub, sizeof out->oversub,
                 "oversubscribed: %s lost waiting for a CPU, more than %.0f%%, with %s (other "
                 "programs on the cores?); %s", wait, 100 * CTR_OVERSUB_WAIT, out->count, tip);
}
