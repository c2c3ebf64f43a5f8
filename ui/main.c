/*
 * main.c: cnntop's entry point: the one table of commands, then parse the
 * command line and run the command it names.
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
#include "cmd/validate.h"
#include "tui/dashboard.h"
#include "tui/exec_dash.h"
#include "cnntop/version.h"

static const CommandTable commands;

static int run_cmd(const Options *o)
{
    return run_main(o, o->argc, o->argv);
}

static int sweep_cmd(const Options *o)
{
    return sweep_main(o, o->argc, o->argv);
}

/* Live on a terminal, as the dashboard is; headless otherwise. */
static int exec_cmd(const Options *o)
{
    if (!o->no_dashboard && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        return exec_dash_main(o, o->argc, o->argv);
    return exec_main(o, o->argc, o->argv);
}

static int version_cmd(const Options *o)
{
    (void)o;
    printf("cnntop %s\n", CNNTOP_VERSION);
    return EXIT_OK;
}

static int help_cmd(const Options *o)
{
    options_usage(stdout, &commands, o->help_for);
    return EXIT_OK;
}

/* Every command, in --help's order.  The dashboard's row has no word:
 * it is `cnntop` alone, or with options only. */
static const CommandEntry command_list[] = {
    {CMD_TUI, NULL, "[options]", "the dashboard (needs a terminal)",
     CMDF_BLAS | CMDF_TERMINAL, dashboard_main},
    {CMD_RUN, "run", "run [options]", "train the reference CNN, print a summary", CMDF_BLAS,
     run_cmd},
    {CMD_EVAL, "eval", "eval --load FILE [options]", "evaluate a checkpoint on the test set",
     CMDF_BLAS, run_eval},
    {CMD_SWEEP, "sweep", "sweep --batch LIST --workers LIST [options]",
     "run a grid of settings, recommend the fastest", CMDF_BLAS, sweep_cmd},
    {CMD_REPORT, "report", "report FILE.json... [--export FILE]", "print stored runs side by side",
     0, report_main},
    {CMD_EVENTS, "events", "events [--all]", "the counters this machine can read", 0, events_main},
    {CMD_CALIBRATE, "calibrate", "calibrate [--recalibrate]",
     "measure the FMA peak, SGEMM rate and memory bandwidth", CMDF_BLAS, calibrate_main},
    {CMD_EXEC, "exec", "exec [options] -- CMD [ARGS...]",
     "profile any command's process tree by role", 0, exec_cmd},
    {CMD_HELP, "help", NULL, "the usage text", 0, help_cmd},
    {CMD_VERSION, NULL, NULL, "the version", 0, version_cmd},
};

static const CommandTable commands = {command_list, sizeof command_list / sizeof command_list[0]};

int main(int argc, char **argv)
{
    Options o;
    char err[512];

    /* Before anything installs a handler: what the shell passed (nohup's
     * ignored SIGHUP stays ignored, here and in a command cnntop runs). */
    signals_startup();
    if (options_parse(&o, &commands, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        return EXIT_USAGE;
    }
    const CommandEntry *c = options_command(&commands, o.cmd);
    /* Every input checked in one pass before any work; the dashboard's
     * data and memory once its settings file is read (its -e and paths
     * here, before it asks for a terminal). */
    int rc = validate_command(&o, o.cmd == CMD_TUI ? NULL : &o.cfg, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        return rc;
    }
    /* A headless summary goes out in one piece at its explicit flush, where
     * a failed write keeps its errno (a full disk is "No space left on
     * device"): with stdio's own buffer (st_blksize, 4 KiB) a longer
     * summary was written from inside printf(), whose errno is lost, and
     * read as EIO.  The buffer must be ours: glibc ignores the size when
     * setvbuf() is given NULL. */
    static char outbuf[1 << 20];
    if (!(c->flags & CMDF_TERMINAL) && !isatty(STDOUT_FILENO))
        setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    /* Before any OpenBLAS call: the commands that run it get the kernel
     * matching the CPU (this may run the program again, once). */
    if (c->flags & CMDF_BLAS)
        blas_auto_apply(argv, (o.set_mask & OPTSET_BLAS) ? o.blas_keep : blas_auto_config_keep());
    if (!(c->flags & CMDF_TERMINAL))
        signals_install(NULL); /* run and sweep stop gracefully instead */
    return c->main(&o);
}
