// A data set in memory (features x, targets y, one row per sample) and the ways to make one:
// generators (TensorFlow Playground's sets and more), CSV files, standardization and the
// validation split. Value types and free functions; no shared state.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/tensor.h"
#include "core/data/data_spec.h"

namespace fitbench {

struct Dataset {
  Matrix x;  // (samples, features)
  Matrix y;  // (samples, targets): 0/1 labels, class indices, one-hot columns or real values
  std::vector<std::string> feature_names;
  std::vector<std::string> target_names;
  // Where row r's first target cell comes from, for errors about a label: "<file>:<line>:<column>
  // (<name>)" for a CSV file; empty (no function) for a generator's data.
  std::function<std::string(Index row)> label_place;
  // Validation rows the data set brings with it (Fashion-MNIST's test images, with
  // validation_data "test"); fit() validates on them. Empty otherwise.
  Matrix validation_x, validation_y;
  // What reading the data passed over, as sentences ("data.csv: skipped 3 blank lines ...").
  std::vector<std::string> notes;
  // One sample's shape when it has more than one axis ((28, 28) for Fashion-MNIST); each row of
  // x holds its values in row-major order. Empty: (features,).
  Shape sample_shape;
  // The classes' names in label order when the data set names them (Fashion-MNIST's, a folder of
  // images' subfolders); empty otherwise.
  std::vector<std::string> class_names;

  Index size() const { return x.rows(); }
  Shape shape_of_sample() const { return sample_shape.empty() ? Shape{x.cols()} : sample_shape; }
  bool has_validation_data() const { return validation_x.rows() > 0; }
};

// A generator's data (spec.generator must be set). Throws InputError("data.<field>", ...) for
// impossible parameters (samples < 1, unknown generator, ...).
Dataset generate_dataset(const DataSpec& spec);

// A CSV file's data (spec.csv, spec.target, spec.features_columns, spec.delimiter); a relative
// spec.csv is resolved against base_dir. Throws InputError naming "<file>:<line>:<column>" for a
// non-numeric cell or a short row, and the column for a missing target/feature.
Dataset read_csv_dataset(const DataSpec& spec, const std::filesystem::path& base_dir);

// Fashion-MNIST (spec.dataset == "fashion_mnist"): each 28 x 28 image (sample_shape (28, 28)) as a
// row of 784 values in row-major order, the class index 0-9 as the target,
// the test images as validation data when spec.validation_test. Throws InputError("data.dataset",
// ...) naming the package to install when its folder is missing, InputError(<file>, ...) for a
// damaged file or one whose shape is not Fashion-MNIST's.
Dataset load_fashion_mnist(const DataSpec& spec);
// Fashion-MNIST's class names, in label order ("T-shirt/top", "Trouser", ...).
const std::vector<std::string>& fashion_mnist_classes();
// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// Its images are kFashionMnistSide x kFashionMnistSide pixels.
inline constexpr int64_t kFashionMnistSide = 28;

// generate_dataset, read_csv_dataset, load_fashion_mnist or load_image_folder
// (core/data/image_folder.h), as the spec says.
Dataset load_dataset(const DataSpec& spec, const std::filesystem::path& base_dir);

// A whole CSV file as numbers with its header (for `fitbench-cli predict/evaluate`). Same errors.
struct CsvTable {
  std::vector<std::string> header;
  Matrix values;
};
CsvTable read_csv_table(const std::filesystem::path& file, char delimiter = ',');

// Per-feature mean and standard deviation (population, as sklearn's StandardScaler; a zero
// deviation is treated as 1).
struct Standardizer {
  Eigen::RowVectorXf mean;
  Eigen::RowVectorXf stddev;
  static Standardizer fit(const Matrix& x);
  void apply(Matrix& x) const;
};

// Keras's validation_split point for n samples: the first floor(n * (1 - fraction)) rows train
// (n when fraction is 0). Throws InputError at fit.validation_split for a fraction outside
// [0, 1) or one that leaves either side empty, saying which side and what to change.
Index validation_split_at(Index n, double fraction);

// Splits off the last `fraction` of the samples as validation data, as Keras's validation_split
// does (before any shuffling): the rows from validation_split_at on validate.
std::pair<Dataset, Dataset> split_validation(const Dataset& data, double fraction);

}  // namespace fitbench
