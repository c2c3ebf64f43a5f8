/*
 * test_record.c: the run record and its exports, read back.
 *
 * A record built by hand (every field set, some figures unknown) is
 * exported as JSON, CSV and Markdown into a fresh temporary directory; the
 * JSON is read back and compared field by field, bit for bit; the CSV has
 * its header and one row per sample with empty cells for what is unknown;
 * the Markdown has its tables.  Then the refusals: an existing file without
 * --force, an unknown extension, a missing directory, another schema
 * version, a broken file (with line:column), a file that is not a cnntop
 * record; and no temporary file is left behind.  A sweep of two records
 * goes through the same.  When hyperfine is installed, its own JSON export
 * is made and every field name of its "results" must be in cnntop's.
 */
#include "record_sample.h"

static int starts(const char *s, const char *prefix)
{
    int ok = !strncmp(s, prefix, strlen(prefix));
    if (!ok)
        fprintf(stderr, "\"%s\" does not start with \"%s\"\n", s, prefix);
    return ok;
}

static void test_json_round_trip(const RunRecord *r)
{
    const char *path = in_dir("run.json");
    char err[512];
    RunRecord back;

    CHECK_INT(export_check(path, 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, 0);
    int rc = record_load_json(path, &back, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    else
        compare(r, &back);
    record_done(&back);

    /* The text itself: schema first, hyperfine's results, null for unknowns. */
    char *text = slurp(path);
    JsonValue *v = NULL;
    CHECK(text && starts(text, "{\n  \"schema\": \"cnntop.run/1\",\n"));
    CHECK(text && json_parse(text, strlen(text), &v, err, sizeof err) == 0);
    const JsonValue *res = json_at(json_get(v, "results"), 0);
    CHECK_INT(json_count(json_get(v, "results")), ==, 1);
    CHECK(!strcmp(json_as_string(json_get(res, "command"), ""), r->command));
    CHECK_NEAR(json_as_number(json_get(res, "mean"), 0), 12.5, 1e-12);
    CHECK_NEAR(json_as_number(json_get(res, "stddev"), 0), 0.25, 1e-12);
    CHECK_NEAR(json_as_number(json_get(res, "median"), 0), 12.5, 0);
    CHECK_NEAR(json_as_number(json_get(res, "min"), 0), 12.25, 0);
    CHECK_NEAR(json_as_number(json_get(res, "max"), 0), 12.75, 0);
    CHECK_NEAR(json_as_number(json_get(res, "user"), 0), 81, 1e-12);
    CHECK_NEAR(json_as_number(json_get(res, "system"), 0), 1.5, 1e-12);
    CHECK_INT(json_count(json_get(res, "times")), ==, 3);
    CHECK_NEAR(json_as_number(json_at(json_get(res, "times"), 1), 0), 12.75, 0);
    CHECK_INT(json_count(json_get(res, "exit_codes")), ==, 3);
    CHECK(json_is(json_get(json_get(v, "machine"), "peak_gflops"), JSON_NULL));
    /* MFU and the executed share: images/s x FLOPs per image / the peak. */
    CHECK_NEAR(json_as_number(json_get(json_get(v, "train"), "mfu"), 0), 1440 * 46.8e6 / 400e9, 1e-12);
    CHECK_NEAR(json_as_number(json_get(json_get(v, "train"), "executed_share"), 0),
               1440 * 17032704.0 / 400e9, 1e-12);
    CHECK_NEAR(record_mfu(r, 1440), 1440 * 46.8e6 / 400e9, 1e-15);
    CHECK(json_is(json_get(json_at(json_get(v, "samples"), 1), "queue_fill"), JSON_NULL));
    CHECK(json_is(json_get(json_at(json_get(v, "samples"), 1), "epoch"), JSON_NULL));
    CHECK(json_is(json_get(v, "error"), JSON_NULL));
    CHECK(text && strstr(text, "\"seed\": 18446744073709551610"));
    CHECK(text && strstr(text, "\"augment\": [\n      \"shift\",\n      \"elastic\"\n    ]"));
    json_free(v);
    free(text);
}

/* Splits text into lines in place; returns how many. */
static size_t lines(char *text, char **line, size_t max)
{
    size_t n = 0;
    for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n"))
        line[n++] = s;
    return n;
}

/* A record written before the FMA peak existed lacks its members: it
 * still loads, with them unknown.  Renaming them (first letter to x) stands for
 * their absence: the reader ignores members it does not know. */
static void test_older_record(const RunRecord *r)
{
    static const char *added[] = {"\"blas_note\"", "\"cpu_isa\"", "\"blas_isa\"",
                                  "\"fma_peak_gflops\"", "\"fma_peak_isa\"",
                                  "\"flops_executed_per_image\""};
    const char *path = in_dir("older.json");
    char err[512];
    RunRecord back;

    CHECK_INT(record_export(r, path, 1, err, sizeof err), ==, 0);
    char *text = slurp(path);
    CHECK(text != NULL);
    for (size_t i = 0; text && i < sizeof added / sizeof added[0]; i++) {
        char *p = strstr(text, added[i]);
        CHECK(p != NULL);
        if (p)
            p[1] = 'x'; /* "blas_note" -> "xlas_note" */
    }
    if (text)
        spit(path, text);
    int rc = record_load_json(path, &back, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    CHECK(rc != 0 || (isnan(back.fma_peak_gflops) && isnan(back.flops_executed_per_image) &&
                      back.fma_peak_isa[0] == '\0' && back.machine.blas_note[0] == '\0' &&
                      back.machine.cpu_isa[0] == '\0' && isnan(record_mfu(&back, 1000.0))));
    CHECK(rc != 0 || back.flops_per_image == r->flops_per_image);
    record_done(&back);
    free(text);
}

static void test_csv(const RunRecord *r)
{
    const char *path = in_dir("run.csv");
    char err[512], *line[400];

    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, 0);
    char *text = slurp(path);
    if (!text)
        return;
    size_t n = lines(text, line, 400);
    CHECK_INT(n, ==, 1 + r->n_samples);
    CHECK(!strcmp(line[0], "t,dt,epoch,step,images_per_s,loss,queue_fill,data_wait_share,workers,"
                           "batch,segment,ipc,miss_rate"));
    CHECK(n > 2 && !strcmp(line[1], "0.5,0.125,0,10,1234.5,2.25,0.75,0.125,2,64,0,1.75,0.0625"));
    /* No queue, no epoch, no counters: empty, not 0. */
    CHECK(n > 2 && !strcmp(line[2], "1,0.5,,20,1300.25,1.5,,0.5,0,64,1,,"));
    for (size_t i = 1; i < n; i++) {
        int commas = 0;
        for (char *c = line[i]; *c; c++)
            commas += *c == ',';
        CHECK_INT(commas, ==, 12);
    }
    free(text);
}

static void test_md(const RunRecord *r)
{
    const char *path = in_dir("run.md");
    char err[512];

    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, 0);
    char *text = slurp(path);
    CHECK_STR_HAS(text, "# cnntop run: batch 64, 2 workers\n");
    CHECK_STR_HAS(text, "| Command | Mean [s] | Min [s] | Max [s] |");
    CHECK_STR_HAS(text, "|:---|---:|---:|---:|");
    CHECK_STR_HAS(text, "| `batch 64, 2 workers` | 12.500 ± 0.250 | 12.250 | 12.750 |");
    CHECK_STR_HAS(text, "| conv2 bwd | 11.525 |");
    CHECK_STR_HAS(text, "AMD EPYC \"9B45\" \\| x"); /* the pipe cannot break the table */
    CHECK_STR_HAS(text, "| load | cache-misses | n/a: perf_event_paranoid is 3 |");
    CHECK_STR_HAS(text, "| Test accuracy | 85.30% (853 of 1000 images) |");
    free(text);
}

static void test_refusals(const RunRecord *r)
{
    char err[512];
    int rc;

    /* An existing file is kept without --force, replaced with it. */
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir("run.json"));
    rc = export_check(path, 0, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EIO);
    CHECK_STR_HAS(err, "run.json: file exists");
    CHECK(strchr(err, '\n') == NULL);
    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, -CN_EIO);
    CHECK_INT(export_check(path, 1, err, sizeof err), ==, 0);
    CHECK_INT(record_export(r, path, 1, err, sizeof err), ==, 0);

    rc = export_check(in_dir("run.txt"), 0, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "run.txt: unknown export format");
    CHECK_STR_HAS(err, ".json, .csv or .md");
    CHECK_INT(export_check(in_dir("noext"), 0, err, sizeof err), ==, -CN_EINVAL);
    CHECK_INT(export_check(in_dir("RUN.JSON"), 0, err, sizeof err), ==, 0);
    rc = export_check(in_dir("no/such/dir/run.json"), 0, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EIO);
    CHECK_STR_HAS(err, "no/such/dir/run.json");
}

/* Files that are not a record this cnntop reads. */
static void test_bad_files(void)
{
    char err[512];
    int rc;
    char *text = slurp(in_dir("run.json")), *at = text ? strstr(text, "cnntop.run/1") : NULL;
    RunRecord back;

    /* Another schema version. */
    if (at) {
        at[11] = '2';
        spit(in_dir("v2.json"), text);
        rc = record_load_json(in_dir("v2.json"), &back, err, sizeof err);
        CHECK_INT(rc, ==, -CN_EFORMAT);
        CHECK_STR_HAS(err, "v2.json: unsupported schema \"cnntop.run/2\"");
        CHECK(strchr(err, '\n') == NULL);
        record_done(&back);
        at[11] = '1';
    }
    /* A broken file: cut on line 3 where the value of "cnntop_version" is due. */
    if (text) {
        char *l3 = strchr(strchr(text, '\n') + 1, '\n') + 1;
        CHECK(starts(l3, "  \"cnntop_version\": "));
        l3[20] = '\0';
        spit(in_dir("cut.json"), text);
        rc = record_load_json(in_dir("cut.json"), &back, err, sizeof err);
        CHECK_INT(rc, ==, -CN_EFORMAT);
        CHECK_STR_HAS(err, "cut.json:3:21: expected a value, found end of input");
        record_done(&back);
    }
    free(text);
    /* A field of the wrong type, and a missing one. */
    spit(in_dir("bad.json"), "{\"schema\": \"cnntop.run/1\", \"cnntop_version\": 1}");
    rc = record_load_json(in_dir("bad.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "bad.json: cnntop_version: expected a string or null, found a number");
    record_done(&back);
    /* Not a cnntop record at all. */
    spit(in_dir("other.json"), "{\"results\": []}");
    rc = record_load_json(in_dir("other.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "other.json: not a cnntop record");
    record_done(&back);
    rc = record_load_json(in_dir("missing.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EIO);
    CHECK_STR_HAS(err, "missing.json");
    record_done(&back);
}

/* The sweep's files, as text. */
static void check_sweep_files(void)
{
    char err[512], *line[8];
    char *text = slurp(in_dir("sweep.json"));
    JsonValue *v = NULL;
    CHECK(text && json_parse(text, strlen(text), &v, err, sizeof err) == 0);
    CHECK(!strcmp(json_as_string(json_get(v, "schema"), ""), "cnntop.sweep/1"));
    CHECK_INT(json_count(json_get(v, "runs")), ==, 2);
    const JsonValue *res = json_get(v, "results");
    CHECK_INT(json_count(res), ==, 2);
    CHECK(!strcmp(json_as_string(json_get(json_at(res, 1), "command"), ""),
                  "batch 128, 2 workers, 8 threads"));
    CHECK(json_is(json_get(json_at(res, 1), "stddev"), JSON_NULL));
    json_free(v);
    free(text);

    text = slurp(in_dir("sweep.csv"));
    if (text) {
        CHECK_INT(lines(text, line, 8), ==, 3);
        CHECK(starts(line[0], "command,mean,stddev,median,user,system,min,max,"));
        CHECK(starts(line[1], "\"batch 64, 2 workers\",12.5,0.25,12.5,81,1.5,12.25,12.75,64,2,4,8,"
                              "\"shift,elastic\",3,"));
        CHECK(starts(line[2], "\"batch 128, 2 workers, 8 threads\",6.25,,6.25,"));
    }
    free(text);
    text = slurp(in_dir("sweep.md"));
    CHECK_STR_HAS(text, "| Command | Mean [s] |");
    CHECK_STR_HAS(text, "| `batch 128, 2 workers, 8 threads` | 6.250 | 6.250 | 6.250 |");
    /* Relative to the fastest: 12.5 +- 0.25 over one run of 6.25, whose
     * spread is unknown, so the ratio has no uncertainty. */
    CHECK_STR_HAS(text, "| 2.00 |\n");
    free(text);
}

static void test_sweep(const RunRecord *r)
{
    RunRecord r2;
    const RunRecord *runs[2] = {r, &r2};
    char err[512];
    RunRecord *back = NULL;
    size_t n = 0;

    build(&r2);
    CHECK_INT(record_set_label(&r2, NULL), ==, 0);
    r2.config.batch = 128;
    r2.n_repeats = 0; /* one run: stddev unknown */
    r2.train.wall = 6.25;
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.json"), 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.csv"), 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.md"), 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.md"), 0, err, sizeof err), ==, -CN_EIO);

    int rc = record_load_any(in_dir("sweep.json"), &back, &n, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    CHECK_INT(n, ==, 2);
    if (rc == 0 && n == 2) {
        compare(r, &back[0]);
        compare(&r2, &back[1]);
    }
    for (size_t i = 0; i < n; i++)
        record_done(&back[i]);
    free(back);
    /* A run file through record_load_any is one record. */
    CHECK_INT(record_load_any(in_dir("run.json"), &back, &n, err, sizeof err), ==, 0);
    CHECK_INT(n, ==, 1);
    for (size_t i = 0; i < n; i++)
        record_done(&back[i]);
    free(back);
    /* ...but a sweep is not a run. */
    RunRecord one;
    CHECK_INT(record_load_json(in_dir("sweep.json"), &one, err, sizeof err), ==, -CN_EFORMAT);
    record_done(&one);

    check_sweep_files();
    record_done(&r2);
}

/* hyperfine's own --export-json: each of its result fields must be in ours. */
static void test_hyperfine(void)
{
    char cmd[1024], err[512];
    JsonValue *hf = NULL, *ours = NULL;

    if (system("command -v hyperfine >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_record: hyperfine not installed; field-name comparison not run\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "hyperfine -N --runs 2 --export-json '%s' true >/dev/null 2>&1",
             in_dir("hyperfine.json"));
    if (system(cmd) != 0) {
        /* Older hyperfine has no -N. */
        snprintf(cmd, sizeof cmd, "hyperfine --runs 2 --export-json '%s' true >/dev/null 2>&1",
                 in_dir("hyperfine.json"));
        CHECK_INT(system(cmd), ==, 0);
    }
    char *a = slurp(in_dir("hyperfine.json")), *b = slurp(in_dir("run.json"));
    CHECK(a && json_parse(a, strlen(a), &hf, err, sizeof err) == 0);
    CHECK(b && json_parse(b, strlen(b), &ours, err, sizeof err) == 0);
    const JsonValue *h = json_at(json_get(hf, "results"), 0);
    const JsonValue *o = json_at(json_get(ours, "results"), 0);
    CHECK(json_count(h) >= 9);
    for (size_t i = 0; i < json_count(h); i++) {
        const JsonMember *m = &h->members[i];
        const JsonValue *mine = json_get(o, m->key);
        if (!mine || (mine->type != m->value.type && m->value.type != JSON_NULL &&
                      mine->type != JSON_NULL)) {
            check_failed++;
            fprintf(stderr, "hyperfine's results field \"%s\" missing or of another type\n", m->key);
        }
        check_count++;
    }
    json_free(hf);
    json_free(ours);
    free(a);
    free(b);
    unlink(in_dir("hyperfine.json"));
}

/* Nothing but the files we made: no temporary left over. */
static void test_no_temp(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int temps = 0;

    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp"))
            temps++, fprintf(stderr, "left behind: %s\n", e->d_name);
    if (d)
        closedir(d);
    CHECK_INT(temps, ==, 0);
}

/* A distributed run's label names its ranks (sweep --ranks' rows). */
static void test_dist_label(void)
{
    RunRecord d;
    char label[160];

    record_init(&d);
    d.config.batch = 32;
    d.config.workers = 0;
    d.threads_used = 1;
    d.have_dist = 1;
    d.train.dist.ranks = 2;
    CHECK(!strcmp(record_label(&d, label, sizeof label), "batch 32, 0 workers, 1 thread, 2 ranks"));
    d.train.dist.ranks = 1;
    CHECK(!strcmp(record_label(&d, label, sizeof label), "batch 32, 0 workers, 1 thread, 1 rank"));
    record_done(&d);
}

int main(void)
{
    RunRecord r;
    char label[160];

    make_dir("cnntop-record");
    build(&r);
    CHECK(!strcmp(record_label(&r, label, sizeof label), "batch 64, 2 workers"));
    test_dist_label();
    test_json_round_trip(&r);
    test_older_record(&r);
    test_csv(&r);
    test_md(&r);
    test_refusals(&r);
    test_bad_files();
    test_sweep(&r);
    test_hyperfine();
    test_no_temp();
    record_done(&r);
    record_done(&r); /* idempotent */
    cleanup();
    return check_report();
}
