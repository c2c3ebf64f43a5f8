/*
 * dashboard.h: the dashboard's entry point, for main.c (no curses here).
 */
#ifndef CNNTOP_TUI_DASHBOARD_H
#define CNNTOP_TUI_DASHBOARD_H

#include "common/options.h"

/*
 * `cnntop` with no command: the dashboard, with o's settings as the first
 * run's (the settings file fills what the command line did not set).
 * Returns the exit code: 0, 2 without a terminal, 128 + signal when ended
 * by SIGINT, SIGTERM or SIGHUP.
 */
int dashboard_main(const Options *o);

#endif
