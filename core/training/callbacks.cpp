#include "core/training/callbacks.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "core/error.h"
#include "core/file_checks.h"
#include "core/io/model_file.h"
#include "core/optimizers/optimizer.h"
#include "core/python_repr.h"
#include "core/training/sequential.h"

namespace fitbench {
namespace {

double worst(bool upward) {
  return upward ? -std::numeric_limits<double>::infinity()
                : std::numeric_limits<double>::infinity();
}

// The logs' keys, comma-separated, as Keras's warnings list them.
std::string log_keys(const Logs& logs) {
  std::string out;
  for (const auto& [key, value] : logs) out += (out.empty() ? "" : ",") + key;
  return out;
}

const double* find(const Logs& logs, const std::string& key) {
  auto it = logs.find(key);
  return it == logs.end() ? nullptr : &it->second;
}

}  // namespace

bool monitor_improves_upward(const std::string& monitor, const std::string& mode) {
  if (mode == "max") return true;
  if (mode == "min") return false;
  for (const char* up : {"acc", "precision", "recall", "auc"})
    if (monitor.find(up) != std::string::npos) return true;
  return false;
}

// keras/src/callbacks/early_stopping.py
EarlyStopping::EarlyStopping(const CallbackSpec& spec)
    : spec_(spec),
      upward_(monitor_improves_upward(spec.monitor, spec.mode)),
      min_delta_(std::abs(spec.min_delta_set ? *spec.min_delta_set : spec.min_delta)) {
  if (spec.patience_set) spec_.patience = *spec.patience_set;
}

bool EarlyStopping::improved(double current, double reference) const {
  return upward_ ? current - min_delta_ > reference : current + min_delta_ < reference;
}

void EarlyStopping::on_train_begin(const Logs&) {
  wait_ = 0;
  stopped_epoch_ = 0;
  best_epoch_ = 0;
  best_ = worst(upward_);
  best_weights_.reset();
}

void EarlyStopping::on_epoch_end(int epoch, Logs& logs) {
  const double* current = find(logs, spec_.monitor);
  // keras/src/callbacks/early_stopping.py get_monitor_value: warns and goes on.
  if (!current) {
    model_->warn("Early stopping conditioned on metric `" + spec_.monitor +
                 "` which is not available. Available metrics are: " + log_keys(logs));
    return;
  }
  if (epoch < spec_.start_from_epoch) return;
  if (spec_.restore_best_weights && !best_weights_) best_weights_ = model_->get_weights();
  ++wait_;
  if (improved(*current, best_)) {
    best_ = *current;
    best_epoch_ = epoch;
    if (spec_.restore_best_weights) best_weights_ = model_->get_weights();
    if (!spec_.baseline || improved(*current, *spec_.baseline)) wait_ = 0;
    return;
  }
  if (wait_ >= spec_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model_->stop_training = true;
    model_->stop_reason = "early_stopping";
  }
}

void EarlyStopping::on_train_end(const Logs&) {
  if (stopped_epoch_ > 0 && spec_.verbose > 0)
    model_->output() << "Epoch " << stopped_epoch_ + 1 << ": early stopping" << std::endl;
  if (spec_.restore_best_weights && best_weights_) {
    if (spec_.verbose > 0)
      model_->output() << "Restoring model weights from the end of the best epoch: "
                       << best_epoch_ + 1 << "." << std::endl;
    model_->set_weights(*best_weights_, "EarlyStopping");
    model_->restored_epoch = best_epoch_;
  }
}

// keras/src/callbacks/model_checkpoint.py (save_freq="epoch"; the whole model is saved as a
// fitbench model file).
ModelCheckpoint::ModelCheckpoint(const CallbackSpec& spec)
    : spec_(spec), upward_(monitor_improves_upward(spec.monitor, spec.mode)) {}

void ModelCheckpoint::on_train_begin(const Logs&) {
  // A file that cannot be written fails now, not after the first epoch's training.
  check_writable_file(file_for_epoch(0));
  best_ = worst(upward_);
}

std::string ModelCheckpoint::file_for_epoch(int epoch) const {
  std::string out;
  const std::string& f = spec_.filepath;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.compare(i, 6, "{epoch") == 0) {
      const size_t close = f.find('}', i);
      if (close != std::string::npos) {
        std::string fmt = f.substr(i + 6, close - i - 6);  // "" or ":02d"
        std::string num = std::to_string(epoch + 1);
        if (fmt.size() >= 3 && fmt[0] == ':' && fmt.back() == 'd') {
          const size_t width =
              static_cast<size_t>(std::atoi(fmt.c_str() + (fmt[1] == '0' ? 2 : 1)));
          if (num.size() < width) num.insert(0, width - num.size(), fmt[1] == '0' ? '0' : ' ');
        }
        out += num;
        i = close;
        continue;
      }
    }
    out += f[i];
  }
  return out;
}

void ModelCheckpoint::on_epoch_end(int epoch, Logs& logs) {
  if (spec_.save_best_only) {
    const double* current = find(logs, spec_.monitor);
    if (!current) return;
    if (!(upward_ ? *current > best_ : *current < best_)) return;
    best_ = *current;
  }
  ModelFile file{model_->spec(), model_->compile_options(), model_->get_weights()};
  write_model_file(file, file_for_epoch(epoch));
}

// keras/src/callbacks/csv_logger.py
CSVLogger::CSVLogger(const CallbackSpec& spec) : spec_(spec) {}

void CSVLogger::on_train_begin(const Logs&) {
  check_writable_file(spec_.filepath);  // not a FIFO or device, and its folder takes a file
  const bool exists = std::filesystem::exists(spec_.filepath);
  header_written_ = spec_.append && exists && std::filesystem::file_size(spec_.filepath) > 0;
  file_.open(spec_.filepath, spec_.append ? std::ios::app : std::ios::trunc);
  if (!file_) throw InputError(spec_.filepath, "cannot be opened for writing (CSVLogger)");
  keys_.clear();
}

void CSVLogger::on_epoch_end(int epoch, Logs& logs) {
  if (keys_.empty())
    for (const auto& [k, v] : logs) keys_.push_back(k);
  const std::string& sep = spec_.separator;
  if (!header_written_) {
    file_ << "epoch";
    for (const auto& k : keys_) file_ << sep << k;
    file_ << "\n";
    header_written_ = true;
  }
  file_ << epoch;
  for (const auto& k : keys_) {
    const double* v = find(logs, k);
    file_ << sep << (v ? python_repr(*v) : "NA");
  }
  file_ << "\n";
  file_.flush();
}

void CSVLogger::on_train_end(const Logs&) { file_.close(); }

// keras/src/callbacks/reduce_lr_on_plateau.py
ReduceLROnPlateau::ReduceLROnPlateau(const CallbackSpec& spec)
    : spec_(spec),
      upward_(monitor_improves_upward(spec.monitor, spec.mode)),
      min_delta_(spec.min_delta_set ? *spec.min_delta_set : 1e-4),
      patience_(spec.patience_set ? *spec.patience_set : 10) {}

void ReduceLROnPlateau::on_train_begin(const Logs&) {
  best_ = worst(upward_);
  wait_ = 0;
  cooldown_counter_ = 0;
}

void ReduceLROnPlateau::on_epoch_end(int epoch, Logs& logs) {
  Optimizer* opt = model_->optimizer();
  // Keras's rate is a float32 variable, read back as a Python float.
  const auto rate = [opt] { return static_cast<double>(static_cast<float>(opt->learning_rate())); };
  logs["learning_rate"] = rate();
  const double* current = find(logs, spec_.monitor);
  // keras/src/callbacks/reduce_lr_on_plateau.py: warns and goes on.
  if (!current) {
    model_->warn("Learning rate reduction is conditioned on metric `" + spec_.monitor +
                 "` which is not available. Available metrics are: " + log_keys(logs) + ".");
    return;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  const bool better = upward_ ? *current > best_ + min_delta_ : *current < best_ - min_delta_;
  if (better) {
    best_ = *current;
    wait_ = 0;
  } else if (cooldown_counter_ <= 0) {
    if (++wait_ >= patience_) {
      const double old_lr = rate();
      if (old_lr > static_cast<double>(static_cast<float>(spec_.min_lr))) {
        const double new_lr = std::max(old_lr * spec_.factor, spec_.min_lr);
        opt->set_learning_rate(new_lr);
        if (spec_.verbose > 0)
          model_->output() << "\nEpoch " << epoch + 1
                           << ": ReduceLROnPlateau reducing learning rate to "
                           << python_repr(new_lr) << "." << std::endl;
        cooldown_counter_ = spec_.cooldown;
        wait_ = 0;
      }
    }
  }
}

// keras/src/callbacks/learning_rate_scheduler.py, with the schedule evaluated at the epoch.
LearningRateScheduler::LearningRateScheduler(const CallbackSpec& spec) : spec_(spec) {}

void LearningRateScheduler::on_epoch_begin(int epoch, const Logs&) {
  model_->optimizer()->set_learning_rate(schedule_value(*spec_.schedule, epoch));
}

void LearningRateScheduler::on_epoch_end(int, Logs& logs) {
  logs["learning_rate"] = model_->optimizer()->learning_rate();
}

// keras/src/callbacks/terminate_on_nan.py
void TerminateOnNaN::on_train_batch_end(int batch, const Logs& logs) {
  const double* loss = find(logs, "loss");
  if (loss && !std::isfinite(*loss)) {
    model_->output() << "Batch " << batch << ": Invalid loss, terminating training" << std::endl;
    model_->stop_training = true;
    model_->stop_reason = "invalid_loss";
  }
}

std::vector<std::unique_ptr<Callback>> make_callbacks(const std::vector<CallbackSpec>& specs,
                                                      const Clock&) {
  std::vector<std::unique_ptr<Callback>> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const CallbackSpec& s = specs[i];
    const std::string place = "fit.callbacks[" + std::to_string(i) + "]";
    if (s.mode != "auto" && s.mode != "min" && s.mode != "max")
      throw InputError(place + ".config.mode", "must be \"auto\", \"min\" or \"max\"");
    if (s.class_name == "EarlyStopping") {
      if (s.patience_set && *s.patience_set < 0)
        throw InputError(place + ".config.patience", "must be >= 0");
      out.push_back(std::make_unique<EarlyStopping>(s));
    } else if (s.class_name == "ModelCheckpoint") {
      if (s.filepath.empty())
        throw InputError(place + ".config.filepath", "must name the model file to write");
      out.push_back(std::make_unique<ModelCheckpoint>(s));
    } else if (s.class_name == "CSVLogger") {
      if (s.filepath.empty())
        throw InputError(place + ".config.filename", "must name the CSV file to write");
      out.push_back(std::make_unique<CSVLogger>(s));
    } else if (s.class_name == "ReduceLROnPlateau") {
      if (!(s.factor < 1.0 && s.factor >= 0.0))
        throw InputError(place + ".config.factor", "must be in [0, 1): it multiplies the rate");
      out.push_back(std::make_unique<ReduceLROnPlateau>(s));
    } else if (s.class_name == "LearningRateScheduler") {
      if (!s.schedule)
        throw InputError(place + ".config.schedule", "must be a learning-rate schedule");
      out.push_back(std::make_unique<LearningRateScheduler>(s));
    } else if (s.class_name == "TerminateOnNaN") {
      out.push_back(std::make_unique<TerminateOnNaN>());
    } else {
      throw InputError(place + ".class_name",
                       "unknown callback \"" + s.class_name +
                           "\"; expected EarlyStopping, ModelCheckpoint, CSVLogger, "
                           "ReduceLROnPlateau, LearningRateScheduler or TerminateOnNaN");
    }
  }
  return out;
}

}  // namespace fitbench
