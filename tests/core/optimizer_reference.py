#!/usr/bin/python3
"""Independent float64 reference for tst_optimizers.cpp's golden tests.

Implements Keras 3's update rules as written in keras/src/optimizers/{base_optimizer,sgd,adam,
adamw,rmsprop,adagrad}.py and schedules/learning_rate_schedule.py, with numpy in float64, and
prints, for every case, the kernel (2x3) and bias (1x3) after STEPS updates as C++ rows to paste
into tst_optimizers.cpp. Run: /usr/bin/python3 tests/core/optimizer_reference.py
"""
import math

import numpy as np

STEPS = 6
KERNEL0 = np.array([[0.5, -0.25, 1.0], [-0.75, 0.125, 0.375]])
BIAS0 = np.array([[0.0625, -0.5, 0.25]])


def gradient(step):
    """Element i of the flattened (kernel, bias) gets ((7 i + 5 step + 3) mod 13 - 6) / 4."""
    g = np.array([((7 * i + 5 * step + 3) % 13 - 6) / 4.0 for i in range(9)])
    return [g[:6].reshape(2, 3), g[6:].reshape(1, 3)]


def schedule(s, step):
    kind = s["class_name"]
    if kind == "ExponentialDecay":
        p = step / s["decay_steps"]
        if s.get("staircase", False):
            p = math.floor(p)
        return s["initial_learning_rate"] * s["decay_rate"] ** p
    if kind == "CosineDecay":
        alpha = s.get("alpha", 0.0)
        decay_steps = s["decay_steps"]

        def decay(t, start):
            cosine = 0.5 * (1.0 + math.cos(math.pi * t / decay_steps))
            return start * ((1.0 - alpha) * cosine + alpha)

        if s.get("warmup_target") is None:
            return decay(min(step, decay_steps), s["initial_learning_rate"])
        warmup = s.get("warmup_steps", 0.0)
        step = min(step, decay_steps + warmup)
        if step < warmup:
            delta = s["warmup_target"] - s["initial_learning_rate"]
            return delta * (step / warmup) + s["initial_learning_rate"]
        return decay(step - warmup, s["warmup_target"])
    if kind == "PiecewiseConstantDecay":
        b, v = s["boundaries"], s["values"]
        for i, boundary in enumerate(b):
            if step <= boundary:
                return v[i]
        return v[-1]
    raise ValueError(kind)


DEFAULT_LR = {"SGD": 0.01, "Adam": 0.001, "AdamW": 0.001, "RMSprop": 0.001, "Adagrad": 0.001}


def run(case):
    o = dict(case)
    cls = o["class_name"]
    wd = o.get("weight_decay", 0.004 if cls == "AdamW" else None)
    variables = [KERNEL0.copy(), BIAS0.copy()]
    zeros = lambda: [np.zeros_like(v) for v in variables]
    slots = {"m": zeros(), "v": zeros(), "vhat": zeros(), "a": zeros(), "mom": zeros(),
             "acc": [np.full_like(v, o.get("initial_accumulator_value", 0.1)) for v in variables]}
    for it in range(STEPS):
        grads = gradient(it)
        # Learning rate of this iteration.
        lr = schedule(o["schedule"], it) if "schedule" in o else o.get("learning_rate",
                                                                          DEFAULT_LR[cls])
        # base_optimizer._clip_gradients
        if o.get("clipnorm"):
            c = o["clipnorm"]
            grads = [g * c / max(np.sqrt(np.sum(g * g)), c) for g in grads]
        elif o.get("global_clipnorm"):
            c = o["global_clipnorm"]
            norm = math.sqrt(sum(np.sum(g * g) for g in grads))
            grads = [g * (c * min(1.0 / norm, 1.0 / c)) for g in grads]
        elif o.get("clipvalue"):
            c = o["clipvalue"]
            grads = [np.clip(g, -c, c) for g in grads]
        # base_optimizer._apply_weight_decay
        if wd is not None:
            variables = [w - w * wd * lr for w in variables]
        for k in range(2):
            w, g = variables[k], grads[k]
            if cls == "SGD":
                mu = o.get("momentum", 0.0)
                if mu != 0:
                    m = slots["mom"][k] = mu * slots["mom"][k] - lr * g
                    w = w + (mu * m - lr * g if o.get("nesterov") else m)
                else:
                    w = w - lr * g
            elif cls in ("Adam", "AdamW"):
                b1, b2 = o.get("beta_1", 0.9), o.get("beta_2", 0.999)
                eps = o.get("epsilon", 1e-7)
                t = it + 1
                alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
                m = slots["m"][k] = slots["m"][k] + (g - slots["m"][k]) * (1 - b1)
                v = slots["v"][k] = slots["v"][k] + (g * g - slots["v"][k]) * (1 - b2)
                if o.get("amsgrad"):
                    v = slots["vhat"][k] = np.maximum(slots["vhat"][k], v)
                w = w - m * alpha / (np.sqrt(v) + eps)
            elif cls == "RMSprop":
                rho, mu = o.get("rho", 0.9), o.get("momentum", 0.0)
                eps = o.get("epsilon", 1e-7)
                v = slots["v"][k] = rho * slots["v"][k] + (1 - rho) * g * g
                if o.get("centered"):
                    a = slots["a"][k] = rho * slots["a"][k] + (1 - rho) * g
                    denominator = v - a * a + eps
                else:
                    denominator = v + eps
                increment = lr * g / np.sqrt(denominator)
                if mu > 0:
                    slots["mom"][k] = mu * slots["mom"][k] + increment
                    w = w - slots["mom"][k]
                else:
                    w = w - increment
            elif cls == "Adagrad":
                eps = o.get("epsilon", 1e-7)
                acc = slots["acc"][k] = slots["acc"][k] + g * g
                w = w - lr * g / np.sqrt(acc + eps)
            variables[k] = w
    return np.concatenate([v.ravel() for v in variables])


EXP = {"class_name": "ExponentialDecay", "initial_learning_rate": 0.2, "decay_steps": 2.0,
       "decay_rate": 0.5, "staircase": True}
EXP_SMOOTH = {"class_name": "ExponentialDecay", "initial_learning_rate": 0.1, "decay_steps": 3.0,
              "decay_rate": 0.7}
COS = {"class_name": "CosineDecay", "initial_learning_rate": 0.0, "decay_steps": 4.0,
       "alpha": 0.1, "warmup_target": 0.1, "warmup_steps": 2.0}
PIECEWISE = {"class_name": "PiecewiseConstantDecay", "boundaries": [1.0, 3.0],
             "values": [0.1, 0.05, 0.01]}

# The same names and arguments as the rows of tst_optimizers.cpp golden_data().
CASES = [
    ("sgd", {"class_name": "SGD", "learning_rate": 0.1}),
    ("sgd_default_rate", {"class_name": "SGD"}),
    ("sgd_momentum", {"class_name": "SGD", "learning_rate": 0.1, "momentum": 0.9}),
    ("sgd_nesterov", {"class_name": "SGD", "learning_rate": 0.1, "momentum": 0.9,
                      "nesterov": True}),
    ("sgd_weight_decay", {"class_name": "SGD", "learning_rate": 0.1, "weight_decay": 0.2}),
    ("adam", {"class_name": "Adam", "learning_rate": 0.05}),
    ("adam_defaults", {"class_name": "Adam"}),
    ("adam_betas_epsilon", {"class_name": "Adam", "learning_rate": 0.05, "beta_1": 0.8,
                            "beta_2": 0.95, "epsilon": 0.1}),
    ("adam_amsgrad", {"class_name": "Adam", "learning_rate": 0.05, "beta_2": 0.9,
                      "amsgrad": True}),
    ("adamw", {"class_name": "AdamW", "learning_rate": 0.05, "weight_decay": 0.1}),
    ("adamw_defaults", {"class_name": "AdamW"}),
    ("adamw_amsgrad", {"class_name": "AdamW", "learning_rate": 0.05, "weight_decay": 0.1,
                       "beta_2": 0.9, "amsgrad": True}),
    ("rmsprop", {"class_name": "RMSprop", "learning_rate": 0.01}),
    ("rmsprop_rho_epsilon", {"class_name": "RMSprop", "learning_rate": 0.01, "rho": 0.8,
                             "epsilon": 0.1}),
    ("rmsprop_momentum", {"class_name": "RMSprop", "learning_rate": 0.01, "momentum": 0.9}),
    ("rmsprop_centered", {"class_name": "RMSprop", "learning_rate": 0.01, "centered": True}),
    ("rmsprop_centered_momentum", {"class_name": "RMSprop", "learning_rate": 0.01,
                                   "centered": True, "momentum": 0.5, "epsilon": 0.01}),
    ("adagrad", {"class_name": "Adagrad", "learning_rate": 0.1}),
    ("adagrad_accumulator_epsilon", {"class_name": "Adagrad", "learning_rate": 0.1,
                                     "initial_accumulator_value": 0.5, "epsilon": 0.1}),
    ("sgd_clipnorm", {"class_name": "SGD", "learning_rate": 0.1, "momentum": 0.5,
                      "clipnorm": 2.0}),
    ("sgd_global_clipnorm", {"class_name": "SGD", "learning_rate": 0.1, "global_clipnorm": 2.8}),
    ("sgd_clipvalue", {"class_name": "SGD", "learning_rate": 0.1, "clipvalue": 0.6}),
    ("adam_clipnorm", {"class_name": "Adam", "learning_rate": 0.05, "clipnorm": 0.8}),
    ("rmsprop_global_clipnorm", {"class_name": "RMSprop", "learning_rate": 0.01,
                                 "global_clipnorm": 1.0}),
    ("sgd_exponential_staircase", {"class_name": "SGD", "momentum": 0.9, "schedule": EXP}),
    ("adagrad_exponential", {"class_name": "Adagrad", "schedule": EXP_SMOOTH}),
    ("adam_cosine_warmup", {"class_name": "Adam", "schedule": COS}),
    ("adamw_piecewise", {"class_name": "AdamW", "weight_decay": 0.1, "schedule": PIECEWISE}),
]

if __name__ == "__main__":
    for name, case in CASES:
        values = ", ".join(f"{x:.9g}" for x in run(case))
        print(f"    {{\"{name}\", {{{values}}}}},")
