/*
 * settings.h: the run settings, one table for every place that needs them.
 *
 * Each row of settings_run[] is one field of RunConfig: its name (the
 * settings file's key; the command-line option is "--" and the key with
 * '_' as '-'), its type and offset, the range the engine accepts, the
 * default, what 0 means where it means something else than zero, whether
 * it applies to a running run, the help line, and for a bit set (augment)
 * the names of its bits.  The engine validates a RunConfig by walking it
 * (settings_check_config, from engine_new); the command line, --help, the
 * dashboard's settings file and its settings editor all parse, format and
 * bound values through it, so that no range, default or name is written
 * twice.  The front ends' own settings (the chart window, the layer order,
 * the OpenBLAS kernel) live in a second table of the same shape in
 * ui/common/config.h.
 *
 * Messages: the parsers write "NAME: PROBLEM" with NAME as the caller
 * gives it ("--batch" on the command line, "batch" in the settings file),
 * e.g. "--batch: 0 is out of range (1..65536)"; the engine's check writes
 * "batch size 0 out of range (1..65536)".
 */
#ifndef CNNTOP_SETTINGS_H
#define CNNTOP_SETTINGS_H

#include <stddef.h>

#include "cnntop/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum SettingType {
    SETTING_INT,    /* int, min..max */
    SETTING_LONG,   /* long, min..max */
    SETTING_U64,    /* uint64_t, the whole type (min and max unused) */
    SETTING_REAL,   /* double, finite, in (min, max] and at least tiny */
    SETTING_FLAGS,  /* unsigned bit set; names[] names the bits, "none" is 0 */
    SETTING_CHOICE, /* int, one of names[]'s values, written by its name */
    SETTING_PATH    /* const char *, NULL: the default ("" in a file) */
} SettingType;

/* Setting.flags */
enum {
    SETTING_LIVE = 1,        /* applies to a running run (engine_set_*) */
    SETTING_OPT_NONZERO = 2, /* min is 0, but the command line refuses 0: there
                              * "--steps 0" would read as none while 0 means
                              * "whole epochs"; leaving the option out gives it */
    SETTING_NO_FILE = 4      /* not a settings-file key (command line only) */
};

typedef struct SettingName {
    const char *name; /* "shift" */
    int value;        /* its bit (FLAGS) or value (CHOICE), e.g. CN_AUG_SHIFT */
} SettingName;

typedef struct Setting {
    const char *key;      /* "test_limit": the file's key, the field's name */
    const char *what;     /* "test limit": how the engine's messages name it */
    const char *arg;      /* the option's argument in --help: "N", "X", "LIST" */
    SettingType type;
    size_t offset;        /* of the field, in RunConfig (settings_run) */
    double min, max;      /* INT, LONG: the range, inclusive; REAL: (min, max] */
    double tiny;          /* REAL: the smallest accepted value */
    const char *why_tiny; /* REAL: why smaller is refused */
    double dflt;          /* the default (FLAGS, CHOICE: the value; PATH: none) */
    const char *zero;     /* what 0 means ("two per worker"), NULL: plain 0 */
    const char *label0;   /* 0 in the dashboard's panel ("auto"), NULL: "0" */
    unsigned flags;       /* SETTING_* */
    const char *help;     /* one line, without range or default */
    const SettingName *names; /* FLAGS, CHOICE: ends with {NULL, 0}; else NULL */
} Setting;

/* The run settings, one row per RunConfig field the user sets, ending
 * with a row whose key is NULL. */
extern const Setting settings_run[];

/* The row of `table` (NULL-key terminated) named key, or NULL. */
const Setting *settings_find(const Setting *table, const char *key);

/* The lowest value the command line (opt = 1) or anything else (0) takes. */
double settings_min(const Setting *s, int opt);

/*
 * Parses `text` into the field at `field` (a pointer to the int, long, ...
 * the row's type names).  opt = 1 applies the command line's minimum
 * (SETTING_OPT_NONZERO).  A PATH stores `text` itself, NULL for "".
 * Returns 0, or -CN_EINVAL with err = "NAME: problem" (the field is then
 * unchanged), e.g. "--lr: 1e999 is out of range (0..10]".
 */
int settings_parse_field(const Setting *s, const char *name, const char *text, int opt,
                         void *field, char *err, size_t errlen);

/* The same into the row's field of the struct at `base`. */
int settings_parse(const Setting *s, const char *name, const char *text, int opt, void *base,
                   char *err, size_t errlen);

/* The value at `field` as a file holds it and the parser reads it back:
 * "64", "0.001", "shift,rotate", "none", "auto", a path ("" for NULL). */
void settings_format_field(const Setting *s, const void *field, char *buf, size_t len);
void settings_format(const Setting *s, const void *base, char *buf, size_t len);

/* The accepted values as messages say them: "1..65536", "(0..10]",
 * "shift, rotate, elastic", "60, 300, 900 or 0" (in parentheses where a
 * message needs them); opt as above. */
void settings_range_text(const Setting *s, int opt, char *buf, size_t len);

/* The default as --help says it: "default 64", "default 0: two per worker",
 * "default: every core this process may use" (0 where opt = 1 and the
 * command line refuses 0, or a real number's 0 that no one may give). */
void settings_default_text(const Setting *s, int opt, char *buf, size_t len);

/*
 * Checks the row's field of the struct at `base` against the row's range.
 * Returns 0, or -CN_EINVAL with err naming it by `what` and the range,
 * e.g. "batch size 0 out of range (1..65536)".
 */
int settings_check(const Setting *s, const void *base, char *err, size_t errlen);

/* Every row of `table` set to its default (a PATH to NULL). */
void settings_set_defaults(const Setting *table, void *base);

/* settings_check() of every row of settings_run: engine_new's validation. */
int settings_check_config(const RunConfig *c, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
