/*
 * test_workpool.c: the compute pool runs every item exactly once, on a valid
 * thread id, across many back-to-back jobs and pool sizes, and
 * workpool_each once on every thread with item = tid; run under TSan in
 * CI for its fork/join.
 */
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "nn/workpool.h"

#define MAXN 200

typedef struct Ctx {
    atomic_int hits[MAXN];
    atomic_int bad_tid;
    int threads;
    long sum[MAXN]; /* item-owned: written by whichever thread ran the item */
} Ctx;

static void work(void *cp, int item, int tid)
{
    Ctx *c = cp;
    if (tid < 0 || tid >= c->threads)
        atomic_fetch_add(&c->bad_tid, 1);
    atomic_fetch_add(&c->hits[item], 1);
    c->sum[item] += item;
}

/* workpool_each: hits[tid] counts the calls of thread tid. */
static void each(void *cp, int item, int tid)
{
    Ctx *c = cp;
    if (item != tid || tid < 0 || tid >= c->threads)
        atomic_fetch_add(&c->bad_tid, 1);
    else
        atomic_fetch_add(&c->hits[tid], 1);
}

int main(void)
{
    static Ctx c;

    for (int T = 1; T <= 4; T++) {
        Workpool *p;
        CHECK_INT(workpool_new(&p, T, NULL), ==, 0);
        CHECK_INT(workpool_threads(p), ==, T);
        c.threads = T;
        for (int round = 0; round < 300; round++) {
            int n = (round * 37) % MAXN;
            for (int i = 0; i < MAXN; i++)
                atomic_store(&c.hits[i], 0);
            memset(c.sum, 0, sizeof c.sum);
            workpool_run(p, n, work, &c);
            int wrong = 0;
            for (int i = 0; i < MAXN; i++)
                wrong += atomic_load(&c.hits[i]) != (i < n) || c.sum[i] != (i < n ? i : 0);
            CHECK_INT(wrong, ==, 0);
            if (round % 50 == 0) {
                for (int i = 0; i < MAXN; i++)
                    atomic_store(&c.hits[i], 0);
                workpool_each(p, each, &c);
                for (int i = 0; i < MAXN; i++)
                    wrong += atomic_load(&c.hits[i]) != (i < T);
                CHECK_INT(wrong, ==, 0);
            }
        }
        CHECK_INT(atomic_load(&c.bad_tid), ==, 0);
        workpool_free(p);
    }
    workpool_free(NULL);
    return check_report();
}
