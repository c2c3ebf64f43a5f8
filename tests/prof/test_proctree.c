/*
 * test_proctree.c: following another process tree (proctree.c, procfs.c)
 * and the Python hook's feed (hookfeed.c).
 *
 * Pure parts: /proc/<pid>/stat parsing with a command name holding
 * spaces and parentheses; the hook's JSON lines fed in pieces cut
 * anywhere, bad lines counted, the figures' window leaving out the first
 * batch.  Kernel part: a child that forks a copy of itself (no exec) and
 * spins; the tree finds both, gives the copy the worker role, counts
 * task-clock for each role (a software event: no PMU needed), reads the
 * scheduler, and keeps the counts once both have ended.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/hookfeed.h"
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

static void feed(HookFeed *f, const char *s, size_t piece)
{
    for (size_t i = 0; i < strlen(s); i += piece)
        hookfeed_bytes(f, s + i, strlen(s) - i < piece ? strlen(s) - i : piece);
}

static void test_hookfeed(void)
{
    const char *lines =
        "{\"ev\": \"hello\", \"pid\": 9, \"torch\": \"1.13.1\"}\n"
        "{\"ev\": \"workers\", \"pids\": [11, 12]}\n"
        "{\"ev\": \"config\", \"threads\": 4, \"workers\": 2}\n"
        "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.5, \"step\": 0.0, \"t\": 10.0}\n"
        "not json\n"
        "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 0.3, \"t\": 10.4}\n"
        "{\"ev\": \"workers\", \"pids\": [12, 13]}\n"
        "{\"ev\": \"batch\", \"n\": 32, \"wait\": 0.1, \"step\": 0.5, \"t\": 11.0}\n"
        "{\"ev\": \"end\", \"t\": 11.6}\n";
    HookFigures fig;
    HookFeed f;

    for (size_t piece = 1; piece <= 7; piece += 3) {
        hookfeed_init(&f);
        feed(&f, lines, piece);
        CHECK_INT(f.hello, ==, 1);
        CHECK(strcmp(f.torch, "1.13.1") == 0);
        CHECK_INT(f.pid, ==, 9);
        CHECK_INT(f.nworkers, ==, 3);
        CHECK_INT(f.workers[2], ==, 13);
        CHECK_INT(f.bad, ==, 1);
        CHECK_INT(f.batches, ==, 3);
        CHECK_INT(f.threads, ==, 4);
        CHECK_INT(f.loader_workers, ==, 2);
        hookfeed_figures(&f, &fig);
        CHECK_INT(fig.ok, ==, 1);
        CHECK_NEAR(fig.images, 96.0, 1e-9);      /* the first batch only starts the clock */
        CHECK_NEAR(fig.window, 1.6, 1e-9);       /* first batch to the end */
        CHECK_NEAR(fig.images_per_s, 60.0, 1e-9);
        CHECK_NEAR(fig.data_wait_share, 0.125, 1e-9);
        CHECK_NEAR(fig.step_s, 0.4, 1e-9);
        CHECK_NEAR(fig.first_wait, 0.5, 1e-9);
    }
    /* One batch is no rate; a line over HOOK_LINE_MAX is dropped whole;
     * threads and workers the hook never said are unknown, never 0. */
    hookfeed_init(&f);
    CHECK_INT(f.threads, ==, -1);
    CHECK_INT(f.loader_workers, ==, -1);
    feed(&f, "{\"ev\": \"config\", \"threads\": \"x\"}\n", 4);
    CHECK_INT(f.threads, ==, -1);
    CHECK_INT(f.loader_workers, ==, -1);
    feed(&f, "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.5, \"step\": 0, \"t\": 1}\n", 5);
    hookfeed_figures(&f, &fig);
    CHECK_INT(fig.ok, ==, 0);
    static char big[HOOK_LINE_MAX + 100];
    memset(big, 'x', sizeof big - 2);
    big[sizeof big - 2] = '\n';
    feed(&f, big, 1000);
    feed(&f, "{\"ev\": \"end\", \"t\": 2}\n", 3);
    CHECK_INT(f.bad, ==, 1);
    hookfeed_figures(&f, &fig);
    CHECK_INT(fig.ok, ==, 0);
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

int main(void)
{
    test_parse_stat();
    test_hookfeed();
    test_tree();
    return check_report();
}
