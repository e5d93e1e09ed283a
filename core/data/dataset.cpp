// load_dataset, Standardizer and split_validation (the generators live in generators.cpp, the CSV
// readers in csv_dataset.cpp).

#include "core/data/dataset.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/data/image_folder.h"

namespace fitbench {
namespace {

Dataset take_rows(const Dataset& data, Index start, Index count) {
  Dataset part;
  part.x = data.x.middleRows(start, count);
  part.y = data.y.middleRows(start, count);
  part.feature_names = data.feature_names;
  part.target_names = data.target_names;
  part.sample_shape = data.sample_shape;
  part.class_names = data.class_names;
  return part;
}

}  // namespace

Dataset load_dataset(const DataSpec& spec, const std::filesystem::path& base_dir) {
  if (!spec.csv.empty()) return read_csv_dataset(spec, base_dir);
  if (spec.dataset == "fashion_mnist") return load_fashion_mnist(spec);
  if (!spec.directory.empty()) return load_image_folder(spec);
  return generate_dataset(spec);
}

Standardizer Standardizer::fit(const Matrix& x) {
  // Population statistics, as sklearn.preprocessing.StandardScaler
  // (sklearn/preprocessing/_data.py); two passes in double so a constant column has exactly zero
  // deviation.
  Standardizer s;
  const Index n = x.rows();
  s.mean = Eigen::RowVectorXf::Zero(x.cols());
  s.stddev = Eigen::RowVectorXf::Ones(x.cols());
  if (n == 0) return s;
  for (Index j = 0; j < x.cols(); ++j) {
    double sum = 0.0;
    for (Index i = 0; i < n; ++i) sum += x(i, j);
    const double mean = sum / static_cast<double>(n);
    double squares = 0.0;
    for (Index i = 0; i < n; ++i) {
      const double d = x(i, j) - mean;
      squares += d * d;
    }
    const double stddev = std::sqrt(squares / static_cast<double>(n));
    s.mean(j) = static_cast<float>(mean);
    // sklearn treats a scale below 10 * machine epsilon as zero and uses 1 instead.
    s.stddev(j) =
        stddev < 10.0 * std::numeric_limits<double>::epsilon() ? 1.0f : static_cast<float>(stddev);
  }
  return s;
}

void Standardizer::apply(Matrix& x) const {
  assert(x.cols() == mean.size() && x.cols() == stddev.size());
  x.rowwise() -= mean;
  x.array().rowwise() /= stddev.array();
}

Index validation_split_at(Index n, double fraction) {
  // The split point is Keras's: floor(n * (1 - validation_split)), the last rows validate
  // (keras/src/trainers/data_adapters/data_adapter_utils.py, train_validation_split).
  if (!(fraction >= 0.0 && fraction < 1.0)) {
    throw InputError("fit.validation_split", "must be in [0, 1), got " + format_number(fraction));
  }
  if (fraction == 0.0) return n;
  const auto split_at = static_cast<Index>(std::floor(static_cast<double>(n) * (1.0 - fraction)));
  if (split_at == 0 || split_at == n) {
    const bool no_training = split_at == 0;
    throw InputError("fit.validation_split",
                     format_number(fraction) + " leaves no " +
                         (no_training ? "training" : "validation") +
                         " rows: Keras trains on the first floor(" + std::to_string(n) +
                         " * (1 - " + format_number(fraction) + ")) = " + std::to_string(split_at) +
                         " of " + counted(n, "sample") + "; use a " +
                         (no_training ? "smaller" : "larger") + " fraction or more samples");
  }
  return split_at;
}

std::pair<Dataset, Dataset> split_validation(const Dataset& data, double fraction) {
  const Index n = data.size();
  const Index split_at = validation_split_at(n, fraction);
  if (split_at == n) return {data, take_rows(data, n, 0)};
  return {take_rows(data, 0, split_at), take_rows(data, split_at, n - split_at)};
}

}  // namespace fitbench
