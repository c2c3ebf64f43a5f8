/*
 * run.h: the commands that run without a dashboard (run, eval):
 * progress on stderr, a summary on stdout, for scripts and CI.
 */
#ifndef CNNTOP_CMD_RUN_H
#define CNNTOP_CMD_RUN_H

#include "common/options.h"

/* `cnntop run`: trains, evaluates, prints the summary; returns an exit code
 * (128 + signal number when stopped by SIGINT/SIGTERM). */
int run_main(const Options *o, int argc, char **argv);

/* Flushes the summary on stdout; returns rc, or EXIT_FAIL when stdout
 * could not be written for any reason but a reader that went away
 * (EPIPE), after saying so on stderr.  Every headless command ends with it. */
int run_stdout_done(int rc);

/* `cnntop eval`: loads a checkpoint and evaluates it. */
int run_eval(const Options *o);

#endif
