/*
 * main.c: cnntop's entry point: parse the command line, dispatch.
 */
#include <stdio.h>
#include <unistd.h>

#include "common/exit.h"
#include "common/blas_auto.h"
#include "cmd/calibrate.h"
#include "cmd/events.h"
#include "cmd/exec.h"
#include "cmd/run.h"
#include "common/options.h"
#include "common/signals.h"
#include "cmd/sweep.h"
#include "cmd/report.h"
#include "tui/dashboard.h"
#include "tui/exec_dash.h"
#include "cnntop/version.h"

int main(int argc, char **argv)
{
    Options o;
    char err[512];

    /* Before anything installs a handler: what the shell passed (nohup's
     * ignored SIGHUP stays ignored, here and in a command cnntop runs). */
    signals_startup();
    if (options_parse(&o, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        return EXIT_USAGE;
    }
    /* A headless summary goes out in one piece at its explicit flush, where
     * a failed write keeps its errno (a full disk is "No space left on
     * device"): with stdio's own buffer (st_blksize, 4 KiB) a longer
     * summary was written from inside printf(), whose errno is lost, and
     * read as EIO.  The buffer must be ours: glibc ignores the size when
     * setvbuf() is given NULL. */
    static char outbuf[1 << 20];
    if (o.cmd != CMD_TUI && !isatty(STDOUT_FILENO))
        setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    /* Before any OpenBLAS call: the commands that run it get the kernel
     * matching the CPU (this may run the program again, once). */
    if (o.cmd == CMD_TUI || o.cmd == CMD_RUN || o.cmd == CMD_EVAL || o.cmd == CMD_SWEEP ||
        o.cmd == CMD_CALIBRATE)
        blas_auto_apply(argv, (o.set_mask & OPTSET_BLAS) ? o.blas_keep : blas_auto_config_keep());
    if (o.cmd != CMD_TUI)
        signals_install(NULL); /* run and sweep stop gracefully instead */
    switch (o.cmd) {
    case CMD_RUN:
        return run_main(&o, argc, argv);
    case CMD_EVAL:
        return run_eval(&o);
    case CMD_EVENTS:
        return events_main(&o);
    case CMD_EXEC:
        /* Live on a terminal, as the dashboard is; headless otherwise. */
        if (!o.no_dashboard && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
            return exec_dash_main(&o, argc, argv);
        return exec_main(&o, argc, argv);
    case CMD_CALIBRATE:
        return calibrate_main(&o);
    case CMD_REPORT:
        return report_main(&o);
    case CMD_SWEEP:
        return sweep_main(&o, argc, argv);
    case CMD_VERSION:
        printf("cnntop %s\n", CNNTOP_VERSION);
        return EXIT_OK;
    case CMD_HELP:
        options_usage(stdout, o.help_for);
        return EXIT_OK;
    case CMD_TUI:
        return dashboard_main(&o);
    default:
        options_usage(stderr, CMD_TUI);
        return EXIT_USAGE;
    }
}
