/*
 * test_commands.h: the command words, for tests that link the parser
 * without the program.  The real table, with the entry points, is
 * ui/main.c's; test_cli checks it against --help and the man page, and a
 * word missing here only makes these tests parse less.
 */
#ifndef CNNTOP_TEST_COMMANDS_H
#define CNNTOP_TEST_COMMANDS_H

#include "common/options.h"

static const CommandEntry test_command_list[] = {
    {CMD_TUI, NULL, "[options]", "the dashboard", 0, NULL},
    {CMD_RUN, "run", "run [options]", "train", 0, NULL},
    {CMD_EVAL, "eval", "eval --load FILE", "evaluate", 0, NULL},
    {CMD_SWEEP, "sweep", "sweep", "a grid", 0, NULL},
    {CMD_REPORT, "report", "report FILE.json...", "stored runs", 0, NULL},
    {CMD_EVENTS, "events", "events", "the counters", 0, NULL},
    {CMD_CALIBRATE, "calibrate", "calibrate", "the limits", 0, NULL},
    {CMD_EXEC, "exec", "exec -- CMD", "any command", 0, NULL},
    {CMD_HELP, "help", NULL, "the usage text", 0, NULL},
};

static const CommandTable test_commands = {
    test_command_list, sizeof test_command_list / sizeof test_command_list[0]};

#endif
