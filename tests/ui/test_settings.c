/*
 * test_settings.c: every front end takes what the settings tables say,
 * and the documentation lists every row.
 *
 *   - for every row of settings_run and settings_ui, at each edge of its
 *     range (min and max accepted, min - 1 and max + 1 refused; for a real
 *     number the next doubles out; for names each name and a bogus one),
 *     the command line (options_parse), the settings file (settings_load),
 *     the dashboard's typed value (settings_set_text) and the engine
 *     (engine_new) agree with the row, and a refusal names the option or
 *     `config:LINE` and the key;
 *   - prefetch 0 ("two per worker") is taken by all of them;
 *   - --help, the man page (options and settings file), assets/config and
 *     the bash completion list every row, with its range and default.
 *
 * Usage: test_settings [SOURCE_DIR] (the man page and assets are read there;
 * the default is the tree it was built from).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/config.h"
#include "common/options.h"
#include "test_commands.h"

static char dir[256];
#ifndef CNNTOP_SOURCE_DIR
#define CNNTOP_SOURCE_DIR "."
#endif
static const char *src = CNNTOP_SOURCE_DIR;

typedef struct Case {
    char text[64]; /* the value as typed */
    int ok;        /* 1: accepted */
} Case;

/* The values at the edges of row s (opt: the command line's minimum). */
static int edge_cases(const Setting *s, int opt, Case *c)
{
    int n = 0;
    double lo = settings_min(s, opt);

    switch (s->type) {
    case SETTING_INT: case SETTING_LONG:
        snprintf(c[n].text, 64, "%.0f", lo), c[n++].ok = 1;
        snprintf(c[n].text, 64, "%.0f", lo - 1), c[n++].ok = 0;
        snprintf(c[n].text, 64, "%.0f", s->max), c[n++].ok = 1;
        snprintf(c[n].text, 64, "%.0f", s->max + 1), c[n++].ok = 0;
        break;
    case SETTING_U64:
        snprintf(c[n].text, 64, "0"), c[n++].ok = 1;
        snprintf(c[n].text, 64, "%llu", (unsigned long long)UINT64_MAX), c[n++].ok = 1;
        snprintf(c[n].text, 64, "18446744073709551616"), c[n++].ok = 0;
        snprintf(c[n].text, 64, "-1"), c[n++].ok = 0;
        break;
    case SETTING_REAL:
        snprintf(c[n].text, 64, "%.17g", s->max), c[n++].ok = 1;
        snprintf(c[n].text, 64, "%.17g", nextafter(s->max, INFINITY)), c[n++].ok = 0;
        snprintf(c[n].text, 64, "%.17g", s->tiny), c[n++].ok = 1;
        snprintf(c[n].text, 64, "%.17g", nextafter(s->tiny, 0)), c[n++].ok = 0;
        snprintf(c[n].text, 64, "%g", s->min), c[n++].ok = 0;
        break;
    case SETTING_FLAGS: case SETTING_CHOICE:
        for (const SettingName *k = s->names; k->name; k++)
            snprintf(c[n].text, 64, "%s", k->name), c[n++].ok = 1;
        snprintf(c[n].text, 64, "bogus"), c[n++].ok = 0;
        break;
    default:
        break;
    }
    return n;
}

static const OptionDesc *option_of(const char *key)
{
    for (size_t i = 0; i < option_count; i++)
        if (option_table[i].setting && !strcmp(option_table[i].setting, key))
            return &option_table[i];
    return NULL;
}

/* The command line takes row s's value c as the row says. */
static void check_option(const Setting *s, const Case *c)
{
    const OptionDesc *d = option_of(s->key);
    char arg[1200], err[512] = "", cmd[] = "run", arg0[] = "cnntop", got[128], want[128];
    Options o;

    if (!d)
        return;
    snprintf(arg, sizeof arg, "%s=%s", d->name, c->text);
    char *argv[] = {arg0, cmd, arg, NULL};
    int rc = options_parse(&o, &test_commands, 3, argv, err, sizeof err);
    if (c->ok && rc == 0) {
        /* The value arrived: what the row formats from it is what it parses to. */
        TuiSettings t;
        memset(&t, 0, sizeof t);
        t.cfg = o.cfg;
        t.blas_keep = o.blas_keep;
        t.ranks = o.ranks;
        const void *base = settings_find(settings_run, s->key) ? (const void *)&t.cfg
                                                               : (const void *)&t;
        settings_format(s, base, got, sizeof got);
        CHECK(settings_parse(s, s->key, c->text, 1, (void *)base, err, sizeof err) == 0);
        settings_format(s, base, want, sizeof want);
        if (strcmp(got, want))
            fprintf(stderr, "%s=%s: parsed as %s\n", d->name, c->text, got);
        CHECK(!strcmp(got, want));
    }
    if ((rc == 0) != c->ok)
        fprintf(stderr, "%s=%s: options_parse %d, want %s (%s)\n", d->name, c->text, rc,
                c->ok ? "taken" : "refused", err);
    CHECK_INT(rc == 0, ==, c->ok);
    if (!c->ok)
        CHECK_STR_HAS(err, d->name);
}

/* The settings file and the dashboard's typed value take it alike. */
static void check_file(const Setting *s, const Case *c)
{
    char path[300], err[600] = "", line[1200], want[80];
    TuiSettings t, u;

    if (s->flags & SETTING_NO_FILE)
        return;
    snprintf(path, sizeof path, "%s/cfg", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    snprintf(line, sizeof line, "%s=%s\n", s->key, c->text);
    fputs(line, f);
    fclose(f);
    memset(&t, 0, sizeof t);
    settings_set_defaults(settings_run, &t.cfg);
    settings_set_defaults(settings_ui, &t);
    u = t;
    int rc = settings_load(&t, path, 0, err, sizeof err);
    if ((rc == 0) != c->ok)
        fprintf(stderr, "config %s: settings_load %d (%s)\n", line, rc, err);
    CHECK_INT(rc, ==, c->ok ? 0 : 2);
    snprintf(want, sizeof want, ":1: %s: ", s->key);
    if (!c->ok)
        CHECK_STR_HAS(err, want);
    CHECK_INT(settings_set_text(&u, s->key, c->text, err, sizeof err) == 0, ==, c->ok);
}

/* The engine refuses row s's field one past each end (and takes the ends:
 * then engine_new gets past its check and fails on the missing data). */
static void check_engine(const Setting *s)
{
    char err[512];
    Engine *e = NULL;
    double v[4];
    int n = 0;

    if (s->type == SETTING_INT || s->type == SETTING_LONG) {
        v[0] = s->min, v[1] = s->max, v[2] = s->min - 1, v[3] = s->max + 1;
        n = 4;
    } else if (s->type == SETTING_REAL) {
        v[0] = s->tiny, v[1] = s->max, v[2] = nextafter(s->tiny, 0);
        v[3] = nextafter(s->max, INFINITY);
        n = 4;
    }
    for (int i = 0; i < n; i++) {
        RunConfig c;
        engine_config_default(&c);
        c.data_dir = "/nonexistent/cnntop-settings";
        void *field = (char *)&c + s->offset;
        if (s->type == SETTING_INT)
            *(int *)field = (int)v[i];
        else if (s->type == SETTING_LONG)
            *(long *)field = (long)v[i];
        else
            *(double *)field = v[i];
        int rc = engine_new(&e, &c, err, sizeof err);
        engine_free(e);
        e = NULL;
        if ((rc != -CN_EINVAL) != (i < 2))
            fprintf(stderr, "engine %s = %g: %d (%s)\n", s->key, v[i], rc, err);
        CHECK_INT(rc != -CN_EINVAL, ==, i < 2);
        if (i >= 2)
            CHECK_STR_HAS(err, s->what);
    }
    if (s->type == SETTING_FLAGS) { /* a bit no name has */
        RunConfig c;
        engine_config_default(&c);
        *(unsigned *)(void *)((char *)&c + s->offset) = 1u << 30;
        CHECK_INT(engine_new(&e, &c, err, sizeof err), ==, -CN_EINVAL);
        CHECK_STR_HAS(err, s->what);
    }
}

static void test_edges(void)
{
    static const Setting *const tables[] = {settings_run, settings_ui};
    Case c[16];

    for (int t = 0; t < 2; t++)
        for (const Setting *s = tables[t]; s->key; s++) {
            int n = edge_cases(s, 1, c);
            for (int i = 0; i < n; i++)
                check_option(s, &c[i]);
            n = edge_cases(s, 0, c);
            for (int i = 0; i < n; i++)
                check_file(s, &c[i]);
            if (t == 0)
                check_engine(s);
        }
}

/* The engine's meaning of prefetch 0, "two per worker", everywhere. */
static void test_prefetch_zero(void)
{
    char err[512], arg0[] = "cnntop", cmd[] = "run", a[] = "--prefetch", v[] = "0";
    char *argv[] = {arg0, cmd, a, v, NULL};
    Options o;
    TuiSettings t;

    CHECK_INT(options_parse(&o, &test_commands, 4, argv, err, sizeof err), ==, 0);
    CHECK_INT(o.cfg.prefetch, ==, 0);
    memset(&t, 0, sizeof t);
    t.cfg.prefetch = 5;
    CHECK_INT(settings_set_text(&t, "prefetch", "0", err, sizeof err), ==, 0);
    CHECK_INT(t.cfg.prefetch, ==, 0);
    CHECK_STR_HAS(settings_find(settings_run, "prefetch")->zero, "two per worker");
}

/* --- the documentation ------------------------------------------------ */

static char *slurp(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", src, rel);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return calloc(1, 1);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The text from `at` to the next line starting with `end` (or the end). */
static char *paragraph(const char *at, const char *end)
{
    const char *stop = strstr(at + 1, end);
    size_t n = stop ? (size_t)(stop - at) : strlen(at);
    char *p = malloc(n + 1);
    memcpy(p, at, n);
    p[n] = '\0';
    return p;
}

/* "--test-limit" as roff writes it: "\-\-test\-limit". */
static void roff(const char *s, char *out, size_t len)
{
    size_t n = 0;
    for (; *s && n + 3 < len; s++) {
        if (*s == '-')
            out[n++] = '\\';
        out[n++] = *s;
    }
    out[n] = '\0';
}

/* The range of row s as the man page and the config comments say it:
 * each end, or each name. */
static void check_range_in(const Setting *s, int opt, const char *text, const char *where,
                           int dots)
{
    char want[128];

    if (s->type == SETTING_INT || s->type == SETTING_LONG) {
        snprintf(want, sizeof want, dots ? "%.0f..%.0f" : "%.0f to %.0f", settings_min(s, opt),
                 s->max);
    } else if (s->type == SETTING_FLAGS || s->type == SETTING_CHOICE) {
        for (const SettingName *k = s->names; k->name; k++)
            if (!strstr(text, k->name)) {
                fprintf(stderr, "%s: %s lacks '%s'\n", where, s->key, k->name);
                CHECK(0);
            }
        return;
    } else if (s->type == SETTING_U64) {
        snprintf(want, sizeof want, "%llu", (unsigned long long)UINT64_MAX);
    } else if (s->type == SETTING_REAL) {
        snprintf(want, sizeof want, "%g", s->max);
    } else
        return;
    if (!strstr(text, want))
        fprintf(stderr, "%s: %s does not say '%s'\n", where, s->key, want);
    CHECK(strstr(text, want) != NULL);
}

/* --help, the man page's OPTIONS and the completion name row s's option. */
static void check_docs_option(const Setting *s, const OptionDesc *d, const char *man,
                              const char *help, const char *compl)
{
    char want[256], esc[128], name[64] = "--";

    for (size_t i = 0; s->key[i] && i + 3 < sizeof name; i++)
        name[i + 2] = s->key[i] == '_' ? '-' : s->key[i], name[i + 3] = '\0';
    CHECK(!strcmp(d->name, name) || !strcmp(s->key, "data"));
    snprintf(want, sizeof want, "\n  %s %s ", d->name, s->arg);
    CHECK_STR_HAS(help, want);
    roff(d->name, esc, sizeof esc);
    snprintf(want, sizeof want, "\n.BI %s \" %s\"", esc, s->arg);
    const char *at = strstr(man, want);
    if (!at)
        fprintf(stderr, "man page lacks '%s'\n", want + 1);
    CHECK(at != NULL);
    if (at && s->type != SETTING_PATH) {
        char *p = paragraph(at + 1, "\n.TP");
        check_range_in(s, 1, p, "man page OPTIONS", 0);
        free(p);
    }
    snprintf(want, sizeof want, " %s", d->name);
    CHECK_STR_HAS(compl, want);
}

/* The man page's settings file and assets/config give row s's key with
 * its default, and its range. */
static void check_docs_key(const Setting *s, const char *man, const char *conf)
{
    char want[256], dflt[128];
    TuiSettings t;

    memset(&t, 0, sizeof t);
    settings_set_defaults(settings_run, &t.cfg);
    settings_set_defaults(settings_ui, &t);
    settings_format(s, settings_find(settings_run, s->key) ? (const void *)&t.cfg
                                                           : (const void *)&t, dflt, sizeof dflt);
    snprintf(want, sizeof want, "\n.BR %s =%s\n", s->key, dflt);
    const char *at = strstr(man, want);
    if (!at)
        fprintf(stderr, "man page's settings file lacks '%s'\n", want + 1);
    CHECK(at != NULL);
    if (at) {
        char *p = paragraph(at + 1, "\n.TP");
        check_range_in(s, 0, p, "man page settings file", 0);
        free(p);
    }
    snprintf(want, sizeof want, "\n%s=%s\n", s->key, dflt);
    at = strstr(conf, want);
    if (!at)
        fprintf(stderr, "assets/config lacks '%s'\n", want + 1);
    CHECK(at != NULL);
    if (!at)
        return;
    const char *b = at; /* back to the first of the '#' lines just above */
    for (;;) {
        const char *ls = b;
        while (ls > conf && ls[-1] != '\n')
            ls--;
        if (ls == b || *ls != '#')
            break;
        b = ls > conf ? ls - 1 : ls;
        if (ls == conf)
            break;
    }
    char *p = paragraph(b, want);
    check_range_in(s, 0, p, "assets/config", 1);
    free(p);
}

static void test_docs(void)
{
    static const Setting *const tables[] = {settings_run, settings_ui};
    char *man = slurp("man/cnntop.1.in"), *conf = slurp("assets/config");
    char *compl = slurp("assets/cnntop.bash-completion"), *help = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&help, &n);

    CHECK(f != NULL);
    if (!f)
        return;
    options_usage(f, &test_commands, CMD_TUI);
    fclose(f);
    for (int t = 0; t < 2; t++)
        for (const Setting *s = tables[t]; s->key; s++) {
            /* Every run setting has its option. */
            if (t == 0 && !option_of(s->key))
                fprintf(stderr, "%s has no option\n", s->key);
            CHECK(t == 1 || option_of(s->key) != NULL);
            if (option_of(s->key))
                check_docs_option(s, option_of(s->key), man, help, compl);
            if (!(s->flags & SETTING_NO_FILE))
                check_docs_key(s, man, conf);
        }
    free(man);
    free(conf);
    free(compl);
    free(help);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        src = argv[1];
    snprintf(dir, sizeof dir, "/tmp/test_settings.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_edges();
    test_prefetch_zero();
    test_docs();
    char path[300];
    snprintf(path, sizeof path, "%s/cfg", dir);
    unlink(path);
    rmdir(dir);
    return check_report();
}
