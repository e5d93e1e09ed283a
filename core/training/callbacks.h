// Keras's built-in callbacks (keras/src/callbacks/*.py) and the factory that builds them from an
// experiment's fit.callbacks. Each callback is used by the thread that runs fit().
#pragma once

#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "core/python/python_format.h"
#include "core/training/callback.h"
#include "core/training/fit_options.h"
#include "core/training/model_state.h"
#include "core/training/progbar.h"

namespace fitbench {

// What the callbacks of a fit() can know before it trains: its compiled metrics, whether it has
// validation data and whether the optimizer's rate is a schedule.
struct CallbackContext {
  std::vector<std::string> metric_names;        // Keras's names of compile.metrics ("accuracy")
  std::vector<std::string> metric_identifiers;  // compile.metrics as given, in the same order
  bool validation = false;
  bool rate_is_schedule = false;
  ModelWriter write_model;  // ModelCheckpoint's; a ModelCheckpoint without one is refused
};

// EarlyStopping's and ModelCheckpoint's direction (keras/src/callbacks/monitor_callback.py
// _set_monitor_op): "max" or "min" by mode; for "auto", the monitor without "val_" is the loss
// (down) or a compiled metric's name (its direction: accuracies up, errors down). nullopt when
// "auto" cannot tell: Keras raises ValueError there, fitbench's make_callbacks an InputError.
// `metric_identifiers` (each names its direction) defaults to the names themselves.
std::optional<bool> monitor_improves_upward(
    const std::string& monitor, const std::string& mode,
    const std::vector<std::string>& metric_names,
    const std::vector<std::string>& metric_identifiers = {});

class EarlyStopping : public Callback {
 public:
  EarlyStopping(const CallbackSpec& spec, bool upward);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  int stopped_epoch() const { return stopped_epoch_; }
  int best_epoch() const { return best_epoch_; }

 private:
  bool improved(double current, double reference) const;

  CallbackSpec spec_;
  bool upward_;
  double min_delta_;
  int wait_ = 0;
  int stopped_epoch_ = 0;
  int best_epoch_ = 0;
  double best_ = 0.0;
  std::optional<std::vector<NamedWeight>> best_weights_;
};

class ModelCheckpoint : public Callback {
 public:
  // `place` names the filepath in messages ("fit.callbacks[0].config.filepath").
  ModelCheckpoint(const CallbackSpec& spec, bool upward, std::string place, ModelWriter write);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  // The file of an epoch: filepath.format(epoch=epoch + 1, **logs), as Keras fills it
  // ("ck-{epoch:02d}-{val_loss:.2f}.json" -> "ck-03-0.42.json"). Throws InputError for a field
  // the logs do not hold.
  std::string file_for_epoch(int epoch, const Logs& logs) const;

 private:
  CallbackSpec spec_;
  FormatTemplate template_;
  bool upward_;
  std::string place_;
  ModelWriter write_;
  double best_ = 0.0;
};

class CSVLogger : public Callback {
 public:
  explicit CSVLogger(const CallbackSpec& spec);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  CallbackSpec spec_;
  std::ofstream file_;
  bool header_written_ = false;
  std::vector<std::string> keys_;
};

class ReduceLROnPlateau : public Callback {
 public:
  explicit ReduceLROnPlateau(const CallbackSpec& spec);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

 private:
  CallbackSpec spec_;
  bool upward_;
  double min_delta_;
  int patience_;
  double best_ = 0.0;
  int wait_ = 0;
  int cooldown_counter_ = 0;
};

class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(const CallbackSpec& spec);
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

 private:
  CallbackSpec spec_;
};

class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(int batch, const Logs& logs) override;
};

// Builds the callbacks an experiment names; throws InputError("fit.callbacks[i]...", ...) for an
// unknown class or invalid arguments, and before training for what Keras fails on during it: a
// monitor whose direction "auto" cannot tell, a ModelCheckpoint filepath field that names no
// value of the logs (or a format spec that does not fit it), and a ReduceLROnPlateau or
// LearningRateScheduler with an optimizer whose rate is a schedule (Keras: TypeError).
std::vector<std::unique_ptr<Callback>> make_callbacks(const std::vector<CallbackSpec>& specs,
                                                      const Clock& clock,
                                                      const CallbackContext& context);

}  // namespace fitbench
