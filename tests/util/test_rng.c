/*
 * test_rng.c: rng_permutation (util/rng.h) is a permutation, a pure
 * function of (seed, epoch) that both change, and uniform over the orders
 * of small n.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/rng.h"

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "test_rng: out of memory\n");
        exit(2);
    }
    return p;
}

static int is_permutation(const uint32_t *p, long n)
{
    uint8_t *seen = xcalloc((size_t)n, 1);
    int ok = 1;
    for (long i = 0; i < n && ok; i++) {
        if (p[i] >= (uint32_t)n || seen[p[i]])
            ok = 0;
        else
            seen[p[i]] = 1;
    }
    free(seen);
    return ok;
}

static void test_rng(void)
{
    const long ns[4] = {1, 2, 10, 60000};
    uint32_t *a = xcalloc(60000, sizeof *a), *b = xcalloc(60000, sizeof *b);

    for (int k = 0; k < 4; k++) {
        long n = ns[k];
        rng_permutation(a, n, 1234, 3);
        CHECK(is_permutation(a, n));
        rng_permutation(b, n, 1234, 3);
        CHECK(memcmp(a, b, (size_t)n * sizeof *a) == 0); /* a pure function */
        if (n >= 10) {
            rng_permutation(b, n, 1235, 3);
            CHECK(is_permutation(b, n));
            CHECK(memcmp(a, b, (size_t)n * sizeof *a) != 0); /* seed matters */
            rng_permutation(b, n, 1234, 4);
            CHECK(memcmp(a, b, (size_t)n * sizeof *a) != 0); /* epoch matters */
            long fixed = 0;
            for (long i = 0; i < n; i++)
                fixed += a[i] == (uint32_t)i;
            CHECK(fixed < n / 2); /* it does shuffle */
        }
    }
    /* n = 2 over 4000 epochs: both orders, near half each (sd 32) */
    long swapped = 0;
    for (long e = 0; e < 4000; e++) {
        rng_permutation(a, 2, 99, e);
        swapped += a[0] == 1;
    }
    CHECK_NEAR((double)swapped, 2000.0, 200.0);
    /* n = 3 over 30000 epochs: each of the 6 orders 5000 +- 400 (sd 65) */
    long counts[9] = {0};
    for (long e = 0; e < 30000; e++) {
        rng_permutation(a, 3, 7, e);
        counts[a[0] * 3 + a[1]]++;
    }
    for (int i = 0; i < 9; i++)
        if (i / 3 != i % 3)
            CHECK_NEAR((double)counts[i], 5000.0, 400.0);
    free(a);
    free(b);
}

int main(void)
{
    test_rng();
    return check_report();
}
