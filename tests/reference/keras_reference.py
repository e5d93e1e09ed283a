#!/usr/bin/python3
"""Independent float64 reference of Keras 3's training rules (JAX backend) for Sequentials.

Writes the golden cases that tests/core/tst_trajectories.cpp replays through the engine:
tests/data/trajectories/<case>.json with the model and compile configs (Keras style), the data,
the initial weights, every epoch's loss and metrics and the final weights.

Rules implemented from the Keras 3 sources (read, not copied):
- Dense: y = act(x @ kernel + bias)                      keras/src/layers/core/dense.py
- Conv2D, the poolings, Flatten, Reshape, Rescaling, GlobalAveragePooling2D and
  LayerNormalization: see "The model" below
- activations (gelu exact, leaky_relu slope 0.2)        keras/src/activations/activations.py
- losses, per sample: mean over the last axis (bce, mse, mae, huber), sum for the categorical
  ones; probabilities clipped to [1e-7, 1 - 1e-7], categorical outputs normalised to sum 1 first
                                                         keras/src/losses/losses.py,
                                                         keras/src/backend/jax/nn.py
- batch loss = mean of per-sample losses + sum of regularization losses
                                                         keras/src/trainers/trainer.py
- L1: l1 * sum|w|, L2: l2 * sum w^2                      keras/src/regularizers/regularizers.py
- epoch loss = batch losses weighted by batch size (computed before each update); accuracy metrics
  are running means over the samples                     keras/src/trainers/trainer.py,
                                                         keras/src/metrics/accuracy_metrics.py
- optimizers: weight decay (variable -= variable * wd * lr) before the update step
                                                         keras/src/optimizers/base_optimizer.py
  SGD (momentum, nesterov)                               keras/src/optimizers/sgd.py
  Adam (bias correction with t = iterations + 1, amsgrad), AdamW
                                                         keras/src/optimizers/adam.py, adamw.py
  RMSprop (momentum, centered; epsilon inside the sqrt)  keras/src/optimizers/rmsprop.py
  Adagrad (accumulator starts at initial_accumulator_value)
                                                         keras/src/optimizers/adagrad.py

Gradients are written by hand (no autodiff) and checked against finite differences before anything
is written. Each case is also replayed in float32 and must agree with float64 to 1e-5, and every
kink (relu at 0, |e| at 0, clip bounds, L1 at 0, accuracy thresholds) must stay clear of the
trajectory, so the engine's float32 result is comparable to these float64 values at 1e-4.

Run: /usr/bin/python3 tests/reference/keras_reference.py
"""
import json
import math
import os
import sys

import numpy as np

EPSILON = 1e-7  # keras.backend.epsilon()
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
LEAKY_SLOPE = 0.2
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "data", "trajectories")

# ------------------------------------------------------------------------------------------------
# Activations: forward(z) and the vector-Jacobian product (upstream g, z, a = forward(z)).


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _erf(z):
    return np.vectorize(math.erf, otypes=[np.float64])(z).astype(z.dtype)


def act_forward(name, z):
    if name == "linear":
        return z
    if name == "relu":
        return np.maximum(z, 0)
    if name == "sigmoid":
        return _sigmoid(z)
    if name == "tanh":
        return np.tanh(z)
    if name == "softmax":
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if name == "elu":
        return np.where(z > 0, z, np.expm1(np.minimum(z, 0)))
    if name == "selu":
        return SELU_SCALE * np.where(z > 0, z, SELU_ALPHA * np.expm1(np.minimum(z, 0)))
    if name == "gelu":
        return 0.5 * z * (1.0 + _erf(z / math.sqrt(2.0)))
    if name == "leaky_relu":
        return np.where(z >= 0, z, LEAKY_SLOPE * z)
    if name == "softplus":
        return np.logaddexp(np.zeros_like(z), z)
    if name == "silu":
        return z * _sigmoid(z)
    raise ValueError(name)


def act_backward(name, g, z, a):
    if name == "linear":
        return g
    if name == "relu":
        return g * (z > 0)
    if name == "sigmoid":
        return g * a * (1 - a)
    if name == "tanh":
        return g * (1 - a * a)
    if name == "softmax":
        return a * (g - (g * a).sum(axis=1, keepdims=True))
    if name == "elu":
        return g * np.where(z > 0, 1.0, np.exp(np.minimum(z, 0))).astype(z.dtype)
    if name == "selu":
        d = np.where(z > 0, 1.0, SELU_ALPHA * np.exp(np.minimum(z, 0))).astype(z.dtype)
        return g * SELU_SCALE * d
    if name == "gelu":
        cdf = 0.5 * (1.0 + _erf(z / math.sqrt(2.0)))
        pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        return g * (cdf + z * pdf)
    if name == "leaky_relu":
        return g * np.where(z >= 0, 1.0, LEAKY_SLOPE).astype(z.dtype)
    if name == "softplus":
        return g * _sigmoid(z)
    if name == "silu":
        s = _sigmoid(z)
        return g * (s + z * s * (1 - s))
    raise ValueError(name)


# Where an activation's derivative jumps (distance of z to it must stay large).
KINKED = {"relu", "leaky_relu"}

# ------------------------------------------------------------------------------------------------
# Losses: per-sample values (n,) and d(mean over the batch)/d(output) (n, k).


def loss_forward_backward(spec, out, y, margins):
    name = spec["name"]
    n, k = out.shape
    logits = spec.get("from_logits", False)
    if name == "sparse_categorical_crossentropy":
        onehot = np.zeros_like(out)
        onehot[np.arange(n), y[:, 0].astype(int)] = 1
        y = onehot
        name = "categorical_crossentropy"
    if name == "binary_crossentropy":
        if logits:
            # -y log sigmoid(z) - (1 - y) log sigmoid(-z)
            per = (y * np.logaddexp(0, -out) + (1 - y) * np.logaddexp(0, out)).mean(axis=1)
            grad = (_sigmoid(out) - y) / k
        else:
            margins.note("clip", np.minimum(out - EPSILON, 1 - EPSILON - out).min())
            p = np.clip(out, EPSILON, 1 - EPSILON)
            per = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(axis=1)
            grad = (-(y / p) + (1 - y) / (1 - p)) / k
    elif name == "categorical_crossentropy":
        if logits:
            m = out.max(axis=1, keepdims=True)
            lse = m + np.log(np.exp(out - m).sum(axis=1, keepdims=True))
            per = -(y * (out - lse)).sum(axis=1)
            grad = np.exp(out - lse) * y.sum(axis=1, keepdims=True) - y
        else:
            s = out.sum(axis=1, keepdims=True)
            q = out / s
            margins.note("clip", np.minimum(q - EPSILON, 1 - EPSILON - q).min())
            p = np.clip(q, EPSILON, 1 - EPSILON)
            per = -(y * np.log(p)).sum(axis=1)
            dq = -y / p
            grad = (dq - (dq * q).sum(axis=1, keepdims=True)) / s
    elif name == "mean_squared_error":
        e = out - y
        per = (e * e).mean(axis=1)
        grad = 2 * e / k
    elif name == "mean_absolute_error":
        e = out - y
        margins.note("abs", np.abs(e).min())
        per = np.abs(e).mean(axis=1)
        grad = np.sign(e) / k
    elif name == "huber":
        d = spec.get("delta", 1.0)
        e = out - y
        small = np.abs(e) <= d
        margins.note("huber", np.abs(np.abs(e) - d).min())
        per = np.where(small, 0.5 * e * e, d * np.abs(e) - 0.5 * d * d).mean(axis=1)
        grad = np.where(small, e, d * np.sign(e)) / k
    else:
        raise ValueError(name)
    return per, grad / n


# ------------------------------------------------------------------------------------------------
# Accuracy as compile(metrics=["accuracy"]) resolves it from the shapes (compile_utils.get_metric).


def accuracy_hits(loss_name, out, y, margins):
    if out.shape[1] == 1:
        margins.note("threshold", np.abs(out - 0.5).min())
        return ((out > 0.5).astype(float) == y).astype(float).mean(axis=1).sum()
    top = np.sort(out, axis=1)
    margins.note("argmax", (top[:, -1] - top[:, -2]).min())
    pred = out.argmax(axis=1)
    truth = y[:, 0].astype(int) if loss_name == "sparse_categorical_crossentropy" else y.argmax(1)
    return float((pred == truth).sum())


# ------------------------------------------------------------------------------------------------
# The model: a Sequential's layers, each a dict with its "kind" (Keras's class name). A sample is
# an array of the layer's input shape (channels last); params is every layer's variables in
# Keras's order, concatenated:
# - Dense: y = act(x @ kernel + bias)                     keras/src/layers/core/dense.py
# - Conv2D: y = act(conv(x, kernel (kh, kw, in, out)) + bias), SAME's zeros split as XLA's (the
#   smaller half above and to the left)                    keras/src/layers/convolutional/
# - MaxPooling2D / AveragePooling2D: each window clipped to the image, so padding never wins a
#   maximum and a mean divides by the pixels it covers    keras/src/backend/jax/nn.py
#   (a maximum's gradient goes to the window's first pixel holding it)
# - Flatten, Reshape: the values in C order               keras/src/layers/reshaping/
# - Rescaling: x * scale + offset                          keras/src/layers/preprocessing/
# - GlobalAveragePooling2D: each channel's mean            keras/src/layers/pooling/
# - LayerNormalization over the last axis: (x - mean) / sqrt(var + epsilon) * gamma + beta, the
#   population variance                                    keras/src/ops/nn.py
# - BatchNormalization over the last axis: the same by each channel's mean and population
#   variance over the batch's rows and pixels in training, and moving_mean / moving_variance
#   (not trainable: no gradient, no update by the optimizer) moved toward them after each step
#   by 1 - momentum                        keras/src/layers/normalization/batch_normalization.py


def var_names(layer):
    kind = layer["kind"]
    if kind == "Dense":
        return ["kernel", "bias"]
    if kind == "Conv2D":
        return ["kernel", "bias"] if layer.get("use_bias", True) else ["kernel"]
    if kind in ("LayerNormalization", "BatchNormalization"):
        names = [n for n, on in (("gamma", layer.get("scale", True)),
                                 ("beta", layer.get("center", True))) if on]
        return names + (["moving_mean", "moving_variance"]
                        if kind == "BatchNormalization" else [])
    return []


def trainable_mask(layers):
    """Per variable of params: whether the optimizer trains it."""
    return [not name.startswith("moving_") for layer in layers for name in var_names(layer)]


def var_slices(layers):
    out, start = [], 0
    for layer in layers:
        k = len(var_names(layer))
        out.append(slice(start, start + k))
        start += k
    return out


def out_size(size, window, stride, padding):
    return (size - 1) // stride + 1 if padding == "same" else (size - window) // stride + 1


def leading_pad(size, window, stride, padding):
    if padding != "same":
        return 0, 0
    total = max((out_size(size, window, stride, padding) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def conv_forward(layer, x, kernel):
    kh, kw, _, filters = kernel.shape
    (sh, sw), pad = layer["strides"], layer["padding"]
    oh, ow = out_size(x.shape[1], kh, sh, pad), out_size(x.shape[2], kw, sw, pad)
    (t, b), (l, r) = leading_pad(x.shape[1], kh, sh, pad), leading_pad(x.shape[2], kw, sw, pad)
    xp = np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)))
    z = np.zeros((len(x), oh, ow, filters), dtype=x.dtype)
    for ky in range(kh):
        for kx in range(kw):
            z += xp[:, ky:ky + sh * (oh - 1) + 1:sh, kx:kx + sw * (ow - 1) + 1:sw, :] @ kernel[ky, kx]
    return z, xp


def conv_backward(layer, x, xp, kernel, dz):
    kh, kw = kernel.shape[:2]
    (sh, sw), pad = layer["strides"], layer["padding"]
    oh, ow = dz.shape[1:3]
    t, l = leading_pad(x.shape[1], kh, sh, pad)[0], leading_pad(x.shape[2], kw, sw, pad)[0]
    dk, dxp = np.zeros_like(kernel), np.zeros_like(xp)
    for ky in range(kh):
        for kx in range(kw):
            window = (slice(None), slice(ky, ky + sh * (oh - 1) + 1, sh),
                      slice(kx, kx + sw * (ow - 1) + 1, sw), slice(None))
            dk[ky, kx] = np.einsum("nhwc,nhwf->cf", xp[window], dz)
            dxp[window] += dz @ kernel[ky, kx].T
    return dk, dxp[:, t:t + x.shape[1], l:l + x.shape[2], :]


def pool_windows(layer, x):
    """Each output pixel's (oy, ox, rows, columns) of the input, clipped to the image."""
    (ph, pw), (sh, sw), pad = layer["pool_size"], layer["strides"], layer["padding"]
    oh, ow = out_size(x.shape[1], ph, sh, pad), out_size(x.shape[2], pw, sw, pad)
    t, l = leading_pad(x.shape[1], ph, sh, pad)[0], leading_pad(x.shape[2], pw, sw, pad)[0]
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * sh - t, ox * sw - l
            yield oy, ox, slice(max(y0, 0), min(y0 + ph, x.shape[1])), \
                slice(max(x0, 0), min(x0 + pw, x.shape[2]))


def pool_forward(layer, x, margins):
    (ph, pw), (sh, sw), pad = layer["pool_size"], layer["strides"], layer["padding"]
    oh, ow = out_size(x.shape[1], ph, sh, pad), out_size(x.shape[2], pw, sw, pad)
    out = np.zeros((len(x), oh, ow, x.shape[3]), dtype=x.dtype)
    for oy, ox, rows, cols in pool_windows(layer, x):
        w = x[:, rows, cols, :].reshape(len(x), -1, x.shape[3])
        if layer["kind"] == "MaxPooling2D":
            out[:, oy, ox, :] = w.max(axis=1)
            if w.shape[1] > 1:  # the maximum's pixel must not change within the tolerance
                top = np.sort(w, axis=1)
                margins.note("argmax", (top[:, -1] - top[:, -2]).min())
        else:
            out[:, oy, ox, :] = w.mean(axis=1)
    return out


def pool_backward(layer, x, g):
    dx = np.zeros_like(x)
    n, c = len(x), x.shape[3]
    for oy, ox, rows, cols in pool_windows(layer, x):
        w = x[:, rows, cols, :].reshape(n, -1, c)
        gw = np.zeros_like(w)
        if layer["kind"] == "MaxPooling2D":
            first = w.argmax(axis=1)  # the first pixel holding the maximum
            gw[np.arange(n)[:, None], first, np.arange(c)[None, :]] = g[:, oy, ox, :]
        else:
            gw[:] = g[:, oy, ox, None, :] / w.shape[1]
        dx[:, rows, cols, :] += gw.reshape(x[:, rows, cols, :].shape)
    return dx


def forward(layers, params, x, margins):
    cache, a = [], x
    for layer, vs in zip(layers, var_slices(layers)):
        p, kind = params[vs], layer["kind"]
        if kind in ("Dense", "Conv2D"):
            if kind == "Dense":
                z, extra = a @ p[0], None
            else:
                z, extra = conv_forward(layer, a, p[0])
            if len(p) > 1:
                z = z + p[1]
            out = act_forward(layer["activation"], z)
            cache.append((a, z, out, extra))
        elif kind in ("MaxPooling2D", "AveragePooling2D"):
            out = pool_forward(layer, a, margins)
            cache.append((a,))
        elif kind == "Flatten":
            out = a.reshape(len(a), -1)
            cache.append((a,))
        elif kind == "Reshape":
            out = a.reshape((len(a),) + tuple(layer["target_shape"]))
            cache.append((a,))
        elif kind == "Rescaling":
            out = a * layer["scale"] + layer["offset"]
            cache.append((a,))
        elif kind == "GlobalAveragePooling2D":
            out = a.mean(axis=(1, 2))
            cache.append((a,))
        elif kind in ("BatchNormalization", "LayerNormalization"):
            # Statistics over every axis but the channels' (a batch's) or over the channels
            # alone (a sample's).
            axes = tuple(range(a.ndim - 1)) if kind == "BatchNormalization" else (-1,)
            mean = a.mean(axis=axes, keepdims=True)
            var = a.var(axis=axes, keepdims=True)
            inv = 1.0 / np.sqrt(var + layer.get("epsilon", 1e-3))
            xhat = (a - mean) * inv
            out, k = xhat, 0
            if layer.get("scale", True):
                out, k = out * p[0], 1
            if layer.get("center", True):
                out = out + p[k]
            cache.append((a, xhat, inv, mean, var))
        else:
            raise ValueError(kind)
        a = out
    return cache, a


def regularization(layers, params, margins=None):
    value, grads = 0.0, [np.zeros_like(p) for p in params]
    for layer, vs in zip(layers, var_slices(layers)):
        for j, name in enumerate(var_names(layer)):
            l1, l2 = layer.get(name + "_regularizer", (0.0, 0.0))
            w = params[vs.start + j]
            if l1:
                value += l1 * np.abs(w).sum()
                grads[vs.start + j] += l1 * np.sign(w)
                if margins is not None:
                    margins.note("l1", np.abs(w).min())
            if l2:
                value += l2 * (w * w).sum()
                grads[vs.start + j] += 2 * l2 * w
    return value, grads


def batch_loss_and_grads(case, params, x, y, margins):
    layers = case["layers"]
    cache, out = forward(layers, params, x, margins)
    per, g = loss_forward_backward(case["loss"], out, y, margins)
    reg, grads = regularization(layers, params, margins)
    slices = var_slices(layers)
    for i in reversed(range(len(layers))):
        layer, vs, kind = layers[i], slices[i], layers[i]["kind"]
        if kind in ("Dense", "Conv2D"):
            a_in, z, a, extra = cache[i]
            if layer["activation"] in KINKED:
                margins.note("kink", np.abs(z).min())
            dz = act_backward(layer["activation"], g, z, a)
            kernel = params[vs.start]
            if kind == "Dense":
                grads[vs.start] = grads[vs.start] + a_in.T @ dz
                g = dz @ kernel.T
            else:
                dk, g = conv_backward(layer, a_in, extra, kernel, dz)
                grads[vs.start] = grads[vs.start] + dk
            if vs.stop - vs.start > 1:
                grads[vs.start + 1] = grads[vs.start + 1] + dz.reshape(-1, dz.shape[-1]).sum(0)
        elif kind in ("MaxPooling2D", "AveragePooling2D"):
            g = pool_backward(layer, cache[i][0], g)
        elif kind in ("Flatten", "Reshape"):
            g = g.reshape(cache[i][0].shape)
        elif kind == "Rescaling":
            g = g * layer["scale"]
        elif kind == "GlobalAveragePooling2D":
            a_in = cache[i][0]
            g = np.broadcast_to(g[:, None, None, :] / (a_in.shape[1] * a_in.shape[2]),
                                a_in.shape).copy()
        elif kind in ("BatchNormalization", "LayerNormalization"):
            # The statistics run over every axis but the channels' (a batch's) or over the
            # channels alone (a sample's); gamma and beta sum over all the others.
            xhat, inv = cache[i][1], cache[i][2]
            batch_axes = tuple(range(g.ndim - 1))
            stat_axes = batch_axes if kind == "BatchNormalization" else (-1,)
            k, gx = 0, g
            if layer.get("scale", True):
                grads[vs.start] = grads[vs.start] + (g * xhat).sum(axis=batch_axes)
                gx, k = g * params[vs.start], 1
            if layer.get("center", True):
                grads[vs.start + k] = grads[vs.start + k] + g.sum(axis=batch_axes)
            g = inv * (gx - gx.mean(axis=stat_axes, keepdims=True) -
                       xhat * (gx * xhat).mean(axis=stat_axes, keepdims=True))
    for j, trained in enumerate(trainable_mask(layers)):
        if not trained:
            grads[j] = None
    return per.mean() + reg, grads, out


def moving_statistics(case, params, x):
    """The moving statistics after a training step on x: {param index: new value}."""
    layers, updates = case["layers"], {}
    cache, _ = forward(layers, params, x, NoMargins())
    for layer, vs, c in zip(layers, var_slices(layers), cache):
        if layer["kind"] == "BatchNormalization":
            m = layer.get("momentum", 0.99)
            mean_i, var_i = vs.stop - 2, vs.stop - 1
            # The batch's statistics, kept with a length-1 axis for each reduced one.
            updates[mean_i] = params[mean_i] * m + c[3].reshape(-1) * (1.0 - m)
            updates[var_i] = params[var_i] * m + c[4].reshape(-1) * (1.0 - m)
    return updates


class Margins:
    """The smallest distance, over the whole trajectory, to each kind of discontinuity."""

    def __init__(self):
        self.values = {}

    def note(self, kind, value):
        self.values[kind] = min(self.values.get(kind, math.inf), float(value))


class NoMargins:
    def note(self, kind, value):
        pass


# ------------------------------------------------------------------------------------------------
# Optimizers, one update of every trainable variable per apply(); t counts applies.


class Optimizer:
    def __init__(self, spec, params):
        self.s = spec
        self.t = 0  # optimizer.iterations
        kind = spec["class_name"]
        zeros = lambda: [np.zeros_like(p) for p in params]  # noqa: E731
        if kind == "SGD":
            self.m = zeros()
        elif kind in ("Adam", "AdamW"):
            self.m, self.v, self.vhat = zeros(), zeros(), zeros()
        elif kind == "RMSprop":
            self.v, self.m, self.avg = zeros(), zeros(), zeros()
        elif kind == "Adagrad":
            self.acc = [np.full_like(p, spec.get("initial_accumulator_value", 0.1)) for p in params]
        self.amsgrad_active = False

    def apply(self, params, grads):
        s, kind = self.s, self.s["class_name"]
        lr = s["learning_rate"]
        wd = s.get("weight_decay", 0.004 if kind == "AdamW" else None)
        for i, (w, g) in enumerate(zip(params, grads)):
            if g is None:  # not trainable (moving statistics)
                continue
            if wd is not None:
                w -= w * wd * lr
            if kind == "SGD":
                mom = s.get("momentum", 0.0)
                if mom != 0:
                    self.m[i][...] = self.m[i] * mom - g * lr
                    if s.get("nesterov", False):
                        w += self.m[i] * mom - g * lr
                    else:
                        w += self.m[i]
                else:
                    w -= g * lr
            elif kind in ("Adam", "AdamW"):
                b1, b2 = s.get("beta_1", 0.9), s.get("beta_2", 0.999)
                step = self.t + 1
                alpha = lr * math.sqrt(1 - b2**step) / (1 - b1**step)
                self.m[i] += (g - self.m[i]) * (1 - b1)
                self.v[i] += (g * g - self.v[i]) * (1 - b2)
                v = self.v[i]
                if s.get("amsgrad", False):
                    if (self.vhat[i] > v).any():
                        self.amsgrad_active = True
                    self.vhat[i][...] = np.maximum(self.vhat[i], v)
                    v = self.vhat[i]
                w -= (self.m[i] * alpha) / (np.sqrt(v) + s.get("epsilon", 1e-7))
            elif kind == "RMSprop":
                rho, eps, mom = s.get("rho", 0.9), s.get("epsilon", 1e-7), s.get("momentum", 0.0)
                self.v[i][...] = rho * self.v[i] + (1 - rho) * g * g
                if s.get("centered", False):
                    self.avg[i][...] = rho * self.avg[i] + (1 - rho) * g
                    denominator = self.v[i] - self.avg[i] * self.avg[i] + eps
                else:
                    denominator = self.v[i] + eps
                increment = lr * g / np.sqrt(denominator)
                if mom > 0:
                    self.m[i][...] = mom * self.m[i] + increment
                    w -= self.m[i]
                else:
                    w -= increment
            elif kind == "Adagrad":
                self.acc[i] += g * g
                w -= lr * g / np.sqrt(self.acc[i] + s.get("epsilon", 1e-7))
            else:
                raise ValueError(kind)
        self.t += 1


# ------------------------------------------------------------------------------------------------
# fit(shuffle=False): batches in order, the last partial one included.


def fit(case, params, x, y, dtype, margins):
    params = [p.astype(dtype).copy() for p in params]
    x, y = x.astype(dtype), y.astype(dtype)
    opt = Optimizer(case["optimizer"], params)
    n, b = len(x), case["batch_size"]
    losses, accuracy = [], []
    for _ in range(case["epochs"]):
        loss_sum, hits = 0.0, 0.0
        for start in range(0, n, b):
            xb, yb = x[start:start + b], y[start:start + b]
            loss, grads, out = batch_loss_and_grads(case, params, xb, yb, margins)
            loss_sum += float(loss) * len(xb)
            if case["metrics"]:
                hits += accuracy_hits(case["loss"]["name"], out, yb, margins)
            updates = moving_statistics(case, params, xb)
            opt.apply(params, grads)
            for j, value in updates.items():
                params[j][...] = value
        losses.append(loss_sum / n)
        accuracy.append(hits / n)
    if case["optimizer"].get("amsgrad", False):
        assert opt.amsgrad_active, case["name"] + ": amsgrad never kept a larger v_hat"
    return losses, (accuracy if case["metrics"] else None), params


# ------------------------------------------------------------------------------------------------
# Checks run before anything is written.


def check_gradients(case, params, x, y):
    """Hand-written gradients against a 4-point central difference of the batch loss."""
    worst = 0.0
    h = 1e-4
    for xb, yb in ((x[:case["batch_size"]], y[:case["batch_size"]]),
                   (x[-(len(x) % case["batch_size"] or case["batch_size"]):],
                    y[-(len(x) % case["batch_size"] or case["batch_size"]):])):
        _, grads, _ = batch_loss_and_grads(case, params, xb, yb, NoMargins())
        for p, g in zip(params, grads):
            if g is None:
                continue
            for idx in np.ndindex(p.shape):
                keep = p[idx]
                values = []
                for step in (2, 1, -1, -2):
                    p[idx] = keep + step * h
                    values.append(batch_loss_and_grads(case, params, xb, yb, NoMargins())[0])
                p[idx] = keep
                fd = (-values[0] + 8 * values[1] - 8 * values[2] + values[3]) / (12 * h)
                # Relative error; gradients below 1e-3 in magnitude are held to 1e-9 absolute.
                err = abs(fd - g[idx]) / max(abs(fd), abs(g[idx]), 1e-3)
                worst = max(worst, err)
    assert worst < 1e-6, f"{case['name']}: gradient check failed, max relative error {worst:.3g}"
    return worst


def rel_error(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float((np.abs(a - b) / np.maximum(1.0, np.abs(b))).max())


# Smallest allowed distance to a discontinuity of the gradient or of a metric: the engine's
# float32 values stay within ~1e-6 of these, so a margin of 1e-5 keeps every branch the same.
# Huber's derivative is continuous at |e| = delta, so its margin is only reported.
MIN_MARGIN = {"kink": 1e-5, "abs": 1e-5, "huber": 0.0, "clip": 1e-5, "l1": 1e-5,
              "threshold": 1e-5, "argmax": 1e-5}


# ------------------------------------------------------------------------------------------------
# Data, weights and the cases.


def f32(a):
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def sample_shapes(features, layers):
    """The sample shape each layer receives."""
    shapes, shape = [], (features,)
    for layer in layers:
        shapes.append(shape)
        kind = layer["kind"]
        if kind == "Dense":
            shape = (layer["units"],)
        elif kind == "Conv2D":
            (kh, kw), (sh, sw) = layer["kernel_size"], layer["strides"]
            shape = (out_size(shape[0], kh, sh, layer["padding"]),
                     out_size(shape[1], kw, sw, layer["padding"]), layer["filters"])
        elif kind in ("MaxPooling2D", "AveragePooling2D"):
            (ph, pw), (sh, sw) = layer["pool_size"], layer["strides"]
            shape = (out_size(shape[0], ph, sh, layer["padding"]),
                     out_size(shape[1], pw, sw, layer["padding"]), shape[2])
        elif kind == "Flatten":
            shape = (int(np.prod(shape)),)
        elif kind == "Reshape":
            shape = tuple(layer["target_shape"])
        elif kind == "GlobalAveragePooling2D":
            shape = (shape[2],)
    return shapes


def init_params(rng, n_in, layers):
    params = []
    for layer, shape in zip(layers, sample_shapes(n_in, layers)):
        kind = layer["kind"]
        if kind == "Dense":
            fan_in = shape[0]
            limit = math.sqrt(6.0 / (fan_in + layer["units"]))  # glorot_uniform's range
            params.append(f32(rng.uniform(-limit, limit, size=(fan_in, layer["units"]))))
            params.append(f32(rng.uniform(-0.1, 0.1, size=layer["units"])))
        elif kind == "Conv2D":
            kh, kw = layer["kernel_size"]
            field = kh * kw
            limit = math.sqrt(6.0 / (field * shape[2] + field * layer["filters"]))
            params.append(f32(rng.uniform(-limit, limit,
                                          size=(kh, kw, shape[2], layer["filters"]))))
            if layer.get("use_bias", True):
                params.append(f32(rng.uniform(-0.1, 0.1, size=layer["filters"])))
        elif kind in ("LayerNormalization", "BatchNormalization"):
            # Away from ones and zeros, so that a variable read in the wrong order shows.
            for name in var_names(layer):
                centre = 1.0 if name in ("gamma", "moving_variance") else 0.0
                params.append(f32(centre + rng.uniform(-0.3, 0.3, size=shape[-1])))
    return params


def make_data(rng, kind, n, features, outputs):
    x = f32(rng.normal(size=(n, features)))
    teacher = rng.normal(size=(features, max(outputs, 1)))
    s = x @ teacher + 0.5 * np.sin(2 * x[:, :1])
    if kind == "binary":
        y = (s[:, :1] + 0.3 * rng.normal(size=(n, 1)) > 0).astype(float)
    elif kind == "onehot":
        y = np.eye(outputs)[np.argmax(s + 0.3 * rng.normal(size=s.shape), axis=1)]
    elif kind == "sparse":
        y = np.argmax(s + 0.3 * rng.normal(size=s.shape), axis=1).astype(float)[:, None]
    else:
        y = f32(0.5 * s[:, :outputs] + 0.1 * rng.normal(size=(n, outputs)))
    return x, y


def dense(units, activation, kernel_reg=None, bias_reg=None):
    layer = {"kind": "Dense", "units": units, "activation": activation}
    if kernel_reg:
        layer["kernel_regularizer"] = kernel_reg
    if bias_reg:
        layer["bias_regularizer"] = bias_reg
    return layer


def conv2d(filters, kernel_size, strides, padding, activation, use_bias=True, kernel_reg=None):
    layer = {"kind": "Conv2D", "filters": filters, "kernel_size": kernel_size,
             "strides": strides, "padding": padding, "activation": activation,
             "use_bias": use_bias}
    if kernel_reg:
        layer["kernel_regularizer"] = kernel_reg
    return layer


def pool2d(kind, pool_size, strides, padding):
    return {"kind": kind, "pool_size": pool_size, "strides": strides, "padding": padding}


def batch_norm(scale=True, center=True, momentum=0.99, epsilon=1e-3, beta_reg=None):
    layer = {"kind": "BatchNormalization", "scale": scale, "center": center,
             "momentum": momentum, "epsilon": epsilon}
    if beta_reg:
        layer["beta_regularizer"] = beta_reg
    return layer


def layer_norm(scale=True, center=True, epsilon=1e-3, gamma_reg=None):
    layer = {"kind": "LayerNormalization", "scale": scale, "center": center, "epsilon": epsilon}
    if gamma_reg:
        layer["gamma_regularizer"] = gamma_reg
    return layer


def simple(kind, **config):
    return dict(kind=kind, **config)


CASES = [
    dict(name="sgd_bce_sigmoid", seed=11, samples=45, features=4, data="binary", epochs=4,
         batch_size=16, layers=[dense(1, "sigmoid")],
         optimizer={"class_name": "SGD", "learning_rate": 0.2},
         loss={"name": "binary_crossentropy"}, metrics=True),
    dict(name="sgd_momentum_mse", seed=12, samples=37, features=3, data="regression", epochs=3,
         batch_size=8, layers=[dense(5, "relu"), dense(2, "linear")],
         optimizer={"class_name": "SGD", "learning_rate": 0.03, "momentum": 0.9},
         loss={"name": "mean_squared_error"}, metrics=False),
    dict(name="sgd_nesterov_huber", seed=13, samples=50, features=5, data="regression", epochs=4,
         batch_size=12, layers=[dense(4, "tanh"), dense(1, "linear")],
         optimizer={"class_name": "SGD", "learning_rate": 0.05, "momentum": 0.8,
                    "nesterov": True},
         loss={"name": "huber", "delta": 0.5}, metrics=False),
    dict(name="adam_cce_softmax", seed=14, samples=54, features=4, data="onehot", epochs=5,
         batch_size=16, layers=[dense(6, "relu"), dense(3, "softmax")],
         optimizer={"class_name": "Adam", "learning_rate": 0.01},
         loss={"name": "categorical_crossentropy"}, metrics=True),
    dict(name="adam_amsgrad_scce", seed=15, samples=41, features=5, data="sparse", epochs=4,
         batch_size=10, layers=[dense(6, "sigmoid"), dense(4, "linear")],
         optimizer={"class_name": "Adam", "learning_rate": 0.02, "beta_1": 0.8, "beta_2": 0.9,
                    "amsgrad": True},
         loss={"name": "sparse_categorical_crossentropy", "from_logits": True}, metrics=True),
    dict(name="adamw_mae", seed=16, samples=33, features=3, data="regression", epochs=4,
         batch_size=8, layers=[dense(4, "tanh"), dense(2, "linear")],
         optimizer={"class_name": "AdamW", "learning_rate": 0.03, "weight_decay": 0.2},
         loss={"name": "mean_absolute_error"}, metrics=False),
    dict(name="rmsprop_bce_logits", seed=17, samples=47, features=4, data="binary", epochs=4,
         batch_size=15, layers=[dense(3, "tanh"), dense(1, "linear")],
         optimizer={"class_name": "RMSprop", "learning_rate": 0.01},
         loss={"name": "binary_crossentropy", "from_logits": True}, metrics=True),
    dict(name="rmsprop_centered_momentum_mse_l2", seed=18, samples=39, features=4,
         data="regression", epochs=4, batch_size=9,
         layers=[dense(5, "relu", kernel_reg=(0.0, 0.01)), dense(1, "linear", (0.0, 0.02),
                                                                 (0.0, 0.01))],
         optimizer={"class_name": "RMSprop", "learning_rate": 0.005, "rho": 0.8,
                    "momentum": 0.5, "centered": True},
         loss={"name": "mean_squared_error"}, metrics=False),
    dict(name="adagrad_tanh_l1", seed=19, samples=44, features=3, data="binary", epochs=5,
         batch_size=12, layers=[dense(5, "tanh", kernel_reg=(0.005, 0.0), bias_reg=(0.002, 0.01)),
                                dense(1, "sigmoid")],
         optimizer={"class_name": "Adagrad", "learning_rate": 0.1},
         loss={"name": "binary_crossentropy"}, metrics=True),
    dict(name="adam_deep_activations", seed=20, samples=60, features=6, data="regression",
         epochs=3, batch_size=16,
         layers=[dense(6, "tanh"), dense(6, "elu"), dense(6, "gelu"), dense(5, "silu"),
                 dense(5, "selu"), dense(4, "softplus"), dense(4, "leaky_relu"),
                 dense(2, "linear")],
         optimizer={"class_name": "Adam", "learning_rate": 0.005},
         loss={"name": "mean_squared_error"}, metrics=False),
    dict(name="sgd_cce_logits", seed=21, samples=28, features=2, data="onehot", epochs=4,
         batch_size=6, layers=[dense(4, "softplus"), dense(3, "linear")],
         optimizer={"class_name": "SGD", "learning_rate": 0.1},
         loss={"name": "categorical_crossentropy", "from_logits": True}, metrics=True),
    # The image layers: two convolutions (same with strides, valid without a bias) around a max
    # pooling with SAME's clipped windows, then Flatten and a softmax.
    dict(name="adam_conv_maxpool_scce", seed=22, samples=26, features=36, data="sparse",
         epochs=4, batch_size=8,
         layers=[simple("Reshape", target_shape=[6, 6, 1]),
                 conv2d(3, [3, 3], [1, 1], "same", "tanh"),
                 pool2d("MaxPooling2D", [2, 2], [2, 2], "same"),
                 conv2d(4, [2, 2], [1, 1], "valid", "elu", use_bias=False),
                 simple("Flatten"), dense(3, "softmax")],
         optimizer={"class_name": "Adam", "learning_rate": 0.01},
         loss={"name": "sparse_categorical_crossentropy"}, metrics=True),
    # Rescaling, a strided convolution with a penalty, an average pooling whose SAME border
    # windows count only their pixels, and the global average.
    dict(name="sgd_rescaling_avgpool_gap_mse", seed=23, samples=30, features=32,
         data="regression", epochs=4, batch_size=7,
         layers=[simple("Rescaling", scale=0.5, offset=0.1),
                 simple("Reshape", target_shape=[4, 4, 2]),
                 conv2d(4, [3, 2], [2, 1], "same", "sigmoid", kernel_reg=(0.0, 0.01)),
                 pool2d("AveragePooling2D", [2, 2], [1, 1], "same"),
                 simple("GlobalAveragePooling2D"), dense(2, "linear")],
         optimizer={"class_name": "SGD", "learning_rate": 0.1, "momentum": 0.5},
         loss={"name": "mean_squared_error"}, metrics=False),
    # LayerNormalization over a row's channels (gamma and beta) and over a Dense's units (gamma
    # alone, epsilon 0.01, an L2 penalty on gamma).
    dict(name="rmsprop_layer_normalization_cce", seed=24, samples=34, features=12, data="onehot",
         epochs=4, batch_size=9,
         layers=[simple("Reshape", target_shape=[3, 4]), layer_norm(), simple("Flatten"),
                 dense(6, "tanh"), layer_norm(center=False, epsilon=0.01, gamma_reg=(0.0, 0.01)),
                 dense(3, "softmax")],
         optimizer={"class_name": "RMSprop", "learning_rate": 0.01},
         loss={"name": "categorical_crossentropy"}, metrics=True),
    # BatchNormalization over a convolution's channels (rows and pixels; momentum 0.8 so the
    # moving statistics travel far) and over a Dense's units (beta alone, an L2 penalty on it).
    dict(name="adam_batch_normalization_scce", seed=25, samples=29, features=18, data="sparse",
         epochs=4, batch_size=8,
         layers=[simple("Reshape", target_shape=[3, 3, 2]),
                 conv2d(3, [2, 2], [1, 1], "valid", "tanh"), batch_norm(momentum=0.8),
                 simple("Flatten"), dense(5, "tanh"),
                 batch_norm(scale=False, momentum=0.9, beta_reg=(0.0, 0.01)),
                 dense(3, "softmax")],
         optimizer={"class_name": "Adam", "learning_rate": 0.01},
         loss={"name": "sparse_categorical_crossentropy"}, metrics=True),
]

# ------------------------------------------------------------------------------------------------
# Keras-style documents.

LOSS_CLASSES = {"binary_crossentropy": "BinaryCrossentropy",
                "categorical_crossentropy": "CategoricalCrossentropy",
                "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy",
                "mean_squared_error": "MeanSquaredError",
                "mean_absolute_error": "MeanAbsoluteError", "huber": "Huber"}


def regularizer_json(reg):
    if not reg:
        return None
    l1, l2 = reg
    if l1 and l2:
        name, config = "L1L2", {"l1": l1, "l2": l2}
    elif l1:
        name, config = "L1", {"l1": l1}
    else:
        name, config = "L2", {"l2": l2}
    return {"module": "keras.regularizers", "class_name": name, "config": config,
            "registered_name": None}


SNAKE = {"Dense": "dense", "Conv2D": "conv2d", "MaxPooling2D": "max_pooling2d",
         "AveragePooling2D": "average_pooling2d", "Flatten": "flatten", "Reshape": "reshape",
         "Rescaling": "rescaling", "GlobalAveragePooling2D": "global_average_pooling2d",
         "LayerNormalization": "layer_normalization",
         "BatchNormalization": "batch_normalization"}


def layer_names(layers):
    """Keras's automatic names: dense, dense_1, ... counted per class."""
    seen, names = {}, []
    for layer in layers:
        base = SNAKE[layer["kind"]]
        k = seen.get(base, 0)
        names.append(base if k == 0 else f"{base}_{k}")
        seen[base] = k + 1
    return names


def layer_config(layer, name):
    kind = layer["kind"]
    config = {"name": name, "trainable": True}
    if kind in ("Dense", "Conv2D"):
        if kind == "Dense":
            config["units"] = layer["units"]
        else:
            config.update(filters=layer["filters"], kernel_size=layer["kernel_size"],
                          strides=layer["strides"], padding=layer["padding"])
        config.update(activation=layer["activation"], use_bias=layer.get("use_bias", True),
                      kernel_regularizer=regularizer_json(layer.get("kernel_regularizer")),
                      bias_regularizer=regularizer_json(layer.get("bias_regularizer")))
    elif kind in ("MaxPooling2D", "AveragePooling2D"):
        config.update(pool_size=layer["pool_size"], strides=layer["strides"],
                      padding=layer["padding"])
    elif kind == "Reshape":
        config["target_shape"] = layer["target_shape"]
    elif kind == "Rescaling":
        config.update(scale=layer["scale"], offset=layer["offset"])
    elif kind == "LayerNormalization":
        config.update(axis=-1, epsilon=layer["epsilon"], center=layer["center"],
                      scale=layer["scale"],
                      gamma_regularizer=regularizer_json(layer.get("gamma_regularizer")))
    elif kind == "BatchNormalization":
        config.update(axis=-1, momentum=layer["momentum"], epsilon=layer["epsilon"],
                      center=layer["center"], scale=layer["scale"],
                      beta_regularizer=regularizer_json(layer.get("beta_regularizer")))
    return config


def model_json(case):
    layers = [{"module": "keras.layers", "class_name": "InputLayer",
               "config": {"batch_shape": [None, case["features"]], "dtype": "float32",
                          "sparse": False, "name": "input_layer"}, "registered_name": None}]
    for layer, name in zip(case["layers"], layer_names(case["layers"])):
        layers.append({"module": "keras.layers", "class_name": layer["kind"],
                       "config": layer_config(layer, name), "registered_name": None})
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": "sequential", "trainable": True, "layers": layers},
            "registered_name": None}


def compile_json(case):
    opt = dict(case["optimizer"])
    kind = opt.pop("class_name")
    loss = case["loss"]
    if len(loss) == 1:
        loss_doc = loss["name"]
    else:
        config = {"name": loss["name"], "reduction": "sum_over_batch_size"}
        config.update({k: v for k, v in loss.items() if k != "name"})
        loss_doc = {"module": "keras.losses", "class_name": LOSS_CLASSES[loss["name"]],
                    "config": config, "registered_name": None}
    return {"optimizer": {"module": "keras.optimizers", "class_name": kind,
                          "config": dict(name=kind.lower(), **opt), "registered_name": None},
            "loss": loss_doc, "metrics": ["accuracy"] if case["metrics"] else []}


def weights_json(case, params):
    out, layers = [], case["layers"]
    for layer, name, vs in zip(layers, layer_names(layers), var_slices(layers)):
        for var, p in zip(var_names(layer), params[vs]):
            out.append({"path": f"sequential/{name}/{var}", "shape": list(p.shape),
                        "values": [float(v) for v in p.ravel()]})
    return out


def build_case(case):
    rng = np.random.default_rng(case["seed"])
    outputs = next(layer["units"] for layer in reversed(case["layers"])
                   if layer["kind"] == "Dense")
    x, y = make_data(rng, case["data"], case["samples"], case["features"], outputs)
    params = init_params(rng, case["features"], case["layers"])
    assert case["samples"] % case["batch_size"] != 0, case["name"] + ": no partial batch"
    grad_error = check_gradients(case, [p.copy() for p in params], x, y)
    margins = Margins()
    losses, accuracy, final = fit(case, params, x, y, np.float64, margins)
    for kind, value in margins.values.items():
        assert value > MIN_MARGIN[kind], f"{case['name']}: {kind} margin {value:.3g} too small"
    # The trajectory is well conditioned: float32 arithmetic lands within 1e-5 of float64.
    losses32, accuracy32, final32 = fit(case, params, x, y, np.float32, NoMargins())
    f32_error = max(rel_error(losses32, losses), max(rel_error(a, b)
                                                     for a, b in zip(final32, final)))
    if accuracy is not None:
        f32_error = max(f32_error, rel_error(accuracy32, accuracy))
    assert f32_error < 1e-5, f"{case['name']}: float32 replay differs by {f32_error:.3g}"
    # The trajectory moves measurably: a 10% larger learning rate changes it by more than 1e-3.
    faster = dict(case, optimizer=dict(case["optimizer"],
                                       learning_rate=case["optimizer"]["learning_rate"] * 1.1))
    losses_fast, _, final_fast = fit(faster, params, x, y, np.float64, NoMargins())
    sensitivity = max(rel_error(losses_fast, losses),
                      max(rel_error(a, b) for a, b in zip(final_fast, final)))
    assert sensitivity > 1e-3, f"{case['name']}: lr*1.1 changes only {sensitivity:.3g}"
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0], case["name"]
    doc = {"model": model_json(case), "compile": compile_json(case),
           "fit": {"epochs": case["epochs"], "batch_size": case["batch_size"]},
           "x": x.tolist(), "y": y.tolist(), "initial_weights": weights_json(case, params),
           "epoch_loss": losses}
    if accuracy is not None:
        doc["epoch_metrics"] = {"accuracy": accuracy}
    doc["final_weights"] = weights_json(case, final)
    summary = (f"{case['name']:34s} loss {losses[0]:.4f} -> {losses[-1]:.4f}  grad-check "
               f"{grad_error:.1e}  f32 {f32_error:.1e}  lr*1.1 {sensitivity:.1e}  margins " +
               " ".join(f"{k}={v:.2g}" for k, v in sorted(margins.values.items())))
    return doc, summary


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    docs = []
    for case in CASES:  # every check passes before any file is written
        docs.append(build_case(case))
    for case, (doc, summary) in zip(CASES, docs):
        with open(os.path.join(OUT_DIR, case["name"] + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
