/*
 * fuzz_ckpt_seed.c: writes a valid checkpoint of the freshly initialised
 * reference model to argv[1], the seed that lets fuzz_checkpoint reach the
 * checks past the header (sizes, checksum, what each field means: it
 * must pass them all, Adam's steps covering the epochs begun included).
 * About 5 MB, so it is made
 * when fuzzing, not kept in the source tree.
 */
#include <stdio.h>

#include "engine/checkpoint.h"

int main(int argc, char **argv)
{
    Params ps = {0};
    CkptMeta meta = {.epochs_done = 1, .epoch_pos = 64, .seed = 1};
    char err[512];
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_ckpt_seed FILE\n");
        return 2;
    }
    rc = params_init(&ps, 1);
    ps.adam_t = 2; /* one step for the epoch done, one for the one begun */
    if (rc == 0)
        rc = checkpoint_save(argv[1], &ps, &meta, err, sizeof err);
    else
        snprintf(err, sizeof err, "params_init failed");
    params_done(&ps);
    if (rc != 0) {
        fprintf(stderr, "fuzz_ckpt_seed: %s\n", err);
        return 1;
    }
    return 0;
}
