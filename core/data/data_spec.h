// Where an experiment's data comes from: a generator with its parameters, or a CSV file.
// Value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fitbench {

struct DataSpec {
  // Generator: "seed", "seed_legacy", "circle", "xor", "gaussian", "spiral", "moons", "blobs",
  // "plane", "sine".
  // Empty when `csv` is set.
  std::string generator = "seed";
  int64_t samples = 128;
  double noise = 0.0;    // the Playground sets: its noise slider / 100 (0 to 0.5)
  uint64_t seed = 7;     // the generator's own seed
  int64_t features = 4;  // "seed", "seed_legacy", "blobs" (the Playground sets, "plane": 2)
  int64_t classes = 3;   // "blobs"

  // CSV: path (relative to the experiment file, resolved by core/io), target column(s), optional
  // feature columns (empty: every column that is not a target), delimiter.
  std::string csv;
  std::vector<std::string> target;
  std::vector<std::string> features_columns;
  char delimiter = ',';

  // A Keras data set: "fashion_mnist", as keras.datasets.fashion_mnist.load_data() gives it,
  // read from the IDX files in `dataset_dir` (empty: Debian's dataset-fashion-mnist package,
  // /usr/share/datasets/fashion-mnist). Empty otherwise (then `generator` is empty too).
  std::string dataset;
  std::string dataset_dir;
  int64_t subset = 0;            // the first `subset` training images (0: all of them)
  bool scale = true;             // pixel values divided by 255, to [0, 1], as Keras's tutorial
  bool validation_test = false;  // validation_data "test": fit() validates on the test images

  // A folder of images, as keras.utils.image_dataset_from_directory reads one
  // (core/data/image_folder.h): `directory` holds one subfolder per class (relative to the
  // experiment file, resolved by core/io). Empty otherwise (then `generator` is empty too).
  // Shuffling the files uses `seed` above.
  std::string directory;
  int64_t image_height = 256, image_width = 256;  // image_size, Keras's default (256, 256)
  std::string color_mode = "rgb";                 // "grayscale", "rgb" or "rgba"
  std::string label_mode = "int";                 // "int", "categorical" or "binary"
  double image_validation_split = 0.0;            // validation_split (0: none)
  std::string image_subset = "both";              // "training", "validation" or "both"
  bool image_shuffle = true;                      // shuffle the files before the split
  bool skip_unreadable = false;                   // unreadable "skip" (else "refuse")

  // The data bring their own validation part, which fit() validates on: Fashion-MNIST's test
  // images (validation_data "test"), a folder's validation subset (subset "both").
  bool has_own_validation() const {
    return validation_test ||
           (!directory.empty() && image_validation_split > 0.0 && image_subset == "both");
  }

  // Subtract each feature's mean and divide by its standard deviation (computed on the training
  // part only).
  bool standardize = false;
};

}  // namespace fitbench
