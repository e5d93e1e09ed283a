// The `fit` section: Model.fit()'s argument names (keras/src/trainers/trainer.py) and callbacks in
// Keras's {"class_name", "config"} form with their constructor arguments
// (keras/src/callbacks/{early_stopping,model_checkpoint,csv_logger,reduce_lr_on_plateau,
// learning_rate_scheduler,terminate_on_nan}.py).
#include <algorithm>

#include "core/io/json_reader.h"
#include "core/io/keras_json.h"
#include "core/training/callback_registry.h"

namespace fitbench {

using json_io::fail_expected;
using json_io::fail_unsupported;
using json_io::index_path;
using json_io::join;
using json_io::Json;
using json_io::key_path;
using json_io::ObjectReader;

namespace {

std::string read_mode(const ObjectReader& r) {
  const std::string mode = r.string("mode", "auto", "\"auto\", \"min\" or \"max\"");
  if (mode != "auto" && mode != "min" && mode != "max") {
    fail_expected(r.path_of("mode"), "\"auto\", \"min\" or \"max\"", *r.get("mode"));
  }
  return mode;
}

std::string read_path(const ObjectReader& r, const std::string& key, const std::string& what) {
  return json_io::to_path(r.require(key, what), r.path_of(key));
}

CallbackSpec parse_callback(const Json& v, const std::string& path) {
  if (!v.is_object()) fail_expected(path, "a callback {\"class_name\": ..., \"config\": {...}}", v);
  const Json* config = nullptr;
  CallbackSpec cb;
  cb.class_name = json_io::read_keras_object(v, path, &config);
  const CallbackInfo* info = find_callback_class(cb.class_name);
  if (info == nullptr) {
    fail_unsupported(
        key_path(path, "class_name"), v.at("class_name"),
        "; expected one of: " +
            join_names(callback_classes(), [](const CallbackInfo& i) { return i.class_name; }));
  }
  const std::string cpath = key_path(path, "config");
  const std::string& c = cb.class_name;
  std::vector<std::string> keys;
  for (const FieldInfo& f : info->fields) keys.emplace_back(f.key);
  ObjectReader r(*config, cpath, keys);
  // EarlyStopping and ReduceLROnPlateau print Keras's messages with verbose 1; ModelCheckpoint
  // and LearningRateScheduler print none (kept for the file's sake).
  cb.verbose = static_cast<int>(r.integer("verbose", 0, "0 or 1", 0, 1));
  if (c == "EarlyStopping" || c == "ModelCheckpoint" || c == "ReduceLROnPlateau") {
    cb.monitor = r.string("monitor", cb.monitor, "a metric name such as \"val_loss\"");
    cb.mode = read_mode(r);
  }
  if (c == "EarlyStopping" || c == "ReduceLROnPlateau") {
    cb.min_delta_set = r.optional_number("min_delta", "a number");
    if (cb.min_delta_set) cb.min_delta = *cb.min_delta_set;
    if (auto patience = r.optional_integer("patience", "an integer >= 0", 0, 1 << 30)) {
      cb.patience = static_cast<int>(*patience);
      cb.patience_set = cb.patience;
    }
  }
  if (c == "EarlyStopping") {
    cb.baseline = r.optional_number("baseline", "null or a number");
    cb.restore_best_weights = r.boolean("restore_best_weights", false);
    cb.start_from_epoch =
        static_cast<int>(r.integer("start_from_epoch", 0, "an integer >= 0", 0, 1 << 30));
  } else if (c == "ModelCheckpoint") {
    cb.filepath = read_path(r, "filepath", "the model file to write");
    cb.save_best_only = r.boolean("save_best_only", false);
    // fitbench's model files always hold the config and the weights.
    r.boolean("save_weights_only", false);
    r.only("save_freq", {"epoch"});
    r.only("initial_value_threshold", {});
  } else if (c == "CSVLogger") {
    cb.filepath = read_path(r, "filename", "the CSV file to write");
    cb.separator = r.string("separator", ",");
    if (cb.separator.empty()) fail_expected(r.path_of("separator"), "a non-empty string", Json(""));
    cb.append = r.boolean("append", false);
  } else if (c == "ReduceLROnPlateau") {
    cb.factor = r.number("factor", cb.factor, "a number in (0, 1)",
                         {.lo = 0.0, .hi = 1.0, .lo_open = true, .hi_open = true});
    cb.cooldown = static_cast<int>(r.integer("cooldown", 0, "an integer >= 0", 0, 1 << 30));
    cb.min_lr = r.number("min_lr", 0.0, "a number >= 0", {.lo = 0.0});
  } else if (c == "LearningRateScheduler") {
    cb.schedule = parse_schedule(r.require("schedule", "a learning-rate schedule per epoch"),
                                 r.path_of("schedule"));
  }
  return cb;
}

Json callback_to_json(const CallbackSpec& cb) {
  Json config = Json::object();
  const std::string& c = cb.class_name;
  if (c == "ModelCheckpoint") config["filepath"] = cb.filepath;
  if (c == "CSVLogger") {
    config["filename"] = cb.filepath;
    config["separator"] = cb.separator;
    config["append"] = cb.append;
  }
  if (c == "EarlyStopping" || c == "ModelCheckpoint" || c == "ReduceLROnPlateau") {
    config["monitor"] = cb.monitor;
  }
  if (cb.verbose != 0 && c != "CSVLogger" && c != "TerminateOnNaN") config["verbose"] = cb.verbose;
  if (c == "ReduceLROnPlateau") config["factor"] = cb.factor;
  if (c == "EarlyStopping" || c == "ReduceLROnPlateau") {
    if (cb.patience_set) {
      config["patience"] = *cb.patience_set;
    } else if (cb.patience != 0) {
      config["patience"] = cb.patience;
    }
    if (cb.min_delta_set) {
      config["min_delta"] = *cb.min_delta_set;
    } else if (cb.min_delta != 0.0) {
      config["min_delta"] = cb.min_delta;
    }
  }
  if (c == "EarlyStopping" || c == "ModelCheckpoint" || c == "ReduceLROnPlateau") {
    config["mode"] = cb.mode;
  }
  if (c == "EarlyStopping") {
    config["baseline"] = cb.baseline ? Json(*cb.baseline) : Json(nullptr);
    config["restore_best_weights"] = cb.restore_best_weights;
    config["start_from_epoch"] = cb.start_from_epoch;
  }
  if (c == "ModelCheckpoint") config["save_best_only"] = cb.save_best_only;
  if (c == "ReduceLROnPlateau") {
    config["cooldown"] = cb.cooldown;
    config["min_lr"] = cb.min_lr;
  }
  if (c == "LearningRateScheduler" && cb.schedule) {
    config["schedule"] = schedule_to_ordered_json(*cb.schedule);
  }
  Json doc = Json::object();
  doc["class_name"] = cb.class_name;
  doc["config"] = std::move(config);
  return doc;
}

}  // namespace

FitOptions parse_fit(const Json& doc, const std::string& path) {
  ObjectReader r(doc, path,
                 {"epochs", "batch_size", "validation_split", "shuffle", "verbose", "initial_epoch",
                  "callbacks"});
  FitOptions fit;
  constexpr int64_t kMax = kMaxFitCount;
  fit.epochs = static_cast<int>(r.integer("epochs", fit.epochs, "a positive integer", 1, kMax));
  // batch_size=None is Keras's 32.
  fit.batch_size = static_cast<int>(
      r.optional_integer("batch_size", "null or a positive integer", 1, kMax).value_or(32));
  fit.validation_split = r.number("validation_split", 0.0, "a number in [0, 1)",
                                  {.lo = 0.0, .hi = 1.0, .hi_open = true});
  fit.shuffle = r.boolean("shuffle", true);
  if (const Json* verbose = r.get("verbose")) {
    if (*verbose == Json("auto")) {
      fit.verbose = 1;  // "auto" is 1 (a progress bar) outside Colab
    } else {
      fit.verbose = static_cast<int>(
          json_io::to_int(*verbose, r.path_of("verbose"), "0, 1, 2 or \"auto\"", 0, 2));
    }
  }
  fit.initial_epoch = static_cast<int>(r.integer("initial_epoch", 0, "an integer >= 0", 0, kMax));
  if (const Json* callbacks = r.get_non_null("callbacks")) {
    if (!callbacks->is_array()) {
      fail_expected(r.path_of("callbacks"), "a list of callbacks", *callbacks);
    }
    for (size_t i = 0; i < callbacks->size(); ++i) {
      fit.callbacks.push_back(
          parse_callback((*callbacks)[i], index_path(r.path_of("callbacks"), i)));
    }
  }
  return fit;
}

Json fit_to_ordered_json(const FitOptions& fit) {
  Json doc = Json::object();
  doc["epochs"] = fit.epochs;
  doc["batch_size"] = fit.batch_size;
  if (fit.validation_split != 0.0) doc["validation_split"] = fit.validation_split;
  doc["shuffle"] = fit.shuffle;
  doc["verbose"] = fit.verbose;
  if (fit.initial_epoch != 0) doc["initial_epoch"] = fit.initial_epoch;
  if (!fit.callbacks.empty()) {
    Json callbacks = Json::array();
    for (const CallbackSpec& cb : fit.callbacks) callbacks.push_back(callback_to_json(cb));
    doc["callbacks"] = std::move(callbacks);
  }
  return doc;
}

}  // namespace fitbench
