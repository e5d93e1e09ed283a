// generate_dataset: the built-in data sets, each drawn from one generator seeded with spec.seed
// alone (fitbench::Rng, or NumPy's generators for "seed" and "seed_legacy"), so a seed gives the
// same data on every platform.
//
// TensorFlow Playground's sets (tensorflow/playground src/dataset.ts) are reproduced with their
// radius, noise and label rules; labels -1/+1 become 0/1 and they always have 2 features
// (spec.features is ignored). The Playground's noise slider runs 0..50 (%); fitbench's `noise` is
// that number divided by 100, so 0 to 0.5 (a larger value is an error):
//   circle:   label 1 = inside radius 2.5 (points at radius [0, 2.5)), 0 = radius [3.5, 5); the
//             noise, uniform in [-5, 5] * noise per axis, moves only the point the label is read
//             at, not the point itself.
//   xor:      x, y uniform in [-5, 5], pushed 0.3 away from the axes; label 1 where x * y >= 0,
//             read at the point plus the same kind of noise as circle.
//   gaussian: two Gaussians at (2, 2) (label 1) and (-2, -2) (label 0) of variance
//             0.5 + 7 * noise (the Playground's linear map of noise 0..0.5 to variance 0.5..4).
//   spiral:   two arms of radius i / n * 5 and angle 1.75 * 2 pi * i / n (the second turned by pi,
//             label 0); each coordinate moves by uniform [-1, 1] * noise.
//   plane:    regression: x, y uniform in [-6, 6], target (x + y) / 10 read at the point plus
//             uniform [-6, 6] * noise per axis.
// The Playground shuffles its points before splitting them; so does fitbench.
// Other sets:
//   seed:  x ~ N(0, 1) of shape (samples, features) drawn row by row as NumPy's
//          np.random.default_rng(seed).normal(size=(samples, features)), label 1 where x0 > 0;
//          noise is ignored.
//   seed_legacy: the same from NumPy's legacy global generator, np.random.seed(seed);
//          np.random.normal(size=(samples, features)) (seed taken modulo 2^32).
//   moons: sklearn.datasets.make_moons: samples / 2 (rounded down) points on the upper unit half
//          circle (label 0), the rest on the lower one shifted by (1, 0.5) (label 1), shuffled,
//          then N(0, noise) added to every coordinate.
//   blobs: sklearn.datasets.make_blobs: `classes` centres uniform in [-10, 10]^features, samples
//          split as evenly as possible (the first classes get one more), each point its centre
//          plus N(0, (1 + noise)^2) per coordinate (cluster std 1.0 + noise), shuffled; y is the
//          class index, target "class".
//   sine:  regression: x uniform in [-3, 3], y = sin(x) + N(0, noise).
// Binary labels, class indices and regression targets are (samples, 1); features are "x0", "x1"...

#include <charconv>
#include <cmath>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/data/dataset.h"
#include "core/python/numpy_generator.h"
#include "core/python/numpy_random.h"
#include "core/python/random.h"

namespace fitbench {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr int64_t kMaxSamples = 10'000'000;
constexpr int64_t kMaxValues = 100'000'000;  // samples * features: 400 MB of floats

Dataset make_dataset(Index samples, Index features, const char* target_name) {
  Dataset data;
  data.x = Matrix::Zero(samples, features);
  data.y = Matrix::Zero(samples, 1);
  for (Index j = 0; j < features; ++j) {
    std::string name = "x";
    name += std::to_string(j);
    data.feature_names.push_back(name);
  }
  data.target_names.push_back(target_name);
  return data;
}

// Fisher-Yates over the rows, x and y together.
void shuffle_rows(Dataset& data, Rng& rng) {
  std::vector<Index> order(static_cast<size_t>(data.size()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Index>(i);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  data.x = Matrix(data.x(order, Eigen::all));
  data.y = Matrix(data.y(order, Eigen::all));
}

void set_row(Dataset& data, Index row, double x0, double x1, double label) {
  data.x(row, 0) = static_cast<float>(x0);
  data.x(row, 1) = static_cast<float>(x1);
  data.y(row, 0) = static_cast<float>(label);
}

// x ~ N(0, 1) in float32, row by row from `normal`, labelled x[:, 0] > 0.
template <typename Normal>
Dataset normal_set(const DataSpec& s, Normal&& normal) {
  Dataset data = make_dataset(s.samples, s.features, "y");
  for (Index i = 0; i < data.size(); ++i) {
    for (Index j = 0; j < s.features; ++j) data.x(i, j) = static_cast<float>(normal());
    data.y(i, 0) = data.x(i, 0) > 0.0f ? 1.0f : 0.0f;
  }
  return data;
}

// The seed script's data: rng = np.random.default_rng(seed); x = rng.normal(size=(samples,
// features)).astype("float32"); y = x[:, 0] > 0. NumPy's Generator is reproduced bit for bit.
Dataset seed_set(const DataSpec& s, Rng&) {
  NumpyGenerator np(s.seed);
  return normal_set(s, [&] { return np.normal(0.0, 1.0); });
}

// The same from the legacy global generator: np.random.seed(seed); np.random.normal(...).
Dataset seed_legacy_set(const DataSpec& s, Rng&) {
  NumpyLegacyRandom np(static_cast<uint32_t>(s.seed));
  return normal_set(s, [&] { return np.standard_normal(); });
}

Dataset circle_set(const DataSpec& s, Rng& rng) {
  const double radius = 5.0;
  Dataset data = make_dataset(s.samples, 2, "y");
  const Index positives = s.samples - s.samples / 2;
  for (Index i = 0; i < data.size(); ++i) {
    const bool inside = i < positives;
    const double r = inside ? rng.uniform(0.0, radius * 0.5) : rng.uniform(radius * 0.7, radius);
    const double angle = rng.uniform(0.0, 2.0 * kPi);
    const double x = r * std::sin(angle);
    const double y = r * std::cos(angle);
    const double noise_x = rng.uniform(-radius, radius) * s.noise;
    const double noise_y = rng.uniform(-radius, radius) * s.noise;
    const bool label = std::hypot(x + noise_x, y + noise_y) < radius * 0.5;
    set_row(data, i, x, y, label ? 1.0 : 0.0);
  }
  shuffle_rows(data, rng);
  return data;
}

Dataset xor_set(const DataSpec& s, Rng& rng) {
  const double padding = 0.3;
  Dataset data = make_dataset(s.samples, 2, "y");
  for (Index i = 0; i < data.size(); ++i) {
    double x = rng.uniform(-5.0, 5.0);
    x += x > 0 ? padding : -padding;
    double y = rng.uniform(-5.0, 5.0);
    y += y > 0 ? padding : -padding;
    const double noise_x = rng.uniform(-5.0, 5.0) * s.noise;
    const double noise_y = rng.uniform(-5.0, 5.0) * s.noise;
    set_row(data, i, x, y, (x + noise_x) * (y + noise_y) >= 0.0 ? 1.0 : 0.0);
  }
  shuffle_rows(data, rng);
  return data;
}

Dataset gaussian_set(const DataSpec& s, Rng& rng) {
  const double stddev = std::sqrt(0.5 + 7.0 * s.noise);
  Dataset data = make_dataset(s.samples, 2, "y");
  const Index positives = s.samples - s.samples / 2;
  for (Index i = 0; i < data.size(); ++i) {
    const double centre = i < positives ? 2.0 : -2.0;
    const double x = centre + stddev * rng.normal();
    const double y = centre + stddev * rng.normal();
    set_row(data, i, x, y, i < positives ? 1.0 : 0.0);
  }
  shuffle_rows(data, rng);
  return data;
}

Dataset spiral_set(const DataSpec& s, Rng& rng) {
  Dataset data = make_dataset(s.samples, 2, "y");
  const Index counts[2] = {s.samples - s.samples / 2, s.samples / 2};
  Index row = 0;
  for (int arm = 0; arm < 2; ++arm) {
    const double n = static_cast<double>(counts[arm]);
    const double delta = arm == 0 ? 0.0 : kPi;
    for (Index i = 0; i < counts[arm]; ++i) {
      const double r = static_cast<double>(i) / n * 5.0;
      const double t = 1.75 * static_cast<double>(i) / n * 2.0 * kPi + delta;
      const double x = r * std::sin(t) + rng.uniform(-1.0, 1.0) * s.noise;
      const double y = r * std::cos(t) + rng.uniform(-1.0, 1.0) * s.noise;
      set_row(data, row++, x, y, arm == 0 ? 1.0 : 0.0);
    }
  }
  shuffle_rows(data, rng);
  return data;
}

Dataset plane_set(const DataSpec& s, Rng& rng) {
  const double radius = 6.0;
  Dataset data = make_dataset(s.samples, 2, "y");
  for (Index i = 0; i < data.size(); ++i) {
    const double x = rng.uniform(-radius, radius);
    const double y = rng.uniform(-radius, radius);
    const double noise_x = rng.uniform(-radius, radius) * s.noise;
    const double noise_y = rng.uniform(-radius, radius) * s.noise;
    // The Playground's linear map of x + y from [-10, 10] to [-1, 1].
    set_row(data, i, x, y, (x + noise_x + y + noise_y) / 10.0);
  }
  shuffle_rows(data, rng);
  return data;
}

Dataset moons_set(const DataSpec& s, Rng& rng) {
  Dataset data = make_dataset(s.samples, 2, "y");
  const Index outer = s.samples / 2;
  const Index inner = s.samples - outer;
  // np.linspace(0, pi, count): i * pi / (count - 1), a single point at 0.
  const auto angle = [](Index i, Index count) {
    return count > 1 ? kPi * static_cast<double>(i) / static_cast<double>(count - 1) : 0.0;
  };
  for (Index i = 0; i < outer; ++i) {
    const double a = angle(i, outer);
    set_row(data, i, std::cos(a), std::sin(a), 0.0);
  }
  for (Index i = 0; i < inner; ++i) {
    const double a = angle(i, inner);
    set_row(data, outer + i, 1.0 - std::cos(a), 1.0 - std::sin(a) - 0.5, 1.0);
  }
  shuffle_rows(data, rng);
  if (s.noise > 0.0) {
    for (Index i = 0; i < data.size(); ++i) {
      for (Index j = 0; j < 2; ++j) {
        data.x(i, j) = static_cast<float>(data.x(i, j) + s.noise * rng.normal());
      }
    }
  }
  return data;
}

Dataset blobs_set(const DataSpec& s, Rng& rng) {
  Dataset data = make_dataset(s.samples, s.features, "class");
  std::vector<double> centres(static_cast<size_t>(s.classes * s.features));
  for (double& c : centres) c = rng.uniform(-10.0, 10.0);
  const double stddev = 1.0 + s.noise;
  Index row = 0;
  for (int64_t k = 0; k < s.classes; ++k) {
    const Index count = s.samples / s.classes + (k < s.samples % s.classes ? 1 : 0);
    for (Index i = 0; i < count; ++i, ++row) {
      for (Index j = 0; j < s.features; ++j) {
        const double centre = centres[static_cast<size_t>(k * s.features + j)];
        data.x(row, j) = static_cast<float>(centre + stddev * rng.normal());
      }
      data.y(row, 0) = static_cast<float>(k);
    }
  }
  shuffle_rows(data, rng);
  return data;
}

Dataset sine_set(const DataSpec& s, Rng& rng) {
  Dataset data = make_dataset(s.samples, 1, "y");
  for (Index i = 0; i < data.size(); ++i) {
    const double x = rng.uniform(-3.0, 3.0);
    data.x(i, 0) = static_cast<float>(x);
    data.y(i, 0) = static_cast<float>(std::sin(x) + s.noise * rng.normal());
  }
  return data;
}

struct Generator {
  Dataset (*make)(const DataSpec&, Rng&);
  bool playground;     // noise limited to 0..0.5, 2 features
  bool uses_features;  // spec.features is the number of features
};

const std::map<std::string, Generator>& generators() {
  static const std::map<std::string, Generator> table = {
      {"seed", {seed_set, false, true}},         {"seed_legacy", {seed_legacy_set, false, true}},
      {"circle", {circle_set, true, false}},     {"xor", {xor_set, true, false}},
      {"gaussian", {gaussian_set, true, false}}, {"spiral", {spiral_set, true, false}},
      {"moons", {moons_set, false, false}},      {"blobs", {blobs_set, false, true}},
      {"plane", {plane_set, true, false}},       {"sine", {sine_set, false, false}},
  };
  return table;
}

void check_spec(const DataSpec& s, const Generator& g) {
  if (s.samples < 1) {
    throw InputError("data.samples",
                     "must be a positive integer, got " + std::to_string(s.samples));
  }
  if (s.samples > kMaxSamples) {
    throw InputError("data.samples", "must be at most " + std::to_string(kMaxSamples) + ", got " +
                                         std::to_string(s.samples));
  }
  if (!std::isfinite(s.noise) || s.noise < 0.0) {
    throw InputError("data.noise", "must be a non-negative number, got " + format_number(s.noise));
  }
  if (g.playground && s.noise > 0.5) {
    throw InputError("data.noise",
                     "must be at most 0.5 for the Playground's sets (its noise percentage / 100), "
                     "got " +
                         format_number(s.noise));
  }
  if (g.uses_features) {
    if (s.features < 1) {
      throw InputError("data.features",
                       "must be a positive integer, got " + std::to_string(s.features));
    }
    if (s.features > kMaxValues / s.samples) {
      throw InputError("data.features", "must be at most " +
                                            std::to_string(kMaxValues / s.samples) + " with " +
                                            std::to_string(s.samples) + " samples, got " +
                                            std::to_string(s.features));
    }
  }
  if (s.generator == "blobs") {
    if (s.classes < 2) {
      throw InputError("data.classes",
                       "must be an integer of at least 2, got " + std::to_string(s.classes));
    }
    if (s.classes > s.samples) {
      throw InputError("data.classes", "must be at most data.samples (" +
                                           std::to_string(s.samples) + "), got " +
                                           std::to_string(s.classes));
    }
  }
}

}  // namespace

Dataset generate_dataset(const DataSpec& spec) {
  const auto& table = generators();
  const auto it = table.find(spec.generator);
  if (it == table.end()) {
    std::string known;
    for (const char* name : {"seed", "seed_legacy", "circle", "xor", "gaussian", "spiral", "moons",
                             "blobs", "plane", "sine"}) {
      known += known.empty() ? name : std::string(", ") + name;
    }
    throw InputError("data.generator",
                     "unknown generator \"" + spec.generator + "\"; the known ones are: " + known);
  }
  check_spec(spec, it->second);
  Rng rng(spec.seed);
  return it->second.make(spec, rng);
}

}  // namespace fitbench
