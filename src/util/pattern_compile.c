/*
 * pattern_compile.c: a POSIX extended regular expression parsed to a tree,
 * its size checked, then written out as a program for pattern_match.c
 * (pattern_prog.h).  The grammar and the limits are in cnntop/pattern.h.
 *
 * The tree's lists (a branch's pieces, an alternation's branches) are
 * chained through `next`, so the parser and the code writer recurse only
 * as deep as groups and repetitions nest, which PATTERN_DEPTH_MAX bounds.
 * Sizes are added and multiplied saturated at PATTERN_PROG_MAX + 1, so
 * nested counts ((a{0,30}){0,30}...) are refused before anything is
 * written out, never overflow and never exhaust memory or the stack.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/pattern_prog.h"

#define DUP_MAX 32767 /* the largest count, as regcomp's RE_DUP_MAX */

enum { N_EMPTY, N_BYTE, N_SET, N_ANY, N_ASSERT, N_CAT, N_ALT, N_GROUP, N_REP };

typedef struct Node {
    uint8_t op, arg;  /* N_*; the byte, the assertion, or 1 for group 1 */
    int a;            /* the first child (CAT, ALT, GROUP, REP), the set */
    int next;         /* the next in the parent's list, or -1 */
    int min, max;     /* REP's counts, max -1: unbounded */
    int h;            /* the height of the tree below, this node included */
} Node;

/* The deepest tree the code writer recurses over (stacked repetitions
 * deepen it within one group level). */
#define HEIGHT_MAX (4 * PATTERN_DEPTH_MAX)

typedef struct Parser {
    const char *s;       /* the cursor */
    Node *nodes;
    int nn, ncap;
    PatSet *sets;
    int nsets, scap;
    int groups, depth;
    char *err;
    size_t errlen;
    int rc;              /* the first error, or 0 */
} Parser;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int fail(Parser *p, const char *fmt, ...)
{
    if (p->rc == 0 && p->err && p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
    }
    if (p->rc == 0)
        p->rc = -CN_EINVAL;
    return -1;
}

static int no_memory(Parser *p)
{
    fail(p, "out of memory");
    p->rc = -CN_ENOMEM;
    return -1;
}

static int new_node(Parser *p, int op)
{
    if (p->nn == p->ncap) {
        int cap = p->ncap ? 2 * p->ncap : 64;
        Node *n = realloc(p->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return no_memory(p);
        p->nodes = n;
        p->ncap = cap;
    }
    p->nodes[p->nn] = (Node){.op = (uint8_t)op, .a = -1, .next = -1, .h = 1};
    return p->nn++;
}

/* Node i over the child list that starts at first; fails when too deep. */
static int adopt(Parser *p, int i, int first)
{
    if (i < 0)
        return -1;
    p->nodes[i].a = first;
    for (int c = first; c >= 0; c = p->nodes[c].next)
        if (p->nodes[c].h >= p->nodes[i].h)
            p->nodes[i].h = p->nodes[c].h + 1;
    if (p->nodes[i].h > HEIGHT_MAX)
        return fail(p, "groups and repetitions nested too deep");
    return i;
}

/* A node for set s (copied). */
static int new_set(Parser *p, const PatSet s)
{
    if (p->nsets == p->scap) {
        int cap = p->scap ? 2 * p->scap : 8;
        PatSet *n = realloc(p->sets, (size_t)cap * sizeof *n);
        if (!n)
            return no_memory(p);
        p->sets = n;
        p->scap = cap;
    }
    memcpy(p->sets[p->nsets], s, sizeof(PatSet));
    int i = new_node(p, N_SET);
    if (i >= 0)
        p->nodes[i].a = p->nsets++;
    return i;
}

/* Whether byte c is in the named class k, as in the C locale. */
static int class_has(int k, int c)
{
    int upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    int digit = c >= '0' && c <= '9', alnum = upper || lower || digit;
    int graph = c > ' ' && c < 127;
    switch (k) {
    case 0: return upper || lower;
    case 1: return digit;
    case 2: return alnum;
    case 3: return upper;
    case 4: return lower;
    case 5: return c == ' ' || (c >= '\t' && c <= '\r');
    case 6: return c == ' ' || c == '\t';
    case 7: return graph && !alnum;
    case 8: return graph || c == ' ';
    case 9: return graph;
    case 10: return c < ' ' || c == 127;
    default: return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}

/* Adds the class named by the len bytes at name to s; -1: no such class. */
static int class_add(PatSet s, const char *name, size_t len)
{
    static const char *const names[] = {"alpha", "digit", "alnum", "upper", "lower", "space",
                                        "blank", "punct", "print", "graph", "cntrl", "xdigit"};
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
        if (strlen(names[k]) == len && !memcmp(names[k], name, len)) {
            for (int c = 0; c < 128; c++)
                if (class_has(k, c))
                    pat_set_add(s, (unsigned)c);
            return 0;
        }
    return -1;
}

/* One element of a bracket expression at the cursor: a class, added to s
 * (returns 1), or one byte in *c (returns 0); -1 on an error. */
static int bracket_elem(Parser *p, PatSet s, unsigned *c)
{
    const char *at = p->s;
    if (at[0] == '[' && (at[1] == ':' || at[1] == '=' || at[1] == '.')) {
        char kind = at[1];
        const char *name = at + 2, *end = name;
        while (*end && !(end[0] == kind && end[1] == ']'))
            end++;
        if (!*end)
            return fail(p, "'[%c' without its '%c]'", kind, kind);
        int len = (int)(end - name);
        p->s = end + 2;
        if (kind == ':') {
            if (class_add(s, name, (size_t)len) != 0)
                return fail(p, "'[:%.*s:]': no such character class", len, name);
            return 1;
        }
        if (len != 1)
            return fail(p, "'[%c%.*s%c]': only a single character is supported there", kind, len,
                        name, kind);
        *c = (unsigned char)name[0];
        return 0;
    }
    *c = (unsigned char)at[0];
    p->s = at + 1;
    return 0;
}

/* A bracket expression, the cursor on its '['. */
static int parse_bracket(Parser *p)
{
    PatSet s = {0};
    int neg = *++p->s == '^';
    p->s += neg;
    for (int first = 1;; first = 0) {
        if (!*p->s)
            return fail(p, "'[' without its ']'");
        if (*p->s == ']' && !first) {
            p->s++;
            break;
        }
        unsigned lo = 0, hi = 0;
        int k = bracket_elem(p, s, &lo);
        if (k < 0)
            return -1;
        if (p->s[0] != '-' || p->s[1] == ']' || !p->s[1]) {
            if (k == 0)
                pat_set_add(s, lo);
            continue;
        }
        p->s++;
        int k2 = bracket_elem(p, s, &hi);
        if (k2 < 0)
            return -1;
        if (k || k2)
            return fail(p, "a range in '[ ]' cannot start or end with a character class");
        if (hi < lo)
            return fail(p, "the range '%c-%c' in '[ ]' ends before it starts", (int)lo, (int)hi);
        for (unsigned c = lo; c <= hi; c++)
            pat_set_add(s, c);
        if (p->s[0] == '-' && p->s[1] != ']')
            return fail(p, "'-' right after a range in '[ ]': put a '-' first or last");
    }
    if (neg)
        for (int i = 0; i < 32; i++)
            s[i] = (uint8_t)~s[i];
    return new_set(p, s);
}

static int new_assert(Parser *p, int kind)
{
    int i = new_node(p, N_ASSERT);
    if (i >= 0)
        p->nodes[i].arg = (uint8_t)kind;
    return i;
}

/* GNU's \w \W \s \S. */
static int class_escape(Parser *p, char c)
{
    PatSet s = {0};
    int word = c == 'w' || c == 'W';
    class_add(s, word ? "alnum" : "space", 5);
    if (word)
        pat_set_add(s, '_');
    if (c == 'W' || c == 'S')
        for (int i = 0; i < 32; i++)
            s[i] = (uint8_t)~s[i];
    return new_set(p, s);
}

/* A backslash and what follows, the cursor on the backslash. */
static int parse_escape(Parser *p)
{
    static const char asserts[] = "`'bB<>";
    static const int kinds[] = {PAT_AS_BEGIN, PAT_AS_END,    PAT_AS_WORDB,
                                PAT_AS_NWORDB, PAT_AS_WBEGIN, PAT_AS_WEND};
    unsigned char c = (unsigned char)p->s[1];
    if (!c)
        return fail(p, "a '\\' with nothing after it");
    p->s += 2;
    if (c >= '1' && c <= '9')
        return fail(p, "back-references (\\%c) are not supported: no matcher does them in time "
                       "linear in the text", c);
    if (strchr("wWsS", c))
        return class_escape(p, (char)c);
    const char *a = strchr(asserts, c);
    if (a)
        return new_assert(p, kinds[a - asserts]);
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return fail(p, "'\\%c' is not POSIX extended syntax%s", c,
                    c == 'd' ? " (a digit is [0-9] or [[:digit:]])" : "");
    int i = new_node(p, N_BYTE);
    if (i >= 0)
        p->nodes[i].arg = c;
    return i;
}

static int parse_alt(Parser *p);

/* A parenthesised group, the cursor on its '('. */
static int parse_group(Parser *p)
{
    if (++p->depth > PATTERN_DEPTH_MAX)
        return fail(p, "groups nested more than %d deep", PATTERN_DEPTH_MAX);
    p->s++;
    int first = ++p->groups == 1;
    int inner = parse_alt(p);
    if (inner < 0)
        return -1;
    if (*p->s != ')')
        return fail(p, "'(' without its ')'");
    p->s++;
    p->depth--;
    int g = adopt(p, new_node(p, N_GROUP), inner);
    if (g >= 0)
        p->nodes[g].arg = (uint8_t)first;
    return g;
}

static int parse_atom(Parser *p)
{
    char c = *p->s;
    switch (c) {
    case '(': return parse_group(p);
    case '[': return parse_bracket(p);
    case '\\': return parse_escape(p);
    case '^': p->s++; return new_assert(p, PAT_AS_BEGIN);
    case '$': p->s++; return new_assert(p, PAT_AS_END);
    case '.': p->s++; return new_node(p, N_ANY);
    case '*': case '+': case '?': case '{':
        return fail(p, "'%c' with nothing to repeat", c);
    default: {
        int i = new_node(p, N_BYTE); /* a ')' with no '(' is one too, as for regcomp */
        if (i >= 0)
            p->nodes[i].arg = (uint8_t)c;
        p->s++;
        return i;
    }
    }
}

/* Digits at *s, up to DUP_MAX + 1; -1 when there are none. */
static long count_digits(const char **s)
{
    long v = -1;
    for (; **s >= '0' && **s <= '9'; (*s)++)
        v = v < 0 ? **s - '0' : (v > DUP_MAX ? v : v * 10 + (**s - '0'));
    return v;
}

/* A {m}, {m,}, {m,n} or {,n} at the cursor, into *min and *max. */
static int parse_count(Parser *p, int *min, int *max)
{
    const char *s = p->s + 1;
    long m = count_digits(&s), n = m;
    if (*s == ',') {
        s++;
        n = count_digits(&s);
        m = m < 0 ? 0 : m;
    }
    if (m < 0 || *s != '}')
        return fail(p, "'{' starts no count such as {2} or {1,3} (the character itself is \\{)");
    if (m > DUP_MAX || n > DUP_MAX)
        return fail(p, "a count over %d", DUP_MAX);
    if (n >= 0 && m > n)
        return fail(p, "{%ld,%ld}: the least count is more than the most", m, n);
    p->s = s + 1;
    *min = (int)m;
    *max = (int)n;
    return 0;
}

/* An atom and its repetitions. */
static int parse_piece(Parser *p)
{
    int atom = parse_atom(p);
    while (atom >= 0 && *p->s && strchr("*+?{", *p->s)) {
        int min = *p->s == '+', max = *p->s == '?' ? 1 : -1;
        if (p->nodes[atom].op == N_ASSERT)
            return fail(p, "'%c' after an anchor: nothing to repeat", *p->s);
        if (*p->s == '{') {
            if (parse_count(p, &min, &max) != 0)
                return -1;
        } else
            p->s++;
        int r = adopt(p, new_node(p, N_REP), atom);
        if (r < 0)
            return -1;
        p->nodes[r].min = min;
        p->nodes[r].max = max;
        atom = r;
    }
    return atom;
}

/* A node of type op over the list that starts at first (or first alone). */
static int list_node(Parser *p, int op, int first, int count)
{
    if (count == 1)
        return first;
    return adopt(p, new_node(p, count ? op : N_EMPTY), first);
}

/* Pieces up to a '|', the end, or the ')' that closes the group. */
static int parse_branch(Parser *p)
{
    int first = -1, last = -1, count = 0;
    while (*p->s && *p->s != '|' && !(*p->s == ')' && p->depth > 0)) {
        int piece = parse_piece(p);
        if (piece < 0)
            return -1;
        if (last < 0)
            first = piece;
        else
            p->nodes[last].next = piece;
        last = piece;
        count++;
    }
    return list_node(p, N_CAT, first, count);
}

static int parse_alt(Parser *p)
{
    int first = parse_branch(p), last = first, count = 1;
    while (first >= 0 && *p->s == '|') {
        p->s++;
        int b = parse_branch(p);
        if (b < 0)
            return -1;
        p->nodes[last].next = b;
        last = b;
        count++;
    }
    return first < 0 ? -1 : list_node(p, N_ALT, first, count);
}

#define SIZE_CAP ((uint64_t)PATTERN_PROG_MAX + 1)

static uint64_t sat(uint64_t v)
{
    return v > SIZE_CAP ? SIZE_CAP : v;
}

/* The instructions emit() writes for node i, saturated at SIZE_CAP. */
static uint64_t node_size(const Parser *p, int i)
{
    const Node *n = &p->nodes[i];
    uint64_t t = 0;
    switch (n->op) {
    case N_EMPTY: return 0;
    case N_CAT:
    case N_ALT:
        for (int c = n->a; c >= 0; c = p->nodes[c].next)
            t = sat(t + node_size(p, c) + (n->op == N_ALT && p->nodes[c].next >= 0 ? 2 : 0));
        return t;
    case N_GROUP: return sat(node_size(p, n->a) + (n->arg ? 2 : 0));
    case N_REP:
        t = node_size(p, n->a);
        if (n->max < 0)
            return sat(n->min == 0 ? t + 2 : (uint64_t)n->min * t + 1);
        return sat((uint64_t)n->min * t + (uint64_t)(n->max - n->min) * (t + 1));
    default: return 1;
    }
}

typedef struct Writer {
    const Parser *p;
    PatInsn *prog;
    int pc;
} Writer;

static int put(Writer *w, int op, int arg, int x, int y)
{
    w->prog[w->pc] = (PatInsn){.op = (uint8_t)op, .arg = (uint8_t)arg, .x = x, .y = y};
    return w->pc++;
}

/* Points every jump of the chain (linked through field y or x) at here. */
static void patch(Writer *w, int chain, int via_y)
{
    while (chain >= 0) {
        int32_t *f = via_y ? &w->prog[chain].y : &w->prog[chain].x;
        chain = *f;
        *f = w->pc;
    }
}

static void emit(Writer *w, int i);

/* Node i's REP: min copies, then the optional ones or a loop. */
static void emit_rep(Writer *w, const Node *n)
{
    for (int k = 1; k < n->min; k++)
        emit(w, n->a);
    if (n->max < 0 && n->min == 0) { /* L: SPLIT L+1, out; e; JMP L */
        int l = put(w, PAT_SPLIT, 0, w->pc + 1, -1);
        emit(w, n->a);
        put(w, PAT_JMP, 0, l, 0);
        patch(w, l, 1);
        return;
    }
    if (n->max < 0) { /* L: e; SPLIT L, out */
        int l = w->pc;
        emit(w, n->a);
        put(w, PAT_SPLIT, 0, l, w->pc + 1);
        return;
    }
    if (n->min > 0)
        emit(w, n->a);
    int chain = -1;
    for (int k = n->min; k < n->max; k++) { /* SPLIT next, out; e */
        chain = put(w, PAT_SPLIT, 0, w->pc + 1, chain);
        emit(w, n->a);
    }
    patch(w, chain, 1);
}

static void emit(Writer *w, int i)
{
    const Node *n = &w->p->nodes[i];
    int chain = -1;
    switch (n->op) {
    case N_BYTE: put(w, PAT_BYTE, n->arg, 0, 0); break;
    case N_SET: put(w, PAT_SET, 0, n->a, 0); break;
    case N_ANY: put(w, PAT_ANY, 0, 0, 0); break;
    case N_ASSERT: put(w, PAT_ASSERT, n->arg, 0, 0); break;
    case N_CAT:
        for (int c = n->a; c >= 0; c = w->p->nodes[c].next)
            emit(w, c);
        break;
    case N_ALT: /* SPLIT L1, L2; L1: a; JMP out; L2: SPLIT ...; last */
        for (int c = n->a; c >= 0; c = w->p->nodes[c].next) {
            int s = w->p->nodes[c].next >= 0 ? put(w, PAT_SPLIT, 0, w->pc + 1, 0) : -1;
            emit(w, c);
            if (s >= 0) {
                chain = put(w, PAT_JMP, 0, chain, 0);
                w->prog[s].y = w->pc;
            }
        }
        patch(w, chain, 0);
        break;
    case N_GROUP:
        if (n->arg)
            put(w, PAT_SAVE, 2, 0, 0);
        emit(w, n->a);
        if (n->arg)
            put(w, PAT_SAVE, 3, 0, 0);
        break;
    case N_REP: emit_rep(w, n); break;
    default: break;
    }
}

/* The program for the tree at root, into *out. */
static int write_out(Parser *p, int root, Pattern **out)
{
    uint64_t size = node_size(p, root) + 3;
    if (size > PATTERN_PROG_MAX)
        return fail(p, "too large once its counts are written out (over %d instructions; nested "
                       "counts multiply)", PATTERN_PROG_MAX);
    Pattern *pat = calloc(1, sizeof *pat);
    Writer w = {.p = p, .prog = malloc((size_t)size * sizeof(PatInsn))};
    if (!pat || !w.prog) {
        free(pat);
        free(w.prog);
        return no_memory(p);
    }
    put(&w, PAT_SAVE, 0, 0, 0);
    emit(&w, root);
    put(&w, PAT_SAVE, 1, 0, 0);
    put(&w, PAT_MATCH, 0, 0, 0);
    assert(w.pc == (int)size); /* node_size() and emit() agree */
    *pat = (Pattern){.prog = w.prog, .n = w.pc, .sets = p->sets, .nsets = p->nsets,
                     .groups = p->groups};
    p->sets = NULL;
    *out = pat;
    return 0;
}

int pattern_compile(const char *src, Pattern **out, char *err, size_t errlen)
{
    Parser p = {.s = src, .err = err, .errlen = errlen};
    *out = NULL;
    int root = parse_alt(&p);
    if (root >= 0 && *p.s)
        fail(&p, "'%c' out of place", *p.s); /* not reached: parse_alt reads to the end */
    if (root >= 0 && p.rc == 0)
        write_out(&p, root, out);
    free(p.nodes);
    free(p.sets);
    return p.rc;
}

void pattern_free(Pattern *p)
{
    if (!p)
        return;
    free(p->prog);
    free(p->sets);
    free(p);
}

int pattern_groups(const Pattern *p)
{
    return p->groups;
}
