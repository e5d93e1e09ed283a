// Sequential::summary(): the rows Keras prints, formatted by format_summary.
#include "core/optimizers/optimizer_registry.h"
#include "core/training/sequential.h"
#include "core/training/summary_format.h"

namespace fitbench {

std::string Sequential::summary() const {
  std::vector<SummaryRow> rows;
  for (size_t l = 0; l < network_.layers().size(); ++l) {
    const Layer& layer = *network_.layers()[l];
    SummaryRow row;
    row.name = layer.name();
    row.class_name = layer.class_name();
    if (built()) {
      row.output_shape = {std::nullopt};
      for (int64_t d : network_.layer_shape(l)) row.output_shape.push_back(d);
      for (size_t v = 0; v < network_.variable_count(l); ++v)
        row.params += variables_[network_.first_variable(l) + v].size();
    } else {
      // Keras prints "?" for an unbuilt model's shapes and 0 (unbuilt) params.
      row.output_shape = {};
    }
    rows.push_back(std::move(row));
  }
  std::optional<int64_t> optimizer_params;
  if (optimizer_ && optimizer_built_) {
    // Slot variables per model variable are the optimizer registry's answer.
    const OptimizerSpec& o = compile_options_.optimizer;
    const OptimizerInfo* info = find_optimizer(o.class_name);
    const int slots = info != nullptr ? info->slots_per_variable(o) : 0;
    optimizer_params = 1 + (optimizer_->has_schedule() ? 0 : 1) + slots * count_params(true);
  }
  return format_summary(name(), rows, count_params(true), count_params(false), optimizer_params);
}

}  // namespace fitbench
