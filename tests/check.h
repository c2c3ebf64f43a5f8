/*
 * check.h: the tiny assertion kit of cnntop's tests.
 *
 * Each CHECK prints the expression, the values and file:line on failure and
 * counts the failure; the test's main() ends with `return check_report();`,
 * which prints "name: N checks, M failed" and returns non-zero on any failure.
 * A test that needs something the machine lacks calls check_skip(reason),
 * which exits 77 (ctest's SKIP_RETURN_CODE); one check of many that cannot
 * be made here is CHECK_SKIP(reason), counted in the report.
 */
#ifndef CNNTOP_CHECK_H
#define CNNTOP_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_count;
static int check_failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        check_count++;                                                         \
        if (!(cond)) {                                                         \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_INT(a, op, b)                                                    \
    do {                                                                       \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);        \
        check_count++;                                                         \
        if (!(check_a_ op check_b_)) {                                         \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s %s %s) failed: %lld vs %lld\n",   \
                    __FILE__, __LINE__, #a, #op, #b, check_a_, check_b_);      \
        }                                                                      \
    } while (0)

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol)                                                  \
    do {                                                                       \
        double check_a_ = (double)(a), check_b_ = (double)(b);                 \
        check_count++;                                                         \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                           \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK_NEAR(%s, %s, %g) failed: %.9g vs %.9g\n", \
                    __FILE__, __LINE__, #a, #b, (double)(tol), check_a_,       \
                    check_b_);                                                 \
        }                                                                      \
    } while (0)

/* `haystack` contains `needle` */
#define CHECK_STR_HAS(haystack, needle)                                        \
    do {                                                                       \
        const char *check_h_ = (haystack), *check_n_ = (needle);               \
        check_count++;                                                         \
        if (!check_h_ || !strstr(check_h_, check_n_)) {                        \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n",         \
                    __FILE__, __LINE__, check_h_ ? check_h_ : "(null)",        \
                    check_n_);                                                 \
        }                                                                      \
    } while (0)

static int check_skipped;

/* A check that cannot be made here (an event this machine cannot encode):
 * counted and said, never passed in silence. */
#define CHECK_SKIP(reason)                                                     \
    do {                                                                       \
        check_skipped++;                                                       \
        fprintf(stderr, "%s:%d: SKIP: %s\n", __FILE__, __LINE__, (reason));    \
    } while (0)

static inline int check_report_named(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed", name, check_count, check_failed);
    if (check_skipped)
        fprintf(stderr, ", %d skipped", check_skipped);
    fputc('\n', stderr);
    return check_failed ? 1 : 0;
}
#define check_report() check_report_named(__FILE__)

static inline void check_skip(const char *reason)
{
    fprintf(stderr, "SKIP: %s\n", reason);
    exit(77);
}

#endif
