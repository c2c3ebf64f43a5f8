/*
 * test_launch.c: the MPI launcher's process side (src/dist/launch.c) that
 * needs no MPI: dist_launch_kill_tree() ends a whole tree, three levels
 * deep (as run --ranks, mpirun and a rank are), including a grandchild
 * that ignores SIGTERM; a process outside the tree is left alone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
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
    return check_report();
}
