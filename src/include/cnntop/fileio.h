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
 *
 * A path to write must name a regular file or nothing: a device, FIFO,
 * socket or directory is refused (a symbolic link stands for the file it
 * points to, which is what gets replaced), and so is the file behind the
 * process's standard streams (/dev/stdout redirected to a file).  The temporary file is
 * PATH.tmp.XXXXXX (six random characters; .cnntop.tmp.XXXXXX beside it when
 * that name would be too long), a fresh name tried again when taken, so a
 * leftover of a killed run never blocks a write.
 */
#ifndef CNNTOP_FILEIO_H
#define CNNTOP_FILEIO_H

#include <stddef.h>

/* Writes buf[0..len) to path atomically.  Returns 0, -CN_EINVAL (an empty
 * path, one ending in /, or one of PATH_MAX bytes or more) or -CN_EIO with
 * a message naming the path, and the temporary file when it is what
 * failed; no temporary file is left behind on error. */
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

/* Checks that fileio_write_atomic() could write path: the path is valid,
 * names a regular file or nothing, and its directory exists and is
 * writable; without creating anything.  Returns 0, -CN_EINVAL or -CN_EIO
 * with the reason (the errno of the failed call, as it is). */
int fileio_check_writable(const char *path, char *err, size_t errlen);

/* Refuses a path no file can have: empty, ending in /, PATH_MAX bytes or
 * longer.  Returns 0 or -CN_EINVAL with the reason. */
int fileio_check_path(const char *path, char *err, size_t errlen);

/* "a regular file", "a directory", "a character device"... for st_mode. */
const char *fileio_kind(unsigned mode);

/* For a signal handler about to end the process (async-signal-safe).
 * Returns 1 when an atomic write is between creating its temporary file
 * and renaming or removing it: the handler should return, and the write
 * raises `sig` again (raise()) as soon as its temporary file is gone, so
 * the handler runs again.  Returns 0 when no write is in flight; from then
 * on no write starts (each fails, "the process is ending on a signal"), so
 * the handler may end the process without leaving a temporary file. */
int fileio_defer_signal(int sig);

#endif
