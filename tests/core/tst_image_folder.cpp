// Tests of folders of images (core/data/image_folder.h) as keras.utils.image_dataset_from_directory
// reads them: Keras's file order, NumPy's shuffle, the split and subsets, color modes, label
// modes, tf.image.resize's bilinear rule, unreadable files, the experiment keys, and a run that
// trains on a folder. The images are written by QImage into a temporary folder; the decoder is
// fitbench_imageio's.
#include <sys/resource.h>
#include <unistd.h>

#include <QImage>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "core/base/error.h"
#include "core/base/sanitized.h"
#include "core/data/dataset.h"
#include "core/data/image_folder.h"
#include "core/io/experiment.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"
#include "imageio/qt_image_decoder.h"
#include "tests/core/input_error.h"

using namespace fitbench;
namespace fs = std::filesystem;

namespace {

using test::error_of;

// A 4 x 3 (width x height) picture: gray `value` everywhere, or color (value, 2 value, 3 value).
void write_image(const fs::path& file, int value, bool color = false) {
  fs::create_directories(file.parent_path());
  QImage image(4, 3, color ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
  image.fill(color ? QColor(value, (2 * value) % 256, (3 * value) % 256)
                   : QColor(value, value, value));
  QVERIFY(image.save(QString::fromStdString(file.string())));
}

// classes "ant" (3 images, one in a subfolder), "bee" (2), "cat" (3); a hidden folder, a text file
// and an upper-case extension. Pixel values name the files: 10 * class + number.
struct Folder {
  QTemporaryDir tmp;
  fs::path dir() const { return tmp.path().toStdString(); }
  Folder() {
    write_image(dir() / "bee" / "b1.png", 20);
    write_image(dir() / "bee" / "a0.jpg", 21);  // JPEG: a flat gray survives exactly
    write_image(dir() / "ant" / "z.png", 10);
    write_image(dir() / "ant" / "inner" / "a.png", 11);
    write_image(dir() / "ant" / "B.PNG", 12);
    write_image(dir() / "cat" / "c.bmp", 30);
    write_image(dir() / "cat" / "d.png", 31);
    write_image(dir() / "cat" / "e.png", 32);
    write_image(dir() / ".hidden" / "x.png", 99);
    std::ofstream(dir() / "cat" / "notes.txt") << "not an image";
  }
  DataSpec spec() const {
    DataSpec s;
    s.generator.clear();
    s.directory = dir().string();
    s.image_height = 3;
    s.image_width = 4;
    s.color_mode = "grayscale";
    return s;
  }
};

// The first pixel of each row: which file it came from.
std::vector<int> first_pixels(const Matrix& x) {
  std::vector<int> v;
  for (Index r = 0; r < x.rows(); ++r) v.push_back(static_cast<int>(std::lround(x(r, 0))));
  return v;
}

std::vector<int> labels(const Matrix& y) {
  std::vector<int> v;
  for (Index r = 0; r < y.rows(); ++r) v.push_back(static_cast<int>(y(r, 0)));
  return v;
}

ExperimentSpec parse(const std::string& data, const std::string& fit = "{}") {
  const std::string text = R"({"data": )" + data + R"(, "model": {"class_name": "Sequential",
    "config": {"layers": [{"class_name": "Rescaling", "config": {"scale": 0.00392156862745098}},
                          {"class_name": "Flatten", "config": {}},
                          {"class_name": "Dense", "config": {"units": 3,
                                                              "activation": "softmax"}}]}},
    "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.05}},
                "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
    "fit": )" + fit + "}";
  return parse_experiment(nlohmann::json::parse(text), "e.json", "/base");
}

}  // namespace

class TestImageFolder : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { install_qt_image_decoder(); }

  void indexesInKerasOrder() {
    Folder f;
    const ImageFolderIndex index = index_image_folder(f.dir(), "data.directory");
    QCOMPARE(index.class_names, (std::vector<std::string>{"ant", "bee", "cat"}));
    std::vector<std::string> names;
    for (const fs::path& p : index.files) names.push_back(p.lexically_relative(f.dir()).string());
    // Within a class: the class folder's files by name (upper case first, as Python sorts), then
    // its subfolders'; .txt files and hidden folders are left out.
    QCOMPARE(names,
             (std::vector<std::string>{"ant/B.PNG", "ant/z.png", "ant/inner/a.png", "bee/a0.jpg",
                                       "bee/b1.png", "cat/c.bmp", "cat/d.png", "cat/e.png"}));
    QCOMPARE(index.labels, (std::vector<int>{0, 0, 0, 1, 1, 2, 2, 2}));
  }

  // np.random.RandomState(seed).shuffle(list(range(n))), printed by NumPy 1.24.
  void shufflesAsNumPy() {
    QCOMPARE(numpy_shuffled_order(10, 7), (std::vector<int64_t>{8, 5, 0, 2, 1, 9, 7, 3, 6, 4}));
    QCOMPARE(numpy_shuffled_order(13, 1337),
             (std::vector<int64_t>{5, 3, 1, 0, 4, 6, 11, 2, 10, 9, 12, 8, 7}));
    QCOMPARE(numpy_shuffled_order(5, 0), (std::vector<int64_t>{2, 0, 1, 3, 4}));
    QCOMPARE(numpy_shuffled_order(1, 5), (std::vector<int64_t>{0}));
    QVERIFY(numpy_shuffled_order(0, 5).empty());
  }

  // tf.image.resize's bilinear rule (half-pixel centers, clamped edges), against a NumPy
  // implementation of it, up in one axis and down in the other.
  void resizesBilinear() {
    DecodedImage image;
    image.width = 4;
    image.height = 3;
    image.channels = 1;
    for (int i = 0; i < 12; ++i) image.pixels.push_back(static_cast<uint8_t>((i * 37) % 256));
    const auto check = [&](int64_t h, int64_t w, const std::vector<float>& expected) {
      std::vector<float> out(static_cast<size_t>(h * w));
      resize_bilinear(image, h, w, out.data());
      for (size_t i = 0; i < out.size(); ++i)
        QVERIFY2(std::abs(out[i] - expected[i]) < 1e-3,
                 qPrintable(QStringLiteral("%1 x %2, value %3: %4 != %5")
                                .arg(h)
                                .arg(w)
                                .arg(i)
                                .arg(out[i])
                                .arg(expected[i])));
    };
    check(5, 2, {18.5f, 92.5f, 77.7f, 100.5f, 166.5f, 112.5f, 101.7f, 124.5f, 58.5f, 132.5f});
    check(2, 7,
          {37.0f, 50.2143f, 71.3571f, 92.5f, 109.0714f, 93.6429f, 84.0f, 67.0f, 80.2143f, 101.3571f,
           122.5f, 139.0714f, 123.6429f, 114.0f});
    // The same size: the pixels unchanged.
    check(3, 4, {0, 37, 74, 111, 148, 185, 222, 3, 40, 77, 114, 151});
  }

  void convertsChannels() {
    DecodedImage rgb;
    rgb.width = 1;
    rgb.height = 1;
    rgb.channels = 3;
    rgb.pixels = {200, 100, 50};
    QCOMPARE(with_channels(rgb, 1).pixels, (std::vector<uint8_t>{124}));  // 59.8 + 58.7 + 5.7
    QCOMPARE(with_channels(rgb, 4).pixels, (std::vector<uint8_t>{200, 100, 50, 255}));
    DecodedImage gray = with_channels(rgb, 1);
    QCOMPARE(with_channels(gray, 3).pixels, (std::vector<uint8_t>{124, 124, 124}));
  }

  void loadsInKerasOrder() {
    Folder f;
    DataSpec s = f.spec();
    s.image_shuffle = false;
    const Dataset d = load_dataset(s, {});
    QCOMPARE(d.sample_shape, (Shape{3, 4, 1}));
    QCOMPARE(d.x.cols(), Index{12});
    QCOMPARE(first_pixels(d.x), (std::vector<int>{12, 10, 11, 21, 20, 30, 31, 32}));
    QCOMPARE(labels(d.y), (std::vector<int>{0, 0, 0, 1, 1, 2, 2, 2}));
    QCOMPARE(d.class_names, (std::vector<std::string>{"ant", "bee", "cat"}));
    QVERIFY(!d.has_validation_data());
    // Every pixel of an image is its value (a same-size resize changes nothing).
    QCOMPARE(d.x.row(0).minCoeff(), 12.0f);
    QCOMPARE(d.x.row(0).maxCoeff(), 12.0f);
  }

  // Shuffled by NumPy's RandomState(seed) (seed 7: 8 files -> this order), then the last
  // int(0.25 * 8) = 2 validate, as get_training_or_validation_split.
  void splitsAfterTheShuffle() {
    Folder f;
    DataSpec s = f.spec();
    s.seed = 7;
    s.image_validation_split = 0.25;
    const std::vector<int> keras = {12, 10, 11, 21, 20, 30, 31, 32};
    std::vector<int> shuffled;
    for (int64_t i : numpy_shuffled_order(8, 7)) shuffled.push_back(keras[static_cast<size_t>(i)]);
    const Dataset both = load_dataset(s, {});
    QCOMPARE(first_pixels(both.x), std::vector<int>(shuffled.begin(), shuffled.begin() + 6));
    QCOMPARE(first_pixels(both.validation_x),
             std::vector<int>(shuffled.begin() + 6, shuffled.end()));
    for (Index r = 0; r < both.x.rows(); ++r)
      QCOMPARE(static_cast<int>(both.y(r, 0)), (first_pixels(both.x)[r] / 10) - 1);
    s.image_subset = "training";
    QCOMPARE(first_pixels(load_dataset(s, {}).x), first_pixels(both.x));
    QVERIFY(!load_dataset(s, {}).has_validation_data());
    s.image_subset = "validation";
    QCOMPARE(first_pixels(load_dataset(s, {}).x), first_pixels(both.validation_x));
  }

  void colorModesAndLabelModes() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    write_image(dir / "a" / "1.png", 40, true);  // (40, 80, 120)
    write_image(dir / "b" / "1.png", 10);
    DataSpec s;
    s.generator.clear();
    s.directory = dir.string();
    s.image_height = 3;
    s.image_width = 4;
    s.image_shuffle = false;
    const Dataset rgb = load_dataset(s, {});
    QCOMPARE(rgb.sample_shape, (Shape{3, 4, 3}));
    QCOMPARE(rgb.x(0, 0), 40.0f);
    QCOMPARE(rgb.x(0, 1), 80.0f);
    QCOMPARE(rgb.x(0, 2), 120.0f);
    QCOMPARE(rgb.x(1, 2), 10.0f);  // gray repeated
    s.color_mode = "grayscale";
    // 0.299 * 40 + 0.587 * 80 + 0.114 * 120 = 72.64
    QCOMPARE(load_dataset(s, {}).x(0, 0), 73.0f);
    s.color_mode = "rgba";
    QCOMPARE(load_dataset(s, {}).x(0, 3), 255.0f);
    s.color_mode = "rgb";
    s.label_mode = "categorical";
    const Dataset one_hot = load_dataset(s, {});
    QCOMPARE(one_hot.y.cols(), Index{2});
    QCOMPARE(one_hot.y(0, 0), 1.0f);
    QCOMPARE(one_hot.y(1, 1), 1.0f);
    QCOMPARE(one_hot.target_names, (std::vector<std::string>{"a", "b"}));
    s.label_mode = "binary";
    QCOMPARE(labels(load_dataset(s, {}).y), (std::vector<int>{0, 1}));
    write_image(dir / "c" / "1.png", 5);
    const auto e = error_of([&] { load_dataset(s, {}); });
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->place()), QStringLiteral("data.label_mode"));
    QVERIFY(e->message().find("exactly 2 class subfolders") != std::string::npos);
  }

  void unreadableFilesAreListed() {
    Folder f;
    std::ofstream(f.dir() / "bee" / "broken.png") << "this is no PNG";
    DataSpec s = f.spec();
    const auto e = error_of([&] { load_dataset(s, {}); });
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->place()), QStringLiteral("data.directory"));
    QVERIFY2(e->message().find((f.dir() / "bee" / "broken.png").string()) != std::string::npos,
             e->what());
    QVERIFY(e->message().find("\"skip\"") != std::string::npos);
    s.skip_unreadable = true;
    const Dataset d = load_dataset(s, {});
    QCOMPARE(d.size(), Index{8});
    QCOMPARE(d.notes.size(), size_t{1});
    QVERIFY(d.notes[0].find("skipped 1 unreadable file") != std::string::npos);
    QVERIFY(d.notes[0].find("broken.png") != std::string::npos);
  }

  void folderErrors_data() {
    QTest::addColumn<QString>("layout");  // "missing", "file", "empty", "no images"
    QTest::addColumn<QString>("message");
    QTest::newRow("missing") << "missing"
                             << "does not exist";
    QTest::newRow("a file") << "file"
                            << "is not a folder";
    QTest::newRow("no class folder") << "empty"
                                     << "has no class subfolder";
    QTest::newRow("no images") << "no images"
                               << "holds no image";
  }
  void folderErrors() {
    QFETCH(QString, layout);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    fs::path dir = fs::path(tmp.path().toStdString()) / "pictures";
    if (layout == "file") std::ofstream(dir) << "x";
    if (layout == "empty") fs::create_directories(dir);
    if (layout == "no images") {
      fs::create_directories(dir / "a");
      std::ofstream(dir / "a" / "readme.txt") << "x";
    }
    DataSpec s;
    s.generator.clear();
    s.directory = dir.string();
    const auto e = error_of([&] { load_dataset(s, {}); });
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->place()), QStringLiteral("data.directory"));
    QVERIFY2(QString::fromStdString(e->message()).contains(message), e->what());
  }

  // A folder too large to hold is refused before anything is decoded, with its size and what
  // to change: here under an RLIMIT_AS of what is mapped + 512 MiB, 8 images of 2048 x 2048 x 4
  // float32 values (512 MiB, twice that while read).
  void tooLargeToHoldIsRefused() {
#ifdef FITBENCH_SANITIZED
    QSKIP("a sanitizer's shadow memory does not fit under an RLIMIT_AS");
#endif
    Folder f;
    DataSpec s = f.spec();
    s.image_height = s.image_width = 2048;
    s.color_mode = "rgba";
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    QVERIFY(pages > 0);
    rlimit old{};
    QVERIFY(getrlimit(RLIMIT_AS, &old) == 0);
    rlimit lower = old;
    lower.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                     (rlim_t{512} << 20);
    if (old.rlim_max != RLIM_INFINITY && lower.rlim_cur > old.rlim_max) QSKIP("hard limit below");
    QVERIFY(setrlimit(RLIMIT_AS, &lower) == 0);
    const auto e = error_of([&] { load_dataset(s, {}); });
    QVERIFY(setrlimit(RLIMIT_AS, &old) == 0);
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->place()), QStringLiteral("data.image_size"));
    QVERIFY2(e->message().find("8 images of 2048 x 2048 x 4 float32 values take 512 MiB") !=
                 std::string::npos,
             e->what());
    QVERIFY2(e->message().find("this process may use") != std::string::npos, e->what());
  }

  void splitErrors() {
    Folder f;
    DataSpec s = f.spec();
    s.image_validation_split = 0.1;  // int(0.1 * 8) = 0 validation images
    const auto e = error_of([&] { load_dataset(s, {}); });
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->place()), QStringLiteral("data.validation_split"));
    QVERIFY2(e->message().find("leaves no validation image") != std::string::npos, e->what());
  }

  void experimentKeys() {
    const ExperimentSpec spec = parse(
        R"({"directory": "pictures", "image_size": [28, 32], "color_mode": "grayscale",
            "validation_split": 0.2, "seed": 1337, "shuffle": false, "unreadable": "skip"})");
    const DataSpec& d = spec.data;
    QCOMPARE(d.directory, std::string("/base/pictures"));
    QCOMPARE(d.image_height, int64_t{28});
    QCOMPARE(d.image_width, int64_t{32});
    QCOMPARE(d.color_mode, std::string("grayscale"));
    QCOMPARE(d.image_validation_split, 0.2);
    QCOMPARE(d.image_subset, std::string("both"));
    QCOMPARE(d.seed, uint64_t{1337});
    QVERIFY(!d.image_shuffle);
    QVERIFY(d.skip_unreadable);
    QVERIFY(d.generator.empty());
    // Written and read again: the same.
    const ExperimentSpec again = parse_experiment(
        nlohmann::json::parse(experiment_to_json(spec).dump()), "again.json", "/elsewhere");
    QCOMPARE(again.data.directory, d.directory);
    QCOMPARE(again.data.image_width, d.image_width);
    QCOMPARE(again.data.color_mode, d.color_mode);
    QCOMPARE(again.data.image_validation_split, d.image_validation_split);
    QCOMPARE(again.data.seed, d.seed);
    QCOMPARE(again.data.skip_unreadable, d.skip_unreadable);
    // One number is a square.
    QCOMPARE(parse(R"({"directory": "p", "image_size": 64})").data.image_width, int64_t{64});
    // Keras's defaults.
    const DataSpec defaults = parse(R"({"directory": "p"})").data;
    QCOMPARE(defaults.image_height, int64_t{256});
    QCOMPARE(defaults.color_mode, std::string("rgb"));
    QCOMPARE(defaults.label_mode, std::string("int"));
    QVERIFY(defaults.image_shuffle);
  }

  void experimentKeyErrors_data() {
    QTest::addColumn<QString>("data");
    QTest::addColumn<QString>("fit");
    QTest::addColumn<QString>("place");
    QTest::newRow("color") << R"({"directory": "p", "color_mode": "cmyk"})"
                           << "{}"
                           << "data.color_mode";
    QTest::newRow("size") << R"({"directory": "p", "image_size": [28]})"
                          << "{}"
                          << "data.image_size";
    QTest::newRow("huge") << R"({"directory": "p", "image_size": [28, 100000]})"
                          << "{}"
                          << "data.image_size";
    QTest::newRow("split") << R"({"directory": "p", "validation_split": 1.5})"
                           << "{}"
                           << "data.validation_split";
    QTest::newRow("subset alone") << R"({"directory": "p", "subset": "training"})"
                                  << "{}"
                                  << "data.subset";
    QTest::newRow("two splits") << R"({"directory": "p", "validation_split": 0.2})"
                                << R"({"validation_split": 0.1})"
                                << "fit.validation_split";
    QTest::newRow("unreadable") << R"({"directory": "p", "unreadable": "ignore"})"
                                << "{}"
                                << "data.unreadable";
    QTest::newRow("with csv") << R"({"directory": "p", "csv": "a.csv"})"
                              << "{}"
                              << "data.directory";
    QTest::newRow("seed") << R"({"directory": "p", "seed": 5000000000})"
                          << "{}"
                          << "data.seed";
  }
  void experimentKeyErrors() {
    QFETCH(QString, data);
    QFETCH(QString, fit);
    QFETCH(QString, place);
    const auto e = error_of([&] { parse(data.toStdString(), fit.toStdString()); });
    QVERIFY(e);
    QVERIFY2(QString::fromStdString(e->place()).endsWith(place), e->what());
  }

  // A run on a folder: a softmax classifier of the three flat colors learns them; the validation
  // subset is the run's validation data.
  void trainsOnAFolder() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (int i = 0; i < 10; ++i) {
      write_image(dir / "dark" / (std::to_string(i) + ".png"), 20 + i);
      write_image(dir / "mid" / (std::to_string(i) + ".png"), 120 + i);
      write_image(dir / "light" / (std::to_string(i) + ".png"), 220 + i);
    }
    ExperimentSpec spec = parse(R"({"directory": ")" + dir.string() +
                                    R"(", "image_size": [3, 4], "color_mode": "grayscale",
                                      "validation_split": 0.2, "seed": 3})",
                                R"({"epochs": 40, "batch_size": 8, "verbose": 0})");
    RunPlan plan = plan_run(spec, {}, {});
    QCOMPARE(plan.data.size(), Index{24});
    QCOMPARE(plan.data.validation_x.rows(), Index{6});
    std::ostringstream quiet;
    RunIO io;
    io.out = &quiet;
    io.warnings = &quiet;
    io.write_files = false;
    const RunResult result = execute_run(plan, io);
    QCOMPARE(result.history.last("val_accuracy"), 1.0);
  }
};

QTEST_GUILESS_MAIN(TestImageFolder)
#include "tst_image_folder.moc"
