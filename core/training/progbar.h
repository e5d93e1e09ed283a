// The progress text of fit(), evaluate() and predict(), as Keras 3's ProgbarLogger drives its
// Progbar (keras/src/callbacks/progbar_logger.py, keras/src/utils/progbar.py). Writes to a
// borrowed std::ostream that must outlive it; one thread drives it (not thread-safe).
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/training/logs.h"

namespace fitbench {

// Seconds on some fixed timeline; injected so tests are deterministic.
using Clock = std::function<double()>;

// std::chrono::steady_clock in seconds: the default Clock.
double steady_seconds();

// Whether stdout is a terminal (Keras's sys.stdout.isatty()): the CLI passes it as `interactive`.
bool stdout_is_terminal();

// What Keras prints, by verbose:
//   0  nothing.
//   1  interactive: a live bar redrawn in place ("\b"s and "\r", bold and colour escapes, at most
//      every 0.05 s except the last update), ending with the epoch's final line and "\n":
//        8/8 ━━━━━━━━━━━━━━━━━━━━ 0s 51ms/step - accuracy: 0.7734 - loss: 0.4660
//      not interactive (a pipe or a log file): only that final line, without "\r" or escapes.
//      (fitbench's choice for clean logs: Keras on POSIX always takes stdout as a live display,
//      and its non-live branch prints every throttled update, escapes included, on new lines.)
//   2  one line per epoch at its end: "8/8 - 0s - 51ms/step - accuracy: 0.7734 - loss: 0.4660".
// "Epoch 1/4" precedes each epoch when epochs > 1 (verbose 1 and 2). Values print as {:.4f} when
// |v| > 1e-3, else {:.4e} (verbose 2 tests v > 1e-3 without abs(), as Keras does). Time per step
// (us/ms/s) is measured from the start of the epoch; with verbose=1 the first step is left out
// once a later step has been seen, as Keras's _estimate_step_duration does. Mid-epoch, verbose=1
// shows the mean of the logs reported so far in the epoch (Keras averages them again); the final
// line shows the end logs as given.
class Progbar {
 public:
  Progbar(std::ostream& out, int verbose, bool interactive, Clock clock = steady_seconds);

  // fit(): begin_epoch, update per batch, end_epoch. `epoch` is 0-based (Keras's on_epoch_begin;
  // with initial_epoch=2 and epochs=4 the lines are "Epoch 3/4", "Epoch 4/4").
  void begin_epoch(int epoch, int epochs);
  // After batch `step` (1-based) of `steps`, with the running logs. Drawn only with verbose=1.
  void update(int step, int steps, const Logs& logs);
  // Epoch end with its logs (training keys and "val_*", maybe "learning_rate").
  void end_epoch(int steps, const Logs& logs);

  // evaluate() outside fit(): begin_evaluate, update per batch, end_evaluate with the results.
  // (Validation inside fit() prints nothing: the fit loop does not call these.)
  void begin_evaluate();
  void end_evaluate(int steps, const Logs& logs);

  // predict(): begin_predict, update(step, steps, {}) per batch, end_predict. Prints no values.
  void begin_predict();
  void end_predict(int steps);

 private:
  using Values = std::vector<std::pair<std::string, double>>;

  void start();  // a fresh bar: ProgbarLogger's _reset_progbar + _maybe_init_progbar
  void advance(int current, int target, const Values& values, bool finalize);
  double estimate_step_duration(int current, double now);
  std::string metrics_text(bool verbose2) const;
  void write(const std::string& text);

  std::ostream& out_;
  int verbose_;
  bool interactive_;
  Clock clock_;

  bool started_ = false;
  bool predicting_ = false;  // predict(): logs are not shown
  double start_ = 0.0;
  std::optional<double> last_update_;
  std::optional<double> time_after_first_step_;
  int seen_so_far_ = 0;
  int prev_total_width_ = 0;
  std::vector<std::string> order_;  // display order: first seen, first shown
  std::map<std::string, std::pair<double, double>> values_;  // key -> (weighted sum, count)
};

}  // namespace fitbench
