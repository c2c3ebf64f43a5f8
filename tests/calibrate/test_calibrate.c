/*
 * test_calibrate.c: the calibration: measured figures and the cache file
 * (the sketch on paper from them is test_sketch.c).
 *
 * The cache lives under a temporary XDG_CACHE_HOME.  Measurements use a
 * short budget; the machine may be busy (CI runs tests side by side), so
 * the stability check is loose and allows one more try.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/calibrate.h"
#include "cnntop/engine.h"
#include "nn/model.h"
#include "prof/sysinfo.h"

#define SHORT 0.4 /* seconds of measuring per calibration in these tests */

static char tmpdir[256], cache_file[512];

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(buf, 1, len, f) == len);
    fclose(f);
}

static void write_text(const char *path, const char *s)
{
    write_file(path, s, strlen(s));
}

static int figures_positive(const Calibration *c)
{
    return c->model_gflops[0] > 0.0 && c->model_gflops[1] > 0.0 && c->square_gflops > 0.0 &&
           c->triad_gbps > 0.0 && c->triad_mib > 0.0 && c->threads >= 1 && c->cores >= 1;
}

/* The calibration's own text for this machine, as a valid file. */
static void valid_text(const Calibration *c, char *buf, size_t len)
{
    size_t n = calibrate_format(c, buf, len);
    CHECK(n < len);
}

static void test_path(void)
{
    char p[512], want[600], err[256], one[512], two[512];
    const char *core;

    CHECK_INT(calibrate_cache_path(p, sizeof p, 3, err, sizeof err), ==, 0);
    /* <dir>/cnntop/calibration-<OpenBLAS kernel>-<threads>t */
    snprintf(want, sizeof want, "%s/cnntop/calibration-", tmpdir);
    CHECK(strncmp(p, want, strlen(want)) == 0);
    core = p + strlen(want);
    /* "-3t", and "-3t-Nc" where this process may use N of more cores */
    char tail[32];
    int n_allowed = sysinfo_cores();
    if (n_allowed < sysinfo_cores_online())
        snprintf(tail, sizeof tail, "-3t-%dc", n_allowed);
    else
        snprintf(tail, sizeof tail, "-3t");
    CHECK(strlen(core) > strlen(tail) && !strcmp(core + strlen(core) - strlen(tail), tail));
    for (const char *q = core; *q; q++)
        CHECK(isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '-');
    /* One file per thread count; 0 is the cores this process may use. */
    CHECK_INT(calibrate_cache_path(one, sizeof one, 1, err, sizeof err), ==, 0);
    CHECK_INT(calibrate_cache_path(two, sizeof two, 2, err, sizeof err), ==, 0);
    CHECK(strcmp(one, two) != 0);
    MachineInfo mi;
    machine_info(&mi);
    CHECK_INT(calibrate_cache_path(one, sizeof one, 0, err, sizeof err), ==, 0);
    CHECK_INT(calibrate_cache_path(two, sizeof two, mi.cores, err, sizeof err), ==, 0);
    CHECK(strcmp(one, two) == 0);
    /* A process bound to one of the machine's cores (an MPI rank) has its
     * own file: its key differs, and one file would ping-pong. */
    cpu_set_t all, first;
    if (sysinfo_cores_online() > 1 && sched_getaffinity(0, sizeof all, &all) == 0 &&
        CPU_COUNT(&all) > 1) { /* started on one CPU already (taskset): nothing to tell */
        CPU_ZERO(&first);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &first);
                break;
            }
        CHECK_INT(sched_setaffinity(0, sizeof first, &first), ==, 0);
        CHECK_INT(calibrate_cache_path(p, sizeof p, 1, err, sizeof err), ==, 0);
        CHECK(strlen(p) > 6 && !strcmp(p + strlen(p) - 6, "-1t-1c"));
        CHECK_INT(calibrate_cache_path(two, sizeof two, 1, err, sizeof err), ==, 0);
        CHECK(strcmp(p, two) == 0);
        CHECK_INT(sched_setaffinity(0, sizeof all, &all), ==, 0);
        CHECK_INT(calibrate_cache_path(two, sizeof two, 1, err, sizeof err), ==, 0);
        CHECK(strcmp(p, two) != 0);
    }
    /* A relative XDG_CACHE_HOME is invalid per the spec: HOME's is used. */
    setenv("XDG_CACHE_HOME", "relative/dir", 1);
    setenv("HOME", "/home/someone", 1);
    CHECK_INT(calibrate_cache_path(p, sizeof p, 3, err, sizeof err), ==, 0);
    CHECK(strncmp(p, "/home/someone/.cache/cnntop/calibration-", 40) == 0);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK_INT(calibrate_cache_path(p, sizeof p, 3, err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "HOME");
    setenv("XDG_CACHE_HOME", tmpdir, 1);
    /* Too small a buffer is an error, not a cut path. */
    CHECK_INT(calibrate_cache_path(p, 20, 3, err, sizeof err), ==, -CN_EINVAL);
}

static void test_machine_info(void)
{
    MachineInfo mi;

    machine_info(&mi);
    CHECK(mi.kernel[0] != '\0');
    CHECK(mi.blas_version[0] != '\0');
    CHECK(!strcmp(mi.blas_threading, "pthreads") || !strcmp(mi.blas_threading, "OpenMP") ||
          !strcmp(mi.blas_threading, "sequential"));
    /* Caches may be unknown in a VM, but if L2 and L1d are known, L2 is bigger. */
    if (mi.l1d_bytes && mi.l2_bytes)
        CHECK(mi.l2_bytes > mi.l1d_bytes);
    printf("machine: L1d %zu L2 %zu L3 %zu, OpenBLAS %s %s (%s), kernel %s\n", mi.l1d_bytes,
           mi.l2_bytes, mi.l3_bytes, mi.blas_version, mi.blas_core, mi.blas_threading,
           mi.kernel);
}

/* The shapes walk the step's partition: their FLOPs are exactly those the
 * engine computes but for conv1's forward and weight gradient (2 x 451584
 * per image), which are not SGEMMs (layer_conv_phase.h). */
static int parse_text(const char *text, Calibration *c, char *err, size_t errlen)
{
    return calibrate_parse(text, strlen(text), c, err, errlen);
}

/* Replaces the first line of a valid text that starts with `key`. */
static void with_line(const char *valid, const char *key, const char *line, char *out,
                      size_t len)
{
    const char *at = valid;

    while (at && strncmp(at, key, strlen(key)) != 0) {
        at = strchr(at, '\n');
        at = at ? at + 1 : NULL;
    }
    const char *eol = at ? strchr(at, '\n') : NULL;

    CHECK(at && eol);
    if (!at || !eol)
        return;
    snprintf(out, len, "%.*s%s%s", (int)(at - valid), valid, line, eol);
}

static void test_parse(const Calibration *good)
{
    char valid[4096], t[4200], err[256];
    Calibration c;

    valid_text(good, valid, sizeof valid);
    CHECK_INT(parse_text(valid, &c, err, sizeof err), ==, 0);
    CHECK(c.cached == 1);
    CHECK(!strcmp(c.cpu_model, good->cpu_model));
    CHECK_INT(c.threads, ==, good->threads);
    CHECK_NEAR(c.model_gflops[0], good->model_gflops[0], 0.0005);
    CHECK_NEAR(c.model_gflops[1], good->model_gflops[1], 0.0005);
    CHECK_NEAR(c.square_gflops, good->square_gflops, 0.0005);
    CHECK_NEAR(c.triad_gbps, good->triad_gbps, 0.0005);
    CHECK_INT(c.measured_at, ==, good->measured_at);
    CHECK(calibrate_key_matches(&c, 0, NULL, 0));
    /* Every line counts: dropping the tail at any byte is refused. */
    for (size_t n = 0; n < strlen(valid); n++) {
        int rc = calibrate_parse(valid, n, &c, err, sizeof err);
        CHECK_INT(rc, ==, -CN_EFORMAT);
        if (rc == 0)
            fprintf(stderr, "  accepted a truncation at byte %zu\n", n);
    }
    /* Blank lines and comments anywhere before 'end' are fine. */
    snprintf(t, sizeof t, "\n# hello\n\n%s", valid);
    CHECK_INT(parse_text(t, &c, err, sizeof err), ==, 0);
    /* Another machine's file parses; its key does not match here. */
    with_line(valid, "cpu_model=", "cpu_model=Imaginary CPU 9000", t, sizeof t);
    CHECK_INT(parse_text(t, &c, err, sizeof err), ==, 0);
    CHECK(!calibrate_key_matches(&c, 0, err, sizeof err));
    CHECK_STR_HAS(err, "CPU model");
    CHECK(!calibrate_key_matches(good, good->threads + 1, err, sizeof err));
    CHECK_STR_HAS(err, "threads");
}

/* Each kind of bad text is refused with a reason naming the line's fault. */
static void test_parse_bad(const Calibration *good)
{
    char valid[4096], t[4200], err[256];
    Calibration c;

    valid_text(good, valid, sizeof valid);
    static const struct {
        const char *key, *line, *want;
    } bad[] = {
        {"cnntop-calibration", "cnntop-calibration 3", "format version '3'"},
        {"cnntop-calibration", "some other file", "not a cnntop calibration file"},
        {"cores=", "cores=0", "bad cores"},
        {"cores=", "cores=2.5", "bad cores"},
        {"cores=", "cores=-3", "bad cores"},
        {"threads=", "threads=", "bad threads"},
        {"model_gflops_a=", "model_gflops_a=1,5", "bad model_gflops_a"},
        {"model_gflops_a=", "model_gflops_a=nan", "bad model_gflops_a"},
        {"model_gflops_a=", "model_gflops_a=1e3", "bad model_gflops_a"},
        {"model_gflops_a=", "model_gflops_a=0.000", "bad model_gflops_a"},
        {"triad_gbps=", "triad_gbps=12.", "bad triad_gbps"},
        {"triad_gbps=", "triad_gbps = 12.0", "unknown key 'triad_gbps '"},
        {"cpu_model=", "cpu_model=", "bad cpu_model"},
        {"triad_gbps=", "triad_gbps=1.0\nfrobs=3", "unknown key 'frobs'"},
        {"triad_gbps=", "triad_gbps=1.0\ntriad_gbps=2.0", "'triad_gbps' given twice"},
        {"triad_gbps=", "no equals sign", "is not key=value"},
        {"square_n=", "# square_n dropped", "'square_n' missing"},
        {"end", "end\nmore", "text after 'end'"},
        {"end", "# no end", "no 'end' line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        with_line(valid, bad[i].key, bad[i].line, t, sizeof t);
        err[0] = '\0';
        CHECK_INT(parse_text(t, &c, err, sizeof err), ==, -CN_EFORMAT);
        CHECK_STR_HAS(err, bad[i].want);
    }
    CHECK_INT(parse_text("", &c, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "empty");
    CHECK_INT(calibrate_parse(NULL, 5, &c, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_INT(parse_text("\n\n# only comments\n", &c, err, sizeof err), ==, -CN_EFORMAT);
    /* Binary bytes and a NUL, an overlong line. */
    memcpy(t, valid, strlen(valid) + 1);
    t[30] = '\0';
    CHECK_INT(calibrate_parse(t, strlen(valid), &c, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "NUL");
    memset(t, 'x', 1000);
    t[1000] = '\n';
    CHECK_INT(calibrate_parse(t, 1001, &c, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "longer than");
}

static CalibOpts short_opts(void)
{
    CalibOpts o = {.threads = 0, .seconds = SHORT};
    return o;
}

static void test_measure(Calibration *first)
{
    CalibOpts o = short_opts();
    Calibration a, b, c;
    char err[256] = "";

    CHECK_INT(calibrate_measure(&o, &a, err, sizeof err), ==, 0);
    CHECK(figures_positive(&a));
    CHECK_INT(a.batch[0], ==, CALIB_BATCH_A);
    CHECK_INT(a.batch[1], ==, CALIB_BATCH_B);
    CHECK_INT(a.square_n, ==, CALIB_SQUARE_N);
    CHECK_INT(a.threads, ==, a.cores);
    CHECK(a.triad_mib >= 48.0);
    CHECK(a.seconds > 0.0 && a.measured_at > 0);
    CHECK(a.cached == 0);
    CHECK(calibrate_key_matches(&a, 0, NULL, 0));
    printf("measured (%.1f s): model %.1f / %.1f GFLOP/s (batch %d / %d, %d threads), "
           "square %.1f GFLOP/s, triad %.1f GB/s over %.0f MiB (L3 %.0f MiB)\n", a.seconds,
           a.model_gflops[0], a.model_gflops[1], a.batch[0], a.batch[1], a.threads,
           a.square_gflops, a.triad_gbps, a.triad_mib, a.llc_mib);
    /* Stable: a second measurement agrees within a loose factor (other
     * tests may share the cores); a third try decides if not. */
    CHECK_INT(calibrate_measure(&o, &b, err, sizeof err), ==, 0);
    const double F = 4.0;
    int agree = 1;
    for (int k = 0; k < CALIB_NBATCH; k++)
        agree &= b.model_gflops[k] < F * a.model_gflops[k] && a.model_gflops[k] < F * b.model_gflops[k];
    agree &= b.square_gflops < F * a.square_gflops && a.square_gflops < F * b.square_gflops;
    agree &= b.triad_gbps < F * a.triad_gbps && a.triad_gbps < F * b.triad_gbps;
    if (!agree) {
        fprintf(stderr, "note: two calibrations disagree by %gx or more; a third decides\n", F);
        CHECK_INT(calibrate_measure(&o, &c, err, sizeof err), ==, 0);
        agree = 1;
        for (int k = 0; k < CALIB_NBATCH; k++)
            agree &= c.model_gflops[k] < F * b.model_gflops[k] && b.model_gflops[k] < F * c.model_gflops[k];
        agree &= c.square_gflops < F * b.square_gflops && b.square_gflops < F * c.square_gflops;
        agree &= c.triad_gbps < F * b.triad_gbps && b.triad_gbps < F * c.triad_gbps;
    }
    CHECK(agree);
    /* The budget holds, give or take the untimed parts (touching memory,
     * warm-up calls) and sanitizer builds' slow loops.  A wall-clock bound
     * under other tests' load is a hang detector, not the budget itself:
     * 10 x SHORT + 3 s was passed once with an ASan build beside the rest
     * of the suite (load 15 on 2 cores). */
    fprintf(stderr, "calibration of %.1f s budget took %.1f s\n", o.seconds, a.seconds);
    CHECK(a.seconds < 10.0 * SHORT + 60.0);
    *first = a;
}

/* What one core can do per cycle at each width: lanes x FLOPs per lane and
 * instruction x the instructions a cycle, from the narrowest ports of
 * current x86 cores to the widest: AVX-512 one (Zen 4 double-pumps its two
 * 256-bit units; Intel cores with one 512-bit FMA port) or two FMAs a
 * cycle; AVX2 one (Zen 1) or two; SSE's muls and adds two (Intel: ports 0
 * and 1 do both) to four (Zen: two mul and two add pipes). */
static const struct {
    const char *name;
    int lanes, flop, ports_lo, ports_hi;
} widths[CALIB_NWIDTHS] = {
    {"AVX-512", 16, 2, 1, 2}, {"AVX2+FMA", 8, 2, 1, 2}, {"SSE", 4, 1, 2, 4}};

/* 1 when every width's figures fit what the width allows at the measured
 * clock, within a generous band: a shared machine lowers them (0.25x),
 * turbo varies (1.3x). */
static int peaks_plausible(const Calibration *c, int report)
{
    int ok = c->clock_ghz > 0.3 && c->clock_ghz < 7.0;

    for (int w = 0; w < CALIB_NWIDTHS; w++) {
        if (!(c->fma1_gflops[w] > 0.0))
            continue;
        double per_cycle = c->fma1_gflops[w] / c->clock_ghz;
        double lo = 0.25 * widths[w].lanes * widths[w].flop * widths[w].ports_lo;
        double hi = 1.3 * widths[w].lanes * widths[w].flop * widths[w].ports_hi;
        int good = per_cycle >= lo && per_cycle <= hi && c->fma_gflops[w] > 0.0 &&
                   c->fma_gflops[w] <= 1.3 * c->threads * c->fma1_gflops[w] &&
                   c->fma_gflops[w] >= 0.25 * c->fma1_gflops[w];
        if (report)
            printf("peak %-8s %.1f GFLOP/s one thread = %.1f FLOP/cycle at %.2f GHz (allowed "
                   "%.0f..%.0f), %.1f on %d threads: %s\n", widths[w].name, c->fma1_gflops[w],
                   per_cycle, c->clock_ghz, lo, hi, c->fma_gflops[w], c->threads,
                   good ? "ok" : "OUT OF BAND");
        ok &= good;
    }
    return ok;
}

/* The FMA peak against what each width allows; on an AVX-512 CPU the
 * AVX-512 figure is not below the AVX2 one (about equal on Zen 4, about
 * twice on cores with two 512-bit FMA units). */
static void test_peak(const Calibration *a)
{
    MachineInfo mi;
    Calibration c = *a;
    char err[256];

    machine_info(&mi);
    for (int w = 0; w < CALIB_NWIDTHS; w++) {
        CHECK(!strcmp(calibrate_width_name(w), widths[w].name));
        if (!(c.fma1_gflops[w] > 0.0))
            printf("peak %-8s not on this CPU (%s): not checked\n", widths[w].name, mi.cpu_isa);
    }
    if (!(calibrate_peak(&c, NULL) > 0.0)) {
        printf("no peak loop runs on this CPU (not x86): skipped\n");
        return;
    }
    /* The SSE loop runs on every x86-64 CPU; the others as cpuid says. */
    CHECK(c.fma1_gflops[2] > 0.0);
    if (!strcmp(mi.cpu_isa, "AVX-512"))
        CHECK(c.fma1_gflops[0] > 0.0);
    if (!peaks_plausible(&c, 1)) {
        fprintf(stderr, "note: a peak is out of band; measuring once more, longer\n");
        CalibOpts o = short_opts();
        o.seconds = 3.0;
        CHECK_INT(calibrate_measure(&o, &c, err, sizeof err), ==, 0);
        CHECK(peaks_plausible(&c, 1));
    }
    if (c.fma1_gflops[0] > 0.0) {
        printf("peak AVX-512 / AVX2+FMA on one thread: %.2f\n",
               c.fma1_gflops[0] / c.fma1_gflops[1]);
        CHECK(c.fma1_gflops[0] >= 0.8 * c.fma1_gflops[1]);
    }
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* The cache file holds a valid calibration for this machine now. */
static void check_cache_is_good(void)
{
    FILE *f = fopen(cache_file, "rb");
    char buf[8192], err[256];
    Calibration c;

    CHECK(f != NULL);
    if (!f)
        return;
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK_INT(calibrate_parse(buf, n, &c, err, sizeof err), ==, 0);
    CHECK(calibrate_key_matches(&c, 0, NULL, 0));
    CHECK(c.model_gflops[0] < 1e5); /* not the planted figure */
}

static void test_cache(void)
{
    CalibOpts o = short_opts();
    Calibration c, d;
    char warn[1024], err[256];

    unlink(cache_file);
    /* No file yet: measured, stored, no warning. */
    CHECK_INT(calibrate_get(&o, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(warn[0] == '\0');
    CHECK(c.cached == 0 && figures_positive(&c));
    CHECK(file_exists(cache_file));
    /* Round trip: the next get reads the file, and every figure is the one
     * the first get returned, to the bit (a first `run --export` and the
     * later ones report the same peak and MFU). */
    CHECK_INT(calibrate_get(&o, &d, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(warn[0] == '\0');
    CHECK(d.cached == 1);
    CHECK(!strcmp(d.cpu_model, c.cpu_model) && !strcmp(d.blas_core, c.blas_core));
    CHECK(d.model_gflops[0] == c.model_gflops[0] && d.model_gflops[1] == c.model_gflops[1]);
    CHECK(d.square_gflops == c.square_gflops);
    CHECK(d.triad_gbps == c.triad_gbps && d.triad_mib == c.triad_mib);
    CHECK(d.clock_ghz == c.clock_ghz && d.llc_mib == c.llc_mib && d.seconds == c.seconds);
    for (int w = 0; w < CALIB_NWIDTHS; w++)
        CHECK(d.fma_gflops[w] == c.fma_gflops[w] && d.fma1_gflops[w] == c.fma1_gflops[w]);
    CHECK(calibrate_peak(&d, NULL) == calibrate_peak(&c, NULL));
    CHECK_INT(d.measured_at, ==, c.measured_at);
    /* force measures again even with a good file. */
    CHECK_INT(calibrate_get(&o, &d, 1, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(d.cached == 0);
}

/* Bad files: each ignored with a warning naming the file, not trusted (a
 * planted absurd rate never comes back), and replaced. */
static void test_cache_bad(const Calibration *good)
{
    CalibOpts o = short_opts();
    Calibration c;
    char warn[1024], err[256], valid[4096], t[4200];

    Calibration planted = *good;
    planted.model_gflops[0] = 987654.321;
    valid_text(&planted, valid, sizeof valid);
    struct {
        const char *name, *want;
        char text[4200];
        size_t len;
    } cases[5];
    int nc = 0;
    cases[nc].name = "truncated";
    cases[nc].want = "truncated";
    cases[nc].len = strlen(valid) * 2 / 3;
    memcpy(cases[nc].text, valid, cases[nc].len);
    nc++;
    cases[nc].name = "garbage";
    cases[nc].want = "not a cnntop calibration file";
    for (size_t i = 0; i < 300; i++)
        cases[nc].text[i] = (char)((i * 7919u + 13u) & 0xff);
    cases[nc].text[0] = 'G';
    cases[nc].text[20] = '\n'; /* a first line without NUL bytes */
    cases[nc].len = 300;
    nc++;
    cases[nc].name = "wrong version";
    cases[nc].want = "format version '7'";
    with_line(valid, "cnntop-calibration", "cnntop-calibration 7", t, sizeof t);
    cases[nc].len = strlen(t);
    memcpy(cases[nc].text, t, cases[nc].len);
    nc++;
    cases[nc].name = "wrong key";
    cases[nc].want = "another machine";
    with_line(valid, "blas_core=", "blas_core=NotARealCore", t, sizeof t);
    cases[nc].len = strlen(t);
    memcpy(cases[nc].text, t, cases[nc].len);
    nc++;
    cases[nc].name = "empty";
    cases[nc].want = "empty";
    cases[nc].len = 0;
    nc++;
    for (int i = 0; i < nc; i++) {
        write_file(cache_file, cases[i].text, cases[i].len);
        CHECK_INT(calibrate_get(&o, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
        if (!strstr(warn, cache_file) || !strstr(warn, cases[i].want))
            fprintf(stderr, "  case %s: warning '%s'\n", cases[i].name, warn);
        CHECK_STR_HAS(warn, cache_file);
        CHECK_STR_HAS(warn, cases[i].want);
        CHECK(strchr(warn, '\n') == NULL);
        CHECK(c.cached == 0);
        CHECK(c.model_gflops[0] < 1e5);
        check_cache_is_good();
    }
}

/* A cache that cannot be written only warns. */
static void test_cache_unwritable(void)
{
    CalibOpts o = short_opts();
    Calibration c;
    char warn[1024], err[256], blocker[600];

    snprintf(blocker, sizeof blocker, "%s/not-a-dir", tmpdir);
    write_text(blocker, "x");
    setenv("XDG_CACHE_HOME", blocker, 1);
    CHECK_INT(calibrate_get(&o, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK_STR_HAS(warn, "not cached");
    CHECK(figures_positive(&c));
    setenv("XDG_CACHE_HOME", tmpdir, 1);
    unlink(blocker);
}

/* Setups side by side: each thread count has its own file, so runs that
 * switch between them measure each once, and neither warns. */
static void test_setups(void)
{
    CalibOpts a = short_opts(), b = short_opts();
    Calibration c;
    char warn[1024], err[256], pa[512], pb[512];

    a.threads = 1;
    b.threads = 2;
    CHECK_INT(calibrate_cache_path(pa, sizeof pa, 1, err, sizeof err), ==, 0);
    CHECK_INT(calibrate_cache_path(pb, sizeof pb, 2, err, sizeof err), ==, 0);
    unlink(pa);
    unlink(pb);
    CHECK_INT(calibrate_get(&a, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(c.cached == 0 && c.threads == 1 && file_exists(pa) && !file_exists(pb));
    CHECK_INT(calibrate_get(&b, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(c.cached == 0 && c.threads == 2 && file_exists(pb));
    CHECK_INT(calibrate_get(&a, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(warn[0] == '\0');
    CHECK(c.cached == 1 && c.threads == 1);
    CHECK_INT(calibrate_get(&b, &c, 0, warn, sizeof warn, err, sizeof err), ==, 0);
    CHECK(warn[0] == '\0');
    CHECK(c.cached == 1 && c.threads == 2);
}

static void test_format(const Calibration *good)
{
    char buf[4096], small[16];

    size_t n = calibrate_format(good, buf, sizeof buf);
    CHECK(n > 0 && n < sizeof buf);
    CHECK(n >= 4 && !strcmp(buf + n - 4, "end\n"));
    CHECK_STR_HAS(buf, "cnntop-calibration 5\n");
    CHECK_STR_HAS(buf, "\nfma_avx2=");
    CHECK_STR_HAS(buf, "\nclock_ghz=");
    /* Too small a buffer: cut and terminated, the needed length returned. */
    CHECK_INT(calibrate_format(good, small, sizeof small), ==, n);
    CHECK(small[sizeof small - 1] == '\0');
}

/* Every field of the cache, found in the written text itself (so a field
 * added later is covered too): each value replaced by ones that make no
 * sense is refused, naming the key. */
static void test_parse_every_field(const Calibration *good)
{
    static const char *const bad_num[] = {"", "-1", "nan", "inf", "1e999", "99999999999999",
                                          "1.2.3", "0x10", " 1"};
    static const char *const bad_str[] = {"", "\001bell"};
    char valid[4096], t[4200], line[256], key[64], err[256];
    Calibration c;
    int fields = 0;

    valid_text(good, valid, sizeof valid);
    for (const char *at = valid; *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : "") {
        const char *eq = strchr(at, '='), *eol = strchr(at, '\n');
        if (!eq || !eol || eq > eol || *at == '#')
            continue;
        snprintf(key, sizeof key, "%.*s", (int)(eq - at), at);
        double d;
        char *end;
        d = strtod(eq + 1, &end);
        int numeric = end == eol && end != eq + 1;
        const char *const *bad = numeric ? bad_num : bad_str;
        size_t nbad = numeric ? sizeof bad_num / sizeof *bad_num : sizeof bad_str / sizeof *bad_str;
        (void)d;
        fields++;
        for (size_t i = 0; i < nbad; i++) {
            snprintf(line, sizeof line, "%s=%s", key, bad[i]);
            with_line(valid, key, line, t, sizeof t);
            err[0] = '\0';
            int rc = parse_text(t, &c, err, sizeof err);
            if (rc == 0)
                fprintf(stderr, "  accepted %s\n", line);
            CHECK_INT(rc, ==, -CN_EFORMAT);
            CHECK_STR_HAS(err, key);
        }
    }
    CHECK(fields >= 10);
}

int main(void)
{
    Calibration good;

    snprintf(tmpdir, sizeof tmpdir, "/tmp/cnntop-calib-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    setenv("XDG_CACHE_HOME", tmpdir, 1);
    if (calibrate_cache_path(cache_file, sizeof cache_file, short_opts().threads, NULL, 0) != 0) {
        fprintf(stderr, "no cache path under %s\n", tmpdir);
        return 1;
    }

    test_path();
    test_machine_info();
    test_measure(&good);
    test_peak(&good);
    test_format(&good);
    test_parse(&good);
    test_parse_bad(&good);
    test_parse_every_field(&good);
    test_cache();
    test_cache_bad(&good);
    test_cache_unwritable();
    test_setups();

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_report();
}
