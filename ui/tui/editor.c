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

#include "cmd/ranks.h"
#include "common/fmt.h"
#include "tui/editor.h"

/* The panel's rows, by their settings_run keys (the row gives the range,
 * the default, whether it applies live and what 0 shows as); ranks is the
 * dashboard's own (settings_ui): a field of TuiSettings, not of RunConfig. */
static const char *const setting_keys[SET_COUNT] = {
    [SET_BATCH] = "batch", [SET_WORKERS] = "workers", [SET_PREFETCH] = "prefetch",
    [SET_THREADS] = "threads", [SET_GEMM] = "gemm", [SET_RANKS] = "ranks", [SET_EPOCHS] = "epochs",
    [SET_STEPS] = "steps",
    [SET_LIMIT] = "limit", [SET_LR] = "lr", [SET_AUGMENT] = "augment", [SET_SEED] = "seed",
    [SET_DATA] = "data",
};

static const Setting *row_setting(int i)
{
    return settings_find(i == SET_RANKS ? settings_ui : settings_run, setting_keys[i]);
}

const char *editor_name(int i)
{
    return setting_keys[i];
}

int editor_live(int i)
{
    return (row_setting(i)->flags & SETTING_LIVE) != 0;
}

void editor_format(const Tui *t, int i, const RunConfig *c, const char *data, int ranks,
                   char *buf, size_t len)
{
    const Setting *s = row_setting(i);

    (void)t;
    /* The path whole: the drawing cuts it, keeping the tail. */
    if (i == SET_RANKS)
        snprintf(buf, len, "%d", ranks);
    else if (s->type == SETTING_PATH)
        snprintf(buf, len, "%s", data && *data ? data : s->label0);
    else {
        settings_format(s, c, buf, len);
        if (s->label0 && !strcmp(buf, "0")) /* "auto", "all": what 0 means */
            snprintf(buf, len, "%s", s->label0);
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

    editor_format(t, i, c, t->set.data, t->set.ranks, val, sizeof val);
    if (!editor_live(i) || !t->engine || t->rv.state != RUN_TRAINING) {
        tui_message(t, 0, "%s %s: for the next run%s", editor_name(i), val,
                    editor_live(i) ? "" : " (applies only to a new run)");
        return;
    }
    int v = i == SET_BATCH ? c->batch : i == SET_WORKERS ? c->workers : c->prefetch;
    if (set_live(t, i, v, err, sizeof err) != 0) {
        tui_message(t, 1, "%s", err);
        return;
    }
    t->live_changed = 1;
    tui_message(t, 0, "%s %s: applied live%s; a new segment starts", editor_name(i), val,
                i == SET_BATCH ? " at the next step" : "");
}

/* Whether several ranks cannot run here (no MPI in this build, no
 * mpirun): then the status line says why. */
static int ranks_refused(Tui *t)
{
    char launcher[4096];
    const char *why = ranks_unavailable(launcher, sizeof launcher);

    if (why)
        tui_message(t, 1, "ranks: %s", why);
    return why != NULL;
}

static long step_long(long v, int dir, long lo, long hi)
{
    v += dir;
    return v < lo ? lo : v > hi ? hi : v;
}

void editor_change(Tui *t, int i, int dir)
{
    RunConfig *c = &t->set.cfg;
    const Setting *s = row_setting(i);
    long lo = (long)s->min, hi = (long)s->max;

    switch (i) {
    case SET_BATCH:
        c->batch = dir > 0 ? (c->batch * 2 > hi ? (int)hi : c->batch * 2)
                           : (c->batch / 2 < lo ? (int)lo : c->batch / 2);
        break;
    case SET_WORKERS: case SET_PREFETCH: case SET_THREADS: case SET_EPOCHS: {
        int *v = (int *)(void *)((char *)c + s->offset);
        *v = (int)step_long(*v, dir, lo, hi);
        break;
    }
    case SET_STEPS:
        c->steps = dir > 0 ? (c->steps ? c->steps * 2 : 100) : (c->steps <= 100 ? 0 : c->steps / 2);
        c->steps = c->steps > hi ? hi : c->steps;
        break;
    case SET_LIMIT:
        if (dir > 0)
            c->limit = c->limit && c->limit * 2 < 60000 ? c->limit * 2 : 0;
        else
            c->limit = c->limit ? (c->limit / 2 < 1 ? 1 : c->limit / 2) : 30000;
        break;
    case SET_LR:
        c->lr = dir > 0 ? (c->lr * 2 > s->max ? s->max : c->lr * 2)
                        : (c->lr / 2 < s->tiny ? c->lr : c->lr / 2);
        break;
    case SET_AUGMENT: {
        unsigned all = 0; /* every combination of the names, in turn */
        for (const SettingName *n = s->names; n->name; n++)
            all |= (unsigned)n->value;
        c->augment = (c->augment + (dir > 0 ? 1u : all)) & all;
        break;
    }
    case SET_RANKS: {
        int v = (int)step_long(t->set.ranks, dir, lo, hi);
        if (v > 1 && ranks_refused(t))
            return;
        t->set.ranks = v;
        break;
    }
    case SET_SEED: c->seed = dir < 0 && c->seed == 0 ? 0 : c->seed + (uint64_t)(int64_t)dir; break;
    case SET_GEMM: { /* the paths in turn */
        int n = 0, at = 0;
        for (const SettingName *p = s->names; p->name; p++, n++)
            if (p->value == c->gemm)
                at = n;
        if (n > 0)
            c->gemm = s->names[(at + (dir > 0 ? 1 : n - 1)) % n].value;
        break;
    }
    default:
        tui_message(t, 0, "type the data directory: press c, then Enter");
        return;
    }
    after_change(t, i);
}

/* Sets setting i from typed text, as the settings file reads it (the same
 * ranges and messages); returns 0 or -1 with a message. */
int editor_type(Tui *t, int i, const char *text)
{
    char err[256];
    TuiSettings u = t->set;

    if (settings_set_text(&u, editor_name(i), text, err, sizeof err) != 0) {
        tui_message(t, 1, "%s", err);
        return -1;
    }
    if (i == SET_RANKS && u.ranks > 1 && ranks_refused(t))
        return -1;
    t->set = u;
    settings_fix(&t->set);
    after_change(t, i);
    return 0;
}

/* On a setting whose value the panel cuts: the whole value, below. */
void editor_show_whole(Tui *t)
{
    char next[4200], last[4200];
    int w = layout_settings_value_cols(&t->lay);

    editor_format(t, t->sel, &t->set.cfg, t->set.data, t->set.ranks, next, sizeof next);
    editor_format(t, t->sel, &t->rv.cfg, t->rv.data_dir, t->rv.ranks, last, sizeof last);
    int cut_last = t->rv.seq && fmt_cols(last) > w;
    if (fmt_cols(next) > w || cut_last)
        tui_message(t, 0, "%s: next run %s%s%s", editor_name(t->sel), next,
                    cut_last ? ", last run " : "", cut_last ? last : "");
}
