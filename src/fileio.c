/*
 * fileio.c: atomic writes (temp + fsync + rename) and bounded reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "cnntop/fileio.h"

/* The directory part of path, in buf. */
static void dir_of(const char *path, char *buf, size_t len)
{
    char tmp[4096];

    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(buf, len, "%s", dirname(tmp));
}

static int write_full(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void fsync_dir(const char *path)
{
    char dir[4096];

    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        /* Best effort: some file systems refuse fsync on directories. */
        (void)fsync(fd);
        close(fd);
    }
}

int fileio_write_atomic(const char *path, const void *buf, size_t len,
                        char *err, size_t errlen)
{
    char tmp[4200];
    const char *op = "create";
    int fd, saved;

    /* A unique name created exclusively; mode 0666 so that the umask, not
     * mkstemp's 0600, decides who may read the file. */
    static atomic_uint seq;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1));
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        goto fail;
    op = "write";
    if (write_full(fd, buf, len) != 0)
        goto fail;
    op = "sync";
    if (fsync(fd) != 0)
        goto fail;
    op = "close";
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    op = "rename";
    if (rename(tmp, path) != 0)
        goto fail;
    fsync_dir(path);
    return 0;

fail:
    saved = errno;
    if (fd >= 0)
        close(fd);
    if (strcmp(op, "create") != 0)
        unlink(tmp);
    return cn_fail(err, errlen, -CN_EIO, "%s: cannot %s: %s", path, op, strerror(saved));
}

int fileio_read_all(const char *path, size_t max, unsigned char **out,
                    size_t *len, char *err, size_t errlen)
{
    struct stat st;
    /* O_NONBLOCK: a FIFO must be refused below, not waited on forever; it
     * does not change reads from a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    *out = NULL;
    *len = 0;
    if (fd < 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path,
                       S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: too large (%lld bytes, at most %zu)",
                       path, (long long)st.st_size, max);
    }
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    int e = errno;
    close(fd);
    if (!buf || got != (size_t)st.st_size) {
        free(buf);
        return cn_fail(err, errlen, -CN_EIO, "%s: read failed: %s", path,
                       buf ? strerror(e) : "out of memory");
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;
}

int fileio_check_writable(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    struct stat st;

    dir_of(path, dir, sizeof dir);
    if (stat(dir, &st) != 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: directory %s: %s", path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cn_fail(err, errlen, -CN_EIO, "%s: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: directory %s is not writable: %s", path,
                       dir, strerror(errno));
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return cn_fail(err, errlen, -CN_EIO, "%s: is a directory", path);
    return 0;
}

int fileio_make_parent_dirs(const char *path, unsigned mode, char *err, size_t errlen)
{
    char dir[4096];

    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return cn_fail(err, errlen, -CN_EIO, "%s: path too long", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, (mode_t)mode) != 0 && errno != EEXIST)
            return cn_fail(err, errlen, -CN_EIO, "%s: mkdir %s: %s", path, dir,
                           strerror(errno));
        *p = '/';
    }
    return 0;
}
