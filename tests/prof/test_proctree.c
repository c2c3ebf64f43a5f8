/*
 * test_proctree.c: following another process tree (proctree.c,
 * proctree_role.c, procfs.c); the hook's feed is test_hookfeed.c.
 *
 * Pure part: /proc/<pid>/stat parsing with a command name holding
 * spaces and parentheses.  Kernel part: a child that forks a copy of itself (no exec) and
 * spins; the tree finds both, gives the copy the worker role, counts
 * task-clock for each role (a software event: no PMU needed), reads the
 * scheduler, and keeps the counts once both have ended.  Roles decided on
 * what a process is: a copy of the root that execs after the tree has
 * seen it as a copy (as a shell's child does between its fork and its
 * exec) is another child for its whole life, however soon it ends after
 * the exec, the polls run in lockstep with it so the race is taken every
 * time; a copy that never execs is a worker; a pid is of the tree or not.
 * Busy threads: 20 threads spinning on one CPU each run 5% of the time,
 * yet every one of them wants a CPU all the time, and all 20 are busy.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/proctree.h"
#include "prof/procfs.h"

static void test_parse_stat(void)
{
    ProcStat st;
    const char *text = "42 (a (b) c) S 7 42 42 0 -1 4194560 123 0 4 0 250 50 0 0 20 0 1";

    CHECK_INT(procfs_parse_stat(text, &st), ==, 0);
    CHECK_INT(st.ppid, ==, 7);
    CHECK_INT(st.state, ==, 'S');
    CHECK_INT((long)st.minflt, ==, 123);
    CHECK_INT((long)st.majflt, ==, 4);
    CHECK_INT((long)st.utime, ==, 250);
    CHECK_INT((long)st.stime, ==, 50);
    CHECK_INT(procfs_parse_stat("42 (x) S", &st), ==, -1);
    CHECK_INT(procfs_parse_stat("no parenthesis", &st), ==, -1);
}

/* Spins until the thread has had `seconds` of CPU: however loaded the
 * machine, the work to count is the same. */
static void spin(double seconds)
{
    struct timespec b;
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    while ((double)b.tv_sec + (double)b.tv_nsec * 1e-9 < seconds);
}

/* The child: forks a copy (a "worker"), both spin, the copy first ends. */
static void child_main(int gate)
{
    char c;
    if (read(gate, &c, 1) < 0)
        _exit(2);
    pid_t w = fork();
    spin(w == 0 ? 0.3 : 0.5);
    if (w > 0)
        waitpid(w, NULL, 0);
    _exit(w == 0 ? 0 : 5);
}

static void test_tree(void)
{
    ProcTree *t = NULL;
    char err[256];
    int gate[2];

    CHECK_INT(proctree_new(&t, "task-clock,bogus::", err, sizeof err), ==, 0);
    CHECK_INT(proctree_count(t), ==, 2);
    CHECK_INT(pipe(gate), ==, 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(gate[1]);
        child_main(gate[0]);
    }
    close(gate[0]);
    CHECK_INT(proctree_watch(t, pid, 0, err, sizeof err), ==, 0);
    CHECK_INT(proctree_watch(t, pid, 0, err, sizeof err), ==, -CN_ESTATE);
    close(gate[1]);
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        proctree_poll(t);
        if (si.si_pid == pid)
            break;
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK_INT(WEXITSTATUS(status), ==, 5);
    proctree_poll(t);

    ProcInfo p[4];
    CHECK_INT(proctree_procs(t, p, 4), ==, 2);
    CHECK_INT(p[0].pid, ==, pid);
    CHECK_INT(p[0].role, ==, PROC_ROLE_MAIN);
    CHECK_INT(p[1].ppid, ==, pid);
    CHECK_INT(p[1].role, ==, PROC_ROLE_WORKER);
    CHECK_INT(p[0].live + p[1].live, ==, 0);
    CHECK_INT(proctree_role_procs(t, PROC_ROLE_WORKER), ==, 1);
    CHECK_INT(proctree_role_procs(t, PROC_ROLE_OTHER), ==, 0);
    CHECK(p[0].cpu > 0.45);
    CounterReading r[2];
    for (int role = PROC_ROLE_MAIN; role <= PROC_ROLE_WORKER; role++) {
        CHECK_INT(proctree_read(t, (ProcRole)role, r, 2), ==, 2);
        CHECK_INT(r[0].status, ==, CTR_OK);
        CHECK(r[0].value > 0.2e9); /* ns of task-clock, kept after the end */
        CHECK_INT(r[1].status, ==, CTR_UNKNOWN_EVENT);
        CHECK(r[1].value == 0.0);
    }
    CHECK_INT(proctree_read(t, PROC_ROLE_OTHER, r, 2), ==, 2);
    CHECK_INT(r[0].status, ==, CTR_NOT_COUNTED);
    CounterSched s;
    proctree_sched(t, PROC_ROLE_MAIN, &s);
    CHECK_INT(s.available, ==, 1);
    CHECK(s.on_cpu > 0.1);
    CHECK(proctree_peak_rss_kib(t) > 0);
    CHECK_INT(proctree_dropped(t, err, sizeof err), ==, 0);
    proctree_free(t);
}

/* Reads one byte from fd, or fails the child. */
static void await_byte(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        _exit(2);
}

/* The root of test_roles: forks a copy that will exec /bin/true when told
 * (`go`) and a copy that ends without exec, reaps both at once (as a shell
 * reaps `/bin/true &`), says so on `done`, and waits to be let go. */
static void roles_root(int go, int done, int quit)
{
    pid_t execs = fork();
    if (execs == 0) {
        await_byte(go);
        execl("/bin/true", "true", (char *)NULL);
        _exit(3);
    }
    pid_t stays = fork();
    if (stays == 0) {
        await_byte(go);
        _exit(0);
    }
    waitpid(execs, NULL, 0);
    waitpid(stays, NULL, 0);
    if (write(done, "d", 1) != 1)
        _exit(2);
    await_byte(quit);
    _exit(0);
}

static void test_roles(void)
{
    ProcTree *t = NULL;
    ProcInfo p[8];
    char err[256];
    int go[2], done[2], quit[2], n = 0;

    CHECK_INT(proctree_new(&t, "task-clock", err, sizeof err), ==, 0);
    CHECK(pipe(go) == 0 && pipe(done) == 0 && pipe(quit) == 0);
    pid_t root = fork();
    if (root == 0)
        roles_root(go[0], done[1], quit[0]);
    CHECK_INT(proctree_watch(t, root, 0, err, sizeof err), ==, 0);
    CHECK_INT(proctree_has(t, root), ==, 1);
    CHECK_INT(proctree_has(t, 1), ==, 0);
    CHECK_INT(proctree_has(t, getpid()), ==, 0);
    /* Both copies found and seen as copies (by two polls, so that even
     * without perf they would count as workers): the old rule made them
     * workers from here on. */
    for (int tries = 0; tries < 3000 && n < 3; tries++) {
        proctree_poll(t);
        n = proctree_procs(t, p, 8);
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    CHECK_INT(n, ==, 3);
    proctree_poll(t);
    n = proctree_procs(t, p, 8);
    for (int k = 1; k < n; k++) {
        CHECK_INT(p[k].role, ==, PROC_ROLE_WORKER);
        CHECK_INT(proctree_has(t, p[k].pid), ==, 1);
    }
    CHECK_INT(proctree_role_peak_live(t, PROC_ROLE_WORKER), ==, 2);
    /* One execs and ends, the other ends; both reaped before the next poll. */
    CHECK(write(go[1], "gg", 2) == 2);
    char c;
    CHECK(read(done[0], &c, 1) == 1);
    proctree_poll(t);
    n = proctree_procs(t, p, 8);
    CHECK_INT(n, ==, 3);
    /* The one that exec'd is the other child, the other a worker (which
     * is which: either may have been found first). */
    int others = 0, workers = 0;
    for (int k = 1; k < n; k++) {
        CHECK_INT(p[k].live, ==, 0);
        others += p[k].role == PROC_ROLE_OTHER;
        workers += p[k].role == PROC_ROLE_WORKER;
    }
    CHECK_INT(others, ==, 1);
    CHECK_INT(workers, ==, 1);
    CHECK_INT(proctree_role_procs(t, PROC_ROLE_WORKER), ==, 1);
    CHECK_INT(proctree_role_peak_live(t, PROC_ROLE_WORKER), ==, 1);
    CHECK_INT(proctree_role_peak_live(t, PROC_ROLE_OTHER), ==, 1);
    /* Gone and never of the tree: a pid no process has. */
    CHECK(write(quit[1], "q", 1) == 1);
    waitpid(root, NULL, 0);
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    CHECK_INT(proctree_has(t, gone), ==, -1);
    proctree_free(t);
}

#define CROWD 20

static double mono(void)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)b.tv_sec + (double)b.tv_nsec * 1e-9;
}

static void *crowd_spin(void *end)
{
    while (mono() < *(const double *)end)
        ;
    return NULL;
}

/* The child: pinned to its first allowed CPU, CROWD threads spin there
 * for 0.6 s of wall time, so each is on the CPU about 1/CROWD of it. */
static void crowd_main(int gate)
{
    cpu_set_t set;
    pthread_t th[CROWD];
    char c;

    if (read(gate, &c, 1) < 0 || sched_getaffinity(0, sizeof set, &set) != 0)
        _exit(2);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set)) {
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            break;
        }
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        _exit(2);
    double end = mono() + 0.6;
    for (int k = 0; k < CROWD; k++)
        if (pthread_create(&th[k], NULL, crowd_spin, &end) != 0)
            _exit(3);
    for (int k = 0; k < CROWD; k++)
        pthread_join(th[k], NULL);
    _exit(0);
}

static void test_busy_crowd(void)
{
    ProcTree *t = NULL;
    char err[256];
    int gate[2], status = 0;

    CHECK_INT(proctree_new(&t, "task-clock", err, sizeof err), ==, 0);
    CHECK_INT(pipe(gate), ==, 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(gate[1]);
        crowd_main(gate[0]);
    }
    close(gate[0]);
    CHECK_INT(proctree_watch(t, pid, 0, err, sizeof err), ==, 0);
    CHECK_INT((int)write(gate[1], "g", 1), ==, 1);
    close(gate[1]);
    while (waitpid(pid, &status, WNOHANG) == 0) {
        proctree_poll(t);
        struct timespec d = {0, 20 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    CHECK_INT(WEXITSTATUS(status), ==, 0);
    CounterSched s;
    proctree_sched(t, PROC_ROLE_MAIN, &s);
    if (!s.available) {
        printf("skip busy threads: no schedstat here\n");
    } else {
        /* Threads first seen late in their life may have too short a
         * record to judge; most of the crowd is seen early. */
        CHECK(proctree_busy_threads(t, PROC_ROLE_MAIN, 0.10) >= CROWD / 2);
    }
    proctree_free(t);
}

int main(void)
{
    test_parse_stat();
    test_tree();
    test_roles();
    test_busy_crowd();
    return check_report();
}
