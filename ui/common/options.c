/*
 * options.c: parsing the command line against option_table.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/fileio.h"
#include "common/options.h"

#define TUI (1u << CMD_TUI)
#define RUN (1u << CMD_RUN)
#define EVAL (1u << CMD_EVAL)
#define SWEEP (1u << CMD_SWEEP)
#define EVENTS (1u << CMD_EVENTS)
#define CALIB (1u << CMD_CALIBRATE)
#define EXEC (1u << CMD_EXEC)
#define TRAIN (TUI | RUN | SWEEP)

const OptionDesc option_table[] = {
    {"--data", "DIR", "directory with the four MNIST-format IDX files (plain or .gz)", TRAIN | EVAL},
    {"--batch", "N", "images per training step (default 64; a list for sweep)", TRAIN | EVAL},
    {"--epochs", "N", "epochs to train (default 1)", TRAIN},
    {"--steps", "N", "train N optimiser steps instead of whole epochs", TRAIN},
    {"--limit", "N", "train on the first N training images only", TRAIN},
    {"--test-limit", "N", "evaluate on the first N test images only", TRAIN | EVAL},
    {"--threads", "N", "compute threads (default: the cores this process may use)", TRAIN | EVAL},
    {"--workers", "N", "loader threads; 0 loads inline on the trainer (default 0)", TRAIN},
    {"--prefetch", "N", "loader queue capacity in batches (default 2 per worker)", TRAIN},
    {"--augment", "LIST", "shift, rotate, elastic or a comma list of them (default none)", TRAIN},
    {"--lr", "X", "Adam learning rate (default 0.001)", TRAIN},
    {"--seed", "N", "seed for initial weights, shuffling and dropout (default 1)", TRAIN},
    {"--save", "FILE", "write a checkpoint when training ends", RUN},
    {"--load", "FILE", "start from a checkpoint (required for eval)", RUN | EVAL},
    {"--events", "LIST", "counters to read (-e; a leading + adds to the defaults)", TRAIN | EVENTS | EXEC},
    {"--export", "FILE", "write the run record: .json, .csv or .md by extension", TRAIN},
    {"--force", NULL, "overwrite an existing export file", TRAIN},
    {"--trace", "FILE", "write a Chrome trace-event timeline (JSON)", RUN},
    {"--runs", "N", "repeat each run N times and report mean and spread (default 1)", RUN | SWEEP},
    {"--warmup", "N", "runs to do and discard before the measured ones (default 0)", RUN | SWEEP},
    {"--vary-seed", NULL, "give each repeat its own seed", RUN | SWEEP},
    {"--eval-every", "N", "evaluate every N steps as well as at each epoch's end", RUN | SWEEP},
    {"--target-accuracy", "X", "report the time to reach this test accuracy (0..1)", RUN | SWEEP},
    {"--budget", "SECONDS", "bound a sweep's total time; say what was skipped", SWEEP},
    {"--autostart", NULL, "start the first run at once", TUI},
    {"--no-color", NULL, "draw without colours (NO_COLOR does the same)", TUI},
    {"--history", "FILE", "keep the run history in FILE across sessions", TUI},
    {"--all", NULL, "list every event libpfm4 can encode", EVENTS},
    {"--no-hook", NULL, "do not load the Python hook (no DataLoader figures)", EXEC},
    {"--progress", "REGEX", "read a figure (e.g. images/s) from the command's output lines", EXEC},
    {"--recalibrate", NULL, "measure again instead of using the cached figures", CALIB | RUN},
    {"--blas-kernel", "WHICH", "auto: OpenBLAS runs the kernel matching the CPU (default); "
     "openblas: its own choice", TRAIN | EVAL | CALIB},
};
const size_t option_count = sizeof option_table / sizeof option_table[0];

/* The commands, for the usage texts: synopsis and what each does. */
static const struct {
    Command cmd;
    const char *synopsis;  /* after "cnntop " */
    const char *what;
} command_table[] = {
    {CMD_TUI, "[options]", "the dashboard (needs a terminal)"},
    {CMD_RUN, "run [options]", "train the reference CNN, print a summary"},
    {CMD_EVAL, "eval --load FILE [options]", "evaluate a checkpoint on the test set"},
    {CMD_SWEEP, "sweep --batch LIST --workers LIST [options]",
     "run a grid of settings, recommend the fastest"},
    {CMD_REPORT, "report FILE.json...", "print stored runs side by side"},
    {CMD_EVENTS, "events [--all]", "the counters this machine can read"},
    {CMD_CALIBRATE, "calibrate [--recalibrate]", "measure the FMA peak, SGEMM rate and memory bandwidth"},
    {CMD_EXEC, "exec [options] -- CMD [ARGS...]", "profile any command's process tree by role"},
};
#define N_COMMANDS (sizeof command_table / sizeof command_table[0])

static const char *const command_names[CMD_COUNT] = {
    [CMD_TUI] = "dashboard", [CMD_RUN] = "run", [CMD_EVAL] = "eval", [CMD_SWEEP] = "sweep",
    [CMD_REPORT] = "report", [CMD_EVENTS] = "events", [CMD_CALIBRATE] = "calibrate",
    [CMD_EXEC] = "exec"};

/* One option's line; with `tags`, the commands it is for when it is not
 * for all that train. */
static void usage_option(FILE *f, const OptionDesc *d, int tags)
{
    char left[40], cmds[64] = "";

    snprintf(left, sizeof left, "%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
    if (tags && (d->cmds & ~EVAL) != TRAIN) {
        size_t n = 0;
        for (int c = 0; c < CMD_COUNT; c++)
            if ((d->cmds & (1u << c)) && command_names[c])
                n += (size_t)snprintf(cmds + n, sizeof cmds - n, "%s%s", n ? "," : " [",
                                      command_names[c]);
        if (n)
            snprintf(cmds + n, sizeof cmds - n, "]");
    }
    fprintf(f, "  %-22s %s%s\n", left, d->help, cmds);
}

void options_usage(FILE *f, Command cmd)
{
    size_t k = 0;

    while (k < N_COMMANDS && command_table[k].cmd != cmd)
        k++;
    if (cmd == CMD_TUI || k == N_COMMANDS) { /* every command, every option */
        for (size_t i = 0; i < N_COMMANDS; i++) {
            int n = fprintf(f, "%s cnntop %s", i ? "      " : "usage:", command_table[i].synopsis);
            if (n > 32)
                fprintf(f, "\n%32s", "");
            else
                fprintf(f, "%*s", 32 - n, "");
            fprintf(f, "%s\n", command_table[i].what);
        }
        fprintf(f, "%-32s%s\n       cnntop --help | --version\n\noptions:\n",
                "       cnntop COMMAND --help", "the options of one command");
        for (size_t i = 0; i < option_count; i++)
            usage_option(f, &option_table[i], 1);
    } else {
        fprintf(f, "usage: cnntop %s\n       %s\n", command_table[k].synopsis,
                command_table[k].what);
        int any = 0;
        for (size_t i = 0; i < option_count; i++)
            if (option_table[i].cmds & (1u << cmd)) {
                fprintf(f, "%s", any++ ? "" : "\noptions:\n");
                usage_option(f, &option_table[i], 0);
            }
    }
    fprintf(f, "\nDefault data: %s (Debian package dataset-fashion-mnist).\n"
               "See cnntop(1) for the screen, the figures, the export formats and exit codes.\n",
            CN_DEFAULT_DATA_DIR);
}

static int parse_long(const char *name, const char *s, long lo, long hi, long *out,
                      char *err, size_t errlen)
{
    char *end;

    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0') {
        snprintf(err, errlen, "%s: '%s' is not a whole number", name, s);
        return 2;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        /* A number too long for a long is out of range too, not "not a number". */
        if (hi == LONG_MAX)
            snprintf(err, errlen, "%s: %s is out of range (at least %ld)", name, s, lo);
        else
            snprintf(err, errlen, "%s: %s is out of range (%ld..%ld)", name, s, lo, hi);
        return 2;
    }
    *out = v;
    return 0;
}

/* A finite number in (0, hi]; one whose magnitude is below `tiny` (a
 * subnormal double, or a value the engine cannot use) is refused as too
 * small, not as out of range or not a number. */
static int parse_positive(const char *name, const char *s, double hi, double tiny,
                          const char *why_tiny, double *out, char *err, size_t errlen)
{
    char *end;

    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || isnan(v) || (isinf(v) && errno != ERANGE)) {
        snprintf(err, errlen, "%s: '%s' is not a finite number", name, s);
        return 2;
    }
    if (!(v > 0.0 && v <= hi) || isinf(v)) { /* 1e999 overflows: out of range too */
        if (isinf(hi))
            snprintf(err, errlen, "%s: %s is out of range (it must be positive and finite)",
                     name, s);
        else
            snprintf(err, errlen, "%s: %s is out of range (0..%g]", name, s, hi);
        return 2;
    }
    if (v < tiny) {
        snprintf(err, errlen, "%s: %s is too small: below %g, %s", name, s, tiny, why_tiny);
        return 2;
    }
    *out = v;
    return 0;
}

int options_parse_blas_kernel(const char *s, long *keep)
{
    if (!strcmp(s, "auto") || !strcmp(s, "openblas")) {
        *keep = !strcmp(s, "openblas");
        return 0;
    }
    return -1;
}

/* A path option's value: empty, too long, or (for a FILE) ending in / is
 * refused here, before anything runs. */
static int check_path_arg(const OptionDesc *d, const char *v, char *err, size_t errlen)
{
    int file = !strcmp(d->arg, "FILE");
    char why[256];

    if (!file && !strcmp(d->arg, "DIR") && *v && v[strlen(v) - 1] == '/')
        return 0; /* a directory may end in / */
    if (!file && strcmp(d->arg, "DIR"))
        return 0;
    if (fileio_check_path(v, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "%s: %s", d->name, *v || file ? why : "\"\": empty directory name");
    return 2;
}

static const OptionDesc *find_option(const char *name)
{
    if (!strcmp(name, "-e"))
        name = "--events";
    for (size_t i = 0; i < option_count; i++)
        if (strcmp(option_table[i].name, name) == 0)
            return &option_table[i];
    return NULL;
}

static const struct { const char *name; unsigned bit; } augment_names[] = {
    {"shift", CN_AUG_SHIFT}, {"rotate", CN_AUG_ROTATE}, {"elastic", CN_AUG_ELASTIC},
};

int options_parse_augment(const char *s, unsigned *out, char *err, size_t errlen)
{
    unsigned bits = 0;

    if (!strcmp(s, "none")) {
        *out = 0;
        return 0;
    }
    while (*s) {
        size_t len = strcspn(s, ","), k;
        for (k = 0; k < sizeof augment_names / sizeof augment_names[0]; k++)
            if (strlen(augment_names[k].name) == len && !strncmp(s, augment_names[k].name, len))
                break;
        if (k == sizeof augment_names / sizeof augment_names[0]) {
            snprintf(err, errlen, "--augment: unknown augmentation '%.*s' (shift, rotate, elastic)",
                     (int)len, s);
            return -1;
        }
        bits |= augment_names[k].bit;
        s += len + (s[len] == ',');
    }
    *out = bits;
    return 0;
}

void options_format_augment(unsigned aug, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t k = 0; k < sizeof augment_names / sizeof augment_names[0]; k++)
        if (aug & augment_names[k].bit)
            n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
                                  augment_names[k].name);
    if (!aug)
        snprintf(buf, len, "none");
}

/* "64,128,256" -> list; a single number is a list of one. */
static int parse_list(const char *name, const char *v, long lo, long hi, int *list, int *n,
                      char *err, size_t errlen)
{
    char item[32];

    *n = 0;
    while (*v) {
        size_t len = strcspn(v, ",");
        long x;
        if (*n == OPT_MAX_LIST) {
            snprintf(err, errlen, "%s: more than %d values", name, OPT_MAX_LIST);
            return 2;
        }
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), v);
        if (parse_long(name, item, lo, hi, &x, err, errlen))
            return 2;
        list[(*n)++] = (int)x;
        v += len + (v[len] == ',');
    }
    if (*n == 0) {
        snprintf(err, errlen, "%s: empty list", name);
        return 2;
    }
    return 0;
}

/* Applies one option with its value ("" for a flag) to o. */
static int apply(Options *o, const char *name, const char *v, char *err, size_t errlen)
{
    RunConfig *c = &o->cfg;
    long n = 0;
    int rc = 0, sweep = o->cmd == CMD_SWEEP;

    if (!strcmp(name, "--data")) {
        c->data_dir = v;
        o->set_mask |= OPTSET_DATA;
    } else if (!strcmp(name, "--save"))
        o->save = v;
    else if (!strcmp(name, "--load"))
        o->load = v;
    else if (!strcmp(name, "--events"))
        o->events = v;
    else if (!strcmp(name, "--export"))
        o->export_path = v;
    else if (!strcmp(name, "--trace"))
        o->trace = v;
    else if (!strcmp(name, "--history"))
        o->history = v;
    else if (!strcmp(name, "--force"))
        o->force = 1;
    else if (!strcmp(name, "--vary-seed"))
        o->vary_seed = 1;
    else if (!strcmp(name, "--autostart"))
        o->autostart = 1;
    else if (!strcmp(name, "--no-color"))
        o->no_color = 1;
    else if (!strcmp(name, "--all"))
        o->all = 1;
    else if (!strcmp(name, "--progress"))
        o->progress = v;
    else if (!strcmp(name, "--no-hook"))
        o->no_hook = 1;
    else if (!strcmp(name, "--recalibrate"))
        o->recalibrate = 1;
    else if (!strcmp(name, "--blas-kernel")) {
        long keep = 0;
        if (options_parse_blas_kernel(v, &keep) != 0) {
            snprintf(err, errlen, "--blas-kernel: '%s' is not auto or openblas", v);
            rc = 2;
        }
        o->blas_keep = (int)keep;
        o->set_mask |= OPTSET_BLAS;
    }
    else if (!strcmp(name, "--lr")) {
        rc = parse_positive(name, v, 10.0, FLT_MIN,
                            "the smallest normal float (every update would vanish)", &c->lr,
                            err, errlen);
        o->set_mask |= OPTSET_LR;
    } else if (!strcmp(name, "--target-accuracy")) {
        rc = parse_positive(name, v, 1.0, DBL_MIN, "a subnormal number", &o->target_accuracy,
                            err, errlen);
    } else if (!strcmp(name, "--budget")) {
        rc = parse_positive(name, v, HUGE_VAL, 1e-3, "a millisecond", &o->budget, err, errlen);
    } else if (!strcmp(name, "--batch")) {
        if (!(rc = parse_list(name, v, 1, CN_MAX_BATCH, o->batch_list, &o->n_batch, err, errlen)))
            c->batch = o->batch_list[0];
        if (!rc && o->n_batch > 1 && !sweep) {
            snprintf(err, errlen, "--batch: a list of values is for cnntop sweep");
            rc = 2;
        }
        o->set_mask |= OPTSET_BATCH;
    } else if (!strcmp(name, "--workers")) {
        if (!(rc = parse_list(name, v, 0, CN_MAX_WORKERS, o->workers_list, &o->n_workers, err,
                              errlen)))
            c->workers = o->workers_list[0];
        if (!rc && o->n_workers > 1 && !sweep) {
            snprintf(err, errlen, "--workers: a list of values is for cnntop sweep");
            rc = 2;
        }
        o->set_mask |= OPTSET_WORKERS;
    } else if (!strcmp(name, "--threads")) {
        if (!(rc = parse_list(name, v, 1, CN_MAX_THREADS, o->threads_list, &o->n_threads, err,
                              errlen)))
            c->threads = o->threads_list[0];
        if (!rc && o->n_threads > 1 && !sweep) {
            snprintf(err, errlen, "--threads: a list of values is for cnntop sweep");
            rc = 2;
        }
        o->set_mask |= OPTSET_THREADS;
    } else if (!strcmp(name, "--prefetch")) {
        if (!(rc = parse_long(name, v, 1, CN_MAX_PREFETCH, &n, err, errlen)))
            c->prefetch = (int)n;
        o->set_mask |= OPTSET_PREFETCH;
    } else if (!strcmp(name, "--augment")) {
        rc = options_parse_augment(v, &c->augment, err, errlen) ? 2 : 0;
        o->set_mask |= OPTSET_AUGMENT;
    } else if (!strcmp(name, "--epochs")) {
        if (!(rc = parse_long(name, v, 1, CN_MAX_EPOCHS, &n, err, errlen)))
            c->epochs = (int)n;
        o->set_mask |= OPTSET_EPOCHS;
    } else if (!strcmp(name, "--steps")) {
        rc = parse_long(name, v, 1, CN_MAX_STEPS, &c->steps, err, errlen);
        o->set_mask |= OPTSET_STEPS;
    } else if (!strcmp(name, "--limit")) {
        rc = parse_long(name, v, 1, CN_MAX_IMAGES, &c->limit, err, errlen);
        o->set_mask |= OPTSET_LIMIT;
    } else if (!strcmp(name, "--test-limit")) {
        rc = parse_long(name, v, 1, CN_MAX_IMAGES, &c->test_limit, err, errlen);
        o->set_mask |= OPTSET_TEST_LIMIT;
    } else if (!strcmp(name, "--runs")) {
        if (!(rc = parse_long(name, v, 1, 10000, &n, err, errlen)))
            o->runs = (int)n;
    } else if (!strcmp(name, "--warmup")) {
        if (!(rc = parse_long(name, v, 0, 10000, &n, err, errlen)))
            o->warmup = (int)n;
    } else if (!strcmp(name, "--eval-every")) {
        rc = parse_long(name, v, 1, CN_MAX_STEPS, &o->eval_every, err, errlen);
    } else if (!strcmp(name, "--seed")) {
        unsigned long long s;
        char *end;
        errno = 0;
        s = strtoull(v, &end, 10);
        if (*v == '\0' || *end != '\0' || strchr(v, '-')) {
            snprintf(err, errlen, "--seed: '%s' is not a non-negative whole number", v);
            rc = 2;
        } else if (errno == ERANGE) {
            snprintf(err, errlen, "--seed: %s is out of range (0..%llu)", v, ULLONG_MAX);
            rc = 2;
        } else
            c->seed = (uint64_t)s;
        o->set_mask |= OPTSET_SEED;
    }
    return rc;
}

static Command command_of(const char *s)
{
    static const struct { const char *name; Command cmd; } cmds[] = {
        {"run", CMD_RUN}, {"eval", CMD_EVAL}, {"sweep", CMD_SWEEP}, {"report", CMD_REPORT},
        {"events", CMD_EVENTS}, {"calibrate", CMD_CALIBRATE}, {"exec", CMD_EXEC}, {"help", CMD_HELP},
        {"--help", CMD_HELP}, {"-h", CMD_HELP}, {"--version", CMD_VERSION}, {"-V", CMD_VERSION},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(s, cmds[i].name))
            return cmds[i].cmd;
    return CMD_TUI;
}

int options_parse(Options *o, int argc, char **argv, char *err, size_t errlen)
{
    int i = 1;
    const char *no_color = getenv("NO_COLOR");

    memset(o, 0, sizeof *o);
    engine_config_default(&o->cfg);
    o->cmd = CMD_TUI;
    o->runs = 1;
    o->argc = argc;
    o->argv = argv;
    if (no_color && *no_color)
        o->no_color = 1;
    if (argc > 1 && command_of(argv[1]) != CMD_TUI)
        o->cmd = command_of(argv[i++]);
    else if (argc > 1 && argv[1][0] != '-') {
        snprintf(err, errlen, "unknown command '%s' (see cnntop --help)", argv[1]);
        return 2;
    }
    for (; i < argc; i++) {
        char name[64];
        const char *a = argv[i], *eq = strchr(a, '='), *v = NULL;
        Command c = command_of(a);
        if (o->cmd == CMD_EXEC && (!strcmp(a, "--") || a[0] != '-')) {
            o->exec_argv = argv + i + !strcmp(a, "--"); /* argv[argc] is NULL */
            break;
        }
        if (c == CMD_HELP || c == CMD_VERSION) {
            o->help_for = o->cmd; /* `cnntop run --help`: run's own */
            o->cmd = c;
            return 0;
        }
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (o->cmd != CMD_REPORT) {
                snprintf(err, errlen, "unexpected argument '%s' (see cnntop --help)", a);
                return 2;
            }
            if (o->n_positional == OPT_MAX_POSITIONAL) {
                snprintf(err, errlen, "report: more than %d files", OPT_MAX_POSITIONAL);
                return 2;
            }
            o->positional[o->n_positional++] = a;
            continue;
        }
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        const OptionDesc *d = find_option(name);
        if (!d) {
            snprintf(err, errlen, "unknown option '%s' (see cnntop --help)", a);
            return 2;
        }
        if (!(d->cmds & (1u << o->cmd))) {
            snprintf(err, errlen, "%s does not apply to %s", name,
                     o->cmd == CMD_TUI ? "the dashboard" : argv[1]);
            return 2;
        }
        if (!d->arg) {
            if (eq) {
                snprintf(err, errlen, "%s takes no value", d->name);
                return 2;
            }
        } else if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else {
            snprintf(err, errlen, "%s needs a value (%s)", d->name, d->arg);
            return 2;
        }
        if (d->arg && check_path_arg(d, v, err, errlen) != 0)
            return 2;
        if (apply(o, d->name, v ? v : "", err, errlen) != 0)
            return 2;
    }
    if (o->cmd == CMD_EVAL && !o->load) {
        snprintf(err, errlen, "eval needs --load FILE");
        return 2;
    }
    if (o->cmd == CMD_EXEC && (!o->exec_argv || !o->exec_argv[0] || !o->exec_argv[0][0])) {
        snprintf(err, errlen, "exec needs a command: cnntop exec [options] -- CMD [ARGS...]");
        return 2;
    }
    if (o->cmd == CMD_REPORT && o->n_positional == 0) {
        snprintf(err, errlen, "report needs at least one FILE.json");
        return 2;
    }
    return 0;
}
