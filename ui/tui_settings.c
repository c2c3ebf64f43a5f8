/*
 * tui_settings.c: load and save the dashboard's settings file (see
 * tui_settings.h for the format).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cnntop/fileio.h"
#include "options.h"
#include "tui_settings.h"

int settings_path(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

    if (xdg && *xdg)
        snprintf(buf, len, "%s/cnntop/config", xdg);
    else if (home && *home)
        snprintf(buf, len, "%s/.config/cnntop/config", home);
    else
        return -1;
    return 0;
}

void settings_fix(TuiSettings *s)
{
    s->cfg.data_dir = s->data[0] ? s->data : NULL;
}

static int get_long(const char *v, long lo, long hi, long *out)
{
    char *end;

    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno == ERANGE || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* Applies one key=value to s; returns 0, or -1 with err set. */
static int apply_key(TuiSettings *s, const char *k, const char *v, int keep, char *err,
                     size_t errlen)
{
    static const struct { const char *key; int bit; long lo, hi; } ints[] = {
        {"batch", OPTSET_BATCH, 1, CN_MAX_BATCH},     {"workers", OPTSET_WORKERS, 0, CN_MAX_WORKERS},
        {"prefetch", OPTSET_PREFETCH, 0, CN_MAX_PREFETCH}, {"threads", OPTSET_THREADS, 0, CN_MAX_THREADS},
        {"epochs", OPTSET_EPOCHS, 1, 100000},         {"steps", OPTSET_STEPS, 0, LONG_MAX},
        {"limit", OPTSET_LIMIT, 0, LONG_MAX},         {"test_limit", OPTSET_TEST_LIMIT, 0, LONG_MAX},
        {"seed", OPTSET_SEED, 0, LONG_MAX},           {"window", 0, 0, 86400},
        {"sort", 0, 0, 2},
    };
    RunConfig *c = &s->cfg;
    long x;

    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (strcmp(k, ints[i].key))
            continue;
        if (get_long(v, ints[i].lo, ints[i].hi, &x)) {
            snprintf(err, errlen, "%s: '%s' is not a whole number in %ld..%ld", k, v, ints[i].lo,
                     ints[i].hi);
            return -1;
        }
        if (keep & ints[i].bit)
            return 0;
        switch (i) {
        case 0: c->batch = (int)x; break;
        case 1: c->workers = (int)x; break;
        case 2: c->prefetch = (int)x; break;
        case 3: c->threads = (int)x; break;
        case 4: c->epochs = (int)x; break;
        case 5: c->steps = x; break;
        case 6: c->limit = x; break;
        case 7: c->test_limit = x; break;
        case 8: c->seed = (uint64_t)x; break;
        case 9: s->window = (int)x; break;
        default: s->sort = (int)x; break;
        }
        return 0;
    }
    if (!strcmp(k, "lr")) {
        char *end;
        double d = strtod(v, &end);
        if (*v == '\0' || *end != '\0' || !(d > 0 && d <= 10)) {
            snprintf(err, errlen, "lr: '%s' is not a number in (0, 10]", v);
            return -1;
        }
        if (!(keep & OPTSET_LR))
            c->lr = d;
        return 0;
    }
    if (!strcmp(k, "augment")) {
        unsigned a;
        if (options_parse_augment(v, &a, err, errlen))
            return -1;
        if (!(keep & OPTSET_AUGMENT))
            c->augment = a;
        return 0;
    }
    if (!strcmp(k, "blas_kernel")) {
        if (options_parse_blas_kernel(v, &x) != 0) {
            snprintf(err, errlen, "blas_kernel: '%s' is not auto or openblas", v);
            return -1;
        }
        if (!(keep & OPTSET_BLAS))
            s->blas_keep = (int)x;
        return 0;
    }
    if (!strcmp(k, "data")) {
        if (strlen(v) >= sizeof s->data) {
            snprintf(err, errlen, "data: path too long");
            return -1;
        }
        if (!(keep & OPTSET_DATA))
            snprintf(s->data, sizeof s->data, "%s", v);
        return 0;
    }
    snprintf(err, errlen, "unknown key '%s'", k);
    return -1;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

int settings_load(TuiSettings *s, const char *path, int keep_mask, char *err, size_t errlen)
{
    TuiSettings t = *s;
    char line[4200], msg[256];
    int lineno = 0, rc = 0;
    FILE *f = fopen(path, "r");

    if (!f) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        trim(line);
        char *k = line + strspn(line, " \t");
        if (*k == '\0' || *k == '#')
            continue;
        char *eq = strchr(k, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: not key=value", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        trim(k);
        if (apply_key(&t, k, eq + 1 + strspn(eq + 1, " \t"), keep_mask, msg, sizeof msg)) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
            rc = -1;
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0) {
        *s = t;
        settings_fix(s);
    }
    return rc;
}

int settings_write_atomic(const char *path, const char *text, size_t len, char *err,
                          size_t errlen)
{
    /* ~/.config may not exist yet; then the one atomic writer of cnntop. */
    if (fileio_make_parent_dirs(path, 0755, err, errlen) != 0 ||
        fileio_write_atomic(path, text, len, err, errlen) != 0)
        return -1;
    return 0;
}

int settings_save(const TuiSettings *s, const char *path, char *err, size_t errlen)
{
    const RunConfig *c = &s->cfg;
    char aug[64], text[8192];

    options_format_augment(c->augment, aug, sizeof aug);
    int n = snprintf(text, sizeof text,
                     "# cnntop dashboard settings, written on quit (see cnntop(1)).\n"
                     "# key=value; the command line wins over these.\n"
                     "batch=%d\nworkers=%d\nprefetch=%d\nthreads=%d\nepochs=%d\nsteps=%ld\n"
                     "limit=%ld\ntest_limit=%ld\nlr=%.9g\naugment=%s\nseed=%llu\ndata=%s\n"
                     "window=%d\nsort=%d\nblas_kernel=%s\n",
                     c->batch, c->workers, c->prefetch, c->threads, c->epochs, c->steps,
                     c->limit, c->test_limit, c->lr, aug, (unsigned long long)c->seed, s->data,
                     s->window, s->sort, s->blas_keep ? "openblas" : "auto");
    if (n < 0 || (size_t)n >= sizeof text) {
        snprintf(err, errlen, "%s: settings too long", path);
        return -1;
    }
    return settings_write_atomic(path, text, (size_t)n, err, errlen);
}
