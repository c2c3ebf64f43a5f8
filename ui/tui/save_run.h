/*
 * save_run.h: the `e` key: the last run as a run record file.
 */
#ifndef CNNTOP_TUI_SAVE_RUN_H
#define CNNTOP_TUI_SAVE_RUN_H

#include <stddef.h>

#include "tui/tui.h"

/* Writes the dashboard's last run (the record its run thread built, with
 * the dashboard's command line and the machine's measured peak added) to
 * path, the format chosen by the extension (.json, .csv, .md).  Returns 0,
 * or -1 with err naming the file and the problem. */
int save_run(Tui *t, const char *path, char *err, size_t errlen);

#endif
