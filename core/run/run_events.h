// A run's events as JSON lines (`fitbench-cli run --events FILE|-`): what the window's charts and
// rehearsal views are fed while a run trains, one JSON object per line, written and flushed as
// each happens, so that another program (the window running mpirun, a notebook, `jq`) can follow
// a run live. The format (docs/events.md):
//   {"event": "begin", "devices": N, "device_names": [...], "distribution": "DataParallel" | "",
//    "processes": P, "epochs": E, "steps": S, "batch_size": B, "train_rows": R}
//   {"event": "text", "text": "Epoch 1/30"}                   a line of Keras's printed output
//   {"event": "batch", "epoch": 0, "batch": 3, "logs": {...}}  on_train_batch_end's logs
//   {"event": "epoch", "epoch": 0, "logs": {...}}              on_epoch_end's logs
//   {"event": "step", "step": 12, "epoch": 0, "batch": 3, "shard_rows": [8, 8],
//    "spans": [[{"name": "forward", "begin_us": 1.5, "duration_us": 20.2}, ...], ...]}
//                                                              a distributed step, per device
//   {"event": "end", "stop_reason": "", "seconds": 1.25, "epochs_run": 30,
//    "usage": [{"busy_percent": 61.2, "communication_percent": 12.0, "idle_percent": 26.8}, ...]}
// A value that is not a finite number (a diverged loss) is null. RunEventWriter writes them (a
// RunListener on the fit() thread; not thread-safe); parse_run_event reads one line back.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "core/distribution/trace/trace.h"
#include "core/run/run.h"

namespace fitbench {

class RunEventWriter : public RunListener {
 public:
  // Writes to `out` (not owned), flushing after every line.
  explicit RunEventWriter(std::ostream& out, int processes = 1);

  // A stream whose every line becomes a "text" event: the run's Keras output (RunIO::out). A
  // carriage return starts the line again (an interactive progress bar's redrawing), so a line
  // is what a terminal shows when it ends.
  std::ostream& text_stream() { return text_; }

  void on_run_begin(const RunPlan& plan) override;
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_step_trace(const StepTrace& trace) override;
  // The "end" event. Not on_run_end: a multi-process run has every device's usage only after the
  // processes have gathered it, which the front end does after execute_run returns.
  void write_end(const RunResult& result);

  // Whether every line so far was written (false after a write error: a full disk, a closed
  // pipe).
  bool good() const { return out_.good(); }

 private:
  class LineBuffer : public std::streambuf {
   public:
    explicit LineBuffer(RunEventWriter& writer) : writer_(writer) {}

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;

   private:
    RunEventWriter& writer_;
    std::string line_;
  };

  void write_line(const std::string& json);
  void text(const std::string& line);

  std::ostream& out_;
  int processes_;
  LineBuffer buffer_{*this};
  std::ostream text_{&buffer_};
  // The begin event's fields from the plan; written at on_train_begin, with fit()'s params.
  int devices_ = 1;
  std::vector<std::string> device_names_;
  std::string distribution_;
  int batch_size_ = 0;
  int64_t train_rows_ = 0;
  int epoch_ = 0;  // of the batches that follow
  // Text printed before fit() starts (the Devices lines), written right after the begin event.
  bool begun_ = false;
  std::vector<std::string> before_begin_;
};

// One event read back.
struct RunEvent {
  enum class Kind { kBegin, kText, kBatch, kEpoch, kStep, kEnd };
  Kind kind = Kind::kText;
  // begin
  int devices = 0;
  std::vector<std::string> device_names;
  std::string distribution;
  int processes = 1;
  int epochs = 0;
  int steps = 0;
  int batch_size = 0;      // 0 when not given
  int64_t train_rows = 0;  // rows trained on per epoch
  // text
  std::string text;
  // batch, epoch, step: -1 when not given
  int epoch = -1;
  int batch = -1;
  std::map<std::string, std::optional<double>> logs;  // null: not a finite number
  // step
  StepTrace step;
  // end
  std::string stop_reason;
  double seconds = 0.0;
  int epochs_run = 0;
  std::vector<DeviceUsage> usage;  // total_us is not part of the event: 100 per device
};

// Reads one line of an event stream. Throws InputError(place, ...) naming the field for a line
// that is not one JSON object of a known event with fields of the right kinds.
RunEvent parse_run_event(const std::string& line, const std::string& place);

}  // namespace fitbench
