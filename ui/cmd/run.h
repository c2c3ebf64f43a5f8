/*
 * run.h: the commands that run without a dashboard (run, eval):
 * progress on stderr, a summary on stdout, for scripts and CI.
 */
#ifndef CNNTOP_HEADLESS_H
#define CNNTOP_HEADLESS_H

#include "common/options.h"

/* Exit codes shared by every command. */
enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,     /* a run could not start or finish (bad data, I/O) */
    EXIT_USAGE = 2,    /* bad command line */
    EXIT_DIVERGED = 3  /* training produced a non-finite loss */
};

/* "s" unless n is 1: "1 thread", "2 threads" in every message. */
#define PLURAL(n) ((n) == 1 ? "" : "s")

/* `cnntop run`: trains, evaluates, prints the summary; returns an exit code
 * (128 + signal number when stopped by SIGINT/SIGTERM). */
int headless_run(const Options *o, int argc, char **argv);

/* Flushes the summary on stdout; returns rc, or EXIT_FAIL when stdout
 * could not be written for any reason but a reader that went away
 * (EPIPE), after saying so on stderr.  Every headless command ends with it. */
int headless_stdout_done(int rc);

/* `cnntop eval`: loads a checkpoint and evaluates it. */
int headless_eval(const Options *o);

#endif
