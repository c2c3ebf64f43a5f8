/*
 * test_cmd_units.c: the headless commands' logic that needs no run, no
 * terminal and no process: the summary's lines printed from a made-up
 * record (the throughput's GFLOP/s, the cores busy, the step split, and
 * "unknown" said rather than 0), the sweep's budget rule, row figures,
 * speedup text and recommendation (the fastest; one that learns clearly
 * less passed over; none), sweep --cmd's grid (its order, the command
 * lines and labels, the template's refusals), the validation pass's
 * choices (which checks a command gets, which exit code), the counters'
 * number format, and the command line's edges (a sweep's lists and their
 * limit, exec's "--", a command's own --help, the augmentations' text).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd/summary.h"
#include "cmd/sweep.h"
#include "cmd/sweep_template.h"
#include "cmd/validate.h"
#include "common/exit.h"
#include "common/counters_fmt.h"
#include "common/options.h"
#include "test_commands.h"

/* What summary_print() writes for r; free it. */
static char *summary_of(const RunRecord *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f)
        return NULL;
    summary_print(f, r);
    fclose(f);
    return buf;
}

/* A record of a short training: 100 images/s over 2 s. */
static void trained(RunRecord *r)
{
    record_init(r);
    r->threads_used = 2;
    r->train.wall = 2.0;
    r->train.steps = 4;
    r->train.images = 200;
    r->train.images_per_s = 100;
    r->train.cpu_user = 3.0;
    r->train.cpu_sys = 1.0;
    r->train.split = (StepSplit){.data = 1, .forward = 2, .backward = 4, .optimizer = 1};
}

static void test_summary_lines(void)
{
    RunRecord r;
    char *s;

    trained(&r);
    r.flops_per_image = 2e7; /* 100 images/s x 20 MFLOP = 2 GFLOP/s */
    s = summary_of(&r);
    CHECK(s != NULL);
    CHECK_STR_HAS(s, "Throughput:           100.0 images/s  (2.0 GFLOP/s by the model's count)");
    CHECK_STR_HAS(s, "(2.00 cores busy of 2 threads)");
    CHECK_STR_HAS(s, "data 12.5%  forward 25.0%  backward 50.0%  optimizer 12.5%");
    CHECK_STR_HAS(s, "Against the peak:     unknown (no FMA peak measured");
    free(s);

    /* Unknown stays unknown: no FLOPs per image, no wall time, no split. */
    r.flops_per_image = NAN;
    r.train.wall = 0;
    r.train.split = (StepSplit){0};
    s = summary_of(&r);
    CHECK(s != NULL);
    CHECK_STR_HAS(s, "Throughput:           100.0 images/s\n");
    CHECK(!strstr(s, "GFLOP/s by the model"));
    CHECK_STR_HAS(s, "(n/a cores busy of 2 threads)");
    CHECK(!strstr(s, "Step time split"));
    free(s);
    record_done(&r);
}

static void test_sweep_budget(void)
{
    Options o;

    memset(&o, 0, sizeof o);
    CHECK(sweep_may_start(&o, 1e9, 5)); /* no budget: every configuration */
    o.budget = 14;
    CHECK(sweep_may_start(&o, 100, 0)); /* the first always starts */
    CHECK(!sweep_may_start(&o, 10, 2)); /* 5 s each: the third ends at 15 */
    o.budget = 15;
    CHECK(sweep_may_start(&o, 10, 2));
}

/* A sweep row of batch b with repeats of the given images/s and accuracy. */
static void row(SweepRow *w, int b, double ips1, double ips2, double acc)
{
    RecordRepeat rep = {.wall = 1.0, .images_per_s = ips1, .accuracy = acc};

    memset(w, 0, sizeof *w);
    record_init(&w->rec);
    w->rec.config.batch = b;
    w->rec.threads_used = 1;
    CHECK(record_add_repeat(&w->rec, &rep) == 0);
    rep.images_per_s = ips2;
    CHECK(record_add_repeat(&w->rec, &rep) == 0);
    w->rec.train.steps = 1;
    w->done = 1;
    sweep_row_figures(w);
}

/* sweep_recommend() with its lines (stdout) into out; returns its row. */
static int recommend(SweepRow *rows, int n, char *out, size_t len)
{
    FILE *tmp = tmpfile();
    int saved = dup(STDOUT_FILENO), k;
    size_t got;

    fflush(stdout);
    dup2(fileno(tmp), STDOUT_FILENO);
    k = sweep_recommend(rows, n, 0);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(tmp);
    got = fread(out, 1, len - 1, tmp);
    out[got] = '\0';
    fclose(tmp);
    return k;
}

static void test_sweep_rows(void)
{
    SweepRow rows[3];
    char sp[64], out[2048];

    row(&rows[0], 32, 100, 100, 0.90);
    row(&rows[1], 64, 300, 300, 0.895);
    row(&rows[2], 128, 400, 400, 0.80);
    CHECK_NEAR(rows[1].ips.mean, 300, 1e-9);
    CHECK_NEAR(rows[1].accuracy, 0.895, 1e-12);
    sweep_speedup_text(&rows[0], &rows[0], 0, sp, sizeof sp);
    CHECK_STR_HAS(sp, "1 (baseline)");
    sweep_speedup_text(&rows[1], &rows[0], 0, sp, sizeof sp);
    CHECK(strncmp(sp, "3.00", 4) == 0);
    /* The fastest learns 10 points less: the next fastest within a point
     * of the best accuracy is recommended. */
    CHECK_INT(recommend(rows, 3, out, sizeof out), ==, 1);
    CHECK_STR_HAS(out, "Fastest: batch 128");
    CHECK_STR_HAS(out, "But it learns clearly less: 80.00% test accuracy against 90.00%");
    CHECK_STR_HAS(out, "Recommended: batch 64");
    CHECK_INT(recommend(rows, 2, out, sizeof out), ==, 1);
    CHECK_STR_HAS(out, "Recommended: batch 64, 0 workers, 1 thread.");
    for (int i = 0; i < 3; i++)
        rows[i].done = 0;
    CHECK_INT(recommend(rows, 3, out, sizeof out), ==, -1);
    CHECK_STR_HAS(out, "No configuration finished");
    for (int i = 0; i < 3; i++)
        record_done(&rows[i].rec);
}

static void test_counter_numbers(void)
{
    char b[64];

    counters_fmt_number(b, sizeof b, 1234567, 0);
    CHECK_STR_HAS(b, "1,234,567");
    counters_fmt_number(b, sizeof b, 1234.567, 2);
    CHECK(strcmp(b, "1,234.57") == 0);
    counters_fmt_number(b, sizeof b, -1234, 0);
    CHECK(strcmp(b, "-1,234") == 0);
    counters_fmt_number(b, sizeof b, -0.001, 1); /* no "-0.0" */
    CHECK(strcmp(b, "0.0") == 0);
    counters_fmt_number(b, sizeof b, 999, 0);
    CHECK(strcmp(b, "999") == 0);
    counters_fmt_number(b, sizeof b, NAN, 0);
    CHECK(strcmp(b, "n/a") == 0);
}

/* options_parse() of the words in w (NULL-terminated, argv[0] added). */
static int parse(Options *o, char **w, char *err, size_t len)
{
    char *argv[48] = {"cnntop"};
    int argc = 1;

    while (*w && argc < 47)
        argv[argc++] = *w++;
    argv[argc] = NULL;
    return options_parse(o, &test_commands, argc, argv, err, len);
}

static void test_option_edges(void)
{
    Options o;
    char err[512], list[200], aug[64];
    char *sweep[] = {"sweep", "--batch", "64,128,32", "--workers=0,2", NULL};
    char *exec[] = {"exec", "-e", "cycles", "--", "python3", "-x", "--batch", NULL};
    char *help[] = {"run", "--batch", "64", "--help", NULL};
    char *many[] = {"sweep", "--batch", list, NULL};

    CHECK_INT(parse(&o, sweep, err, sizeof err), ==, 0);
    CHECK_INT(o.n_batch, ==, 3);
    CHECK_INT(o.batch_list[2], ==, 32);
    CHECK_INT(o.n_workers, ==, 2);
    CHECK_INT(o.workers_list[1], ==, 2);
    /* After "--" every word is the command's, options included. */
    CHECK_INT(parse(&o, exec, err, sizeof err), ==, 0);
    CHECK(o.exec_argv && !strcmp(o.exec_argv[0], "python3") && !strcmp(o.exec_argv[2], "--batch"));
    CHECK(o.exec_argv[3] == NULL);
    CHECK_INT(parse(&o, help, err, sizeof err), ==, 0);
    CHECK_INT(o.cmd, ==, CMD_HELP);
    CHECK_INT(o.help_for, ==, CMD_RUN);
    /* One value past the list's limit is refused, naming the option. */
    list[0] = '\0';
    for (int i = 0; i <= OPT_MAX_LIST; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", i + 1);
    CHECK_INT(parse(&o, many, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, "--batch: more than 32 values");
    options_format_augment(0, aug, sizeof aug);
    CHECK(strcmp(aug, "none") == 0);
    options_format_augment(CN_AUG_SHIFT | CN_AUG_ELASTIC, aug, sizeof aug);
    CHECK(strcmp(aug, "shift,elastic") == 0);
    unsigned bits = 99;
    CHECK_INT(options_parse_augment("rotate,shift", &bits, err, sizeof err), ==, 0);
    CHECK_INT(bits, ==, CN_AUG_SHIFT | CN_AUG_ROTATE);
}

static void test_sweep_template(void)
{
    Options o;
    char cmd[SWEEP_CMD_MAX], label[96], err[512], small[16];
    int idx[SWEEP_HOLDERS];
    char *w[] = {"sweep", "--cmd", "train.py -b {batch} -j {workers} {batch}", "--batch", "32,64",
                 "--workers", "1,2,4", NULL};

    CHECK_INT(parse(&o, w, err, sizeof err), ==, 0);
    CHECK_INT(sweep_cmd_check(&o, err, sizeof err), ==, 0);
    CHECK_INT(sweep_grid_size(&o), ==, 6);
    CHECK(sweep_template_uses(o.sweep_cmd, SWEEP_WORKERS));
    CHECK(!sweep_template_uses(o.sweep_cmd, SWEEP_THREADS));
    /* The first list varies slowest: configuration 4 is batch 64, workers 2. */
    sweep_grid_at(&o, 4, idx);
    CHECK_INT(idx[SWEEP_BATCH], ==, 1);
    CHECK_INT(idx[SWEEP_WORKERS], ==, 1);
    CHECK_INT(sweep_substitute(&o, idx, cmd, sizeof cmd, label, sizeof label), ==, 0);
    CHECK(strcmp(cmd, "train.py -b 64 -j 2 64") == 0);
    CHECK(strcmp(label, "batch 64, workers 2") == 0);
    CHECK_INT(sweep_substitute(&o, idx, small, sizeof small, label, sizeof label), ==, -1);

    /* The template's refusals, each naming what is wrong. */
    static const struct { const char *tmpl, *list, *want; } bad[] = {
        {"  ", "32", "the template is blank"},
        {"run {Batch}", "32", "{Batch} is no placeholder: did you mean {batch}?"},
        {"run {bacth}", "32", "did you mean {batch}?"},
        {"run {batch} {threads}", "32", "the template has {threads} but no --threads LIST is given"},
        {"run", "32", "--batch is given but the --cmd template has no {batch}"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *b[] = {"sweep", "--cmd", (char *)bad[i].tmpl, "--batch", (char *)bad[i].list, NULL};
        CHECK_INT(parse(&o, b, err, sizeof err), ==, 0);
        CHECK_INT(sweep_cmd_check(&o, err, sizeof err), ==, -1);
        CHECK_STR_HAS(err, bad[i].want);
    }
    /* {ranks} from --ranks varies fastest; another launcher's word for it
     * is taken for a misspelling; the list needs it and it the list. */
    char *r[] = {"sweep", "--cmd", "ddp.py -b {batch} --world {ranks}", "--batch", "32,64",
                 "--ranks", "1,2,4", NULL};
    CHECK_INT(parse(&o, r, err, sizeof err), ==, 0);
    CHECK_INT(sweep_cmd_check(&o, err, sizeof err), ==, 0);
    CHECK_INT(sweep_grid_size(&o), ==, 6);
    sweep_grid_at(&o, 4, idx);
    CHECK_INT(sweep_holder_value(&o, idx, SWEEP_RANKS), ==, 2);
    CHECK_INT(sweep_holder_value(&o, idx, SWEEP_THREADS), ==, 0);
    CHECK_INT(sweep_substitute(&o, idx, cmd, sizeof cmd, label, sizeof label), ==, 0);
    CHECK(strcmp(cmd, "ddp.py -b 64 --world 2") == 0);
    CHECK(strcmp(label, "batch 64, ranks 2") == 0);
    static const struct { const char *tmpl, *want; } rbad[] = {
        {"ddp.py --world {nprocs}", "{nprocs} is no placeholder: did you mean {ranks}?"},
        {"ddp.py --world {world_size}", "did you mean {ranks}?"},
        {"ddp.py", "--ranks is given but the --cmd template has no {ranks}"},
    };
    for (size_t i = 0; i < sizeof rbad / sizeof rbad[0]; i++) {
        char *b[] = {"sweep", "--cmd", (char *)rbad[i].tmpl, "--ranks", "1,2", NULL};
        CHECK_INT(parse(&o, b, err, sizeof err), ==, 0);
        CHECK_INT(sweep_cmd_check(&o, err, sizeof err), ==, -1);
        CHECK_STR_HAS(err, rbad[i].want);
    }
    char *rnone[] = {"sweep", "--cmd", "ddp.py --world {ranks}", NULL};
    CHECK_INT(parse(&o, rnone, err, sizeof err), ==, 0);
    CHECK_INT(sweep_cmd_check(&o, err, sizeof err), ==, -1);
    CHECK_STR_HAS(err, "the template has {ranks} but no --ranks LIST is given");
    /* Braces that are the shell's or awk's stay as they are. */
    char *ok[] = {"sweep", "--cmd", "echo ${HOME} {batch} | awk '{print}'", "--batch", "8", NULL};
    CHECK_INT(parse(&o, ok, err, sizeof err), ==, 0);
    CHECK_INT(sweep_cmd_check(&o, err, sizeof err), ==, 0);
}

static void test_validate_choices(void)
{
    Options o;
    char err[512];
    char *report[] = {"report", "/nonexistent/r.json", NULL};
    char *exp[] = {"report", "r.json", "--export", "/nonexistent/dir/x.json", NULL};
    char *run[] = {"run", "--data", "/nonexistent", NULL};
    char *cmd[] = {"sweep", "--cmd", "run {batch}", "--export", "/nonexistent/dir/x.json", NULL};
    char *tui[] = {"--data", "/nonexistent", NULL};

    /* report's files are read by report itself: nothing to check first. */
    CHECK_INT(parse(&o, report, err, sizeof err), ==, 0);
    CHECK_INT(validate_command(&o, &o.cfg, err, sizeof err), ==, 0);
    CHECK_INT(parse(&o, exp, err, sizeof err), ==, 0);
    CHECK_INT(validate_command(&o, &o.cfg, err, sizeof err), ==, EXIT_FAIL);
    CHECK_STR_HAS(err, "--export: /nonexistent/dir/x.json");
    CHECK_INT(parse(&o, run, err, sizeof err), ==, 0);
    CHECK_INT(validate_command(&o, &o.cfg, err, sizeof err), ==, EXIT_FAIL);
    CHECK_STR_HAS(err, "/nonexistent: No such file or directory");
    /* The command line before the files: a template without its list. */
    CHECK_INT(parse(&o, cmd, err, sizeof err), ==, 0);
    CHECK_INT(validate_command(&o, &o.cfg, err, sizeof err), ==, EXIT_USAGE);
    CHECK_STR_HAS(err, "{batch} but no --batch LIST");
    /* A dashboard that starts no run yet has no data to check. */
    CHECK_INT(parse(&o, tui, err, sizeof err), ==, 0);
    CHECK_INT(validate_command(&o, NULL, err, sizeof err), ==, 0);
    CHECK_INT(validate_command(&o, &o.cfg, err, sizeof err), ==, EXIT_FAIL);
}

int main(void)
{
    test_summary_lines();
    test_sweep_budget();
    test_sweep_rows();
    test_sweep_template();
    test_validate_choices();
    test_counter_numbers();
    test_option_edges();
    return check_report();
}
