/*
 * test_xent.c: softmax cross-entropy (loss_xent.h): a hand-computed loss,
 * dlogits against central differences, huge logits, the first-max rule of
 * xent_correct.
 */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "gradcheck.h"
#include "nn/loss_xent.h"
#include "nntest.h"

static void test_hand(void)
{
    /*
     * By hand, logits [[1, 2, 3], [1, -1, 0.5]], labels [2, 0]:
     *   row 0: lse = 3 + ln(1 + e^-1 + e^-2) = 3 + ln(1.503214724) = 3.407605964
     *          loss = lse - 3 = 0.407605964
     *          probs = e^(l - lse) = 0.0900305732, 0.2447284711, 0.6652409558
     *   row 1: lse = 1 + ln(1 + e^-2 + e^-1.5) = 1 + ln(1.741865948) = 1.554956920
     *          loss = lse - 1 = 0.554956920
     *          probs = 0.5740969930, 0.0776955791, 0.3482074279
     *   mean loss = (0.407605964 + 0.554956920) / 2 = 0.481281442
     * dlogits = (probs - onehot) / 2.
     */
    const float logits[6] = {1, 2, 3, 1, -1, 0.5f};
    const uint8_t labels[2] = {2, 0};
    const double probs_hand[6] = {0.0900305732, 0.2447284711, 0.6652409558,
                                  0.5740969930, 0.0776955791, 0.3482074279};
    float probs[6], dl[6];

    double loss = xent_forward(probs, logits, labels, 2, 3);
    CHECK_NEAR(loss, 0.481281442, 1e-6);
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(probs[i], probs_hand[i], 1e-6);
    xent_backward(dl, probs, labels, 2, 3);
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(dl[i], (probs_hand[i] - (i == 2 || i == 3 ? 1.0 : 0.0)) / 2.0, 1e-6);
}

/* The loss as a function of the logits. */
typedef struct Logits {
    float *lg, *pr;
    const uint8_t *lb;
    int N, NC;
} Logits;

static double logits_loss(void *ctx)
{
    Logits *l = ctx;
    return xent_forward(l->pr, l->lg, l->lb, l->N, l->NC);
}

/* dlogits vs central differences of the returned loss: eps = 1e-3 in
 * float, the loss returned in double; rel < 1e-2.  The loss is smooth. */
static void test_fd(void)
{
    enum { N = 4, NC = 10 };
    float lg[N * NC], pr[N * NC], g[N * NC];
    const uint8_t lb[N] = {3, 0, 9, 3};
    Logits l = {.lg = lg, .pr = pr, .lb = lb, .N = N, .NC = NC};
    const GradCheck gc = {.loss = logits_loss, .ctx = &l, .eps = 1e-3f};
    const GradInput in = {.f = lg, .n = N * NC, .grad = g};

    fill(lg, N * NC, -3.0f, 3.0f);
    xent_forward(pr, lg, lb, N, NC);
    xent_backward(g, pr, lb, N, NC);
    CHECK_GRAD(&gc, &in, NULL, 1e-2, "xent dlogits vs FD");
}

/* Huge logits: finite loss (log-sum-exp), probabilities 1 and 0. */
static void test_huge(void)
{
    const float big[6] = {1000.0f, -1000.0f, 0.0f, -1000.0f, 1000.0f, 1000.0f};
    const uint8_t lb1[2] = {1, 1}, lb0[2] = {0, 2};
    float pr[6];
    long bad = 0;

    double l1 = xent_forward(pr, big, lb1, 2, 3);
    CHECK(isfinite(l1));
    /* row 0: 2000; row 1: ln 2 */
    CHECK_NEAR(l1, (2000.0 + log(2.0)) / 2.0, 1e-3);
    double l0 = xent_forward(pr, big, lb0, 2, 3);
    CHECK_NEAR(l0, log(2.0) / 2.0, 1e-6);
    for (int i = 0; i < 6; i++)
        bad += !isfinite(pr[i]);
    CHECK_INT(bad, ==, 0);
    CHECK_NEAR(pr[0], 1.0, 1e-7);
    CHECK_NEAR(pr[4], 0.5, 1e-7);
}

/* xent_correct: the first maximum wins a tie. */
static void test_correct(void)
{
    const float lg[9] = {1, 3, 3, 5, 5, 5, -1, -2, -1};
    const uint8_t first[3] = {1, 0, 0}, second[3] = {2, 1, 2}, mixed[3] = {1, 2, 0};

    CHECK_INT(xent_correct(lg, first, 3, 3), ==, 3);
    CHECK_INT(xent_correct(lg, second, 3, 3), ==, 0);
    CHECK_INT(xent_correct(lg, mixed, 3, 3), ==, 2);
}

int main(void)
{
    test_hand();
    test_fd();
    test_huge();
    test_correct();
    return check_report();
}
