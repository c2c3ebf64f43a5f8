/*
 * fileio.h: whole-file reads and atomic writes.
 *
 * Every file cnntop writes (checkpoints, exports, caches) goes through
 * fileio_write_atomic(): a temporary file in the same directory, fsync,
 * rename over the target, fsync of the directory.  A crash or a signal at
 * any point leaves either the old file or the new one, never half of one.
 * The new file gets mode 0666 less the umask, like any file the user makes.
 * Public, so that the front ends' own files (the dashboard's settings and
 * history) are written the same one way.
 */
#ifndef CNNTOP_FILEIO_H
#define CNNTOP_FILEIO_H

#include <stddef.h>

/* Writes buf[0..len) to path atomically.  Returns 0 or -CN_EIO with a
 * message naming the path; no temporary file is left behind on error. */
int fileio_write_atomic(const char *path, const void *buf, size_t len,
                        char *err, size_t errlen);

/* mkdir -p of path's directory (not of path itself), with `mode` for the
 * directories it makes, e.g. 0700 for XDG cache directories.  Returns 0 or
 * -CN_EIO naming the directory. */
int fileio_make_parent_dirs(const char *path, unsigned mode, char *err, size_t errlen);

/* Reads a whole regular file of at most max bytes into a malloc'ed buffer
 * (*out, *len; the caller frees).  Returns 0, -CN_EIO, or -CN_EFORMAT when
 * the file is larger than max. */
int fileio_read_all(const char *path, size_t max, unsigned char **out,
                    size_t *len, char *err, size_t errlen);

/* Checks that a file could be created at path (its directory exists and is
 * writable), without creating it.  Returns 0 or -CN_EIO. */
int fileio_check_writable(const char *path, char *err, size_t errlen);

#endif
