/*
 * pattern_match.c: the Pike VM that runs a compiled pattern (pattern_prog.h)
 * over a text given in pieces.
 *
 * All the threads advance together, one byte at a time; a list holds them
 * in priority order (a backtracking matcher's order), and at each position
 * a program counter is taken by its first thread only, so a list never
 * holds more threads than the program has instructions.  Each byte costs
 * O(program size) and the memory is three arrays of that size, whatever
 * the pattern and the text.  A new thread starts at each position, with
 * the least priority, until a match is found; a match cuts the threads of
 * less priority, and the result is decided when no thread of more
 * priority is left.
 *
 * The zero-width assertions ($, \b, \>) look at the byte after the
 * position, so the threads that consumed byte i - 1 wait in `pend` and
 * take their epsilon closure (splits, jumps, saves, assertions) only when
 * byte i (or the end of the text) is known.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/pattern_prog.h"

#define AT_END (-1) /* the "byte" after the text's last */

/* A thread: where it is, and its captures (a slot of the arena). */
typedef struct Thread {
    int pc, ci;
} Thread;

typedef size_t Caps[4]; /* the match's start and end, group 1's */

struct PatternScan {
    const Pattern *p;
    Thread *pend, *list, *stack;
    int npend, nlist;
    Caps *caps, *spare;  /* the slots of pend's and list's threads; the next pend's */
    int ncaps;
    unsigned *mark;      /* mark[pc] == gen: pc taken at this position */
    unsigned gen;
    size_t pos;          /* bytes fed */
    int prev;            /* the byte at pos - 1, or AT_END at the start */
    int found, done;
    Caps best;           /* the match found, while found */
};

PatternScan *pattern_scan_new(const Pattern *p)
{
    PatternScan *s = calloc(1, sizeof *s);
    size_t n = (size_t)p->n + 1;
    if (!s)
        return NULL;
    s->p = p;
    s->pend = malloc(n * sizeof *s->pend);
    s->list = malloc(n * sizeof *s->list);
    s->stack = malloc(n * sizeof *s->stack);
    /* pend's slots, one per SAVE taken, and the new thread's */
    s->caps = malloc(2 * n * sizeof *s->caps);
    s->spare = malloc(2 * n * sizeof *s->spare);
    s->mark = calloc(n, sizeof *s->mark);
    if (!s->pend || !s->list || !s->stack || !s->caps || !s->spare || !s->mark) {
        pattern_scan_free(s);
        return NULL;
    }
    pattern_scan_reset(s);
    return s;
}

void pattern_scan_free(PatternScan *s)
{
    if (!s)
        return;
    free(s->pend);
    free(s->list);
    free(s->stack);
    free(s->caps);
    free(s->spare);
    free(s->mark);
    free(s);
}

void pattern_scan_reset(PatternScan *s)
{
    s->npend = s->nlist = s->ncaps = 0;
    s->pos = 0;
    s->prev = AT_END;
    s->found = s->done = 0;
}

static int is_word(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether assertion kind holds between the bytes prev and next. */
static int holds(int kind, int prev, int next)
{
    int wp = prev != AT_END && is_word(prev), wn = next != AT_END && is_word(next);
    switch (kind) {
    case PAT_AS_BEGIN: return prev == AT_END;
    case PAT_AS_END: return next == AT_END;
    case PAT_AS_WORDB: return wp != wn;
    case PAT_AS_NWORDB: return wp == wn;
    case PAT_AS_WBEGIN: return !wp && wn;
    default: return wp && !wn;
    }
}

/* Follows t through splits, jumps, saves and assertions to the
 * instructions that consume a byte or match, appending those to the list
 * in priority order (a depth-first walk, the preferred branch first).  A
 * save copies the thread's captures to a new slot: each pc is taken once
 * per position, so the slots stay under pend's and the program's sizes,
 * and so does the stack. */
static void follow(PatternScan *s, Thread u, int next)
{
    const PatInsn *prog = s->p->prog;
    int top = 0;
    for (;;) {
        if (s->mark[u.pc] != s->gen) {
            s->mark[u.pc] = s->gen;
            const PatInsn *in = &prog[u.pc];
            switch (in->op) {
            case PAT_JMP: u.pc = in->x; continue;
            case PAT_SPLIT:
                if (s->mark[in->y] != s->gen)
                    s->stack[top++] = (Thread){in->y, u.ci};
                u.pc = in->x;
                continue;
            case PAT_SAVE:
                memcpy(s->caps[s->ncaps], s->caps[u.ci], sizeof(Caps));
                s->caps[s->ncaps][in->arg] = s->pos;
                u.ci = s->ncaps++;
                u.pc++;
                continue;
            case PAT_ASSERT:
                if (holds(in->arg, s->prev, next)) {
                    u.pc++;
                    continue;
                }
                break;
            default: s->list[s->nlist++] = u; break;
            }
        }
        if (top == 0)
            return;
        u = s->stack[--top];
    }
}

/* The threads at this position, next being the byte here (or AT_END). */
static void closure(PatternScan *s, int next)
{
    if (++s->gen == 0) { /* the marks wrapped: clear them */
        memset(s->mark, 0, ((size_t)s->p->n + 1) * sizeof *s->mark);
        s->gen = 1;
    }
    s->nlist = 0;
    for (int i = 0; i < s->npend; i++)
        follow(s, s->pend[i], next);
    if (!s->found) {
        for (int k = 0; k < 4; k++)
            s->caps[s->ncaps][k] = PATTERN_NONE;
        follow(s, (Thread){0, s->ncaps++}, next);
    }
    s->npend = 0;
}

/* Takes a match at list[i]: the threads after it have less priority. */
static void take_match(PatternScan *s, int i)
{
    s->found = 1;
    memcpy(s->best, s->caps[s->list[i].ci], sizeof s->best);
}

static void step(PatternScan *s, unsigned char c)
{
    closure(s, c);
    for (int i = 0; i < s->nlist; i++) {
        const Thread *t = &s->list[i];
        const PatInsn *in = &s->p->prog[t->pc];
        if (in->op == PAT_MATCH) {
            take_match(s, i);
            break;
        }
        if (in->op == PAT_ANY || (in->op == PAT_BYTE && c == in->arg) ||
            (in->op == PAT_SET && pat_set_has(s->p->sets[in->x], c))) {
            memcpy(s->spare[s->npend], s->caps[t->ci], sizeof(Caps));
            s->pend[s->npend] = (Thread){t->pc + 1, s->npend};
            s->npend++;
        }
    }
    Caps *c2 = s->caps; /* the survivors' slots become the arena */
    s->caps = s->spare;
    s->spare = c2;
    s->ncaps = s->npend;
    s->pos++;
    s->prev = c;
    s->done = s->found && s->npend == 0;
}

int pattern_scan_feed(PatternScan *s, const char *buf, size_t n)
{
    for (size_t k = 0; k < n && !s->done; k++)
        step(s, (unsigned char)buf[k]);
    return s->done;
}

int pattern_scan_end(PatternScan *s, PatternSpan m[2])
{
    if (!s->done) {
        closure(s, AT_END);
        for (int i = 0; i < s->nlist; i++)
            if (s->p->prog[s->list[i].pc].op == PAT_MATCH) {
                take_match(s, i);
                break;
            }
        s->nlist = 0;
        s->done = 1;
    }
    m[0] = m[1] = (PatternSpan){PATTERN_NONE, PATTERN_NONE};
    if (!s->found)
        return 0;
    m[0] = (PatternSpan){s->best[0], s->best[1]};
    if (s->best[2] != PATTERN_NONE && s->best[3] != PATTERN_NONE)
        m[1] = (PatternSpan){s->best[2], s->best[3]};
    return 1;
}

size_t pattern_scan_pos(const PatternScan *s)
{
    return s->pos;
}

size_t pattern_scan_floor(const PatternScan *s)
{
    size_t f = s->found ? s->best[0] : s->pos;
    for (int i = 0; i < s->npend; i++)
        if (s->caps[s->pend[i].ci][0] < f)
            f = s->caps[s->pend[i].ci][0];
    return f;
}

int pattern_match(const Pattern *p, const char *text, size_t len, PatternSpan m[2])
{
    PatternScan *s = pattern_scan_new(p);
    if (!s)
        return -CN_ENOMEM;
    pattern_scan_feed(s, text, len);
    int rc = pattern_scan_end(s, m);
    pattern_scan_free(s);
    return rc;
}
