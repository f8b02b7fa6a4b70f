"""Writes a small synthetic MNIST in the real IDX format for the libtorch programs' tests.

    python3 make_synthetic_mnist.py <dir>[:<train count>]...
        ->  <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte (3200 training images by default)

Digit k is a bright bar (horizontal for even k, vertical for odd k) at a
position set by k, on noise: learnable in an epoch, so the programs'
accuracy says whether they trained. Standard library only.
"""
import os
import random
import struct
import sys


def image(label, rng):
    pixels = bytearray(b % 60 for b in rng.randbytes(28 * 28))
    at = 3 + 2 * (label // 2) * 2 + rng.randrange(0, 2)
    for i in range(4, 24):
        for w in range(2):
            y, x = (at + w, i) if label % 2 == 0 else (i, at + w)
            pixels[y * 28 + x] = 200 + rng.randrange(0, 56)
    return bytes(pixels)


def write(directory, prefix, count, seed):
    rng = random.Random(seed)
    labels = [rng.randrange(10) for _ in range(count)]
    with open(os.path.join(directory, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, count, 28, 28))
        for label in labels:
            f.write(image(label, rng))
    with open(os.path.join(directory, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, count))
        f.write(bytes(labels))


def main():
    for arg in sys.argv[1:]:
        directory, _, count = arg.partition(":")
        os.makedirs(directory, exist_ok=True)
        write(directory, "train", int(count or 3200), 1)
        write(directory, "t10k", 200, 2)


if __name__ == "__main__":
    main()
