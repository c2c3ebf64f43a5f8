#!/usr/bin/python3
"""The PyTorch peer of cnntop: the same EnhancedCNN, trained the way the
seed article trained it, with the data already in tensors (its most
favourable input path: no DataLoader workers, no decoding per step).

usage: torch_ref.py --data DIR --batch N [--limit N] [--threads N] [--seed N]
Prints one line of key=value figures for bench/bench.sh to read.
"""
import argparse, gzip, os, resource, sys, time

import numpy as np
import torch
import torch.nn as nn


def read_idx(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            op = gzip.open if p.endswith(".gz") else open
            with op(p, "rb") as f:
                data = f.read()
            nd = data[3]
            dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
            return np.frombuffer(data, np.uint8, offset=4 + 4 * nd).reshape(dims)
    sys.exit(f"torch_ref: {path}: missing")


class EnhancedCNN(nn.Module):
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
        self.drop = nn.Dropout(0.5)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.pool(self.relu(self.bn2(self.conv2(x))))
        x = self.pool(self.relu(self.bn3(self.conv3(x))))
        x = torch.flatten(x, 1)
        x = self.drop(self.relu(self.fc1(x)))
        x = self.drop(self.relu(self.fc2(x)))
        return self.fc3(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    def tensors(prefix):
        x = read_idx(os.path.join(a.data, prefix + "-images-idx3-ubyte"))
        y = read_idx(os.path.join(a.data, prefix + "-labels-idx1-ubyte"))
        x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
        return (x - 0.1307) / 0.3081, torch.from_numpy(y.astype(np.int64))

    xtr, ytr = tensors("train")
    xte, yte = tensors("t10k")
    if a.limit:
        xtr, ytr = xtr[:a.limit], ytr[:a.limit]
    model = EnhancedCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()

    model.train()
    t0 = time.perf_counter()
    perm = torch.randperm(len(xtr))
    for i in range(0, len(xtr), a.batch):
        idx = perm[i:i + a.batch]
        opt.zero_grad()
        loss = lossf(model(xtr[idx]), ytr[idx])
        loss.backward()
        opt.step()
    wall = time.perf_counter() - t0

    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(xte), 1000):
            correct += (model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"wall={wall:.3f} ips={len(xtr) / wall:.1f} rss_mib={rss:.1f} "
          f"acc={100.0 * correct / len(xte):.2f} threads={torch.get_num_threads()}")


if __name__ == "__main__":
    main()
