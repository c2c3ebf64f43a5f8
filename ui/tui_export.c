/*
 * tui_export.c: the run record export of the dashboard (see tui_export.h).
 * The record module (src/include/cnntop/record.h) is not yet part of the
 * engine build; until it is, the export says so.
 */
#include <stdio.h>

#include "tui_export.h"

int tui_export(const Tui *t, const char *path, char *err, size_t errlen)
{
    (void)t;
    snprintf(err, errlen, "%s: n/a: the run record module is not wired yet", path);
    return -1;
}
