#!/usr/bin/python3
"""Writes .keras files as Keras 3.16 writes them, and damaged or unsupported variants of them.

Keras cannot be installed where fitbench is built, so the files Keras writes are made here with
Python's zipfile and h5py from the facts in ../shared/keras-file-format.md (the same layout, keys
and storage, including what only Keras writes: the torch backend's optimizer module, the
shared_object_id of a dtype policy, int64 counters). tests/core/tst_keras_file.cpp reads each.

Run: /usr/bin/python3 tests/reference/keras_file_variants.py OUT_DIR
"""
import copy
import io
import json
import sys
import zipfile

import h5py
import numpy as np


def policy(shared=False):
    p = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
         "registered_name": None}
    if shared:
        p["shared_object_id"] = 139673290759504
    return p


def dense(name, units, activation, input_dim):
    return {"module": "keras.layers", "class_name": "Dense",
            "config": {"name": name, "trainable": True, "dtype": policy(name == "dense_1"),
                       "units": units, "activation": activation, "use_bias": True,
                       "kernel_initializer": {"module": "keras.initializers",
                                              "class_name": "GlorotUniform",
                                              "config": {"seed": None, "input_axes": None,
                                                         "output_axes": None},
                                              "registered_name": None},
                       "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros",
                                            "config": {}, "registered_name": None},
                       "kernel_regularizer": None, "bias_regularizer": None,
                       "kernel_constraint": None, "bias_constraint": None,
                       "quantization_config": None},
            "registered_name": None, "build_config": {"input_shape": [None, input_dim]}}


# The demo model of keras-file-format.md: Input(4) -> Dense(3, relu) -> Dense(1, sigmoid), Adam,
# saved by the torch backend after 4 steps.
CONFIG = {
    "module": "keras", "class_name": "Sequential",
    "config": {"name": "sequential", "trainable": True, "dtype": policy(True),
               "layers": [{"module": "keras.layers", "class_name": "InputLayer",
                           "config": {"batch_shape": [None, 4], "dtype": "float32",
                                      "sparse": False, "ragged": False, "name": "input_layer",
                                      "optional": False},
                           "registered_name": None},
                          dense("dense", 3, "relu", 4), dense("dense_1", 1, "sigmoid", 3)],
               "build_input_shape": [None, 4]},
    "registered_name": None,
    "build_config": {"input_shape": [None, 4]},
    "compile_config": {
        "optimizer": {"module": "keras.src.backend.torch.optimizers.torch_adam",
                      "class_name": "Adam",
                      "config": {"name": "adam", "learning_rate": 0.0010000000474974513,
                                 "weight_decay": None, "clipnorm": None, "global_clipnorm": None,
                                 "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                                 "ema_overwrite_frequency": None, "loss_scale_factor": None,
                                 "gradient_accumulation_steps": None, "beta_1": 0.9,
                                 "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": False},
                      "registered_name": "Adam"},
        "loss": "binary_crossentropy", "loss_weights": None, "metrics": ["accuracy"],
        "weighted_metrics": None, "run_eagerly": False, "steps_per_execution": 1,
        "jit_compile": False}}

RNG = np.random.default_rng(3)
WEIGHTS = {
    "dense": [RNG.normal(size=(4, 3)).astype("f4"), RNG.normal(size=(3,)).astype("f4")],
    "dense_1": [RNG.normal(size=(3, 1)).astype("f4"), RNG.normal(size=(1,)).astype("f4")],
}


def weights_h5(weights=WEIGHTS, optimizer=True, transform=None):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        for group, values in weights.items():
            g = f.create_group(f"layers/{group}/vars")
            g.attrs["name"] = group
            for i, v in enumerate(values):
                g.create_dataset(str(i), data=v)
        o = f.create_group("optimizer/vars")
        o.attrs["name"] = "adam"
        if optimizer:
            o.create_dataset("0", data=np.int32(4))
            o.create_dataset("1", data=np.float32(0.001))
            i = 2
            for group in weights:
                for v in weights[group]:
                    o.create_dataset(str(i), data=np.full(v.shape, 0.01 * i, "f4"))
                    o.create_dataset(str(i + 1), data=np.full(v.shape, 0.001 * i, "f4"))
                    i += 2
        f.create_group("vars").attrs["name"] = "sequential"
        if transform:
            transform(f)
    return buf.getvalue()


def write(path, config=CONFIG, h5=None, metadata=True, compression=zipfile.ZIP_STORED,
          raw_config=None):
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        if metadata:
            z.writestr("metadata.json", json.dumps({"keras_version": "3.16.0",
                                                    "date_saved": "2026-12-03@07:14:54"}))
        if config is not None or raw_config is not None:
            z.writestr("config.json", raw_config if raw_config is not None else json.dumps(config))
        if h5 is not False:
            z.writestr("model.weights.h5", h5 if h5 is not None else weights_h5())


def main():
    out = sys.argv[1]
    write(f"{out}/keras_demo.keras")
    # The demo's weights by fitbench's variable paths, for the reader's test to compare.
    with open(f"{out}/keras_demo_weights.json", "w") as f:
        json.dump([{"path": f"sequential/{g}/{'kernel' if i == 0 else 'bias'}",
                    "shape": list(v.shape), "values": [float(x) for x in v.flatten()]}
                   for g, vs in WEIGHTS.items() for i, v in enumerate(vs)], f)
    write(f"{out}/deflated_no_metadata.keras", metadata=False, compression=zipfile.ZIP_DEFLATED)
    write(f"{out}/untrained.keras", h5=weights_h5(optimizer=False))
    # With the Normalization layer's statistics in its config (no weights in its group).
    normalized = copy.deepcopy(CONFIG)
    normalized["config"]["layers"].insert(1, {
        "module": "keras.layers", "class_name": "Normalization",
        "config": {"name": "normalization", "trainable": True, "dtype": policy(), "axis": [-1],
                   "invert": False, "mean": [1.0, 2.0, 3.0, 4.0],
                   "variance": [4.0, 4.0, 1.0, 0.25]},
        "registered_name": None, "build_config": {"input_shape": [None, 4]}})

    def empty_norm(f):
        f.create_group("layers/normalization/vars").attrs["name"] = "normalization"

    write(f"{out}/normalization_in_config.keras", config=normalized,
          h5=weights_h5(transform=empty_norm))

    # Refused: what fitbench cannot run, and damage.
    lstm = copy.deepcopy(CONFIG)
    lstm["config"]["layers"][1] = {"module": "keras.layers", "class_name": "LSTM",
                                   "config": {"name": "lstm", "units": 3},
                                   "registered_name": None}
    write(f"{out}/lstm.keras", config=lstm)
    custom = copy.deepcopy(CONFIG)
    custom["config"]["layers"][2]["config"]["activation"] = "mish"
    write(f"{out}/unknown_activation.keras", config=custom)
    write(f"{out}/no_config.keras", config=None)
    write(f"{out}/no_weights.keras", h5=False)
    write(f"{out}/bad_config_json.keras", raw_config='{"module": "keras", "class_name"')
    write(f"{out}/not_hdf5.keras", h5=b"this is not an HDF5 file at all")
    transposed = dict(WEIGHTS, dense=[WEIGHTS["dense"][0].T.copy(), WEIGHTS["dense"][1]])
    write(f"{out}/wrong_shape.keras", h5=weights_h5(transposed, optimizer=False))
    missing = dict(WEIGHTS, dense_1=[WEIGHTS["dense_1"][0]])
    write(f"{out}/missing_variable.keras", h5=weights_h5(missing, optimizer=False))

    def strings(f):
        del f["layers/dense/vars/1"]
        f["layers/dense/vars"].create_dataset("1", data=np.array([b"a", b"b", b"c"]))

    write(f"{out}/string_dataset.keras", h5=weights_h5(transform=strings))

    def huge_slot(f):
        # Storage is allocated late: the file stays small, its header claims 10^10 floats.
        del f["optimizer/vars/9"]
        f["optimizer/vars"].create_dataset("9", shape=(100000, 100000), dtype="f4")

    write(f"{out}/huge_slot.keras", h5=weights_h5(transform=huge_slot))

    def unstored_kernel(f):
        # The kernel's shape is right but its storage was never written: HDF5 would read fill
        # values.
        del f["layers/dense/vars/0"]
        f["layers/dense/vars"].create_dataset("0", shape=(4, 3), dtype="f4")

    write(f"{out}/unstored_kernel.keras", h5=weights_h5(transform=unstored_kernel))
    # Two Dense layers of 20,000 units: a 20,000 x 20,000 kernel is over the 1 GiB model limit,
    # refused before any weight is read.
    huge = copy.deepcopy(CONFIG)
    huge["config"]["layers"][1] = dense("dense", 20000, "relu", 4)
    huge["config"]["layers"][2] = dense("dense_1", 20000, "sigmoid", 20000)
    write(f"{out}/huge_model.keras", config=huge)
    # config.json's sizes in the zip's local header and central directory claim 3 GB: the member
    # holds a few hundred bytes.
    write(f"{out}/size_claim.keras", compression=zipfile.ZIP_DEFLATED)
    with open(f"{out}/size_claim.keras", "rb") as f:
        claim = bytearray(f.read())
    name = b"config.json"
    local = claim.find(b"PK\x03\x04")
    while claim[local + 30:local + 30 + len(name)] != name:
        local = claim.find(b"PK\x03\x04", local + 4)
    central = claim.find(b"PK\x01\x02")
    while claim[central + 46:central + 46 + len(name)] != name:
        central = claim.find(b"PK\x01\x02", central + 4)
    claim[local + 22:local + 26] = (3000000000).to_bytes(4, "little")
    claim[central + 24:central + 28] = (3000000000).to_bytes(4, "little")
    with open(f"{out}/size_claim.keras", "wb") as f:
        f.write(bytes(claim))
    renamed = {"out" if k == "dense_1" else k: v for k, v in WEIGHTS.items()}
    write(f"{out}/renamed_group.keras", h5=weights_h5(renamed, optimizer=False))
    with open(f"{out}/keras_demo.keras", "rb") as f:
        whole = f.read()
    with open(f"{out}/truncated.keras", "wb") as f:
        f.write(whole[: len(whole) // 2])
    with open(f"{out}/plain_text.keras", "w") as f:
        f.write("not a zip\n")
    h5 = weights_h5()
    with open(f"{out}/demo.weights.h5", "wb") as f:
        f.write(h5)
    with open(f"{out}/truncated.weights.h5", "wb") as f:
        f.write(h5[: len(h5) // 3])


if __name__ == "__main__":
    main()
