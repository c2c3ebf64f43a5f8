/*
 * pattern_prog.h: a compiled pattern, the program that pattern_compile.c
 * writes and pattern_match.c runs (the instruction set of Russ Cox's
 * "Regular Expression Matching: the Virtual Machine Approach").
 */
#ifndef CNNTOP_UTIL_PATTERN_PROG_H
#define CNNTOP_UTIL_PATTERN_PROG_H

#include <stdint.h>

#include "cnntop/pattern.h"

enum {
    PAT_BYTE,    /* consumes the byte arg */
    PAT_SET,     /* consumes a byte in sets[x] */
    PAT_ANY,     /* consumes any byte */
    PAT_SPLIT,   /* goes on at x and, with less priority, at y */
    PAT_JMP,     /* goes on at x */
    PAT_SAVE,    /* records the position in capture slot arg (0-3) */
    PAT_ASSERT,  /* goes on when assertion arg holds here */
    PAT_MATCH    /* a match */
};

/* The zero-width assertions (PAT_ASSERT's arg). */
enum { PAT_AS_BEGIN, PAT_AS_END, PAT_AS_WORDB, PAT_AS_NWORDB, PAT_AS_WBEGIN, PAT_AS_WEND };

typedef struct PatInsn {
    uint8_t op, arg;
    int32_t x, y;
} PatInsn;

/* A byte set: bit c of set[c / 8]. */
typedef uint8_t PatSet[32];

struct Pattern {
    PatInsn *prog;   /* SAVE 0, the pattern, SAVE 1, MATCH */
    int n;           /* instructions */
    PatSet *sets;
    int nsets;
    int groups;      /* parenthesised groups */
};

static inline int pat_set_has(const PatSet s, unsigned c)
{
    return (s[c >> 3] >> (c & 7)) & 1;
}

static inline void pat_set_add(PatSet s, unsigned c)
{
    s[c >> 3] = (uint8_t)(s[c >> 3] | (1u << (c & 7)));
}

#endif
