/*
 * prompt.c: the status line's prompts: the file name of an export (e),
 * a setting's value (c, digits), and "stop it and quit?" (q while a run
 * is going).  While one is open every key comes here.
 */
#include <stdio.h>
#include <string.h>

#include "tui/editor.h"
#include "tui/prompt.h"
#include "tui/save_run.h"

void prompt_begin(Tui *t, Prompt p, const char *initial)
{
    t->prompt = p;
    snprintf(t->input, sizeof t->input, "%s", initial);
}

static void do_export(Tui *t, const char *path)
{
    char err[512];

    if (!*path) {
        tui_message(t, 1, "export: no file name");
        return;
    }
    if (save_run(t, path, err, sizeof err) != 0)
        tui_message(t, 1, "export: %s", err);
    else
        tui_message(t, 0, "exported run %d to %s", t->rv.seq, path);
}

int prompt_edit(char *input, size_t size, int ch)
{
    size_t n = strlen(input);

    if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (n)
            input[n - 1] = '\0';
    } else if (ch == 21) { /* Ctrl-U clears the line, as in a shell */
        input[0] = '\0';
    } else if (ch >= 32 && ch < 127) {
        if (n + 1 < size) {
            input[n] = (char)ch;
            input[n + 1] = '\0';
        }
    } else {
        return 0;
    }
    return 1;
}

int prompt_key(Tui *t, int ch)
{
    if (t->prompt == PROMPT_QUIT) {
        t->prompt = PROMPT_NONE;
        return ch == 'y' || ch == 'Y' || ch == 'q' ? TUI_QUIT : TUI_REDRAW;
    }
    if (ch == 27) {
        t->prompt = PROMPT_NONE;
    } else if (prompt_edit(t->input, sizeof t->input, ch)) {
        /* typed */
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        Prompt p = t->prompt;
        t->prompt = PROMPT_NONE;
        if (p == PROMPT_EXPORT)
            do_export(t, t->input);
        else if (p == PROMPT_EDIT)
            editor_type(t, t->sel, t->input);
    }
    return TUI_REDRAW;
}
