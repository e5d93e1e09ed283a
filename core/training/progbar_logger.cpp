#include "core/training/progbar_logger.h"

namespace fitbench {

ProgbarLogger::ProgbarLogger(std::ostream& out, bool interactive, Clock clock)
    : out_(out), interactive_(interactive), clock_(std::move(clock)) {}

void ProgbarLogger::set_params(const CallbackParams& params) {
  Callback::set_params(params);
  bar_ = std::make_unique<Progbar>(out_, params.verbose, interactive_, clock_);
}

void ProgbarLogger::on_train_begin(const Logs&) { in_fit_ = true; }

void ProgbarLogger::on_epoch_begin(int epoch, const Logs&) {
  bar_->begin_epoch(epoch, params_.epochs);
}

void ProgbarLogger::on_train_batch_end(int batch, const Logs& logs) {
  bar_->update(batch + 1, params_.steps, logs);
}

void ProgbarLogger::on_epoch_end(int, Logs& logs) { bar_->end_epoch(params_.steps, logs); }

void ProgbarLogger::on_train_end(const Logs&) { in_fit_ = false; }

void ProgbarLogger::on_test_begin(const Logs&) {
  if (!in_fit_) bar_->begin_evaluate();
}

void ProgbarLogger::on_test_batch_end(int batch, const Logs& logs) {
  if (!in_fit_) bar_->update(batch + 1, params_.steps, logs);
}

void ProgbarLogger::on_test_end(const Logs& logs) {
  if (!in_fit_) bar_->end_evaluate(params_.steps, logs);
}

void ProgbarLogger::on_predict_begin(const Logs&) { bar_->begin_predict(); }

void ProgbarLogger::on_predict_batch_end(int batch, const Logs&) {
  bar_->update(batch + 1, params_.steps, empty_);
}

void ProgbarLogger::on_predict_end(const Logs&) { bar_->end_predict(params_.steps); }

}  // namespace fitbench
