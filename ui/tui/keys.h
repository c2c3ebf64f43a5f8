/*
 * keys.h: the dashboard's key bindings (keys.c), one table for the loop
 * and the help screen.
 */
#ifndef CNNTOP_TUI_KEYS_H
#define CNNTOP_TUI_KEYS_H

#include "tui/tui.h"

#define KEYS_PER_BINDING 24

typedef struct KeyBinding {
    int keys[KEYS_PER_BINDING];  /* the key codes (getch's), 0-terminated */
    int (*act)(Tui *t, int ch);  /* run with the key pressed; returns TUI_* bits */
    const char *label;           /* the help's left column: "s, Enter" */
    const char *help;            /* what they do; each '\n' starts another row */
} KeyBinding;

extern const KeyBinding keys_table[];
extern const int keys_count;

/* The binding of key ch in table[0..count), or NULL (`cnntop exec`'s
 * dashboard has a table of its own). */
const KeyBinding *keys_find_in(const KeyBinding *table, int count, int ch);

/* Key (or event) ch from getch(): to the open prompt, closing the help,
 * or to its binding's action.  Returns the TUI_* bits to act on. */
int keys_handle(Tui *t, int ch);

#endif
