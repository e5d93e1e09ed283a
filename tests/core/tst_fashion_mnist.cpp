// Tests of the IDX reader (core/data/idx_file.h) and the Fashion-MNIST data set: every error of a
// damaged file with its place, fixture folders with a few images, the experiment keys, and the
// real files of Debian's dataset-fashion-mnist package against what NumPy reads from them.
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/data/idx_file.h"
#include "core/io/experiment.h"
#include "tests/core/idx_fixtures.h"
#include "tests/core/input_error.h"

using namespace fitbench;
using namespace fitbench::test;

namespace {

using test::error_of;

// A folder with the four files: 5 training images, 3 test images.
struct Folder {
  QTemporaryDir tmp;
  std::filesystem::path dir() const { return tmp.path().toStdString(); }
  Folder() { write_fashion_mnist(dir(), 5, 3); }
  DataSpec spec() const {
    DataSpec s;
    s.generator.clear();
    s.dataset = "fashion_mnist";
    s.dataset_dir = dir().string();
    return s;
  }
};

ExperimentSpec parse(const std::string& data, const std::string& fit = "{}") {
  const std::string text = R"({"data": )" + data + R"(, "model": {"class_name": "Sequential",
    "config": {"layers": [{"class_name": "Dense", "config": {"units": 10}}]}},
    "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"}, "fit": )" +
                           fit + "}";
  return parse_experiment(nlohmann::json::parse(text), "e.json", "/base");
}

}  // namespace

class TestFashionMnist : public QObject {
  Q_OBJECT

 private slots:
  void parsesIdx() {
    const IdxArray a = parse_idx(idx({2, 3}, {1, 2, 3, 4, 5, 6}), "f");
    QCOMPARE(a.dims, (std::vector<int64_t>{2, 3}));
    QCOMPARE(a.items(), int64_t{2});
    QCOMPARE(a.item_size(), int64_t{3});
    QCOMPARE(a.values, (Bytes{1, 2, 3, 4, 5, 6}));
    // gzip or not, the same array.
    QCOMPARE(parse_idx(gunzip_if_gzip(gzip(idx({2, 3}, {1, 2, 3, 4, 5, 6})), "f"), "f").values,
             a.values);
  }

  // A small stream that inflates to many of the reader's 64 KiB output blocks.
  void inflatesPastOneBlock() {
    const Bytes out = gunzip_if_gzip(gzip(Bytes(300000, 7)), "f.gz");
    QCOMPARE(out.size(), size_t{300000});
    QVERIFY(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 7; }));
  }

  void idxErrors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const Bytes& b, const char* message) {
      QTest::newRow(name) << QByteArray(reinterpret_cast<const char*>(b.data()),
                                        static_cast<qsizetype>(b.size()))
                          << QString(message);
    };
    row("short", {0, 0},
        "f: is 2 bytes long, shorter than an IDX header (4 bytes of magic number)");
    row("magic", {'P', 'K', 3, 4, 0, 0},
        "f: byte 0: the file does not start with an IDX magic "
        "number (two zero bytes, then the type and the number of dimensions); it starts 0x50 0x4b");
    row("float", idx({1}, {0, 0, 0, 0}, 0x0D),
        "f: byte 2: the elements are of type 0x0d (float); "
        "fitbench reads IDX files of unsigned bytes (0x08), as MNIST and Fashion-MNIST are");
    row("no dimensions", {0, 0, 8, 0}, "f: byte 3: the file declares 0 dimensions");
    row("header cut", {0, 0, 8, 3, 0, 0, 0, 1},
        "f: the header declares 3 dimensions (16 bytes of "
        "header) but the file is 8 bytes long");
    row("size 0", idx({2, 0}, {}), "f: byte 8: dimension 1 has size 0; there is no data");
    row("huge", idx({0xFFFFFFFF, 0xFFFFFFFF}, {}),
        "f: byte 4: the dimensions promise more than 1073741824 elements");
    row("truncated", idx({2, 3}, {1, 2, 3}),
        "f: the header promises 6 elements (2 x 3) but 3 bytes follow it (a truncated file?)");
    row("trailing", idx({1, 2}, {1, 2, 3}),
        "f: the header promises 2 elements (1 x 2) but 3 bytes follow it");
  }
  void idxErrors() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const Bytes b(bytes.begin(), bytes.end());
    const auto e = error_of([&] { parse_idx(b, "f"); });
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->what()), message);
  }

  void gzipErrors() {
    const Bytes whole = gzip(idx({100}, Bytes(100, 7)));
    const Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(whole.size() / 2));
    auto e = error_of([&] { gunzip_if_gzip(cut, "f.gz"); });
    QVERIFY(e);
    QVERIFY2(QString(e->what()).startsWith("f.gz: the gzip stream ends early, after"), e->what());
    Bytes bad = whole;
    bad[12] ^= 0xFF;  // inside the deflate stream
    bad[13] ^= 0xFF;
    e = error_of([&] { gunzip_if_gzip(bad, "f.gz"); });
    QVERIFY(e);
    QVERIFY2(QString(e->what()).startsWith("f.gz: is not a valid gzip stream (zlib: "), e->what());
    Bytes trailing = whole;
    trailing.push_back(0);
    e = error_of([&] { gunzip_if_gzip(trailing, "f.gz"); });
    QVERIFY(e);
    QCOMPARE(QString(e->what()), QString("f.gz: 1 byte follows the end of the gzip stream; a gzip "
                                         "file of fitbench's data sets holds one stream"));
    // A bomb: more than the limit once inflated.
    e = error_of([&] { gunzip_if_gzip(gzip(Bytes(200000, 0)), "f.gz", 100000); });
    QVERIFY(e);
    QCOMPARE(QString(e->what()), QString("f.gz: inflates to more than 100000 bytes, more than any "
                                         "IDX data set fitbench reads"));
  }

  void readsFolder() {
    Folder f;
    DataSpec s = f.spec();
    Dataset d = load_dataset(s, {});
    QCOMPARE(d.x.rows(), Index{5});
    QCOMPARE(d.x.cols(), Index{784});
    QCOMPARE(d.y(3, 0), 3.0f);
    QVERIFY(!d.has_validation_data());
    // Pixel j of image i is (i * 7 + j) % 256, divided by 255 in float32.
    QCOMPARE(d.x(2, 100), static_cast<float>((2 * 7 + 100) % 256) / 255.0f);
    QCOMPARE(d.x(4, 783), static_cast<float>((4 * 7 + 783) % 256) / 255.0f);
    QCOMPARE(d.feature_names[783], std::string("pixel783"));

    s.scale = false;
    s.subset = 2;
    s.validation_test = true;
    d = load_dataset(s, {});
    QCOMPARE(d.x.rows(), Index{2});
    QCOMPARE(d.x(1, 10), 17.0f);
    QCOMPARE(d.validation_x.rows(), Index{3});
    QCOMPARE(d.validation_y(2, 0), 2.0f);
    QCOMPARE(d.validation_x(2, 0), 14.0f);
    s.subset = 50;  // more than there are: all of them, as x[:50] in NumPy
    QCOMPARE(load_dataset(s, {}).x.rows(), Index{5});
  }

  void folderErrors() {
    Folder f;
    const std::string dir = f.dir().string();
    auto message = [&] {
      const auto e = error_of([&] { load_dataset(f.spec(), {}); });
      return e ? std::string(e->what()) : std::string("no error");
    };
    write(f.dir() / "train-labels-idx1-ubyte.gz", gzip(labels(4)));
    QCOMPARE(message(), dir +
                            "/train-labels-idx1-ubyte.gz: holds 4 labels but "
                            "train-images-idx3-ubyte.gz holds 5 images; the two files must be of "
                            "one set");
    write(f.dir() / "train-labels-idx1-ubyte.gz", gzip(idx({5}, {0, 1, 2, 10, 4})));
    QCOMPARE(message(), dir +
                            "/train-labels-idx1-ubyte.gz: label 3 (byte 11) is 10; "
                            "Fashion-MNIST's classes are 0 to 9");
    write(f.dir() / "train-labels-idx1-ubyte.gz", gzip(idx({5, 1}, {0, 1, 2, 3, 4})));
    QCOMPARE(message(), dir +
                            "/train-labels-idx1-ubyte.gz: holds a 2-dimensional array, not "
                            "Fashion-MNIST's list of labels");
    write(f.dir() / "train-images-idx3-ubyte.gz", gzip(idx({2, 27, 28}, Bytes(2 * 27 * 28))));
    QCOMPARE(message(), dir +
                            "/train-images-idx3-ubyte.gz: holds an array of 2 x 27 x 28 bytes, "
                            "not Fashion-MNIST's 28 x 28 images (N x 28 x 28)");
    std::filesystem::remove(f.dir() / "train-images-idx3-ubyte.gz");
    QCOMPARE(message(), dir + "/train-images-idx3-ubyte.gz: does not exist");
    std::filesystem::create_directory(f.dir() / "train-images-idx3-ubyte.gz");
    QCOMPARE(message(), dir +
                            "/train-images-idx3-ubyte.gz: cannot be opened: it is a directory, "
                            "not an IDX file");
    DataSpec s = f.spec();
    s.subset = -1;  // a spec made in code, not read from a file
    auto e0 = error_of([&] { load_dataset(s, {}); });
    QVERIFY(e0);
    QCOMPARE(
        QString(e0->what()),
        QString("data.subset: must be 0 (every image) or a positive number of images, got -1"));
    s.subset = 0;
    s.dataset_dir = dir + "/nowhere";
    const auto e = error_of([&] { load_dataset(s, {}); });
    QVERIFY(e);
    QCOMPARE(QString(e->what()),
             QString::fromStdString("data.path: " + dir + "/nowhere is not a folder"));
  }

  void experimentKeys() {
    ExperimentSpec e = parse(R"({"dataset": "fashion_mnist", "path": "fm", "subset": 1000,
                                 "scale": false, "validation_data": "test"})");
    QCOMPARE(e.data.dataset, std::string("fashion_mnist"));
    QCOMPARE(e.data.dataset_dir, std::string("/base/fm"));
    QCOMPARE(e.data.subset, int64_t{1000});
    QVERIFY(!e.data.scale);
    QVERIFY(e.data.validation_test);
    QVERIFY(e.data.generator.empty());
    // Written back as read.
    const ExperimentSpec again = parse_experiment(experiment_to_json(e), "e.json", "/elsewhere");
    QCOMPARE(experiment_to_json(again).dump(), experiment_to_json(e).dump());
    e = parse(R"({"dataset": "fashion_mnist"})");
    QVERIFY(e.data.scale);
    QVERIFY(!e.data.validation_test);
    QCOMPARE(e.data.subset, int64_t{0});

    auto message = [](const std::string& data, const std::string& fit = "{}") {
      const auto e = error_of([&] { parse(data, fit); });
      return e ? std::string(e->what()) : std::string("no error");
    };
    QCOMPARE(message(R"({"dataset": "mnist"})"),
             std::string("e.json: data.dataset: \"mnist\" is not supported by fitbench; the data "
                         "set it reads is \"fashion_mnist\" (keras.datasets.fashion_mnist)"));
    QCOMPARE(message(R"({"dataset": "fashion_mnist", "generator": "xor"})"),
             std::string("e.json: data.dataset: cannot be combined with \"generator\""));
    QCOMPARE(message(R"({"dataset": "fashion_mnist", "validation_data": "train"})"),
             std::string("e.json: data.validation_data: must be \"test\" (validate on the test "
                         "images) or null, got \"train\""));
    QCOMPARE(message(R"({"dataset": "fashion_mnist", "subset": -1})"),
             std::string("e.json: data.subset: must be 0 (every image) or a positive number of "
                         "images, got -1"));
    QCOMPARE(message(R"({"dataset": "fashion_mnist", "validation_data": "test"})",
                     R"({"validation_split": 0.2})"),
             std::string("e.json: fit.validation_split: cannot be combined with "
                         "data.validation_data \"test\": the test images are the validation "
                         "data; remove one of the two"));
  }

  // Debian's dataset-fashion-mnist, as NumPy reads it (gzip + np.frombuffer): the shapes, the
  // first labels, three images' pixel sums, the last images' sums, and 6,000 images per class.
  void realFiles() {
    if (!std::filesystem::is_directory(kFashionMnistDir))
      QSKIP("dataset-fashion-mnist is not installed (scripts/deps.sh installs it)");
    DataSpec s;
    s.generator.clear();
    s.dataset = "fashion_mnist";
    s.scale = false;
    s.validation_test = true;
    const Dataset d = load_dataset(s, {});
    QCOMPARE(d.x.rows(), Index{60000});
    QCOMPARE(d.x.cols(), Index{784});
    QCOMPARE(d.validation_x.rows(), Index{10000});
    const std::vector<float> first = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
    const std::vector<float> first_test = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
    for (int i = 0; i < 10; ++i) {
      QCOMPARE(d.y(i, 0), first[static_cast<size_t>(i)]);
      QCOMPARE(d.validation_y(i, 0), first_test[static_cast<size_t>(i)]);
    }
    QCOMPARE(d.x.row(0).cast<double>().sum(), 76247.0);
    QCOMPARE(d.x.row(1).cast<double>().sum(), 84598.0);
    QCOMPARE(d.x.row(2).cast<double>().sum(), 28662.0);
    QCOMPARE(d.x.row(59999).cast<double>().sum(), 16684.0);
    QCOMPARE(d.validation_x.row(9999).cast<double>().sum(), 24390.0);
    std::vector<int> per_class(10);
    for (Index i = 0; i < d.y.rows(); ++i) ++per_class[static_cast<size_t>(d.y(i, 0))];
    QCOMPARE(per_class, std::vector<int>(10, 6000));
    QCOMPARE(fashion_mnist_classes()[9], std::string("Ankle boot"));
  }
};

QTEST_GUILESS_MAIN(TestFashionMnist)
#include "tst_fashion_mnist.moc"
