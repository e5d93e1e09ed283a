#!/usr/bin/python3
"""The seed example under Keras 3 on JAX's random rules, independently of fitbench's C++.

keras.utils.set_random_seed(7) seeds Python's `random` and NumPy; Dense's glorot_uniform gets
random.randint(1, 10**9) as its seed (keras/src/random/seed_generator.py make_default_seed) and
draws jax.random.uniform with the raw key [seed, 0] (threefry2x32, partitionable bit layout);
the data is the script's own rng = np.random.default_rng(7); x = rng.normal(size=(128, 4))
.astype("float32"), label x[:, 0] > 0; epoch e is shuffled by
np.random.default_rng(e).permutation(128)
(keras/src/trainers/data_adapters/array_data_adapter.py); SGD(0.2), binary cross-entropy,
batch 16, 4 epochs, logged values are sample-weighted running means. Prints each epoch's
accuracy and loss; tests/cli/tst_cli.cpp compares fitbench-cli's lines with them.

Run: /usr/bin/python3 tests/reference/seed_keras_rules.py
"""
import random

import numpy as np

MASK = 0xFFFFFFFF


def threefry2x32(k0, k1, x0, x1):
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0 = (x0 + ks[0]) & MASK
    x1 = (x1 + ks[1]) & MASK
    for group in range(5):
        for r in rotations[group % 2]:
            x0 = (x0 + x1) & MASK
            x1 = ((x1 << r) | (x1 >> (32 - r))) & MASK
            x1 ^= x0
        x0 = (x0 + ks[(group + 1) % 3]) & MASK
        x1 = (x1 + ks[(group + 2) % 3] + group + 1) & MASK
    return x0, x1


def jax_uniform(seed, n, minval, maxval):
    bits = np.array([np.uint32(a ^ b) for a, b in (threefry2x32(seed, 0, 0, i) for i in range(n))],
                    dtype=np.uint32)
    floats = ((bits >> 9) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)
    lo, hi = np.float32(minval), np.float32(maxval)
    return np.maximum(lo, floats * (hi - lo) + lo)


def main():
    assert threefry2x32(0x13198A2E, 0x03707344, 0x243F6A88, 0x85A308D3) == (0xC4923A9C, 0x483DF7A0)
    random.seed(7)
    kernel_seed = random.randint(1, int(1e9))
    x = np.random.default_rng(7).normal(size=(128, 4)).astype(np.float32).astype(np.float64)
    y = (x[:, 0] > 0).astype(np.float64).reshape(-1, 1)
    limit = np.sqrt(3.0 / ((4 + 1) / 2.0))
    w = jax_uniform(kernel_seed, 4, -limit, limit).astype(np.float64).reshape(4, 1)
    b = np.zeros(1)
    for epoch in range(4):
        order = np.random.default_rng(epoch).permutation(128)
        loss_sum = correct = 0.0
        for start in range(0, 128, 16):
            idx = order[start:start + 16]
            xb, yb = x[idx], y[idx]
            p = 1.0 / (1.0 + np.exp(-(xb @ w + b)))
            pc = np.clip(p, 1e-7, 1 - 1e-7)
            loss_sum += -np.mean(yb * np.log(pc) + (1 - yb) * np.log(1 - pc)) * len(idx)
            correct += np.sum((p > 0.5) == (yb > 0.5))
            g = (p - yb) / len(idx)
            w -= 0.2 * xb.T @ g
            b -= 0.2 * g.sum(axis=0)
        print(f"epoch {epoch + 1}: accuracy {correct / 128:.6f} loss {loss_sum / 128:.6f}")


if __name__ == "__main__":
    main()
