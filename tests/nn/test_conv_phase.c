/*
 * test_conv_phase.c: the first block's direct convolution in pool phases
 * (layer_conv_phase.h) against the double convolution (nntest.h):
 *   - every phase value of conv_phase_conv (|fast - ref| <= 1e-5 * mag);
 *   - the input moments S, G of conv_phase_moments, and the BN sums
 *     conv_phase_stats_moments makes from them, against sums of the double
 *     conv output;
 *   - conv_phase_dw_routed2 + conv_phase_dw_fold: dW and db of a random pool
 *     gradient routed to random window maxima (some windows without
 *     gradient; junk columns of g hold 1e30, which must be dropped),
 *     against the direct double backward of that routed gradient;
 *   - conv_phase_grad_finish: dW and db of the whole BN backward
 *     dz = a + bx*xhat + k1*r against the direct double backward of dz.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/layer_conv_phase.h"
#include "nntest.h"

/* One shape: inputs, BN constants, pool gradient, the double references. */
typedef struct Phase {
    int OC, N, H, W;
    float *x, *w, *b, *xq, *z[CONV_PHASE_CONV_CH + 1];
    float *gamma, *mean, *invstd, *mdz, *mdzx; /* (OC) */
    float *g, *kf;          /* (OC, N, PH, PW) pool gradient, window phase 0..4 */
    double *yd, *mag;       /* (OC, N, H, W) double conv output, its size */
    double *dwr, *dbr;      /* direct backward of the routed gradient */
    double *dwb, *dbb;      /* direct backward of the BN gradient dz */
} Phase;

/* The routed gradient r (OC, N, H, W) and dz = a + bx*xhat + k1*r. */
static void phase_grads(Phase *p, double *r, double *dz)
{
    const int PH = p->H / 2, PW = p->W / 2;

    for (int oc = 0; oc < p->OC; oc++)
        for (int n = 0; n < p->N; n++)
            for (int h = 0; h < p->H; h++)
                for (int w = 0; w < p->W; w++) {
                    size_t at = (((size_t)oc * p->N + n) * p->H + h) * p->W + w;
                    size_t q = (((size_t)oc * p->N + n) * PH + h / 2) * PW + w / 2;
                    double k1 = (double)p->gamma[oc] * p->invstd[oc];
                    double xhat = (p->yd[at] - p->mean[oc]) * p->invstd[oc];
                    r[at] = p->kf[q] == (float)(2 * (h & 1) + (w & 1)) ? p->g[q] : 0.0;
                    dz[at] = -k1 * p->mdz[oc] - k1 * p->mdzx[oc] * xhat + k1 * r[at];
                }
}

static Phase phase_make(int OC, int N, int H, int W)
{
    const size_t nx = (size_t)N * H * W, ny = (size_t)OC * nx, nw = (size_t)OC * 9;
    const size_t np = ny / 4;
    Phase p = {.OC = OC, .N = N, .H = H, .W = W};
    double *xd = dvec(nx), *wd = dvec(nw), *bd = dvec(OC), *dxr = dvec(nx), *dxm = dvec(nx);
    double *dwm = dvec(nw), *r = dvec(ny), *dz = dvec(ny);
    float *c[] = {p.gamma = fvec(OC), p.mean = fvec(OC), p.invstd = fvec(OC),
                  p.mdz = fvec(OC), p.mdzx = fvec(OC)};

    p.x = fvec(nx);
    p.w = fvec(nw);
    p.b = fvec(OC);
    p.xq = fvec(conv_phase_input_floats(H, W));
    for (int k = 0; k <= CONV_PHASE_CONV_CH; k++)
        p.z[k] = fvec(conv_phase_output_floats(H, W));
    p.g = fvec(np);
    p.kf = fvec(np);
    p.yd = dvec(ny);
    p.mag = dvec(ny);
    p.dwr = dvec(nw);
    p.dbr = dvec(OC);
    p.dwb = dvec(nw);
    p.dbb = dvec(OC);
    fill(p.x, nx, -1.0f, 1.0f);
    fill(p.w, nw, -0.5f, 0.5f);
    fill(p.b, OC, -0.2f, 0.2f);
    for (int i = 0; i < 5; i++)
        fill(c[i], OC, 0.2f, 1.5f);
    fill(p.g, np, -1.0f, 1.0f);
    for (size_t i = 0; i < np; i++) /* phases 0..3, or 4: no gradient */
        p.kf[i] = (float)(int)urand(0.0f, 4.999f);
    to_double(xd, p.x, nx);
    to_double(wd, p.w, nw);
    to_double(bd, p.b, OC);
    conv_ref(p.yd, p.mag, xd, wd, bd, 1, OC, N, H, W, 3);
    phase_grads(&p, r, dz);
    conv_bwd_ref(dxr, dxm, p.dwr, dwm, p.dbr, r, xd, wd, 1, OC, N, H, W, 3);
    conv_bwd_ref(dxr, dxm, p.dwb, dwm, p.dbb, dz, xd, wd, 1, OC, N, H, W, 3);
    free(xd); free(wd); free(bd); free(dxr); free(dxm); free(dwm); free(r); free(dz);
    return p;
}

static void phase_free(Phase *p)
{
    free(p->x); free(p->w); free(p->b); free(p->xq);
    for (int c = 0; c <= CONV_PHASE_CONV_CH; c++)
        free(p->z[c]);
    free(p->gamma); free(p->mean); free(p->invstd); free(p->mdz); free(p->mdzx);
    free(p->g); free(p->kf);
    free(p->yd); free(p->mag); free(p->dwr); free(p->dbr); free(p->dwb); free(p->dbb);
}

/* How many phase values of channel oc of image n in z are off the reference. */
static long phase_values_bad(const Phase *p, const float *z, int n, int oc)
{
    const int PH = p->H / 2, PW = p->W / 2, n4 = PH * CONV_PHASE_Q;
    const size_t o = ((size_t)oc * p->N + n) * p->H * p->W;
    long bad = 0;

    for (int k = 0; k < 4; k++)
        for (int ph = 0; ph < PH; ph++)
            for (int q = 0; q < PW; q++) {
                const size_t zi = (size_t)k * n4 + (size_t)ph * CONV_PHASE_Q + q;
                const size_t at = o + (size_t)(2 * ph + (k >> 1)) * p->W + 2 * q + (k & 1);
                bad += !(fabs(z[zi] - p->yd[at]) <= 1e-5 * p->mag[at]);
            }
    return bad;
}

static void test_conv_values(const Phase *p)
{
    long bad = 0, same = 0, runs = 0;

    for (int n = 0; n < p->N; n++) {
        conv_phase_split(p->xq, p->x + (size_t)n * p->H * p->W, p->H, p->W);
        /* Channels CONV_PHASE_CONV_CH at a time and, for the last ones,
         * fewer (OC = 6 gives 4 + 2); each pass's last channel made
         * alone gives the same bits as in the pass. */
        for (int oc = 0; oc < p->OC; oc += CONV_PHASE_CONV_CH) {
            const int nc = p->OC - oc < CONV_PHASE_CONV_CH ? p->OC - oc : CONV_PHASE_CONV_CH;
            conv_phase_conv(p->z, nc, p->xq, p->w + oc * 9, p->b + oc, p->H, p->W);
            for (int c = 0; c < nc; c++)
                bad += phase_values_bad(p, p->z[c], n, oc + c);
            float *alone[1] = {p->z[CONV_PHASE_CONV_CH]};
            conv_phase_conv(alone, 1, p->xq, p->w + (oc + nc - 1) * 9, p->b + oc + nc - 1, p->H,
                            p->W);
            same += memcmp(alone[0], p->z[nc - 1], conv_phase_output_floats(p->H, p->W) *
                                                      sizeof(float)) == 0;
            runs++;
        }
    }
    CHECK_INT(bad, ==, 0);
    CHECK_INT(same, ==, runs);
}

/* The moments in double from the padded input directly. */
static void moments_ref(double *mom, const Phase *p)
{
    for (int n = 0; n < p->N; n++)
        for (int h = 0; h < p->H; h++)
            for (int w = 0; w < p->W; w++) {
                double X[9];
                for (int t = 0; t < 9; t++) {
                    int ih = h + t / 3 - 1, iw = w + t % 3 - 1;
                    int in = ih >= 0 && ih < p->H && iw >= 0 && iw < p->W;
                    X[t] = in ? p->x[((size_t)n * p->H + ih) * p->W + iw] : 0.0;
                }
                for (int s = 0; s < 9; s++) {
                    mom[s] += X[s];
                    for (int t = 0; t < 9; t++)
                        mom[9 + 9 * s + t] += X[s] * X[t];
                }
            }
}

static void test_moments(const Phase *p, double *mom)
{
    const long M = (long)p->N * p->H * p->W;
    double ref[CONV_PHASE_MOMENTS] = {0}, *acc = dvec(2 * (size_t)p->OC);
    Worst em = {0}, es = {0};

    conv_phase_moments(mom, p->xq, p->x, p->N, p->H, p->W);
    moments_ref(ref, p);
    for (int e = 0; e < CONV_PHASE_MOMENTS; e++)
        worst_add(&em, e, mom[e], ref[e]);
    CHECK_WORST(&em, 1e-5, "conv phase moments vs double");
    conv_phase_stats_moments(acc, mom, p->w, p->b, p->OC, M);
    for (int oc = 0; oc < p->OC; oc++) {
        double s = 0.0, ss = 0.0;
        for (long i = 0; i < M; i++) {
            double y = p->yd[(size_t)oc * M + (size_t)i];
            s += y;
            ss += y * y;
        }
        worst_add(&es, 2 * oc, acc[2 * oc], s);
        worst_add(&es, 2 * oc + 1, acc[2 * oc + 1], ss);
    }
    CHECK_WORST(&es, 1e-5, "conv phase BN sums from moments vs double");
    free(acc);
}

/* One channel's gradient rows in phase layout, junk columns 1e30. */
static void rows_of(float *g, float *kf, const Phase *p, int oc, int n)
{
    const int PH = p->H / 2, PW = p->W / 2;
    const size_t o = ((size_t)oc * p->N + n) * PH * PW;

    for (int ph = 0; ph < PH; ph++)
        for (int q = 0; q < CONV_PHASE_Q; q++) {
            g[ph * CONV_PHASE_Q + q] = q < PW ? p->g[o + (size_t)ph * PW + q] : 1e30f;
            kf[ph * CONV_PHASE_Q + q] = q < PW ? p->kf[o + (size_t)ph * PW + q] : 0.0f;
        }
}

static void test_dw(const Phase *p, const double *mom)
{
    const size_t nr = (size_t)(p->H / 2) * CONV_PHASE_Q;
    float *lanes = fvec((size_t)p->OC * CONV_PHASE_DW_LANES), *dw = fvec((size_t)p->OC * 9);
    float *db = fvec((size_t)p->OC), *g = fvec(2 * nr), *kf = fvec(2 * nr);
    /* A sum of some 2000 float products of size ~0.3 is off by ~1e-6
     * absolute, whatever it comes to: a dW near 0 is compared at a floor. */
    Worst ew = {.floor = 1e-2}, eb = {0}, fw = {.floor = 1e-2}, fb = {0};

    CHECK_INT(p->OC % 2, ==, 0);
    for (int n = 0; n < p->N; n++) {
        conv_phase_split(p->xq, p->x + (size_t)n * p->H * p->W, p->H, p->W);
        for (int oc = 0; oc < p->OC; oc += 2) {
            rows_of(g, kf, p, oc, n);
            rows_of(g + nr, kf + nr, p, oc + 1, n);
            conv_phase_dw_routed2(lanes + (size_t)oc * CONV_PHASE_DW_LANES,
                                  lanes + (size_t)(oc + 1) * CONV_PHASE_DW_LANES, g, g + nr, kf,
                                  kf + nr, p->xq, p->H, p->W);
        }
    }
    for (int oc = 0; oc < p->OC; oc++)
        conv_phase_dw_fold(dw + oc * 9, db + oc, lanes + (size_t)oc * CONV_PHASE_DW_LANES, p->W);
    for (int i = 0; i < p->OC * 9; i++)
        worst_add(&ew, i, dw[i], p->dwr[i]);
    for (int i = 0; i < p->OC; i++)
        worst_add(&eb, i, db[i], p->dbr[i]);
    CHECK_WORST(&ew, 1e-4, "conv phase routed dw vs double");
    CHECK_WORST(&eb, 1e-4, "conv phase routed db vs double");
    conv_phase_grad_finish(dw, db, mom, p->w, p->b, p->gamma, p->mean, p->invstd, p->mdz,
                           p->mdzx, p->OC, (long)p->N * p->H * p->W);
    for (int i = 0; i < p->OC * 9; i++)
        worst_add(&fw, i, dw[i], p->dwb[i]);
    for (int i = 0; i < p->OC; i++)
        worst_add(&fb, i, db[i], p->dbb[i]);
    CHECK_WORST(&fw, 1e-4, "conv phase BN dw (grad_finish) vs double");
    CHECK_WORST(&fb, 1e-4, "conv phase BN db (grad_finish) vs double");
    free(lanes); free(dw); free(db); free(g); free(kf);
}

static void test_conv_phase(int OC, int N, int H, int W)
{
    Phase p = phase_make(OC, N, H, W);
    double mom[CONV_PHASE_MOMENTS] = {0};

    test_conv_values(&p);
    test_moments(&p, mom);
    test_dw(&p, mom);
    phase_free(&p);
}

int main(void)
{
    test_conv_phase(4, 2, 8, 8);
    test_conv_phase(6, 2, 12, 12); /* a pass of 4 channels and one of 2 */
    test_conv_phase(32, 3, 28, 28); /* the model's first block */
    return check_report();
}
