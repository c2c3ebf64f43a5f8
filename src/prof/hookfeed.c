/*
 * hookfeed.c: checking and summing the Python hook's JSON lines
 * (cnntop/hookfeed.h).
 *
 * Each line is parsed and checked whole (check_*), and only then taken
 * (take_*), so a line is either all in the sums or not at all.  A check
 * returns 0, or -1 with the reason in the Line; the reason of the first
 * rejected line is kept for the summary.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/hookfeed.h"
#include "cnntop/json.h"

/* The rounding of the hook's "%.6f" times, with room: two times that the
 * hook took in order may print up to this much out of order. */
#define TIME_EPS 1e-5

/* One line being checked: its parsed object, the stream it is of (the
 * main process's, or a rank's), and on rejection why. */
typedef struct Line {
    const JsonValue *v;
    const char *ev;
    HookStream *s;
    int own_pid;              /* the pid that stream's process has; 0: unknown */
    char why[128];
} Line;

/* The figures a batch line carries, once checked. */
typedef struct Batch {
    double n, wait, step, t, coll;
} Batch;

static void stream_init(HookStream *s)
{
    memset(s, 0, sizeof *s);
    s->threads = s->loader_workers = -1;
    s->t_last = NAN;
}

void hookfeed_init(HookFeed *f)
{
    memset(f, 0, sizeof *f);
    stream_init(&f->main);
    f->t_hi = INFINITY;
    f->model.pace_in = f->model.pace_out = NAN;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int reject(Line *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(l->why, sizeof l->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* Member key as a whole number in lo..hi into *out. */
static int whole(Line *l, const char *key, long long lo, long long hi, long long *out)
{
    const JsonValue *m = json_get(l->v, key);

    *out = 0;
    if (!json_is(m, JSON_NUMBER))
        return reject(l, "%s: no number \"%s\"", l->ev, key);
    long long x = m->int_exact ? (long long)json_as_int(m, lo - 1) : lo - 1;
    if (!m->int_exact || x < lo || x > hi)
        return reject(l, "%s: %s is %.6g, not a whole number in %lld..%lld", l->ev, key,
                      m->number, lo, hi);
    *out = x;
    return 0;
}

/* Member key as a finite number, at least 0, into *out. */
static int seconds(Line *l, const char *key, double *out)
{
    const JsonValue *m = json_get(l->v, key);

    *out = 0.0;
    if (!json_is(m, JSON_NUMBER))
        return reject(l, "%s: no number \"%s\"", l->ev, key);
    if (!isfinite(m->number) || m->number < 0)
        return reject(l, "%s: %s is %.6g, not a time (finite, not negative)", l->ev, key,
                      m->number);
    *out = m->number;
    return 0;
}

/* A "t": within the caller's clock and not before the stream's latest. */
static int time_at(const HookFeed *f, Line *l, double *t)
{
    if (seconds(l, "t", t) != 0)
        return -1;
    if (*t < f->t_lo - TIME_EPS || *t > f->t_hi + HOOK_TIME_SLACK)
        return reject(l, "%s: t %.9g is outside the run (%.3f..%.3f on this clock)", l->ev, *t,
                      f->t_lo, f->t_hi);
    if (*t < l->s->t_last - TIME_EPS)
        return reject(l, "%s: t %.9g goes back (the last was %.9g)", l->ev, *t, l->s->t_last);
    return 0;
}

/* A pid the hook names: in range, and not of another tree. */
static int pid_check(const HookFeed *f, Line *l, long long pid, int *kind)
{
    *kind = f->host.pid_of ? f->host.pid_of(f->host.u, (int)pid) : HOOK_PID_OURS;
    if (*kind == HOOK_PID_FOREIGN)
        return reject(l, "%s: pid %lld is not a process of the command's tree", l->ev, pid);
    return 0;
}

/* A rank's "coll" (s in collectives so far, optional): not negative, not
 * going back, within the time since the run began; the stream's own
 * otherwise. */
static int coll_check(const HookFeed *f, Line *l, double *coll)
{
    *coll = l->s->coll;
    if (!json_get(l->v, "coll"))
        return 0;
    if (seconds(l, "coll", coll) != 0)
        return -1;
    if (*coll < l->s->coll - TIME_EPS)
        return reject(l, "%s: coll %.9g s goes back (the last was %.9g)", l->ev, *coll,
                      l->s->coll);
    if (isfinite(f->t_hi) && *coll > f->t_hi - f->t_lo + HOOK_TIME_SLACK)
        return reject(l, "%s: coll %.9g s is longer than the run", l->ev, *coll);
    return 0;
}

/* torch's version: a short word of letters, digits and ".+_-". */
static int version_ok(const JsonValue *s)
{
    if (!json_is(s, JSON_STRING) || s->len == 0 || s->len >= sizeof ((HookFeed *)0)->torch)
        return 0;
    for (size_t i = 0; i < s->len; i++) {
        char c = s->str[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              strchr(".+_-", c) != NULL) || c == '\0')
            return 0;
    }
    return 1;
}

static int take_hello(HookFeed *f, Line *l)
{
    long long pid;
    int kind;

    if (f->hello)
        return reject(l, "hello: a second hello (pid %lld; the first was pid %d)",
                      (long long)json_as_int(json_get(l->v, "pid"), 0), f->pid);
    if (whole(l, "pid", 1, HOOK_MAX_PID, &pid) != 0 || pid_check(f, l, pid, &kind) != 0)
        return -1;
    const JsonValue *torch = json_get(l->v, "torch");
    if (!version_ok(torch))
        return reject(l, "hello: torch is not a version (letters, digits, \".+_-\", 1..%zu)",
                      sizeof f->torch - 1);
    f->hello = 1;
    f->pid = kind == HOOK_PID_OURS ? (int)pid : 0;
    snprintf(f->torch, sizeof f->torch, "%s", torch->str);
    return 0;
}

static int take_workers(HookFeed *f, Line *l)
{
    const JsonValue *pids = json_get(l->v, "pids");
    int kind[HOOK_LINE_MAX / 2];
    size_t n = json_count(pids);

    if (!json_is(pids, JSON_ARRAY))
        return reject(l, "workers: no array \"pids\"");
    if (n > sizeof kind / sizeof kind[0]) /* more than a line can hold */
        return reject(l, "workers: %zu pids", n);
    for (size_t i = 0; i < n; i++) {
        const JsonValue *p = json_at(pids, i);
        long long pid = p && p->int_exact ? (long long)json_as_int(p, 0) : 0;
        if (!p || !json_is(p, JSON_NUMBER) || !p->int_exact || pid < 1 || pid > HOOK_MAX_PID)
            return reject(l, "workers: pids[%zu] is not a pid (1..%d)", i, HOOK_MAX_PID);
        if (pid == l->own_pid)
            return reject(l, "workers: pid %lld is the hook's own process", pid);
        if (pid_check(f, l, pid, &kind[i]) != 0)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        f->worker_pids++;
        if (kind[i] == HOOK_PID_OURS && f->host.worker)
            f->host.worker(f->host.u, (int)json_as_int(json_at(pids, i), 0));
    }
    return 0;
}

static int take_config(HookFeed *f, Line *l)
{
    long long threads, workers;

    (void)f; /* the line's stream holds what it says */
    if (whole(l, "threads", 1, HOOK_MAX_COUNT, &threads) != 0 ||
        whole(l, "workers", -1, HOOK_MAX_COUNT, &workers) != 0)
        return -1;
    l->s->threads = (int)threads;
    l->s->loader_workers = (int)workers;
    return 0;
}

/* A batch's figures, checked against the time so far: its wait within the
 * time since the previous line (or the run's start), its wait and step
 * within the window, so the sums never say more time than passed. */
static int check_batch(const HookFeed *f, Line *l, Batch *b)
{
    const HookStream *s = l->s;
    long long n;

    b->coll = s->coll;
    if (whole(l, "n", 0, HOOK_MAX_SAMPLES, &n) != 0 || seconds(l, "wait", &b->wait) != 0 ||
        seconds(l, "step", &b->step) != 0 || time_at(f, l, &b->t) != 0)
        return -1;
    b->n = (double)n;
    double since = b->t - (isnan(s->t_last) ? f->t_lo : s->t_last);
    if (b->wait > since + TIME_EPS)
        return reject(l, "batch: wait %.9g s is longer than the %.9g s since the line before",
                      b->wait, since);
    if (s->batches && b->wait + b->step > b->t - s->t_first + TIME_EPS)
        return reject(l, "batch: wait + step %.9g s is longer than the %.9g s since the "
                      "first batch", b->wait + b->step, b->t - s->t_first);
    return coll_check(f, l, &b->coll);
}

static int take_batch(HookFeed *f, Line *l)
{
    HookStream *s = l->s;
    Batch b;

    if (check_batch(f, l, &b) != 0)
        return -1;
    s->t_last = b.t;
    s->coll = b.coll;
    if (s->batches++ == 0) {
        s->first_samples = b.n;
        s->first_wait = b.wait;
        s->t_first = s->t_end = b.t;
        return 0;
    }
    s->samples += b.n;
    s->wait += b.wait;
    s->step += b.step;
    if (b.t > s->t_end)
        s->t_end = b.t;
    return 0;
}

static int take_end(HookFeed *f, Line *l)
{
    HookStream *s = l->s;
    double t, coll;

    if (time_at(f, l, &t) != 0 || coll_check(f, l, &coll) != 0)
        return -1;
    s->t_last = t;
    s->coll = coll;
    if (s->batches && t > s->t_end)
        s->t_end = t;
    return 0;
}

/* The layer window's lines (cnntop_layers.py) ------------------------------ */

/* Member key as text: 1..size-1 printable ASCII bytes into out. */
static int text_of(Line *l, const char *key, char *out, size_t size)
{
    const JsonValue *m = json_get(l->v, key);

    if (!json_is(m, JSON_STRING) || m->len == 0 || m->len >= size)
        return reject(l, "%s: %s is not a string of 1..%zu bytes", l->ev, key, size - 1);
    for (size_t i = 0; i < m->len; i++)
        if (m->str[i] < 0x20 || m->str[i] > 0x7e)
            return reject(l, "%s: %s has a byte that is not printable ASCII", l->ev, key);
    memcpy(out, m->str, m->len);
    out[m->len] = '\0';
    return 0;
}

/* Member key as a name: 1..HOOK_NAME_LEN-1 printable ASCII bytes. */
static int name_of(Line *l, const char *key, char *out)
{
    return text_of(l, key, out, HOOK_NAME_LEN);
}

/* An "error" line: a process of the tree died of an uncaught exception
 * ("pid", "type", "at").  The first is kept. */
static int take_error(HookFeed *f, Line *l)
{
    char type[HOOK_NAME_LEN], at[HOOK_AT_LEN];
    long long pid;
    int kind;

    if (whole(l, "pid", 1, HOOK_MAX_PID, &pid) != 0 || pid_check(f, l, pid, &kind) != 0 ||
        name_of(l, "type", type) != 0 || text_of(l, "at", at, sizeof at) != 0)
        return -1;
    if (!f->error_type[0]) {
        snprintf(f->error_type, sizeof f->error_type, "%s", type);
        snprintf(f->error_at, sizeof f->error_at, "%s", at);
    }
    return 0;
}

/* Member key as a finite number in 0..hi into *out. */
static int amount(Line *l, const char *key, double hi, double *out)
{
    if (seconds(l, key, out) != 0)
        return -1;
    if (*out > hi)
        return reject(l, "%s: %s is %.6g, more than %.6g", l->ev, key, *out, hi);
    return 0;
}

static int take_window(HookFeed *f, Line *l)
{
    HookModel *m = &f->model;
    long long first, steps, layers;

    if (whole(l, "first", 1, HOOK_MAX_STEPS, &first) != 0 ||
        whole(l, "steps", 1, HOOK_MAX_STEPS, &steps) != 0 ||
        whole(l, "layers", 1, HOOK_LAYERS_MAX, &layers) != 0)
        return -1;
    if (m->first && f->model_of == l->s) /* one was announced, whatever became of it */
        return reject(l, "window: a second window");
    if (m->first) { /* another rank's window, measured as the first's: passed over */
        l->s->skip_rows = (int)layers;
        return 0;
    }
    f->model_of = l->s;
    m->first = (int)first;
    m->steps = (long)steps;
    m->expect = (int)layers;
    m->n = 0;
    return 0;
}

/* A row's time is within the window's: no more than the time since the
 * first batch (the hook's clock runs from before it). */
static int take_layer(HookFeed *f, Line *l)
{
    HookModel *m = &f->model;
    HookLayer row;
    long long calls;

    if (l->s != f->model_of && l->s->skip_rows > 0) {
        l->s->skip_rows--;
        return 0;
    }
    if (!m->expect || l->s != f->model_of)
        return reject(l, "layer: no window announced it");
    if (name_of(l, "name", row.name) != 0 || name_of(l, "kind", row.kind) != 0 ||
        whole(l, "calls", 0, HOOK_MAX_STEPS * 64LL, &calls) != 0 ||
        amount(l, "fwd", 1e9, &row.fwd) != 0 || amount(l, "bwd", 1e9, &row.bwd) != 0 ||
        amount(l, "flops", HOOK_MAX_FLOPS, &row.flops) != 0 ||
        amount(l, "bwd_flops", HOOK_MAX_FLOPS, &row.bwd_flops) != 0 ||
        amount(l, "img_flops", HOOK_MAX_FLOPS, &row.img_flops) != 0)
        return -1;
    row.calls = (long)calls;
    m->rows[m->n++] = row;
    if (--m->expect == 0)
        m->complete = 1;
    return 0;
}

static int take_pace(HookFeed *f, Line *l)
{
    double in, out;
    long long n;

    if (amount(l, "in", 1e9, &in) != 0 || amount(l, "out", 1e9, &out) != 0 ||
        whole(l, "n", 1, HOOK_MAX_STEPS, &n) != 0)
        return -1;
    if (f->model.first && l->s != f->model_of)
        return 0; /* another rank's pace: the window's process's is kept */
    f->model.pace_in = in;
    f->model.pace_out = out;
    f->model.pace_n = (long)n;
    return 0;
}

/* A "rank" line: a process joined torch.distributed ("pid", "rank",
 * "world", "torch").  A rank number or a pid said twice is rejected. */
static int take_rank(HookFeed *f, Line *l)
{
    long long pid, rank, world;
    int kind;

    if (whole(l, "pid", 1, HOOK_MAX_PID, &pid) != 0 ||
        whole(l, "rank", 0, HOOK_MAX_RANKS - 1, &rank) != 0 ||
        whole(l, "world", rank + 1, HOOK_MAX_COUNT, &world) != 0 ||
        pid_check(f, l, pid, &kind) != 0)
        return -1;
    if (!version_ok(json_get(l->v, "torch")))
        return reject(l, "rank: torch is not a version (letters, digits, \".+_-\", 1..%zu)",
                      sizeof f->torch - 1);
    for (int i = 0; i < f->n_ranks; i++)
        if (f->ranks[i].rank == rank || (f->ranks[i].pid && f->ranks[i].pid == pid))
            return reject(l, "rank: rank %lld (pid %lld) said twice", rank, pid);
    HookRank *r = &f->ranks[f->n_ranks++];
    memset(r, 0, sizeof *r);
    stream_init(&r->s);
    r->pid = kind == HOOK_PID_OURS ? (int)pid : 0;
    r->rank = (int)rank;
    r->world = (int)world;
    if (!f->torch[0])
        snprintf(f->torch, sizeof f->torch, "%s", json_get(l->v, "torch")->str);
    if (r->pid && f->host.rank)
        f->host.rank(f->host.u, r->pid);
    return 0;
}

/* The stream a line is of: a rank's when it has "rank" (one announced),
 * else the main process's. */
static int line_stream(HookFeed *f, Line *l)
{
    long long rank;

    l->s = &f->main;
    l->own_pid = f->pid;
    if (!json_get(l->v, "rank"))
        return f->hello ? 0 : reject(l, "%s before the hello", l->ev);
    if (whole(l, "rank", 0, HOOK_MAX_RANKS - 1, &rank) != 0)
        return -1;
    for (int i = 0; i < f->n_ranks; i++)
        if (f->ranks[i].rank == rank) {
            l->s = &f->ranks[i].s;
            l->own_pid = f->ranks[i].pid;
            return 0;
        }
    return reject(l, "%s: rank %lld before its rank line", l->ev, rank);
}

/* The event's check-and-take; -1 with l->why when it is not taken. */
static int take(HookFeed *f, Line *l)
{
    static const struct {
        const char *ev;
        int (*fn)(HookFeed *, Line *);
        int stream; /* 1: a line of a process's stream (after the hello, or a rank's) */
    } evs[] = {{"hello", take_hello, 0}, {"rank", take_rank, 0}, {"error", take_error, 0},
               {"workers", take_workers, 1}, {"config", take_config, 1},
               {"batch", take_batch, 1}, {"end", take_end, 1}, {"window", take_window, 1},
               {"layer", take_layer, 1}, {"pace", take_pace, 1}};

    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) {
        if (strcmp(l->ev, evs[i].ev))
            continue;
        if (evs[i].stream && line_stream(f, l) != 0)
            return -1;
        /* A window's rows follow it in its process's stream: another line
         * of that stream between them drops it (other processes' lines may
         * come between: each writes its own, a line at a time). */
        if (evs[i].stream && strcmp(l->ev, "layer")) {
            if (f->model.expect && l->s == f->model_of) {
                f->model.expect = 0;
                f->model.n = 0;
            }
            l->s->skip_rows = 0;
        }
        if (i == 1 && f->n_ranks == HOOK_MAX_RANKS)
            return reject(l, "rank: more than %d ranks", HOOK_MAX_RANKS);
        return evs[i].fn(f, l);
    }
    return reject(l, "unknown event \"%.40s\"", l->ev);
}

static void rejected(HookFeed *f, const char *why)
{
    if (!f->bad++)
        snprintf(f->why, sizeof f->why, "line %ld: %s", f->lines, why);
}

/* One whole line (overlong ones never get here); returns 1 if rejected. */
static int feed_line(HookFeed *f, const char *text, size_t len)
{
    JsonValue *v = NULL;
    char err[96];
    Line l = {0};

    if (len == 0)
        return 0;
    if (json_parse(text, len, &v, err, sizeof err) != 0 || !json_is(v, JSON_OBJECT) ||
        !json_is(json_get(v, "ev"), JSON_STRING)) {
        rejected(f, v ? "not an object with a string \"ev\"" : err);
        json_free(v);
        return 1;
    }
    l.v = v;
    l.ev = json_as_string(json_get(v, "ev"), "");
    int bad = take(f, &l) != 0;
    if (bad)
        rejected(f, l.why);
    json_free(v);
    return bad;
}

static int overlong(HookFeed *f)
{
    char why[64];

    snprintf(why, sizeof why, "longer than %d bytes", HOOK_LINE_MAX - 1);
    rejected(f, why);
    return 1;
}

int hookfeed_bytes(HookFeed *f, const char *data, size_t len)
{
    int bad = 0;

    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c == '\n') {
            f->lines++;
            if (!f->overflow)
                bad += feed_line(f, f->line, f->len);
            else
                bad += overlong(f);
            f->len = 0;
            f->overflow = 0;
        } else if (f->len + 1 < sizeof f->line)
            f->line[f->len++] = c;
        else
            f->overflow = 1;
    }
    return bad;
}

void hookfeed_stream_figures(const HookStream *s, HookFigures *out)
{
    memset(out, 0, sizeof *out);
    out->hello = 1;
    out->batches = s->batches;
    out->first_wait = s->first_wait;
    out->images = s->samples;
    out->first_images = s->first_samples;
    out->window = s->t_end - s->t_first;
    if (s->batches < 2 || out->window <= 0)
        return;
    out->ok = 1;
    out->images_per_s = s->samples / out->window;
    /* Each wait is within the time since the line before (to the hook's
     * rounding), so the sum is within the window but for that rounding. */
    out->data_wait_share = fmin(1.0, s->wait / out->window);
    out->step_s = s->step / (double)(s->batches - 1);
}

void hookfeed_figures(const HookFeed *f, HookFigures *out)
{
    hookfeed_stream_figures(&f->main, out);
    out->hello = f->hello;
}

void hookfeed_job_figures(const HookFeed *f, HookFigures *out)
{
    HookFigures k;
    double wait = 0.0, step = 0.0;
    int rated = 0;

    hookfeed_figures(f, out);
    if (f->main.batches > 0 || f->n_ranks == 0)
        return;
    memset(out, 0, sizeof *out);
    out->hello = f->hello;
    for (int i = 0; i < f->n_ranks; i++) {
        hookfeed_stream_figures(&f->ranks[i].s, &k);
        out->batches += k.batches;
        out->images += k.images;
        out->first_images += k.first_images;
        out->images_per_s += k.images_per_s;
        out->window = fmax(out->window, k.window);
        out->first_wait = fmax(out->first_wait, k.first_wait);
        wait += k.data_wait_share;
        step += k.step_s;
        rated += k.ok;
    }
    out->ok = rated == f->n_ranks;
    out->data_wait_share = wait / f->n_ranks;
    out->step_s = step / f->n_ranks;
}
