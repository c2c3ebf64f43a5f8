/*
 * options.h: the command line, table-driven.
 *
 * One table lists every option with the commands that take it; the parser,
 * `cnntop --help` and the test that compares --help with the man page all
 * read it, so they cannot drift apart.  An option that sets a setting
 * (--batch, --lr, ...) names its row of the settings tables
 * (cnntop/settings.h, common/config.h), which gives its argument, range,
 * default and help line: the parser bounds it and --help describes it from
 * that row, as the settings file and the engine do.
 */
#ifndef CNNTOP_OPTIONS_H
#define CNNTOP_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "cnntop/engine.h"
#include "cnntop/settings.h"

/* CMD_TUI is `cnntop` with no command: the dashboard. */
typedef enum Command {
    CMD_TUI, CMD_RUN, CMD_EVAL, CMD_SWEEP, CMD_REPORT, CMD_EVENTS, CMD_CALIBRATE,
    CMD_EXEC, CMD_HELP, CMD_VERSION, CMD_COUNT
} Command;

#define OPT_MAX_POSITIONAL 64
#define OPT_MAX_LIST 32
#define OPT_LAYERS_MAX 1000000 /* exec --layers: the most FIRST or STEPS */

typedef struct Options {
    Command cmd;
    RunConfig cfg;
    const char *save;      /* --save FILE, or NULL */
    const char *load;      /* --load FILE, or NULL */
    const char *events;    /* -e/--events LIST as given, or NULL: the defaults */
    const char *export_path; /* --export FILE (.json, .csv or .md), or NULL */
    const char *trace;     /* --trace FILE.json, or NULL */
    const char *history;   /* --history FILE (dashboard), or NULL */
    int force;             /* --force: overwrite an existing export */
    int runs;              /* --runs R (default 1) */
    int ranks;             /* run --ranks N: start an MPI job of N ranks; 0: not asked */
    const char *mpirun_args; /* --mpirun-args ARGS: more words for mpirun, or NULL */
    int warmup;            /* --warmup K (default 0) */
    int vary_seed;         /* --vary-seed */
    double budget;         /* --budget SECONDS for a sweep, 0: none */
    double target_accuracy;/* --target-accuracy X (0..1), 0: none */
    int autostart;         /* --autostart (dashboard) */
    int no_color;          /* --no-color, or NO_COLOR set */
    int all;               /* --all (events) */
    int recalibrate;       /* --recalibrate */
    int blas_keep;         /* --blas-kernel openblas: 1; auto: 0 (OPTSET_BLAS when given) */
    int set_mask;          /* OPTSET_* bits: what the command line set */
    /* sweep grids (--batch/--workers/--threads/--ranks take lists for sweep) */
    int batch_list[OPT_MAX_LIST], n_batch;
    int workers_list[OPT_MAX_LIST], n_workers;
    int threads_list[OPT_MAX_LIST], n_threads;
    int ranks_list[OPT_MAX_LIST], n_ranks; /* --ranks: the job's ranks, each through mpirun */
    const char *positional[OPT_MAX_POSITIONAL]; /* e.g. report's files */
    int n_positional;
    char **exec_argv;      /* exec: the command after "--" (NULL-terminated, into argv) */
    int no_hook;           /* exec --no-hook: no Python hook */
    int no_dashboard;      /* exec --no-dashboard: the summary only, even on a terminal */
    const char *progress;  /* exec --progress REGEX, or NULL */
    char layers[24];       /* exec --layers as "FIRST:STEPS", "0" (off); "": the default */
    const char *sweep_cmd; /* sweep --cmd TEMPLATE, or NULL */
    Command help_for;      /* CMD_HELP: the command whose options to list (CMD_TUI: all) */
    int argc;              /* the command line parsed (for records' "command") */
    char **argv;
} Options;

/* Options.set_mask bits, so that settings files can yield to the command line. */
enum {
    OPTSET_DATA = 1 << 0, OPTSET_BATCH = 1 << 1, OPTSET_EPOCHS = 1 << 2,
    OPTSET_STEPS = 1 << 3, OPTSET_LIMIT = 1 << 4, OPTSET_TEST_LIMIT = 1 << 5,
    OPTSET_THREADS = 1 << 6, OPTSET_LR = 1 << 7, OPTSET_SEED = 1 << 8,
    OPTSET_WORKERS = 1 << 9, OPTSET_PREFETCH = 1 << 10, OPTSET_AUGMENT = 1 << 11,
    OPTSET_BLAS = 1 << 12, OPTSET_GEMM = 1 << 13, OPTSET_RANKS = 1 << 14
};

/* "shift,rotate" -> CN_AUG_* bits (the augment row of settings_run);
 * returns 0 or -1 (unknown name in err, as "--augment: ..."). */
int options_parse_augment(const char *s, unsigned *out, char *err, size_t errlen);

/* The augment bits as a comma list ("none" for 0). */
void options_format_augment(unsigned aug, char *buf, size_t len);

/* What one option looks like, for --help and the parser. */
typedef struct OptionDesc {
    const char *name;    /* "--batch" */
    const char *arg;     /* "N", or NULL for a flag; NULL for a setting (its row's) */
    const char *help;    /* one line; for a setting, what the command line adds
                          * to its row's help ("a list for sweep"), or NULL */
    unsigned cmds;       /* bit (1 << Command) for each command that takes it */
    const char *setting; /* the key of its settings row ("test_limit"), or NULL */
    int optset;          /* its OPTSET_* bit, 0: none */
    int list;            /* 1: cnntop sweep takes a comma list (batch, workers, threads, ranks) */
} OptionDesc;

/* The settings row an option sets (settings_run or settings_ui), or NULL. */
const Setting *options_setting(const OptionDesc *d);

/* The OPTSET_* bit of the option that sets the setting `key`, 0: none. */
int options_setting_bit(const char *key);

/* The option's argument as --help shows it ("N"), NULL for a flag. */
const char *options_arg(const OptionDesc *d);

extern const OptionDesc option_table[];
extern const size_t option_count;

/* CommandEntry.flags. */
enum {
    CMDF_BLAS = 1 << 0,     /* runs OpenBLAS: its kernel is matched to the CPU first */
    CMDF_TERMINAL = 1 << 1, /* draws on the terminal: its own signal handlers, stdout unbuffered */
};

/*
 * One command as the command line knows it (tmux's cmd_entry): its word,
 * its --help lines, how it starts and its entry point.  The options it
 * takes are the rows of option_table whose cmds bit has it.  The one table
 * of commands is ui/main.c's, because the entry points live above this
 * layer; the parser and --help are handed it.
 */
typedef struct CommandEntry {
    Command cmd;
    const char *name;       /* the word, "run"; NULL: none (`cnntop` alone, the dashboard) */
    const char *synopsis;   /* --help's line after "cnntop "; NULL: not listed */
    const char *what;       /* what it does, one line */
    unsigned flags;         /* CMDF_* */
    int (*main)(const Options *o); /* runs it; returns the exit code */
} CommandEntry;

typedef struct CommandTable {
    const CommandEntry *v;
    size_t n;
} CommandTable;

/* The entry of cmd in t, or NULL. */
const CommandEntry *options_command(const CommandTable *t, Command cmd);

/*
 * Parses argv into *o (defaults first), the command's word looked up in
 * cmds.  Returns 0, or 2 after writing a one-line error to `err` (e.g.
 * "--batch: 'x' is not a whole number").  o's strings point into argv.
 */
int options_parse(Options *o, const CommandTable *cmds, int argc, char **argv, char *err,
                  size_t errlen);

/* Writes the usage text: every command and option for CMD_TUI, else the
 * one command's synopsis and the options it takes. */
void options_usage(FILE *f, const CommandTable *cmds, Command cmd);

#endif
