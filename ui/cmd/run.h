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

/* `cnntop eval`: loads a checkpoint and evaluates it. */
int run_eval(const Options *o);

#endif
