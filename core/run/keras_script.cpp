// keras_script: the script's head (imports, seed), distribution, model, compile() and fit(); the
// data section is in keras_script_data.cpp. Every argument at Keras's default is left out, every
// other one is written with Python's repr of its value.

#include "core/run/keras_script.h"

#include <algorithm>
#include <cstdio>

#include "core/losses/loss_registry.h"
#include "core/metrics/metric_registry.h"
#include "core/nn/initializer_registry.h"
#include "core/optimizers/optimizer_registry.h"
#include "core/python/python_repr.h"
#include "core/run/keras_script_parts.h"

namespace fitbench {
namespace keras_script_parts {

// Python's repr, in double quotes (as the rest of the script) when the text holds none.
std::string py_str(const std::string& text) {
  std::string r = python_str_repr(text);
  if (r.front() == '\'' && text.find('"') == std::string::npos) r.front() = r.back() = '"';
  return r;
}
std::string py_float(double value) { return python_repr(value); }
std::string py_int(int64_t value) { return std::to_string(value); }
std::string py_bool(bool value) { return value ? "True" : "False"; }

std::string py_int_tuple(const std::vector<int64_t>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + py_int(values[i]);
  return out + (values.size() == 1 ? ",)" : ")");
}

std::string py_count(double value) {
  if (value == static_cast<double>(static_cast<int64_t>(value))) {
    return py_int(static_cast<int64_t>(value));
  }
  return py_float(value);
}

}  // namespace keras_script_parts

namespace {

using namespace keras_script_parts;

// "Name(arg, key=value, ...)" from the arguments that are not empty.
std::string call(const std::string& callee, const std::vector<std::string>& args) {
  std::string out = callee + "(";
  bool first = true;
  for (const std::string& a : args) {
    if (a.empty()) continue;
    out += (first ? "" : ", ") + a;
    first = false;
  }
  return out + ")";
}

std::string kw(const char* key, const std::string& value) { return std::string(key) + "=" + value; }

std::string schedule_code(const ScheduleSpec& s) {
  const std::string callee = "keras.optimizers.schedules." + s.class_name;
  if (s.class_name == "PiecewiseConstantDecay") {
    std::string boundaries = "[", values = "[";
    for (size_t i = 0; i < s.boundaries.size(); ++i)
      boundaries += (i ? ", " : "") + py_count(s.boundaries[i]);
    for (size_t i = 0; i < s.values.size(); ++i) values += (i ? ", " : "") + py_float(s.values[i]);
    return call(callee, {kw("boundaries", boundaries + "]"), kw("values", values + "]")});
  }
  std::vector<std::string> args = {kw("initial_learning_rate", py_float(s.initial_learning_rate)),
                                   kw("decay_steps", py_count(s.decay_steps))};
  if (s.class_name == "ExponentialDecay") {
    args.push_back(kw("decay_rate", py_float(s.decay_rate)));
    if (s.staircase) args.push_back(kw("staircase", "True"));
  } else {
    if (s.alpha != 0.0) args.push_back(kw("alpha", py_float(s.alpha)));
    if (s.warmup_target) args.push_back(kw("warmup_target", py_float(*s.warmup_target)));
    if (s.warmup_steps != 0.0) args.push_back(kw("warmup_steps", py_count(s.warmup_steps)));
  }
  return call(callee, args);
}

std::string initializer_code(const InitializerSpec& init, const char* keras_default) {
  const InitializerInfo* info = find_initializer(init.name);
  const bool parameters =
      (init.name == "random_normal" && (init.mean != 0.0 || init.stddev != 0.05)) ||
      (init.name == "random_uniform" && (init.minval != -0.05 || init.maxval != 0.05));
  if (!init.seed && !parameters) return init.name == keras_default ? "" : py_str(init.name);
  std::vector<std::string> args;
  if (init.name == "random_normal") {
    if (init.mean != 0.0) args.push_back(kw("mean", py_float(init.mean)));
    if (init.stddev != 0.05) args.push_back(kw("stddev", py_float(init.stddev)));
  } else if (init.name == "random_uniform") {
    if (init.minval != -0.05) args.push_back(kw("minval", py_float(init.minval)));
    if (init.maxval != 0.05) args.push_back(kw("maxval", py_float(init.maxval)));
  }
  if (init.seed && (info == nullptr || info->random))
    args.push_back(kw("seed", py_int(static_cast<int64_t>(*init.seed))));
  return call("keras.initializers." + std::string(info ? info->class_name : init.name), args);
}

std::string regularizer_code(const RegularizerSpec& r) {
  if (!r.active()) return "";
  if (r.l2 == 0.0) return call("keras.regularizers.L1", {kw("l1", py_float(r.l1))});
  if (r.l1 == 0.0) return call("keras.regularizers.L2", {kw("l2", py_float(r.l2))});
  return call("keras.regularizers.L1L2", {kw("l1", py_float(r.l1)), kw("l2", py_float(r.l2))});
}

std::string layer_code(const LayerSpec& l, const std::string& name) {
  const auto opt = [](bool when, const char* key, const std::string& value) {
    return when && !value.empty() ? kw(key, value) : std::string();
  };
  const std::string named = kw("name", py_str(name));
  const std::string frozen = l.trainable ? "" : kw("trainable", "False");
  if (l.class_name == "Dense") {
    return call(
        "keras.layers.Dense",
        {py_int(l.units), opt(l.activation != "linear", "activation", py_str(l.activation)),
         opt(!l.use_bias, "use_bias", "False"),
         opt(true, "kernel_initializer", initializer_code(l.kernel_initializer, "glorot_uniform")),
         opt(true, "bias_initializer", initializer_code(l.bias_initializer, "zeros")),
         opt(true, "kernel_regularizer", regularizer_code(l.kernel_regularizer)),
         opt(true, "bias_regularizer", regularizer_code(l.bias_regularizer)), frozen, named});
  }
  if (l.class_name == "Conv2D") {
    return call(
        "keras.layers.Conv2D",
        {py_int(l.filters), py_int_tuple(l.kernel_size),
         opt(l.strides != std::vector<int64_t>{1, 1}, "strides", py_int_tuple(l.strides)),
         opt(l.padding != "valid", "padding", py_str(l.padding)),
         opt(l.activation != "linear", "activation", py_str(l.activation)),
         opt(!l.use_bias, "use_bias", "False"),
         opt(true, "kernel_initializer", initializer_code(l.kernel_initializer, "glorot_uniform")),
         opt(true, "bias_initializer", initializer_code(l.bias_initializer, "zeros")),
         opt(true, "kernel_regularizer", regularizer_code(l.kernel_regularizer)),
         opt(true, "bias_regularizer", regularizer_code(l.bias_regularizer)), frozen, named});
  }
  if (l.class_name == "MaxPooling2D" || l.class_name == "AveragePooling2D")
    return call("keras.layers." + l.class_name,
                {py_int_tuple(l.pool_size),
                 opt(l.strides != l.pool_size, "strides", py_int_tuple(l.strides)),
                 opt(l.padding != "valid", "padding", py_str(l.padding)), frozen, named});
  if (l.class_name == "Activation") {
    return call("keras.layers.Activation", {py_str(l.activation), frozen, named});
  }
  if (l.class_name == "Flatten") return call("keras.layers.Flatten", {frozen, named});
  if (l.class_name == "Reshape")
    return call("keras.layers.Reshape", {py_int_tuple(l.target_shape), frozen, named});
  if (l.class_name == "GlobalAveragePooling2D")
    return call("keras.layers.GlobalAveragePooling2D", {frozen, named});
  if (l.class_name == "Rescaling")
    return call(
        "keras.layers.Rescaling",
        {py_float(l.scale), opt(l.offset != 0.0, "offset", py_float(l.offset)), frozen, named});
  if (l.class_name == "LayerNormalization")
    return call(
        "keras.layers.LayerNormalization",
        {opt(l.epsilon != 1e-3, "epsilon", py_float(l.epsilon)), opt(!l.center, "center", "False"),
         opt(!l.scale_gamma, "scale", "False"),
         opt(true, "beta_initializer", initializer_code(l.beta_initializer, "zeros")),
         opt(true, "gamma_initializer", initializer_code(l.gamma_initializer, "ones")),
         opt(true, "beta_regularizer", regularizer_code(l.beta_regularizer)),
         opt(true, "gamma_regularizer", regularizer_code(l.gamma_regularizer)), frozen, named});
  if (l.class_name == "BatchNormalization")
    return call(
        "keras.layers.BatchNormalization",
        {opt(l.momentum != 0.99, "momentum", py_float(l.momentum)),
         opt(l.epsilon != 1e-3, "epsilon", py_float(l.epsilon)), opt(!l.center, "center", "False"),
         opt(!l.scale_gamma, "scale", "False"),
         opt(true, "beta_initializer", initializer_code(l.beta_initializer, "zeros")),
         opt(true, "gamma_initializer", initializer_code(l.gamma_initializer, "ones")),
         opt(true, "moving_mean_initializer", initializer_code(l.moving_mean_initializer, "zeros")),
         opt(true, "moving_variance_initializer",
             initializer_code(l.moving_variance_initializer, "ones")),
         opt(true, "beta_regularizer", regularizer_code(l.beta_regularizer)),
         opt(true, "gamma_regularizer", regularizer_code(l.gamma_regularizer)), frozen, named});
  // Dropout (the model was built, so no other class reaches here).
  return call("keras.layers.Dropout",
              {py_float(l.rate),
               opt(l.seed.has_value(), "seed", py_int(static_cast<int64_t>(l.seed.value_or(0)))),
               frozen, named});
}

std::string model_code(const RunPlan& plan) {
  const ModelSpec& spec = plan.spec.model;
  const Network& network = plan.model->network();
  std::string out = "model = keras.Sequential(\n    [\n";
  std::string input_name;
  // The declared shape, else the data's (the model was built on it).
  const std::vector<int64_t>& shape = network.input_shape();
  if (!spec.layers.empty() && spec.layers[0].class_name == "InputLayer")
    input_name = spec.layers[0].name;
  out += "        " +
         call("keras.Input", {kw("shape", py_int_tuple(shape)),
                              input_name.empty() ? "" : kw("name", py_str(input_name))}) +
         ",\n";
  size_t k = 0;
  for (const LayerSpec& l : spec.layers) {
    if (l.class_name == "InputLayer") continue;
    out += "        " + layer_code(l, network.layers()[k++]->name()) + ",\n";
  }
  return out + "    ],\n    name=" + py_str(network.name()) + ",\n)\n";
}

std::string optimizer_code(const OptimizerSpec& o) {
  std::vector<std::string> args;
  if (o.schedule) {
    args.push_back(kw("learning_rate", "lr_schedule"));
  } else if (o.learning_rate) {
    args.push_back(kw("learning_rate", py_float(*o.learning_rate)));
  }
  const OptimizerInfo* info = find_optimizer(o.class_name);
  if (info != nullptr) {
    for (const OptimizerField& f : info->fields) {
      const std::string key(f.info.key);
      if (f.number != nullptr && o.*f.number != f.info.number)
        args.push_back(key + "=" + py_float(o.*f.number));
      if (f.flag != nullptr && o.*f.flag != (f.info.number != 0.0))
        args.push_back(key + "=" + py_bool(o.*f.flag));
    }
  }
  if (o.weight_decay && *o.weight_decay != (info ? info->weight_decay : 0.0))
    args.push_back(kw("weight_decay", py_float(*o.weight_decay)));
  if (o.clipnorm) args.push_back(kw("clipnorm", py_float(*o.clipnorm)));
  if (o.clipvalue) args.push_back(kw("clipvalue", py_float(*o.clipvalue)));
  if (o.global_clipnorm) args.push_back(kw("global_clipnorm", py_float(*o.global_clipnorm)));
  return call("keras.optimizers." + std::string(info ? info->class_name : o.class_name), args);
}

std::string loss_code(const LossSpec& loss) {
  const LossInfo* info = find_loss(loss.name);
  const bool crossentropy = loss.name.find("crossentropy") != std::string::npos;
  if (info == nullptr ||
      !((crossentropy && loss.from_logits) || (loss.name == "huber" && loss.delta != 1.0)))
    return py_str(loss.name);
  return call("keras.losses." + std::string(info->class_name),
              {crossentropy ? kw("from_logits", "True") : kw("delta", py_float(loss.delta))});
}

std::string metrics_code(const CompileOptions& c) {
  std::string out = "[";
  for (size_t i = 0; i < c.metrics.size(); ++i) {
    out += i ? ", " : "";
    if (c.metric_name(i) == c.metrics[i]) {
      out += py_str(c.metrics[i]);
      continue;
    }
    const MetricInfo* info = find_metric(c.metrics[i]);
    const std::string class_name =
        info && !info->class_name.empty() ? std::string(info->class_name) : c.metrics[i];
    out += call("keras.metrics." + class_name, {kw("name", py_str(c.metric_name(i)))});
  }
  return out + "]";
}

// ModelCheckpoint: Keras 3 saves a .keras file (fitbench writes its own JSON model file).
std::string keras_model_path(const std::string& path) {
  const std::string json = ".json";
  if (path.size() >= json.size() && path.compare(path.size() - json.size(), json.size(), json) == 0)
    return path.substr(0, path.size() - json.size()) + ".keras";
  return path + ".keras";
}

std::string callback_code(const CallbackSpec& cb, size_t index, std::string& before) {
  const std::string& c = cb.class_name;
  const std::string callee = "keras.callbacks." + c;
  std::vector<std::string> args;
  const auto add = [&](bool when, const char* key, const std::string& value) {
    if (when) args.push_back(kw(key, value));
  };
  const bool monitored = c == "EarlyStopping" || c == "ModelCheckpoint" || c == "ReduceLROnPlateau";
  if (c == "ModelCheckpoint") args.push_back(py_str(keras_model_path(cb.filepath)));
  if (c == "CSVLogger") args.push_back(py_str(cb.filepath));
  if (c == "LearningRateScheduler" && cb.schedule) {
    const std::string name = "epoch_schedule_" + std::to_string(index);
    before += name + " = " + schedule_code(*cb.schedule) + "\n";
    args.push_back("lambda epoch, lr: float(keras.ops.convert_to_numpy(" + name + "(epoch)))");
  }
  add(monitored && cb.monitor != "val_loss", "monitor", py_str(cb.monitor));
  if (c == "EarlyStopping") {
    const double min_delta = cb.min_delta_set.value_or(cb.min_delta);
    const int patience = cb.patience_set.value_or(cb.patience);
    add(min_delta != 0.0, "min_delta", py_float(min_delta));
    add(patience != 0, "patience", py_int(patience));
  }
  if (c == "ReduceLROnPlateau") {
    add(cb.factor != 0.1, "factor", py_float(cb.factor));
    add(cb.patience_set && *cb.patience_set != 10, "patience",
        py_int(cb.patience_set.value_or(10)));
    add(cb.min_delta_set && *cb.min_delta_set != 1e-4, "min_delta",
        py_float(cb.min_delta_set.value_or(1e-4)));
    add(cb.cooldown != 0, "cooldown", py_int(cb.cooldown));
    add(cb.min_lr != 0.0, "min_lr", py_float(cb.min_lr));
  }
  add(c != "CSVLogger" && c != "TerminateOnNaN" && cb.verbose != 0, "verbose", py_int(cb.verbose));
  add(monitored && cb.mode != "auto", "mode", py_str(cb.mode));
  if (c == "EarlyStopping") {
    add(cb.baseline.has_value(), "baseline", py_float(cb.baseline.value_or(0.0)));
    add(cb.restore_best_weights, "restore_best_weights", "True");
    add(cb.start_from_epoch != 0, "start_from_epoch", py_int(cb.start_from_epoch));
  }
  add(c == "ModelCheckpoint" && cb.save_best_only, "save_best_only", "True");
  if (c == "CSVLogger") {
    add(cb.separator != ",", "separator", py_str(cb.separator));
    add(cb.append, "append", "True");
  }
  return call(callee, args);
}

std::string distribution_code(const RunPlan& plan) {
  const DistributionSpec& d = plan.spec.distribution;
  std::string out =
      "# The distribution, set before the model is built, as Keras's distribution API asks.\n"
      "try:\n";
  if (d.class_name == "ModelParallel") {
    int64_t size = 1;
    std::vector<int64_t> shape;
    for (int n : d.mesh_shape) {
      shape.push_back(n);
      size *= n;
    }
    std::string axes = "[";
    for (size_t i = 0; i < d.axis_names.size(); ++i)
      axes += (i ? ", " : "") + py_str(d.axis_names[i]);
    out += "    devices = keras.distribution.list_devices()[:" + py_int(size) + "]\n";
    out += "    mesh = keras.distribution.DeviceMesh(shape=" + py_int_tuple(shape) +
           ", axis_names=" + axes + "], devices=devices)\n";
    out += "    layout_map = keras.distribution.LayoutMap(mesh)\n";
    if (plan.default_layout)
      out +=
          "    # fitbench's default layout (the experiment gives none): each Dense kernel whose "
          "units\n"
          "    # divide by the model axis is split by output units over it.\n";
    for (const auto& [key, dims] : d.layout_map) {
      std::string layout = "(";
      for (size_t i = 0; i < dims.size(); ++i)
        layout += (i ? ", " : "") + (dims[i].empty() ? std::string("None") : py_str(dims[i]));
      layout += dims.size() == 1 ? ",)" : ")";
      out += "    layout_map[" + py_str(key) + "] = " + layout + "\n";
    }
    const std::string batch = d.batch_dim_name.empty() ? d.axis_names.at(0) : d.batch_dim_name;
    out +=
        "    distribution = keras.distribution.ModelParallel(layout_map=layout_map, "
        "batch_dim_name=" +
        py_str(batch) + ")\n";
  } else {
    const auto& layers = plan.spec.model.layers;
    if (plan.spec.devices.batch_norm_statistics == "per_device" &&
        std::any_of(layers.begin(), layers.end(),
                    [](const LayerSpec& l) { return l.class_name == "BatchNormalization"; }))
      out +=
          "    # fitbench's rehearsal normalized each device's shard by its own statistics\n"
          "    # (devices.batch_norm_statistics \"per_device\": PyTorch's DistributedDataParallel\n"
          "    # without SyncBatchNorm). Keras has no such option: here BatchNormalization takes\n"
          "    # the global batch's statistics, as the rehearsal's \"global\" does.\n";
    out += "    devices = keras.distribution.list_devices()\n";
    out += "    distribution = keras.distribution." + d.class_name + "(devices=devices)\n";
  }
  out +=
      "    keras.distribution.set_distribution(distribution)\n"
      "except (AttributeError, ImportError, NotImplementedError, RuntimeError, ValueError) as "
      "error:\n"
      "    print(f\"keras.distribution does not run here ({type(error).__name__}: {error}), so "
      "this \"\n"
      "          \"script trains on one device.\")\n"
      "else:\n"
      "    print(\"Devices:\", devices)\n"
      "    print(\"Distribution:\", type(distribution).__name__)\n";
  return out;
}

}  // namespace

std::string keras_script(const RunPlan& plan) {
  const ExperimentSpec& spec = plan.spec;
  std::vector<std::string> imports;
  const std::string data = data_section(plan, imports);

  std::string out =
      "# " + (spec.name.empty() ? std::string("A fitbench experiment") : spec.name) + "\n";
  out +=
      "# Exported by fitbench as a Keras 3 script: the same seed, distribution, data, model,\n"
      "# compile() and fit() as `fitbench-cli run`. fitbench follows Keras 3 on the JAX backend\n"
      "# (KERAS_BACKEND=jax gives the same initial weights and batch order).\n";
  const bool distributed = plan.distributed();
  if (distributed && plan.devices > 1) {
    out += "import os\n\n# fitbench rehearsed this run on " + py_int(plan.devices) +
           " simulated CPU devices; JAX makes that many from this flag.\n"
           "os.environ.setdefault(\"XLA_FLAGS\", \"--xla_force_host_platform_device_count=" +
           py_int(plan.devices) + "\")\n\n";
  }
  if (!spec.initial_weights.empty()) imports.push_back("json");
  std::sort(imports.begin(), imports.end());
  imports.erase(std::unique(imports.begin(), imports.end()), imports.end());
  for (const std::string& m : imports) out += "import " + m + "\n";
  out += (imports.empty() ? "" : "\n") + std::string("import keras\nimport numpy as np\n\n");
  if (spec.seed)
    out += "keras.utils.set_random_seed(" + py_int(static_cast<int64_t>(*spec.seed)) + ")\n\n";
  if (distributed) out += distribution_code(plan) + "\n";
  out += data + "\n";
  out += model_code(plan);
  if (!spec.initial_weights.empty()) {
    out += "\n# initial_weights: a fitbench model file (JSON); its weights in the model's order.\n";
    out += "with open(" + py_str(spec.initial_weights) + ", encoding=\"utf-8\") as f:\n";
    out +=
        "    model.set_weights([np.array(w[\"values\"], dtype=\"float32\").reshape(w[\"shape\"]) "
        "for w in json.load(f)[\"weights\"]])\n";
  }
  std::string before;
  if (spec.compile.optimizer.schedule)
    before += "lr_schedule = " + schedule_code(*spec.compile.optimizer.schedule) + "\n";
  std::vector<std::string> callbacks;
  for (size_t i = 0; i < spec.fit.callbacks.size(); ++i)
    callbacks.push_back(callback_code(spec.fit.callbacks[i], i, before));
  out += "\n" + before;
  out += "model.compile(\n    optimizer=" + optimizer_code(spec.compile.optimizer) +
         ",\n    loss=" + loss_code(spec.compile.loss) +
         ",\n    metrics=" + metrics_code(spec.compile) + ",\n)\n";

  const FitOptions& fit = spec.fit;
  out += "history = model.fit(\n    x,\n    y,\n    epochs=" + py_int(fit.epochs) +
         ",\n    batch_size=" + py_int(fit.batch_size) + ",\n";
  if (fit.validation_split > 0.0)
    out += "    validation_split=" + py_float(fit.validation_split) + ",\n";
  if (spec.data.has_own_validation()) out += "    validation_data=(x_test, y_test),\n";
  out += "    shuffle=" + py_bool(fit.shuffle) + ",\n    verbose=" + py_int(fit.verbose) + ",\n";
  if (fit.initial_epoch != 0) out += "    initial_epoch=" + py_int(fit.initial_epoch) + ",\n";
  if (!callbacks.empty()) {
    out += "    callbacks=[\n";
    for (const std::string& c : callbacks) out += "        " + c + ",\n";
    out += "    ],\n";
  }
  out += ")\n";
  // fitbench-cli run's last line (app/cli_commands.cpp): accuracy when it is logged, else the loss.
  const auto names = spec.compile.all_metric_names();
  const std::string key =
      std::find(names.begin(), names.end(), "accuracy") != names.end() ? "accuracy" : "loss";
  out += "final = history.history[" + py_str(key) + "][-1]\n";
  out += "spec = \".4f\" if abs(final) > 1e-3 or final == 0 else \".4e\"\n";
  out += "print(f\"Final " + key + ": {final:{spec}}\")\n";
  return out;
}

}  // namespace fitbench
