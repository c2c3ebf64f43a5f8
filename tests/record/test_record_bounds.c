/*
 * test_record_bounds.c: what cnntop writes, it reads back.  Every whole
 * number the field table bounds (fields.c, .lo/.hi) is listed here with
 * the largest value its writers can produce, taken from the writers' own
 * limits (the settings', the hook's, the process tree's, a wait status's),
 * not from the table:
 * - a record with each of them at that value is written as JSON, read
 *   back, passes record_check() (what `report` does) and compares equal;
 * - each one past its range is refused by record_check(), naming it, so
 *   the ranges are checked at all;
 * - every bounded member of the table has a line here, so a new bound
 *   comes with the writer's largest value.
 */
#include "record_sample.h"

#include "cnntop/hookfeed.h"
#include "cnntop/proctree.h"

/* A bounded member and the most its writers produce. */
typedef struct WriterMax {
    const char *path;     /* "config.batch", "repeats[].exit_code" */
    long long max;
    const char *writer;
} WriterMax;

static const WriterMax maxima[] = {
    {"config.batch", CN_MAX_BATCH, "--batch"},
    {"config.epochs", CN_MAX_EPOCHS, "--epochs"},
    {"config.steps", CN_MAX_STEPS, "--steps"},
    {"config.limit", CN_MAX_IMAGES, "--limit"},
    {"config.test_limit", CN_MAX_IMAGES, "--test-limit"},
    {"config.threads", CN_MAX_THREADS, "--threads"},
    {"config.workers", CN_MAX_WORKERS, "--workers"},
    {"config.prefetch", CN_MAX_PREFETCH, "--prefetch"},
    {"data.train_images", CN_MAX_IMAGES, "an IDX file of IDX_MAX_ITEMS images"},
    {"data.test_images", CN_MAX_IMAGES, "an IDX file of IDX_MAX_ITEMS images"},
    /* torch.set_num_threads(N) as the hook's config line may say it; every
     * core (--threads 0, CN_MAX_CORES) and --threads are fewer. */
    {"threads_used", HOOK_MAX_COUNT, "the hook's config (torch's threads)"},
    {"train.steps", CN_MAX_EPOCHS * CN_MAX_IMAGES, "--epochs at one image a step"},
    {"train.images", CN_MAX_STEPS * (long long)CN_MAX_BATCH, "--steps at the largest batch"},
    {"train.epochs_done", CN_MAX_STEPS, "--steps with an epoch a step"},
    {"dist.ranks", 1 << 24, "MPI's ranks, an int"},
    {"dist.local_ranks", 1 << 24, "as ranks"},
    {"dist.node_cores", CN_MAX_CORES, "sysinfo_cores_online()"},
    {"dist.steps", CN_MAX_EPOCHS * CN_MAX_IMAGES, "as train.steps"},
    {"eval.images", CN_MAX_IMAGES, "the test set"},
    {"eval.correct", CN_MAX_IMAGES, "the test set"},
    {"exit_code", 128 + 127, "killed by signal 127 (WTERMSIG's 7 bits)"},
    {"repeats[].exit_code", 128 + 127, "killed by signal 127"},
    {"exec.status", 255, "WEXITSTATUS's 8 bits"},
    {"exec.signal", 127, "WTERMSIG's 7 bits"},
    {"exec.loader_workers", HOOK_MAX_COUNT, "the hook's config (num_workers)"},
    {"exec.worker_procs", PROC_MAX_PROCS, "the tree's live workers at one poll"},
    {"exec.busy_threads", PROC_MAX_THREADS, "the tree's followed threads"},
    {"exec.runs", CN_MAX_RUNS, "--runs"},
    {"model.first", HOOK_MAX_STEPS, "the hook's window line"},
    {"model.steps", HOOK_MAX_STEPS, "the hook's window line"},
    {"model.steps_out", HOOK_MAX_STEPS, "the hook's pace line"},
    {"exec_roles[].procs", PROC_MAX_PROCS, "the tree's processes"},
    {"exec_procs[].pid", HOOK_MAX_PID, "Linux's PID_MAX_LIMIT"},
    {"exec_procs[].ppid", HOOK_MAX_PID, "Linux's PID_MAX_LIMIT"},
    {"exec_procs[].threads", PROC_MAX_THREADS, "the tree's followed threads"},
    {"exec_ranks[].rank", HOOK_MAX_RANKS - 1, "the hook's ranks"},
    {"exec_ranks[].world", HOOK_MAX_COUNT, "a rank line's world"},
    {"exec_ranks[].pid", HOOK_MAX_PID, "Linux's PID_MAX_LIMIT"},
    {"exec_ranks[].threads", HOOK_MAX_COUNT, "a rank's config (torch's threads)"},
    {"exec_ranks[].loader_workers", HOOK_MAX_COUNT, "a rank's config (num_workers)"},
};

#define N_MAXIMA (sizeof maxima / sizeof maxima[0])

/* The member of fields at path ("a.b", "a[].b"), or NULL. */
static const Field *at_path(const Field *fields, const char *path, const Field **array)
{
    size_t n = strcspn(path, ".[");

    for (const Field *f = fields; f->key; f++) {
        if (strlen(f->key) != n || strncmp(f->key, path, n))
            continue;
        if (!path[n])
            return f;
        if (f->type == FT_ARRAY)
            *array = f;
        return f->sub ? at_path(f->sub, path + n + (path[n] == '[' ? 3 : 1), array) : NULL;
    }
    return NULL;
}

static void put(const Field *f, void *base, long long v)
{
    if (f->size == sizeof(int))
        *(int *)field_at(f, base) = (int)v;
    else
        *(long *)field_at(f, base) = (long)v;
}

/* Sets the member at path to v (in each element of an array). */
static void set_path(RunRecord *r, const char *path, long long v)
{
    const Field *array = NULL, *f = at_path(record_run_fields, path, &array);

    CHECK(f != NULL);
    if (!f)
        return;
    if (!array) {
        put(f, r, v);
        return;
    }
    size_t n = *(size_t *)((char *)r + array->n_off);
    char *elems = *(char **)field_at(array, r);
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++)
        put(f, elems + i * array->size, v);
}

/* A record of both kinds (a run's and an exec's members) with every
 * bounded member at its writers' most. */
static void build_max(RunRecord *r)
{
    char *argv[] = {"python3", "train.py", NULL};

    build(r);
    r->have_exec = 1;
    r->have_dist = 1;
    CHECK_INT(record_set_exec_command(r, argv), ==, 0);
    r->have_model = 1;
    RecordExecRole ro = {.role = PROC_ROLE_WORKER};
    RecordProc p = {.pid = 1, .role = PROC_ROLE_MAIN};
    CHECK_INT(record_add_exec_role(r, &ro), ==, 0);
    CHECK_INT(record_add_exec_proc(r, &p), ==, 0);
    RecordExecRank k = {.world = 1};
    CHECK_INT(record_add_exec_rank(r, &k), ==, 0);
    for (size_t i = 0; i < N_MAXIMA; i++)
        set_path(r, maxima[i].path, maxima[i].max);
}

/* Every bounded member of the table is in maxima[]. */
static void check_listed(const Field *fields, const char *where)
{
    char path[128];

    for (const Field *f = fields; f->key; f++) {
        snprintf(path, sizeof path, "%s%s%s%s", where, *where ? "." : "", f->key,
                 f->type == FT_ARRAY ? "[]" : "");
        if (f->sub)
            check_listed(f->sub, path);
        if (!f->hi)
            continue;
        size_t i = 0;
        while (i < N_MAXIMA && strcmp(maxima[i].path, path))
            i++;
        CHECK(i < N_MAXIMA);
        if (i == N_MAXIMA)
            fprintf(stderr, "%s has a range (..%lld) but no writer's largest value here\n", path,
                    f->hi);
    }
}

static void test_round_trip(void)
{
    char *text = NULL, err[512];
    size_t len = 0;
    RunRecord r, back;

    build_max(&r);
    CHECK_INT(record_check(&r, "max", err, sizeof err), ==, 0);
    CHECK_INT(record_format(&r, EXPORT_JSON, &text, &len), ==, 0);
    spit(in_dir("max.json"), text ? text : "");
    int rc = record_load_json(in_dir("max.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    rc = record_check(&back, "max.json", err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    compare(&r, &back);
    record_done(&back);
    record_done(&r);
    free(text);
}

/* Past each range: refused, by name. */
static void test_past(void)
{
    char err[512], want[160];
    RunRecord r;

    for (size_t i = 0; i < N_MAXIMA; i++) {
        const Field *array = NULL, *f = at_path(record_run_fields, maxima[i].path, &array);
        if (!f)
            continue;
        build_max(&r);
        set_path(&r, maxima[i].path, f->hi + 1);
        CHECK_INT(record_check(&r, "past", err, sizeof err), ==, -CN_EFORMAT);
        snprintf(want, sizeof want, "%lld, out of range (%lld..%lld)", f->hi + 1, f->lo, f->hi);
        CHECK_STR_HAS(err, want);
        record_done(&r);
    }
}

int main(void)
{
    make_dir("cnntop-bounds");
    check_listed(record_run_fields, "");
    test_round_trip();
    test_past();
    cleanup();
    return check_report();
}
