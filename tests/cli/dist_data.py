"""dist_data.py DIR [TRAIN TEST]: a synthetic 28x28 IDX set for the MPI
tests (test_sweep_ranks.sh, test_mpirun_args.sh): each class a band of
rows brighter than the rest, with noise; TRAIN and TEST images (192, 64)."""
import os
import struct
import sys


def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", x) for x in dims) + data


def main():
    d = sys.argv[1]
    sizes = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (192, 64)
    os.makedirs(d)
    for name, n in zip(("train", "t10k"), sizes):
        img = bytearray()
        for i in range(n):
            c = (i * 7) % 10
            for p in range(784):
                v = (i * 131 + p * 17) % 97
                img.append(min(255, v + (120 if 2 * c <= p // 28 < 2 * c + 6 else 0)))
        with open(os.path.join(d, name + "-images-idx3-ubyte"), "wb") as f:
            f.write(idx([n, 28, 28], bytes(img)))
        with open(os.path.join(d, name + "-labels-idx1-ubyte"), "wb") as f:
            f.write(idx([n], bytes((i * 7) % 10 for i in range(n))))


main()
