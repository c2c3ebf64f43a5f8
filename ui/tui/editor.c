/*
 * editor.c: the settings editor: the next run's settings changed by keys
 * (Left/Right, b/B, w/W) or typed (c, digits), and applied live to the
 * running engine where a setting can be (batch, workers, prefetch).
 */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "tui/editor.h"

static const struct {
    const char *name;
    int live;
} setting_desc[SET_COUNT] = {
    [SET_BATCH] = {"batch", 1},     [SET_WORKERS] = {"workers", 1}, [SET_PREFETCH] = {"prefetch", 1},
    [SET_THREADS] = {"threads", 0}, [SET_EPOCHS] = {"epochs", 0},   [SET_STEPS] = {"steps", 0},
    [SET_LIMIT] = {"limit", 0},     [SET_LR] = {"lr", 0},           [SET_AUGMENT] = {"augment", 0},
    [SET_SEED] = {"seed", 0},       [SET_DATA] = {"data", 0},
};

const char *editor_name(int i)
{
    return setting_desc[i].name;
}

int editor_live(int i)
{
    return setting_desc[i].live;
}

void editor_format(const Tui *t, int i, const RunConfig *c, const char *data, char *buf,
                        size_t len)
{
    (void)t;
    switch (i) {
    case SET_BATCH: snprintf(buf, len, "%d", c->batch); break;
    case SET_WORKERS: snprintf(buf, len, "%d", c->workers); break;
    case SET_PREFETCH:
        if (c->prefetch)
            snprintf(buf, len, "%d", c->prefetch);
        else
            snprintf(buf, len, "auto");
        break;
    case SET_THREADS:
        if (c->threads)
            snprintf(buf, len, "%d", c->threads);
        else
            snprintf(buf, len, "all");
        break;
    case SET_EPOCHS: snprintf(buf, len, "%d", c->epochs); break;
    case SET_STEPS:
        if (c->steps)
            snprintf(buf, len, "%ld", c->steps);
        else
            snprintf(buf, len, "epochs");
        break;
    case SET_LIMIT:
        if (c->limit)
            snprintf(buf, len, "%ld", c->limit);
        else
            snprintf(buf, len, "all");
        break;
    case SET_LR: snprintf(buf, len, "%g", c->lr); break;
    case SET_AUGMENT: options_format_augment(c->augment, buf, len); break;
    case SET_SEED: snprintf(buf, len, "%llu", (unsigned long long)c->seed); break;
    default: /* whole: the drawing cuts it, keeping the tail */
        snprintf(buf, len, "%s", data && *data ? data : "default");
        break;
    }
}

/* Runs an engine_set_* call with signals blocked: the loader threads it may
 * start inherit the caller's mask, and only the UI thread takes signals. */
static int set_live(Tui *t, int i, int v, char *err, size_t errlen)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (i == SET_BATCH)
        rc = engine_set_batch(t->engine, v, err, errlen);
    else if (i == SET_WORKERS)
        rc = engine_set_workers(t->engine, v, err, errlen);
    else
        rc = engine_set_prefetch(t->engine, v, err, errlen);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* After setting i of the next run changed: apply it live when it can be. */
static void after_change(Tui *t, int i)
{
    char val[4200], err[512];
    const RunConfig *c = &t->set.cfg;

    editor_format(t, i, c, t->set.data, val, sizeof val);
    if (!setting_desc[i].live || !t->engine || t->rv.state != RUN_TRAINING) {
        tui_message(t, 0, "%s %s: for the next run%s", setting_desc[i].name, val,
                    setting_desc[i].live ? "" : " (applies only to a new run)");
        return;
    }
    int v = i == SET_BATCH ? c->batch : i == SET_WORKERS ? c->workers : c->prefetch;
    if (set_live(t, i, v, err, sizeof err) != 0) {
        tui_message(t, 1, "%s", err);
        return;
    }
    t->live_changed = 1;
    tui_message(t, 0, "%s %s: applied live%s; a new segment starts", setting_desc[i].name, val,
                i == SET_BATCH ? " at the next step" : "");
}

static long step_long(long v, int dir, long lo, long hi)
{
    v += dir;
    return v < lo ? lo : v > hi ? hi : v;
}

void editor_change(Tui *t, int i, int dir)
{
    RunConfig *c = &t->set.cfg;

    switch (i) {
    case SET_BATCH:
        c->batch = dir > 0 ? (c->batch * 2 > CN_MAX_BATCH ? CN_MAX_BATCH : c->batch * 2)
                           : (c->batch / 2 < 1 ? 1 : c->batch / 2);
        break;
    case SET_WORKERS: c->workers = (int)step_long(c->workers, dir, 0, CN_MAX_WORKERS); break;
    case SET_PREFETCH: c->prefetch = (int)step_long(c->prefetch, dir, 0, CN_MAX_PREFETCH); break;
    case SET_THREADS: c->threads = (int)step_long(c->threads, dir, 0, CN_MAX_THREADS); break;
    case SET_EPOCHS: c->epochs = (int)step_long(c->epochs, dir, 1, 100000); break;
    case SET_STEPS:
        c->steps = dir > 0 ? (c->steps ? c->steps * 2 : 100) : (c->steps <= 100 ? 0 : c->steps / 2);
        break;
    case SET_LIMIT:
        if (dir > 0)
            c->limit = c->limit && c->limit * 2 < 60000 ? c->limit * 2 : 0;
        else
            c->limit = c->limit ? (c->limit / 2 < 1 ? 1 : c->limit / 2) : 30000;
        break;
    case SET_LR:
        c->lr = dir > 0 ? (c->lr * 2 > 10 ? 10 : c->lr * 2) : c->lr / 2;
        break;
    case SET_AUGMENT: c->augment = (c->augment + (dir > 0 ? 1u : 7u)) & 7u; break;
    case SET_SEED: c->seed = dir < 0 && c->seed == 0 ? 0 : c->seed + (uint64_t)(int64_t)dir; break;
    default:
        tui_message(t, 0, "type the data directory: press c, then Enter");
        return;
    }
    after_change(t, i);
}

/* Sets setting i from typed text; returns 0 or -1 with a message. */
int editor_type(Tui *t, int i, const char *text)
{
    RunConfig *c = &t->set.cfg;
    char *end, err[256];

    if (i == SET_DATA) {
        snprintf(t->set.data, sizeof t->set.data, "%s", text);
        settings_fix(&t->set);
        after_change(t, i);
        return 0;
    }
    if (i == SET_AUGMENT) {
        unsigned a;
        if (options_parse_augment(text, &a, err, sizeof err)) {
            tui_message(t, 1, "%s", err);
            return -1;
        }
        c->augment = a;
        after_change(t, i);
        return 0;
    }
    double v = strtod(text, &end);
    static const double lo[SET_COUNT] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    static const double hi[SET_COUNT] = {CN_MAX_BATCH, CN_MAX_WORKERS, CN_MAX_PREFETCH,
                                         CN_MAX_THREADS, CN_MAX_EPOCHS, CN_MAX_STEPS,
                                         CN_MAX_IMAGES, 10, 0, 1e18, 0};
    if (!*text || *end || !isfinite(v) || v < lo[i] || v > hi[i] || (i == SET_LR && v < FLT_MIN) ||
        (i != SET_LR && v != floor(v))) {
        tui_message(t, 1, "%s: '%s' is not a %s in %g..%g", setting_desc[i].name, text,
                    i == SET_LR ? "number" : "whole number", lo[i], hi[i]);
        return -1;
    }
    switch (i) {
    case SET_BATCH: c->batch = (int)v; break;
    case SET_WORKERS: c->workers = (int)v; break;
    case SET_PREFETCH: c->prefetch = (int)v; break;
    case SET_THREADS: c->threads = (int)v; break;
    case SET_EPOCHS: c->epochs = (int)v; break;
    case SET_STEPS: c->steps = (long)v; break;
    case SET_LIMIT: c->limit = (long)v; break;
    case SET_LR: c->lr = v; break;
    default: c->seed = (uint64_t)v; break;
    }
    after_change(t, i);
    return 0;
}

/* On a setting whose value the panel cuts: the whole value, below. */
void editor_show_whole(Tui *t)
{
    char next[4200], last[4200];
    int w = layout_settings_value_cols(&t->lay);

    editor_format(t, t->sel, &t->set.cfg, t->set.data, next, sizeof next);
    editor_format(t, t->sel, &t->rv.cfg, t->rv.data_dir, last, sizeof last);
    int cut_last = t->rv.seq && fmt_cols(last) > w;
    if (fmt_cols(next) > w || cut_last)
        tui_message(t, 0, "%s: next run %s%s%s", setting_desc[t->sel].name, next,
                    cut_last ? ", last run " : "", cut_last ? last : "");
}
