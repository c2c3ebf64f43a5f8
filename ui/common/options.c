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
#include "common/config.h"
#include "common/options.h"

#define TUI (1u << CMD_TUI)
#define RUN (1u << CMD_RUN)
#define EVAL (1u << CMD_EVAL)
#define SWEEP (1u << CMD_SWEEP)
#define EVENTS (1u << CMD_EVENTS)
#define CALIB (1u << CMD_CALIBRATE)
#define EXEC (1u << CMD_EXEC)
#define REPORT (1u << CMD_REPORT)
#define TRAIN (TUI | RUN | SWEEP)

/* The command line's own numbers, rows of the same shape as the settings
 * (offsets into Options), so that they are parsed and described alike. */
static const Setting option_numbers[] = {
    {.key = "runs", .what = "runs", .arg = "N", .type = SETTING_INT, .offset = offsetof(Options, runs),
     .min = 1, .max = CN_MAX_RUNS, .dflt = 1, .help = "repeat each run N times and report mean and spread"},
    {.key = "ranks", .what = "ranks", .arg = "N", .type = SETTING_INT,
     .offset = offsetof(Options, ranks), .min = 0, .max = CN_MAX_RANKS,
     .zero = "one process", .flags = SETTING_OPT_NONZERO,
     .help = "train as an MPI job of N ranks: runs mpirun -np N [--oversubscribe] --bind-to none "
             "cnntop run --dist mpi with these options (the dashboard: its runs' ranks, as the "
             "settings file's ranks)"},
    {.key = "warmup", .what = "warm-up runs", .arg = "N", .type = SETTING_INT,
     .offset = offsetof(Options, warmup), .min = 0, .max = CN_MAX_RUNS,
     .help = "runs to do and discard before the measured ones"},
    {.key = "target_accuracy", .what = "target accuracy", .arg = "X", .type = SETTING_REAL,
     .offset = offsetof(Options, target_accuracy), .min = 0, .max = 1, .tiny = DBL_MIN,
     .why_tiny = "a subnormal number", .zero = "none",
     .help = "report the time to reach this test accuracy"},
    {.key = "budget", .what = "budget", .arg = "SECONDS", .type = SETTING_REAL,
     .offset = offsetof(Options, budget), .min = 0, .max = INFINITY, .tiny = 1e-3,
     .why_tiny = "a millisecond", .zero = "none",
     .help = "bound a sweep's total time; say what was skipped"},
    {.key = NULL},
};

/* An option of its own. */
#define OPT(opt, a, h, cmd) {.name = (opt), .arg = (a), .help = (h), .cmds = (cmd)}
/* A setting's option: arg and help come from its settings row. */
#define SET(opt, key, cmd, bit) {.name = (opt), .cmds = (cmd), .setting = (key), .optset = (bit)}
/* ... one that cnntop sweep takes a comma list of. */
#define SET_LIST(opt, key, cmd, bit) \
    {.name = (opt), .help = "a list for sweep", .cmds = (cmd), .setting = (key), .optset = (bit), \
     .list = 1}
const OptionDesc option_table[] = {
    SET("--data", "data", TRAIN | EVAL, OPTSET_DATA),
    SET_LIST("--batch", "batch", TRAIN | EVAL, OPTSET_BATCH),
    SET("--epochs", "epochs", TRAIN, OPTSET_EPOCHS),
    SET("--steps", "steps", TRAIN, OPTSET_STEPS),
    SET("--limit", "limit", TRAIN, OPTSET_LIMIT),
    SET("--test-limit", "test_limit", TRAIN | EVAL, OPTSET_TEST_LIMIT),
    SET_LIST("--threads", "threads", TRAIN | EVAL, OPTSET_THREADS),
    SET_LIST("--workers", "workers", TRAIN, OPTSET_WORKERS),
    SET("--prefetch", "prefetch", TRAIN, OPTSET_PREFETCH),
    SET("--augment", "augment", TRAIN, OPTSET_AUGMENT),
    SET("--lr", "lr", TRAIN, OPTSET_LR),
    SET("--seed", "seed", TRAIN, OPTSET_SEED),
    SET("--gemm", "gemm", TRAIN | EVAL, OPTSET_GEMM),
    SET("--dist", "dist", RUN, 0),
    SET_LIST("--ranks", "ranks", TUI | RUN | SWEEP, OPTSET_RANKS),
    OPT("--mpirun-args", "ARGS",
        "more options for mpirun with --ranks, split on spaces (no quoting): e.g. "
        "'--mca coll_libnbc_iallreduce_algorithm 1' or '--host a,b'", RUN | SWEEP),
    SET("--bn", "bn", TRAIN, 0),
    OPT("--save", "FILE", "write a checkpoint when training ends", RUN),
    OPT("--load", "FILE", "start from a checkpoint (required for eval)", RUN | EVAL),
    OPT("--events", "LIST", "counters to read (-e; a leading + adds to the defaults)",
        TRAIN | EVENTS | EXEC),
    OPT("--export", "FILE", "write the run record: .json, .csv or .md by extension",
        TRAIN | EXEC | REPORT),
    OPT("--force", NULL, "overwrite an existing export file", TRAIN | EXEC | REPORT),
    OPT("--trace", "FILE", "write a Chrome trace-event timeline (JSON)", RUN),
    SET("--runs", "runs", RUN | SWEEP, 0),
    SET("--warmup", "warmup", RUN | SWEEP, 0),
    OPT("--vary-seed", NULL, "give each repeat its own seed", RUN | SWEEP),
    SET("--eval-every", "eval_every", RUN | SWEEP, 0),
    SET("--target-accuracy", "target_accuracy", RUN | SWEEP, 0),
    SET("--budget", "budget", SWEEP, 0),
    OPT("--autostart", NULL, "start the first run at once", TUI),
    OPT("--no-color", NULL, "draw without colours (NO_COLOR does the same)", TUI | EXEC),
    OPT("--history", "FILE", "keep the run history in FILE across sessions", TUI),
    OPT("--all", NULL, "list every event libpfm4 can encode", EVENTS),
    OPT("--no-hook", NULL, "do not load the Python hook (no DataLoader figures)", EXEC | SWEEP),
    OPT("--cmd", "TEMPLATE",
        "sweep a command: {batch} {workers} {threads} {ranks} (processes) from the lists, run "
        "by /bin/sh -c", SWEEP),
    OPT("--progress", "REGEX", "read a figure (e.g. images/s) from the command's output lines",
        EXEC),
    OPT("--layers", "FIRST:STEPS",
        "time the model's modules over optimizer steps FIRST.. (default 5:20; off: not)", EXEC),
    OPT("--no-dashboard", NULL, "print the summary only, even on a terminal (no live dashboard)",
        EXEC),
    OPT("--recalibrate", NULL, "measure again instead of using the cached figures", CALIB | RUN),
    SET("--blas-kernel", "blas_kernel", TRAIN | EVAL | CALIB, OPTSET_BLAS),
};
#undef OPT
#undef SET
#undef SET_LIST
const size_t option_count = sizeof option_table / sizeof option_table[0];

const CommandEntry *options_command(const CommandTable *t, Command cmd)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].cmd == cmd)
            return &t->v[i];
    return NULL;
}

/* The name a command goes by in messages and --help's tags. */
static const char *command_label(const CommandEntry *c)
{
    return c->name ? c->name : "dashboard";
}

/* The row of an option's setting and the table it is in. */
typedef enum RowTable { ROW_RUN, ROW_UI, ROW_OWN } RowTable;

static const Setting *option_row(const OptionDesc *d, RowTable *in)
{
    /* The command line's own rows before the front ends': --ranks is
     * Options.ranks, the settings file's ranks the dashboard's next run. */
    static const Setting *const tables[] = {settings_run, option_numbers, settings_ui};
    static const RowTable which[] = {ROW_RUN, ROW_OWN, ROW_UI};
    const Setting *s;

    for (int t = 0; d->setting && t < 3; t++)
        if ((s = settings_find(tables[t], d->setting)) != NULL) {
            *in = which[t];
            return s;
        }
    return NULL;
}

const Setting *options_setting(const OptionDesc *d)
{
    RowTable in = ROW_RUN;
    return option_row(d, &in);
}

int options_setting_bit(const char *key)
{
    for (size_t i = 0; i < option_count; i++)
        if (option_table[i].setting && !strcmp(option_table[i].setting, key))
            return option_table[i].optset;
    return 0;
}

const char *options_arg(const OptionDesc *d)
{
    const Setting *s = options_setting(d);
    return s ? s->arg : d->arg;
}

/* A setting's help line, from its row: "images per training step,
 * 1..65536 (default 64; a list for sweep)". */
static void setting_help(const OptionDesc *d, const Setting *s, char *buf, size_t len)
{
    char range[128] = "", dflt[128] = "";
    const char *extra = d->help ? d->help : "";

    if (s->type != SETTING_CHOICE && s->type != SETTING_PATH)
        settings_range_text(s, 1, range, sizeof range);
    if (s->type != SETTING_PATH)
        settings_default_text(s, 1, dflt, sizeof dflt);
    snprintf(buf, len, "%s%s%s%s%s%s%s%s", s->help, *range && s->type != SETTING_FLAGS ? "," : "",
             *range ? " " : "", range, *dflt || *extra ? " (" : "", dflt,
             *dflt && *extra ? "; " : "", extra);
    if (*dflt || *extra)
        snprintf(buf + strlen(buf), len - strlen(buf), ")");
}

/* One option's line; with `tags`, the commands it is for when it is not
 * for all that train. */
static void usage_option(FILE *f, const CommandTable *t, const OptionDesc *d, int tags)
{
    char left[40], cmds[64] = "", help[512];
    const Setting *s = options_setting(d);
    const char *arg = options_arg(d);

    snprintf(left, sizeof left, "%s%s%s", d->name, arg ? " " : "", arg ? arg : "");
    if (tags && (d->cmds & ~EVAL) != TRAIN) {
        size_t n = 0;
        for (size_t c = 0; c < t->n; c++)
            if ((d->cmds & (1u << t->v[c].cmd)) && t->v[c].synopsis)
                n += (size_t)snprintf(cmds + n, sizeof cmds - n, "%s%s", n ? "," : " [",
                                      command_label(&t->v[c]));
        if (n)
            snprintf(cmds + n, sizeof cmds - n, "]");
    }
    if (s)
        setting_help(d, s, help, sizeof help);
    else
        snprintf(help, sizeof help, "%s", d->help);
    fprintf(f, "  %-22s %s%s\n", left, help, cmds);
}

void options_usage(FILE *f, const CommandTable *t, Command cmd)
{
    const CommandEntry *one = options_command(t, cmd);

    if (cmd == CMD_TUI || !one || !one->synopsis) { /* every command, every option */
        int first = 1;
        for (size_t i = 0; i < t->n; i++) {
            if (!t->v[i].synopsis)
                continue;
            int n = fprintf(f, "%s cnntop %s", first ? "usage:" : "      ", t->v[i].synopsis);
            first = 0;
            if (n > 32)
                fprintf(f, "\n%32s", "");
            else
                fprintf(f, "%*s", 32 - n, "");
            fprintf(f, "%s\n", t->v[i].what);
        }
        fprintf(f, "%-32s%s\n       cnntop --help | --version\n\noptions:\n",
                "       cnntop COMMAND --help", "the options of one command");
        for (size_t i = 0; i < option_count; i++)
            usage_option(f, t, &option_table[i], 1);
    } else {
        fprintf(f, "usage: cnntop %s\n       %s\n", one->synopsis, one->what);
        int any = 0;
        for (size_t i = 0; i < option_count; i++)
            if (option_table[i].cmds & (1u << cmd)) {
                fprintf(f, "%s", any++ ? "" : "\noptions:\n");
                usage_option(f, t, &option_table[i], 0);
            }
    }
    fprintf(f, "\nDefault data: %s (Debian package dataset-fashion-mnist).\n"
               "See cnntop(1) for the screen, the figures, the export formats and exit codes.\n",
            CN_DEFAULT_DATA_DIR);
}

/* A path option's value: empty, too long, or (for a FILE) ending in / is
 * refused here, before anything runs. */
static int check_path_arg(const OptionDesc *d, const char *v, char *err, size_t errlen)
{
    const char *arg = options_arg(d);
    int file = !strcmp(arg, "FILE");
    char why[256];

    if (!file && !strcmp(arg, "DIR") && *v && v[strlen(v) - 1] == '/')
        return 0; /* a directory may end in / */
    if (!file && strcmp(arg, "DIR"))
        return 0;
    if (fileio_check_path(v, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "%s: %s", d->name, *v || file ? why : "\"\": empty directory name");
    return 2;
}

/* What an option's argument is, in words, for "-e: empty list". */
static const char *empty_what(const char *arg)
{
    static const struct { const char *arg, *what; } words[] = {
        {"LIST", "list"}, {"REGEX", "pattern"}, {"TEMPLATE", "command template"},
    };

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(arg, words[i].arg))
            return words[i].what;
    return "value";
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

int options_parse_augment(const char *s, unsigned *out, char *err, size_t errlen)
{
    return settings_parse_field(settings_find(settings_run, "augment"), "--augment", s, 1, out,
                                err, errlen) ? -1 : 0;
}

void options_format_augment(unsigned aug, char *buf, size_t len)
{
    settings_format_field(settings_find(settings_run, "augment"), &aug, buf, len);
}

/* The sweep list of an int setting that takes one (OptionDesc.list). */
static int *setting_list(Options *o, const char *key, int **n)
{
    if (!strcmp(key, "batch"))
        return *n = &o->n_batch, o->batch_list;
    if (!strcmp(key, "workers"))
        return *n = &o->n_workers, o->workers_list;
    if (!strcmp(key, "ranks"))
        return *n = &o->n_ranks, o->ranks_list;
    return *n = &o->n_threads, o->threads_list;
}

/* "64,128,256" -> the sweep list, each value parsed by the row (a single
 * number is a list of one); the setting itself gets the first. */
static int parse_list(Options *o, const OptionDesc *d, const Setting *s, void *field,
                      const char *v, char *err, size_t errlen)
{
    char item[32];
    int *n, *list = setting_list(o, d->setting, &n);

    *n = 0;
    if (*v && (*v == ',' || v[strlen(v) - 1] == ',' || strstr(v, ",,"))) {
        snprintf(err, errlen, "%s: '%.80s': an empty value in the list", d->name, v);
        return 2;
    }
    while (*v) {
        size_t len = strcspn(v, ",");
        if (*n == OPT_MAX_LIST) {
            snprintf(err, errlen, "%s: more than %d values", d->name, OPT_MAX_LIST);
            return 2;
        }
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), v);
        if (settings_parse_field(s, d->name, item, 1, &list[*n], err, errlen) != 0)
            return 2;
        (*n)++;
        v += len + (v[len] == ',');
    }
    if (*n == 0) {
        snprintf(err, errlen, "%s: empty list", d->name);
        return 2;
    }
    if (*n > 1 && o->cmd != CMD_SWEEP) {
        snprintf(err, errlen, "%s: a list of values is for cnntop sweep", d->name);
        return 2;
    }
    memcpy(field, &list[0], sizeof(int));
    return 0;
}

/* An option that sets a setting: parsed and bounded by its row. */
static int apply_setting(Options *o, const OptionDesc *d, const char *v, char *err,
                         size_t errlen)
{
    RowTable in = ROW_RUN;
    const Setting *s = option_row(d, &in);

    o->set_mask |= d->optset;
    /* blas_kernel is the one front-end setting (settings_ui) the command
     * line takes. */
    void *field = in == ROW_RUN ? (char *)&o->cfg + s->offset
                  : in == ROW_OWN ? (char *)o + s->offset : (void *)&o->blas_keep;
    if (d->list)
        return parse_list(o, d, s, field, v, err, errlen);
    if (settings_parse_field(s, d->name, v, 1, field, err, errlen) != 0)
        return 2;
    return 0;
}

/* Applies one option that is no setting: a path or a flag ("" for v). */
static void apply(Options *o, const char *name, const char *v)
{
    if (!strcmp(name, "--save"))
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
    else if (!strcmp(name, "--cmd"))
        o->sweep_cmd = v;
    else if (!strcmp(name, "--no-hook"))
        o->no_hook = 1;
    else if (!strcmp(name, "--no-dashboard"))
        o->no_dashboard = 1;
    else if (!strcmp(name, "--recalibrate"))
        o->recalibrate = 1;
    else if (!strcmp(name, "--mpirun-args"))
        o->mpirun_args = v;
}

/* The command a word names: a command's own word, or help and version
 * as options; CMD_TUI (the dashboard) for anything else. */
static Command command_of(const CommandTable *t, const char *s)
{
    static const struct { const char *name; Command cmd; } words[] = {
        {"--help", CMD_HELP}, {"-h", CMD_HELP}, {"--version", CMD_VERSION}, {"-V", CMD_VERSION},
    };
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].name && !strcmp(s, t->v[i].name))
            return t->v[i].cmd;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(s, words[i].name))
            return words[i].cmd;
    return CMD_TUI;
}

/* exec --layers FIRST:STEPS or off, into o->layers as the hook reads it
 * (CNNTOP_LAYERS: "FIRST:STEPS", "0" for off).  0, or 2 with err set. */
static int parse_layers(Options *o, const char *v, char *err, size_t errlen)
{
    char *end;
    long first, steps = 0;

    if (!strcmp(v, "off")) {
        snprintf(o->layers, sizeof o->layers, "0");
        return 0;
    }
    first = strtol(v, &end, 10);
    if (*end == ':' && end[1] >= '0' && end[1] <= '9')
        steps = strtol(end + 1, &end, 10);
    if (*end || v[0] < '0' || v[0] > '9' || first < 1 || first > OPT_LAYERS_MAX || steps < 1 ||
        steps > OPT_LAYERS_MAX) {
        snprintf(err, errlen, "--layers: '%s' is not FIRST:STEPS (whole numbers 1..%d, e.g. "
                 "5:20) or off", v, OPT_LAYERS_MAX);
        return 2;
    }
    snprintf(o->layers, sizeof o->layers, "%ld:%ld", first, steps);
    return 0;
}

/* Parses the option argv[*i] (and its value, which may be the next word:
 * *i moves past it).  Returns 0 or 2 with err set. */
static int parse_option(Options *o, int argc, char **argv, int *i, char *err, size_t errlen)
{
    char name[64];
    const char *a = argv[*i], *eq = strchr(a, '='), *v = NULL;

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
    const char *arg = options_arg(d);
    if (!arg) {
        if (eq) {
            snprintf(err, errlen, "%s takes no value", d->name);
            return 2;
        }
        v = "";
    } else if (eq)
        v = eq + 1;
    else if (*i + 1 < argc)
        v = argv[++*i];
    else {
        snprintf(err, errlen, "%s needs a value (%s)", d->name, arg);
        return 2;
    }
    if (arg && check_path_arg(d, v, err, errlen) != 0)
        return 2;
    if (arg && !*v && !d->setting) { /* a setting's row says what it wants */
        snprintf(err, errlen, "%s: empty %s", name, empty_what(arg));
        return 2;
    }
    if (!strcmp(d->name, "--layers"))
        return parse_layers(o, v, err, errlen);
    if (!d->setting)
        apply(o, d->name, v);
    else if (apply_setting(o, d, v, err, errlen) != 0)
        return 2;
    return 0;
}

/* A word that is no option: one of report's files. */
static int parse_positional(Options *o, const char *a, char *err, size_t errlen)
{
    if (o->cmd != CMD_REPORT) {
        snprintf(err, errlen, "unexpected argument '%s' (see cnntop --help)", a);
        return 2;
    }
    if (o->n_positional == OPT_MAX_POSITIONAL) {
        snprintf(err, errlen, "report: more than %d files", OPT_MAX_POSITIONAL);
        return 2;
    }
    o->positional[o->n_positional++] = a;
    return 0;
}

/* -e, as perf stat -e: a name that no table or PMU knows is a command-line
 * error before any work; a known event this machine cannot count stays,
 * n/a with its reason, in the run. */
int options_parse(Options *o, const CommandTable *cmds, int argc, char **argv, char *err,
                  size_t errlen)
{
    int i = 1;
    const char *no_color = getenv("NO_COLOR");

    memset(o, 0, sizeof *o);
    engine_config_default(&o->cfg);
    settings_set_defaults(option_numbers, o);
    o->cmd = CMD_TUI;
    o->argc = argc;
    o->argv = argv;
    if (no_color && *no_color)
        o->no_color = 1;
    if (argc > 1 && command_of(cmds, argv[1]) != CMD_TUI)
        o->cmd = command_of(cmds, argv[i++]);
    else if (argc > 1 && argv[1][0] != '-') {
        snprintf(err, errlen, "unknown command '%s' (see cnntop --help)", argv[1]);
        return 2;
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        Command c = command_of(cmds, a);
        if (o->cmd == CMD_EXEC && (!strcmp(a, "--") || a[0] != '-')) {
            o->exec_argv = argv + i + !strcmp(a, "--"); /* argv[argc] is NULL */
            break;
        }
        if (c == CMD_HELP || c == CMD_VERSION) {
            o->help_for = o->cmd; /* `cnntop run --help`: run's own */
            o->cmd = c;
            return 0;
        }
        int rc = a[0] != '-' || !strcmp(a, "-") ? parse_positional(o, a, err, errlen)
                                                : parse_option(o, argc, argv, &i, err, errlen);
        if (rc != 0)
            return rc;
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
