// Keras's own files: a .keras archive and a .weights.h5 file written as Keras 3.16 lays them out
// (checked with Python's zipfile and h5py, and by running the model as Keras would from the file
// alone), read back to the same weights, statistics and optimizer state, training that continues
// bit for bit as if it had never stopped (one device, DataParallel, ModelParallel), files as
// Keras writes them, and damaged or unsupported files refused with a sentence.
#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/base/child_check.h"
#include "core/base/error.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/io/keras_file.h"
#include "core/io/model_file.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "fixtures.h"

using namespace fitbench;

namespace {

const char* kPython = "/usr/bin/python3";

// Input(4) -> Dense(8, relu) -> Dense(6, tanh) -> Dense(3, softmax), unnamed (dense, dense_1,
// dense_2), no dropout: nothing random after the initial weights.
ModelSpec mlp() {
  ModelSpec spec;
  spec.layers = {fixtures::input(4), fixtures::dense(8, "relu"), fixtures::dense(6, "tanh"),
                 fixtures::dense(3, "softmax")};
  return spec;
}

OptimizerSpec optimizer(const QString& name) {
  if (name == "SGD+momentum") return fixtures::optimizer("SGD", 0.05, 0.9, true);
  OptimizerSpec o = fixtures::optimizer(name == "AMSGrad" ? "Adam" : name.toStdString(), 0.01);
  if (name == "AMSGrad") o.amsgrad = true;
  if (name == "RMSprop") {
    o.momentum = 0.5;
    o.centered = true;
  }
  return o;
}

// Installs a strategy: "one device", "DataParallel 2" or "ModelParallel 1x2" (the hidden
// kernels split by output units).
void distribute(Sequential& m, const QString& strategy) {
  if (strategy == "DataParallel 2") use_data_parallel(m, 2);
  if (strategy == "ModelParallel 1x2") {
    DistributionSpec s;
    s.class_name = "ModelParallel";
    s.mesh_shape = {1, 2};
    s.axis_names = {"batch", "model"};
    s.layout_map = {{"dense/kernel", {"", "model"}}, {"dense_1/kernel", {"", "model"}}};
    use_model_parallel(m, s, 2, {});
  }
}

FitOptions two_epochs() {
  FitOptions fit;
  fit.epochs = 2;
  fit.batch_size = 10;
  fit.verbose = 0;
  return fit;
}

QString run_python(const QStringList& args) {
  QProcess p;
  p.start(kPython, args);
  if (!p.waitForFinished(120000)) return "python did not finish";
  const QString out = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
  if (p.exitCode() != 0) return out + QString::fromUtf8(p.readAllStandardError());
  return out;
}

// `m` as a CSV file under `header`, 9 significant digits (float32 exactly).
void write_csv(const Matrix& m, const char* header, const std::string& file) {
  std::ofstream out(file);
  out.precision(9);
  out << header << "\n";
  for (Index r = 0; r < m.rows(); ++r) {
    for (Index c = 0; c < m.cols(); ++c) out << (c ? "," : "") << m(r, c);
    out << "\n";
  }
}

// The xor example's model, built: what a weights file of it is read into.
ModelFile xor_like() {
  ModelSpec xor_model;
  xor_model.name = "xor";
  xor_model.layers = {fixtures::input(2), fixtures::dense(8, "tanh"),
                      fixtures::dense(1, "sigmoid")};
  Sequential like(xor_model);
  like.build(2);
  return like.model_file();
}

std::string refusal(const std::string& file) {
  try {
    read_model_file(file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(read without a word)";
}

}  // namespace

class TestKerasFile : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString variants_;
  std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }
  std::string variant(const char* name) const {
    return (variants_ + "/" + QString::fromUtf8(name)).toStdString();
  }
  // keras_demo.keras with `weights` as its model.weights.h5, written as `name` here.
  std::string archive_with_weights(const char* name, const std::string& weights) const {
    const std::string archive = path(name);
    const QString made = run_python(
        {"-c",
         "import sys, zipfile\n"
         "src, h5, out = sys.argv[1:]\n"
         "with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, 'w') as o:\n"
         "    for i in z.infolist():\n"
         "        o.writestr(i, open(h5, 'rb').read() if i.filename == 'model.weights.h5' "
         "else z.read(i))\n",
         QString::fromStdString(variant("keras_demo.keras")), QString::fromStdString(weights),
         QString::fromStdString(archive)});
    if (!made.isEmpty()) qWarning("%s", qPrintable(made));
    return archive;
  }

  // Trains `m` (compiled) on x, y (20 features, 3 classes) for two epochs, writes it as
  // <stem>.keras and <stem>.json, and has the checker read the .keras file as Keras would: its
  // layout, its config's keys, and its NumPy forward pass giving the engine's predictions of x.
  // Returns those predictions ("" from the checker on success, its sentence otherwise).
  Matrix writtenAndChecked(Sequential& m, const Matrix& x, const Matrix& y, const std::string& stem,
                           QString* checker) const {
    m.fit(x, y, two_epochs());
    write_model_file(m.model_file(), path((stem + ".keras").c_str()));
    write_model_file(m.model_file(), path((stem + ".json").c_str()));
    const Matrix predicted = m.predict(x);
    QStringList header;
    for (int i = 0; i < 20; ++i) header << QString("f%1").arg(i);
    const std::string columns = header.join(',').toStdString();
    write_csv(x, columns.c_str(), path((stem + "x.csv").c_str()));
    write_csv(predicted, "p0,p1,p2", path((stem + "p.csv").c_str()));
    const auto file = [&](const std::string& name) {
      return QString::fromStdString(path((stem + name).c_str()));
    };
    *checker =
        run_python({FITBENCH_SOURCE_DIR "/tests/reference/keras_file_check.py", file(".keras"),
                    file(".json"), "--data", file("x.csv"), "--predictions", file("p.csv")});
    return predicted;
  }

  // (5, 2, 2) images -> `norm` -> Flatten -> Dense(6, relu) -> `norm2` -> Dense(3, softmax),
  // trained with Adam and written as <stem>.keras, which the checker reads as Keras would
  // (*checker: "ok" or its sentence). Returns the model read back from the file; *same says
  // whether its predictions are the trained model's.
  ModelFile normalizedAndReadBack(const LayerSpec& norm, const LayerSpec& norm2,
                                  const std::string& stem, QString* checker, bool* same) const {
    Matrix x, y;
    fixtures::make_data(x, y, 20, 3);
    LayerSpec input = fixtures::input(20);
    input.shape = {5, 2, 2};
    LayerSpec flat;
    flat.class_name = "Flatten";
    ModelSpec spec;
    spec.layers = {
        input, norm, flat, fixtures::dense(6, "relu"), norm2, fixtures::dense(3, "softmax")};
    Sequential m(spec);
    fixtures::compile(m, optimizer("Adam"));
    const Matrix predicted = writtenAndChecked(m, x, y, stem, checker);
    ModelFile back = read_model_file(path((stem + ".keras").c_str()));
    Sequential again(back.config);
    again.set_weights(back.weights, stem + ".keras");
    *same = again.predict(x) == predicted;
    return back;
  }

  // The line of Keras's summary table that names `layer`, its spaces collapsed.
  static QString summaryRow(const std::string& summary, const QString& layer) {
    for (const QString& line : QString::fromStdString(summary).split('\n'))
      if (line.contains(layer)) return line.simplified();
    return QString();
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    variants_ = dir_.filePath("variants");
    QVERIFY(QDir().mkpath(variants_));
    const QString out =
        run_python({FITBENCH_SOURCE_DIR "/tests/reference/keras_file_variants.py", variants_});
    QVERIFY2(out.isEmpty(), qPrintable(out));
  }

  // A trained model with standardized inputs and Adam: its .keras file has Keras's members,
  // keys, groups, datasets and dtypes, the weights of fitbench's own model file bit for bit,
  // and run as Keras would run it (Normalization then the layers, from the file alone) it
  // predicts what fitbench predicts to 1e-6.
  void writesKerasLayout() {
    set_random_seed(3);
    Matrix x, y;
    fixtures::make_data(x, y, 4, 3);
    Sequential m(mlp());
    fixtures::compile(m, optimizer("Adam"));
    ModelData data;
    data.mean = {0.5, -1.0, 2.0, 0.0};
    data.stddev = {2.0, 0.5, 1.5, 1.0};
    m.data_info = data;
    m.fit(x, y, two_epochs());
    write_model_file(m.model_file(), path("m.keras"));
    write_model_file(m.model_file(), path("m.json"));
    write_model_file(m.model_file(), path("m.weights.h5"));

    // Raw inputs, and fitbench's predictions from them standardized as it trains.
    Matrix raw = x;
    for (Index j = 0; j < raw.cols(); ++j)
      raw.col(j) = raw.col(j).array() * static_cast<float>(data.stddev[j]) +
                   static_cast<float>(data.mean[j]);
    Matrix standardized = raw;
    for (Index j = 0; j < raw.cols(); ++j)
      standardized.col(j) = (raw.col(j).array() - static_cast<float>(data.mean[j])) /
                            static_cast<float>(data.stddev[j]);
    write_csv(raw, "a,b,c,d", path("x.csv"));
    write_csv(m.predict(standardized), "p0,p1,p2", path("p.csv"));
    const QString out =
        run_python({FITBENCH_SOURCE_DIR "/tests/reference/keras_file_check.py",
                    QString::fromStdString(path("m.keras")), QString::fromStdString(path("m.json")),
                    "--data", QString::fromStdString(path("x.csv")), "--predictions",
                    QString::fromStdString(path("p.csv"))});
    QCOMPARE(out, QString("ok"));

    // model.save_weights writes the same tree as the archive's model.weights.h5.
    const QString same = run_python(
        {"-c",
         "import h5py, io, sys, zipfile\n"
         "a = h5py.File(io.BytesIO(zipfile.ZipFile(sys.argv[1]).read('model.weights.h5')))\n"
         "b = h5py.File(sys.argv[2])\n"
         "def walk(f):\n"
         "    out = []\n"
         "    f.visititems(lambda n, o: out.append((n, getattr(o, 'shape', None), "
         "str(getattr(o, 'dtype', '')), dict(o.attrs))))\n"
         "    return out\n"
         "print('same' if walk(a) == walk(b) else 'differ')\n",
         QString::fromStdString(path("m.keras")), QString::fromStdString(path("m.weights.h5"))});
    QCOMPARE(same, QString("same"));
  }

  // A model on samples of shape (2, 2) through Reshape and Flatten: the .keras config as Keras
  // writes those layers (Flatten's data_format, Reshape's target_shape and no build_config, the
  // shape each layer was built with), empty weight groups for them, Keras's forward pass from
  // the file equal to fitbench's predictions, and the shapes read back.
  void reshapingLayersAsKerasWritesThem() {
    set_random_seed(6);
    Matrix x, y;
    fixtures::make_data(x, y, 4, 3);
    ModelSpec spec;
    LayerSpec input = fixtures::input(4);
    input.shape = {2, 2};
    LayerSpec reshape;
    reshape.class_name = "Reshape";
    reshape.target_shape = {-1, 1};
    LayerSpec flatten;
    flatten.class_name = "Flatten";
    spec.layers = {input, reshape, flatten, fixtures::dense(5, "tanh"),
                   fixtures::dense(3, "softmax")};
    Sequential m(spec);
    fixtures::compile(m, optimizer("Adam"));
    m.fit(x, y, two_epochs());
    write_model_file(m.model_file(), path("s.keras"));
    write_model_file(m.model_file(), path("s.json"));
    const Matrix predicted = m.predict(x);
    write_csv(x, "a,b,c,d", path("sx.csv"));
    write_csv(predicted, "p0,p1,p2", path("sp.csv"));
    QCOMPARE(
        run_python({FITBENCH_SOURCE_DIR "/tests/reference/keras_file_check.py",
                    QString::fromStdString(path("s.keras")), QString::fromStdString(path("s.json")),
                    "--data", QString::fromStdString(path("sx.csv")), "--predictions",
                    QString::fromStdString(path("sp.csv"))}),
        QString("ok"));
    const QString layers =
        run_python({"-c",
                    "import json, sys, zipfile\n"
                    "c = json.loads(zipfile.ZipFile(sys.argv[1]).read('config.json'))\n"
                    "for l in c['config']['layers']:\n"
                    "    print(l['class_name'], json.dumps(l['config'].get('batch_shape', "
                    "l['config'].get('target_shape', l['config'].get('data_format')))), "
                    "json.dumps(l.get('build_config')))\n",
                    QString::fromStdString(path("s.keras"))});
    QCOMPARE(layers, QString("InputLayer [null, 2, 2] null\n"
                             "Reshape [-1, 1] null\n"
                             "Flatten \"channels_last\" {\"input_shape\": [null, 4, 1]}\n"
                             "Dense null {\"input_shape\": [null, 4]}\n"
                             "Dense null {\"input_shape\": [null, 5]}"));
    const ModelFile back = read_model_file(path("s.keras"));
    QCOMPARE(back.config.layers.front().shape, Shape({2, 2}));
    QCOMPARE(back.config.layers[1].class_name, std::string("Reshape"));
    QCOMPARE(back.config.layers[1].target_shape, Shape({-1, 1}));
    QCOMPARE(back.config.layers[2].class_name, std::string("Flatten"));
    Sequential again(back.config);
    again.set_weights(back.weights, "s.keras");
    QCOMPARE(again.predict(x), predicted);
    const std::string summary = again.summary();
    const auto row = [&](const QString& layer) { return summaryRow(summary, layer); };
    QCOMPARE(row("(Reshape)"), QString("│ reshape (Reshape) │ (None, 4, 1) │ 0 │"));
    QCOMPARE(row("(Flatten)"), QString("│ flatten (Flatten) │ (None, 4) │ 0 │"));
  }

  // Rescaling(1/255, -0.5) and GlobalAveragePooling2D in the config as Keras 3.16 writes them
  // (name, trainable, dtype, then scale and offset, or data_format and keepdims; a
  // build_config), the checker's float32 forward pass giving the predictions, and the file read
  // back with the same numbers.
  void rescalingAndPoolingAsKerasWritesThem() {
    set_random_seed(6);
    Matrix x, y;
    fixtures::make_data(x, y, 12, 3);
    LayerSpec rescale;
    rescale.class_name = "Rescaling";
    rescale.scale = 1.0 / 255.0;
    rescale.offset = -0.5;
    LayerSpec input = fixtures::input(12);
    input.shape = {2, 2, 3};
    LayerSpec pool;
    pool.class_name = "GlobalAveragePooling2D";
    ModelSpec spec;
    spec.layers = {input, rescale, pool, fixtures::dense(5, "tanh"), fixtures::dense(3, "softmax")};
    Sequential m(spec);
    fixtures::compile(m, optimizer("Adam"));
    m.fit(x, y, two_epochs());
    write_model_file(m.model_file(), path("r1.keras"));
    write_model_file(m.model_file(), path("r1.json"));
    const Matrix predicted = m.predict(x);
    write_csv(x, "a,b,c,d,e,f,g,h,i,j,k,l", path("r1x.csv"));
    write_csv(predicted, "p0,p1,p2", path("r1p.csv"));
    QCOMPARE(run_python({FITBENCH_SOURCE_DIR "/tests/reference/keras_file_check.py",
                         QString::fromStdString(path("r1.keras")),
                         QString::fromStdString(path("r1.json")), "--data",
                         QString::fromStdString(path("r1x.csv")), "--predictions",
                         QString::fromStdString(path("r1p.csv"))}),
             QString("ok"));
    QCOMPARE(run_python({"-c",
                         "import json, sys, zipfile\n"
                         "c = json.loads(zipfile.ZipFile(sys.argv[1]).read('config.json'))\n"
                         "l = c['config']['layers'][1]\n"
                         "print(list(l['config']), l['config']['scale'], l['config']['offset'], "
                         "json.dumps(l['build_config']))\n"
                         "p = c['config']['layers'][2]\n"
                         "print(p['class_name'], json.dumps(p['config']['data_format']), "
                         "p['config']['keepdims'], json.dumps(p['build_config']))\n",
                         QString::fromStdString(path("r1.keras"))}),
             QString("['name', 'trainable', 'dtype', 'scale', 'offset'] 0.00392156862745098 -0.5 "
                     "{\"input_shape\": [null, 2, 2, 3]}\n"
                     "GlobalAveragePooling2D \"channels_last\" False "
                     "{\"input_shape\": [null, 2, 2, 3]}"));
    const ModelFile back = read_model_file(path("r1.keras"));
    QCOMPARE(back.config.layers[1].class_name, std::string("Rescaling"));
    QCOMPARE(back.config.layers[1].scale, 1.0 / 255.0);
    QCOMPARE(back.config.layers[1].offset, -0.5);
    QCOMPARE(back.config.layers[2].class_name, std::string("GlobalAveragePooling2D"));
    Sequential again(back.config);
    again.set_weights(back.weights, "r1.keras");
    QCOMPARE(again.predict(x), predicted);
    const QString summary = QString::fromStdString(again.summary());
    QVERIFY2(summary.contains(QString::fromUtf8("│ (None, 3)")), qPrintable(summary));
  }

  // Two Conv2D layers (valid 2x2 relu; same 3x2 with strides 2x1, no bias), an
  // AveragePooling2D (2x2, strides 1, same) between them and a MaxPooling2D (2x2) after, as
  // Keras 3.16 writes them: the config's keys and the kernel (kh, kw, in, out) in
  // layers/conv2d/vars/0, the checker's NumPy convolution and pooling giving the predictions,
  // the file read back with the same numbers and the summary's shapes and parameter counts.
  void convolutionAsKerasWritesIt() {
    set_random_seed(8);
    Matrix x, y;
    fixtures::make_data(x, y, 20, 3);
    LayerSpec input = fixtures::input(20);
    input.shape = {4, 5, 1};
    LayerSpec conv;
    conv.class_name = "Conv2D";
    conv.filters = 3;
    conv.kernel_size = {2, 2};
    conv.activation = "relu";
    LayerSpec conv2 = conv;
    conv2.filters = 4;
    conv2.kernel_size = {3, 2};
    conv2.strides = {2, 1};
    conv2.padding = "same";
    conv2.activation = "tanh";
    conv2.use_bias = false;
    LayerSpec flat;
    flat.class_name = "Flatten";
    LayerSpec average;
    average.class_name = "AveragePooling2D";
    average.strides = {1, 1};
    average.padding = "same";
    LayerSpec max;
    max.class_name = "MaxPooling2D";
    max.strides = {2, 2};
    ModelSpec spec;
    spec.layers = {input, conv, average, conv2, max, flat, fixtures::dense(3, "softmax")};
    Sequential m(spec);
    fixtures::compile(m, optimizer("Adam"));
    QString checker;
    const Matrix predicted = writtenAndChecked(m, x, y, "c1", &checker);
    QCOMPARE(checker, QString("ok"));
    QCOMPARE(run_python({"-c",
                         "import io, json, sys, zipfile, h5py\n"
                         "z = zipfile.ZipFile(sys.argv[1])\n"
                         "layers = json.loads(z.read('config.json'))['config']['layers']\n"
                         "c = layers[3]\n"
                         "k = c['config']\n"
                         "print(k['filters'], k['kernel_size'], k['strides'], k['padding'], "
                         "k['use_bias'], json.dumps(c['build_config']))\n"
                         "print(json.dumps(layers[2]['config']['pool_size']), "
                         "layers[2]['config']['strides'], layers[4]['config']['strides'], "
                         "layers[4]['config']['padding'])\n"
                         "h = h5py.File(io.BytesIO(z.read('model.weights.h5')), 'r')\n"
                         "print(h['layers/conv2d/vars/0'].shape, h['layers/conv2d/vars/1'].shape, "
                         "sorted(h['layers/conv2d_1/vars']))\n",
                         QString::fromStdString(path("c1.keras"))}),
             QString("4 [3, 2] [2, 1] same False {\"input_shape\": [null, 3, 4, 3]}\n"
                     "[2, 2] [1, 1] [2, 2] valid\n"
                     "(2, 2, 1, 3) (3,) ['0']"));
    const ModelFile back = read_model_file(path("c1.keras"));
    QCOMPARE(back.config.layers[2].class_name, std::string("AveragePooling2D"));
    QCOMPARE(back.config.layers[2].padding, std::string("same"));
    QCOMPARE(back.config.layers[3].class_name, std::string("Conv2D"));
    QCOMPARE(back.config.layers[3].kernel_size, (std::vector<int64_t>{3, 2}));
    QCOMPARE(back.config.layers[3].strides, (std::vector<int64_t>{2, 1}));
    QCOMPARE(back.config.layers[3].padding, std::string("same"));
    QCOMPARE(back.config.layers[4].strides, (std::vector<int64_t>{2, 2}));
    Sequential again(back.config);
    again.set_weights(back.weights, "c1.keras");
    QCOMPARE(again.predict(x), predicted);
    const std::string summary = again.summary();
    const auto row = [&](const QString& layer) { return summaryRow(summary, layer); };
    // Keras's counts: 2*2*1*3 + 3 and 3*2*3*4 without a bias.
    QCOMPARE(row("conv2d (Conv2D)"), QString("│ conv2d (Conv2D) │ (None, 3, 4, 3) │ 15 │"));
    QCOMPARE(row("conv2d_1 (Conv2D)"), QString("│ conv2d_1 (Conv2D) │ (None, 2, 4, 4) │ 72 │"));
    QCOMPARE(row("(MaxPooling2D)"),
             QString("│ max_pooling2d (MaxPooling2D) │ (None, 1, 2, 4) │ 0 │"));
  }

  // LayerNormalization over an image's channels (gamma and beta) and over a Dense's units (beta
  // only, epsilon 0.01), as Keras 3.16 writes them: the config's keys and its built axis ([3],
  // [1]), gamma and beta in layers/<name>/vars, the checker's NumPy normalization giving the
  // predictions, the file read back with the same numbers and the summary's parameter counts.
  void layerNormalizationAsKerasWritesIt() {
    set_random_seed(9);
    LayerSpec norm;
    norm.class_name = "LayerNormalization";
    LayerSpec norm2 = norm;
    norm2.scale_gamma = false;
    norm2.epsilon = 0.01;
    QString checker;
    bool same = false;
    const ModelFile back = normalizedAndReadBack(norm, norm2, "n1", &checker, &same);
    QCOMPARE(checker, QString("ok"));
    QVERIFY(same);
    QCOMPARE(run_python({"-c",
                         "import io, json, sys, zipfile, h5py\n"
                         "z = zipfile.ZipFile(sys.argv[1])\n"
                         "layers = json.loads(z.read('config.json'))['config']['layers']\n"
                         "for i in (1, 4):\n"
                         "    k = layers[i]['config']\n"
                         "    print(k['axis'], k['epsilon'], k['center'], k['scale'])\n"
                         "h = h5py.File(io.BytesIO(z.read('model.weights.h5')), 'r')\n"
                         "print(sorted(h['layers/layer_normalization/vars']), "
                         "h['layers/layer_normalization/vars/0'].shape, "
                         "sorted(h['layers/layer_normalization_1/vars']), "
                         "h['layers/layer_normalization_1/vars/0'].shape)\n",
                         QString::fromStdString(path("n1.keras"))}),
             QString("[3] 0.001 True True\n"
                     "[1] 0.01 True False\n"
                     "['0', '1'] (2,) ['0'] (6,)"));
    QCOMPARE(back.config.layers[1].class_name, std::string("LayerNormalization"));
    QCOMPARE(back.config.layers[1].axis, std::vector<int64_t>{3});
    QCOMPARE(back.config.layers[4].scale_gamma, false);
    QCOMPARE(back.config.layers[4].epsilon, 0.01);
    const std::string summary = Sequential(back.config).summary();
    const auto row = [&](const QString& layer) { return summaryRow(summary, layer); };
    // Keras's table wraps a name and class wider than its column: "(LayerNormalization)" goes
    // on a line of its own.
    QCOMPARE(row("layer_normalization "), QString("│ layer_normalization │ (None, 5, 2, 2) │ 4 │"));
    QCOMPARE(row("layer_normalization_1 "), QString("│ layer_normalization_1 │ (None, 6) │ 6 │"));
  }

  // BatchNormalization over an image's channels and over a Dense's units (no gamma, momentum
  // 0.9), as Keras 3.16 writes them: the config's keys, gamma, beta, moving_mean and
  // moving_variance in layers/<name>/vars (the moving statistics moved by training), the
  // checker's NumPy inference (by the moving statistics) giving the predictions, the optimizer
  // keeping slots for the trainable variables alone, and the summary's non-trainable count.
  void batchNormalizationAsKerasWritesIt() {
    set_random_seed(10);
    LayerSpec norm;
    norm.class_name = "BatchNormalization";
    LayerSpec norm2 = norm;
    norm2.scale_gamma = false;
    norm2.momentum = 0.9;
    QString checker;
    bool same = false;
    const ModelFile back = normalizedAndReadBack(norm, norm2, "b1", &checker, &same);
    QCOMPARE(checker, QString("ok"));
    QVERIFY(same);
    QCOMPARE(run_python({"-c",
                         "import io, json, sys, zipfile, h5py\n"
                         "z = zipfile.ZipFile(sys.argv[1])\n"
                         "layers = json.loads(z.read('config.json'))['config']['layers']\n"
                         "k = layers[4]['config']\n"
                         "print(k['axis'], k['momentum'], k['scale'], k['center'])\n"
                         "h = h5py.File(io.BytesIO(z.read('model.weights.h5')), 'r')\n"
                         "v = h['layers/batch_normalization/vars']\n"
                         "print(sorted(v), v['2'][()].any(), (v['3'][()] != 1).any())\n"
                         "print(len(h['optimizer/vars']))\n",
                         QString::fromStdString(path("b1.keras"))}),
             // Adam: the iteration count and the learning rate, then m and v for each trainable
             // variable (gamma, beta, beta, and the two Dense layers' kernels and biases), none
             // for the moving statistics: 2 + 2 * 7.
             QString("-1 0.9 False True\n"
                     "['0', '1', '2', '3'] True True\n"
                     "16"));
    QCOMPARE(back.config.layers[4].class_name, std::string("BatchNormalization"));
    QCOMPARE(back.config.layers[4].momentum, 0.9);
    QCOMPARE(back.config.layers[4].scale_gamma, false);
    const std::string summary = Sequential(back.config).summary();
    QVERIFY2(summaryRow(summary, "batch_normalization ").contains("│ 8 │"), summary.c_str());
    QVERIFY2(summaryRow(summary, "batch_normalization_1 ").contains("│ 18 │"), summary.c_str());
    // 2 x 2 + 6 x 2 moving statistics.
    QVERIFY2(summaryRow(summary, "Non-trainable params").contains("16 (64.00 B)"), summary.c_str());
  }

  // Read back: the config, compile options, weights (bit for bit), statistics (through float32,
  // as Keras holds them) and the optimizer state.
  void readsBackWhatItWrites() {
    set_random_seed(4);
    Matrix x, y;
    fixtures::make_data(x, y, 4, 3);
    Sequential m(mlp());
    fixtures::compile(m, optimizer("AMSGrad"));
    m.data_info = ModelData{{}, {}, {0.25, 1.0, -3.0, 7.5}, {1.0, 2.0, 0.125, 3.0}};
    m.fit(x, y, two_epochs());
    const ModelFile saved = m.model_file();
    write_model_file(saved, path("r.keras"));
    const ModelFile back = read_model_file(path("r.keras"));
    QCOMPARE(back.config.layers.size(), saved.config.layers.size());
    for (size_t i = 1; i < back.config.layers.size(); ++i) {
      QCOMPARE(back.config.layers[i].units, saved.config.layers[i].units);
      QCOMPARE(back.config.layers[i].activation, saved.config.layers[i].activation);
    }
    QVERIFY(back.compile);
    QCOMPARE(back.compile->optimizer.class_name, std::string("Adam"));
    QVERIFY(back.compile->optimizer.amsgrad);
    QCOMPARE(back.compile->loss.name, saved.compile->loss.name);
    QCOMPARE(back.weights.size(), saved.weights.size());
    for (size_t i = 0; i < saved.weights.size(); ++i) {
      QCOMPARE(back.weights[i].path, saved.weights[i].path);
      QCOMPARE(back.weights[i].shape, saved.weights[i].shape);
      QVERIFY(back.weights[i].values == saved.weights[i].values);
    }
    QVERIFY(back.data);
    for (size_t f = 0; f < 4; ++f) {
      QCOMPARE(back.data->mean[f], static_cast<double>(static_cast<float>(saved.data->mean[f])));
      QVERIFY(std::abs(back.data->stddev[f] - saved.data->stddev[f]) <=
              1e-7 * saved.data->stddev[f]);
    }
    QVERIFY(back.optimizer && saved.optimizer);
    QCOMPARE(back.optimizer->iterations, saved.optimizer->iterations);
    QCOMPARE(back.optimizer->iterations, int64_t{14});  // 2 epochs of 7 batches
    QCOMPARE(*back.optimizer->learning_rate, 0.01f);
    // AMSGrad: m and v of each of the 6 variables, then the 6 velocity_hat.
    QCOMPARE(back.optimizer->slot_variables.size(), size_t{18});
    for (size_t i = 0; i < 18; ++i)
      QVERIFY(back.optimizer->slot_variables[i].values ==
              saved.optimizer->slot_variables[i].values);
    QCOMPARE(saved.optimizer->slot_variables[1].path,
             std::string("sequential/dense/kernel velocity"));
    QCOMPARE(saved.optimizer->slot_variables[12].path,
             std::string("sequential/dense/kernel velocity_hat"));
  }

  // Training from a .keras (or .weights.h5) file continues exactly where the model stopped: the
  // same history and weights, bit for bit, as the model that kept training in memory.
  void continuesIdentically_data() {
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<QString>("strategy");
    QTest::addColumn<QString>("file");
    for (const char* o : {"SGD+momentum", "Adam", "AMSGrad", "RMSprop", "Adagrad"})
      QTest::newRow(o) << o << "one device"
                       << "c.keras";
    QTest::newRow("weights file") << "Adam"
                                  << "one device"
                                  << "c.weights.h5";
    QTest::newRow("DataParallel") << "Adam"
                                  << "DataParallel 2"
                                  << "c.keras";
    QTest::newRow("ModelParallel Adam") << "Adam"
                                        << "ModelParallel 1x2"
                                        << "c.keras";
    QTest::newRow("ModelParallel RMSprop") << "RMSprop"
                                           << "ModelParallel 1x2"
                                           << "c.keras";
  }
  void continuesIdentically() {
    QFETCH(QString, optimizer);
    QFETCH(QString, strategy);
    QFETCH(QString, file);
    set_random_seed(11);
    Matrix x, y;
    fixtures::make_data(x, y, 4, 3);
    Sequential a(mlp());
    fixtures::compile(a, ::optimizer(optimizer));
    distribute(a, strategy);
    a.fit(x, y, two_epochs());
    const std::string saved = path(file.toUtf8().constData());
    write_model_file(a.model_file(), saved);
    const History kept = a.fit(x, y, two_epochs());

    const ModelFile f =
        file.endsWith(".keras") ? read_model_file(saved) : read_weights_file(saved, a.model_file());
    Sequential b(f.config);
    b.build(4);
    b.compile(f.compile ? *f.compile : a.compile_options());
    distribute(b, strategy);
    b.set_weights(f.weights, saved);
    QVERIFY(f.optimizer);
    b.set_optimizer_state(*f.optimizer, saved);
    const History resumed = b.fit(x, y, two_epochs());
    QVERIFY(resumed.history == kept.history);
    const auto wa = a.get_weights(), wb = b.get_weights();
    for (size_t i = 0; i < wa.size(); ++i)
      QVERIFY2(wa[i].values == wb[i].values, wa[i].path.c_str());
    QCOMPARE(b.optimizer()->iterations(), a.optimizer()->iterations());
  }

  // A file as Keras writes it (the torch backend's optimizer module, a shared dtype policy, the
  // demo of keras-file-format.md) opens with its weights, compile options and optimizer state.
  void readsWhatKerasWrites() {
    const ModelFile f = read_model_file(variant("keras_demo.keras"));
    QCOMPARE(f.config.layers.size(), size_t{3});
    QCOMPARE(f.config.layers[1].units, int64_t{3});
    QCOMPARE(f.config.layers[2].activation, std::string("sigmoid"));
    QVERIFY(f.compile);
    QCOMPARE(f.compile->optimizer.class_name, std::string("Adam"));
    std::ifstream in(variant("keras_demo_weights.json"));
    const auto expected = nlohmann::json::parse(in);
    QCOMPARE(f.weights.size(), expected.size());
    for (size_t i = 0; i < f.weights.size(); ++i) {
      QCOMPARE(f.weights[i].path, expected[i]["path"].get<std::string>());
      const auto values = expected[i]["values"].get<std::vector<double>>();
      for (size_t k = 0; k < values.size(); ++k)
        QCOMPARE(f.weights[i].values[k], static_cast<float>(values[k]));
    }
    QVERIFY(f.optimizer);
    QCOMPARE(f.optimizer->iterations, int64_t{4});
    QCOMPARE(f.optimizer->slot_variables.size(), size_t{8});
    Sequential m(f.config);
    m.build(4);
    m.compile(*f.compile);
    m.set_weights(f.weights, "demo");
    m.set_optimizer_state(*f.optimizer, "demo");
    QCOMPARE(m.optimizer()->iterations(), int64_t{4});
    const auto state = m.optimizer_state();
    QCOMPARE(state->slot_variables[2].values.front(), 0.01f * 4);  // optimizer/vars/4

    for (const char* ok : {"deflated_no_metadata.keras", "untrained.keras"})
      QVERIFY(read_model_file(variant(ok)).weights.size() == 4);
    QVERIFY(!read_model_file(variant("untrained.keras")).optimizer);
    const ModelFile n = read_model_file(variant("normalization_in_config.keras"));
    QVERIFY(n.data);
    QCOMPARE(n.data->mean, (std::vector<double>{1, 2, 3, 4}));
    QCOMPARE(n.data->stddev, (std::vector<double>{2, 2, 1, 0.5}));
    QCOMPARE(n.config.layers.size(), size_t{3});  // the Normalization is the statistics

    const ModelFile w = read_weights_file(variant("demo.weights.h5"), f);
    QCOMPARE(w.weights.size(), size_t{4});
    QVERIFY(w.weights[0].values == f.weights[0].values);
  }

  void refusesWithASentence_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("sentence");
    QTest::newRow("not a zip") << "plain_text.keras"
                               << "plain_text.keras: is not a .keras file";
    QTest::newRow("truncated") << "truncated.keras"
                               << "truncated.keras: is not a .keras file";
    QTest::newRow("no config") << "no_config.keras"
                               << "has no config.json";
    QTest::newRow("no weights") << "no_weights.keras"
                                << "has no model.weights.h5";
    QTest::newRow("bad JSON") << "bad_config_json.keras"
                              << "config.json: line 1, column 33";
    QTest::newRow("LSTM")
        << "lstm.keras"
        << "config.layers[1].class_name: \"LSTM\" is not supported by fitbench; expected one "
           "of: InputLayer, Dense, Conv2D, MaxPooling2D, AveragePooling2D, Activation";
    QTest::newRow("activation") << "unknown_activation.keras"
                                << "\"mish\" is not supported";
    QTest::newRow("not HDF5") << "not_hdf5.keras"
                              << "model.weights.h5: is not an HDF5 file";
    QTest::newRow("shape") << "wrong_shape.keras"
                           << "layers/dense/vars/0: has shape (3, 4) but the model's variable "
                              "has shape (4, 3)";
    QTest::newRow("missing variable")
        << "missing_variable.keras"
        << "layers/dense_1/vars: holds 1 variable but the layer \"dense_1\" has 2";
    QTest::newRow("renamed group") << "renamed_group.keras"
                                   << "layers/dense_1/vars: is missing";
    QTest::newRow("strings") << "string_dataset.keras"
                             << "holds neither floats nor integers";
    QTest::newRow("weights alone") << "demo.weights.h5"
                                   << "holds weights only";
    // Sizes a damaged file claims are refused before memory is taken for them.
    QTest::newRow("slot claims 10^10 floats")
        << "huge_slot.keras"
        << "optimizer/vars/9: holds more values than any variable of the model";
    QTest::newRow("unstored kernel")
        << "unstored_kernel.keras"
        << "model.weights.h5: layers/dense/vars/0: declares 12 values of 4 bytes but stores "
           "only 0 bytes of them (the file is damaged)";
    QTest::newRow("model over 1 GiB")
        << "huge_model.keras"
        << "config.layers[2].config.units: is too large: with this layer the model's variables "
           "hold 400100000 floats, over fitbench's limit of 268435456 floats (1 GiB) per model";
    QTest::newRow("zip claims 3 GB") << "size_claim.keras"
                                     << "size_claim.keras: config.json: is damaged";
  }
  void refusesWithASentence() {
    QFETCH(QString, file);
    QFETCH(QString, sentence);
    const std::string message = refusal(variant(file.toUtf8().constData()));
    QVERIFY2(message.find(sentence.toStdString()) != std::string::npos, message.c_str());
  }

  // Files damaged by mutation that once crashed or hung HDF5's global heap reader (the optimizer
  // group's variable-length name attribute, which fitbench no longer reads): each is read or
  // refused with a sentence.
  void damagedFilesNeverCrash_data() {
    QTest::addColumn<QString>("file");
    for (const QString& f :
         QDir(FITBENCH_SOURCE_DIR "/tests/data/keras_damaged").entryList(QDir::Files))
      QTest::newRow(qPrintable(f))
          << QStringLiteral(FITBENCH_SOURCE_DIR "/tests/data/keras_damaged/") + f;
  }
  void damagedFilesNeverCrash() {
    QFETCH(QString, file);
    ModelSpec blobs;
    blobs.name = "blobs";
    blobs.layers = {fixtures::input(2), fixtures::dense(16, "relu"), fixtures::dense(3, "softmax")};
    Sequential like(blobs);
    like.build(2);
    try {
      const ModelFile f = read_weights_file(file.toStdString(), like.model_file());
      QVERIFY(!f.weights.empty());
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find(file.toStdString()) == 0, e.what());
    }
  }

  // An object header that declares a size HDF5 would allocate 4 GiB for (a fuzz finding): the
  // group it belongs to is said to be damaged, not missing.
  void damagedObjectHeaderIsSaid() {
    const QString file = QStringLiteral(FITBENCH_SOURCE_DIR
                                        "/tests/data/keras_damaged/oom_object_header_1.weights.h5");
    try {
      read_weights_file(file.toStdString(), xor_like());
      QFAIL("a file with a damaged object header was read");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("oom_object_header_1.weights.h5: layers/dense/vars: "
                                          "cannot be read (the file is damaged here") !=
                   std::string::npos,
               e.what());
    }
  }

  // The check's answers, from a shell as the check program (its request is the script): a
  // program that ends with status 0 lets the caller read, and so does one that refuses the request
  // (another build's) or cannot be run; one that dies, fails, runs past its time or takes more than
  // its memory is a sentence naming the place and the library.
  void childCheckAnswers() {
    const auto answer = [](double limit, const std::string& script,
                           const std::string& program = "/bin/sh", int64_t bytes = 0) {
      try {
        check_in_child("f.h5", "HDF5", limit, bytes, program, {script, "\n"});
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("read");
    };
    QCOMPARE(answer(60, "exit 0"), std::string("read"));
    QCOMPARE(answer(60, "exit " + std::to_string(kCheckRequestRefused)), std::string("read"));
    QCOMPARE(answer(60, "exit 0", ""), std::string("read"));
    QCOMPARE(answer(60, "exit 0", "/nonexistent/fitbench-hdf5-check"), std::string("read"));
    // The request reaches the program whole, in pieces of any size.
    const std::string big(3 << 20, '#');
    QCOMPARE(answer(60, big + "\nexit 0"), std::string("read"));
    QCOMPARE(answer(60, "exit 3"),
             std::string("f.h5: is a damaged HDF5 file: the HDF5 library fails on it (exit status "
                         "3), so nothing was read (fitbench tries such files in a separate "
                         "process first)"));
    const std::string crash = answer(60, "kill -SEGV $$");
    QVERIFY2(crash.find("f.h5: is a damaged HDF5 file: the HDF5 library crashes on it "
                        "(Segmentation fault)") == 0,
             crash.c_str());
    const std::string loop = answer(0.2, "exec sleep 30");
    QCOMPARE(loop, std::string("f.h5: was not read: the HDF5 library had not finished with it "
                               "after 0.2 s (a damaged file can make it loop), so it was stopped"));
    // tail holds its one endless line in memory: stopped at the memory limit, long before the
    // time limit.
    QCOMPARE(answer(600, "exec tail /dev/zero", "/bin/sh", 64 << 20),
             std::string("f.h5: was not read: the HDF5 library took more than 64.0 MiB of memory "
                         "for it (a damaged file can make it allocate without end), so it was "
                         "stopped"));
    // A program within its memory answers as without a limit.
    QCOMPARE(answer(60, "exit 0", "/bin/sh", 64 << 20), std::string("read"));
    QCOMPARE(answer(60, "exit 3", "/bin/sh", 64 << 20).find("f.h5: is a damaged HDF5 file"),
             size_t{0});
  }

  // Reading while other threads allocate, as the window's threads do: the check program is a
  // fresh process, not a copy of this one, which could inherit a lock another thread held in the
  // allocator and wait on it forever (the copy under AddressSanitizer did, about once in a few
  // hundred reads). Each read takes well under the check's minute.
  void readsWhileOtherThreadsAllocate() {
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (int t = 0; t < 3; ++t)
      busy.emplace_back([&stop] {
        while (!stop) {
          std::vector<std::string> held;
          for (int i = 0; i < 64; ++i) held.emplace_back(static_cast<size_t>(40 + 37 * i), 'x');
        }
      });
    const std::string file = variant("keras_demo.keras");
    QElapsedTimer slowest;
    qint64 longest = 0;
    for (int i = 0; i < 100; ++i) {
      slowest.start();
      QCOMPARE(read_model_file(file).weights.size(), size_t{4});
      longest = std::max(longest, slowest.elapsed());
    }
    stop = true;
    for (std::thread& t : busy) t.join();
    QVERIFY2(longest < 30000, qPrintable(QString("a read took %1 ms").arg(longest)));
  }

  // Damaged local heaps that make Debian's HDF5 fail in ways fitbench cannot check for before it
  // (fuzz findings), each refused with a sentence, as a weights file and inside a .keras archive,
  // while this process goes on: one makes HDF5 read through a null pointer (h5py crashes on it
  // too); in the other the free list leads back to itself, and HDF5 allocates one list entry after
  // another without end (a fuzz finding of that kind took 15 GB in the minute the check then had),
  // so the check program is stopped at its memory limit.
  void hdf5TroubleIsRefused_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");
    // "crashes on it (Segmentation fault)"; under AddressSanitizer "fails on it (exit status 1)".
    QTest::newRow("crash") << "hdf5_null_read"
                           << ": is a damaged HDF5 file: the HDF5 library ";
    QTest::newRow("endless allocation") << "heap_free_list_loop"
                                        << ": was not read: the HDF5 library took more than ";
  }
  void hdf5TroubleIsRefused() {
    QFETCH(QString, file);
    QFETCH(QString, expected);
    const std::string weights =
        FITBENCH_SOURCE_DIR "/tests/data/keras_damaged/" + file.toStdString() + ".weights.h5";
    try {
      read_weights_file(weights, xor_like());
      QFAIL("the file was read");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find(weights + expected.toStdString()) == 0, e.what());
    }
    const std::string archive =
        archive_with_weights((file + ".keras").toUtf8().constData(), weights);
    const std::string message = refusal(archive);
    QVERIFY2(message.find(archive + ": model.weights.h5" + expected.toStdString()) == 0,
             message.c_str());
  }

  void refusesDamagedWeightsFile() {
    const ModelFile like = read_model_file(variant("keras_demo.keras"));
    try {
      read_weights_file(variant("truncated.weights.h5"), like);
      QFAIL("a truncated weights file was read");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("truncated.weights.h5: is a damaged HDF5 file") !=
                   std::string::npos,
               e.what());
    }
  }

  // The optimizer state must belong to the model: another slot count is refused.
  void refusesForeignOptimizerState() {
    const ModelFile f = read_model_file(variant("keras_demo.keras"));
    Sequential m(f.config);
    m.build(4);
    CompileOptions sgd = *f.compile;
    sgd.optimizer = fixtures::optimizer("SGD", 0.1, 0.9);
    m.compile(sgd);
    try {
      m.set_optimizer_state(*f.optimizer, "demo.keras");
      QFAIL("an Adam state was loaded into SGD");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("holds 8 optimizer slot variables but the SGD "
                                          "optimizer of this model has 4") != std::string::npos,
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestKerasFile)
#include "tst_keras_file.moc"
