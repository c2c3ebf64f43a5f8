/*
 * fuzz_checkpoint.c: libFuzzer target for the checkpoint loader.
 *
 * Each input is a checkpoint file's bytes, put in a memfd and read back by
 * checkpoint_load() through its /proc/self/fd path, so fileio_read_all()
 * runs as it does on a real file.  The loader must return without a crash,
 * and its contract in checkpoint.h is checked: on error the message is one
 * line and the Params are unchanged (compared against a copy); on success
 * the input had exactly checkpoint_size() bytes.
 *
 * A valid checkpoint of the reference model is about 5 MB, too big to keep
 * in the source tree; .ci/fuzz writes one with fuzz_ckpt_seed into the
 * working corpus before it fuzzes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Params ps;    /* what the loader writes into */
static Params copy;  /* ps as it was before the last call */
static int mfd = -1; /* holds the input */
static char path[64];

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_checkpoint: contract broken: %s\n", what);
    abort();
}

static void params_copy(Params *to, const Params *from)
{
    memcpy(to->params, from->params, from->nfloats * sizeof(float));
    memcpy(to->adam_m, from->adam_m, from->nfloats * sizeof(float));
    memcpy(to->adam_v, from->adam_v, from->nfloats * sizeof(float));
    memcpy(to->running, from->running, from->nrunning * sizeof(float));
    to->adam_t = from->adam_t;
}

static int params_same(const Params *a, const Params *b)
{
    return !memcmp(a->params, b->params, a->nfloats * sizeof(float)) &&
           !memcmp(a->adam_m, b->adam_m, a->nfloats * sizeof(float)) &&
           !memcmp(a->adam_v, b->adam_v, a->nfloats * sizeof(float)) &&
           !memcmp(a->running, b->running, a->nrunning * sizeof(float)) &&
           a->adam_t == b->adam_t;
}

static void cleanup(void)
{
    params_done(&ps);
    params_done(&copy);
    if (mfd >= 0)
        close(mfd);
}

static void setup(void)
{
    if (params_init(&ps, 1) != 0 || params_init(&copy, 1) != 0)
        fuzz_fail("params_init");
    if ((mfd = memfd_create("fuzz_checkpoint", MFD_CLOEXEC)) < 0)
        fuzz_fail("memfd_create");
    snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    CkptMeta meta;
    char err[1024] = "";

    if (mfd < 0)
        setup();
    if (ftruncate(mfd, 0) != 0 || pwrite(mfd, data, size, 0) != (ssize_t)size)
        fuzz_fail("cannot fill the memfd");
    int rc = checkpoint_load(path, &ps, &meta, err, sizeof err);
    if (rc != 0) {
        if (!err[0] || strchr(err, '\n'))
            fuzz_fail("error message empty or not one line");
        if (!params_same(&ps, &copy))
            fuzz_fail("parameters changed by a failed load");
        return 0;
    }
    if (size != checkpoint_size())
        fuzz_fail("accepted a checkpoint of the wrong size");
    params_copy(&copy, &ps);
    return 0;
}
