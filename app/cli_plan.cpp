// fitbench-cli plan: will this plan fit on the target devices, and how fast will it step? The
// memory per device (core/run/capacity.h), the collectives and the predicted step
// (core/run/step_time.h) on a target (core/run/target.h), as text or one JSON object, with
// what-ifs and a sweep over device counts. Parsing and printing only.
#include <QCommandLineParser>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli_commands.h"
#include "app/cli_options.h"
#include "core/base/error.h"
#include "core/base/memory_limit.h"
#include "core/distribution/spec/devices.h"
#include "core/distribution/spec/strategies.h"
#include "core/io/experiment.h"
#include "core/run/calibrate.h"
#include "core/run/capacity.h"
#include "core/run/capacity_report.h"
#include "core/run/run_plan.h"
#include "core/run/step_time.h"
#include "core/training/fit_options.h"

namespace fitbench::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string pad(const std::string& s, size_t width) {
  // Widths count characters, and "µ" is two bytes.
  size_t shown = 0;
  for (unsigned char c : s) shown += (c & 0xC0) != 0x80;
  return s + std::string(width > shown ? width - shown : 1, ' ');
}

double factor_option(const QCommandLineParser& p, const char* name) {
  if (!p.isSet(name)) return 1.0;
  bool ok = false;
  const double v = p.value(name).toDouble(&ok);
  if (!ok || !(v > 0.0 && v <= 1e6))
    throw InputError(std::string("--") + name, "must be a factor above 0, e.g. 2 or 0.5, got \"" +
                                                   p.value(name).toStdString() + "\"");
  return v;
}

// The most devices a sweep plans for (nothing runs, so more than a run may have).
constexpr int kMaxSweepDevices = 1 << 20;

std::vector<int> device_list(const QString& text) {
  std::vector<int> out;
  for (const QString& part : text.split(',')) {
    bool ok = false;
    const int n = part.trimmed().toInt(&ok);
    if (!ok || n < 1 || n > kMaxSweepDevices)
      throw InputError("--sweep-devices",
                       "must list device counts from 1 to " + std::to_string(kMaxSweepDevices) +
                           " separated by commas, got \"" + text.toStdString() + "\"");
    out.push_back(n);
  }
  return out;
}

Json device_json(const std::string& name, const DeviceMemory& m) {
  return {{"device", name},
          {"weights", m.weights},
          {"gradients", m.gradients},
          {"optimizer_slots", m.optimizer_slots},
          {"activations", m.activations},
          {"buffers", m.buffers},
          {"total", m.total()}};
}

void print_plan(const CapacityInput& in, const Target& target, const CapacityRow& r) {
  std::cout << "Target: " << target.name << ": " << target.source << "\n";
  std::cout << "Strategy: " << r.strategy;
  if (r.memory.sharded_update)
    std::cout << "; sharded update (each device keeps the optimizer slots of 1/" << in.devices
              << " of the variables)";
  std::cout << "\nModel: " << grouped_text(static_cast<double>(r.memory.parameters))
            << " parameters (" << grouped_text(static_cast<double>(r.memory.trainable))
            << " trainable); " << in.optimizer.class_name << " keeps "
            << r.memory.slots_per_variable << " slot(s) per parameter; " << r.memory.rows_per_device
            << " rows per device per step\n\n";
  const size_t w = 13;
  std::cout << pad("device", 9) << pad("weights", w) << pad("gradients", w) << pad("opt. slots", w)
            << pad("activations", w) << pad("buffers", w) << pad("total", w) << "fits\n";
  for (size_t d = 0; d < r.memory.devices.size(); ++d) {
    const DeviceMemory& m = r.memory.devices[d];
    std::string fits = "-";
    if (!r.fit.shared)
      fits = m.total() <= r.fit.capacity
                 ? "yes (" + bytes_text(r.fit.capacity - m.total()) + " free)"
                 : "no (" + bytes_text(m.total() - r.fit.capacity) + " over)";
    std::cout << pad("cpu:" + std::to_string(d), 9) << pad(bytes_text(m.weights), w)
              << pad(bytes_text(m.gradients), w) << pad(bytes_text(m.optimizer_slots), w)
              << pad(bytes_text(m.activations), w) << pad(bytes_text(m.buffers), w)
              << pad(bytes_text(m.total()), w) << fits << "\n";
  }
  std::cout << "Job: devices " << bytes_text(r.memory.devices_total()) << ", host (the model's own "
            << "copies, fit()'s buffers) " << bytes_text(r.memory.host) << ", data set "
            << bytes_text(r.memory.data) << ": " << bytes_text(r.memory.job_total()) << "\n";
  std::cout << fit_sentence(r) << "\n";
  std::cout << "\nCommunication per step:" << (r.step.collectives.empty() ? " none\n" : "\n");
  for (const CollectiveCost& c : r.step.collectives)
    std::cout << "  " << collective_text(c) << "\n";
  std::cout << step_sentence(r) << "\n";
}

void print_sweep(const std::vector<std::pair<int, CapacityRow>>& rows) {
  std::cout << "\n"
            << pad("devices", 9) << pad("strategy", 32) << pad("per device", 12) << pad("fits", 6)
            << pad("step", 12) << pad("samples/s", 14) << "efficiency\n";
  for (const auto& [n, r] : rows) {
    std::cout << pad(std::to_string(n), 9) << pad(r.strategy, 32);
    if (!r.problem.empty()) {
      std::cout << "cannot: " << r.problem << "\n";
      continue;
    }
    std::cout << pad(bytes_text(r.memory.largest_device()), 12) << pad(r.fit.fits ? "yes" : "no", 6)
              << pad(seconds_text(r.step.total_s), 12)
              << pad(grouped_text(r.step.samples_per_s), 14) << fixed_text(r.efficiency * 100.0, 0)
              << "%\n";
  }
}

Json step_json(const StepTime& s) {
  return {{"compute_s", s.compute_s},
          {"communication_s", s.communication_s},
          {"total_s", s.total_s},
          {"samples_per_s", s.samples_per_s}};
}

}  // namespace

int plan_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Will the plan fit on the target devices, and how fast will it step? Memory per device, "
      "the collectives of a step and the predicted step time (docs/capacity.md).");
  p.addPositionalArgument("EXPERIMENT", "The experiment file (JSON).");
  p.addOption({"target",
               "The devices to plan for: " + QString::fromStdString(target_preset_names()) +
                   ", or a target file (JSON; default this-machine).",
               "NAME|FILE"});
  p.addOption({"devices", "Number of devices (as run's --devices).", "N"});
  p.addOption({"strategy", "none, data_parallel or model_parallel (as run's --strategy).",
               "none|data_parallel|model_parallel"});
  p.addOption({"mesh", "ModelParallel's mesh, batch x model (as run's --mesh).", "RxC"});
  p.addOption({"batch-size", "Override fit.batch_size.", "N"});
  p.addOption({"allreduce", "ring or naive (as run's --allreduce).", "ring|naive"});
  p.addOption({"scale-batch", "What if the batch (and the data) were X times as large?", "X"});
  p.addOption(
      {"scale-width", "What if every Dense layer but the output had X times the units?", "X"});
  p.addOption({"scale-devices",
               "What if there were X times the devices (ModelParallel: the batch axis)?", "X"});
  p.addOption({"sweep-devices",
               "Also a table of the plan over these device counts, for DataParallel and meshes.",
               "1,2,4,..."});
  p.addOption({"calibrate",
               "Measure this machine (FLOP/s, cores, thread collectives) for the this-machine "
               "target, and the plan's real step beside the prediction."});
  p.addOption({"json", "Print one JSON object instead of tables."});
  if (int code = parse(p, args, 1, "one EXPERIMENT file"); code >= 0) return code;

  OptionReader option(p);
  std::vector<PlanProblem>& problems = option.problems;
  RunOverrides o;
  option("devices", [&] { o.devices = int_option(p, "devices", 1, kMaxDeviceCount); });
  option("strategy", [&] { o.strategy = p.value("strategy").toStdString(); });
  option("mesh", [&] { o.mesh = mesh_option(p.value("mesh")); });
  option("batch-size", [&] { o.batch_size = int_option(p, "batch-size", 1, kMaxFitCount); });
  option("allreduce", [&] { o.allreduce = p.value("allreduce").toStdString(); });
  CapacityScale scale;
  option("scale-batch", [&] { scale.batch = factor_option(p, "scale-batch"); });
  option("scale-width", [&] { scale.width = factor_option(p, "scale-width"); });
  option("scale-devices", [&] { scale.devices = factor_option(p, "scale-devices"); });
  std::vector<int> sweep;
  option("sweep-devices", [&] { sweep = device_list(p.value("sweep-devices")); });
  Target target;
  const std::string target_name =
      p.isSet("target") ? p.value("target").toStdString() : target_presets().front().name;
  try {
    target = read_target(target_name, "--target");
  } catch (const InputError& e) {
    problems.push_back({e.place(), e.message()});
  }
  const bool calibrating = p.isSet("calibrate");
  if (calibrating && target_name != target_presets().front().name)
    problems.push_back({"--calibrate", "measures this machine, so it goes with --target " +
                                           target_presets().front().name +
                                           " (the default), not \"" + target_name + "\""});

  const std::string file = p.positionalArguments()[0].toStdString();
  PlanContext context;
  context.source = file;
  context.experiment_file = file;
  const ExperimentSpec spec = read_experiment(file);
  if (!problems.empty()) throw PlanError(std::move(problems));
  set_building("the capacity plan (the data set and the model's shapes)");
  std::vector<PlanNotice> notices;
  const CapacityInput in = scale_input(plan_capacity(spec, o, context, &notices), scale);
  // As run says them before training, on stderr (stdout stays the table or the JSON object).
  print_notices(notices);

  std::optional<double> measured;
  if (calibrating) {
    set_building("the calibration's buffers");
    target = calibrated_target(calibrate(in));
    if (scale.batch == 1.0 && scale.width == 1.0 && scale.devices == 1.0) {
      set_building("the run plan measured for --calibrate");
      RunPlan run = plan_run(spec, o, context);
      measured = measure_step_seconds(run, 8);
    }
  }
  const double one_rate = one_device_rate(in, target);
  const CapacityRow row = capacity_row(in, target, one_rate);
  if (!row.problem.empty()) throw InputError(file, row.problem);
  const std::vector<std::pair<int, CapacityRow>> rows = sweep_rows(in, target, one_rate, sweep);

  if (p.isSet("json")) {
    Json out;
    out["target"] = target.name;
    out["strategy"] = row.strategy;
    Json devices = Json::array();
    for (size_t d = 0; d < row.memory.devices.size(); ++d)
      devices.push_back(device_json("cpu:" + std::to_string(d), row.memory.devices[d]));
    out["devices"] = devices;
    out["fits"] = row.fit.fits;
    out["job_total"] = row.memory.job_total();
    out["communication_bytes_per_step"] = row.step.communication_bytes;
    out["step"] = step_json(row.step);
    if (measured) out["measured_step_s"] = *measured;
    if (!sweep.empty()) {
      Json list = Json::array();
      for (const auto& [n, r] : rows) {
        Json item{{"devices", n}, {"strategy", r.strategy}};
        if (!r.problem.empty()) {
          item["problem"] = r.problem;
        } else {
          item["largest_device"] = r.memory.largest_device();
          item["fits"] = r.fit.fits;
          item["step"] = step_json(r.step);
          item["scaling_efficiency"] = r.efficiency;
        }
        list.push_back(item);
      }
      out["sweep"] = list;
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  print_plan(in, target, row);
  if (measured)
    std::cout << "Measured on this machine: " << seconds_text(*measured) << " per step (predicted "
              << seconds_text(row.step.total_s) << ", "
              << fixed_text((row.step.total_s / *measured - 1.0) * 100.0, 0) << "%)\n";
  if (!rows.empty()) print_sweep(rows);
  return 0;
}

}  // namespace fitbench::cli
