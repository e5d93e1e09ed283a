// Keras's built-in callbacks (keras/src/callbacks/*.py) and the factory that builds them from an
// experiment's fit.callbacks. Each callback is used by the thread that runs fit().
#pragma once

#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "core/io/model_file.h"
#include "core/training/callback.h"
#include "core/training/fit_options.h"
#include "core/training/progbar.h"

namespace fitbench {

// "max" when a larger value is better, by mode or, for "auto", by the metric's name as Keras
// infers it (accuracy, precision, recall and auc go up; losses and errors go down).
bool monitor_improves_upward(const std::string& monitor, const std::string& mode);

class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(const CallbackSpec& spec);
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
  explicit ModelCheckpoint(const CallbackSpec& spec);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  // The file name for an epoch: "{epoch}" / "{epoch:02d}" in filepath become epoch + 1.
  std::string file_for_epoch(int epoch) const;

 private:
  CallbackSpec spec_;
  bool upward_;
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
// unknown class or invalid arguments.
std::vector<std::unique_ptr<Callback>> make_callbacks(const std::vector<CallbackSpec>& specs,
                                                      const Clock& clock);

}  // namespace fitbench
