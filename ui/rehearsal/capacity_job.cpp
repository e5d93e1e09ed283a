#include "ui/rehearsal/capacity_job.h"

#include "core/base/error.h"

namespace fitbench {

std::vector<int> scalingDeviceCounts() {
  std::vector<int> counts;
  for (int n = 1; n <= 1024; n *= 2) counts.push_back(n);
  return counts;
}

CapacityResult computeCapacity(const CapacityRequest& request) {
  CapacityResult out;
  out.generation = request.generation;
  try {
    PlanContext context;
    context.base_dir = request.baseDir.toStdString();
    std::vector<PlanNotice> notices;
    out.input = scale_input(plan_capacity(request.spec, request.overrides, context, &notices),
                            request.scale);
    for (const PlanNotice& n : notices) out.notices << QString::fromStdString(n.text);
    const double oneRate = one_device_rate(out.input, request.target);
    out.row = capacity_row(out.input, request.target, oneRate);
    if (!out.row.problem.empty()) {
      out.error = QString::fromStdString(out.row.problem);
      return out;
    }
    out.sweep = sweep_rows(out.input, request.target, oneRate, scalingDeviceCounts());
  } catch (const PlanError& e) {
    QStringList lines;
    for (const PlanProblem& p : e.problems()) lines << QString::fromStdString(p.text());
    out.error = lines.join(QLatin1Char('\n'));
  } catch (const InputError& e) {
    out.error = QString::fromStdString(e.what());
  } catch (const std::bad_alloc&) {
    out.error = QStringLiteral("not enough memory to plan this experiment's data set");
  }
  return out;
}

}  // namespace fitbench
