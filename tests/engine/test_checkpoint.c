/*
 * test_checkpoint.c: a checkpoint's every field, each made wrong under a
 * valid CRC, must be refused by name before anything is used.
 *
 * Generated cases: each count of checkpoint_fields[] at its bounds and just
 * past them; every byte of the header outside those counts flipped; one
 * float of every tensor of every block made NaN, infinite, or negative.
 * A good checkpoint reloads bit for bit.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "engine/checkpoint.h"
#include "cnntop/engine.h"
#include "nn/params.h"

#define HEADER 88
static char path[256];
static unsigned char *good;
static size_t good_len;

static void put_le(unsigned char *p, int bytes, uint64_t v)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void recrc(unsigned char *b, size_t len)
{
    put_le(b + len - 4, 4, (uint32_t)crc32(0L, b, (uInt)(len - 4)));
}

/* Loads b (CRC made valid) into one Params kept for every case; returns
 * checkpoint_load()'s code, message in err. */
static int load(unsigned char *b, char *err, size_t errlen)
{
    static Params ps;
    static int fd = -1;
    CkptMeta meta;

    if (fd < 0 && ((fd = open(path, O_WRONLY)) < 0 || params_init(&ps, 1) != 0))
        return 98;
    recrc(b, good_len);
    /* the same length each time: no truncation, no fsync */
    if (pwrite(fd, b, good_len, 0) != (ssize_t)good_len) {
        perror(path);
        return 99;
    }
    err[0] = '\0';
    return checkpoint_load(path, &ps, &meta, err, errlen);
}

/* A copy of the good checkpoint with field f set to v. */
static unsigned char *with_field(int f, uint64_t v)
{
    unsigned char *b = malloc(good_len);
    const CkptField *d = &checkpoint_fields[f];

    memcpy(b, good, good_len);
    put_le(b + d->off, d->bytes, v);
    return b;
}

static void test_counts(void)
{
    char err[512];

    for (int f = 0; f < CKF_COUNT; f++) {
        const CkptField *d = &checkpoint_fields[f];
        uint64_t top = d->bytes == 4 ? UINT32_MAX : UINT64_MAX;
        uint64_t ok[] = {d->lo, d->hi}, bad[4];
        int nbad = 0;
        if (d->lo > 0)
            bad[nbad++] = d->lo - 1;
        if (d->hi < top) {
            bad[nbad++] = d->hi + 1;
            bad[nbad++] = top;                   /* -1 read as signed */
            bad[nbad++] = (uint64_t)1 << (8 * d->bytes - 1); /* most negative */
        }
        for (int i = 0; i < 2; i++) {
            unsigned char *b = with_field(f, ok[i]);
            if (f == CKF_EPOCHS_DONE || f == CKF_EPOCH_POS) /* steps enough for them */
                put_le(b + checkpoint_fields[CKF_ADAM_T].off, 8, CN_MAX_ADAM_STEPS);
            int rc = load(b, err, sizeof err);
            if (rc != 0)
                fprintf(stderr, "%s = %llu refused: %s\n", d->name, (unsigned long long)ok[i], err);
            CHECK_INT(rc, ==, 0);
            free(b);
        }
        for (int i = 0; i < nbad; i++) {
            unsigned char *b = with_field(f, bad[i]);
            int rc = load(b, err, sizeof err);
            CHECK_INT(rc, ==, -CN_EFORMAT);
            CHECK_STR_HAS(err, d->name);
            CHECK_STR_HAS(err, "out of range");
            free(b);
        }
    }
    /* An epoch begun without an Adam step. */
    unsigned char *b = with_field(CKF_EPOCH_POS, 64);
    put_le(b + checkpoint_fields[CKF_ADAM_T].off, 8, 0);
    CHECK_INT(load(b, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "adam_t is 0, fewer than the 1 epochs begun");
    put_le(b + checkpoint_fields[CKF_EPOCHS_DONE].off, 8, 5);
    put_le(b + checkpoint_fields[CKF_ADAM_T].off, 8, 5);
    CHECK_INT(load(b, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "fewer than the 6 epochs begun");
    put_le(b + checkpoint_fields[CKF_ADAM_T].off, 8, 6);
    CHECK_INT(load(b, err, sizeof err), ==, 0);
    free(b);
}

/* Whether byte i of the header belongs to one of the counts. */
static int in_counts(size_t i)
{
    for (int f = 0; f < CKF_COUNT; f++)
        if (i >= checkpoint_fields[f].off && i < checkpoint_fields[f].off + checkpoint_fields[f].bytes)
            return 1;
    return 0;
}

/* The rest of the header (magic, version, model, tensor sizes): any bit
 * flipped there is refused. */
static void test_header_bytes(void)
{
    char err[512];
    size_t end = HEADER + 4 * (MODEL_NTENSORS + MODEL_NRUNNING);

    for (size_t i = 0; i < end; i++) {
        if (in_counts(i))
            continue;
        int bit = (int)(i % 8); /* a different bit in each byte */
        good[i] ^= (unsigned char)(1u << bit);
        int rc = load(good, err, sizeof err);
        good[i] ^= (unsigned char)(1u << bit);
        if (rc == 0)
            fprintf(stderr, "byte %zu bit %d flipped: accepted\n", i, bit);
        CHECK(rc == -CN_EFORMAT);
    }
}

/* One float of each tensor of each block: NaN and infinity are refused
 * everywhere, a negative value where a variance or Adam's v is. */
static void test_floats(void)
{
    static const char *const blocks[] = {"parameter", "running statistic", "Adam m", "Adam v"};
    const float nan = NAN, inf = INFINITY, neg = -1.0f;
    char err[512];
    size_t off = HEADER + 4 * (MODEL_NTENSORS + MODEL_NRUNNING);

    for (int blk = 0; blk < 4; blk++) {
        int running = blk == 1, n = running ? MODEL_NRUNNING : MODEL_NTENSORS;
        for (int t = 0; t < n; t++) {
            const TensorDesc *d = running ? &params_running[t] : &params_tensors[t];
            size_t numel = params_numel(d), at = off + 4 * (numel - 1); /* the last element */
            int nonneg = blk == 3 || strstr(d->name, "running_var");
            const float *vals[] = {&nan, &inf, &neg};
            unsigned char keep[4];
            memcpy(keep, good + at, 4);
            for (int k = 0; k < 3; k++) {
                memcpy(good + at, vals[k], 4);
                int rc = load(good, err, sizeof err);
                memcpy(good + at, keep, 4);
                if (k < 2 || nonneg) {
                    CHECK_INT(rc, ==, -CN_EFORMAT);
                    CHECK_STR_HAS(err, blocks[blk]);
                    CHECK_STR_HAS(err, d->name);
                } else
                    CHECK_INT(rc, ==, 0);
            }
            off += 4 * numel;
        }
    }
    CHECK_INT(off + 4, ==, good_len);
}

int main(void)
{
    Params ps;
    CkptMeta meta = {.epochs_done = 0, .epoch_pos = 0, .seed = 7};
    char err[256];

    snprintf(path, sizeof path, "%s/cnntop-ckpt-%ld.ckpt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    if (params_init(&ps, 3) != 0)
        check_skip("out of memory");
    ps.adam_t = 1000;
    CHECK_INT(checkpoint_save(path, &ps, &meta, err, sizeof err), ==, 0);
    params_done(&ps);
    good_len = checkpoint_size();
    good = malloc(good_len);
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(good, 1, good_len, f) == good_len);
    if (f)
        fclose(f);
    test_counts();
    test_header_bytes();
    test_floats();
    free(good);
    unlink(path);
    return check_report();
}
