/*
 * config.h: the dashboard's settings file, as htop keeps its own.
 *
 * The file is $XDG_CONFIG_HOME/cnntop/config, or ~/.config/cnntop/config
 * when XDG_CONFIG_HOME is unset or empty.  It is read at start and written
 * on quit, atomically (a temporary file in the same directory, fsync,
 * rename), so a crash never leaves half a file.  The format is one
 * `key=value` per line; blank lines and lines starting with '#' are
 * ignored; assets/config is the documented default:
 *
 *   batch=64          images per step, 1..65536
 *   workers=0         loader threads, 0..64 (0: load inline)
 *   prefetch=0        loader queue capacity in batches, 0..256 (0: 2 per worker)
 *   threads=0         compute threads, 0..256 (0: every core this process may use)
 *   epochs=1          epochs per run, 1..100000 (when steps=0)
 *   steps=0           optimiser steps per run (0: whole epochs)
 *   limit=0           train on the first N images (0: all)
 *   test_limit=0      evaluate on the first N test images (0: all)
 *   lr=0.001          Adam learning rate, (0, 10]
 *   augment=none      none, or a comma list of shift, rotate, elastic
 *   seed=1            seed of initial weights, shuffling and dropout
 *   data=             data directory (empty: the default)
 *   window=60         chart time window in seconds (0: the whole run)
 *   sort=0            per-layer table order: 0 step order, 1 time, 2 name
 *   blas_kernel=auto  auto: OpenBLAS runs the kernel matching the CPU; openblas:
 *                     OpenBLAS's own choice (read by every command, see blas_auto.h)
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

typedef struct TuiSettings {
    RunConfig cfg;   /* the next run's settings; cfg.data_dir is NULL or data */
    char data[4096]; /* the data directory as set, "" for the default */
    int window;      /* chart window, seconds; 0: the whole run */
    int sort;        /* per-layer table order, 0..2 */
    int blas_keep;   /* blas_kernel=openblas: 1, auto: 0 */
} TuiSettings;

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
