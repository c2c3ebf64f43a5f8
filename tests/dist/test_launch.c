/*
 * test_launch.c: the MPI launcher's process side (src/dist/launch.c) that
 * needs no MPI: dist_launch_kill_tree() ends a whole tree, three levels
 * deep (as run --ranks, mpirun and a rank are), including a grandchild
 * that ignores SIGTERM; a process outside the tree is left alone.  And
 * dist_launch_env() gives the child its variable, and root's two OpenMPI
 * variables, once each in place of any of the same name, this process's
 * environment unchanged.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/dist.h"

static int alive(pid_t pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    /* a zombie (state Z) has ended */
    int ok = fscanf(f, "%*d (%*[^)]) %c", &state) == 1;
    fclose(f);
    return ok && state != 'Z' && state != 'X';
}

/* root -> child -> grandchild, each writing its pid to the pipe, then all
 * sleeping; the grandchild ignores SIGTERM. */
static pid_t tree(int fd)
{
    pid_t root = fork();
    if (root != 0)
        return root;
    pid_t child = fork();
    if (child == 0) {
        pid_t grand = fork();
        if (grand == 0) {
            signal(SIGTERM, SIG_IGN);
            pid_t me = getpid();
            if (write(fd, &me, sizeof me) != sizeof me)
                _exit(2);
            for (;;)
                pause();
        }
        if (write(fd, &grand, sizeof grand) != sizeof grand)
            _exit(2);
        for (;;)
            pause();
    }
    for (;;)
        pause();
}

/* How many of text's lines are exactly line. */
static int lines_equal(const char *text, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *t = text; t && *t; t = strchr(t, '\n') ? strchr(t, '\n') + 1 : NULL)
        n += strncmp(t, line, len) == 0 && (t[len] == '\n' || t[len] == '\0');
    return n;
}

/* How many of text's lines set the variable name. */
static int lines_named(const char *text, const char *name)
{
    int n = 0;
    size_t len = strlen(name);
    for (const char *t = text; t && *t; t = strchr(t, '\n') ? strchr(t, '\n') + 1 : NULL)
        n += strncmp(t, name, len) == 0 && t[len] == '=';
    return n;
}

static void test_env(void)
{
    char *const args[] = {"/bin/sh", "-c", "env >&2", NULL};
    char out[1 << 16];
    size_t got = 0;
    int fd = -1;

    /* already set here: the child sees the launch's value, once */
    CHECK_INT(setenv("CNNTOP_TEST_LAUNCH", "old", 1), ==, 0);
    CHECK_INT(setenv("OMPI_ALLOW_RUN_AS_ROOT", "0", 1), ==, 0);
    int pid = dist_launch_env(args, &fd, 1, NULL, "CNNTOP_TEST_LAUNCH=new");
    CHECK_INT(pid > 0, ==, 1);
    if (pid <= 0)
        return;
    for (ssize_t k; got + 1 < sizeof out && (k = read(fd, out + got, sizeof out - 1 - got)) != 0;)
        if (k > 0)
            got += (size_t)k;
        else if (errno != EINTR)
            break;
    out[got] = '\0';
    close(fd);
    CHECK_INT(dist_launch_wait(pid, NULL), ==, 0);
    CHECK_INT(lines_equal(out, "CNNTOP_TEST_LAUNCH=new"), ==, 1);
    CHECK_INT(lines_named(out, "CNNTOP_TEST_LAUNCH"), ==, 1);
    CHECK_INT(lines_named(out, "PATH"), ==, getenv("PATH") ? 1 : 0);
    const int root = geteuid() == 0;
    CHECK_INT(lines_equal(out, "OMPI_ALLOW_RUN_AS_ROOT=1"), ==, root);
    CHECK_INT(lines_equal(out, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"), ==, root);
    CHECK_INT(lines_named(out, "OMPI_ALLOW_RUN_AS_ROOT"), ==, 1);
    /* this process's environment is as it was */
    CHECK(getenv("CNNTOP_TEST_LAUNCH") && strcmp(getenv("CNNTOP_TEST_LAUNCH"), "old") == 0);
    CHECK(getenv("OMPI_ALLOW_RUN_AS_ROOT") &&
          strcmp(getenv("OMPI_ALLOW_RUN_AS_ROOT"), "0") == 0);
    unsetenv("CNNTOP_TEST_LAUNCH");
    unsetenv("OMPI_ALLOW_RUN_AS_ROOT");
}

int main(void)
{
    int p[2];
    pid_t grand = 0, grand2 = 0;

    CHECK_INT(pipe(p), ==, 0);
    pid_t root = tree(p[1]);
    pid_t outside = fork();
    if (outside == 0) {
        for (;;)
            pause();
    }
    /* the grandchild's pid, twice (its parent and itself write it) */
    CHECK_INT((int)read(p[0], &grand, sizeof grand), ==, (int)sizeof grand);
    CHECK_INT((int)read(p[0], &grand2, sizeof grand2), ==, (int)sizeof grand2);
    CHECK_INT(grand, ==, grand2);
    CHECK_INT(alive(grand), ==, 1);
    dist_launch_kill_tree(root);
    int status = 0;
    CHECK_INT(waitpid(root, &status, 0), ==, root);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* the grandchild, reparented and reaped by init (or a subreaper): gone
     * within 10 s */
    for (int k = 0; k < 1000 && alive(grand); k++) {
        struct timespec d = {0, 10 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    CHECK_INT(alive(grand), ==, 0);
    if (alive(grand)) /* failed: leave nothing holding ctest's pipe */
        kill(grand, SIGKILL);
    CHECK_INT(alive(outside), ==, 1);
    kill(outside, SIGKILL);
    waitpid(outside, NULL, 0);
    test_env();
    return check_report();
}
