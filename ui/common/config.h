/*
 * config.h: the dashboard's settings file, as htop keeps its own.
 *
 * The file is $XDG_CONFIG_HOME/cnntop/config, or ~/.config/cnntop/config
 * when XDG_CONFIG_HOME is unset or empty.  It is read at start and written
 * on quit, atomically (a temporary file in the same directory, fsync,
 * rename), so a crash never leaves half a file.  The format is one
 * `key=value` per line; blank lines and lines starting with '#' are
 * ignored.  The keys are the rows of settings_run (cnntop/settings.h: the
 * next run's settings) and of settings_ui below (the dashboard's own and
 * blas_kernel, which every command reads); each row gives the key's type,
 * range and default, and assets/config documents them (a test compares).
 *
 * Values given on the command line win over the file for that launch
 * only (Options.set_mask).  The reader applies every good line and
 * reports the bad ones (an unknown key, a bad value, a line that is not
 * key=value, a NUL byte), so one typo does not lose the rest; lines may be
 * of any length.  On quit only the settings changed in the dashboard are
 * written (settings_save_changes), by editing the file line by line: its
 * comments, its other lines and its bad lines stay as they were, and a
 * file that had bad lines is first copied to PATH.bad.  A file that cannot
 * be read is never written.
 */
#ifndef CNNTOP_TUI_SETTINGS_H
#define CNNTOP_TUI_SETTINGS_H

#include <stddef.h>

#include "cnntop/engine.h"
#include "cnntop/settings.h"

typedef struct TuiSettings {
    RunConfig cfg;   /* the next run's settings; cfg.data_dir is NULL or data */
    char data[4096]; /* the data directory as set, "" for the default */
    int window;      /* chart window, seconds; 0: the whole run */
    int sort;        /* per-layer table order, 0..2 */
    int blas_keep;   /* blas_kernel=openblas: 1, auto: 0 */
    int ranks;       /* the next run's ranks: 1 trains in this process, N > 1
                      * is the job `cnntop run --ranks N` starts */
} TuiSettings;

/* The front ends' settings, rows of the same shape as settings_run with
 * offsets into TuiSettings: window (the chart window's choices, in the
 * order the t key cycles them), sort, blas_kernel, ranks.  Ends with a NULL key. */
extern const Setting settings_ui[];

/*
 * Sets the key's value in *s from text as the settings file holds it (the
 * dashboard's typed values go through here too, so both take the same
 * values).  Returns 0, or -1 with err = "key: problem" and *s unchanged.
 */
int settings_set_text(TuiSettings *s, const char *key, const char *text, char *err,
                      size_t errlen);

/* Writes the settings file's path into buf.  Returns 0, or -1 when neither
 * XDG_CONFIG_HOME nor HOME is set (then there is no file). */
int settings_path(char *buf, size_t len);

/* Points s->cfg.data_dir at s->data (or NULL when it is empty); call after
 * copying a TuiSettings. */
void settings_fix(TuiSettings *s);

/*
 * Reads `path` into *s, leaving alone the settings whose OPTSET_* bit is in
 * keep_mask (the command line's).  Returns 0 when every line was good, 1
 * when the file does not exist (nothing changes), 2 when some lines were
 * bad: the good ones are applied and err says "path:line: problem" of the
 * first bad one and how many there were; -1 when the file cannot be read
 * (then *s is unchanged and err says why).
 */
int settings_load(TuiSettings *s, const char *path, int keep_mask, char *err, size_t errlen);

/*
 * Writes to `path` the settings whose value in *now differs from *launch
 * (what the dashboard started with), editing the file in place: every line
 * of a changed key gets the new value, keys the file lacks are appended,
 * every other line is kept byte for byte.  Nothing changed: the file is
 * not touched.  A file with bad lines is first copied to `path`.bad.
 * Returns the number of settings written (0: none), or -1 with err naming
 * the file and the problem; a file that cannot be read is left as it is.
 */
int settings_save_changes(const TuiSettings *launch, const TuiSettings *now, const char *path,
                          char *err, size_t errlen);

/*
 * Writes `text` to `path` atomically (fileio_write_atomic), making the
 * missing directories of the path first.  Returns 0 or -1 with err set.
 */
int settings_write_atomic(const char *path, const char *text, size_t len, char *err,
                          size_t errlen);

#endif
