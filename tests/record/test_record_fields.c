/*
 * test_record_fields.c: the record's field table (src/record/fields.c)
 * against what uses it.
 *
 * - A record with every member of the table filled (none left at its
 *   "unknown" value, each array holding every member somewhere) is written
 *   as JSON, read back, compared member by member, and written again: the
 *   two texts are the same bytes.
 * - Files of each earlier revision of cnntop.run/1 (the members of later
 *   revisions taken out) still read, with those members unknown and the
 *   rest unchanged.
 * - A file lacking any one member the table says every file has is
 *   refused, with a message naming the member by its path.
 * - The man page's list of the members of a run export ("JSON: one run")
 *   and the table agree: every member is described in its parent's
 *   paragraph, and every member the man page names exists.
 * With --varies it prints the paths of the members whose value differs
 * between two runs of one configuration, for test_tui_export.sh.
 */
#include <ctype.h>

#include "json_emit.h"
#include "record_sample.h"

#ifndef CNNTOP_MAN_IN
#error "CNNTOP_MAN_IN (the path of man/cnntop.1.in) is set by tests/CMakeLists.txt"
#endif

/* The members of exec's summary (RECORD_REV_EXEC_SUMMARY), set. */
static void fill_exec_summary(RunRecord *r)
{
    RecordExec *x = &r->exec;

    snprintf(x->hook_why, sizeof x->hook_why, "line 3: hello: a second hello");
    snprintf(x->py_error, sizeof x->py_error, "AttributeError at torch/x/api.py:to_map");
    x->images = 640;
    x->window = 0.5;
    x->wait = 0.125;
    x->step_s = 0.0625;
    x->first_wait = 0.75;
    x->cpu = 3.25;
    x->minflt = 1234;
    x->majflt = 5;
    x->dropped = 1;
    snprintf(x->dropped_why, sizeof x->dropped_why, "PROC_MAX_THREADS");
    CHECK_INT(record_set_exec_progress(r, "loss ([0-9.]+)"), ==, 0);
    x->progress_matches = 3;
    x->progress_last = 0.25;
    x->progress_mean = 0.5;
    x->progress_min = 0.125;
    x->progress_max = 1.5;
    for (int i = 0; i < 2; i++) {
        RecordExecRole ro = {.role = i + 1, .procs = 2 + i, .wall = 1.5,
                             .sched = {.available = 1, .have_wait = 1, .threads = 3,
                                       .wait_share = 0.25, .cs_per_s = 12.5, .vol_cs = 7,
                                       .invol_cs = 9, .oversubscribed = 1}};
        snprintf(ro.sched.reason, sizeof ro.sched.reason, "no schedstat");
        CHECK_INT(record_add_exec_role(r, &ro), ==, 0);
        RecordProc p = {.pid = 100 + i, .ppid = 99, .role = i + 1, .threads = 4, .cpu = 1.25,
                        .cpu_util = 0.5, .wall = 2.5, .minflt = 77, .majflt = 1,
                        .hwm_kib = 2048};
        snprintf(p.comm, sizeof p.comm, "python3");
        CHECK_INT(record_add_exec_proc(r, &p), ==, 0);
        RecordExecRank k = {.rank = 1 - i, .world = 2, .pid = 200 + i, .threads = 1,
                            .loader_workers = 1 + i, .batches = 30, .images = 448, .window = 0.25,
                            .images_per_s = 1792, .data_wait_share = 0.125, .coll = 0.0625};
        CHECK_INT(record_add_exec_rank(r, &k), ==, 0);
    }
}

/* What build() leaves unknown or zero, set, so that every member holds a
 * value that reading back could get wrong. */
static void fill_rest(RunRecord *r)
{
    r->config.steps = 300;
    r->config.threads = 8;
    snprintf(r->gemm_path, sizeof r->gemm_path, "native AVX-512");
    r->peak_gflops = 350.25;
    snprintf(r->machine.blas_warning, sizeof r->machine.blas_warning, "OpenBLAS runs SSE3");
    snprintf(r->ipc_na, sizeof r->ipc_na, "cycles not supported: no PMU");
    r->miss_rate = 0.03125;
    r->train.stopped = 1;
    r->interrupted = 1;
    r->exit_code = 130;
    r->target_accuracy = 0.8;
    r->time_to_target = 8.5;
    CHECK_INT(record_set_error(r, "diverged: the loss is NaN at step 3"), ==, 0);
    r->layers[0].ipc = 1.25;
    r->layers[0].miss_rate = 0.0625;
    r->layers[0].bytes = 2.5e6;
    r->segments[1].t0 = 0.75;
    r->repeats[1].exit_code = 3;
    r->sketch_gflops = 123.5;
    r->triad_gbps = 10.75;
    r->counters[0].kind = CTR_KIND_INSTRUCTIONS;
    r->counters[1].ctr_status = CTR_NO_ACCESS;
    RecordRole role = {.role = CN_ROLE_LOAD, .wall = 1.75,
                       .sched = {.available = 1, .have_wait = 1, .threads = 2,
                                 .wait_share = 0.625, .cs_per_s = 158.5, .vol_cs = 195,
                                 .invol_cs = 81, .oversubscribed = 1}};
    snprintf(role.sched.reason, sizeof role.sched.reason, "no schedstat");
    CHECK_INT(record_add_role(r, &role), ==, 0);
    /* An exec run's members (a table test: both kinds in one record). */
    char *argv[] = {"python3", "train.py", "--batch", "64", NULL};
    CHECK_INT(record_set_exec_command(r, argv), ==, 0);
    r->exec.status = 1;
    r->exec.signal = 9;
    r->exec.wall = 2.5;
    r->exec.images_per_s = 1250.5;
    r->exec.data_wait_share = 0.375;
    r->exec.batches = 40;
    r->exec.loader_workers = 2;
    snprintf(r->exec.torch, sizeof r->exec.torch, "1.13.1");
    r->exec.worker_procs = 2;
    r->exec.busy_threads = 3;
    r->exec.runs = 4;
    r->exec.hook_rejected = 2;
    /* exec's layer window (RECORD_REV_MODEL). */
    r->have_model = 1;
    r->model = (RecordModel){.first = 5, .steps = 20, .step_in = 0.03125, .step_out = 0.03,
                             .steps_out = 35};
    snprintf(r->layers[0].kind, sizeof r->layers[0].kind, "Conv2d");
    fill_exec_summary(r);
    for (int i = 0; i < 2; i++) {
        RecordCounter c = {.role = (ThreadRole)(i + 1), .value = i ? NAN : 1e6, .scaled = 0.5,
                           .status = i ? RECORD_CTR_NOT_COUNTED : RECORD_CTR_OK};
        snprintf(c.name, sizeof c.name, "task-clock");
        snprintf(c.unit, sizeof c.unit, "ns");
        snprintf(c.reason, sizeof c.reason, "multiplexed");
        c.ctr_status = i ? CTR_NOT_COUNTED : CTR_NO_ACCESS;
        c.kind = CTR_KIND_TASK_CLOCK;
        CHECK_INT(record_add_exec_counter(r, &c), ==, 0);
    }
    r->config.bn_local = 1;
    r->train.split.comm = 0.125;
    r->have_dist = 1;
    r->train.dist = (DistFigures){.ranks = 2, .steps = 300, .ar_wait = 0.25, .ar_span = 1.5,
                                  .ar_bytes = 1689896, .ar_probe = 0.00125,
                                  .sum_wait = 0.0625, .local_ranks = 2, .node_cores = 4,
                                  .ar_algorithm = "ring"};
    for (int i = 0; i < 2; i++) {
        DistRank d = {.images_per_s = 500.5 + i, .step_time = 0.125, .data_wait = 0.25,
                      .compute = 30.5, .comm = 1.75, .run_queue_wait = 0.125};
        CHECK_INT(record_add_dist_rank(r, &d), ==, 0);
    }
    for (int i = 0; i < 2; i++) {
        RecordEval ev = {.step = 100 * (i + 1), .epoch = i, .epoch_end = i, .wall = 4.5 * (i + 1),
                         .accuracy = 0.75 + 0.0625 * i, .loss = 0.5 - 0.125 * i};
        CHECK_INT(record_add_eval(r, &ev), ==, 0);
    }
}

/* 1 when the member holds something other than zero or unknown (an array:
 * when each member of its elements does in one element at least). */
static int filled(const Field *f, const void *base, char *missing, size_t len);

static int filled_members(const Field *fields, const void *base, char *missing, size_t len)
{
    for (const Field *f = fields; f->key; f++)
        if (!filled(f, base, missing, len)) {
            if (!*missing && snprintf(missing, len, "%s", f->key) >= (int)len)
                missing[len - 1] = '\0';
            return 0;
        }
    return 1;
}

static int filled(const Field *f, const void *base, char *missing, size_t len)
{
    const void *p = field_cat(f, base);
    size_t n;

    switch (f->type) {
    case FT_UINT64: return *(const uint64_t *)p != 0;
    case FT_BOOL: case FT_NAME: case FT_FLAGS: return *(const int *)p != 0;
    case FT_INT: return field_int(f, base) != 0;
    case FT_COUNT: return field_int(f, base) > 0;
    case FT_NUM: return field_num(f, base) != 0 && !field_unknown(f, base);
    case FT_OBJECT: return filled_members(f->sub, base, missing, len);
    case FT_MAYBE:
        return *(const int *)((const char *)base + f->n_off) &&
               filled_members(f->sub, base, missing, len);
    case FT_ARRAY:
        n = *(const size_t *)((const char *)base + f->n_off);
        for (const Field *s = f->sub; s->key; s++) {
            size_t i = 0;
            while (i < n && !filled(s, *(char *const *)p + i * f->size, missing, len))
                i++;
            if (i == n) {
                if (snprintf(missing, len, "%s[].%s", f->key, s->key) >= (int)len)
                    missing[len - 1] = '\0';
                return 0;
            }
        }
        return 1;
    case FT_DERIVED: case FT_NUM_LIST: case FT_INT_LIST: return 1;
    default: return !field_unknown(f, base);
    }
}

/* Writes the tree to name in the directory; returns the path. */
static const char *write_tree(const JsonValue *root, const char *name)
{
    JsonWriter w;
    char *text;
    size_t len;
    const char *path = in_dir(name);

    json_writer_init(&w, 1);
    emit_tree(&w, root);
    CHECK_INT(json_writer_finish(&w, &text, &len), ==, 0);
    spit(path, text ? text : "");
    free(text);
    return path;
}

static JsonValue *member_of(JsonValue *obj, const char *key)
{
    for (size_t i = 0; obj && obj->type == JSON_OBJECT && i < obj->len; i++)
        if (!strcmp(obj->members[i].key, key))
            return &obj->members[i].value;
    return NULL;
}

/* Hides a member from the reader: "ipc" becomes "xpc", which it ignores. */
static void hide(JsonValue *obj, const char *key)
{
    JsonValue *v = member_of(obj, key);
    JsonMember *m = v ? (JsonMember *)((char *)v - offsetof(JsonMember, value)) : NULL;

    if (m)
        m->key[0] = m->key[0] == 'x' ? 'y' : 'x';
}

/* Hides the members of revisions after rev, in obj and below. */
static void hide_after(JsonValue *obj, const Field *fields, int rev)
{
    for (const Field *f = fields; f->key; f++) {
        JsonValue *v = member_of(obj, f->key);
        if (f->since > rev)
            hide(obj, f->key);
        else if (v && v->type == JSON_OBJECT && f->sub)
            hide_after(v, f->sub, rev);
        else if (v && v->type == JSON_ARRAY && f->sub)
            for (size_t i = 0; i < v->len; i++)
                hide_after(&v->items[i], f->sub, rev);
    }
}

static void test_round_trip(const RunRecord *r)
{
    char *one = NULL, *two = NULL, err[512];
    size_t n1 = 0, n2 = 0;
    RunRecord back;

    CHECK_INT(record_format(r, EXPORT_JSON, &one, &n1), ==, 0);
    spit(in_dir("full.json"), one ? one : "");
    int rc = record_load_json(in_dir("full.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    compare(r, &back);
    CHECK_INT(record_format(&back, EXPORT_JSON, &two, &n2), ==, 0);
    CHECK_INT(n2, ==, n1);
    CHECK(one && two && n1 == n2 && memcmp(one, two, n1) == 0);
    record_done(&back);
    free(one);
    free(two);
}

/* A file of each earlier revision reads, its later members unknown. */
static void test_revisions(const RunRecord *r)
{
    char *text = NULL, err[512];
    size_t len = 0;

    CHECK_INT(record_format(r, EXPORT_JSON, &text, &len), ==, 0);
    for (int rev = RECORD_REV_FIRST; rev < RECORD_REVS - 1 && text; rev++) {
        JsonValue *root = NULL;
        RunRecord back;
        CHECK_INT(json_parse(text, len, &root, err, sizeof err), ==, 0);
        hide_after(root, record_run_fields, rev);
        int rc = record_load_json(write_tree(root, "rev.json"), &back, err, sizeof err);
        CHECK_INT(rc, ==, 0);
        if (rc != 0)
            fprintf(stderr, "revision %d: %s\n", rev, err);
        compare_fields(record_run_fields, r, &back, "", rev);
        record_done(&back);
        json_free(root);
    }
    free(text);
}

/* Hides each member every file has, in turn (the first element of an
 * array standing for all), and expects "PATH: missing". */
static void refuse_missing(const char *text, size_t len, const Field *fields, const char *where,
                           const char *const *route, int depth)
{
    char err[512], path[128], want[160];

    for (const Field *f = fields; f->key; f++) {
        if (f->since != RECORD_REV_FIRST || f->type == FT_DERIVED)
            continue;
        CHECK(snprintf(path, sizeof path, "%s%s%s%s", where, *where ? "." : "", f->key,
                       f->type == FT_ARRAY ? "[0]" : "") < (int)sizeof path);
        const char *next[8];
        for (int i = 0; i < depth; i++)
            next[i] = route[i];
        next[depth] = f->key;
        if (f->sub && depth < 7)
            refuse_missing(text, len, f->sub, path, next, depth + 1);
        JsonValue *root = NULL, *obj;
        RunRecord back;
        CHECK_INT(json_parse(text, len, &root, err, sizeof err), ==, 0);
        obj = root;
        for (int i = 0; i < depth && obj; i++) {
            obj = member_of(obj, route[i]);
            if (obj && obj->type == JSON_ARRAY)
                obj = obj->len ? &obj->items[0] : NULL;
        }
        hide(obj, f->key);
        CHECK_INT(record_load_json(write_tree(root, "missing.json"), &back, err, sizeof err), ==,
                  -CN_EFORMAT);
        CHECK(snprintf(want, sizeof want, "missing.json: %s%s%s: missing", where,
                       *where ? "." : "", f->key) < (int)sizeof want);
        CHECK_STR_HAS(err, want);
        record_done(&back);
        json_free(root);
    }
}

static void test_missing(const RunRecord *r)
{
    char *text = NULL;
    size_t len = 0;

    CHECK_INT(record_format(r, EXPORT_JSON, &text, &len), ==, 0);
    if (text)
        refuse_missing(text, len, record_run_fields, "", NULL, 0);
    free(text);
}

/* ---- the man page ---- */

#define MAN_WORDS 512

/* One .TP entry of "JSON: one run": the members in its tag line and the
 * member names set in bold in its paragraph. */
typedef struct ManEntry {
    char head[4][32];
    int n_head;
    char (*words)[32];
    int n_words;
} ManEntry;

/* The arguments of a macro line, quotes removed; returns how many. */
static int man_args(const char *line, char args[][64], int max)
{
    int n = 0;

    while (*line && n < max) {
        size_t k = 0;
        while (*line == ' ')
            line++;
        if (!*line)
            break;
        int quoted = *line == '"';
        line += quoted;
        while (*line && (quoted ? *line != '"' : *line != ' ') && k < 63)
            args[n][k++] = *line++;
        line += quoted && *line == '"';
        args[n++][k] = '\0';
    }
    return n;
}

/* A member's name: lower case, digits, '_'. */
static int is_name(const char *s)
{
    if (!islower((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* The bold member names of a .B/.BR/.RB line into out; returns how many.
 * A .B of several words is a phrase (a command), and a bold name followed
 * by "(1)" names a manual page; neither is a member. */
static int man_bold(const char *line, char out[][32], int max)
{
    char args[16][64];
    int n = 0, na, first;

    if (!strncmp(line, ".B ", 3)) {
        na = man_args(line + 3, args, 16);
        first = 0;
        if (na != 1)
            return 0;
    } else if (!strncmp(line, ".BR ", 4) || !strncmp(line, ".RB ", 4)) {
        na = man_args(line + 4, args, 16);
        first = line[1] == 'B' ? 0 : 1;
    } else {
        return 0;
    }
    for (int i = first; i < na && n < max; i += 2)
        if (is_name(args[i]) && !(i + 1 < na && args[i + 1][0] == '(' &&
                                  isdigit((unsigned char)args[i + 1][1])))
            snprintf(out[n++], 32, "%s", args[i]);
    return n;
}

#define MAN_ENTRIES 64

static ManEntry entries[MAN_ENTRIES];
static char entry_words[MAN_ENTRIES][MAN_WORDS][32];

/* The .TP entries of the section "JSON: one run" of the man page. */
static int man_entries(char *text)
{
    char *line = strstr(text, ".SS \"JSON: one run");
    int n = -1, head = 0;

    for (line = line ? strchr(line, '\n') : NULL; line; line = strchr(line, '\n')) {
        *line++ = '\0';
        if (!strncmp(line, ".SS", 3))
            break;
        if (!strncmp(line, ".TP", 3) && n + 1 < MAN_ENTRIES) {
            n++;
            entries[n].words = entry_words[n];
            head = 1;
            continue;
        }
        if (n < 0)
            continue;
        if (!strncmp(line, ".PP", 3))
            break;
        char *nl = strchr(line, '\n'), keep = nl ? *nl : '\0';
        if (nl)
            *nl = '\0';
        ManEntry *e = &entries[n];
        if (head)
            e->n_head = man_bold(line, e->head, 4);
        else
            e->n_words += man_bold(line, e->words + e->n_words, MAN_WORDS - e->n_words);
        head = 0;
        if (nl)
            *nl = keep;
    }
    return n + 1;
}

/* The member of the table called name (at the top, or below when deep). */
static const Field *find(const Field *fields, const char *name, int deep)
{
    for (const Field *f = fields; f && f->key; f++) {
        if (!strcmp(f->key, name))
            return f;
        const Field *in = deep && f->sub ? find(f->sub, name, 1) : NULL;
        if (in)
            return in;
    }
    return NULL;
}

static int said(const ManEntry *e, const char *name)
{
    for (int i = 0; i < e->n_words; i++)
        if (!strcmp(e->words[i], name))
            return 1;
    return 0;
}

/* The members of a head: its sub-table ("results": that table's). */
static const Field *members_of(const char *head)
{
    const Field *f = find(record_run_fields, head, 0);

    if (!strcmp(head, "results"))
        return record_result_fields;
    return f ? f->sub : NULL;
}

/* Every member below `fields` is in e's paragraph. */
static void check_described(const ManEntry *e, const Field *fields, const char *where)
{
    for (const Field *f = fields; f && f->key; f++) {
        CHECK(said(e, f->key));
        if (!said(e, f->key))
            fprintf(stderr, "man page: %s.%s (%s) is not described under %s\n", where, f->key,
                    f->doc, where);
        check_described(e, f->sub, where);
    }
}

/* A bold name in e's paragraph is a member of one of its heads, or a
 * member at the top (named beside another). */
static void check_exists(const ManEntry *e)
{
    for (int i = 0; i < e->n_words; i++) {
        int ok = find(record_run_fields, e->words[i], 0) != NULL;
        for (int h = 0; h < e->n_head && !ok; h++)
            ok = find(members_of(e->head[h]), e->words[i], 1) != NULL;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "man page: \"%s\" under %s is not a member of the record\n",
                    e->words[i], e->n_head ? e->head[0] : "?");
    }
}

static void test_man_page(void)
{
    char *text = slurp(CNNTOP_MAN_IN);
    int n = text ? man_entries(text) : 0;

    CHECK(n > 20);
    for (int i = 0; i < n; i++) {
        const ManEntry *e = &entries[i];
        CHECK(e->n_head > 0);
        for (int h = 0; h < e->n_head; h++) {
            int ok = !strcmp(e->head[h], "schema") || members_of(e->head[h]) ||
                     find(record_run_fields, e->head[h], 0);
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "man page: \"%s\" is not a member of the record\n", e->head[h]);
            check_described(e, members_of(e->head[h]), e->head[h]);
        }
        check_exists(e);
    }
    /* Every member at the top has an entry, or is named in one. */
    for (const Field *f = record_run_fields; f->key; f++) {
        int ok = 0;
        for (int i = 0; i < n && !ok; i++)
            for (int h = 0; h < entries[i].n_head; h++)
                ok |= !strcmp(entries[i].head[h], f->key) || said(&entries[i], f->key);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "man page: %s (%s) is not described\n", f->key, f->doc);
    }
    free(text);
}

/* The paths of the members flagged FF_VARIES, one a line ("train.wall",
 * "samples[].t"): what test_tui_export.sh compares for presence and type
 * only. */
static void print_varies(const Field *fields, const char *where)
{
    for (const Field *f = fields; f->key; f++) {
        char path[128];
        snprintf(path, sizeof path, "%s%s%s", where, *where ? "." : "", f->key);
        if (f->flags & FF_VARIES)
            printf("%s\n", path);
        if (f->sub)
            print_varies(f->sub, f->type == FT_ARRAY ? strcat(path, "[]") : path);
    }
}

int main(int argc, char **argv)
{
    RunRecord r;
    char missing[96] = "";

    if (argc > 1 && !strcmp(argv[1], "--varies")) {
        print_varies(record_run_fields, "");
        print_varies(record_result_fields, "results[]");
        return 0;
    }

    make_dir("cnntop-fields");
    build(&r);
    fill_rest(&r);
    CHECK(filled_members(record_run_fields, &r, missing, sizeof missing));
    if (missing[0])
        fprintf(stderr, "the full record leaves %s unknown: set it in fill_rest()\n", missing);
    test_round_trip(&r);
    test_revisions(&r);
    test_missing(&r);
    test_man_page();
    record_done(&r);
    cleanup();
    return check_report();
}
