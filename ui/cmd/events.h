/*
 * events.h: `cnntop events [--all] [-e LIST]`, a short `perf list`: the
 * PMUs libpfm4 detects, then the default events (or those of -e) each with
 * "ok" or "n/a: reason" as this machine answers when they are opened, and
 * with --all every event libpfm4 knows for the PMUs present.
 */
#ifndef CNNTOP_EVENTS_H
#define CNNTOP_EVENTS_H

#include "common/options.h"

/* Prints the listing on stdout; returns EXIT_OK, or EXIT_USAGE for a bad
 * -e list and EXIT_FAIL when libpfm4 cannot start (message on stderr). */
int events_main(const Options *o);

#endif
