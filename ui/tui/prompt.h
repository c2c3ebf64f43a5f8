/*
 * prompt.h: the status line's prompts (prompt.c).
 */
#ifndef CNNTOP_TUI_PROMPT_H
#define CNNTOP_TUI_PROMPT_H

#include <stddef.h>

#include "tui/tui.h"

/* Opens prompt p with `initial` as the text typed so far. */
void prompt_begin(Tui *t, Prompt p, const char *initial);

/* Key ch as an edit of input (size bytes): Backspace, Ctrl-U, a
 * printable character (dropped when full).  1 when it was one of those. */
int prompt_edit(char *input, size_t size, int ch);

/* Key ch while a prompt is open: edits the text (Backspace, Ctrl-U),
 * Enter acts (exports, sets the setting), Esc cancels; the quit prompt
 * takes y or q.  Returns TUI_* bits. */
int prompt_key(Tui *t, int ch);

#endif
