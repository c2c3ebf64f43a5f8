/*
 * test_arena.c: the arena (util/arena.h): a planning pass and a real pass
 * carve the same pieces, aligned and zeroed; a push past the plan is NULL
 * and flagged.
 */
#include <stdint.h>

#include "check.h"
#include "util/arena.h"

static void test_carve(void)
{
    Arena a;
    size_t sizes[] = {1, 63, 64, 65, 4096, 100000};
    void *p[6];

    arena_plan(&a);
    for (int i = 0; i < 6; i++)
        CHECK(arena_push(&a, sizes[i]) == NULL);
    size_t need = a.used;
    CHECK_INT((long)need, ==, 64 + 64 + 64 + 128 + 4096 + 100032);
    CHECK_INT(arena_init(&a, need), ==, 0);
    for (int i = 0; i < 6; i++) {
        p[i] = arena_push(&a, sizes[i]);
        CHECK(p[i] != NULL);
        CHECK_INT((long)((uintptr_t)p[i] % ARENA_ALIGN), ==, 0);
    }
    long nonzero = 0;
    for (size_t i = 0; i < need; i++)
        nonzero += a.base[i] != 0;
    CHECK_INT(nonzero, ==, 0);
    CHECK_INT(arena_overflowed(&a), ==, 0);
    CHECK(arena_push(&a, 1) == NULL);
    CHECK_INT(arena_overflowed(&a), ==, 1);
    arena_done(&a);
    arena_done(&a); /* twice is safe */
}

int main(void)
{
    test_carve();
    return check_report();
}
