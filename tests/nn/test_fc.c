/*
 * test_fc.c: the fully connected layer (layer_fc.h), on each GEMM path this
 * CPU runs: the forward against a loop, the backward against central
 * differences, column-block splits against one block (float tolerance: the
 * BLAS kernel depends on the block width), the engine's split repeated in
 * another order (bitwise), and beta 0/1 of the weight gradient.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "nn/gemm.h"
#include "nn/layer_fc.h"
#include "nntest.h"

/* The path the layer's products run on (each the tests run on). */
static GemmPath path;

/* out = inp w^T + b in double; mag (optional) = |b| + sum |inp||w|. */
static void fc_ref(double *out, double *mag, const double *inp, const double *w,
                   const double *b, int N, int IN, int OUT)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OUT; o++) {
            double s = b[o], m = fabs(b[o]);
            for (int i = 0; i < IN; i++) {
                double t = inp[(size_t)n * IN + i] * w[(size_t)o * IN + i];
                s += t;
                m += fabs(t);
            }
            out[(size_t)n * OUT + o] = s;
            if (mag)
                mag[(size_t)n * OUT + o] = m;
        }
}

/* One shape: inputs in float and double, the layer's results over one
 * block, and the magnitudes of its sums. */
typedef struct Fc {
    int N, IN, OUT;
    size_t ni, nw, no;
    float *inp, *w, *b, *R, *out, *dw, *db, *dinp;
    double *id, *wd, *bd, *Rd, *od, *mag;
} Fc;

static Fc fc_make(int N, int IN, int OUT)
{
    Fc f = {.N = N, .IN = IN, .OUT = OUT, .ni = (size_t)N * IN, .nw = (size_t)OUT * IN,
            .no = (size_t)N * OUT};

    f.inp = fvec(f.ni);
    f.w = fvec(f.nw);
    f.b = fvec(OUT);
    f.R = fvec(f.no);
    f.out = fvec(f.no);
    f.dw = fvec(f.nw);
    f.db = fvec(OUT);
    f.dinp = fvec(f.ni);
    f.id = dvec(f.ni);
    f.wd = dvec(f.nw);
    f.bd = dvec(OUT);
    f.Rd = dvec(f.no);
    f.od = dvec(f.no);
    f.mag = dvec(f.no);
    fill(f.inp, f.ni, -1.0f, 1.0f);
    fill(f.w, f.nw, -0.2f, 0.2f);
    fill(f.b, OUT, -0.5f, 0.5f);
    fill(f.R, f.no, -1.0f, 1.0f);
    to_double(f.id, f.inp, f.ni);
    to_double(f.wd, f.w, f.nw);
    to_double(f.bd, f.b, OUT);
    to_double(f.Rd, f.R, f.no);
    return f;
}

static void fc_free(Fc *f)
{
    free(f->inp); free(f->w); free(f->b); free(f->R); free(f->out); free(f->dw); free(f->db);
    free(f->dinp); free(f->id); free(f->wd); free(f->bd); free(f->Rd); free(f->od);
    free(f->mag);
}

/* The layer over column blocks: outputs and weight gradients in blocks of
 * oblk output columns, the input gradient in blocks of iblk input columns,
 * the blocks in order or in reverse.  out, dw and dinp start as NaN: a
 * block left out shows. */
static void fc_blocks(const Fc *f, float *out, float *dw, float *db, float *dinp, int oblk,
                      int iblk, int reverse)
{
    const int no = (f->OUT + oblk - 1) / oblk, ni = (f->IN + iblk - 1) / iblk;

    for (size_t i = 0; i < f->no; i++)
        out[i] = NAN;
    for (size_t i = 0; i < f->nw; i++)
        dw[i] = NAN;
    for (size_t i = 0; i < f->ni; i++)
        dinp[i] = NAN;
    for (int jj = 0; jj < no; jj++) {
        int j = reverse ? no - 1 - jj : jj, o0 = j * oblk;
        int o1 = o0 + oblk < f->OUT ? o0 + oblk : f->OUT;
        fc_forward(out, f->inp, f->w, f->b, f->N, f->IN, f->OUT, o0, o1, path);
        fc_backward_weights(dw, db, f->R, f->inp, f->N, f->IN, f->OUT, o0, o1, 0.0f, path);
    }
    for (int jj = 0; jj < ni; jj++) {
        int j = reverse ? ni - 1 - jj : jj, i0 = j * iblk;
        int i1 = i0 + iblk < f->IN ? i0 + iblk : f->IN;
        fc_backward_input(dinp, f->R, f->w, f->N, f->IN, f->OUT, i0, i1, path);
    }
}

/* The forward against the loop: |err| <= 1e-5 * (|b| + sum |x||w|). */
static void check_forward(Fc *f)
{
    double worst = 0.0;
    char what[96];

    for (size_t i = 0; i < f->no; i++)
        f->out[i] = NAN;
    fc_forward(f->out, f->inp, f->w, f->b, f->N, f->IN, f->OUT, 0, f->OUT, path);
    fc_ref(f->od, f->mag, f->id, f->wd, f->bd, f->N, f->IN, f->OUT);
    for (size_t i = 0; i < f->no; i++)
        worst = maxerr(worst, fabs(f->out[i] - f->od[i]) / (f->mag[i] + 1e-30));
    snprintf(what, sizeof what, "fc fwd N%d IN%d OUT%d vs loop", f->N, f->IN, f->OUT);
    CHECK_MAXERR(worst, 1e-5, what);
}

/* Accumulates |terms| of the weight, bias and input gradients' sums. */
static void grad_magnitudes(const Fc *f, double *mw, double *mb, double *mi)
{
    for (int n = 0; n < f->N; n++)
        for (int o = 0; o < f->OUT; o++) {
            double r = fabs(f->R[(size_t)n * f->OUT + o]);
            mb[o] += r;
            for (int i = 0; i < f->IN; i++) {
                mw[(size_t)o * f->IN + i] += r * fabs(f->inp[(size_t)n * f->IN + i]);
                mi[(size_t)n * f->IN + i] += r * fabs(f->w[(size_t)o * f->IN + i]);
            }
        }
}

static double worst_scaled(double worst, const float *a, const float *b, const double *mag,
                           size_t n)
{
    for (size_t i = 0; i < n; i++)
        worst = maxerr(worst, fabs(a[i] - b[i]) / (mag[i] + 1e-30));
    return worst;
}

/*
 * Column blocks.  Each output (or dinp) column is the same dot product
 * whatever the block, but OpenBLAS picks its kernel and K blocking by the
 * matrix sizes (0.3.21 here: 1- or 7-wide blocks of the 5x37x23 case and
 * every block of the 8x1152x256 layer differ from the full width, up to
 * thousands of ulps on near-cancelling sums), so other splits are compared
 * with the float tolerance: |a - b| <= 1e-5 * sum |terms|.  What the
 * engine relies on is bitwise: its own split (32 outputs, 64 inputs per
 * item, whatever the thread count) gives the same bits again, in any block
 * order, and covers every column.
 */
static void check_blocks(const Fc *f)
{
    static const int blks[4] = {1, 7, 32, 64};
    float *out2 = fvec(f->no), *dw2 = fvec(f->nw), *db2 = fvec(f->OUT), *dinp2 = fvec(f->ni);
    float *out3 = fvec(f->no), *dw3 = fvec(f->nw), *db3 = fvec(f->OUT), *dinp3 = fvec(f->ni);
    double *mw = dvec(f->nw), *mb = dvec(f->OUT), *mi = dvec(f->ni);
    double wf = 0.0, ww = 0.0, wi = 0.0;
    long nbits = 0;

    grad_magnitudes(f, mw, mb, mi);
    for (int k = 0; k < 4; k++) {
        fc_blocks(f, out2, dw2, db2, dinp2, blks[k], blks[k], 0);
        nbits += memcmp(f->out, out2, f->no * sizeof *out2) != 0;
        nbits += memcmp(f->dw, dw2, f->nw * sizeof *dw2) != 0;
        nbits += memcmp(f->db, db2, (size_t)f->OUT * sizeof *db2) != 0;
        nbits += memcmp(f->dinp, dinp2, f->ni * sizeof *dinp2) != 0;
        wf = worst_scaled(wf, out2, f->out, f->mag, f->no);
        ww = worst_scaled(ww, dw2, f->dw, mw, f->nw);
        ww = worst_scaled(ww, db2, f->db, mb, (size_t)f->OUT);
        wi = worst_scaled(wi, dinp2, f->dinp, mi, f->ni);
    }
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  fc N%d IN%d OUT%d splits: %ld of 16 not bitwise; worst "
                        "fwd %.3g, weights %.3g, input %.3g\n",
                f->N, f->IN, f->OUT, nbits, wf, ww, wi);
    CHECK(wf <= 1e-5);
    CHECK(ww <= 1e-5);
    CHECK(wi <= 1e-5);

    /* the engine's split, forward order and reverse order: same bits */
    fc_blocks(f, out2, dw2, db2, dinp2, 32, 64, 0);
    fc_blocks(f, out3, dw3, db3, dinp3, 32, 64, 1);
    CHECK(memcmp(out2, out3, f->no * sizeof *out2) == 0);
    CHECK(memcmp(dw2, dw3, f->nw * sizeof *dw2) == 0);
    CHECK(memcmp(db2, db3, (size_t)f->OUT * sizeof *db2) == 0);
    CHECK(memcmp(dinp2, dinp3, f->ni * sizeof *dinp2) == 0);
    free(out2); free(dw2); free(db2); free(dinp2);
    free(out3); free(dw3); free(db3); free(dinp3);
    free(mw); free(mb); free(mi);
}

/* The loss of the finite differences: L = sum(out * R) in double. */
static double fc_loss(void *ctx)
{
    Fc *f = ctx;

    fc_ref(f->od, NULL, f->id, f->wd, f->bd, f->N, f->IN, f->OUT);
    return ddot(f->od, f->Rd, f->no);
}

/* The backward against central differences of fc_loss, eps = 1e-3 in
 * double (linear: exact), rel < 1e-3. */
static void check_fd(Fc *f)
{
    const GradCheck gc = {.loss = fc_loss, .ctx = f, .eps = 1e-3};
    const GradInput in[3] = {{.d = f->wd, .n = f->nw, .grad = f->dw},
                             {.d = f->bd, .n = (size_t)f->OUT, .grad = f->db},
                             {.d = f->id, .n = f->ni, .grad = f->dinp}};
    static const char *const names[3] = {"fc dw   vs FD", "fc db   vs FD", "fc dinp vs FD"};

    for (int a = 0; a < 3; a++)
        CHECK_GRAD(&gc, &in[a], NULL, 1e-3, names[a]);
}

/* beta = 0 overwrites garbage, beta = 1 adds the same again. */
static void check_beta(const Fc *f)
{
    float *dw2 = fvec(f->nw), *db2 = fvec(f->OUT);
    Worst e0 = {0}, e1 = {0};

    for (size_t i = 0; i < f->nw; i++)
        dw2[i] = -2.0e30f;
    for (int i = 0; i < f->OUT; i++)
        db2[i] = 2.0e30f;
    fc_backward_weights(dw2, db2, f->R, f->inp, f->N, f->IN, f->OUT, 0, f->OUT, 0.0f, path);
    for (size_t i = 0; i < f->nw; i++)
        worst_add(&e0, (long)i, dw2[i], f->dw[i]);
    for (int i = 0; i < f->OUT; i++)
        worst_add(&e0, (long)(f->nw + i), db2[i], f->db[i]);
    fc_backward_weights(dw2, db2, f->R, f->inp, f->N, f->IN, f->OUT, 0, f->OUT, 1.0f, path);
    for (size_t i = 0; i < f->nw; i++)
        worst_add(&e1, (long)i, dw2[i], 2.0 * f->dw[i]);
    for (int i = 0; i < f->OUT; i++)
        worst_add(&e1, (long)(f->nw + i), db2[i], 2.0 * f->db[i]);
    CHECK_WORST(&e0, 0.0, "fc beta=0 overwrites");
    CHECK_WORST(&e1, 1e-6, "fc beta=1 accumulates (2x)");
    free(dw2);
    free(db2);
}

/* The forward, the column blocks, and when `fd` the finite differences
 * and beta (small shapes only: the differences cost N*IN*OUT each). */
static void test_fc_case(int N, int IN, int OUT, int fd)
{
    Fc f = fc_make(N, IN, OUT);

    check_forward(&f);
    fc_backward_weights(f.dw, f.db, f.R, f.inp, N, IN, OUT, 0, OUT, 0.0f, path);
    fc_backward_input(f.dinp, f.R, f.w, N, IN, OUT, 0, IN, path);
    check_blocks(&f);
    if (fd) {
        check_fd(&f);
        check_beta(&f);
    }
    fc_free(&f);
}

int main(void)
{
    GemmPath paths[3];
    int npaths;

    gemm_init(); /* one OpenBLAS thread, as in training */
    nntest_gemm_paths(paths, &npaths);
    for (int i = 0; i < npaths; i++) {
        path = paths[i];
        printf("test_fc: products on %s\n", gemm_path_name(path));
        test_fc_case(5, 37, 23, 1);
        test_fc_case(3, 70, 10, 1);
        test_fc_case(8, 1152, 256, 0); /* the model's first fc */
        test_fc_case(8, 256, 128, 0);
        test_fc_case(8, 128, 10, 0);
        test_fc_case(64, 1152, 256, 0); /* its batch 64: K = 64 in the weights' product */
    }
    return check_report();
}
