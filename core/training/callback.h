// The callback interface with Keras's hooks (keras.callbacks.Callback). fit() calls them on the
// thread that runs fit(); `logs` hold running means for batches and epoch results at epoch end.
// fitbench adds on_step_trace for per-device spans (distribution) without changing the rest.
#pragma once

#include "core/training/logs.h"

namespace fitbench {

class Sequential;
struct StepTrace;  // core/distribution/trace/trace.h

// keras.callbacks.Callback.params: what the loop that calls the hooks will run.
struct CallbackParams {
  int epochs = 1;
  int steps = 0;  // batches per epoch (or per evaluate/predict)
  int verbose = 1;
};

class Callback {
 public:
  virtual ~Callback() = default;

  // Called by fit()/evaluate()/predict() before any other hook.
  virtual void set_model(Sequential* model) { model_ = model; }
  virtual void set_params(const CallbackParams& params) { params_ = params; }

  virtual void on_train_begin(const Logs& /*logs*/) {}
  virtual void on_train_end(const Logs& /*logs*/) {}
  virtual void on_epoch_begin(int /*epoch*/, const Logs& /*logs*/) {}
  // Callbacks may add entries (ReduceLROnPlateau adds "learning_rate").
  virtual void on_epoch_end(int /*epoch*/, Logs& /*logs*/) {}
  virtual void on_train_batch_begin(int /*batch*/, const Logs& /*logs*/) {}
  virtual void on_train_batch_end(int /*batch*/, const Logs& /*logs*/) {}
  virtual void on_test_begin(const Logs& /*logs*/) {}
  virtual void on_test_end(const Logs& /*logs*/) {}
  virtual void on_test_batch_end(int /*batch*/, const Logs& /*logs*/) {}
  virtual void on_predict_begin(const Logs& /*logs*/) {}
  virtual void on_predict_batch_end(int /*batch*/, const Logs& /*logs*/) {}
  virtual void on_predict_end(const Logs& /*logs*/) {}
  // fitbench's own: after each train step of a distributed fit(), what every device did (spans
  // with timestamps). Not called when fit() runs on one device without a distribution.
  virtual void on_step_trace(const StepTrace& /*trace*/) {}

 protected:
  Sequential* model_ = nullptr;
  CallbackParams params_{};
};

}  // namespace fitbench
