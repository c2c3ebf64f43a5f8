/*
 * options.h: the command line, table-driven.
 *
 * One table lists every option with its argument and help text; the parser,
 * `cnntop --help` and the test that compares --help with the man page all
 * read it, so they cannot drift apart.
 */
#ifndef CNNTOP_OPTIONS_H
#define CNNTOP_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "cnntop/engine.h"

typedef enum Command { CMD_NONE, CMD_RUN, CMD_EVAL, CMD_HELP, CMD_VERSION } Command;

typedef struct Options {
    Command cmd;
    RunConfig cfg;
    const char *save;  /* --save FILE, or NULL */
    const char *load;  /* --load FILE, or NULL */
} Options;

/* What one option looks like, for --help and the parser. */
typedef struct OptionDesc {
    const char *name;   /* "--batch" */
    const char *arg;    /* "N", or NULL for a flag */
    const char *help;   /* one line */
    unsigned cmds;      /* bit (1 << Command) for each command that takes it */
} OptionDesc;

extern const OptionDesc option_table[];
extern const size_t option_count;

/*
 * Parses argv into *o (defaults first).  Returns 0, or 2 after writing a
 * one-line error to `err` (e.g. "--batch: 'x' is not a whole number").
 * o's strings point into argv.
 */
int options_parse(Options *o, int argc, char **argv, char *err, size_t errlen);

/* Writes the usage text. */
void options_usage(FILE *f);

#endif
