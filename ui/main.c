/*
 * main.c: cnntop's entry point: parse the command line, dispatch.
 */
#include <stdio.h>

#include "headless.h"
#include "options.h"

int main(int argc, char **argv)
{
    Options o;
    char err[512];

    if (options_parse(&o, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        return EXIT_USAGE;
    }
    switch (o.cmd) {
    case CMD_RUN:
        return headless_run(&o);
    case CMD_EVAL:
        return headless_eval(&o);
    case CMD_VERSION:
        printf("cnntop %s\n", engine_version());
        return EXIT_OK;
    case CMD_HELP:
        options_usage(stdout);
        return EXIT_OK;
    case CMD_TUI:
    default:
        options_usage(stderr);
        return EXIT_USAGE;
    }
}
