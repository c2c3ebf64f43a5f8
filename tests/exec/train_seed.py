#!/usr/bin/env python3
"""train_seed.py: a small PyTorch training script shaped like the seed
article's (the reference EnhancedCNN, Adam, a DataLoader with num_workers),
for the tests of `cnntop exec`.  Random 28x28 images, so it needs no data
files; --slow SECONDS makes every sample that slow to load (a deliberately
loader-bound run).  It prints its own throughput last, as
"script: N images in S s: R images/s", timed from the first batch it
receives to the end of the last step, so that cnntop's figure can be
compared with it.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

# The reference model, as bench/torch_ref.py (cnntop's PyTorch peer) has it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from torch_ref import EnhancedCNN  # noqa: E402


class RandomImages(torch.utils.data.Dataset):
    """n images of 28x28, normalised as MNIST's; each load sleeps `slow` s."""

    def __init__(self, n, slow):
        g = torch.Generator().manual_seed(1)
        self.x = torch.randint(0, 256, (n, 1, 28, 28), generator=g, dtype=torch.uint8)
        self.y = torch.randint(0, 10, (n,), generator=g)
        self.slow = slow

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        if self.slow:
            time.sleep(self.slow)
        return (self.x[i].float() / 255 - 0.1307) / 0.3081, self.y[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--images", type=int, default=512)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--slow", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    loader = torch.utils.data.DataLoader(RandomImages(a.images, a.slow), batch_size=a.batch,
                                         shuffle=True, num_workers=a.workers)
    model = EnhancedCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, start = 0, None
    for _ in range(a.epochs):
        for x, y in loader:
            if start is None:
                start = time.perf_counter()
            else:
                images += len(y)
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            end = time.perf_counter()
    wall = end - start
    # The first batch only starts the clock: the rate covers the batches
    # received after it, over the time from its arrival to the end of the
    # last step (not the loop's exit: an exhausted multi-worker iterator
    # joins its worker processes first, tens of ms on a loaded machine, and
    # the hook's window ends where the loop asks for the batch after the
    # last, as this one does).
    print(f"script: {images} images in {wall:.3f} s: {images / wall:.1f} images/s", flush=True)


if __name__ == "__main__":
    main()
