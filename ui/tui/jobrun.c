/*
 * jobrun.c: the dashboard's run of several ranks (see jobrun.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cnntop/dist.h"
#include "cnntop/settings.h"
#include "common/signals.h"
#include "tui/jobrun.h"

#define JOB_MAX_WORDS 64
#define JOB_STOP_GRACE 30.0 /* seconds a stopped job may take to end */

typedef struct Job {
    TuiRun *r;
    char live[PATH_MAX], out[PATH_MAX], self[PATH_MAX], env[PATH_MAX + 32];
    char *args[JOB_MAX_WORDS];
    char vals[JOB_MAX_WORDS][128];
    int words;              /* args before --export */
    int pid, err_fd;
    off_t live_off;
    char lbuf[DIST_LIVE_LINE];
    size_t llen;
    char ebuf[1024];
    size_t elen;
    char why[512];          /* the command's last line about a failure */
    long dropped;           /* live lines refused */
    double last_t;          /* the last sample's time into the run */
} Job;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "--key VALUE" of each settings_run row that a file holds, as
 * `cnntop run` takes it; a 0 the command line refuses (it means the
 * option left out) and the default data directory are left out. */
static void add_settings(Job *j, const RunConfig *cfg, int *n)
{
    for (const Setting *s = settings_run; s->key && *n < JOB_MAX_WORDS - 12; s++) {
        if (s->flags & SETTING_NO_FILE)
            continue;
        char *name = j->vals[*n], *val = j->vals[*n + 1];
        snprintf(name, sizeof j->vals[0], "--%s", s->key);
        for (char *c = name; *c; c++)
            *c = *c == '_' ? '-' : *c;
        if (s->type == SETTING_PATH) /* the run thread's own copy: it outlives the job */
            val = j->r->data;
        else
            settings_format(s, cfg, val, sizeof j->vals[0]);
        if (!val[0] || ((s->flags & SETTING_OPT_NONZERO) && !strcmp(val, "0")))
            continue;
        j->args[(*n)++] = name;
        j->args[(*n)++] = val;
    }
}

/* SELF run SETTINGS --ranks N --export OUT --force. */
static void build_args(Job *j, const RunConfig *cfg, int ranks)
{
    int n = 0;

    j->args[n++] = j->self;
    j->args[n++] = "run";
    add_settings(j, cfg, &n);
    j->args[n++] = "--ranks";
    snprintf(j->vals[n], sizeof j->vals[0], "%d", ranks);
    j->args[n] = j->vals[n];
    n++;
    j->words = n;
    j->args[n++] = "--export";
    j->args[n++] = j->out;
    j->args[n++] = "--force";
    j->args[n] = NULL;
}

/* A temporary file from pattern (ending in suffix) into path; 0 or -1. */
static int temp_file(char *path, size_t len, const char *suffix)
{
    const char *dir = getenv("TMPDIR");

    snprintf(path, len, "%s/cnntop-dash-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
        path[0] = '\0';
        return -1;
    }
    close(fd);
    return 0;
}

/* One line of the command's stderr: its last line about a failure kept. */
static void err_line(Job *j, const char *l)
{
    /* what run --ranks says on every run, failed or not: never the reason */
    static const char *const routine[] = {"cnntop: starting the job", "cnntop: as root",
                                          "cnntop: the run record written",
                                          "cnntop: the partial run record",
                                          "cnntop: calibrating (first use)"};

    if (strncmp(l, "cnntop: ", 8) != 0)
        return;
    for (size_t k = 0; k < sizeof routine / sizeof *routine; k++)
        if (!strncmp(l, routine[k], strlen(routine[k])))
            return;
    /* A rank's end, once said, is the reason; later lines follow from it. */
    if (!strncmp(j->why, "rank ", 5) && strncmp(l + 8, "rank ", 5) != 0)
        return;
    snprintf(j->why, sizeof j->why, "%s", l + 8);
}

/* Reads what the command wrote to stderr, a line at a time (a line
 * longer than the buffer is cut); at its end closes the pipe. */
static void read_err(Job *j)
{
    char buf[4096];
    ssize_t n;

    while (j->err_fd >= 0 && (n = read(j->err_fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n' || buf[i] == '\r') {
                j->ebuf[j->elen] = '\0';
                err_line(j, j->ebuf);
                j->elen = 0;
            } else if (j->elen + 1 < sizeof j->ebuf)
                j->ebuf[j->elen++] = buf[i];
        }
    }
    close(j->err_fd);
    j->err_fd = -1;
}

/* Under mu: room for more job samples; 0 when none. */
static int samples_grow(TuiRun *r)
{
    int cap = r->cap_job ? r->cap_job * 2 : 1024;
    Sample *s = cap <= RUNTHREAD_MAX_JOB_SAMPLES ? realloc(r->job, sizeof *s * (size_t)cap) : NULL;

    if (!s)
        return 0;
    r->job = s;
    r->cap_job = cap;
    return 1;
}

int jobrun_samples(TuiRun *r, Sample *out, int from, int max)
{
    pthread_mutex_lock(&r->mu);
    int n = r->njob - from < max ? r->njob - from : max;
    if (n > 0)
        memcpy(out, r->job + from, sizeof *out * (size_t)n);
    pthread_mutex_unlock(&r->mu);
    return n > 0 ? n : 0;
}

/* A good live line into the view: the progress, the figures, a sample. */
static void publish(Job *j, const DistLive *l)
{
    TuiRun *r = j->r;
    RunView *v = &r->view;
    Sample s = {.t = l->elapsed, .dt = l->elapsed - j->last_t, .step = l->step,
                .images = l->images, .loss = (float)l->loss, .images_per_s = (float)l->ips,
                .queue_fill = -1.0f, .workers = v->cfg.workers, .batch = v->cfg.batch,
                .ipc = NAN, .miss_rate = NAN};

    j->last_t = l->elapsed;
    pthread_mutex_lock(&r->mu);
    v->p = (Progress){.epoch = l->epoch, .epochs = l->epochs, .step = l->step,
                      .steps = l->steps, .images = l->images, .elapsed = l->elapsed,
                      .images_per_s = l->elapsed > 0 ? (double)l->images / l->elapsed : 0.0,
                      .loss = (float)l->loss, .epoch_loss = l->loss};
    v->have_p = 1;
    v->live = *l;
    v->have_dlive = 1;
    if (v->state == RUN_LOADING)
        v->state = RUN_TRAINING;
    if (l->step == l->steps)
        v->state = RUN_EVALUATING;
    if (r->njob < r->cap_job || samples_grow(r))
        r->job[r->njob++] = s;
    pthread_mutex_unlock(&r->mu);
}

/* Reads the live file's new bytes; each whole line checked and published. */
static void read_live(Job *j)
{
    char buf[4096];
    ssize_t n;
    int fd = open(j->live, O_RDONLY | O_CLOEXEC);

    while (fd >= 0 && (n = pread(fd, buf, sizeof buf, j->live_off)) > 0) {
        j->live_off += n;
        for (ssize_t i = 0; i < n; i++) {
            if (j->llen + 1 < sizeof j->lbuf)
                j->lbuf[j->llen++] = buf[i];
            if (buf[i] != '\n')
                continue;
            DistLive l;
            j->lbuf[j->llen] = '\0';
            if (j->llen + 1 < sizeof j->lbuf && dist_live_parse(j->lbuf, &l) == 0)
                publish(j, &l);
            else
                j->dropped++;
            j->llen = 0;
        }
    }
    if (fd >= 0)
        close(fd);
}

/* Polls the command until it ends: its stderr, the live lines, a stop
 * asked for; returns its exit code (dist_launch_wait's) and *stopped. */
static int follow(Job *j, int *stopped)
{
    double t_stop = 0.0;
    int code = -1, killed = 0;

    *stopped = 0;
    for (;;) {
        struct pollfd pf = {.fd = j->err_fd, .events = POLLIN};
        if (poll(&pf, j->err_fd >= 0 ? 1 : 0, 100) > 0)
            read_err(j);
        read_live(j);
        if (dist_launch_reap(j->pid, &code))
            break;
        if (!*stopped && atomic_load(&j->r->stop)) {
            kill(j->pid, SIGTERM); /* run --ranks passes it to the ranks */
            *stopped = 1;
            t_stop = now_s();
        } else if (*stopped && !killed && now_s() - t_stop > JOB_STOP_GRACE) {
            dist_launch_kill_tree(j->pid); /* run --ranks, mpirun and the ranks */
            killed = 1;
        }
    }
    while (j->err_fd >= 0)
        read_err(j);
    read_live(j);
    return code;
}

/* The job's record read back into r->rec; 1 when there is one. */
static int read_back(Job *j)
{
    TuiRun *r = j->r;
    char err[512];

    record_done(&r->rec);
    record_init(&r->rec);
    if (record_load_json(j->out, &r->rec, err, sizeof err) != 0)
        return 0;
    j->args[j->words] = NULL; /* the run, not its temporary export */
    record_set_command(&r->rec, j->words, j->args);
    return 1;
}

/* The view's end: the record's figures, the state and its reason. */
static void finish(Job *j, int code, int stopped, int have)
{
    TuiRun *r = j->r;
    RunView *v = &r->view;
    RunRecord *rec = &r->rec;

    pthread_mutex_lock(&r->mu);
    r->have_rec = have;
    if (have) {
        v->st = rec->train;
        v->have_st = 1;
        v->ev = rec->eval;
        v->have_ev = rec->have_eval;
        v->threads = rec->threads_used > 0 ? rec->threads_used : 0;
        v->train_images = rec->train_images;
        v->test_images = rec->test_images;
        snprintf(v->data_dir, sizeof v->data_dir, "%s", rec->data_dir ? rec->data_dir : "");
    }
    if (have && (code == 0 || stopped))
        v->state = stopped || rec->train.stopped ? RUN_STOPPED : RUN_FINISHED;
    else if (stopped && !j->why[0])
        v->state = RUN_STOPPED;
    else {
        v->state = RUN_FAILED;
        if (j->why[0])
            snprintf(v->reason, sizeof v->reason, "%s", j->why);
        else
            snprintf(v->reason, sizeof v->reason, "the job (cnntop run --ranks %d) exited "
                     "with status %d", v->ranks, code);
    }
    v->t_end = now_s();
    pthread_mutex_unlock(&r->mu);
}

/* The job's command line and files; 0, or -1 with the view failed. */
static int prepare(Job *j)
{
    ssize_t n = readlink("/proc/self/exe", j->self, sizeof j->self - 1);
    const char *why = NULL;

    if (n < 0)
        why = "cannot find this program (/proc/self/exe)";
    else if (temp_file(j->live, sizeof j->live, ".live") != 0 ||
             temp_file(j->out, sizeof j->out, ".json") != 0)
        why = "cannot make a temporary file (TMPDIR)";
    if (why) {
        snprintf(j->why, sizeof j->why, "%s", why);
        return -1;
    }
    j->self[n] = '\0';
    snprintf(j->env, sizeof j->env, "%s=%s", DIST_LIVE_ENV, j->live);
    build_args(j, &j->r->view.cfg, j->r->view.ranks);
    return 0;
}

void jobrun_main(TuiRun *r)
{
    static Job job; /* one run thread at a time; large */
    Job *j = &job;
    int stopped = 0, code = -1, have = 0;

    memset(j, 0, sizeof *j);
    j->r = r;
    j->err_fd = -1;
    if (prepare(j) == 0) {
        j->pid = dist_launch_env(j->args, &j->err_fd, 1, signals_child_reset, j->env);
        if (j->pid < 0)
            snprintf(j->why, sizeof j->why, "cannot start the job: %s", strerror(-j->pid));
        else {
            fcntl(j->err_fd, F_SETFL, O_NONBLOCK);
            code = follow(j, &stopped);
            have = read_back(j);
        }
    }
    finish(j, code, stopped, have);
    if (j->live[0])
        unlink(j->live);
    if (j->out[0])
        unlink(j->out);
}
