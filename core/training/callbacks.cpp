#include "core/training/callbacks.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>

#include "core/base/error.h"
#include "core/file_checks.h"
#include "core/metrics/metric.h"
#include "core/optimizers/optimizer.h"
#include "core/python/python_repr.h"
#include "core/staged_files.h"
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

std::optional<bool> monitor_improves_upward(const std::string& monitor, const std::string& mode,
                                            const std::vector<std::string>& metric_names,
                                            const std::vector<std::string>& metric_identifiers) {
  if (mode == "max") return true;
  if (mode == "min") return false;
  const std::string name = monitor.starts_with("val_") ? monitor.substr(4) : monitor;
  std::optional<bool> upward;
  if (name == "loss") upward = false;
  for (size_t i = 0; i < metric_names.size(); ++i)
    if (metric_names[i] == name)
      upward = metric_improves_upward(i < metric_identifiers.size() ? metric_identifiers[i]
                                                                    : metric_names[i]);
  return upward;
}

// keras/src/callbacks/early_stopping.py
EarlyStopping::EarlyStopping(const CallbackSpec& spec, bool upward)
    : spec_(spec),
      upward_(upward),
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
ModelCheckpoint::ModelCheckpoint(const CallbackSpec& spec, bool upward, std::string place,
                                 ModelWriter write)
    : spec_(spec),
      template_(parse_format_template(spec.filepath)),
      upward_(upward),
      place_(std::move(place)),
      write_(std::move(write)) {}

void ModelCheckpoint::on_train_begin(const Logs&) {
  // A file that cannot be written fails now, not after the first epoch's training: the first
  // epoch's name with every logged value 0 (its folder is what matters).
  Logs zeros;
  for (const auto& field : template_.fields) zeros[field.name] = 0.0;
  check_writable_file(file_for_epoch(0, zeros));
  best_ = worst(upward_);
}

std::string ModelCheckpoint::file_for_epoch(int epoch, const Logs& logs) const {
  std::string out = template_.literals[0];
  for (size_t i = 0; i < template_.fields.size(); ++i) {
    const FormatTemplate::Field& f = template_.fields[i];
    try {
      if (f.name == "epoch") {
        out += python_format(int64_t{epoch} + 1, f.spec);
      } else if (const double* value = find(logs, f.name)) {
        out += python_format(*value, f.spec);
      } else {
        throw InputError(place_, "{" + f.name + "} names no value of the logs, which hold epoch, " +
                                     log_keys(logs));
      }
    } catch (const FormatError& e) {
      throw InputError(place_,
                       "{" + f.name + (f.spec.empty() ? "" : ":" + f.spec) + "}: " + e.what());
    }
    out += template_.literals[i + 1];
  }
  return out;
}

void ModelCheckpoint::on_epoch_end(int epoch, Logs& logs) {
  const std::string file = file_for_epoch(epoch, logs);
  const std::string at = "\nEpoch " + std::to_string(epoch + 1) + ": ";
  const bool verbose = spec_.verbose > 0;
  if (spec_.save_best_only) {
    const double* current = find(logs, spec_.monitor);
    if (!current) {
      // _should_save_model: warns and saves, as if save_best_only were off.
      model_->warn("Can save best model only with " + spec_.monitor + " available.");
    } else {
      const std::string best = python_format(best_, ".5f");
      if (!(upward_ ? *current > best_ : *current < best_)) {
        if (verbose)
          model_->output() << at << spec_.monitor << " did not improve from " << best << std::endl;
        return;
      }
      if (verbose)
        model_->output() << at << spec_.monitor << " improved from " << best << " to "
                         << python_format(*current, ".5f") << ", saving model to " << file
                         << std::endl;
      best_ = *current;
    }
  } else if (verbose) {
    model_->output() << at << "saving model to " << file << std::endl;
  }
  const ModelFile saved = model_->model_file();
  for (const NamedWeight& w : saved.weights)
    for (float v : w.values)
      if (!std::isfinite(v)) {
        // A diverged run's weights: no file (none of fitbench's writers takes them), a warning,
        // and training goes on as Keras's would (TerminateOnNaN is what stops it).
        model_->warn("ModelCheckpoint: " + file +
                     " not written: training diverged, the weights are not finite numbers");
        return;
      }
  write_(saved, file);
  if (verbose) model_->output() << at << "finished saving model to " << file << std::endl;
}

// keras/src/callbacks/csv_logger.py
CSVLogger::CSVLogger(const CallbackSpec& spec) : spec_(spec) {}

// Keras opens the file at the start of training (truncating it unless append=True); fitbench
// opens it when the first epoch's row is ready, so a run stopped or killed before then leaves an
// old log as it was. Without append, that first row replaces the old file in one rename.
void CSVLogger::on_train_begin(const Logs&) {
  check_writable_file(spec_.filepath);  // not a FIFO or device, and its folder takes a file
  const bool exists = std::filesystem::exists(spec_.filepath);
  header_written_ = spec_.append && exists && std::filesystem::file_size(spec_.filepath) > 0;
  if (file_.is_open()) file_.close();
  keys_.clear();
}

void CSVLogger::on_epoch_end(int epoch, Logs& logs) {
  if (keys_.empty())
    for (const auto& [k, v] : logs) keys_.push_back(k);
  const std::string& sep = spec_.separator;
  std::string text;
  if (!header_written_) {
    text += "epoch";
    for (const auto& k : keys_) text += sep + k;
    text += "\r\n";  // csv.excel's line terminator, as Keras's DictWriter writes it
    header_written_ = true;
  }
  text += std::to_string(epoch);
  for (const auto& k : keys_) {
    const double* v = find(logs, k);
    text += sep + (v ? python_repr(*v) : std::string("NA"));
  }
  text += "\r\n";
  if (!file_.is_open()) {
    if (!spec_.append) {
      StagedFiles first;
      first.stage(spec_.filepath, text);
      first.commit();
      text.clear();
    }
    file_.open(spec_.filepath, std::ios::binary | std::ios::app);
    if (!file_) throw InputError(spec_.filepath, "cannot be opened for writing (CSVLogger)");
  }
  file_ << text;
  file_.flush();
  if (!file_)
    throw InputError(spec_.filepath,
                     std::string("cannot be written (CSVLogger): ") + std::strerror(errno));
}

void CSVLogger::on_train_end(const Logs&) { file_.close(); }

// keras/src/callbacks/reduce_lr_on_plateau.py
ReduceLROnPlateau::ReduceLROnPlateau(const CallbackSpec& spec)
    : spec_(spec),
      // Its own rule (reduce_lr_on_plateau.py _reset): "auto" is "max" when "acc" is in the name.
      upward_(spec.mode == "max" ||
              (spec.mode == "auto" && spec.monitor.find("acc") != std::string::npos)),
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
  const double rate = schedule_value(*spec_.schedule, epoch);
  model_->optimizer()->set_learning_rate(rate);
  if (spec_.verbose > 0)
    model_->output() << "\nEpoch " << epoch + 1
                     << ": LearningRateScheduler setting learning rate to " << python_repr(rate)
                     << "." << std::endl;
}

void LearningRateScheduler::on_epoch_end(int, Logs& logs) {
  // The optimizer's float32 variable, read back as a Python float.
  logs["learning_rate"] =
      static_cast<double>(static_cast<float>(model_->optimizer()->learning_rate()));
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

namespace {

// The direction of EarlyStopping's or ModelCheckpoint's monitor, or an InputError at `place`.
bool monitor_direction(const CallbackSpec& s, const CallbackContext& context,
                       const std::string& place) {
  if (auto upward = monitor_improves_upward(s.monitor, s.mode, context.metric_names,
                                            context.metric_identifiers))
    return *upward;
  std::string names = "loss";
  for (const auto& m : context.metric_names) names += ", " + m;
  throw InputError(place + ".config.monitor",
                   "\"" + s.monitor + "\" is not the loss or a compiled metric (" + names +
                       ", with or without val_), so " + s.class_name +
                       " cannot tell whether it should be minimized or maximized; set mode to "
                       "\"min\" or \"max\"");
}

// Every field of a ModelCheckpoint filepath names the epoch or a value the logs hold when the
// callback at `index` sees them, and its spec formats that value (Keras: KeyError or ValueError
// at the end of the first epoch).
void check_filepath_fields(const ModelCheckpoint& checkpoint,
                           const std::vector<CallbackSpec>& specs, size_t index,
                           const CallbackContext& context, const std::string& place) {
  Logs logs;
  logs["loss"] = 0.0;
  for (const std::string& key : metric_log_keys(context.metric_names)) logs[key] = 0.0;
  if (context.validation) {
    Logs val;
    for (const auto& [key, value] : logs) val["val_" + key] = value;
    logs.insert(val.begin(), val.end());
  }
  for (size_t j = 0; j < index; ++j)
    if (specs[j].class_name == "ReduceLROnPlateau" ||
        specs[j].class_name == "LearningRateScheduler")
      logs["learning_rate"] = 0.0;
  try {
    checkpoint.file_for_epoch(0, logs);
  } catch (const InputError& e) {
    if (!context.validation && e.message().starts_with("{val_"))
      throw InputError(place, e.message() + " (val_ values need a validation split)");
    throw;
  }
}

}  // namespace

std::vector<std::unique_ptr<Callback>> make_callbacks(const std::vector<CallbackSpec>& specs,
                                                      const Clock&,
                                                      const CallbackContext& context) {
  std::vector<std::unique_ptr<Callback>> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const CallbackSpec& s = specs[i];
    const std::string place = "fit.callbacks[" + std::to_string(i) + "]";
    if (s.mode != "auto" && s.mode != "min" && s.mode != "max")
      throw InputError(place + ".config.mode", "must be \"auto\", \"min\" or \"max\"");
    const bool sets_rate =
        s.class_name == "ReduceLROnPlateau" || s.class_name == "LearningRateScheduler";
    if (sets_rate && context.rate_is_schedule)
      throw InputError(place, s.class_name +
                                  " sets the learning rate, but the optimizer's learning_rate "
                                  "is a schedule, which Keras does not let a callback set "
                                  "(TypeError); use a constant learning_rate with it, or one of "
                                  "the two");
    if (s.class_name == "EarlyStopping") {
      if (s.patience_set && *s.patience_set < 0)
        throw InputError(place + ".config.patience", "must be >= 0");
      out.push_back(std::make_unique<EarlyStopping>(s, monitor_direction(s, context, place)));
    } else if (s.class_name == "ModelCheckpoint") {
      const std::string file_place = place + ".config.filepath";
      if (s.filepath.empty()) throw InputError(file_place, "must name the model file to write");
      std::unique_ptr<ModelCheckpoint> checkpoint;
      try {
        checkpoint = std::make_unique<ModelCheckpoint>(s, monitor_direction(s, context, place),
                                                       file_place, context.write_model);
      } catch (const FormatError& e) {
        throw InputError(file_place, std::string(e.what()) + " (\"" + s.filepath +
                                         "\" is filled as Python's str.format)");
      }
      check_filepath_fields(*checkpoint, specs, i, context, file_place);
      // The training loop writes no file format itself: its caller says how (execute_run
      // passes write_model_file).
      if (!context.write_model)
        throw InputError(place,
                         "ModelCheckpoint needs a model writer: pass RunOptions::write_model "
                         "(write_model_file) to fit()");
      out.push_back(std::move(checkpoint));
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
