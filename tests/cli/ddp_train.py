"""ddp_train.py: a small data-parallel PyTorch job for test_exec_ddp.sh.

  ddp_train.py --launch spawn --world 2 --workers W --port P
        torch.multiprocessing.spawn starts the ranks;
  ddp_train.py --launch env --workers W
        one rank, from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (a shell
        loop starts one process per rank).
Each rank trains a tiny CNN under DistributedDataParallel (gloo) over its
share of a few hundred random images (DistributedSampler) and prints its
own count as the hook times it: the samples after its first batch over
the time from that batch's arrival to the loader's end, and a checksum of
its weights after training:
  rank R: N images in T s: X images/s
  rank R: weights 0x1.8p+3
  rank R: python threads MainThread cnntop-allreduce
"""
import argparse
import datetime
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def say(line):
    """One line in one write, so that the ranks' lines never mix."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def train(rank, world, args):
    # A rank that never comes fails the others in a minute, not half an hour.
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(rank)
    model = DDP(nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(8 * 14 * 14, 10)))
    data = TensorDataset(torch.randn(args.images, 1, 28, 28),
                         torch.randint(0, 10, (args.images,)))
    sampler = DistributedSampler(data, num_replicas=world, rank=rank)
    loader = DataLoader(data, batch_size=args.batch, sampler=sampler,
                        num_workers=args.workers)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    images, t0 = 0, None
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            if t0 is None:
                t0 = time.monotonic()  # the first batch starts the clock
            else:
                images += len(x)
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    t = time.monotonic() - t0
    say("rank %d: %d images in %.3f s: %.1f images/s" % (rank, images, t, images / t))
    # The weights after training, to the last bit: the same with cnntop's
    # timed all-reduce as with DDP's own.
    total = sum(float(p.double().sum()) for p in model.parameters())
    say("rank %d: weights %s" % (rank, total.hex()))
    # The Python threads it has (cnntop's hook waits for DDP's all-reduce
    # on one of its own, so that no Python runs on gloo's).
    say("rank %d: python threads %s" % (rank, " ".join(sorted(t.name for t in threading.enumerate()))))
    dist.destroy_process_group()


def spawned(rank, world, args):
    train(rank, world, args)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launch", choices=["spawn", "env"], default="spawn")
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--images", type=int, default=512)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--port", type=int, default=29500)
    args = p.parse_args()
    if args.launch == "env":
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    torch.multiprocessing.spawn(spawned, args=(args.world, args), nprocs=args.world)


if __name__ == "__main__":
    main()
