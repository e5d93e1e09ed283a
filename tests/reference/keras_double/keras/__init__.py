"""A recording test double of `keras`: NOT Keras (see ../README.md).

It lets tst_keras_script run the scripts fitbench exports on a machine without Keras. Only the
names those scripts use exist; their constructors take Keras 3's argument names (an unknown
keyword is a TypeError, as it would be in Keras) and record what they were given. Nothing is
computed, but for one reader: keras.utils.image_dataset_from_directory reads the folder as Keras
documents it (index_directory's order, NumPy's shuffle, the split, decoding with Pillow and
tf.image.resize's bilinear rule written here in NumPy), so the images a script hands fit() can
be compared with fitbench's own reading. At exit the record is written as JSON to the file named
by KERAS_RECORD.
"""

import atexit
import hashlib
import json
import math
import os
import re
import sys
import types

import numpy as np

_RECORD = {"calls": []}


def _plain(value):
    """A JSON-able picture of an argument: recorded objects by class and arguments."""
    if isinstance(value, _Recorded):
        return value._picture()
    if isinstance(value, np.ndarray):
        return {"ndarray": list(value.shape), "dtype": str(value.dtype)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if callable(value):
        return "<callable>"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


class _Recorded:
    _module = ""
    _params = ()
    _extra = ()

    def __init__(self, *args, **kwargs):
        if len(args) > len(self._params):
            raise TypeError(f"{self._module}.{type(self).__name__}() takes at most "
                            f"{len(self._params)} positional arguments, got {len(args)}")
        bound = dict(zip(self._params, args))
        for key, value in kwargs.items():
            if key in bound:
                raise TypeError(f"{type(self).__name__}() got multiple values for '{key}'")
            if key not in self._params and key not in self._extra:
                raise TypeError(f"{self._module}.{type(self).__name__}() got an unexpected "
                                f"keyword argument '{key}'")
            bound[key] = value
        self.arguments = bound

    def _picture(self):
        return {"class": f"{self._module}.{type(self).__name__}",
                "arguments": _plain(self.arguments)}


def _module(name, classes, extra=()):
    """A submodule keras.<name> holding a recording class per entry of `classes`."""
    module = types.ModuleType(f"keras.{name}")
    for class_name, params in classes.items():
        cls = type(class_name, (_Recorded,), {"_module": f"keras.{name}",
                                              "_params": tuple(params), "_extra": tuple(extra)})
        setattr(module, class_name, cls)
    sys.modules[module.__name__] = module
    return module


# Keras 3's constructor arguments (keras/src/...: __init__ signatures).
_LAYER_EXTRA = ("name", "trainable", "dtype")
layers = _module("layers", {
    "Dense": ["units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
              "kernel_regularizer", "bias_regularizer", "activity_regularizer",
              "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha",
              "quantization_config"],
    "Conv2D": ["filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "groups", "activation", "use_bias", "kernel_initializer", "bias_initializer",
               "kernel_regularizer", "bias_regularizer", "activity_regularizer",
               "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha"],
    "MaxPooling2D": ["pool_size", "strides", "padding", "data_format"],
    "AveragePooling2D": ["pool_size", "strides", "padding", "data_format"],
    "Activation": ["activation"],
    "Dropout": ["rate", "noise_shape", "seed"],
    "Flatten": ["data_format"],
    "Reshape": ["target_shape"],
    "Rescaling": ["scale", "offset"],
    "GlobalAveragePooling2D": ["data_format", "keepdims"],
    "LayerNormalization": ["axis", "epsilon", "center", "scale", "beta_initializer",
                           "gamma_initializer", "beta_regularizer", "gamma_regularizer",
                           "beta_constraint", "gamma_constraint"],
    "BatchNormalization": ["axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                           "gamma_initializer", "moving_mean_initializer",
                           "moving_variance_initializer", "beta_regularizer",
                           "gamma_regularizer", "beta_constraint", "gamma_constraint",
                           "renorm", "renorm_clipping", "renorm_momentum", "synchronized"],
}, _LAYER_EXTRA)
_OPTIMIZER_COMMON = ["weight_decay", "clipnorm", "clipvalue", "global_clipnorm", "use_ema",
                     "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
                     "gradient_accumulation_steps", "name"]
optimizers = _module("optimizers", {
    "SGD": ["learning_rate", "momentum", "nesterov"] + _OPTIMIZER_COMMON,
    "Adam": ["learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad"] + _OPTIMIZER_COMMON,
    "AdamW": ["learning_rate", "weight_decay", "beta_1", "beta_2", "epsilon", "amsgrad"]
    + [a for a in _OPTIMIZER_COMMON if a != "weight_decay"],
    "RMSprop": ["learning_rate", "rho", "momentum", "epsilon", "centered"] + _OPTIMIZER_COMMON,
    "Adagrad": ["learning_rate", "initial_accumulator_value", "epsilon"] + _OPTIMIZER_COMMON,
})
optimizers.schedules = _module("optimizers.schedules", {
    "ExponentialDecay": ["initial_learning_rate", "decay_steps", "decay_rate", "staircase",
                         "name"],
    "CosineDecay": ["initial_learning_rate", "decay_steps", "alpha", "name", "warmup_target",
                    "warmup_steps"],
    "PiecewiseConstantDecay": ["boundaries", "values", "name"],
})
for _schedule in ("ExponentialDecay", "CosineDecay"):
    # A schedule is called with a step; the double answers its initial rate.
    setattr(getattr(optimizers.schedules, _schedule), "__call__",
            lambda self, step: np.float32(self.arguments["initial_learning_rate"]))
optimizers.schedules.PiecewiseConstantDecay.__call__ = (
    lambda self, step: np.float32(self.arguments["values"][0]))
_SEED = ["seed", "input_axes", "output_axes"]
initializers = _module("initializers", {
    "GlorotUniform": _SEED, "GlorotNormal": _SEED, "HeUniform": _SEED, "HeNormal": _SEED,
    "LecunUniform": _SEED, "LecunNormal": _SEED, "RandomNormal": ["mean", "stddev", "seed"],
    "RandomUniform": ["minval", "maxval", "seed"], "Zeros": [], "Ones": [],
})
regularizers = _module("regularizers", {"L1": ["l1"], "L2": ["l2"], "L1L2": ["l1", "l2"]})
_LOSS = ["reduction", "name", "dtype"]
losses = _module("losses", {
    "BinaryCrossentropy": ["from_logits", "label_smoothing", "axis"] + _LOSS,
    "CategoricalCrossentropy": ["from_logits", "label_smoothing", "axis"] + _LOSS,
    "SparseCategoricalCrossentropy": ["from_logits", "ignore_class", "reduction", "axis",
                                      "name", "dtype"],
    "MeanSquaredError": _LOSS, "MeanAbsoluteError": _LOSS, "Huber": ["delta"] + _LOSS,
})
_CONFUSION = ["thresholds", "top_k", "class_id", "name", "dtype"]
metrics = _module("metrics", {
    "BinaryAccuracy": ["name", "dtype", "threshold"], "CategoricalAccuracy": ["name", "dtype"],
    "SparseCategoricalAccuracy": ["name", "dtype"], "Precision": _CONFUSION,
    "Recall": _CONFUSION, "MeanSquaredError": ["name", "dtype"],
    "MeanAbsoluteError": ["name", "dtype"],
    "TopKCategoricalAccuracy": ["k", "name", "dtype"],
    "SparseTopKCategoricalAccuracy": ["k", "name", "dtype", "from_sorted_ids"],
    "AUC": ["num_thresholds", "curve", "summation_method", "name", "dtype", "thresholds",
            "multi_label", "num_labels", "label_weights", "from_logits"],
})
callbacks = _module("callbacks", {
    "EarlyStopping": ["monitor", "min_delta", "patience", "verbose", "mode", "baseline",
                      "restore_best_weights", "start_from_epoch"],
    "ModelCheckpoint": ["filepath", "monitor", "verbose", "save_best_only",
                        "save_weights_only", "mode", "save_freq", "initial_value_threshold"],
    "CSVLogger": ["filename", "separator", "append"],
    "ReduceLROnPlateau": ["monitor", "factor", "patience", "verbose", "mode", "min_delta",
                          "cooldown", "min_lr"],
    "LearningRateScheduler": ["schedule", "verbose"],
    "TerminateOnNaN": ["raise_error"],
})


def _record(kind, **fields):
    _RECORD["calls"].append(dict(kind=kind, **_plain(fields)))


# keras.utils
utils = types.ModuleType("keras.utils")
sys.modules["keras.utils"] = utils
utils.set_random_seed = lambda seed: _record("set_random_seed", seed=seed)


def _resize_bilinear(image, height, width):
    """tf.image.resize(image, (height, width), "bilinear"), antialias off: half-pixel centers,
    source coordinates in float32, edges clamped."""
    h, w = image.shape[:2]
    image = image.astype(np.float32)

    def axis(out, size):
        scale = np.float32(size) / np.float32(out)
        source = (np.arange(out, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
        floor = np.floor(source)
        lower = np.clip(floor, 0, size - 1).astype(int)
        upper = np.clip(np.ceil(source), 0, size - 1).astype(int)
        return lower, upper, (source - floor).astype(np.float32)

    y0, y1, ly = axis(height, h)
    x0, x1, lx = axis(width, w)
    lx = lx[None, :, None]
    top = image[y0][:, x0] + (image[y0][:, x1] - image[y0][:, x0]) * lx
    bottom = image[y1][:, x0] + (image[y1][:, x1] - image[y1][:, x0]) * lx
    return top + (bottom - top) * ly[:, None, None]


class _ImageDataset:
    """What image_dataset_from_directory returns, for as_numpy_iterator() only, in file order."""

    def __init__(self, images, labels):
        self._images, self._labels = images, labels

    def as_numpy_iterator(self):
        return iter(zip(self._images, self._labels))


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256),
                                 shuffle=True, seed=None, validation_split=None, subset=None,
                                 interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
                                 data_format=None, format="tf", verbose=True):
    from PIL import Image  # Debian's python3-pil

    assert labels == "inferred" and class_names is None and batch_size is None
    assert interpolation == "bilinear" and not crop_to_aspect_ratio and not pad_to_aspect_ratio
    classes = sorted(d for d in os.listdir(directory)
                     if os.path.isdir(os.path.join(directory, d)) and not d.startswith("."))
    paths, indices = [], []
    for k, name in enumerate(classes):
        for root, _, files in sorted(os.walk(os.path.join(directory, name)),
                                     key=lambda x: x[0]):
            for f in sorted(files):
                if f.lower().endswith((".bmp", ".gif", ".jpeg", ".jpg", ".png")):
                    paths.append(os.path.join(root, f))
                    indices.append(k)
    indices = np.array(indices, dtype="int32")
    if shuffle:
        np.random.RandomState(seed).shuffle(paths)
        np.random.RandomState(seed).shuffle(indices)
    mode = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}[color_mode]

    def part(files, part_labels):
        images = []
        for path in files:
            with Image.open(path) as picture:
                pixels = np.asarray(picture.convert(mode))
            if pixels.ndim == 2:
                pixels = pixels[:, :, None]
            images.append(_resize_bilinear(pixels, *image_size))
        if label_mode == "categorical":
            part_labels = np.eye(len(classes), dtype="float32")[part_labels]
        elif label_mode == "binary":
            part_labels = part_labels.astype("float32")[:, None]
        return _ImageDataset(images, list(part_labels))

    if not validation_split:
        return part(paths, indices)
    validation = int(validation_split * len(paths))
    training = len(paths) - validation
    parts = {"training": (paths[:training], indices[:training]),
             "validation": (paths[training:], indices[training:])}
    if subset == "both":
        return part(*parts["training"]), part(*parts["validation"])
    return part(*parts[subset])


utils.image_dataset_from_directory = image_dataset_from_directory

# keras.ops
ops = types.ModuleType("keras.ops")
sys.modules["keras.ops"] = ops
ops.convert_to_numpy = np.asarray

# keras.distribution (keras/src/distribution/distribution_lib.py)
distribution = types.ModuleType("keras.distribution")
sys.modules["keras.distribution"] = distribution


def list_devices(device_type=None):
    if os.environ.get("KERAS_DOUBLE_NO_DISTRIBUTION"):
        # What Keras raises on a backend without distribution_lib (numpy, openvino).
        raise AttributeError("'NoneType' object has no attribute 'list_devices'")
    counts = re.findall(r"--xla_force_host_platform_device_count=(\d+)",
                        os.environ.get("XLA_FLAGS", ""))
    count = int(counts[-1]) if counts else 1
    _record("list_devices", device_type=device_type, count=count)
    return [f"cpu:{i}" for i in range(count)]


class DeviceMesh:
    def __init__(self, shape, axis_names, devices=None):
        if devices is None:
            devices = list_devices()
        if len(shape) != len(axis_names):
            raise ValueError("Shape and axis_names should have same size.")
        if math.prod(shape) != len(devices):
            raise ValueError("Shape does not match the number of devices. "
                             f"Received: shape={shape}; devices.shape=({len(devices)},)")
        self.shape, self.axis_names, self.devices = tuple(shape), list(axis_names), devices


class LayoutMap:
    def __init__(self, device_mesh):
        self.device_mesh = device_mesh
        self.rules = {}

    def __setitem__(self, key, layout):
        if key in self.rules:
            raise ValueError(f"{key} already exist in the LayoutMap with value "
                             f"{self.rules[key]}. Please make sure to not use duplicated keys.")
        self.rules[key] = tuple(layout)


class DataParallel:
    def __init__(self, device_mesh=None, devices=None, auto_shard_dataset=True):
        self.device_mesh, self.devices = device_mesh, devices


class ModelParallel:
    def __init__(self, *, layout_map=None, batch_dim_name=None, auto_shard_dataset=True):
        if not isinstance(layout_map, LayoutMap):
            raise ValueError("You must specify a layout_map argument.")
        self.layout_map = layout_map
        self.batch_dim_name = batch_dim_name or layout_map.device_mesh.axis_names[0]


def set_distribution(value):
    picture = {"class": type(value).__name__}
    if isinstance(value, DataParallel):
        picture["devices"] = value.devices
    else:
        mesh = value.layout_map.device_mesh
        picture.update(mesh_shape=list(mesh.shape), axis_names=mesh.axis_names,
                       devices=mesh.devices, batch_dim_name=value.batch_dim_name,
                       layout_map=[[k, list(v)] for k, v in value.layout_map.rules.items()])
    _record("set_distribution", **picture)


for _name in ("list_devices", "DeviceMesh", "LayoutMap", "DataParallel", "ModelParallel",
              "set_distribution"):
    setattr(distribution, _name, globals()[_name])


class _Input:
    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None,
                 name=None, tensor=None, optional=False):
        self.shape, self.name = tuple(shape), name


def Input(*args, **kwargs):  # noqa: N802 (Keras's name)
    return _Input(*args, **kwargs)


class History:
    def __init__(self, history):
        self.history = history


class Sequential:
    def __init__(self, layers=None, trainable=True, name=None):
        self.layers = list(layers or [])
        self.name = name
        self.metric_names = []
        inputs = [l for l in self.layers if isinstance(l, _Input)]
        _record("Sequential", name=name,
                input=[{"shape": list(i.shape), "name": i.name} for i in inputs],
                layers=[l for l in self.layers if not isinstance(l, _Input)])

    def set_weights(self, weights):
        _record("set_weights", shapes=[list(np.shape(w)) for w in weights])

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        self.metric_names = [m if isinstance(m, str) else m.arguments.get("name", "")
                             for m in (metrics or [])]
        _record("compile", optimizer=optimizer, loss=loss, metrics=metrics or [])

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        for cb in callbacks or []:
            schedule = cb.arguments.get("schedule") if isinstance(cb, _Recorded) else None
            if callable(schedule):
                schedule(0, 0.01)  # the script's function must run
        _record("fit", x=_array(x), x_dtype=str(np.asarray(x).dtype),
                y=_array(y), y_dtype=str(np.asarray(y).dtype),
                batch_size=batch_size, epochs=epochs, verbose=verbose, callbacks=callbacks or [],
                validation_split=validation_split, shuffle=shuffle, initial_epoch=initial_epoch,
                validation_data=None if validation_data is None else
                [_array(v) for v in validation_data])
        history = {"loss": [0.5] * (epochs - initial_epoch)}
        for name in self.metric_names:
            history[name] = [0.5] * (epochs - initial_epoch)
        return History(history)


# Arrays up to this many elements are recorded as lists; larger ones (Fashion-MNIST's 47 million
# pixels) by their shape and the SHA-256 of their float32 bytes in C order.
_LIST_LIMIT = 1_000_000


def _array(a):
    a = np.ascontiguousarray(np.asarray(a, dtype="float32"))
    if a.size <= _LIST_LIMIT:
        return a.tolist()
    return {"shape": list(a.shape), "sha256": hashlib.sha256(a.tobytes()).hexdigest()}


@atexit.register
def _write_record():
    path = os.environ.get("KERAS_RECORD")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_RECORD, f)
