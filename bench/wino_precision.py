#!/usr/bin/python3
"""wino_precision.py [SEED]: how far F(7x7, 3x3) Winograd drifts from the
convolution when its products take bfloat16 operands, against fp32.

Issue 37 allowed a faster way for a part "at the same accuracy", naming
AVX-512 BF16 dot products.  The Winograd products are where that could
apply (vdpbf16ps: two bf16 products per float lane, twice the FP32 FMA
rate).  This measures the accuracy side before any kernel is written.

The transforms are built here from the interpolation points, as
src/nn/wino_transform.h documents them (B^T's rows the coefficients of
prod over l != j of (x - a_l), G's rows (1, a_j, a_j^2) / prod over
l != j of (a_j - a_l), A^T's columns powers of a_j, infinity the last
point).  The script checks the 1-D identity, then runs conv2's and
conv3's shapes on post-BN-ReLU-like inputs (half-normal) and He-scaled
filters, and prints each variant's error against a float64 direct
convolution:
  fp32            V and U in float, products summed in float (cnntop's)
  bf16 V,U        V and U rounded to bfloat16 (round to nearest even),
                  products summed in float, as vdpbf16ps sums them
  bf16 V / bf16 U only one operand rounded
  bf16 direct     the direct convolution of bf16-rounded x and w: what a
                  bf16 convolution without Winograd gets
err/sum|terms| is the error over the sum of the |products| of an output
(layer_wino.h quotes it for fp32); err/rms is the error's RMS over the
output's RMS.
"""
import sys

import numpy as np

POINTS = (1.0, -1.0, 2.0, -2.0, 0.25, -0.25, 0.75, -0.75)
M, R = 7, 3
N = M + R - 1


def poly(roots):
    """Coefficients x^0 .. x^k of the product of (x - a) over roots."""
    c = np.array([1.0])
    for a in roots:
        c = np.convolve(c, [-a, 1.0])
    return c


def transforms():
    bt, g, at = np.zeros((N, N)), np.zeros((N, R)), np.zeros((M, N))
    for j, a in enumerate(POINTS):
        others = [b for b in POINTS if b != a]
        bt[j, :N - 1] = poly(others)
        g[j] = np.array([1.0, a, a * a]) / np.prod([a - b for b in others])
        at[:, j] = [a ** i for i in range(M)]
    bt[N - 1] = poly(POINTS)
    g[N - 1] = (0.0, 0.0, 1.0)
    at[M - 1, N - 1] = 1.0
    return bt, g, at


def bf16(x):
    """x rounded to bfloat16 (nearest, ties to even), kept in float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def winograd(x, w, bt, g, at, round_v, round_u):
    """Padding 1, stride 1; x (n, C, H, W) with H and W whole tiles."""
    n, _, h, wd = x.shape
    oc = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    u = np.einsum("ak,ockl,bl->ocab", g, w, g).astype(np.float32)
    u = bf16(u) if round_u else u
    y = np.zeros((n, oc, h, wd))
    for i in range(h // M):
        for j in range(wd // M):
            d = xp[:, :, M * i:M * i + N, M * j:M * j + N].astype(np.float32)
            v = np.einsum("ak,nckl,bl->ncab", bt, d, bt).astype(np.float32)
            v = bf16(v) if round_v else v
            prod = np.einsum("ncab,ocab->noab", v, u, dtype=np.float32)
            y[:, :, M * i:M * i + M, M * j:M * j + M] = np.einsum(
                "ia,noab,jb->noij", at, prod.astype(np.float64), at)
    return y


def direct(x, w):
    """The convolution in float64, and the sum of |terms| of each output."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, _, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    s = np.zeros_like(y)
    for a in range(R):
        for b in range(R):
            p = xp[:, :, a:a + h, b:b + wd]
            y += np.einsum("nchw,oc->nohw", p, w[:, :, a, b])
            s += np.einsum("nchw,oc->nohw", np.abs(p), np.abs(w[:, :, a, b]))
    return y, s


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rng = np.random.default_rng(seed)
    bt, g, at = transforms()
    d, k = rng.standard_normal(N), rng.standard_normal(R)
    err = np.abs(at @ ((g @ k) * (bt @ d)) - [d[i:i + R] @ k for i in range(M)]).max()
    if err > 1e-12:
        sys.exit(f"wino_precision: the 1-D transforms are not a correlation (error {err:.1e})")
    print(f"seed {seed}; 8 images a layer; error against a float64 direct convolution")
    print(f"{'layer':6s} {'variant':14s} {'err/sum|terms| max':>19s} {'mean':>9s} {'err/rms':>9s}")
    for name, c, oc, h in (("conv2", 32, 64, 14), ("conv3", 64, 128, 7)):
        x = np.maximum(rng.standard_normal((8, c, h, h)), 0.0).astype(np.float32)
        w = (rng.standard_normal((oc, c, R, R)) * np.sqrt(2.0 / (R * R * c))).astype(np.float32)
        ref, s = direct(x, w)
        rows = (("fp32", winograd(x, w, bt, g, at, False, False)),
                ("bf16 V,U", winograd(x, w, bt, g, at, True, True)),
                ("bf16 V", winograd(x, w, bt, g, at, True, False)),
                ("bf16 U", winograd(x, w, bt, g, at, False, True)),
                ("bf16 direct", direct(bf16(x), bf16(w))[0]))
        for label, y in rows:
            e = np.abs(y - ref)
            rms = np.sqrt(np.mean(e ** 2)) / np.sqrt(np.mean(ref ** 2))
            print(f"{name:6s} {label:14s} {np.max(e / s):19.2e} {np.mean(e / s):9.2e} {rms:9.2e}")


if __name__ == "__main__":
    main()
