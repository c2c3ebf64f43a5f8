/*
 * test_tui_settings.c: the dashboard's settings file and run history, read
 * and written through the functions the dashboard uses.
 *
 *   - a good line is applied even when others are bad (unknown key, bad
 *     value, not key=value, a NUL byte), and the first bad line is named
 *     with the key and what it takes (the range, the window's choices);
 *   - lines of any length: a long comment never leaks a setting;
 *   - the command line's values (keep_mask) win over the file;
 *   - a file that cannot be read changes nothing and is never written;
 *   - on quit only what changed is written, in place: comments, other
 *     lines and bad lines kept byte for byte, a copy in PATH.bad when the
 *     file had bad lines, nothing written when nothing changed;
 *   - which history rows compare, and why not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "common/options.h"
#include "tui/hist.h"
#include "common/config.h"

static char dir[256];

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite(text, 1, len, f);
    fclose(f);
}

/* The whole file, malloc'ed and NUL-terminated (*len without the NUL). */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0;

    *len = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            cap = (*len + 4096 + 1) * 2;
            buf = realloc(buf, cap);
        }
        size_t n = fread(buf + *len, 1, 4096, f);
        *len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* Defaults as the dashboard starts from them. */
static void defaults(TuiSettings *s)
{
    memset(s, 0, sizeof *s);
    s->cfg.batch = 64;
    s->cfg.epochs = 1;
    s->cfg.lr = 1e-3;
    s->cfg.seed = 1;
    s->window = 60;
    settings_fix(s);
}

static void test_bad_lines_keep_good(void)
{
    char path[300], err[600];
    TuiSettings s;
    static const char text[] = "batch=256\nworkers=2\nbogus=1\nthreads=abc\nno equals sign\n"
                               "  prefetch = 3  \n";

    snprintf(path, sizeof path, "%s/bad", dir);
    write_file(path, text, sizeof text - 1);
    defaults(&s);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_INT(s.cfg.batch, ==, 256);
    CHECK_INT(s.cfg.workers, ==, 2);
    CHECK_INT(s.cfg.prefetch, ==, 3);
    CHECK_INT(s.cfg.threads, ==, 0); /* its bad value left the default */
    CHECK_STR_HAS(err, ":3: unknown key 'bogus'");
    CHECK_STR_HAS(err, "and 2 more bad lines");
    /* Bad values are named with the key and the range. */
    static const char lr[] = "lr=0\n";
    write_file(path, lr, sizeof lr - 1);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, ":1: lr: 0 is out of range (0..10]");
    /* Counts are bounded as the command line bounds them (engine.h). */
    static const char steps[] = "steps=1000000001\n";
    write_file(path, steps, sizeof steps - 1);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, ":1: steps: 1000000001 is out of range (0..1000000000)");
    static const char big[] = "batch=99999999\n";
    write_file(path, big, sizeof big - 1);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, "batch: 99999999 is out of range (1..");
    CHECK_INT(s.cfg.batch, ==, 256);
    /* The chart window takes only the windows there are (it fell back to
     * 60 in silence once). */
    static const char win[] = "window=120\nwindow=300\n";
    write_file(path, win, sizeof win - 1);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, ":1: window: '120' is not 60, 300, 900 or 0");
    CHECK_INT(s.window, ==, 300);
    /* An empty augment list, or one with an empty name, is bad as on the
     * command line ("none" says none); the value before it stays. */
    static const char aug[] = "augment=shift\naugment=\naugment=rotate,\n";
    write_file(path, aug, sizeof aug - 1);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, ":2: augment: empty list (none, or a comma list of shift, rotate, elastic)");
    CHECK_STR_HAS(err, "and 1 more bad line");
    CHECK_INT((int)s.cfg.augment, ==, (int)CN_AUG_SHIFT);
}

static void test_long_lines(void)
{
    char path[300], err[600];
    size_t n = 100000;
    char *text = malloc(n + 64);
    TuiSettings s;

    snprintf(path, sizeof path, "%s/long", dir);
    /* A comment longer than any buffer, with "batch=7" where an old reader
     * cut it, then a good line. */
    text[0] = '#';
    memset(text + 1, 'x', n);
    memcpy(text + 4199, "batch=7", 7);
    memcpy(text + 8199, "batch=7", 7);
    int k = (int)n + 1;
    k += sprintf(text + k, "\nworkers=3\n");
    write_file(path, text, (size_t)k);
    defaults(&s);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 0);
    CHECK_INT(s.cfg.batch, ==, 64);
    CHECK_INT(s.cfg.workers, ==, 3);
    /* A data path of 5000 bytes does not fit: a bad line, named. */
    k = sprintf(text, "data=");
    memset(text + k, 'd', 5000);
    k += 5000;
    k += sprintf(text + k, "\nbatch=32\n");
    write_file(path, text, (size_t)k);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, ":1: data: path longer than");
    CHECK_INT(s.cfg.batch, ==, 32);
    /* A NUL byte: not text; the line is bad, the next one read. */
    static const char nul[] = "batch=16\0garbage\nworkers=1\n";
    write_file(path, nul, sizeof nul - 1);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 2);
    CHECK_STR_HAS(err, ":1: a NUL byte");
    CHECK_INT(s.cfg.batch, ==, 32);
    CHECK_INT(s.cfg.workers, ==, 1);
    free(text);
}

static void test_command_line_wins(void)
{
    char path[300], err[600];
    TuiSettings s;
    static const char text[] = "batch=256\nsteps=500\n";

    snprintf(path, sizeof path, "%s/cli", dir);
    write_file(path, text, sizeof text - 1);
    defaults(&s);
    s.cfg.batch = 8; /* as --batch 8 set it */
    CHECK_INT(settings_load(&s, path, OPTSET_BATCH, err, sizeof err), ==, 0);
    CHECK_INT(s.cfg.batch, ==, 8);
    CHECK_INT(s.cfg.steps, ==, 500);
}

static void test_unreadable(void)
{
    char path[300], err[600];
    TuiSettings s, before, now;
    size_t n;

    /* A directory where the file should be: it cannot be read. */
    snprintf(path, sizeof path, "%s/isdir", dir);
    CHECK_INT(mkdir(path, 0755), ==, 0);
    defaults(&s);
    before = s;
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, -1);
    CHECK_STR_HAS(err, "isdir");
    CHECK_INT(s.cfg.batch, ==, before.cfg.batch);
    now = s;
    now.cfg.batch = 128;
    CHECK_INT(settings_save_changes(&before, &now, path, err, sizeof err), ==, -1);
    CHECK_STR_HAS(err, "left as it is");
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    /* Missing: nothing changes, 1. */
    snprintf(path, sizeof path, "%s/none", dir);
    CHECK_INT(settings_load(&s, path, 0, err, sizeof err), ==, 1);
    free(read_file(path, &n));
}

static void test_save_changes(void)
{
    char path[300], bad[320], err[600];
    TuiSettings launch, now;
    size_t n;
    static const char text[] = "# my settings\nbatch=256\nworkers=2\nbogus=1\n\n# end";

    snprintf(path, sizeof path, "%s/cfg", dir);
    snprintf(bad, sizeof bad, "%s.bad", path);
    write_file(path, text, sizeof text - 1);
    defaults(&launch);
    launch.cfg.steps = 200; /* --steps 200 on the command line */
    CHECK_INT(settings_load(&launch, path, OPTSET_STEPS, err, sizeof err), ==, 2);
    now = launch;
    settings_fix(&now);
    /* Nothing changed in the dashboard: the file is not touched. */
    CHECK_INT(settings_save_changes(&launch, &now, path, err, sizeof err), ==, 0);
    char *got = read_file(path, &n);
    CHECK(got && n == sizeof text - 1 && !memcmp(got, text, n));
    free(got);
    CHECK(access(bad, F_OK) != 0);
    /* Batch and augment changed: those lines only; bogus=1, the comments,
     * the blank line stay; --steps 200 is not written; a copy in .bad. */
    now.cfg.batch = 32;
    CHECK_INT(options_parse_augment("shift,rotate", &now.cfg.augment, err, sizeof err), ==, 0);
    CHECK_INT(settings_save_changes(&launch, &now, path, err, sizeof err), ==, 2);
    got = read_file(path, &n);
    CHECK(got && !strcmp(got, "# my settings\nbatch=32\nworkers=2\nbogus=1\n\n# end\n"
                              "augment=shift,rotate\n"));
    free(got);
    got = read_file(bad, &n);
    CHECK(got && n == sizeof text - 1 && !memcmp(got, text, n));
    free(got);
    /* Read back: the saved values, the bad line still reported. */
    TuiSettings back;
    defaults(&back);
    CHECK_INT(settings_load(&back, path, 0, err, sizeof err), ==, 2);
    CHECK_INT(back.cfg.batch, ==, 32);
    CHECK_INT(back.cfg.steps, ==, 0);
    CHECK_INT((int)back.cfg.augment, ==, (int)now.cfg.augment);
    /* No file yet: one is made with the changed keys only. */
    snprintf(path, sizeof path, "%s/sub/dir/config", dir);
    CHECK_INT(settings_save_changes(&launch, &now, path, err, sizeof err), ==, 2);
    got = read_file(path, &n);
    CHECK_STR_HAS(got, "\nbatch=32\naugment=shift,rotate\n");
    CHECK(got && !strstr(got, "steps=") && !strstr(got, "workers="));
    free(got);
}

static void test_history_compare(void)
{
    HistRow a, b;
    TuiHistory h;
    double ratio, err;

    memset(&a, 0, sizeof a);
    a.batch = 64;
    a.ips = 1000;
    snprintf(a.state, sizeof a.state, "finished");
    b = a;
    b.batch = 128;
    b.ips = 1500;
    CHECK(hist_why_not(&a) == NULL);
    hist_init(&h);
    hist_add(&h, &a);
    hist_add(&h, &b);
    h.baseline = 0;
    CHECK_INT(hist_speedup(&h, 1, &ratio, &err), ==, 0);
    CHECK_NEAR(ratio, 1.5, 1e-12);
    CHECK(isnan(err)); /* one run each: no spread known */
    /* Two runs of each: mean ± sd, and the ratio's uncertainty. */
    double mean, sd;
    a.ips = 1100;
    b.ips = 1300;
    hist_add(&h, &a);
    hist_add(&h, &b);
    CHECK_INT(hist_group(&h, 1, &mean, &sd), ==, 2);
    CHECK_NEAR(mean, 1400, 1e-9);
    CHECK_NEAR(sd, sqrt(20000.0), 1e-9);
    CHECK_INT(hist_speedup(&h, 1, &ratio, &err), ==, 0);
    CHECK_NEAR(ratio, 1400.0 / 1050.0, 1e-12);
    CHECK_NEAR(err, ratio * sqrt(20000.0 / (1400.0 * 1400) + 5000.0 / (1050.0 * 1050)), 1e-9);
    CHECK_INT(hist_group(&h, 0, &mean, &sd), ==, 2);
    CHECK_NEAR(sd, sqrt(5000.0), 1e-9);
    b.ips = 1500;
    b.live = 1;
    CHECK_STR_HAS(hist_why_not(&b), "live change");
    b.live = 0;
    snprintf(b.state, sizeof b.state, "failed");
    CHECK_STR_HAS(hist_why_not(&b), "failed");
    snprintf(b.state, sizeof b.state, "stopped");
    b.ips = 0;
    CHECK_STR_HAS(hist_why_not(&b), "no step trained");
    /* The run number goes through the --history line. */
    char line[2048], msg[128];
    HistRow c;
    a.run = 7;
    hist_format_line(&a, line, sizeof line);
    CHECK_INT(hist_parse_line(line, &c, msg, sizeof msg), ==, 0);
    CHECK_INT(c.run, ==, 7);
}

/* A --history line longer than any buffer is one row, not two. */
static void test_history_long_line(void)
{
    char path[300], err[300];
    size_t n = 6000;
    char *text = malloc(n + 200);
    TuiHistory h;

    snprintf(path, sizeof path, "%s/hist", dir);
    int k = sprintf(text, "when=1\trun=3\tbatch=64\tnote=");
    memset(text + k, 'x', n);
    k += (int)n;
    k += sprintf(text + k, "\tips=1234\tstate=finished\n");
    write_file(path, text, (size_t)k);
    hist_init(&h);
    CHECK_INT(hist_load(&h, path, err, sizeof err), ==, 0);
    CHECK_INT(h.n, ==, 1);
    CHECK_NEAR(h.rows[0].ips, 1234, 0);
    CHECK_INT(h.rows[0].run, ==, 3);
    free(text);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_tui_settings.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_bad_lines_keep_good();
    test_long_lines();
    test_command_line_wins();
    test_unreadable();
    test_save_changes();
    test_history_compare();
    test_history_long_line();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_report();
}
