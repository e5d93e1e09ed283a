// Options of compile() and fit(), named after Keras's arguments, and the description of a
// callback as an experiment file gives it. Value types.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/losses/loss_spec.h"
#include "core/optimizers/optimizer_spec.h"

namespace fitbench {

struct CompileOptions {
  OptimizerSpec optimizer{};
  LossSpec loss{};
  std::vector<std::string>
      metrics;  // as given: "accuracy", "binary_accuracy", "mse", "precision"...
  // A metric object's own name ({"class_name": "Precision", "config": {"name": "p"}}), one per
  // metrics entry or fewer; "" (or absent): the identifier itself names it.
  std::vector<std::string> metric_names;

  // The name Keras gives metrics[i] (get_metric: a string's identifier, an object's .name).
  std::string metric_name(size_t i) const {
    return i < metric_names.size() && !metric_names[i].empty() ? metric_names[i] : metrics[i];
  }
  std::vector<std::string> all_metric_names() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < metrics.size(); ++i) out.push_back(metric_name(i));
    return out;
  }
};

// keras.callbacks.*; the fields a callback does not use are ignored.
struct CallbackSpec {
  std::string class_name;  // EarlyStopping, ModelCheckpoint, CSVLogger, ReduceLROnPlateau,
                           // LearningRateScheduler, TerminateOnNaN
  std::string monitor = "val_loss";  // EarlyStopping, ModelCheckpoint, ReduceLROnPlateau
  std::string mode = "auto";         // "auto", "min", "max"
  int verbose = 0;  // EarlyStopping, ReduceLROnPlateau: 1 prints Keras's messages when they act
  double min_delta = 0.0;  // EarlyStopping (0), ReduceLROnPlateau (1e-4 when unset)
  std::optional<double> min_delta_set;
  int patience = 0;  // EarlyStopping 0, ReduceLROnPlateau 10
  std::optional<int> patience_set;
  bool restore_best_weights = false;     // EarlyStopping
  int start_from_epoch = 0;              // EarlyStopping
  std::optional<double> baseline;        // EarlyStopping
  std::string filepath;                  // ModelCheckpoint (a model file), CSVLogger (filename)
  bool save_best_only = false;           // ModelCheckpoint
  std::string separator = ",";           // CSVLogger
  bool append = false;                   // CSVLogger
  double factor = 0.1;                   // ReduceLROnPlateau
  int cooldown = 0;                      // ReduceLROnPlateau
  double min_lr = 0.0;                   // ReduceLROnPlateau
  std::optional<ScheduleSpec> schedule;  // LearningRateScheduler: lr(epoch) = schedule(epoch)
};

// The largest epochs, batch_size and initial_epoch an experiment file, fitbench-cli's options and
// the window take (2^30). fit(), evaluate() and predict() also refuse a batch whose activations
// would not fit in fitbench's 1 GiB (the rows a batch takes: at most the data's).
inline constexpr int kMaxFitCount = 1 << 30;

struct FitOptions {
  int epochs = 1;
  int batch_size = 32;
  double validation_split = 0.0;  // fraction taken from the end, before shuffling
  bool shuffle = true;
  int verbose = 1;  // 0 silent, 1 progress bar, 2 one line per epoch
  int initial_epoch = 0;
  std::vector<CallbackSpec> callbacks;
};

}  // namespace fitbench
