/*
 * arena.c: aligned blocks and the bump allocator over them.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A block this large is aligned to it and asked for in transparent huge
 * pages (where THP is "madvise", as on Debian; a no-op where "never").
 * The Winograd transforms read and write 81 planes a tile, each in a
 * page of its own: a batch-64 step ran 1.036x as fast with the scratch in
 * 2 MiB pages (alternated runs, bench/RESULTS.md, session 24), the peak
 * RSS the same. */
#define HUGE_BYTES ((size_t)2 << 20)

#include "util/arena.h"
#include "cnntop/err.h"

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

void *mem_alloc(size_t bytes)
{
    void *p = NULL;

    bytes = round_up(bytes ? bytes : 1, ARENA_ALIGN);
    if (bytes >= HUGE_BYTES) {
        if (posix_memalign(&p, HUGE_BYTES, bytes) != 0)
            return NULL;
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: refused, it is small pages */
    } else if (posix_memalign(&p, 4096, bytes) != 0)
        return NULL;
    /* memset touches every page now, so the step never faults on it. */
    memset(p, 0, bytes);
    return p;
}

void mem_free(void *p)
{
    free(p);
}

void arena_plan(Arena *a)
{
    a->base = NULL;
    a->used = 0;
    a->size = 0;
}

int arena_init(Arena *a, size_t size)
{
    a->used = 0;
    a->size = round_up(size, ARENA_ALIGN);
    a->base = mem_alloc(a->size);
    if (!a->base) {
        a->size = 0;
        return -CN_ENOMEM;
    }
    return 0;
}

void arena_done(Arena *a)
{
    mem_free(a->base);
    a->base = NULL;
    a->size = a->used = 0;
}

void *arena_push(Arena *a, size_t bytes)
{
    size_t at = a->used;

    a->used += round_up(bytes, ARENA_ALIGN);
    if (!a->base)
        return NULL;
    assert(a->used <= a->size);
    /* More than was planned: the carving differs between its two passes.
     * NULL, and the caller checks arena_overflowed() after the pass. */
    if (a->used > a->size)
        return NULL;
    return a->base + at;
}

int arena_overflowed(const Arena *a)
{
    return a->base && a->used > a->size;
}
