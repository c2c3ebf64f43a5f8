/*
 * why.c: why a command could not be exec'ed, said as a shell says it
 * (cnntop/exec.h's exec_why()); and why one died, where the Python hook saw
 * a known failure (exec_why_died()).
 *
 * execve()'s errno is about the file named, or about its interpreter: a
 * script's #! line or an ELF program's loader (PT_INTERP).  ENOENT for a
 * file that exists means that the interpreter is missing (a #! line
 * ending in a carriage return, from a DOS editor, names one that cannot
 * exist); EACCES for a file that may be executed, that its interpreter may
 * not be; EACCES for a directory, that it is one.  So the file is found
 * as execvp() finds it (on PATH when the name has no slash) and read for
 * its interpreter.  This runs after the failure, never on the way to a
 * successful exec.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cnntop/exec.h"

/* The file execvp() would have tried for name: name itself when it has a
 * slash, else the first that exists on PATH.  0, or -1: none exists. */
static int find_file(const char *name, char *path, size_t len, struct stat *st)
{
    const char *dirs = getenv("PATH");

    if (strchr(name, '/')) {
        snprintf(path, len, "%s", name);
        return stat(path, st);
    }
    if (!dirs)
        dirs = "/bin:/usr/bin"; /* execvp()'s default */
    for (const char *d = dirs;; d++) {
        size_t n = strcspn(d, ":");
        /* An empty entry is the current directory. */
        snprintf(path, len, "%.*s%s%s", (int)n, n ? d : ".", "/", name);
        if (stat(path, st) == 0)
            return 0;
        d += n;
        if (!*d)
            return -1;
    }
}

/* A script's #! interpreter into interp, as the kernel reads it: after
 * the #! and blanks, up to a blank or the end of the line.  1 or 0. */
static int script_interp(const char *path, char *interp, size_t len)
{
    char head[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, head, sizeof head - 1) : -1;

    if (fd >= 0)
        close(fd);
    if (n < 3 || head[0] != '#' || head[1] != '!')
        return 0;
    head[n] = '\0';
    char *s = head + 2 + strspn(head + 2, " \t");
    size_t k = strcspn(s, " \t\n");
    if (k == 0)
        return 0;
    snprintf(interp, len, "%.*s", (int)k, s);
    return 1;
}

/* An ELF file's header, either size; a program header, either size. */
typedef union { unsigned char ident[EI_NIDENT]; Elf32_Ehdr h32; Elf64_Ehdr h64; } ElfHead;
typedef union { Elf32_Phdr p32; Elf64_Phdr p64; } ElfProg;

/* An ELF program's loader (PT_INTERP) into interp; 1 or 0.  The
 * machine's own byte order, 32 or 64 bits. */
static int elf_interp(int fd, char *interp, size_t len)
{
    ElfHead h;
    ElfProg p;

    if (pread(fd, &h, sizeof h, 0) < (ssize_t)sizeof h.h32 || memcmp(h.ident, ELFMAG, SELFMAG))
        return 0;
    int is64 = h.ident[EI_CLASS] == ELFCLASS64;
    off_t off = is64 ? (off_t)h.h64.e_phoff : (off_t)h.h32.e_phoff;
    int num = is64 ? h.h64.e_phnum : h.h32.e_phnum;
    ssize_t size = is64 ? (ssize_t)sizeof p.p64 : (ssize_t)sizeof p.p32;

    for (int i = 0; i < num && i < 256; i++) {
        if (pread(fd, &p, (size_t)size, off + i * size) != size)
            return 0;
        if ((is64 ? p.p64.p_type : p.p32.p_type) != PT_INTERP)
            continue;
        size_t n = is64 ? p.p64.p_filesz : p.p32.p_filesz;
        off_t at = is64 ? (off_t)p.p64.p_offset : (off_t)p.p32.p_offset;
        n = n < len ? n : len - 1;
        if (pread(fd, interp, n, at) != (ssize_t)n)
            return 0;
        interp[n] = '\0';
        return interp[0] != '\0';
    }
    return 0;
}

/* elf_interp() on the file at path. */
static int elf_interp_of(const char *path, char *interp, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    int found = elf_interp(fd, interp, len);
    close(fd);
    return found;
}

/* A text being built in a caller's buffer: appends that keep it whole
 * and cut it at the buffer's end. */
typedef struct Say {
    char *buf;
    size_t len, at;
} Say;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void say(Say *w, const char *fmt, ...)
{
    va_list ap;

    if (w->at + 1 >= w->len)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(w->buf + w->at, w->len - w->at, fmt, ap);
    va_end(ap);
    if (n > 0)
        w->at = w->at + (size_t)n < w->len ? w->at + (size_t)n : w->len - 1;
}

/* interp as it can be read on a terminal: a control byte as \r or \xNN. */
static void say_visible(Say *w, const char *interp)
{
    for (const unsigned char *c = (const unsigned char *)interp; *c; c++) {
        if (*c == '\r')
            say(w, "\\r");
        else if (*c < 32 || *c == 127)
            say(w, "\\x%02x", *c);
        else
            say(w, "%c", *c);
    }
}

void exec_why(const char *argv0, int e, char *buf, size_t len)
{
    char path[4096], interp[512];
    struct stat st;
    int found = (e == ENOENT || e == EACCES) && find_file(argv0, path, sizeof path, &st) == 0;
    int runnable = found && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
    Say w = {buf, len, 0};

    if (len)
        buf[0] = '\0';
    say(&w, "%s", argv0);
    if (found && strcmp(path, argv0) != 0)
        say(&w, " (%s)", path);
    if (found && e == EACCES && S_ISDIR(st.st_mode)) {
        say(&w, ": Is a directory");
        return;
    }
    if (runnable && script_interp(path, interp, sizeof interp)) {
        say(&w, ": bad interpreter ");
        say_visible(&w, interp);
        if (interp[strlen(interp) - 1] == '\r')
            say(&w, " (the #! line ends in a carriage return: DOS line endings)");
        say(&w, ": %s", strerror(e));
    } else if (runnable && e == ENOENT && elf_interp_of(path, interp, sizeof interp))
        say(&w, ": its program interpreter %s: %s", interp, strerror(e));
    else if (runnable && e == ENOENT)
        say(&w, ": cannot execute: a file it needs is missing: %s", strerror(e));
    else
        say(&w, ": %s", strerror(e));
}

/* Known failures: the exception and its innermost frame exactly as the
 * hook reports them, and what to say. */
static const struct {
    const char *error;
    const char *why;
} known_deaths[] = {
    {"AttributeError at torch/distributed/elastic/multiprocessing/api.py:to_map",
     "torchrun (torch.distributed.run) of torch 1.13 fails at start under Python 3.11 "
     "(to_map in torch/distributed/elastic/multiprocessing/api.py), before any rank starts; "
     "launch the ranks with torch.multiprocessing.spawn, or start one process per rank "
     "with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set yourself"},
};

const char *exec_why_died(const char *error, int status)
{
    if (!error || status == 0)
        return NULL;
    for (size_t i = 0; i < sizeof known_deaths / sizeof known_deaths[0]; i++)
        if (!strcmp(error, known_deaths[i].error))
            return known_deaths[i].why;
    return NULL;
}
