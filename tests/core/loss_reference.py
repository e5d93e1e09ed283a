#!/usr/bin/python3
"""Reference values for tests/core/tst_losses.cpp.

Computed with numpy in float64 from the published Keras 3 formulas (keras/src/losses/losses.py and
keras/src/backend/jax/nn.py): the inputs are first rounded to float32 (what the C++ test stores),
and the clip bounds are the float32 values of 1e-7 and 1 - 1e-7 (JAX clips a float32 tensor).
Run: /usr/bin/python3 tests/core/loss_reference.py
"""
import numpy as np

EPS = float(np.float32(1e-7))
HI = float(np.float32(1.0 - 1e-7))


def f32(rows):
    return np.array(rows, dtype=np.float32).astype(np.float64)


def clip(x):
    return np.clip(x, EPS, HI)


def softplus(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def bce(t, p):
    c = clip(p)
    return np.mean(-(t * np.log(c) + (1.0 - t) * np.log(1.0 - c)), axis=-1)


def bce_logits(t, z):
    return np.mean(t * softplus(-z) + (1.0 - t) * softplus(z), axis=-1)


def cce(t, p):
    q = clip(p / np.sum(p, axis=-1, keepdims=True))
    return -np.sum(t * np.log(q), axis=-1)


def log_softmax(z):
    m = np.max(z, axis=-1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True))


def cce_logits(t, z):
    return -np.sum(t * log_softmax(z), axis=-1)


def one_hot(labels, units):
    return np.eye(units)[labels.astype(np.int64).ravel()]


def mse(t, p):
    return np.mean((t - p) ** 2, axis=-1)


def mae(t, p):
    return np.mean(np.abs(t - p), axis=-1)


def huber(t, p, delta):
    e = p - t
    a = np.abs(e)
    return np.mean(np.where(a <= delta, 0.5 * e * e, delta * a - 0.5 * delta * delta), axis=-1)


BIN_TRUE = f32([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0.3, 1]])
BIN_PROB = f32([[0.9, 0.2, 0.65], [0.3, 0.8, 0.45], [0.55, 0.1, 0.7], [0.15, 0.6, 0.35]])
BIN_LOGIT = f32([[2.1, -1.3, 0.4], [-0.7, 1.6, -0.2], [0.3, -2.5, 1.1], [-1.8, 0.5, -0.6]])
CAT_TRUE = f32([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.7, 0.1]])
CAT_PROB = f32([[0.7, 0.2, 0.3], [0.1, 0.5, 0.2], [0.25, 0.25, 0.4], [0.6, 0.3, 0.05]])
CAT_LOGIT = f32([[1.5, -0.3, 0.2], [-1.1, 0.8, 0.4], [0.0, 0.6, -0.9], [2.2, 1.0, -1.4]])
SPARSE_TRUE = f32([[0], [1], [2], [1]])
REG_TRUE = f32([[0.2, 0.4, 0.1], [1.0, -0.5, 0.6], [0.3, 1.1, -1.0], [0.35, -0.2, 0.9]])
REG_PRED = f32([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7], [-2.2, 0.9, 0.05], [0.8, 1.7, -0.6]])

cases = [
    ("binary_crossentropy", bce(BIN_TRUE, BIN_PROB)),
    ("binary_crossentropy from_logits", bce_logits(BIN_TRUE, BIN_LOGIT)),
    ("categorical_crossentropy", cce(CAT_TRUE, CAT_PROB)),
    ("categorical_crossentropy from_logits", cce_logits(CAT_TRUE, CAT_LOGIT)),
    ("sparse_categorical_crossentropy", cce(one_hot(SPARSE_TRUE, 3), CAT_PROB)),
    ("sparse_categorical_crossentropy from_logits", cce_logits(one_hot(SPARSE_TRUE, 3), CAT_LOGIT)),
    ("mean_squared_error", mse(REG_TRUE, REG_PRED)),
    ("mean_absolute_error", mae(REG_TRUE, REG_PRED)),
    ("huber delta=1", huber(REG_TRUE, REG_PRED, 1.0)),
    ("huber delta=0.7", huber(REG_TRUE, REG_PRED, float(np.float32(0.7)))),
    # Clipping: probabilities exactly 0 and 1.
    ("bce clip t=[1,0,1,0] p=[0,1,1,0]", bce(f32([[1, 0, 1, 0]]), f32([[0, 1, 1, 0]]))),
    ("cce clip t=[0,1,0] p=[1,0,0]", cce(f32([[0, 1, 0]]), f32([[1, 0, 0]]))),
    ("cce clip t=[1,0,0] p=[1,0,0]", cce(f32([[1, 0, 0]]), f32([[1, 0, 0]]))),
    ("bce logits t=[0,1] z=[100,-100]", bce_logits(f32([[0, 1]]), f32([[100, -100]]))),
    ("cce logits t=[0,1,0] z=[1000,0,-1000]",
     cce_logits(f32([[0, 1, 0]]), f32([[1000, 0, -1000]]))),
]

for name, per_sample in cases:
    print(f"{name}: per-sample {[repr(float(v)) for v in per_sample]} sum {float(np.sum(per_sample))!r}")
