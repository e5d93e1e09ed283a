// Sequential::summary(): the rows Keras prints, formatted by format_summary.
#include "core/training/sequential.h"
#include "core/training/summary_format.h"

namespace fitbench {
namespace {

// Slot variables per model variable, as Keras's optimizers create them.
int slots_per_variable(const OptimizerSpec& o) {
  if (o.class_name == "SGD") return o.momentum > 0.0 ? 1 : 0;
  if (o.class_name == "Adam" || o.class_name == "AdamW") return o.amsgrad ? 3 : 2;
  if (o.class_name == "RMSprop") return 1 + (o.momentum > 0.0 ? 1 : 0) + (o.centered ? 1 : 0);
  if (o.class_name == "Adagrad") return 1;
  return 0;
}

}  // namespace

std::string Sequential::summary() const {
  std::vector<SummaryRow> rows;
  for (size_t l = 0; l < network_.layers().size(); ++l) {
    const Layer& layer = *network_.layers()[l];
    SummaryRow row;
    row.name = layer.name();
    row.class_name = layer.class_name();
    if (built()) {
      row.output_shape = {std::nullopt, network_.layer_units(l)};
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
    const OptimizerSpec& o = compile_options_.optimizer;
    optimizer_params =
        1 + (optimizer_->has_schedule() ? 0 : 1) + slots_per_variable(o) * count_params(true);
  }
  return format_summary(name(), rows, count_params(true), count_params(false), optimizer_params);
}

}  // namespace fitbench
