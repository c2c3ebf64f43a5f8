/*
 * fuzz_options.c: libFuzzer target for the command line parser.
 *
 * The input, cut at NUL bytes, is argv[1..] (argv[0] is "cnntop"; at most
 * FUZZ_MAX_ARGS words).  options_parse() must return 0 or 2 without a
 * crash; on 2 it must have written a message, and on 0 every setting must
 * lie in the range the engine accepts (settings_check_config, the walk of
 * the settings table engine_new makes), so that nothing the parser lets
 * through can reach the engine out of range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "test_commands.h"

#define FUZZ_MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_options: contract broken: %s\n", what);
    abort();
}

static void check_list(const int *list, int n, int lo, int hi)
{
    if (n < 0 || n > OPT_MAX_LIST)
        fuzz_fail("list length out of range");
    for (int i = 0; i < n; i++)
        if (list[i] < lo || list[i] > hi)
            fuzz_fail("list value out of range");
}

static void check_options(const Options *o)
{
    const RunConfig *c = &o->cfg;
    char aug[64], err[512];

    if (o->cmd < CMD_TUI || o->cmd >= CMD_COUNT)
        fuzz_fail("command out of range");
    if (settings_check_config(c, err, sizeof err) != 0)
        fuzz_fail(err);
    if (o->runs < 1 || o->warmup < 0 || o->n_positional > OPT_MAX_POSITIONAL)
        fuzz_fail("runs, warmup or positional count out of range");
    check_list(o->batch_list, o->n_batch, 1, CN_MAX_BATCH);
    check_list(o->workers_list, o->n_workers, 0, CN_MAX_WORKERS);
    check_list(o->threads_list, o->n_threads, 1, CN_MAX_THREADS);
    options_format_augment(c->augment, aug, sizeof aug);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *argv[FUZZ_MAX_ARGS + 2];
    char arg0[] = "cnntop", err[512] = "";
    int argc = 1;

    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = arg0;
    for (char *p = buf; p <= buf + size && argc <= FUZZ_MAX_ARGS; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    Options o;
    int rc = options_parse(&o, &test_commands, argc, argv, err, sizeof err);
    if (rc == 2 && !err[0])
        fuzz_fail("error without a message");
    else if (rc == 0)
        check_options(&o);
    else if (rc != 2)
        fuzz_fail("return value neither 0 nor 2");
    free(buf);
    return 0;
}
