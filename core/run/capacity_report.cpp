#include "core/run/capacity_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/base/memory_limit.h"
#include "core/distribution/spec/strategies.h"

namespace fitbench {

CapacityFit fit_of(const MemoryPlan& plan, const Target& target) {
  CapacityFit f;
  f.shared = target.memory_bytes == 0;
  f.capacity = f.shared ? process_memory_limit().bytes : target.memory_bytes;
  f.fits = f.shared ? plan.job_total() <= f.capacity : plan.largest_device() <= f.capacity;
  return f;
}

double one_device_rate(CapacityInput in, const Target& target) {
  in.distribution = DistributionSpec{};
  in.devices = 1;
  return predict_step(in, target).samples_per_s;
}

std::vector<CapacityInput> sweep_inputs(const CapacityInput& base, int n) {
  std::vector<CapacityInput> out;
  CapacityInput dp = base;
  dp.distribution = DistributionSpec{};
  dp.distribution.class_name = std::string(kDataParallel);
  dp.devices = n;
  out.push_back(dp);
  for (int m : {2, 4, 8}) {
    if (n % m != 0) continue;
    CapacityInput mp = base;
    if (mp.distribution.class_name != kModelParallel) {
      mp.distribution = DistributionSpec{};
      mp.distribution.class_name = std::string(kModelParallel);
    }
    mp.distribution.mesh_shape = {n / m, m};
    mp.distribution.axis_names = {"batch", "model"};
    mp.devices = n;
    out.push_back(mp);
  }
  return out;
}

std::string strategy_text(const CapacityInput& in) {
  const DistributionSpec& d = in.distribution;
  if (d.class_name.empty()) return "no distribution (one device)";
  if (d.class_name == kModelParallel && d.mesh_shape.size() == 2)
    return "ModelParallel on a " + std::to_string(d.mesh_shape[0]) + "x" +
           std::to_string(d.mesh_shape[1]) + " mesh";
  return d.class_name + " on " + counted(in.devices, "device");
}

CapacityRow capacity_row(const CapacityInput& in, const Target& target, double one_rate) {
  CapacityRow r;
  r.strategy = strategy_text(in);
  r.devices = in.devices;
  try {
    r.memory = plan_memory(in);
    r.step = predict_step(in, target);
  } catch (const InputError& e) {
    r.problem = e.message();
    return r;
  }
  r.fit = fit_of(r.memory, target);
  r.efficiency = one_rate > 0.0 ? r.step.samples_per_s / (one_rate * std::max(in.devices, 1)) : 0;
  return r;
}

std::vector<std::pair<int, CapacityRow>> sweep_rows(const CapacityInput& in, const Target& target,
                                                    double one_rate,
                                                    const std::vector<int>& counts) {
  std::vector<std::pair<int, CapacityRow>> rows;
  for (int n : counts)
    for (const CapacityInput& s : sweep_inputs(in, n))
      rows.emplace_back(n, capacity_row(s, target, one_rate));
  return rows;
}

std::string fit_sentence(const CapacityRow& r) {
  const std::string verdict = std::string("Fits: ") + (r.fit.fits ? "yes" : "no");
  if (r.fit.shared)
    return verdict + ": the job needs " + bytes_text(r.memory.job_total()) +
           " and this process may take " + bytes_text(r.fit.capacity);
  return verdict + ": the largest device needs " + bytes_text(r.memory.largest_device()) + " of " +
         bytes_text(r.fit.capacity);
}

std::string step_sentence(const CapacityRow& r) {
  std::string s = "Step: compute " + seconds_text(r.step.compute_s) + " + communication " +
                  seconds_text(r.step.communication_s) + " = " + seconds_text(r.step.total_s) +
                  "; " + grouped_text(r.step.samples_per_s) + " samples/s";
  if (r.devices > 1)
    s += "; scaling efficiency " + fixed_text(r.efficiency * 100.0, 0) + "% of " +
         std::to_string(r.devices) + " x one device";
  return s;
}

std::string collective_text(const CollectiveCost& c) {
  return c.what + " over " + std::to_string(c.ranks) + " devices: " + bytes_text(c.bytes_on_links) +
         " on the links, " + seconds_text(c.seconds);
}

std::string fixed_text(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string seconds_text(double s) {
  if (s >= 1.0) return fixed_text(s, 2) + " s";
  if (s >= 1e-3) return fixed_text(s * 1e3, 2) + " ms";
  if (s >= 1e-6 || s == 0.0) return fixed_text(s * 1e6, 1) + " µs";
  return fixed_text(s * 1e9, 1) + " ns";
}

std::string grouped_text(double v) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(v)));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

}  // namespace fitbench
