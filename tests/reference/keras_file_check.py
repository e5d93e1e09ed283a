#!/usr/bin/python3
"""Checks a .keras file that fitbench wrote against Keras 3.16's layout and against fitbench.

Keras cannot be installed on the machines fitbench is built on, so this reads the file the way
Keras's saving_lib does, with Python's zipfile and h5py (Debian's python3-h5py), and checks every
fact of ../shared/keras-file-format.md: the zip members and how they are stored, metadata.json,
the key order of config.json (model, layers, compile_config, optimizer), the HDF5 tree
(layers/<group>/vars/<i>, name attributes, float32/int32 contiguous datasets, superblock 0,
optimizer/vars), and that every weight equals fitbench's own model file bit for bit. With
--data and --predictions it also runs the model as Keras would (Normalization, Dense and
activations in float32, from config.json and the weights alone) and compares the outputs with
fitbench-cli predict's.

Run: /usr/bin/python3 tests/reference/keras_file_check.py MODEL.keras FITBENCH_MODEL.json
         [--data X.csv --target COL --predictions P.csv]
Prints "ok" and exits 0, or prints what differs and exits 1.
"""
import argparse
import io
import json
import re
import sys
import zipfile

import h5py
import numpy as np

PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)
    return cond


def snake(name):
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


BASE_OPTIMIZER_KEYS = ["name", "learning_rate", "weight_decay", "clipnorm", "global_clipnorm",
                       "clipvalue", "use_ema", "ema_momentum", "ema_overwrite_frequency",
                       "loss_scale_factor", "gradient_accumulation_steps"]
DENSE_KEYS = ["name", "trainable", "dtype", "units", "activation", "use_bias",
              "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
              "kernel_constraint", "bias_constraint", "quantization_config"]


def groups(layers):
    """Each layer after the InputLayer with its saving_lib group (dense, dense_1, ...)."""
    used = {}
    for layer in layers[1:]:
        group = snake(layer["class_name"])
        used[group] = used.get(group, -1) + 1
        yield layer, (f"{group}_{used[group]}" if used[group] else group)


CONV_KEYS = ["name", "trainable", "dtype", "filters", "kernel_size", "strides", "padding",
             "data_format", "dilation_rate", "groups", "activation", "use_bias",
             "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
             "activity_regularizer", "kernel_constraint", "bias_constraint"]

LAYER_NORMALIZATION_KEYS = ["name", "trainable", "dtype", "axis", "epsilon", "center", "scale",
                            "rms_scaling", "beta_initializer", "gamma_initializer",
                            "beta_regularizer", "gamma_regularizer", "beta_constraint",
                            "gamma_constraint"]

BATCH_NORMALIZATION_KEYS = ["name", "trainable", "dtype", "axis", "momentum", "epsilon",
                            "center", "scale", "beta_initializer", "gamma_initializer",
                            "moving_mean_initializer", "moving_variance_initializer",
                            "beta_regularizer", "gamma_regularizer", "beta_constraint",
                            "gamma_constraint", "synchronized", "renorm", "renorm_clipping",
                            "renorm_momentum"]


def conv_output(size, kernel, stride, padding):
    # keras/src/ops/operation_utils.py compute_conv_output_shape.
    return (size - 1) // stride + 1 if padding == "same" else (size - kernel) // stride + 1


def check_zip(z):
    infos = z.infolist()
    expect([i.filename for i in infos] == ["metadata.json", "config.json", "model.weights.h5"],
           f"members {[i.filename for i in infos]}")
    for i in infos:
        expect(i.compress_type == zipfile.ZIP_STORED, f"{i.filename} is compressed")
        expect(i.flag_bits & 0x8 == 0, f"{i.filename} has a data descriptor")
        expect(i.external_attr == 0x01800000, f"{i.filename} external_attr {hex(i.external_attr)}")
        expect(i.create_system == 3, f"{i.filename} create_system {i.create_system}")
        expect(i.extra == b"", f"{i.filename} has extra fields")
    for name in ("metadata.json", "config.json"):
        expect(z.getinfo(name).date_time == (1980, 1, 1, 0, 0, 0), f"{name} date")
    meta = z.read("metadata.json").decode()
    expect(re.fullmatch(r'\{"keras_version": "3\.16\.0", "date_saved": '
                        r'"\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d"\}', meta) is not None,
           f"metadata.json is {meta!r}")


def check_config(cfg):
    expect(list(cfg) == ["module", "class_name", "config", "registered_name", "build_config",
                         "compile_config"], f"top keys {list(cfg)}")
    expect(cfg["module"] == "keras" and cfg["class_name"] == "Sequential", "model class")
    expect(list(cfg["config"]) == ["name", "trainable", "dtype", "layers", "build_input_shape"],
           f"config keys {list(cfg['config'])}")
    layers = cfg["config"]["layers"]
    expect(layers[0]["class_name"] == "InputLayer", "first layer is not an InputLayer")
    expect(list(layers[0]["config"]) == ["batch_shape", "dtype", "sparse", "ragged", "name",
                                         "optional"], f"InputLayer keys {list(layers[0]['config'])}")
    shape = layers[0]["config"]["batch_shape"]
    for layer in layers[1:]:
        cls = layer["class_name"]
        # Reshape is built when it is made (its __init__ sets built): no build_config.
        keys = ["module", "class_name", "config", "registered_name"]
        if cls != "Reshape":
            keys.append("build_config")
            expect(layer["build_config"] == {"input_shape": shape},
                   f"{cls} build_config {layer['build_config']}, input {shape}")
        expect(list(layer) == keys, f"layer keys {list(layer)}")
        if cls == "Dense":
            expect(list(layer["config"]) == DENSE_KEYS, f"Dense keys {list(layer['config'])}")
            shape = [None, layer["config"]["units"]]
        elif cls == "Conv2D":
            c = layer["config"]
            expect(list(c) == CONV_KEYS, f"Conv2D keys {list(c)}")
            expect(c["data_format"] == "channels_last" and c["dilation_rate"] == [1, 1] and
                   c["groups"] == 1, "Conv2D data_format, dilation_rate, groups")
            shape = [None] + [conv_output(shape[1 + a], c["kernel_size"][a], c["strides"][a],
                                          c["padding"]) for a in range(2)] + [c["filters"]]
        elif cls in ("MaxPooling2D", "AveragePooling2D"):
            c = layer["config"]
            expect(list(c) == ["name", "trainable", "dtype", "pool_size", "padding", "strides",
                               "data_format"], f"{cls} keys {list(c)}")
            shape = [None] + [conv_output(shape[1 + a], c["pool_size"][a], c["strides"][a],
                                          c["padding"]) for a in range(2)] + [shape[3]]
        elif cls == "Flatten":
            expect(list(layer["config"]) == ["name", "trainable", "dtype", "data_format"],
                   f"Flatten keys {list(layer['config'])}")
            shape = [None, int(np.prod(shape[1:]))]
        elif cls == "Reshape":
            expect(list(layer["config"]) == ["name", "trainable", "dtype", "target_shape"],
                   f"Reshape keys {list(layer['config'])}")
            target = list(layer["config"]["target_shape"])
            if -1 in target:
                known = int(np.prod([d for d in target if d != -1]))
                target[target.index(-1)] = int(np.prod(shape[1:])) // known
            shape = [None] + target
        elif cls == "Rescaling":
            expect(list(layer["config"]) == ["name", "trainable", "dtype", "scale", "offset"],
                   f"Rescaling keys {list(layer['config'])}")
        elif cls == "GlobalAveragePooling2D":
            expect(list(layer["config"]) == ["name", "trainable", "dtype", "data_format",
                                             "keepdims"],
                   f"GlobalAveragePooling2D keys {list(layer['config'])}")
            expect(layer["config"]["keepdims"] is False, "keepdims")
            shape = [None, shape[-1]]
        elif cls == "LayerNormalization":
            c = layer["config"]
            expect(list(c) == LAYER_NORMALIZATION_KEYS, f"LayerNormalization keys {list(c)}")
            # A built layer's axis: the sorted axes it normalizes over, the batch's counted.
            expect(c["axis"] == [len(shape) - 1], f"LayerNormalization axis {c['axis']}")
            expect(c["rms_scaling"] is False, "rms_scaling")
        elif cls == "BatchNormalization":
            c = layer["config"]
            expect(list(c) == BATCH_NORMALIZATION_KEYS, f"BatchNormalization keys {list(c)}")
            expect(c["axis"] == -1 and c["synchronized"] is False and c["renorm"] is False,
                   "BatchNormalization axis, synchronized, renorm")
    compile_config = cfg["compile_config"]
    if compile_config is not None:
        expect(list(compile_config) == ["optimizer", "loss", "loss_weights", "metrics",
                                        "weighted_metrics", "run_eagerly", "steps_per_execution",
                                        "jit_compile"], f"compile keys {list(compile_config)}")
        opt = compile_config["optimizer"]
        expect(opt["module"] == "keras.optimizers" and opt["registered_name"] is None,
               "optimizer module")
        keys = list(opt["config"])
        expect(keys[:len(BASE_OPTIMIZER_KEYS)] == BASE_OPTIMIZER_KEYS, f"optimizer keys {keys}")
        expect(opt["config"]["name"] == snake(opt["class_name"]), "optimizer name")
    return layers


def check_weights(h5, layers, fitbench):
    expect(h5.id.get_create_plist().get_version()[0] == 0, "superblock is not version 0")
    weights = {w["path"]: w for w in fitbench["weights"]}
    model_name = fitbench["config"]["config"].get("name", "sequential")
    for layer, group in groups(layers):
        cls = layer["class_name"]
        vars_ = h5.get(f"layers/{group}/vars")
        if not expect(vars_ is not None, f"layers/{group}/vars is missing"):
            continue
        name = layer["config"]["name"]
        expect(vars_.attrs.get("name") == name, f"layers/{group}/vars name attr")
        if cls == "Normalization":
            expect(sorted(vars_) == ["0", "1", "2"], f"Normalization vars {sorted(vars_)}")
            data = fitbench["data"]
            mean = np.array(data["mean"], dtype=np.float32)
            var = np.array([s * s for s in data["stddev"]], dtype=np.float64).astype(np.float32)
            expect(np.array_equal(vars_["0"][()], mean), "Normalization mean")
            expect(np.array_equal(vars_["1"][()], var), "Normalization variance")
            expect(vars_["2"].dtype == np.int32 and vars_["2"].shape == (), "count dtype")
            continue
        names = ["kernel", "bias"] if cls in ("Dense", "Conv2D") else []
        if cls in ("Dense", "Conv2D") and not layer["config"]["use_bias"]:
            names = ["kernel"]
        if cls in ("LayerNormalization", "BatchNormalization"):
            names = [n for n, on in (("gamma", layer["config"]["scale"]),
                                     ("beta", layer["config"]["center"])) if on]
        if cls == "BatchNormalization":
            names += ["moving_mean", "moving_variance"]
        expect(sorted(vars_) == [str(i) for i in range(len(names))],
               f"{group} holds {sorted(vars_)}")
        for i, var_name in enumerate(names):
            d = vars_[str(i)]
            expect(d.dtype == np.dtype("<f4"), f"{group}/{i} dtype {d.dtype}")
            expect(d.chunks is None and d.compression is None, f"{group}/{i} is chunked")
            w = weights[f"{model_name}/{name}/{var_name}"]
            ref = np.array(w["values"], dtype=np.float32).reshape(w["shape"])
            expect(np.array_equal(d[()], ref), f"{group}/{i} values differ from fitbench's")
    opt = h5.get("optimizer/vars")
    if opt is not None:
        compile_config = fitbench.get("compile")
        expect(opt.attrs.get("name") == snake(compile_config["optimizer"]["class_name"]),
               f"optimizer/vars name attr {opt.attrs.get('name')}")
    if opt is not None and len(opt):
        expect(opt["0"].dtype == np.int32 and opt["0"].shape == (), "iteration dtype")
        for k in list(opt)[1:]:
            expect(opt[k].dtype == np.dtype("<f4"), f"optimizer/vars/{k} dtype")
    expect(h5["vars"].attrs.get("name") == model_name, "root vars name")


ACTIVATIONS = {
    "linear": lambda x: x,
    "relu": lambda x: np.maximum(x, np.float32(0)),
    "sigmoid": lambda x: (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32),
    "tanh": np.tanh,
    "softmax": lambda x: (np.exp(x - x.max(axis=-1, keepdims=True)) /
                          np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)).astype(np.float32),
    "softplus": lambda x: np.logaddexp(np.float32(0), x).astype(np.float32),
    "silu": lambda x: (x / (np.float32(1) + np.exp(-x))).astype(np.float32),
}


def conv2d(x, kernel, cfg):
    """Keras's Conv2D (channels_last) in float32: zeros as XLA's SAME pads (the smaller half
    first), then each kernel offset's pixels times its (in, out) matrix."""
    kh, kw, _, filters = kernel.shape
    (sh, sw), n = cfg["strides"], len(x)
    oh = conv_output(x.shape[1], kh, sh, cfg["padding"])
    ow = conv_output(x.shape[2], kw, sw, cfg["padding"])
    if cfg["padding"] == "same":
        ph = max((oh - 1) * sh + kh - x.shape[1], 0)
        pw = max((ow - 1) * sw + kw - x.shape[2], 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    out = np.zeros((n, oh, ow, filters), dtype=np.float32)
    for ky in range(kh):
        for kx in range(kw):
            window = x[:, ky:ky + sh * (oh - 1) + 1:sh, kx:kx + sw * (ow - 1) + 1:sw, :]
            out += (window @ kernel[ky, kx]).astype(np.float32)
    return out


def pool2d(x, cfg, reduce):
    """Keras's MaxPooling2D or AveragePooling2D (channels_last): each window clipped to the
    image (SAME's padding never wins a maximum and is not counted in a mean)."""
    (kh, kw), (sh, sw), n = cfg["pool_size"], cfg["strides"], len(x)
    oh = conv_output(x.shape[1], kh, sh, cfg["padding"])
    ow = conv_output(x.shape[2], kw, sw, cfg["padding"])
    top = max((oh - 1) * sh + kh - x.shape[1], 0) // 2 if cfg["padding"] == "same" else 0
    left = max((ow - 1) * sw + kw - x.shape[2], 0) // 2 if cfg["padding"] == "same" else 0
    out = np.empty((n, oh, ow, x.shape[3]), dtype=np.float32)
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * sh - top, ox * sw - left
            window = x[:, max(y0, 0):min(y0 + kh, x.shape[1]),
                       max(x0, 0):min(x0 + kw, x.shape[2]), :]
            out[:, oy, ox, :] = reduce(window)
    return out


def keras_predict(h5, layers, x):
    """The forward pass as Keras runs it, in float32, from the config and the weights."""
    x = x.astype(np.float32).reshape((len(x),) + tuple(layers[0]["config"]["batch_shape"][1:]))
    for layer, group in groups(layers):
        cls = layer["class_name"]
        vars_ = h5[f"layers/{group}/vars"]
        cfg = layer["config"]
        if cls == "Normalization":
            mean, var = vars_["0"][()], vars_["1"][()]
            x = (x - mean) / np.maximum(np.sqrt(var), np.float32(1e-7))
        elif cls == "Dense":
            x = x @ vars_["0"][()]
            if cfg["use_bias"]:
                x = x + vars_["1"][()]
            x = ACTIVATIONS[cfg["activation"]](x)
        elif cls == "Conv2D":
            x = conv2d(x, vars_["0"][()], cfg)
            if cfg["use_bias"]:
                x = x + vars_["1"][()]
            x = ACTIVATIONS[cfg["activation"]](x)
        elif cls == "MaxPooling2D":
            x = pool2d(x, cfg, lambda w: w.max(axis=(1, 2)))
        elif cls == "AveragePooling2D":
            x = pool2d(x, cfg, lambda w: w.mean(axis=(1, 2), dtype=np.float32))
        elif cls == "Activation":
            x = ACTIVATIONS[cfg["activation"]](x)
        elif cls == "Flatten":
            x = x.reshape(len(x), -1)
        elif cls == "Reshape":
            x = x.reshape((len(x),) + tuple(cfg["target_shape"]))
        elif cls == "GlobalAveragePooling2D":
            x = x.reshape((len(x), -1, x.shape[-1])).mean(axis=1, dtype=np.float32)
        elif cls == "Rescaling":
            # float32, the product and the sum each rounded, as Keras's call.
            x = x.astype(np.float32) * np.float32(cfg["scale"]) + np.float32(cfg["offset"])
        elif cls == "LayerNormalization":
            # keras/src/ops/nn.py _layer_normalization over the last axis.
            mean = x.mean(axis=-1, keepdims=True, dtype=np.float32)
            inv = np.float32(1) / np.sqrt(x.var(axis=-1, keepdims=True, dtype=np.float32) +
                                          np.float32(cfg["epsilon"]))
            k = 0
            if cfg["scale"]:
                inv = inv * vars_["0"][()]
                k = 1
            res = -mean * inv
            if cfg["center"]:
                res = res + vars_[str(k)][()]
            x = x * inv + res
        elif cls == "BatchNormalization":
            # keras/src/backend/jax/nn.py batch_normalization with the moving statistics.
            k = int(cfg["scale"]) + int(cfg["center"])
            mean, var = vars_[str(k)][()], vars_[str(k + 1)][()]
            inv = np.float32(1) / np.sqrt(var + np.float32(cfg["epsilon"]))
            if cfg["scale"]:
                inv = inv * vars_["0"][()]
            res = -mean * inv
            if cfg["center"]:
                res = res + vars_[str(int(cfg["scale"]))][()]
            x = x * inv + res
        x = x.astype(np.float32)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("keras_file")
    ap.add_argument("fitbench_model")
    ap.add_argument("--data")
    ap.add_argument("--target")
    ap.add_argument("--predictions")
    args = ap.parse_args()
    with open(args.fitbench_model) as f:
        fitbench = json.load(f)
    z = zipfile.ZipFile(args.keras_file)
    check_zip(z)
    cfg = json.loads(z.read("config.json"))
    layers = check_config(cfg)
    h5 = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
    check_weights(h5, layers, fitbench)
    if args.data and args.predictions:
        header = open(args.data).readline().strip().split(",")
        table = np.loadtxt(args.data, delimiter=",", skiprows=1, ndmin=2)
        features = [i for i, name in enumerate(header) if name != args.target]
        ours = keras_predict(h5, layers, table[:, features])
        theirs = np.loadtxt(args.predictions, delimiter=",", skiprows=1, ndmin=2)
        diff = float(np.max(np.abs(ours - theirs)))
        expect(ours.shape == theirs.shape and diff <= 1e-6,
               f"predictions differ by {diff} (shapes {ours.shape}, {theirs.shape})")
    if PROBLEMS:
        print("\n".join(PROBLEMS))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
