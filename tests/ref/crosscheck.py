#!/usr/bin/env python3
"""Cross-check one cnntop training step against PyTorch.

    python3 crosscheck.py DUMPFILE [--tol 1e-3] [--threads T]

DUMPFILE is written by tests/dump_step (format: tests/ref/README.md).  This
script builds the reference "EnhancedCNN" in PyTorch, loads cnntop's initial
weights and BatchNorm running statistics, replays cnntop's dropout keep masks
(h = relu(z) * mask * 2 instead of nn.Dropout), runs one train-mode
forward/backward on the same batch in float32 (and in float64 as a sanity
reference) and one torch.optim.Adam(lr=1e-3) step, then compares with
cnntop's numbers:

  input    x against torchvision's ToTensor + Normalize((0.1307,), (0.3081,))
  forward  logits, loss
  grad     every parameter's gradient
  running  BatchNorm running statistics after the step
  step1    every parameter after one Adam step (torch's own gradients)
  adam     cnntop's Adam update against torch.optim.Adam fed cnntop's own
           gradients (compares the update p1 - p0, so it tests the optimiser
           alone, free of gradient rounding)

Metric: rel err = max|cnntop - torch| / max(max|torch|, tiny), per tensor,
against the float32 run; pass when below --tol (1e-3).  Where PyTorch's own
float32 result is the inaccurate one (its conv1 weight gradient reaches
~5e-4 at batch 64 while cnntop stays ~1e-5 of float64), a tensor also
passes when within --tol of the float64 run; the table says "(f64)" then.

Exceptions, because float32 rounding, not the model, decides them:
  grad.convN.bias   BatchNorm follows the conv, so d loss / d bias = 0
                    exactly and both sides give rounding noise.  Passes when
                    max|cnntop grad| <= max(1e-4 * max|grad.convN.weight|,
                    2 * max|torch float32 grad|).
  step1.*           Adam's first step moves an element by lr * g / (|g| + eps)
                    with eps = 1e-8, so for |g| near eps the rounding of g
                    decides the step (anything in [-lr, lr]).  Elements whose
                    exact (float64) gradient is nonzero but below
                    1e-4 * max|grad| (all of a conv bias) pass when cnntop and
                    torch each moved them by at most 1.01 * lr; the others are
                    compared by rel err.  The "adam" rows check the optimiser
                    itself exactly, on identical gradients.

Exit status: 0 all pass, 1 any fail (or an unreadable file), 77 when torch
(or numpy) cannot be imported.  Uses only torch and numpy.
"""

import argparse
import collections
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except Exception as e:  # ImportError, or a broken install raising anything
    print("crosscheck: SKIP: cannot import torch/numpy with %s: %s"
          % (sys.executable, e))
    sys.exit(77)

LR = 1e-3
TINY = 1e-30
CONV_BIAS_GRAD_FACTOR = 1e-4   # conv bias grad noise floor, x max|grad weight|
CONV_BIAS_TORCH_FACTOR = 2.0   # ... or twice torch float32's own noise
RESOLVED = 1e-4                # step1: |g| below this x max|g| is noise-driven
STEP_MOVE_FACTOR = 1.01        # step1: such elements move at most 1.01 lr

PARAM_NAMES = [
    "conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias",
    "conv2.weight", "conv2.bias", "bn2.weight", "bn2.bias",
    "conv3.weight", "conv3.bias", "bn3.weight", "bn3.bias",
    "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
    "fc3.weight", "fc3.bias",
]
RUNNING_NAMES = [
    "bn1.running_mean", "bn1.running_var",
    "bn2.running_mean", "bn2.running_var",
    "bn3.running_mean", "bn3.running_var",
]
CONV_BIASES = ("conv1.bias", "conv2.bias", "conv3.bias")
DTYPES = {"f32": np.dtype("<f4"), "u8": np.dtype("u1"), "i64": np.dtype("<i8")}


class FormatError(Exception):
    pass


def read_tensors(path):
    """name -> numpy array, from a CNNTOP-TENSORS 1 file."""
    out = collections.OrderedDict()
    with open(path, "rb") as f:
        if f.readline() != b"CNNTOP-TENSORS 1\n":
            raise FormatError("%s: not a CNNTOP-TENSORS 1 file" % path)
        while True:
            line = f.readline()
            if not line:
                raise FormatError("%s: truncated (no END line)" % path)
            if line == b"END\n":
                break
            parts = line.decode("ascii", "replace").split()
            if len(parts) < 3 or parts[1] not in DTYPES:
                raise FormatError("%s: bad header line %r" % (path, line[:80]))
            name, dt, ndim = parts[0], DTYPES[parts[1]], int(parts[2])
            dims = tuple(int(d) for d in parts[3:])
            if len(dims) != ndim or any(d < 0 for d in dims):
                raise FormatError("%s: bad dims in %r" % (path, line[:80]))
            n = int(np.prod(dims, dtype=np.int64)) if ndim else 1
            raw = f.read(n * dt.itemsize)
            if len(raw) != n * dt.itemsize:
                raise FormatError("%s: tensor %s truncated" % (path, name))
            if name in out:
                raise FormatError("%s: tensor %s appears twice" % (path, name))
            out[name] = np.frombuffer(raw, dtype=dt).reshape(dims).copy()
        if f.read(1):
            raise FormatError("%s: data after END" % path)
    return out


class EnhancedCNN(nn.Module):
    """The reference model; dropout is replayed from given keep masks."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.bn3 = nn.BatchNorm2d(128)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(128 * 3 * 3, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x, keep1, keep2):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        x = self.pool(F.relu(self.bn3(self.conv3(x))))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x)) * (keep1 * 2)  # Dropout(0.5), cnntop's mask
        x = F.relu(self.fc2(x)) * (keep2 * 2)
        return self.fc3(x)


def run_torch(t, dtype):
    """One train step in PyTorch at `dtype`; returns name -> numpy array."""
    model = EnhancedCNN()
    sd = {k: torch.from_numpy(t[k]) for k in PARAM_NAMES + RUNNING_NAMES}
    for i in (1, 2, 3):
        sd["bn%d.num_batches_tracked" % i] = torch.tensor(0, dtype=torch.long)
    model.load_state_dict(sd, strict=True)
    model.to(dtype)
    model.train()
    x = torch.from_numpy(t["x"]).to(dtype)
    labels = torch.from_numpy(t["labels"]).long()
    keep1 = torch.from_numpy(t["mask.fc1"]).to(dtype)
    keep2 = torch.from_numpy(t["mask.fc2"]).to(dtype)

    logits = model(x, keep1, keep2)
    loss = F.cross_entropy(logits, labels)  # mean over the batch
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    opt.zero_grad()
    loss.backward()

    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    r = {"logits": logits.detach().numpy().copy(),
         "loss": np.array([loss.item()])}
    for k in PARAM_NAMES:
        r["grad." + k] = params[k].grad.detach().numpy().copy()
    for k in RUNNING_NAMES:
        r["after." + k] = buffers[k].detach().numpy().copy()
    opt.step()
    for k in PARAM_NAMES:
        r["step1." + k] = params[k].detach().numpy().copy()
    return r


def adam_with_grads(t):
    """torch.optim.Adam's first step (float32) fed cnntop's own gradients."""
    ps = [torch.nn.Parameter(torch.from_numpy(t[k].copy())) for k in PARAM_NAMES]
    for p, k in zip(ps, PARAM_NAMES):
        p.grad = torch.from_numpy(t["grad." + k].copy())
    torch.optim.Adam(ps, lr=LR).step()
    return {k: p.detach().numpy().copy() for p, k in zip(ps, PARAM_NAMES)}


def torch_normalize_lut():
    """ToTensor + Normalize((0.1307,), (0.3081,)) of every pixel value."""
    p = torch.arange(256, dtype=torch.uint8).float().div(255)
    return p.sub_(0.1307).div_(0.3081).numpy()


def maxabs(a):
    return float(np.max(np.abs(a))) if a.size else 0.0


def diff(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise FormatError("shape mismatch %s vs %s" % (a.shape, b.shape))
    return maxabs(a - b), maxabs(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump")
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(max(1, args.threads))

    try:
        t = read_tensors(args.dump)
        need = (["x", "labels", "mask.fc1", "mask.fc2", "logits", "loss"]
                + PARAM_NAMES + RUNNING_NAMES
                + ["grad." + k for k in PARAM_NAMES]
                + ["after." + k for k in RUNNING_NAMES]
                + ["step1." + k for k in PARAM_NAMES])
        missing = [k for k in need if k not in t]
        if missing:
            raise FormatError("%s: missing tensors: %s" % (args.dump, ", ".join(missing)))
        ref = run_torch(t, torch.float32)
        ref64 = run_torch(t, torch.float64)
        adam = adam_with_grads(t)
    except (OSError, FormatError, RuntimeError, ValueError) as e:
        print("crosscheck: FAIL: %s" % e)
        return 1

    N = t["x"].shape[0]
    print("crosscheck: %s: batch %d, torch %s (float32; float64 as reference), "
          "tol %.0e" % (args.dump, N, torch.__version__, args.tol))
    print("  keep fraction: fc1 %.3f, fc2 %.3f"
          % (t["mask.fc1"].mean(), t["mask.fc2"].mean()))

    rows = []  # (section, name, max|ref|, max abs, rel, rel64, tol text, ok)
    fails = 0

    def add(section, name, maxref, mabs, rel, rel64, toltext, ok):
        nonlocal fails
        rows.append((section, name, maxref, mabs, rel, rel64, toltext, ok))
        if not ok:
            fails += 1

    # input: every x must be the float32 normalisation of some pixel value
    lut = torch_normalize_lut()
    x = t["x"].reshape(-1)
    pos = np.clip(np.searchsorted(np.sort(lut), x), 0, 255)
    srt = np.sort(lut)
    near = np.minimum(np.abs(srt[pos] - x), np.abs(srt[np.maximum(pos - 1, 0)] - x))
    mabs = float(near.max())
    add("input", "x (vs ToTensor+Normalize)", maxabs(lut), mabs,
        mabs / maxabs(lut), float("nan"), "rel %.0e" % args.tol,
        mabs / maxabs(lut) < args.tol)

    def verdict(rel, rel64):
        if np.isfinite(rel) and rel < args.tol:
            return True, ""
        if np.isfinite(rel64) and rel64 < args.tol:
            return True, " (f64)"
        return False, ""

    def relcheck(section, key, cn, r32, r64):
        mabs, mref = diff(cn, r32)
        rel = mabs / max(mref, TINY)
        mabs64, mref64 = diff(cn, r64)
        rel64 = mabs64 / max(mref64, TINY)
        ok, how = verdict(rel, rel64)
        add(section, key, mref, mabs, rel, rel64, "rel %.0e%s" % (args.tol, how), ok)

    relcheck("forward", "logits", t["logits"], ref["logits"], ref64["logits"])
    relcheck("forward", "loss", t["loss"], ref["loss"], ref64["loss"])

    for k in PARAM_NAMES:
        g = "grad." + k
        if k in CONV_BIASES:
            # The exact value is 0 (ref64 is ~1e-15): judge cnntop's noise,
            # not its difference from torch's noise.
            wmax = maxabs(ref64["grad." + k.replace("bias", "weight")])
            noise_c, noise_t = maxabs(t[g]), maxabs(ref[g])
            tol = max(CONV_BIAS_GRAD_FACTOR * wmax, CONV_BIAS_TORCH_FACTOR * noise_t)
            mabs, mref = diff(t[g], ref[g])
            add("grad", g, mref, noise_c, float("nan"), float("nan"),
                "|g|<=%.1e *" % tol, np.isfinite(noise_c) and noise_c <= tol)
        else:
            relcheck("grad", g, t[g], ref[g], ref64[g])

    for k in RUNNING_NAMES:
        a = "after." + k
        relcheck("running", a, t[a], ref[a], ref64[a])

    # step1: Adam's first step moves an element by lr * g / (|g| + eps), so
    # where |g| is near eps (1e-8) the float32 rounding of g decides the step.
    # Elements whose exact (float64) gradient is below RESOLVED * max|g| are
    # checked only to move by at most 1.01 lr; the others by rel err.
    move_tol = STEP_MOVE_FACTOR * LR
    for k in PARAM_NAMES:
        s = "step1." + k
        g64 = np.abs(ref64["grad." + k])
        # exact zeros (e.g. rows of units that every image dropped) stay in:
        # both sides must then leave the element exactly where it was
        res = (g64 == 0) | (g64 >= RESOLVED * max(maxabs(g64), TINY))
        if k in CONV_BIASES:
            res[...] = False  # true gradient 0: all noise
        nres = int(res.size - res.sum())
        p0 = t[k].astype(np.float64)
        move_c = maxabs((t[s] - p0)[~res]) if nres else 0.0
        move_t = maxabs((ref[s] - p0)[~res]) if nres else 0.0
        moves_ok = move_c <= move_tol and move_t <= move_tol
        if res.any():
            mref = maxabs(ref[s])
            mabs = maxabs((t[s].astype(np.float64) - ref[s])[res])
            mabs64 = maxabs((t[s].astype(np.float64) - ref64[s])[res])
            rel = mabs / max(mref, TINY)
            rel64 = mabs64 / max(maxabs(ref64[s]), TINY)
            ok, how = verdict(rel, rel64)
        else:
            mref, mabs, rel, rel64, ok, how = maxabs(ref[s]), move_c, float("nan"), float("nan"), True, ""
        toltext = "rel %.0e%s" % (args.tol, how) if res.any() else "move<=%.2e" % move_tol
        if nres and res.any():
            toltext += " +%d**" % nres
        elif nres:
            toltext += " *"
        add("step1", s, mref, mabs, rel, rel64, toltext, ok and moves_ok)

    for k in PARAM_NAMES:
        dc = t["step1." + k].astype(np.float64) - t[k]
        dr = adam[k].astype(np.float64) - t[k]
        mabs, mref = diff(dc, dr)
        rel = mabs / max(mref, TINY)
        add("adam", "update " + k, mref, mabs, rel, float("nan"),
            "rel %.0e" % args.tol, np.isfinite(rel) and rel < args.tol)

    print("  %-8s %-32s %11s %11s %11s %11s %-16s %s"
          % ("section", "tensor", "max|torch|", "max abs", "rel err",
             "rel vs f64", "tolerance", "result"))
    for (sec, name, mref, mabs, rel, rel64, toltext, ok) in rows:
        print("  %-8s %-32s %11.4e %11.4e %11.4e %11.4e %-16s %s"
              % (sec, name, mref, mabs, rel, rel64, toltext,
                 "pass" if ok else "FAIL"))
    print("  rel err = max|cnntop - torch f32| / max|torch f32|; \"(f64)\": passed against "
          "torch float64 where torch float32 itself is off.")
    print("  *  conv biases: BatchNorm follows each conv, so their exact gradient is 0 and both "
          "sides give rounding noise;")
    print("     grad.convN.bias passes when max|cnntop grad| <= max(%.0e * max|grad.convN.weight|, "
          "%g * max|torch f32 grad|)" % (CONV_BIAS_GRAD_FACTOR, CONV_BIAS_TORCH_FACTOR))
    print("     (the max abs column shows cnntop's max|grad|); step1.convN.bias passes when cnntop "
          "and torch each moved")
    print("     every element by at most %.2f * lr (Adam's first step moves noise by up to lr)."
          % STEP_MOVE_FACTOR)
    print("  ** step1: +K elements whose exact gradient is nonzero but below %.0e * max|grad| (so "
          "near Adam's eps that float32" % RESOLVED)
    print("     rounding decides their step) are checked by the same move <= %.2f * lr rule, the "
          "rest by rel err." % STEP_MOVE_FACTOR)
    print("  adam: cnntop's update p1-p0 against torch.optim.Adam fed cnntop's own gradients.")

    for col, label in ((4, "vs torch f32"), (5, "vs torch f64")):
        worst = collections.OrderedDict()
        for row in rows:
            sec, name, rel = row[0], row[1], row[col]
            if np.isfinite(rel) and (sec not in worst or rel > worst[sec][1]):
                worst[sec] = (name, rel)
        print("  worst rel err %s: " % label + "; ".join(
            "%s %.2e (%s)" % (sec, v[1], v[0]) for sec, v in worst.items()))
    if fails:
        print("crosscheck: FAIL: %d of %d checks failed" % (fails, len(rows)))
        return 1
    print("crosscheck: PASS: all %d checks" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
