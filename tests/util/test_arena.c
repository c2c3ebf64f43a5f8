/*
 * test_arena.c: the arena (util/arena.h): a planning pass and a real pass
 * carve the same pieces, aligned and zeroed; a push past the plan is NULL
 * and flagged; arena_init_huge gives the whole 2 MiB pages of its first
 * bytes the huge-page advice and the rest the small-page advice, as the
 * kernel records it (VmFlags "hg" and "nh" in /proc/self/smaps: the
 * advice, which does not depend on whether huge pages were free).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "util/arena.h"

#define MIB (1024u * 1024u)

/* The VmFlags of the mapping holding p into flags (""), 0; -1 without
 * /proc/self/smaps. */
static int vma_flags(const void *p, char *flags, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;

    flags[0] = '\0';
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, len, "%s", line + 8);
            break;
        }
    }
    fclose(f);
    return 0;
}

static int has_flag(const char *flags, const char *f)
{
    char word[8];

    snprintf(word, sizeof word, " %s", f);
    return strstr(flags, word) != NULL;
}

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

/* arena_init_huge(size, huge): the pages of the first huge bytes, in
 * whole 2 MiB pages, advised huge; the rest small. */
static void test_huge(size_t size, size_t huge)
{
    Arena a;
    char flags[512];

    arena_plan(&a);
    CHECK_INT(arena_init_huge(&a, size, huge), ==, 0);
    if (huge >= 2 * MIB)
        CHECK_INT((long)((uintptr_t)a.base % (2 * MIB)), ==, 0);
    long nonzero = 0;
    for (size_t i = 0; i < a.size; i += 4096)
        nonzero += a.base[i] != 0;
    CHECK_INT(nonzero, ==, 0);
    memset(a.base, 1, a.size); /* all of it usable */
    size_t whole = (huge < size ? huge : size) / (2 * MIB) * (2 * MIB);
    if (vma_flags(a.base, flags, sizeof flags) == 0 && flags[0]) {
        if (whole) {
            CHECK(has_flag(flags, "hg"));
            CHECK(vma_flags(a.base + whole - 4096, flags, sizeof flags) == 0 &&
                  has_flag(flags, "hg"));
        }
        if (whole && size - whole >= 4096) {
            CHECK(vma_flags(a.base + whole, flags, sizeof flags) == 0);
            CHECK(has_flag(flags, "nh"));
            CHECK(!has_flag(flags, "hg"));
        }
    } else
        printf("test_arena: no VmFlags in /proc/self/smaps, the advice not checked\n");
    arena_done(&a);
}

int main(void)
{
    test_carve();
    test_huge(5 * MIB, 3 * MIB);       /* one whole huge page, then small ones */
    test_huge(8 * MIB, 8 * MIB);       /* all huge */
    test_huge(4 * MIB + 64, 64 * MIB); /* huge past the end: the whole pages inside */
    test_huge(1 * MIB, 1 * MIB);       /* less than a huge page: all small */
    return check_report();
}
