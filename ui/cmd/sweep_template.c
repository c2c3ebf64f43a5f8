/*
 * sweep_template.c: `sweep --cmd`'s template (sweep_template.h): its
 * placeholders {batch}, {workers}, {threads} and {ranks} (the number of
 * processes, as --ranks is for cnntop's own sweep), the checks made before
 * the first run (each placeholder has its list and each list its
 * placeholder, no brace pair is a misspelt placeholder, every
 * configuration's command line fits), the grid's order and the
 * substitution.  Pure: text in, text out.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cmd/sweep.h"
#include "cmd/sweep_template.h"


/* The placeholders, each with the list that fills it and the bit of
 * Options.set_mask its option sets (0: the list itself says it was given). */
static const struct {
    const char *name;   /* in the template, between braces */
    const char *option;
    unsigned set;
} holders[] = {{"batch", "--batch", OPTSET_BATCH}, {"workers", "--workers", OPTSET_WORKERS},
               {"threads", "--threads", OPTSET_THREADS}, {"ranks", "--ranks", 0}};
_Static_assert(sizeof holders / sizeof *holders == SWEEP_HOLDERS, "one row per placeholder");

/* Other launchers' words for the number of processes, taken for {ranks}
 * when braced: torch.multiprocessing.spawn's nprocs, torchrun's
 * nproc_per_node, the environment's WORLD_SIZE. */
static const char *const ranks_aliases[] = {"nprocs", "nproc", "nproc_per_node", "world_size"};

/* The list for holders[k]: its values, count returned (0: not given). */
static int holder_list(const Options *o, int k, const int **v)
{
    const int *lists[] = {o->batch_list, o->workers_list, o->threads_list, o->ranks_list};
    const int counts[] = {o->n_batch, o->n_workers, o->n_threads, o->n_ranks};

    *v = lists[k];
    return counts[k];
}

int sweep_holder_value(const Options *o, const int idx[SWEEP_HOLDERS], int k)
{
    const int *v;

    return holder_list(o, k, &v) > 0 ? v[idx[k]] : 0;
}

/* The placeholder at s ("{name}"): its index, or -1 (not one of ours,
 * *len 0) with *len the length of "{...}" when it is a brace pair. */
static int holder_at(const char *s, size_t *len)
{
    const char *end = strchr(s + 1, '}');

    *len = 0;
    if (!end)
        return -1;
    for (int k = 0; k < SWEEP_HOLDERS; k++)
        if ((size_t)(end - s - 1) == strlen(holders[k].name) &&
            !strncmp(s + 1, holders[k].name, (size_t)(end - s - 1))) {
            *len = (size_t)(end - s + 1);
            return k;
        }
    return -1;
}

int sweep_template_uses(const char *tmpl, int k)
{
    size_t n;

    for (const char *s = strchr(tmpl, '{'); s; s = strchr(s + 1, '{'))
        if (holder_at(s, &n) == k)
            return 1;
    return 0;
}

/* The edit distance between a[0..la) and b, case aside; 99 for words
 * too long to be a placeholder. */
static int edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    int d[16][16];

    if (la > 15 || lb > 15)
        return 99;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

/* The brace pair at s, which is no placeholder: the placeholder it
 * nearly spells ({Batch}, {thread}, {bacth}) or names in another
 * launcher's word ({nprocs}), or -1.  Only a word of
 * letters counts, and not after '$' (the shell's ${name}), so that awk's
 * {print} or find's {} stay as they are. */
static int holder_misspelt(const char *tmpl, const char *s)
{
    const char *end = strchr(s + 1, '}');
    size_t len = end ? (size_t)(end - s - 1) : 0;

    if (len == 0 || (s > tmpl && s[-1] == '$'))
        return -1;
    for (size_t i = 1; i <= len; i++)
        if (!isalpha((unsigned char)s[i]) && s[i] != '_')
            return -1;
    for (int k = 0; k < SWEEP_HOLDERS; k++)
        if (edit_distance(s + 1, len, holders[k].name) <= 2)
            return k;
    for (size_t a = 0; a < sizeof ranks_aliases / sizeof *ranks_aliases; a++)
        if (edit_distance(s + 1, len, ranks_aliases[a]) <= 1)
            return SWEEP_RANKS;
    return -1;
}

/* The template names a command and no misspelt placeholder.  0, or -1
 * with a one-line err. */
static int template_words_check(const char *tmpl, char *err, size_t len)
{
    size_t n;

    if (!tmpl[strspn(tmpl, " \t\n")]) {
        snprintf(err, len, "--cmd: the template is blank: no command to run");
        return -1;
    }
    for (const char *s = strchr(tmpl, '{'); s; s = strchr(s + 1, '{')) {
        int k = holder_at(s, &n) < 0 ? holder_misspelt(tmpl, s) : -1;
        if (k >= 0) {
            snprintf(err, len, "--cmd: %.*s is no placeholder: did you mean {%s}? "
                     "(the placeholders: {batch}, {workers}, {threads}, {ranks})",
                     (int)(strchr(s, '}') - s + 1), s, holders[k].name);
            return -1;
        }
    }
    return 0;
}

/* Each placeholder of the template has its list and each list its
 * placeholder.  0, or -1 with a one-line err. */
static int template_check(const Options *o, char *err, size_t len)
{
    int used[SWEEP_HOLDERS] = {0};
    const int *v;

    if (template_words_check(o->sweep_cmd, err, len) != 0)
        return -1;
    for (int k = 0; k < SWEEP_HOLDERS; k++)
        used[k] = sweep_template_uses(o->sweep_cmd, k);
    for (int k = 0; k < SWEEP_HOLDERS; k++) {
        int given = holders[k].set ? (o->set_mask & holders[k].set) != 0
                                   : holder_list(o, k, &v) > 0;
        if (used[k] && !given) {
            snprintf(err, len, "--cmd: the template has {%s} but no %s LIST is given",
                     holders[k].name, holders[k].option);
            return -1;
        }
        if (!used[k] && given && holder_list(o, k, &v) > 0) {
            snprintf(err, len, "%s is given but the --cmd template has no {%s}",
                     holders[k].option, holders[k].name);
            return -1;
        }
    }
    return 0;
}

void sweep_grid_at(const Options *o, int i, int idx[SWEEP_HOLDERS])
{
    const int *v;

    for (int k = SWEEP_HOLDERS - 1; k >= 0; k--) {
        int n = holder_list(o, k, &v);
        n = n ? n : 1;
        idx[k] = i % n;
        i /= n;
    }
}

int sweep_substitute(const Options *o, const int idx[SWEEP_HOLDERS], char *out, size_t len,
                      char *label, size_t llen)
{
    size_t w = 0, lw = 0, n = 0;
    const int *v;

    snprintf(label, llen, "the command");
    for (int k = 0; k < SWEEP_HOLDERS; k++)
        if (holder_list(o, k, &v) > 0 && lw < llen)
            lw += (size_t)snprintf(label + lw, llen - lw, "%s%s %d", lw ? ", " : "",
                                   holders[k].name, v[idx[k]]);
    for (const char *s = o->sweep_cmd; *s;) {
        int k = *s == '{' ? holder_at(s, &n) : -1;
        int m = k >= 0 ? snprintf(out + w, len - w, "%d", (holder_list(o, k, &v), v[idx[k]]))
                       : snprintf(out + w, len - w, "%c", *s);
        if (m < 0 || (size_t)m >= len - w)
            return -1;
        w += (size_t)m;
        s += k >= 0 ? n : 1;
    }
    return 0;
}

int sweep_grid_size(const Options *o)
{
    const int *v;
    int n = 1;

    for (int k = 0; k < SWEEP_HOLDERS; k++)
        n *= holder_list(o, k, &v) ? holder_list(o, k, &v) : 1;
    return n;
}

/* Every configuration's command line fits.  0, or -1 with a one-line err
 * naming the first that does not. */
static int configs_check(const Options *o, int n, char *err, size_t len)
{
    char cmd[SWEEP_CMD_MAX], label[96];
    int idx[SWEEP_HOLDERS];

    for (int i = 0; i < n; i++) {
        sweep_grid_at(o, i, idx);
        if (sweep_substitute(o, idx, cmd, sizeof cmd, label, sizeof label) != 0) {
            snprintf(err, len, "--cmd: configuration %d of %d (%s): the command line is longer "
                     "than %d bytes", i + 1, n, label, SWEEP_CMD_MAX - 1);
            return -1;
        }
    }
    return 0;
}

int sweep_cmd_check(const Options *o, char *err, size_t len)
{
    return template_check(o, err, len) != 0 || configs_check(o, sweep_grid_size(o), err, len) != 0
               ? -1
               : 0;
}
