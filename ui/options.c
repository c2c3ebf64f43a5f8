/*
 * options.c: parsing the command line against option_table.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define RUN (1u << CMD_RUN)
#define EVAL (1u << CMD_EVAL)

const OptionDesc option_table[] = {
    {"--data", "DIR", "directory with the four MNIST-format IDX files (plain or .gz)", RUN | EVAL},
    {"--batch", "N", "images per training step (default 64)", RUN | EVAL},
    {"--epochs", "N", "epochs to train (default 1)", RUN},
    {"--steps", "N", "train N optimiser steps instead of whole epochs", RUN},
    {"--limit", "N", "train on the first N training images only", RUN},
    {"--test-limit", "N", "evaluate on the first N test images only", RUN | EVAL},
    {"--threads", "N", "compute threads (default: the cores this process may use)", RUN | EVAL},
    {"--lr", "X", "Adam learning rate (default 0.001)", RUN},
    {"--seed", "N", "seed for initial weights, shuffling and dropout (default 1)", RUN},
    {"--save", "FILE", "write a checkpoint when training ends", RUN},
    {"--load", "FILE", "start from a checkpoint (required for eval)", RUN | EVAL},
};
const size_t option_count = sizeof option_table / sizeof option_table[0];

void options_usage(FILE *f)
{
    fprintf(f,
            "usage: cnntop run [options]     train the reference CNN, print a summary\n"
            "       cnntop eval --load FILE [options]\n"
            "                                evaluate a checkpoint on the test set\n"
            "       cnntop --help | --version\n\n"
            "options:\n");
    for (size_t i = 0; i < option_count; i++) {
        const OptionDesc *d = &option_table[i];
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
        fprintf(f, "  %-18s %s%s\n", left, d->help,
                (d->cmds & RUN) && !(d->cmds & EVAL) ? " [run]" : "");
    }
    fprintf(f, "\nDefault data: %s (Debian package dataset-fashion-mnist).\n"
               "See cnntop(1) for the figures, the checkpoint format and exit codes.\n",
            CN_DEFAULT_DATA_DIR);
}

static int parse_long(const char *name, const char *s, long lo, long hi, long *out,
                      char *err, size_t errlen)
{
    char *end;

    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno == ERANGE) {
        snprintf(err, errlen, "%s: '%s' is not a whole number", name, s);
        return 2;
    }
    if (v < lo || v > hi) {
        snprintf(err, errlen, "%s: %ld is out of range (%ld..%ld)", name, v, lo, hi);
        return 2;
    }
    *out = v;
    return 0;
}

static int parse_double(const char *name, const char *s, double *out, char *err, size_t errlen)
{
    char *end;

    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        snprintf(err, errlen, "%s: '%s' is not a finite number", name, s);
        return 2;
    }
    *out = v;
    return 0;
}

static const OptionDesc *find_option(const char *name)
{
    for (size_t i = 0; i < option_count; i++)
        if (strcmp(option_table[i].name, name) == 0)
            return &option_table[i];
    return NULL;
}

/* Applies one option with its value to o. */
static int apply(Options *o, const char *name, const char *v, char *err, size_t errlen)
{
    RunConfig *c = &o->cfg;
    long n = 0;
    int rc = 0;

    if (!strcmp(name, "--data"))
        c->data_dir = v;
    else if (!strcmp(name, "--save"))
        o->save = v;
    else if (!strcmp(name, "--load"))
        o->load = v;
    else if (!strcmp(name, "--lr")) {
        rc = parse_double(name, v, &c->lr, err, errlen);
        if (!rc && !(c->lr > 0.0 && c->lr <= 10.0)) {
            snprintf(err, errlen, "--lr: %s is out of range (0..10]", v);
            rc = 2;
        }
    } else if (!strcmp(name, "--batch")) {
        if (!(rc = parse_long(name, v, 1, CN_MAX_BATCH, &n, err, errlen)))
            c->batch = (int)n;
    } else if (!strcmp(name, "--epochs")) {
        if (!(rc = parse_long(name, v, 1, 100000, &n, err, errlen)))
            c->epochs = (int)n;
    } else if (!strcmp(name, "--steps")) {
        rc = parse_long(name, v, 1, LONG_MAX, &c->steps, err, errlen);
    } else if (!strcmp(name, "--limit")) {
        rc = parse_long(name, v, 1, LONG_MAX, &c->limit, err, errlen);
    } else if (!strcmp(name, "--test-limit")) {
        rc = parse_long(name, v, 1, LONG_MAX, &c->test_limit, err, errlen);
    } else if (!strcmp(name, "--threads")) {
        if (!(rc = parse_long(name, v, 1, CN_MAX_THREADS, &n, err, errlen)))
            c->threads = (int)n;
    } else if (!strcmp(name, "--seed")) {
        long long s;
        char *end;
        errno = 0;
        s = strtoll(v, &end, 10);
        if (*v == '\0' || *end != '\0' || errno == ERANGE || s < 0) {
            snprintf(err, errlen, "--seed: '%s' is not a non-negative whole number", v);
            rc = 2;
        } else
            c->seed = (uint64_t)s;
    }
    return rc;
}

static Command command_of(const char *s)
{
    if (!strcmp(s, "run"))
        return CMD_RUN;
    if (!strcmp(s, "eval"))
        return CMD_EVAL;
    if (!strcmp(s, "--help") || !strcmp(s, "-h") || !strcmp(s, "help"))
        return CMD_HELP;
    if (!strcmp(s, "--version") || !strcmp(s, "-V"))
        return CMD_VERSION;
    return CMD_NONE;
}

int options_parse(Options *o, int argc, char **argv, char *err, size_t errlen)
{
    int i = 1;

    memset(o, 0, sizeof *o);
    engine_config_default(&o->cfg);
    o->cmd = CMD_NONE;
    if (argc > 1 && command_of(argv[1]) != CMD_NONE)
        o->cmd = command_of(argv[i++]);
    else if (argc > 1 && argv[1][0] != '-') {
        snprintf(err, errlen, "unknown command '%s' (see cnntop --help)", argv[1]);
        return 2;
    }
    for (; i < argc; i++) {
        char name[64];
        const char *a = argv[i], *eq = strchr(a, '='), *v;
        if (command_of(a) == CMD_HELP || command_of(a) == CMD_VERSION) {
            o->cmd = command_of(a);
            return 0;
        }
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        const OptionDesc *d = find_option(name);
        if (!d) {
            snprintf(err, errlen, "unknown option '%s' (see cnntop --help)", a);
            return 2;
        }
        if (o->cmd != CMD_NONE && !(d->cmds & (1u << o->cmd))) {
            snprintf(err, errlen, "%s does not apply to this command", name);
            return 2;
        }
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else {
            snprintf(err, errlen, "%s needs a value (%s)", name, d->arg);
            return 2;
        }
        if (apply(o, name, v, err, errlen) != 0)
            return 2;
    }
    if (o->cmd == CMD_EVAL && !o->load) {
        snprintf(err, errlen, "eval needs --load FILE");
        return 2;
    }
    return 0;
}
