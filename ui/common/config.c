/*
 * config.c: load and save the dashboard's settings file (see
 * tui_settings.h for the format).
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

/* --- the keys: one table drives reading, writing and comparing ------- */

typedef enum KeyKind { KEY_INT, KEY_LONG, KEY_SEED, KEY_LR, KEY_AUGMENT, KEY_BLAS, KEY_DATA } KeyKind;

typedef struct SettingKey {
    const char *key;
    int optset;     /* the Options.set_mask bit that keeps it, 0: none */
    KeyKind kind;
    long lo, hi;    /* KEY_INT and KEY_LONG */
    size_t off;     /* offset of the field in TuiSettings */
} SettingKey;

#define CFG(f) offsetof(TuiSettings, cfg.f)
static const SettingKey setting_keys[] = {
    {"batch", OPTSET_BATCH, KEY_INT, 1, CN_MAX_BATCH, CFG(batch)},
    {"workers", OPTSET_WORKERS, KEY_INT, 0, CN_MAX_WORKERS, CFG(workers)},
    {"prefetch", OPTSET_PREFETCH, KEY_INT, 0, CN_MAX_PREFETCH, CFG(prefetch)},
    {"threads", OPTSET_THREADS, KEY_INT, 0, CN_MAX_THREADS, CFG(threads)},
    {"epochs", OPTSET_EPOCHS, KEY_INT, 1, CN_MAX_EPOCHS, CFG(epochs)},
    {"steps", OPTSET_STEPS, KEY_LONG, 0, CN_MAX_STEPS, CFG(steps)},
    {"limit", OPTSET_LIMIT, KEY_LONG, 0, CN_MAX_IMAGES, CFG(limit)},
    {"test_limit", OPTSET_TEST_LIMIT, KEY_LONG, 0, CN_MAX_IMAGES, CFG(test_limit)},
    {"lr", OPTSET_LR, KEY_LR, 0, 0, CFG(lr)},
    {"augment", OPTSET_AUGMENT, KEY_AUGMENT, 0, 0, CFG(augment)},
    {"seed", OPTSET_SEED, KEY_SEED, 0, LONG_MAX, CFG(seed)},
    {"data", OPTSET_DATA, KEY_DATA, 0, 0, offsetof(TuiSettings, data)},
    {"window", 0, KEY_INT, 0, 86400, offsetof(TuiSettings, window)},
    {"sort", 0, KEY_INT, 0, 2, offsetof(TuiSettings, sort)},
    {"blas_kernel", OPTSET_BLAS, KEY_BLAS, 0, 0, offsetof(TuiSettings, blas_keep)},
};
#undef CFG
#define NKEYS (sizeof setting_keys / sizeof setting_keys[0])

static const SettingKey *key_find(const char *k)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(setting_keys[i].key, k))
            return &setting_keys[i];
    return NULL;
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

/* Parses v for key k into *s; returns 0, or -1 with err set (s unchanged). */
static int key_parse(const SettingKey *k, TuiSettings *s, const char *v, char *err, size_t errlen)
{
    char *field = (char *)s + k->off, *end;
    long x;

    switch (k->kind) {
    case KEY_INT: case KEY_LONG: case KEY_SEED:
        if (get_long(v, k->lo, k->hi, &x)) {
            snprintf(err, errlen, "%s: '%.40s' is not a whole number in %ld..%ld", k->key, v, k->lo,
                     k->hi);
            return -1;
        }
        if (k->kind == KEY_INT)
            *(int *)(void *)field = (int)x;
        else if (k->kind == KEY_LONG)
            *(long *)(void *)field = x;
        else
            *(uint64_t *)(void *)field = (uint64_t)x;
        return 0;
    case KEY_LR: {
        double d = strtod(v, &end);
        if (*v == '\0' || *end != '\0' || !(d >= FLT_MIN && d <= 10)) {
            snprintf(err, errlen, "lr: '%.40s' is not a number in [%g, 10]", v, (double)FLT_MIN);
            return -1;
        }
        *(double *)(void *)field = d;
        return 0;
    }
    case KEY_AUGMENT:
        return options_parse_augment(v, (unsigned *)(void *)field, err, errlen);
    case KEY_BLAS:
        if (options_parse_blas_kernel(v, &x) != 0) {
            snprintf(err, errlen, "blas_kernel: '%.40s' is not auto or openblas", v);
            return -1;
        }
        *(int *)(void *)field = (int)x;
        return 0;
    default:
        if (strlen(v) >= sizeof s->data) {
            snprintf(err, errlen, "data: path longer than %zu bytes", sizeof s->data - 1);
            return -1;
        }
        snprintf(s->data, sizeof s->data, "%s", v);
        return 0;
    }
}

/* The value of key k in *s as the file holds it. */
static void key_format(const SettingKey *k, const TuiSettings *s, char *buf, size_t len)
{
    const char *field = (const char *)s + k->off;

    switch (k->kind) {
    case KEY_INT: snprintf(buf, len, "%d", *(const int *)(const void *)field); break;
    case KEY_LONG: snprintf(buf, len, "%ld", *(const long *)(const void *)field); break;
    case KEY_SEED:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)(const void *)field);
        break;
    case KEY_LR: snprintf(buf, len, "%.9g", *(const double *)(const void *)field); break;
    case KEY_AUGMENT: options_format_augment(*(const unsigned *)(const void *)field, buf, len); break;
    case KEY_BLAS: snprintf(buf, len, "%s", *(const int *)(const void *)field ? "openblas" : "auto"); break;
    default: snprintf(buf, len, "%s", s->data); break;
    }
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
 * a good setting (*key, *val point into it), or bad (err says why; *key is
 * the key when the line had one).
 */
static LineKind line_parse(char *line, size_t n, const SettingKey **key, char **val, char *err,
                           size_t errlen)
{
    *key = NULL;
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
    *key = key_find(k);
    if (!*key) {
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
        const SettingKey *k;
        char *v;
        TuiSettings u = t;
        lineno++;
        LineKind lk = line_parse(line, (size_t)n, &k, &v, msg, sizeof msg);
        if (lk == LINE_SETTING && key_parse(k, &u, v, msg, sizeof msg) != 0)
            lk = LINE_BAD;
        if (lk == LINE_BAD && bad++ == 0)
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
        if (lk == LINE_SETTING && !(keep_mask & k->optset))
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

static void text_setting(FILE *out, const SettingKey *k, const TuiSettings *s)
{
    char val[4200];

    key_format(k, s, val, sizeof val);
    fprintf(out, "%s=%s\n", k->key, val);
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
        const SettingKey *k;
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
        unsigned bit = k ? 1u << (k - setting_keys) : 0;
        if (k && (changed & bit)) {
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

    for (size_t i = 0; i < NKEYS; i++) {
        key_format(&setting_keys[i], a, va, sizeof va);
        key_format(&setting_keys[i], b, vb, sizeof vb);
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
    int bad = 0, written = 0, rerr = 0;

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
    for (size_t i = 0; i < NKEYS; i++) {
        if (changed & (1u << i))
            written++;
        if ((changed & ~seen) & (1u << i))
            text_setting(out, &setting_keys[i], now);
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
