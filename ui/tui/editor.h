/*
 * editor.h: the settings editor (the rows of the settings panel, SET_*).
 *
 * UI thread only.  A change goes to the next run's settings (t->set); one
 * that can apply live (editor_live) also goes to the running engine
 * through its thread-safe setters, and the status line says which.
 */
#ifndef CNNTOP_TUI_EDITOR_H
#define CNNTOP_TUI_EDITOR_H

#include <stddef.h>

#include "tui/tui.h"

/* Setting i's name ("batch"), and 1 when it applies live. */
const char *editor_name(int i);
int editor_live(int i);

/* Formats setting i of cfg (the next run's or the running one's; data:
 * its data directory, "" or NULL for the default; ranks: its ranks) into
 * buf. */
void editor_format(const Tui *t, int i, const RunConfig *cfg, const char *data, int ranks,
                   char *buf, size_t len);

/* One step of setting i in direction dir (-1 or +1): batch and steps
 * halve and double, others count; then applied live where it can be.
 * Ranks above 1 are refused, with the reason on the status line, where no
 * job can start (ranks_unavailable: no MPI, no mpirun). */
void editor_change(Tui *t, int i, int dir);

/* Sets setting i from typed text; returns 0, or -1 with the message in
 * the status line (text not a value in range). */
int editor_type(Tui *t, int i, const char *text);

/* On a setting whose value the panel cuts: the whole value, in the
 * status line. */
void editor_show_whole(Tui *t);

#endif
