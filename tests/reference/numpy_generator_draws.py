#!/usr/bin/python3
"""Raw draws of NumPy's Generator for tests/core/tst_numpy_generator.cpp.

For each seed: np.random.default_rng(seed).standard_normal(count), then random() once more from
the same generator (so the number of 64-bit words the normals used is checked too), then
default_rng(seed).random(count // 10); all as little-endian float64 bytes on stdout.

Run: /usr/bin/python3 tests/reference/numpy_generator_draws.py COUNT SEED [SEED...]
"""
import sys

import numpy as np


def main():
    count = int(sys.argv[1])
    out = sys.stdout.buffer
    for seed in (int(s) for s in sys.argv[2:]):
        rng = np.random.default_rng(seed)
        out.write(rng.standard_normal(count).astype("<f8").tobytes())
        out.write(np.array([rng.random()], dtype="<f8").tobytes())
        out.write(np.random.default_rng(seed).random(count // 10).astype("<f8").tobytes())
    out.flush()


if __name__ == "__main__":
    main()
