// A folder of images as keras.utils.image_dataset_from_directory reads one: one subfolder per
// class, the classes in alphanumeric order, the files indexed as Keras's index_directory does,
// shuffled with NumPy's RandomState(seed).shuffle, split by validation_split and subset, each
// image decoded, converted to the color mode and resized with tf.image.resize's bilinear rule.
// Decoding is not done here: core has no image library. fitbench_imageio (QImageReader) installs
// a decoder at program start with set_image_decoder; without one, loading a folder says so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/data/data_spec.h"
#include "core/data/dataset.h"

namespace fitbench {

// One decoded picture: rows of `width` pixels of `channels` 8-bit values (1 gray, 3 RGB, 4 RGBA),
// top row first.
struct DecodedImage {
  int64_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// Decodes the file; on failure returns an image with no pixels and sets `error` to a short
// reason ("not an image file", "truncated PNG"). Called from several threads at once.
using ImageDecoder =
    std::function<DecodedImage(const std::filesystem::path& file, std::string& error)>;

// Installs the decoder; call once at program start, before any folder is read.
void set_image_decoder(ImageDecoder decoder);
bool has_image_decoder();

// The files of a folder of classes, in Keras's order before shuffling: the class subfolders
// (not hidden) sorted by name, within each every file whose name ends in .bmp, .gif, .jpeg,
// .jpg or .png (any case) of the subfolder's tree, sorted by folder then name.
struct ImageFolderIndex {
  std::vector<std::string> class_names;
  std::vector<std::filesystem::path> files;
  std::vector<int> labels;  // per file: its class's index
};
// Throws InputError(place, ...) when the folder is missing or has no class subfolder.
ImageFolderIndex index_image_folder(const std::filesystem::path& dir, const std::string& place);

// The order NumPy's np.random.RandomState(seed).shuffle leaves 0..n-1 in (Mersenne Twister,
// Fisher-Yates from the end with NumPy's masked rejection draws).
std::vector<int64_t> numpy_shuffled_order(int64_t n, uint32_t seed);

// tf.image.resize(image, (out_h, out_w), "bilinear") without antialiasing: half-pixel centers,
// edges clamped, float results (0 to 255, not rounded), channels kept. Writes out_h * out_w *
// channels values to `out`.
void resize_bilinear(const DecodedImage& image, int64_t out_h, int64_t out_w, float* out);

// Converts a decoded image to 1, 3 or 4 channels as tf.io.decode_image(channels=...) does: gray
// from color with the weights libjpeg and libpng use (0.299, 0.587, 0.114), rounded; color
// from gray by repeating it; alpha 255 when the file has none, dropped when not asked for.
DecodedImage with_channels(const DecodedImage& image, int64_t channels);

// The data of spec.directory (relative paths resolved against base_dir first by the caller),
// with sample_shape (height, width, channels), labels as label_mode says and class_names set;
// the validation subset as validation data with subset "both". Throws InputError("data.<field>",
// ...) for impossible settings, naming the files that cannot be read unless
// spec.skip_unreadable (then they are left out and listed in the notes).
Dataset load_image_folder(const DataSpec& spec);

}  // namespace fitbench
