// keras.callbacks.ProgbarLogger: drives a Progbar from fit()/evaluate()/predict() hooks, so the
// text the CLI and the GUI's log pane show is Keras's. Used by one thread.
#pragma once

#include <iosfwd>
#include <memory>

#include "core/training/callback.h"
#include "core/training/progbar.h"

namespace fitbench {

class ProgbarLogger : public Callback {
 public:
  ProgbarLogger(std::ostream& out, bool interactive, Clock clock);

  void set_params(const CallbackParams& params) override;
  void on_train_begin(const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  void on_test_begin(const Logs& logs) override;
  void on_test_batch_end(int batch, const Logs& logs) override;
  void on_test_end(const Logs& logs) override;
  void on_predict_begin(const Logs& logs) override;
  void on_predict_batch_end(int batch, const Logs& logs) override;
  void on_predict_end(const Logs& logs) override;

 private:
  std::ostream& out_;
  bool interactive_;
  Clock clock_;
  std::unique_ptr<Progbar> bar_;
  bool in_fit_ = false;
  Logs empty_;
};

}  // namespace fitbench
