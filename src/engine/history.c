/*
 * history.c: bounded whole-run history (see history.h).
 */
#include <string.h>

#include "engine/history.h"

void history_init(History *h)
{
    memset(h, 0, sizeof *h);
    h->stride = 1;
}

/* b <- the merge of a (earlier) and b (later), each covering `wa` and `wb`
 * raw samples. */
static void merge(const Sample *a, Sample *b, int wa, int wb)
{
    float fa = (float)wa / (float)(wa + wb), fb = 1.0f - fa;

    b->images_per_s = fa * a->images_per_s + fb * b->images_per_s;
    b->data_wait_share = fa * a->data_wait_share + fb * b->data_wait_share;
    if (a->queue_fill >= 0 && b->queue_fill >= 0)
        b->queue_fill = fa * a->queue_fill + fb * b->queue_fill;
}

void history_add(History *h, const Sample *s)
{
    if (h->pending == 0)
        h->acc = *s;
    else {
        Sample later = *s;
        merge(&h->acc, &later, h->pending, 1);
        h->acc = later;
    }
    if (++h->pending < h->stride)
        return;
    h->pending = 0;
    if (h->n == HISTORY_CAP) {
        for (int i = 0; i < HISTORY_CAP / 2; i++) {
            Sample b = h->s[2 * i + 1];
            merge(&h->s[2 * i], &b, 1, 1);
            h->s[i] = b;
        }
        h->n = HISTORY_CAP / 2;
        h->stride *= 2;
        h->gen++;
    }
    h->s[h->n++] = h->acc;
}
