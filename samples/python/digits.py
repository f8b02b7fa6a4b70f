"""The 8x8 handwritten digits set that Debian's python3-sklearn ships, as numpy arrays.

Read from the package's data file directly (loom never imports sklearn).
When the file is absent, says so and returns a seeded synthetic set of the
same shape, so the samples still run.
"""
import gzip
import os
import sys

import numpy as np

DIGITS_CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def load_digits(test_fraction=0.2, seed=0):
    """(x_train, y_train, x_test, y_test): float32 pixels scaled to [0, 1], int64 labels."""
    if os.path.exists(DIGITS_CSV):
        with gzip.open(DIGITS_CSV, "rt") as f:
            data = np.loadtxt(f, delimiter=",", dtype=np.float32)
        x, y = data[:, :64] / 16.0, data[:, 64].astype(np.int64)
    else:
        print(f"digits: {DIGITS_CSV} not found (install python3-sklearn); using a seeded synthetic set",
              file=sys.stderr)
        rng = np.random.default_rng(seed)
        centers = rng.random((10, 64), dtype=np.float32)
        y = rng.integers(0, 10, 1797)
        x = np.clip(centers[y] + 0.15 * rng.standard_normal((1797, 64)).astype(np.float32), 0, 1)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]
