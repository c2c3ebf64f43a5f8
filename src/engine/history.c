/*
 * history.c: bounded whole-run history in levels (see history.h).
 */
#include <math.h>
#include <string.h>

#include "engine/history.h"

void history_init(History *h)
{
    h->n = 0;
    memset(h->count, 0, sizeof h->count);
    h->gen = 0;
}

/* The mean of x (weight wx) and y (weight wy), leaving out a value that
 * has no weight or is not a number; y when neither counts. */
static float wmean(float x, double wx, float y, double wy)
{
    int hx = wx > 0 && isfinite(x), hy = wy > 0 && isfinite(y);

    if (hx && hy)
        return (float)(((double)x * wx + (double)y * wy) / (wx + wy));
    return hx ? x : y;
}

/* *out <- the merge of a (earlier) and b (later), adjacent in time; the
 * weights likewise.  out may be a or b. */
static void merge(const Sample *a, const HistWeight *wa, const Sample *b, const HistWeight *wb,
                  Sample *out, HistWeight *wout)
{
    Sample m = *b; /* t, step, images, loss, the settings: as of the span's end */
    HistWeight w;

    m.dt = a->dt + b->dt;
    m.images_per_s = wmean(a->images_per_s, a->dt, b->images_per_s, b->dt);
    m.data_wait_share = wmean(a->data_wait_share, wa->busy, b->data_wait_share, wb->busy);
    m.ipc = wmean(a->ipc, wa->cycles, b->ipc, wb->cycles);
    m.miss_rate = wmean(a->miss_rate, wa->refs, b->miss_rate, wb->refs);
    m.queue_fill = wa->fill_dt > 0 || wb->fill_dt > 0
                       ? wmean(a->queue_fill, wa->fill_dt, b->queue_fill, wb->fill_dt)
                       : -1.0f;
    w.busy = wa->busy + wb->busy;
    w.cycles = wa->cycles + wb->cycles;
    w.refs = wa->refs + wb->refs;
    w.fill_dt = wa->fill_dt + wb->fill_dt;
    *out = m;
    *wout = w;
}

/* The index of level L's first (oldest) sample. */
static int level_start(const History *h, int L)
{
    int i = 0;

    for (int k = HISTORY_LEVELS - 1; k > L; k--)
        i += h->count[k];
    return i;
}

/* Merges the `pairs` oldest pairs of level L in place into `pairs`
 * samples and closes the gap behind them. */
static void fold_pairs(History *h, int L, int pairs)
{
    int i0 = level_start(h, L);

    for (int k = 0; k < pairs; k++) {
        int a = i0 + 2 * k;
        merge(&h->s[a], &h->w[a], &h->s[a + 1], &h->w[a + 1], &h->s[i0 + k], &h->w[i0 + k]);
    }
    int from = i0 + 2 * pairs, to = i0 + pairs;
    memmove(&h->s[to], &h->s[from], (size_t)(h->n - from) * sizeof *h->s);
    memmove(&h->w[to], &h->w[from], (size_t)(h->n - from) * sizeof *h->w);
    h->n -= pairs;
    h->count[L] -= 2 * pairs;
    h->gen++;
}

void history_add(History *h, const Sample *s, const HistWeight *w)
{
    HistWeight in = w ? *w : (HistWeight){.busy = s->dt};

    if (!isfinite(s->data_wait_share))
        in.busy = 0;
    if (!isfinite(s->ipc))
        in.cycles = 0;
    if (!isfinite(s->miss_rate))
        in.refs = 0;
    in.fill_dt = s->queue_fill >= 0 ? s->dt : 0;
    h->s[h->n] = *s;
    h->w[h->n] = in;
    h->n++;
    h->count[0]++;
    for (int L = 0; L < HISTORY_LEVELS && h->count[L] >= 2 * HISTORY_KEEP; L++) {
        if (L == HISTORY_LEVELS - 1) { /* the top: coarser in place */
            fold_pairs(h, L, HISTORY_KEEP);
            h->count[L] += HISTORY_KEEP;
        } else { /* the oldest HISTORY_KEEP move up as half as many */
            fold_pairs(h, L, HISTORY_KEEP / 2);
            h->count[L + 1] += HISTORY_KEEP / 2;
        }
    }
}
