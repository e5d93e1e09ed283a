#include "core/run/run.h"

#include <chrono>
#include <iostream>

#include "core/base/error.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/processes/process_group.h"
#include "core/distribution/spec/devices.h"
#include "core/distribution/trace/process_trace.h"
#include "core/io/chrome_trace.h"
#include "core/io/history_file.h"
#include "core/io/model_file.h"
#include "core/staged_files.h"

namespace fitbench {
namespace {

// Places inside the experiment ("fit.callbacks[0]") are named with the file, as the plan does.
InputError in_source(const InputError& e, const std::string& source) {
  if (source.empty() || e.place().rfind(source, 0) == 0 || e.place().rfind("--", 0) == 0) return e;
  return e.within(source);
}

}  // namespace

RunResult execute_run(RunPlan& plan, const RunIO& io, RunListener* listener) {
  std::ostream& out = io.out ? *io.out : std::cout;
  RunResult result;
  Sequential& model = *plan.model;
  // The per-device summary of every step; the steps' spans only for a trace file, the first
  // kMaxTraceSteps of them.
  TraceRecorder recorder(plan.trace_file.empty() ? 0 : kMaxTraceSteps);
  RunOptions options;
  options.out = &out;
  options.warnings = io.warnings;
  options.interactive = io.interactive;
  options.control = io.control;
  options.write_model = [](const ModelFile& m, const std::filesystem::path& f) {
    write_model_file(m, f);
  };
  FitOptions fit = plan.spec.fit;
  if (!io.write_files) {
    // Callbacks that only write files stay with the process that owns the output.
    std::erase_if(fit.callbacks, [](const CallbackSpec& cb) {
      return cb.class_name == "ModelCheckpoint" || cb.class_name == "CSVLogger";
    });
  }
  if (plan.distributed()) {
    options.callbacks.push_back(&recorder);
    // What the seed script prints before training.
    out << "Devices: " << device_list_repr(plan.device_names) << "\n"
        << distribution_line(plan.spec.distribution) << "\n";
  }
  if (listener) {
    options.callbacks.push_back(listener);
    listener->on_run_begin(plan);
  }
  options.callbacks.insert(options.callbacks.end(), io.callbacks.begin(), io.callbacks.end());

  if (plan.data.has_validation_data()) {  // validation_data "test"
    options.validation_x = &plan.data.validation_x;
    options.validation_y = &plan.data.validation_y;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    result.history = model.fit(plan.data.x, plan.data.y, fit, options);
  } catch (const InputError& e) {
    throw in_source(e, plan.source);
  }
  out.flush();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stop_reason = io.control && io.control->stop_requested() ? "stopped" : model.stop_reason;
  result.restored_epoch = model.restored_epoch;
  for (const CallbackSpec& cb : plan.spec.fit.callbacks)
    if (cb.class_name == "EarlyStopping" && cb.restore_best_weights)
      result.restored_monitor = cb.monitor;
  result.model = model.model_file();
  if (plan.distributed()) {
    result.usage = recorder.usage();
    result.steps_seen = recorder.steps_seen();
    result.steps_traced = recorder.trace().steps().size();
  }

  // Across processes, rank 0 writes one trace of every device of the job (each process takes
  // part in putting it together, the others then drop it).
  RunTrace job_trace;
  const RunTrace* trace = &recorder.trace();
  if (plan.distributed() && !plan.trace_file.empty()) {
    if (const std::shared_ptr<ProcessGroup> group = process_group(); group && group->size() > 1) {
      job_trace = gather_process_traces(*group, recorder.trace());
      trace = &job_trace;
    }
  }

  if (!io.write_files) {
    if (listener) listener->on_run_end(result);
    return result;
  }
  // The run's files are staged first and put in place together: a kill or a failed write never
  // leaves a new history beside an old model or trace.
  StagedFiles outputs;
  if (!plan.trace_file.empty()) {
    write_chrome_trace(plan.trace_file, *trace, &outputs);
    if (result.steps_seen > result.steps_traced)
      result.notices.push_back(
          {PlanNotice::Kind::kNote, "--trace holds the first " +
                                        std::to_string(result.steps_traced) + " of the run's " +
                                        std::to_string(result.steps_seen) + " steps"});
  }
  if (!plan.history_file.empty()) write_history(result.history, plan.history_file, &outputs);
  result.weights_finite = weights_finite(result.model);
  if (!plan.save_model_file.empty()) {
    // A diverged run's weights are not numbers: the run still ends (a failure the front end
    // reports), its History written, the model file not.
    if (result.weights_finite)
      write_model_file(result.model, plan.save_model_file, &outputs);
    else
      try {
        check_weights_finite(result.model, plan.save_model_file);
      } catch (const InputError& e) {
        result.notices.push_back({PlanNotice::Kind::kWarning, e.what()});
      }
  }
  outputs.commit();
  if (listener) listener->on_run_end(result);
  return result;
}

}  // namespace fitbench
