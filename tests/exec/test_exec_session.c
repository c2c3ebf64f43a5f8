/*
 * test_exec_session.c: the exec session (cnntop/exec.h, src/exec/session.c)
 * driven as a front end drives it, with nothing printed: /bin/true runs
 * and ends with 0; a missing command is exit code 127 (EXEC_RC_NOT_FOUND)
 * with a one-line message naming it; a directory 126 ("Is a directory");
 * a command killed by a signal 128+N with the signal in its result; the
 * output captured to a sink, whole and in order per stream; a bad
 * --progress pattern and -e list -CN_EINVAL before anything runs; the
 * record filled once it ran and refused before; the kill function and the
 * stop signal a handler would give; the live verdict without the hook's
 * figures keeps the data wait unknown (NAN, its bound n/a), never 0; the
 * hook's variables reach the command alone, the same on a second run, and
 * cnntop's own environment is left as it was.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/err.h"
#include "cnntop/exec.h"

/* What the sink was given, per stream. */
typedef struct Sink {
    char buf[2][256];
    size_t n[2];
} Sink;

static void sink(void *u, int stream, const char *buf, size_t n)
{
    Sink *s = u;
    size_t room = sizeof s->buf[stream] - 1 - s->n[stream];
    n = n < room ? n : room;
    memcpy(s->buf[stream] + s->n[stream], buf, n);
    s->n[stream] += n;
    s->buf[stream][s->n[stream]] = '\0';
}

/* Runs argv to its end; the session's start code, *rc its exit code. */
static int run(char **argv, const char *progress, Sink *out, ExecSession *s, char *err,
               size_t len)
{
    ExecRun x = {.argv = argv, .hook = 0, .progress = progress,
                 .output = out ? sink : NULL, .output_u = out, .quiet = out == NULL};

    exec_session_init(s);
    int rc = exec_session_start(s, &x, err, len);
    if (rc)
        return rc;
    while (exec_session_step(s, 20, -1))
        ;
    return 0;
}

static void test_true(void)
{
    static ExecSession s;
    char err[256] = "", *argv[] = {"/bin/true", NULL};
    RunRecord rec;

    CHECK_INT(run(argv, NULL, NULL, &s, err, sizeof err), ==, 0);
    CHECK_INT(s.rc, ==, 0);
    CHECK_INT(s.ran, ==, 1);
    CHECK_INT(s.running, ==, 0);
    CHECK_INT(s.res.signal, ==, 0);
    CHECK(s.res.wall >= 0.0);
    CHECK(exec_session_note(&s) == NULL);
    record_init(&rec);
    CHECK_INT(exec_session_record(&s, &rec, 1, argv), ==, 0);
    CHECK_INT(rec.have_exec, ==, 1);
    CHECK_INT(rec.exit_code, ==, 0);
    CHECK(rec.exec.command && strstr(rec.exec.command, "/bin/true"));
    record_done(&rec);
    exec_session_close(&s);
    exec_session_close(&s); /* idempotent */
}

static void test_missing(void)
{
    static ExecSession s;
    char err[256] = "", *argv[] = {"/nonexistent/cnntop-test-cmd", NULL};

    CHECK_INT(run(argv, NULL, NULL, &s, err, sizeof err), ==, -CN_EIO);
    CHECK_INT(s.rc, ==, EXEC_RC_NOT_FOUND);
    CHECK_INT(s.rc, ==, 127);
    CHECK(!strcmp(err, "/nonexistent/cnntop-test-cmd: No such file or directory"));
    CHECK(!strchr(err, '\n'));
    CHECK_INT(s.ran, ==, 0);
}

static void test_directory(void)
{
    static ExecSession s;
    char err[256] = "", *argv[] = {"/", NULL};

    CHECK_INT(run(argv, NULL, NULL, &s, err, sizeof err), ==, -CN_EIO);
    CHECK_INT(s.rc, ==, EXEC_RC_NOT_RUN);
    CHECK_STR_HAS(err, "Is a directory");
}

static void test_signal(void)
{
    static ExecSession s;
    char err[256] = "", *argv[] = {"/bin/sh", "-c", "kill -USR1 $$", NULL};

    CHECK_INT(run(argv, NULL, NULL, &s, err, sizeof err), ==, 0);
    CHECK_INT(s.res.signal, ==, SIGUSR1);
    CHECK_INT(s.rc, ==, 128 + SIGUSR1);
    exec_session_close(&s);
}

static void test_capture(void)
{
    static ExecSession s;
    static Sink out;
    char err[256] = "";
    char *argv[] = {"/bin/sh", "-c", "echo one; echo two >&2; echo 'step 7 of 9'", NULL};

    memset(&out, 0, sizeof out);
    CHECK_INT(run(argv, "step ([0-9]+)", &out, &s, err, sizeof err), ==, 0);
    CHECK_INT(s.rc, ==, 0);
    CHECK(!strcmp(out.buf[0], "one\nstep 7 of 9\n"));
    CHECK(!strcmp(out.buf[1], "two\n"));
    CHECK_INT(s.prog.matches, ==, 1);
    CHECK_NEAR(s.prog.last, 7.0, 0.0);
    exec_session_close(&s);
}

static void test_bad_input(void)
{
    static ExecSession s;
    char err[256] = "", *argv[] = {"/bin/true", NULL};
    ExecRun x = {.argv = argv, .events = "task-clock,,x"};
    RunRecord rec;

    CHECK_INT(run(argv, "x(", NULL, &s, err, sizeof err), ==, -CN_EINVAL);
    CHECK(!strncmp(err, "--progress: 'x(': ", 18));
    exec_session_init(&s);
    CHECK_INT(exec_session_start(&s, &x, err, sizeof err), ==, -CN_EINVAL);
    CHECK(!strncmp(err, "-e: ", 4));
    record_init(&rec);
    CHECK_INT(exec_session_record(&s, &rec, 1, argv), ==, -CN_ESTATE);
    record_done(&rec);
}

/* The kill function ends a command that would run on; a stop signal a
 * handler gives is kept (SIGINT not passed on). */
static void test_kill(void)
{
    static ExecSession s;
    char err[256] = "", *argv[] = {"/bin/sleep", "60", NULL};
    ExecRun x = {.argv = argv, .quiet = 1};

    exec_session_init(&s);
    CHECK_INT(exec_session_start(&s, &x, err, sizeof err), ==, 0);
    exec_session_signal(&s, SIGINT);
    CHECK_INT(exec_session_stop_signal(&s), ==, SIGINT);
    CHECK_INT(exec_session_step(&s, 10, -1), ==, 1); /* SIGINT was not passed on */
    exec_session_kill(&s, SIGKILL);
    while (exec_session_step(&s, 20, -1))
        ;
    CHECK_INT(s.rc, ==, 128 + SIGKILL);
    exec_session_signal(NULL, SIGTERM); /* a handler with no session: nothing */
    exec_session_close(&s);
}

/* The live verdict of a tree: no hook figures leave the data wait
 * unknown and the bound says n/a; the hook's figures judge it. */
static void test_verdict_unknown_wait(void)
{
    ProcTree *t = NULL;
    char err[256] = "";
    VerdictInput in;
    Verdict v;
    HookFigures fig = {.ok = 1, .data_wait_share = 0.6};

    CHECK_INT(proctree_new(&t, "", err, sizeof err), ==, 0);
    if (!t)
        return;
    exec_verdict(t, NULL, &in, &v);
    CHECK(isnan(in.data_wait_share));
    CHECK(!v.loader_bound);
    CHECK(strncmp(v.bound, "n/a", 3) == 0);
    CHECK(strncmp(v.bound_brief, "n/a", 3) == 0);
    exec_verdict(t, &fig, &in, &v);
    CHECK_NEAR(in.data_wait_share, 0.6, 1e-12);
    CHECK(v.loader_bound);
    proctree_free(t);
}

/* The hook's environment: PYTHONPATH with the hook first and the user's
 * after, CNNTOP_HOOK_FD and CNNTOP_LAYERS set, an outer CNNTOP_HOOK_PID
 * gone, in the command's environment; this process's unchanged, twice. */
static void test_hook_env(void)
{
    static ExecSession s;
    static Sink out[2];
    char err[256] = "";
    char *argv[] = {"/bin/sh", "-c",
                    "echo \"$PYTHONPATH|${CNNTOP_HOOK_FD:+fd}|$CNNTOP_LAYERS|"
                    "${CNNTOP_HOOK_PID:-none}\"",
                    NULL};

    CHECK_INT(setenv("PYTHONPATH", "/user/path", 1), ==, 0);
    CHECK_INT(setenv("CNNTOP_HOOK_PID", "123", 1), ==, 0);
    unsetenv("CNNTOP_HOOK_FD");
    unsetenv("CNNTOP_LAYERS");
    for (int k = 0; k < 2; k++) {
        ExecRun x = {.argv = argv, .hook = 1, .layers = "2:3", .output = sink,
                     .output_u = &out[k]};
        memset(&out[k], 0, sizeof out[k]);
        exec_session_init(&s);
        CHECK_INT(exec_session_start(&s, &x, err, sizeof err), ==, 0);
        while (exec_session_step(&s, 20, -1))
            ;
        CHECK_INT(s.rc, ==, 0);
        if (s.hook.on) {
            CHECK_STR_HAS(out[k].buf[0], ":/user/path|fd|2:3|none\n");
            CHECK(strncmp(out[k].buf[0], "/user/path", 10) != 0);
        } else /* the hook is not installed here: the user's alone */
            CHECK(!strcmp(out[k].buf[0], "/user/path|||123\n"));
        exec_session_close(&s);
        CHECK(!strcmp(getenv("PYTHONPATH"), "/user/path"));
        CHECK(!strcmp(getenv("CNNTOP_HOOK_PID"), "123"));
        CHECK(getenv("CNNTOP_HOOK_FD") == NULL);
        CHECK(getenv("CNNTOP_LAYERS") == NULL);
    }
    CHECK(!strcmp(out[0].buf[0], out[1].buf[0]));
    unsetenv("PYTHONPATH");
    unsetenv("CNNTOP_HOOK_PID");
}

int main(void)
{
    test_verdict_unknown_wait();
    test_true();
    test_missing();
    test_directory();
    test_signal();
    test_capture();
    test_bad_input();
    test_kill();
    test_hook_env();
    return check_report();
}
