// model.summary() text as Keras 3 prints it for a Sequential model:
// keras/src/utils/summary_utils.py rendered by rich (heavy-head box table, one rule between rows,
// wrapped cells) and the parameter footer. Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fitbench {

// One layer's line in the table.
struct SummaryRow {
  std::string name;        // the layer's name, e.g. "dense_1"
  std::string class_name;  // e.g. "Dense"
  // nullopt prints as None: {nullopt, 1}; empty prints Keras's "?" (not built).
  std::vector<std::optional<int64_t>> output_shape;
  int64_t params = 0;  // the layer's count_params()
};

// Keras's line_length when stdout is not a terminal (a pipe, a notebook): min(88, 80 - 4).
inline constexpr int kSummaryLineLength = 76;

// Keras's default line_length for a terminal `columns` wide: min(88, columns - 4).
int summary_line_length(int terminal_columns);

// The whole summary, lines ending in "\n":
//   Model: "sequential"
//   ┏━━━━…┳━━━━…┳━━━━…┓ table (Layer (type) | Output Shape | Param #) …
//    Total params: 5 (20.00 B)
//    Trainable params: 5 (20.00 B)
//    Non-trainable params: 0 (0.00 B)
//    Optimizer params: 2 (12.00 B)        <- only when optimizer_params is set
// optimizer_params counts Keras's optimizer.variables, set once the model is compiled and the
// optimizer built (after fit() or a build). They always include the int64 iteration counter
// (8 bytes); the others take bytes_per_param each, as Keras sizes them (so SGD's iteration +
// learning_rate print "2 (12.00 B)"). Cells too long for their column wrap at spaces as rich
// does; a word longer than the column ends in "…". line_length >= 20.
std::string format_summary(const std::string& model_name, const std::vector<SummaryRow>& rows,
                           int64_t trainable_params, int64_t non_trainable_params,
                           std::optional<int64_t> optimizer_params, int64_t bytes_per_param = 4,
                           int line_length = kSummaryLineLength);

// 1234567 -> "1,234,567" (Python's f"{n:,}").
std::string format_thousands(int64_t n);

// Keras's readable_memory_size: 1024-based units with two decimals: "20.00 B", "434.18 KB",
// "8.63 MB", up to "PB".
std::string readable_memory_size(double bytes);

}  // namespace fitbench
