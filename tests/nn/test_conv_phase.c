/*
 * test_conv_phase.c: the first block's direct convolution in pool phases
 * (layer_conv_phase.h), one channel of one image at a time, against the
 * double convolution (nntest.h): every phase value (|fast - ref| <= 1e-5
 * * mag, float rounding), the statistics over the valid outputs, and the
 * weight and bias gradients of L = sum(conv * R) against the direct double
 * backward (junk columns of dz hold a large value that must be ignored).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "nn/layer_conv_phase.h"
#include "nntest.h"

/* One shape: inputs, the double references, the phase buffers. */
typedef struct Phase {
    int OC, N, H, W;
    float *x, *w, *b, *xq, *z[2], *dz, *dw, *db;
    double *yd, *mag, *R, *dwr, *dbr;
    long bad, statbad; /* phase values, statistics off the reference */
} Phase;

static Phase phase_make(int OC, int N, int H, int W)
{
    const size_t nx = (size_t)N * H * W, ny = (size_t)OC * nx, nw = (size_t)OC * 9;
    Phase p = {.OC = OC, .N = N, .H = H, .W = W};
    double *xd = dvec(nx), *wd = dvec(nw), *bd = dvec(OC), *dxr = dvec(nx), *dxm = dvec(nx);
    double *dwm = dvec(nw);

    p.x = fvec(nx);
    p.w = fvec(nw);
    p.b = fvec(OC);
    p.xq = fvec(conv_phase_input_floats(H, W));
    p.z[0] = fvec(conv_phase_output_floats(H, W));
    p.z[1] = fvec(conv_phase_output_floats(H, W));
    p.dz = fvec(conv_phase_output_floats(H, W));
    p.dw = fvec(nw);
    p.db = fvec(OC);
    p.yd = dvec(ny);
    p.mag = dvec(ny);
    p.R = dvec(ny);
    p.dwr = dvec(nw);
    p.dbr = dvec(OC);
    fill(p.x, nx, -1.0f, 1.0f);
    fill(p.w, nw, -0.5f, 0.5f);
    fill(p.b, OC, -0.2f, 0.2f);
    to_double(xd, p.x, nx);
    to_double(wd, p.w, nw);
    to_double(bd, p.b, OC);
    for (size_t i = 0; i < ny; i++)
        p.R[i] = urand(-1.0f, 1.0f);
    conv_ref(p.yd, p.mag, xd, wd, bd, 1, OC, N, H, W, 3);
    conv_bwd_ref(dxr, dxm, p.dwr, dwm, p.dbr, p.R, xd, wd, 1, OC, N, H, W, 3);
    free(xd); free(wd); free(bd); free(dxr); free(dxm); free(dwm);
    return p;
}

static void phase_free(Phase *p)
{
    free(p->x); free(p->w); free(p->b); free(p->xq); free(p->z[0]); free(p->z[1]);
    free(p->dz); free(p->dw); free(p->db);
    free(p->yd); free(p->mag); free(p->R); free(p->dwr); free(p->dbr);
}

/* Channel oc of image n, in phases z: its values against the reference,
 * dz = R there (junk columns 1e30), its statistics, then its dw and db. */
static void phase_channel(Phase *p, const float *z, int n, int oc)
{
    const int PH = p->H / 2, PW = p->W / 2, n4 = PH * CONV_PHASE_Q;
    const size_t o = ((size_t)oc * p->N + n) * p->H * p->W;
    double acc[2] = {0.0, 0.0}, s = 0.0, ss = 0.0, sm = 0.0;

    for (int k = 0; k < 4; k++)
        for (int ph = 0; ph < PH; ph++)
            for (int q = 0; q < CONV_PHASE_Q; q++) {
                const size_t zi = (size_t)k * n4 + (size_t)ph * CONV_PHASE_Q + q;
                if (q >= PW) { /* junk: dz there must not count */
                    p->dz[zi] = 1e30f;
                    continue;
                }
                const size_t at = o + (size_t)(2 * ph + (k >> 1)) * p->W + 2 * q + (k & 1);
                p->bad += !(fabs(z[zi] - p->yd[at]) <= 1e-5 * p->mag[at]);
                p->dz[zi] = (float)p->R[at];
                s += p->yd[at];
                ss += p->yd[at] * p->yd[at];
                sm += p->mag[at] * p->mag[at];
            }
    conv_phase_stats(acc, z, p->H, p->W);
    p->statbad += !(fabs(acc[0] - s) <= 1e-5 * sm + 1e-9);
    p->statbad += !(fabs(acc[1] - ss) <= 1e-4 * sm + 1e-9);
    conv_phase_dw(p->dw + oc * 9, p->db + oc, p->dz, p->xq, p->H, p->W);
}

static void test_conv_phase(int OC, int N, int H, int W)
{
    Phase p = phase_make(OC, N, H, W);
    Worst ew = {0}, eb = {0};
    char what[96];

    for (int n = 0; n < N; n++) {
        conv_phase_split(p.xq, p.x + (size_t)n * H * W, H, W);
        for (int oc = 0; oc < OC; oc++) {
            /* Channels two at a time, and an odd OC's last alone. */
            if (oc % 2 == 0)
                conv_phase_conv(p.z[0], oc + 1 < OC ? p.z[1] : NULL, p.xq, p.w + oc * 9,
                                p.b + oc, H, W);
            phase_channel(&p, p.z[oc % 2], n, oc);
        }
    }
    CHECK_INT(p.bad, ==, 0);
    CHECK_INT(p.statbad, ==, 0);
    for (int i = 0; i < OC * 9; i++)
        worst_add(&ew, i, p.dw[i], p.dwr[i]);
    for (int i = 0; i < OC; i++)
        worst_add(&eb, i, p.db[i], p.dbr[i]);
    snprintf(what, sizeof what, "conv phase dw vs double OC%d N%d %dx%d", OC, N, H, W);
    CHECK_WORST(&ew, 1e-4, what);
    snprintf(what, sizeof what, "conv phase db vs double OC%d N%d %dx%d", OC, N, H, W);
    CHECK_WORST(&eb, 1e-4, what);
    phase_free(&p);
}

int main(void)
{
    test_conv_phase(3, 2, 8, 8);
    test_conv_phase(32, 3, 28, 28); /* the model's first block */
    return check_report();
}
