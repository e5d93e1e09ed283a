// Fashion-MNIST from its four IDX files (core/data/idx_file.h), as
// keras.datasets.fashion_mnist.load_data() returns it: each 28 x 28 image a row of 784 values.

#include <filesystem>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/data/idx_file.h"

namespace fitbench {
namespace {

constexpr int64_t kSide = kFashionMnistSide;
constexpr int64_t kClasses = 10;

struct Part {
  Matrix x, y;
};

// One half (train or t10k) of the data set: `limit` first images (0: all).
Part read_part(const std::filesystem::path& dir, const std::string& prefix, int64_t limit,
               bool scale) {
  const std::filesystem::path images_file = dir / (prefix + "-images-idx3-ubyte.gz");
  const std::filesystem::path labels_file = dir / (prefix + "-labels-idx1-ubyte.gz");
  const IdxArray images = read_idx_file(images_file, images_file.string());
  const IdxArray labels = read_idx_file(labels_file, labels_file.string());
  if (images.dims.size() != 3 || images.dims[1] != kSide || images.dims[2] != kSide)
    throw InputError(
        images_file.string(), "holds an array of " + [&] {
          std::string s;
          for (size_t i = 0; i < images.dims.size(); ++i)
            s += (i ? " x " : "") + std::to_string(images.dims[i]);
          return s;
        }() + " bytes, not Fashion-MNIST's 28 x 28 images (N x 28 x 28)");
  if (labels.dims.size() != 1)
    throw InputError(labels_file.string(),
                     "holds a " + std::to_string(labels.dims.size()) +
                         "-dimensional array, not Fashion-MNIST's list of labels");
  if (labels.items() != images.items())
    throw InputError(labels_file.string(), "holds " + counted(labels.items(), "label") + " but " +
                                               images_file.filename().string() + " holds " +
                                               counted(images.items(), "image") +
                                               "; the two files must be of one set");
  const int64_t n = limit > 0 ? std::min(limit, images.items()) : images.items();
  const int64_t pixels = kSide * kSide;
  Part part;
  part.x.resize(n, pixels);
  part.y.resize(n, 1);
  // NumPy's x.astype("float32") / 255.0: a float32 division, rounded once.
  const float divisor = scale ? 255.0f : 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t label = labels.values[static_cast<size_t>(i)];
    if (label >= kClasses)
      throw InputError(labels_file.string(),
                       "label " + std::to_string(i) + " (byte " + std::to_string(8 + i) + ") is " +
                           std::to_string(label) + "; Fashion-MNIST's classes are 0 to 9");
    part.y(i, 0) = static_cast<float>(label);
    const uint8_t* src = images.values.data() + i * pixels;
    for (int64_t j = 0; j < pixels; ++j) part.x(i, j) = static_cast<float>(src[j]) / divisor;
  }
  return part;
}

}  // namespace

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

Dataset load_fashion_mnist(const DataSpec& spec) {
  if (spec.subset < 0)
    throw InputError("data.subset", "must be 0 (every image) or a positive number of images, got " +
                                        std::to_string(spec.subset));
  const std::filesystem::path dir = spec.dataset_dir.empty() ? kFashionMnistDir : spec.dataset_dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    if (spec.dataset_dir.empty())
      throw InputError("data.dataset",
                       "Fashion-MNIST is read from Debian's dataset-fashion-mnist package, which "
                       "is not installed (" +
                           dir.string() +
                           " does not exist): apt-get install dataset-fashion-mnist, or set "
                           "data.path to a folder holding its four IDX files");
    throw InputError("data.path", dir.string() + " is not a folder");
  }
  Part train = read_part(dir, "train", spec.subset, spec.scale);
  Dataset data;
  data.x = std::move(train.x);
  data.y = std::move(train.y);
  for (int64_t j = 0; j < kSide * kSide; ++j)
    data.feature_names.push_back("pixel" + std::to_string(j));
  data.target_names.push_back("label");
  data.sample_shape = {kSide, kSide};
  data.class_names = fashion_mnist_classes();
  if (spec.validation_test) {
    Part test = read_part(dir, "t10k", 0, spec.scale);
    data.validation_x = std::move(test.x);
    data.validation_y = std::move(test.y);
  }
  return data;
}

}  // namespace fitbench
