/*
 * loader_rate.c: samples per second of the loader alone (no training), for
 * W loader threads and an augmentation, on the real data.
 *
 *   loader_rate [DATA_DIR] -> one line per (augment, W):
 *   "augment none  W=2  samples/s 123456"
 *
 * The consumer takes batches of 64 as fast as they come and gives them back
 * at once, so the figure is what the loader can deliver; W = 0 is the
 * trainer preparing them inline.  Each figure is the best of 3 runs of
 * about 0.5 s (the machine is noisy; the best is the least disturbed).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cnntop/engine.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "prof/profile.h"

static double rate(const Dataset *ds, unsigned aug, int workers)
{
    LoaderSrc src = {.images = ds->train_images, .labels = ds->train_labels, .n = ds->n_train,
                     .rows = ds->rows, .cols = ds->cols, .seed = 1, .augment = aug};
    double best = 0.0;

    for (int rep = 0; rep < 3; rep++) {
        Loader *l;
        long samples = 0;
        if (loader_new(&l, &src, 64, workers, 0, 0, 0, NULL) != 0)
            return 0.0;
        Batch b;
        for (int i = 0; i < 8; i++) { /* warm up: slots allocated and touched */
            loader_next(l, &b, NULL);
            loader_release(l, &b);
        }
        double t0 = timer_now(), t;
        do {
            loader_next(l, &b, NULL);
            samples += b.n;
            loader_release(l, &b);
            t = timer_now() - t0;
        } while (t < 0.5);
        loader_free(l);
        if (samples / t > best)
            best = samples / t;
    }
    return best;
}

int main(int argc, char **argv)
{
    Dataset ds;
    char err[512];
    static const unsigned augs[] = {0, CN_AUG_ELASTIC};
    static const char *const names[] = {"none", "elastic"};
    static const int ws[] = {0, 1, 2, 4};

    if (dataset_load(&ds, argc > 1 ? argv[1] : CN_DEFAULT_DATA_DIR, err, sizeof err) != 0) {
        fprintf(stderr, "loader_rate: %s\n", err);
        return 1;
    }
    for (int a = 0; a < 2; a++)
        for (int w = 0; w < 4; w++)
            printf("augment %-8s W=%d  samples/s %10.0f\n", names[a], ws[w],
                   rate(&ds, augs[a], ws[w]));
    dataset_free(&ds);
    return 0;
}
