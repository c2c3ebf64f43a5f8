/*
 * gemm_native_kern.h: the register-blocked SGEMM of gemm_native.h, written
 * once over a vector abstraction and included by one file per instruction
 * set (gemm_native_avx512.c, gemm_native_avx2.c), each compiled for its
 * set.  Not a header to include anywhere else.
 *
 * The includer defines:
 *   KERN_VW            floats per vector (16, 8)
 *   KERN_NV_MAX        vectors per column strip at most
 *   KERN_MR(nv)        rows per register block for a strip of nv vectors
 *   KernVec, KernMask  the vector and lane-mask types
 *   kern_mask(n)       the mask of the first n lanes (1 <= n <= KERN_VW)
 *   kern_load(p, m), kern_store(p, m, v)   masked load and store
 *   kern_loadu(p), kern_storeu(p, v)       whole-vector load and store
 *   kern_bcast(p)      a float from memory in every lane
 *   kern_set1(x), kern_zero(), kern_fma(a, b, c) (a*b + c)
 *   kern_gather(p, idx, m)   p[idx[i]] in lane i where m says, else 0
 *   kern_transpose(o, ldo, s, lds)   o[k*ldo + j] = s[j*lds + k], j, k < KERN_VW
 *   KernIdx, kern_lanes(stride)   the index vector (0, stride, 2*stride, ...)
 *   KERN_FN            the entry's name, e.g. gemm_native_avx512
 *
 * C (M, N) = op(A) (M, K) * op(B) (K, N) + beta * C, row-major, alpha 1.
 * Strips of nv vectors of C's columns (the last vector masked to N), each
 * cut into blocks of at most KERN_MR(nv) rows whose sums stay in registers over
 * all of K: per k, nv loads of B's row k and one broadcast of A per row.
 * A is read through (row, column) strides, so op(A) = A^T costs nothing;
 * op(B) = B^T is transposed, KERN_KB rows at a time, into B's layout in a
 * buffer on the stack (the only copy): square blocks of KERN_VW through
 * registers, the edges by gathers.  Sums run in k order, one rounding
 * per multiply-add: the result depends on the shapes only.
 */

#define KERN_KB 128  /* rows of B^T gathered at a time */
#define KERN_NB 128  /* columns of B^T gathered at a time */
#define KERN_MR_MAX 12

#define KERN_INLINE static inline __attribute__((always_inline))

/* One block: mr rows (<= KERN_MR_MAX) by nv vectors of columns, the last
 * masked by mt where tail is 1 (else whole).  A(i, k) = A[i*ars + k*acs];
 * B's row k at B + k*ldb.  Whole vectors load and store unmasked: with
 * AVX2's masked forms (vmaskmovps, whose store is slow on AMD's cores)
 * for every vector the Winograd products ran at 48-66 GFLOP/s a thread
 * on a Zen 3, unmasked at 75-92 (bench/RESULTS.md, session 23). */
KERN_INLINE void kern_block(int mr, int nv, int tail, KernMask mt, int K, const float *A,
                            long ars, long acs, const float *B, long ldb, float beta, float *C,
                            long ldc)
{
    KernVec acc[KERN_MR_MAX][KERN_NV_MAX];

    #pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            acc[r][v] = kern_zero();
    for (int k = 0; k < K; k++) {
        KernVec b[KERN_NV_MAX];
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            b[v] = v + 1 < nv || !tail ? kern_loadu(B + k * ldb + v * KERN_VW)
                                       : kern_load(B + k * ldb + v * KERN_VW, mt);
        #pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            const KernVec a = kern_bcast(A + r * ars + k * acs);
            #pragma GCC unroll 4
            for (int v = 0; v < nv; v++)
                acc[r][v] = kern_fma(a, b[v], acc[r][v]);
        }
    }
    const KernVec vb = kern_set1(beta);
    #pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            float *c = C + r * ldc + v * KERN_VW;
            const int whole = v + 1 < nv || !tail;
            KernVec o = acc[r][v];
            if (beta != 0.0f) /* beta 0: C is not read (it may hold NaNs) */
                o = kern_fma(vb, whole ? kern_loadu(c) : kern_load(c, mt), o);
            if (whole)
                kern_storeu(c, o);
            else
                kern_store(c, mt, o);
        }
}

/* The rows of one strip of nv vectors, in the fewest blocks of at most
 * KERN_MR(nv) rows, their sizes within one of each other (32 rows in
 * blocks of 6 ran a last block of 2, whose few sums wait on the FMAs'
 * latency; 6, 6, 5, 5, 5, 5 keep every block near the register budget).
 * Each (mr, nv, tail) is its own instance of kern_block, with constant
 * loops. */
#define KERN_ROWS_CASE(MR, NV, TAIL)                                                     \
    case MR:                                                                           \
        if ((MR) <= KERN_MR(NV)) /* no instance for blocks the strip never makes */    \
            kern_block(MR, NV, TAIL, mt, K, A + i * ars, ars, acs, B, ldb, beta,         \
                       C + i * ldc, ldc);                                              \
        break;

#define KERN_ROWS(NV, TAIL)                                                                 \
    KERN_INLINE void kern_rows_##NV##_##TAIL(int M, KernMask mt, int K, const float *A,     \
                                             long ars, long acs, const float *B, long ldb,  \
                                             float beta, float *C, long ldc)                \
    {                                                                                       \
        const int nb = (M + KERN_MR(NV) - 1) / KERN_MR(NV);                                 \
        for (int b = 0, i = 0; b < nb; b++) {                                               \
            const int mr = M / nb + (b < M % nb);                                           \
            switch (mr) {                                                                   \
                KERN_ROWS_CASE(1, NV, TAIL) KERN_ROWS_CASE(2, NV, TAIL)                     \
                KERN_ROWS_CASE(3, NV, TAIL) KERN_ROWS_CASE(4, NV, TAIL)                     \
                KERN_ROWS_CASE(5, NV, TAIL) KERN_ROWS_CASE(6, NV, TAIL)                     \
                KERN_ROWS_CASE(7, NV, TAIL) KERN_ROWS_CASE(8, NV, TAIL)                     \
                KERN_ROWS_CASE(9, NV, TAIL) KERN_ROWS_CASE(10, NV, TAIL)                    \
                KERN_ROWS_CASE(11, NV, TAIL) KERN_ROWS_CASE(12, NV, TAIL)                   \
            default: break;                                                                 \
            }                                                                               \
            i += mr;                                                                        \
        }                                                                                   \
    }

KERN_ROWS(1, 0)
KERN_ROWS(1, 1)
KERN_ROWS(2, 0)
KERN_ROWS(2, 1)
#if KERN_NV_MAX >= 3
KERN_ROWS(3, 0)
KERN_ROWS(3, 1)
KERN_ROWS(4, 0)
KERN_ROWS(4, 1)
#endif

/* C (M, N) = op(A) B + beta C for B (K, N) with rows ldb apart. */
static void kern_panel(int M, int N, int K, const float *A, long ars, long acs,
                       const float *B, long ldb, float beta, float *C, long ldc)
{
    const int strip = KERN_NV_MAX * KERN_VW;

    for (int j = 0; j < N; j += strip) {
        const int n = N - j < strip ? N - j : strip, nv = (n + KERN_VW - 1) / KERN_VW;
        const KernMask mt = kern_mask(n - (nv - 1) * KERN_VW);
        const int tail = n % KERN_VW != 0;
#define KERN_STRIP(NV)                                                                   \
    case NV:                                                                             \
        (tail ? kern_rows_##NV##_1 : kern_rows_##NV##_0)(M, mt, K, A, ars, acs, B + j, ldb, \
                                                         beta, C + j, ldc);              \
        break;
        switch (nv) {
            KERN_STRIP(1)
            KERN_STRIP(2)
#if KERN_NV_MAX >= 3
            KERN_STRIP(3)
            KERN_STRIP(4)
#endif
        default: break;
        }
#undef KERN_STRIP
    }
}

/* bt (kb, n), rows ldt apart = (B^T)[k0:k0+kb, j0:j0+n] for B (N, K),
 * rows ldb apart: column j of bt from row j of B.  Square blocks go
 * through registers (a gather per row of bt ran dU's conv3 products 12%
 * slower); a partial block of columns or rows is gathered. */
static void kern_gather_bt(float *bt, int ldt, const float *B, long ldb, int k0, int kb, int j0,
                           int n)
{
    const KernIdx idx = kern_lanes((int)ldb);

    for (int j = 0; j < n; j += KERN_VW) {
        const KernMask m = kern_mask(n - j < KERN_VW ? n - j : KERN_VW);
        const float *src = B + (long)(j0 + j) * ldb + k0;
        int k = 0;
        if (n - j >= KERN_VW)
            for (; k + KERN_VW <= kb; k += KERN_VW)
                kern_transpose(bt + k * ldt + j, ldt, src + k, ldb);
        for (; k < kb; k++)
            kern_store(bt + k * ldt + j, m, kern_gather(src + k, idx, m));
    }
}

void KERN_FN(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B,
             int ldb, float beta, float *C, int ldc)
{
    const long ars = ta ? 1 : lda, acs = ta ? lda : 1;

    if (!tb) {
        kern_panel(M, N, K, A, ars, acs, B, ldb, beta, C, ldc);
        return;
    }
    float bt[KERN_KB * KERN_NB] __attribute__((aligned(64)));
    for (int j0 = 0; j0 < N; j0 += KERN_NB) {
        const int n = N - j0 < KERN_NB ? N - j0 : KERN_NB;
        const int ldt = (n + KERN_VW - 1) / KERN_VW * KERN_VW; /* rows compact, in L1 */
        /* At least one pass, so that K = 0 still gives C = beta C. */
        for (int k0 = 0; k0 == 0 || k0 < K; k0 += KERN_KB) {
            const int kb = K - k0 < KERN_KB ? K - k0 : KERN_KB;
            kern_gather_bt(bt, ldt, B, ldb, k0, kb, j0, n);
            kern_panel(M, n, kb, A + k0 * acs, ars, acs, bt, ldt,
                       k0 == 0 ? beta : 1.0f, C + j0, ldc);
        }
    }
}
