/*
 * config.c: load and save the dashboard's settings file (see config.h for
 * the format), and the table of the front ends' own settings.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cnntop/fileio.h"
#include "common/options.h"
#include "common/config.h"

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

/* --- the keys: the two tables drive reading, writing and comparing ---- */

static const SettingName window_names[] = {
    {"60", 60}, {"300", 300}, {"900", 900}, {"0", 0}, {NULL, 0},
};
static const SettingName blas_names[] = {{"auto", 0}, {"openblas", 1}, {NULL, 0}};

const Setting settings_ui[] = {
    {.key = "window", .what = "chart window", .arg = "SECONDS", .type = SETTING_CHOICE,
     .offset = offsetof(TuiSettings, window), .dflt = 60, .names = window_names,
     .help = "chart time window in seconds, 0 for the whole run (t cycles)"},
    {.key = "sort", .what = "layer order", .arg = "N", .type = SETTING_INT,
     .offset = offsetof(TuiSettings, sort), .min = 0, .max = 2,
     .help = "per-layer table order: 0 step order, 1 time, 2 name (o cycles)"},
    {.key = "blas_kernel", .what = "OpenBLAS kernel", .arg = "WHICH", .type = SETTING_CHOICE,
     .offset = offsetof(TuiSettings, blas_keep), .names = blas_names,
     .help = "auto: OpenBLAS runs the kernel matching the CPU; openblas: its own choice"},
    {.key = "ranks", .what = "ranks", .arg = "N", .type = SETTING_INT,
     .offset = offsetof(TuiSettings, ranks), .min = 1, .max = CN_MAX_RANKS, .dflt = 1,
     .help = "the dashboard's next run: 1 trains in the dashboard, N the job of run --ranks N"},
    {.key = NULL},
};

/* Key i of the file, in the order keys are appended: settings_run's
 * rows, then settings_ui's; NULL past the end.  Rows that are no file key
 * stay in the numbering (their bit is never set). */
static const Setting *key_at(size_t i, int *in_cfg)
{
    size_t n = 0;

    while (settings_run[n].key)
        n++;
    *in_cfg = i < n;
    return i < n ? &settings_run[i] : settings_ui[i - n].key ? &settings_ui[i - n] : NULL;
}

/* The index of a file key (rows marked SETTING_NO_FILE are none), or -1. */
static int key_index(const char *key)
{
    const Setting *k;
    int in_cfg;

    for (size_t i = 0; (k = key_at(i, &in_cfg)) != NULL; i++)
        if (!strcmp(k->key, key) && !(k->flags & SETTING_NO_FILE))
            return (int)i;
    return -1;
}

/* Parses v for key i into *s; returns 0, or -1 with err set (s unchanged). */
static int key_parse(int i, TuiSettings *s, const char *v, char *err, size_t errlen)
{
    int in_cfg;
    const Setting *k = key_at((size_t)i, &in_cfg);
    TuiSettings u = *s;

    if (k->type == SETTING_PATH) {
        if (strlen(v) >= sizeof s->data) {
            snprintf(err, errlen, "%s: path longer than %zu bytes", k->key, sizeof s->data - 1);
            return -1;
        }
        snprintf(s->data, sizeof s->data, "%s", v);
    } else if (settings_parse(k, k->key, v, 0, in_cfg ? (void *)&u.cfg : (void *)&u, err,
                              errlen) != 0)
        return -1;
    else
        *s = u;
    settings_fix(s);
    return 0;
}

int settings_set_text(TuiSettings *s, const char *key, const char *text, char *err,
                      size_t errlen)
{
    int i = key_index(key);

    if (i < 0) {
        snprintf(err, errlen, "unknown key '%.40s'", key);
        return -1;
    }
    return key_parse(i, s, text, err, errlen);
}

/* The value of key i in *s as the file holds it. */
static void key_format(int i, const TuiSettings *s, char *buf, size_t len)
{
    int in_cfg;
    const Setting *k = key_at((size_t)i, &in_cfg);

    if (k->type == SETTING_PATH)
        snprintf(buf, len, "%s", s->data);
    else
        settings_format(k, in_cfg ? (const void *)&s->cfg : (const void *)s, buf, len);
}

/* The Options.set_mask bit of key i: the command line's value wins. */
static int key_optset(int i)
{
    int in_cfg;
    return options_setting_bit(key_at((size_t)i, &in_cfg)->key);
}

/* --- lines ------------------------------------------------------------ */

static char *trim(char *s)
{
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

typedef enum LineKind { LINE_BLANK, LINE_SETTING, LINE_BAD } LineKind;

/*
 * Classifies one line of n bytes (it is edited in place): blank or comment,
 * a good setting (*key its index, *val points into it), or bad (err says
 * why; *key is the key's index when the line had one, else -1).
 */
static LineKind line_parse(char *line, size_t n, int *key, char **val, char *err,
                           size_t errlen)
{
    *key = -1;
    if (strlen(line) != n) {
        snprintf(err, errlen, "a NUL byte: not a text line");
        return LINE_BAD;
    }
    char *k = trim(line);
    if (*k == '\0' || *k == '#')
        return LINE_BLANK;
    char *eq = strchr(k, '=');
    if (!eq) {
        snprintf(err, errlen, "'%.40s' is not key=value", k);
        return LINE_BAD;
    }
    *eq = '\0';
    k = trim(k);
    *val = trim(eq + 1);
    *key = key_index(k);
    if (*key < 0) {
        snprintf(err, errlen, "unknown key '%.40s'", k);
        return LINE_BAD;
    }
    return LINE_SETTING;
}

int settings_load(TuiSettings *s, const char *path, int keep_mask, char *err, size_t errlen)
{
    TuiSettings t = *s;
    char *line = NULL, msg[256];
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, bad = 0;
    FILE *f = fopen(path, "r");

    if (!f) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while ((n = getline(&line, &cap, f)) >= 0) {
        int k;
        char *v;
        TuiSettings u = t;
        lineno++;
        LineKind lk = line_parse(line, (size_t)n, &k, &v, msg, sizeof msg);
        if (lk == LINE_SETTING && key_parse(k, &u, v, msg, sizeof msg) != 0)
            lk = LINE_BAD;
        if (lk == LINE_BAD && bad++ == 0)
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
        if (lk == LINE_SETTING && !(keep_mask & key_optset(k)))
            t = u;
    }
    int rerr = ferror(f) ? errno : 0;
    free(line);
    fclose(f);
    if (rerr) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(rerr));
        return -1;
    }
    *s = t;
    settings_fix(s);
    if (bad > 1) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (and %d more bad line%s)", bad - 1,
                 bad == 2 ? "" : "s");
    }
    return bad ? 2 : 0;
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

static void text_setting(FILE *out, int i, const TuiSettings *s)
{
    char val[4200];
    int in_cfg;

    key_format(i, s, val, sizeof val);
    fprintf(out, "%s=%s\n", key_at((size_t)i, &in_cfg)->key, val);
}

/*
 * Copies the file at f into *out line by line, each line of a key whose bit
 * is in `changed` replaced by its value in *now; sets the bits of the keys
 * it saw in *seen.  Returns the number of bad lines, -1 out of memory.
 */
static int rewrite_lines(FILE *f, const TuiSettings *now, unsigned changed, FILE *out,
                         unsigned *seen)
{
    char *line = NULL, *copy = NULL, msg[128];
    size_t cap = 0;
    ssize_t n;
    int bad = 0;

    while ((n = getline(&line, &cap, f)) >= 0) {
        int k;
        char *v;
        char *c = realloc(copy, (size_t)n + 1);
        if (!c) {
            bad = -1;
            break;
        }
        copy = c;
        memcpy(copy, line, (size_t)n + 1);
        LineKind lk = line_parse(copy, (size_t)n, &k, &v, msg, sizeof msg);
        if (lk == LINE_BAD)
            bad++;
        unsigned bit = k >= 0 ? 1u << k : 0;
        if (changed & bit) {
            /* A bad line of a changed key is replaced too: the user set it. */
            text_setting(out, k, now);
            *seen |= bit;
        } else {
            fwrite(line, 1, (size_t)n, out);
            if (n > 0 && line[n - 1] != '\n')
                fputc('\n', out);
        }
    }
    free(line);
    free(copy);
    return bad;
}

/* The bit of every key whose value differs between a and b. */
static unsigned changed_keys(const TuiSettings *a, const TuiSettings *b)
{
    unsigned m = 0;
    char va[4200], vb[4200];

    int in_cfg;

    for (int i = 0; key_at((size_t)i, &in_cfg); i++) {
        if (key_at((size_t)i, &in_cfg)->flags & SETTING_NO_FILE)
            continue;
        key_format(i, a, va, sizeof va);
        key_format(i, b, vb, sizeof vb);
        if (strcmp(va, vb))
            m |= 1u << i;
    }
    return m;
}

/* Copies the file that had bad lines to path.bad, so nothing of it is lost. */
static int keep_bad_copy(const char *path, char *err, size_t errlen)
{
    char bad[4200];
    unsigned char *buf = NULL;
    size_t n = 0;

    snprintf(bad, sizeof bad, "%s.bad", path);
    if (fileio_read_all(path, (size_t)64 << 20, &buf, &n, err, errlen) != 0)
        return -1;
    int rc = fileio_write_atomic(bad, buf, n, err, errlen);
    free(buf);
    return rc;
}

int settings_save_changes(const TuiSettings *launch, const TuiSettings *now, const char *path,
                          char *err, size_t errlen)
{
    unsigned changed = changed_keys(launch, now), seen = 0;
    char *text = NULL;
    size_t len = 0;
    int bad = 0, written = 0, rerr = 0, in_cfg;

    if (!changed)
        return 0;
    FILE *f = fopen(path, "r"), *out = open_memstream(&text, &len);
    if ((!f && errno != ENOENT) || !out) {
        snprintf(err, errlen, "%s: %s (%s), so it is left as it is", path,
                 out ? "cannot read it" : "out of memory", strerror(errno));
        if (f)
            fclose(f);
        if (out)
            fclose(out);
        free(text);
        return -1;
    }
    if (f) {
        bad = rewrite_lines(f, now, changed, out, &seen);
        rerr = ferror(f) ? errno : bad < 0 ? ENOMEM : 0;
        fclose(f);
    } else {
        fputs("# cnntop dashboard settings: what was changed in the dashboard (see cnntop(1)).\n",
              out);
    }
    for (int i = 0; key_at((size_t)i, &in_cfg); i++) {
        if (changed & (1u << i))
            written++;
        if ((changed & ~seen) & (1u << i))
            text_setting(out, i, now);
    }
    int rc = -1;
    if (fclose(out) != 0 || rerr)
        snprintf(err, errlen, "%s: cannot read it (%s), so it is left as it is", path,
                 strerror(rerr ? rerr : ENOMEM));
    else if ((!bad || keep_bad_copy(path, err, errlen) == 0) &&
             settings_write_atomic(path, text, len, err, errlen) == 0)
        rc = written;
    free(text);
    return rc;
}
