// The data section of an exported Keras script (keras_script.h): NumPy and plain Python that give
// the same x and y as fitbench's generators (core/data/generators.cpp) and CSV reader
// (core/data/csv_dataset.cpp), standardized as prepare_run does. Each generator but "seed" draws
// from fitbench's own Rng (core/python/random.cpp: splitmix64-seeded xoshiro256**, Box-Muller),
// so the script carries that generator in Python; the arithmetic is written in the same order as
// the C++ so the doubles agree and their float32 roundings are equal.

#include <map>
#include <string>

#include "core/nn/layer.h"
#include "core/run/keras_script_parts.h"

namespace fitbench::keras_script_parts {
namespace {

// fitbench::Rng and the row shuffle the Playground sets use (generators.cpp: shuffle_rows).
constexpr const char* kRng = R"PY(
_MASK64 = (1 << 64) - 1


def _rotl(value, shift):
    return ((value << shift) | (value >> (64 - shift))) & _MASK64


class FitbenchRng:
    """fitbench's own generator (core/python/random.cpp), reproduced so the data is the same:
    xoshiro256** seeded by splitmix64, uniform doubles of 53 bits, Box-Muller normals."""

    def __init__(self, seed):
        x = seed & _MASK64
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & _MASK64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
            self.s.append(z ^ (z >> 31))
        self.spare = None

    def next_u64(self):
        s = self.s
        result = (_rotl((s[1] * 5) & _MASK64, 7) * 9) & _MASK64
        t = (s[1] << 17) & _MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform01(self):
        return (self.next_u64() >> 11) * 2.0**-53

    def uniform(self, low, high):
        return low + (high - low) * self.uniform01()

    def normal(self):
        if self.spare is not None:
            value, self.spare = self.spare, None
            return value
        u1 = self.uniform01()
        while u1 <= 0.0:
            u1 = self.uniform01()
        u2 = self.uniform01()
        r = math.sqrt(-2.0 * math.log(u1))
        theta = 2.0 * math.pi * u2
        self.spare = r * math.sin(theta)
        return r * math.cos(theta)

    def below(self, n):
        limit = _MASK64 - _MASK64 % n
        while True:
            value = self.next_u64()
            if value < limit:
                return value % n


def shuffle_rows(x, y, rng):
    order = list(range(len(x)))
    for i in range(len(order), 1, -1):
        j = rng.below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    return x[order], y[order]


def empty_set(samples, features):
    return np.zeros((samples, features), dtype="float32"), np.zeros((samples, 1), dtype="float32")
)PY";

// One function per generator, named make_<generator>(spec fields..., rng).
const std::map<std::string, const char*>& generator_code() {
  static const std::map<std::string, const char*> code = {
      {"circle", R"PY(
def make_circle(samples, noise, rng):
    radius = 5.0
    x, y = empty_set(samples, 2)
    positives = samples - samples // 2
    for i in range(samples):
        if i < positives:
            r = rng.uniform(0.0, radius * 0.5)
        else:
            r = rng.uniform(radius * 0.7, radius)
        angle = rng.uniform(0.0, 2.0 * math.pi)
        px = r * math.sin(angle)
        py = r * math.cos(angle)
        noise_x = rng.uniform(-radius, radius) * noise
        noise_y = rng.uniform(-radius, radius) * noise
        x[i] = (px, py)
        y[i, 0] = 1.0 if math.hypot(px + noise_x, py + noise_y) < radius * 0.5 else 0.0
    return shuffle_rows(x, y, rng)
)PY"},
      {"xor", R"PY(
def make_xor(samples, noise, rng):
    padding = 0.3
    x, y = empty_set(samples, 2)
    for i in range(samples):
        px = rng.uniform(-5.0, 5.0)
        px += padding if px > 0 else -padding
        py = rng.uniform(-5.0, 5.0)
        py += padding if py > 0 else -padding
        noise_x = rng.uniform(-5.0, 5.0) * noise
        noise_y = rng.uniform(-5.0, 5.0) * noise
        x[i] = (px, py)
        y[i, 0] = 1.0 if (px + noise_x) * (py + noise_y) >= 0.0 else 0.0
    return shuffle_rows(x, y, rng)
)PY"},
      {"gaussian", R"PY(
def make_gaussian(samples, noise, rng):
    stddev = math.sqrt(0.5 + 7.0 * noise)
    x, y = empty_set(samples, 2)
    positives = samples - samples // 2
    for i in range(samples):
        centre = 2.0 if i < positives else -2.0
        px = centre + stddev * rng.normal()
        py = centre + stddev * rng.normal()
        x[i] = (px, py)
        y[i, 0] = 1.0 if i < positives else 0.0
    return shuffle_rows(x, y, rng)
)PY"},
      {"spiral", R"PY(
def make_spiral(samples, noise, rng):
    x, y = empty_set(samples, 2)
    row = 0
    for arm, count in enumerate((samples - samples // 2, samples // 2)):
        delta = 0.0 if arm == 0 else math.pi
        for i in range(count):
            r = i / count * 5.0
            t = 1.75 * i / count * 2.0 * math.pi + delta
            px = r * math.sin(t) + rng.uniform(-1.0, 1.0) * noise
            py = r * math.cos(t) + rng.uniform(-1.0, 1.0) * noise
            x[row] = (px, py)
            y[row, 0] = 1.0 if arm == 0 else 0.0
            row += 1
    return shuffle_rows(x, y, rng)
)PY"},
      {"plane", R"PY(
def make_plane(samples, noise, rng):
    radius = 6.0
    x, y = empty_set(samples, 2)
    for i in range(samples):
        px = rng.uniform(-radius, radius)
        py = rng.uniform(-radius, radius)
        noise_x = rng.uniform(-radius, radius) * noise
        noise_y = rng.uniform(-radius, radius) * noise
        x[i] = (px, py)
        y[i, 0] = (px + noise_x + py + noise_y) / 10.0
    return shuffle_rows(x, y, rng)
)PY"},
      {"moons", R"PY(
def make_moons(samples, noise, rng):
    x, y = empty_set(samples, 2)
    outer = samples // 2
    inner = samples - outer

    def angle(i, count):
        return math.pi * i / (count - 1) if count > 1 else 0.0

    for i in range(outer):
        a = angle(i, outer)
        x[i] = (math.cos(a), math.sin(a))
    for i in range(inner):
        a = angle(i, inner)
        x[outer + i] = (1.0 - math.cos(a), 1.0 - math.sin(a) - 0.5)
        y[outer + i, 0] = 1.0
    x, y = shuffle_rows(x, y, rng)
    if noise > 0.0:
        for i in range(samples):
            for j in range(2):
                x[i, j] = float(x[i, j]) + noise * rng.normal()
    return x, y
)PY"},
      {"blobs", R"PY(
def make_blobs(samples, features, classes, noise, rng):
    x, y = empty_set(samples, features)
    centres = [rng.uniform(-10.0, 10.0) for _ in range(classes * features)]
    stddev = 1.0 + noise
    row = 0
    for k in range(classes):
        count = samples // classes + (1 if k < samples % classes else 0)
        for _ in range(count):
            for j in range(features):
                x[row, j] = centres[k * features + j] + stddev * rng.normal()
            y[row, 0] = k
            row += 1
    return shuffle_rows(x, y, rng)
)PY"},
      {"sine", R"PY(
def make_sine(samples, noise, rng):
    x, y = empty_set(samples, 1)
    for i in range(samples):
        px = rng.uniform(-3.0, 3.0)
        x[i, 0] = px
        y[i, 0] = math.sin(px) + noise * rng.normal()
    return x, y
)PY"},
  };
  return code;
}

std::string generator_section(const DataSpec& d, std::vector<std::string>& imports) {
  std::string out;
  const std::string seed = py_int(static_cast<int64_t>(d.seed));
  const std::string samples = py_int(d.samples);
  const std::string features = py_int(d.features);
  if (d.generator == "seed" || d.generator == "seed_legacy") {
    const bool legacy = d.generator == "seed_legacy";
    out += "# The data: fitbench's \"" + d.generator + "\" generator (" + samples + " samples of " +
           features + " Gaussian features, seed " + seed +
           "),\n# labelled 1 where the first feature is positive.\n";
    if (legacy) {
      out += "np.random.seed(" + seed + ")\n";
      out += "x = np.random.normal(size=(" + samples + ", " + features + ")).astype(\"float32\")\n";
    } else {
      out += "x = np.random.default_rng(" + seed + ").normal(size=(" + samples + ", " + features +
             ")).astype(\"float32\")\n";
    }
    out += "y = (x[:, 0] > 0).astype(\"float32\").reshape(-1, 1)\n";
    return out;
  }
  const auto it = generator_code().find(d.generator);
  if (it == generator_code().end()) {
    // plan_run refused an unknown generator before a script could be asked for.
    return "raise SystemExit(" + py_str("fitbench has no generator named " + d.generator) + ")\n";
  }
  imports.push_back("math");
  out +=
      "# The data: fitbench's \"" + d.generator + "\" generator (seed " + seed +
      "). It draws from fitbench's own random\n"
      "# generator, reproduced here in plain Python, so x and y are fitbench's float32 values.\n";
  out += kRng;
  out += it->second;
  out += "\n\n";
  const std::string noise = py_float(d.noise);
  const std::string rng = "FitbenchRng(" + seed + ")";
  if (d.generator == "blobs") {
    out += "x, y = make_blobs(" + samples + ", " + features + ", " + py_int(d.classes) + ", " +
           noise + ", " + rng + ")\n";
  } else {
    out += "x, y = make_" + d.generator + "(" + samples + ", " + noise + ", " + rng + ")\n";
  }
  return out;
}

constexpr const char* kCsvReader = R"PY(
def read_csv(path, targets, features, delimiter):
    """The CSV file as fitbench reads it: the first row that is not blank is the header (names
    trimmed of spaces and tabs, an empty one named "Unnamed: <index>" as pandas does), blank rows
    skipped, every used cell a number."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [
            row
            for row in csv.reader(f, delimiter=delimiter)
            if row and not (len(row) == 1 and row[0].strip(" \t\r") == "")
        ]
    header = [name.strip(" \t") or f"Unnamed: {i}" for i, name in enumerate(rows[0])]
    if not features:
        features = [name for name in header if name not in targets]
    columns = [header.index(name) for name in features], [header.index(name) for name in targets]
    body = rows[1:]
    x = np.array([[float(row[c]) for c in columns[0]] for row in body], dtype="float32")
    y = np.array([[float(row[c]) for c in columns[1]] for row in body], dtype="float32")
    return x.reshape(len(body), len(columns[0])), y.reshape(len(body), len(columns[1]))
)PY";

std::string str_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + py_str(names[i]);
  return out + "]";
}

std::string csv_section(const DataSpec& d, std::vector<std::string>& imports) {
  imports.push_back("csv");
  std::string out =
      "# The data: the CSV file fitbench read (its path as fitbench resolved it), columns by "
      "name.\n";
  out += kCsvReader;
  out += "\n\nx, y = read_csv(\n    " + py_str(d.csv) + ",\n    targets=" + str_list(d.target) +
         ",\n    features=" + str_list(d.features_columns) +
         ",\n    delimiter=" + py_str(std::string(1, d.delimiter)) + ",\n)\n";
  return out;
}

constexpr const char* kIdxReader = R"(def read_idx(path):
    """An IDX file of unsigned bytes (gzip-compressed), as a NumPy array of its shape."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    rank = data[3]
    shape = struct.unpack(">" + "I" * rank, data[4 : 4 + 4 * rank])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(shape)
)";

std::string dataset_section(const DataSpec& d, std::vector<std::string>& imports) {
  imports.push_back("gzip");
  imports.push_back("struct");
  const std::string folder = d.dataset_dir.empty() ? kFashionMnistDir : d.dataset_dir;
  std::string out =
      "# The data: Fashion-MNIST from the IDX files fitbench read, the arrays\n"
      "# keras.datasets.fashion_mnist.load_data() returns (28 x 28 images)" +
      std::string(d.scale ? ", scaled to [0, 1] in float32"
                          : ", in float32 (not scaled: 0 to 255)") +
      ".\n";
  out += kIdxReader;
  const std::string take = d.subset > 0 ? "[:" + py_int(d.subset) + "]" : "";
  const std::string scale = d.scale ? " / 255.0" : "";
  out += "\n\nfolder = " + py_str(folder) + "\n";
  out += "x = read_idx(folder + \"/train-images-idx3-ubyte.gz\")" + take + ".astype(\"float32\")" +
         scale + "\n";
  out += "y = read_idx(folder + \"/train-labels-idx1-ubyte.gz\")" + take + "\n";
  if (d.validation_test) {
    out +=
        "x_test = read_idx(folder + \"/t10k-images-idx3-ubyte.gz\")"
        ".astype(\"float32\")" +
        scale + "\n";
    out += "y_test = read_idx(folder + \"/t10k-labels-idx1-ubyte.gz\")\n";
  }
  return out;
}

// A folder of images: image_dataset_from_directory with the experiment's settings, its datasets
// gathered into arrays (fitbench holds the images in memory).
std::string folder_section(const DataSpec& d) {
  const bool both = d.has_own_validation();
  std::string out =
      "# The data: the folder of images as keras.utils.image_dataset_from_directory reads it\n"
      "# (classes from the subfolders in alphanumeric order, the files shuffled with NumPy's\n"
      "# RandomState(seed) before the split), gathered into arrays as fitbench holds them. With\n"
      "# shuffle=True, tf.data also reorders the training images within a buffer of 1,024, so\n"
      "# the arrays hold the same images and labels as fitbench's in another order.\n";
  out += std::string(both ? "train_ds, val_ds" : "train_ds") +
         " = keras.utils.image_dataset_from_directory(\n    " + py_str(d.directory) +
         ",\n    labels=\"inferred\",\n    label_mode=" + py_str(d.label_mode) +
         ",\n    color_mode=" + py_str(d.color_mode) + ",\n    batch_size=None,\n    image_size=" +
         py_int_tuple({d.image_height, d.image_width}) +
         ",\n    shuffle=" + py_bool(d.image_shuffle) + ",\n    seed=" + std::to_string(d.seed) +
         ",\n";
  if (d.image_validation_split > 0.0)
    out += "    validation_split=" + py_float(d.image_validation_split) +
           ",\n    subset=" + py_str(d.image_subset) + ",\n";
  out += ")\n";
  out +=
      "x = np.stack([image for image, _ in train_ds.as_numpy_iterator()])\n"
      "y = np.stack([label for _, label in train_ds.as_numpy_iterator()])\n";
  if (both)
    out +=
        "# The validation subset validates, as x_test and y_test.\n"
        "x_test = np.stack([image for image, _ in val_ds.as_numpy_iterator()])\n"
        "y_test = np.stack([label for _, label in val_ds.as_numpy_iterator()])\n";
  return out;
}

std::string standardize_section(const RunPlan& plan, std::vector<std::string>& imports) {
  imports.push_back("math");
  const double split = plan.spec.fit.validation_split;
  std::string out =
      "\n# data.standardize: each feature's mean and population standard deviation (ddof 0, as\n"
      "# sklearn's StandardScaler) over the rows fit() trains on, in float64, a deviation below\n"
      "# 10 * machine epsilon taken as 1; then (x - mean) / deviation in float32, as fitbench.\n";
  out += split > 0.0 ? "train_rows = math.floor(len(x) * (1.0 - " + py_float(split) + "))\n"
                     : std::string("train_rows = len(x)\n");
  out +=
      "train_x = x[:train_rows].astype(\"float64\")\n"
      "mean = train_x.mean(axis=0)\n"
      "deviation = np.sqrt(((train_x - mean) ** 2).mean(axis=0))\n"
      "deviation[deviation < 10 * np.finfo(\"float64\").eps] = 1.0\n"
      "x = (x - mean.astype(\"float32\")) / deviation.astype(\"float32\")\n";
  if (plan.spec.data.has_own_validation())
    out += "x_test = (x_test - mean.astype(\"float32\")) / deviation.astype(\"float32\")\n";
  return out;
}

}  // namespace

std::string data_section(const RunPlan& plan, std::vector<std::string>& imports) {
  const DataSpec& d = plan.spec.data;
  std::string out = !d.dataset.empty()     ? dataset_section(d, imports)
                    : !d.directory.empty() ? folder_section(d)
                    : d.csv.empty()        ? generator_section(d, imports)
                                           : csv_section(d, imports);
  if (d.standardize) out += standardize_section(plan, imports);
  // Samples go in the model's input shape: fitbench fills it from each sample's values in
  // row-major order, which is NumPy's reshape.
  const Shape data_shape =
      !plan.data.sample_shape.empty() ? plan.data.sample_shape : Shape{plan.data.x.cols()};
  const Shape& model_shape = plan.model->network().input_shape();
  if (model_shape != data_shape) {
    Shape batch = {-1};
    batch.insert(batch.end(), model_shape.begin(), model_shape.end());
    const std::string to = py_int_tuple(batch);
    out += "\n# The model's input has shape " + batch_shape_text(model_shape) +
           ": each sample's values in that shape, row by row.\n";
    out += "x = x.reshape(" + to + ")\n";
    if (d.has_own_validation()) out += "x_test = x_test.reshape(" + to + ")\n";
  }
  return out;
}

}  // namespace fitbench::keras_script_parts
