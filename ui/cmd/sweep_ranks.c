/*
 * sweep_ranks.c: `cnntop sweep --ranks 1,2` (sweep.h): a configuration of
 * N ranks runs as `cnntop run --ranks N` (ranks.c, through mpirun) in a
 * child process of its own, its record read back from a temporary export,
 * so that the sweep's rows and `run --ranks` measure the same job.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cnntop/dist.h"
#include "cmd/ranks.h"
#include "cmd/runner.h"
#include "cmd/sweep.h"
#include "common/exit.h"
#include "common/signals.h"

int sweep_ranks_check(const Options *o)
{
    int nb = o->n_batch ? o->n_batch : 1, rc;

    for (int r = 0; r < o->n_ranks; r++)
        for (int b = 0; b < nb; b++)
            if ((rc = ranks_check(o, o->n_batch ? o->batch_list[b] : o->cfg.batch,
                                  o->ranks_list[r])) != 0)
                return rc;
    return 0;
}

/* Whether argv[i] is the sweep's own option `name` (a value after it or
 * after '='); *skip: the words it takes. */
static int is_opt(const char *a, const char *name, int has_value, int *skip)
{
    size_t n = strlen(name);

    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    *skip = has_value && a[n] == '\0' ? 2 : 1;
    return 1;
}

/* The sweep's options that the run does not take, or takes from the row. */
static int sweep_only(const char *a, int *skip)
{
    static const struct { const char *name; int value; } own[] = {
        {"--ranks", 1}, {"--batch", 1}, {"--workers", 1}, {"--threads", 1}, {"--export", 1},
        {"--budget", 1}, {"--force", 0}, {"--no-hook", 0},
    };
    for (size_t k = 0; k < sizeof own / sizeof *own; k++)
        if (is_opt(a, own[k].name, own[k].value, skip))
            return 1;
    return 0;
}

/* Appends "--NAME VALUE" to args at *n. */
static void add_value(char **args, int *n, char *buf, size_t len, const char *name, int v)
{
    snprintf(buf, len, "%d", v);
    args[(*n)++] = (char *)name;
    args[(*n)++] = buf;
}

/* `SELF run ARGS --batch B [--workers W] [--threads T] --ranks N --export
 * PATH --force` into args (room for argc + 16), NULL-ended; returns the
 * words before --export. */
static int build_args(char **args, char nums[4][16], const char *self, const Options *o,
                       const RunConfig *cfg, int ranks, const char *path, int argc,
                       char **argv)
{
    int n = 0, skip;

    args[n++] = (char *)self;
    args[n++] = "run";
    for (int i = 2; i < argc; i += 1)
        if (sweep_only(argv[i], &skip))
            i += skip - 1;
        else
            args[n++] = argv[i];
    add_value(args, &n, nums[0], sizeof nums[0], "--batch", cfg->batch);
    if (o->n_workers)
        add_value(args, &n, nums[1], sizeof nums[1], "--workers", cfg->workers);
    if (o->n_threads)
        add_value(args, &n, nums[2], sizeof nums[2], "--threads", cfg->threads);
    add_value(args, &n, nums[3], sizeof nums[3], "--ranks", ranks);
    args[n] = "--export";
    args[n + 1] = (char *)path;
    args[n + 2] = "--force";
    args[n + 3] = NULL;
    return n;
}

int sweep_ranks_run(const Options *o, const RunConfig *cfg, int ranks, const char *prefix,
                    int argc, char **argv, RunRecord *rec)
{
    const char *dir = getenv("TMPDIR");
    char self[PATH_MAX], path[PATH_MAX], nums[4][16], err[512];
    char **args = malloc((size_t)(argc + 16) * sizeof *args);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    int fd, rc;

    snprintf(path, sizeof path, "%s/cnntop-sweep-XXXXXX.json", dir && *dir ? dir : "/tmp");
    fd = mkstemps(path, 5);

    if (!args || len < 0 || fd < 0) {
        fprintf(stderr, "cnntop: sweep --ranks: %s\n",
                !args ? "out of memory" : len < 0 ? "cannot find this program"
                                                  : "cannot make a temporary file");
        free(args);
        if (fd >= 0)
            unlink(path);
        return EXIT_FAIL;
    }
    close(fd);
    self[len] = '\0';
    int words = build_args(args, nums, self, o, cfg, ranks, path, argc, argv);
    fprintf(stderr, "%sbatch %d, %d rank%s:\n", prefix, cfg->batch, ranks, ranks == 1 ? "" : "s");
    fflush(NULL);
    /* The run's summary on /dev/null; the sweep's stop signal passed on once
     * (a signal from the terminal reaches it anyway). */
    int pid = dist_launch(args, NULL, 1, signals_child_reset);
    rc = pid < 0 ? EXIT_FAIL : dist_launch_wait(pid, runner_signal);
    rc = rc < 0 ? EXIT_FAIL : rc;
    record_done(rec);
    if (record_load_json(path, rec, err, sizeof err) != 0 && rc == 0) {
        fprintf(stderr, "cnntop: sweep --ranks: the run's record: %s\n", err);
        rc = EXIT_FAIL;
    }
    args[words] = NULL; /* the record says the run, not its temporary export */
    record_set_command(rec, words, args);
    unlink(path);
    free(args);
    return rc;
}
