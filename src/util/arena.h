/*
 * arena.h: one block of memory carved into 64-byte-aligned pieces.
 *
 * Used twice: a planning pass with base == NULL only adds up the sizes,
 * then the real pass carves the same pieces out of one allocation.  The
 * block is touched page by page when it is made, so that the training step
 * never takes a page fault (fresh pages are slow to touch on some VMs).
 */
#ifndef CNNTOP_ARENA_H
#define CNNTOP_ARENA_H

#include <stddef.h>

#define ARENA_ALIGN 64

typedef struct Arena {
    char *base;   /* the block, or NULL while planning */
    size_t used;  /* bytes handed out so far, e.g. 1048576 */
    size_t size;  /* bytes in the block (0 while planning) */
} Arena;

/* Starts a planning pass: arena_push() only counts. */
void arena_plan(Arena *a);

/* Allocates `size` bytes (rounded up), zeroed and pre-faulted.  Returns 0 or
 * -CN_ENOMEM. */
int arena_init(Arena *a, size_t size);

/* Frees the block; safe to call twice. */
void arena_done(Arena *a);

/* The next `bytes` (rounded up to ARENA_ALIGN).  NULL while planning, and
 * NULL if the real pass asks for more than was planned (a programmer error:
 * see arena_overflowed()). */
void *arena_push(Arena *a, size_t bytes);

/* 1 when the real pass asked for more than the block holds, else 0. */
int arena_overflowed(const Arena *a);

/* Aligned, zeroed, pre-faulted allocation for long-lived blocks; free with
 * mem_free().  NULL when out of memory.  A block of 2 MiB or more is
 * 2 MiB-aligned and asks for transparent huge pages. */
void *mem_alloc(size_t bytes);
void mem_free(void *p);

#endif
