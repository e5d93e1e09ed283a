// Finite-difference gradient checks for every layer and activation, through Network's forward and
// backward, plus the regularization gradient and dropout's mask behaviour.
#include <QTest>

#include "core/base/error.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/layout/model_parallel_plan.h"
#include "core/nn/activations.h"
#include "core/nn/network.h"
#include "core/python/random.h"
#include "tests/core/fixtures.h"

using namespace fitbench;

Q_DECLARE_METATYPE(std::vector<fitbench::LayerSpec>)
Q_DECLARE_METATYPE(fitbench::Shape)

namespace {

LayerSpec dense(int64_t units, const std::string& activation, bool bias = true) {
  LayerSpec l;
  l.class_name = "Dense";
  l.units = units;
  l.activation = activation;
  l.use_bias = bias;
  return l;
}

struct Fixture {
  Network net;
  std::vector<Matrix> values;
  std::vector<Matrix*> ptrs;
  std::vector<const Matrix*> cptrs;
  Matrix x, r;  // loss = sum(output .* r)
  Workspace ws;
  ForwardContext ctx;  // inference unless a test says training (BatchNormalization's batch)

  Fixture(const ModelSpec& spec, int64_t in, Index rows, uint64_t seed) : net(spec) {
    net.build(in);
    Rng rng(seed);
    for (const auto& v : net.variables()) {
      Matrix m(matrix_rows(v.shape), matrix_cols(v.shape));
      for (Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(rng.uniform(-0.8, 0.8));
      values.push_back(m);
    }
    for (auto& v : values) {
      ptrs.push_back(&v);
      cptrs.push_back(&v);
    }
    x.resize(rows, in);
    for (Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(rng.uniform(-1.5, 1.5));
    r.resize(rows, net.output_units());
    for (Index i = 0; i < r.size(); ++i) r.data()[i] = static_cast<float>(rng.uniform(-1, 1));
    net.reserve(ws, rows);
  }

  double loss(const Matrix& input) {
    net.forward(cptrs, input, ws, ctx);
    return static_cast<double>(net.output(ws, input.rows()).cwiseProduct(r).sum());
  }

  // dL/d(element i of variable v) by central differences of step eps, in float32 weights.
  double numeric(size_t v, Index i, double eps) {
    float& w = values[v].data()[i];
    const float saved = w;
    w = saved + static_cast<float>(eps);
    const double up = loss(x);
    w = saved - static_cast<float>(eps);
    const double down = loss(x);
    w = saved;
    return (up - down) / (2 * eps);
  }

  // Analytic gradients of loss w.r.t. every variable and the input.
  std::vector<Matrix> grads(Matrix& dx) {
    std::vector<Matrix> g;
    for (auto& v : values) g.push_back(Matrix::Zero(v.rows(), v.cols()));
    std::vector<Matrix*> gp;
    for (auto& m : g) gp.push_back(&m);
    loss(x);
    net.output_grad(ws, x.rows()) = r;
    net.backward(cptrs, x, ws, x.rows(), gp, ctx);
    // dL/dx via a model with an identity first layer is not exposed; estimate it numerically
    // through the first layer's gradient instead (checked by the variable gradients).
    dx.resize(0, 0);
    return g;
  }
};

LayerSpec shaped_input(const Shape& shape) {
  LayerSpec l;
  l.class_name = "InputLayer";
  l.shape = shape;
  return l;
}
LayerSpec flatten() {
  LayerSpec l;
  l.class_name = "Flatten";
  return l;
}
LayerSpec reshape(const Shape& target) {
  LayerSpec l;
  l.class_name = "Reshape";
  l.target_shape = target;
  return l;
}

LayerSpec gap2d() {
  LayerSpec l;
  l.class_name = "GlobalAveragePooling2D";
  return l;
}

LayerSpec rescaling(double scale, double offset) {
  LayerSpec l;
  l.class_name = "Rescaling";
  l.scale = scale;
  l.offset = offset;
  return l;
}

LayerSpec conv2d(int64_t filters, Shape kernel, Shape strides, const std::string& padding,
                 const std::string& activation, bool bias = true) {
  LayerSpec l;
  l.class_name = "Conv2D";
  l.filters = filters;
  l.kernel_size = kernel;
  l.strides = strides;
  l.padding = padding;
  l.activation = activation;
  l.use_bias = bias;
  return l;
}

LayerSpec pool2d(const std::string& kind, Shape pool, Shape strides, const std::string& padding) {
  LayerSpec l;
  l.class_name = kind;
  l.pool_size = pool;
  l.strides = strides;
  l.padding = padding;
  return l;
}

LayerSpec layer_norm(bool scale = true, bool center = true) {
  LayerSpec l;
  l.class_name = "LayerNormalization";
  l.scale_gamma = scale;
  l.center = center;
  return l;
}

LayerSpec batch_norm(bool scale = true, bool center = true) {
  LayerSpec l = layer_norm(scale, center);
  l.class_name = "BatchNormalization";
  return l;
}

// ModelParallel on a 1 x 2 mesh, the first Dense sharded by its units.
DistributionSpec model_parallel_1x2() {
  DistributionSpec mp;
  mp.class_name = "ModelParallel";
  mp.mesh_shape = {1, 2};
  mp.axis_names = {"batch", "model"};
  mp.layout_map = {{"dense/kernel", {"", "model"}}, {"dense/bias", {"model"}}};
  return mp;
}

// Relative error with an absolute floor (float32 central differences).
bool close(double analytic, double numeric, double tol) {
  return std::abs(analytic - numeric) <= tol * std::max(1.0, std::abs(numeric));
}

// Every variable's gradient against central differences (relative 2e-2); the number of
// elements checked, 0 after a failure. A step of 1e-2 may cross a kink of a maximum (two pixels
// of a pooling window swapping places): max pooling is checked with 1e-3.
int checked_gradients(Fixture& f, double step = 1e-2) {
  Matrix dx;
  const auto grads = f.grads(dx);
  int checked = 0;
  for (size_t v = 0; v < f.values.size(); ++v)
    for (Index i = 0; i < f.values[v].size(); ++i) {
      const double numeric = f.numeric(v, i, step);
      if (!close(grads[v].data()[i], numeric, 2e-2)) {
        qWarning("variable %zu element %td: analytic %g, numeric %g", v,
                 static_cast<std::ptrdiff_t>(i), double(grads[v].data()[i]), numeric);
        return 0;
      }
      ++checked;
    }
  return checked;
}

// `spec` (6 features, 3 classes) trained with Adam for 3 epochs learns on one device, and
// DataParallel on 3 devices and ModelParallel on a 1 x 2 mesh train as one device does.
void check_strategies(const ModelSpec& spec) {
  const FitOptions fit{.epochs = 3, .batch_size = 10, .shuffle = true, .verbose = 0};
  const OptimizerSpec adam = fixtures::optimizer("Adam", 0.01);
  const DistributionSpec mp = model_parallel_1x2();
  const fixtures::Run one = fixtures::train(spec, 6, 3, adam, nullptr, fit, 1, true);
  QVERIFY(one.history.history.at("loss").back() < one.history.history.at("loss").front());
  const std::vector<std::pair<QString, std::function<void(Sequential&)>>> setups = {
      {"DataParallel 3", [](Sequential& m) { use_data_parallel(m, 3); }},
      {"ModelParallel 1x2", [&](Sequential& m) { use_model_parallel(m, mp, 2, {}); }}};
  for (const auto& [name, distribute] : setups) {
    const fixtures::Run many = fixtures::train(spec, 6, 3, adam, distribute, fit, 1, true);
    QVERIFY2(fixtures::max_rel_diff(many, one) < 1e-5, qPrintable(name));
  }
}

// The sentence building `layers` on samples of `shape` throws, "" if none.
std::string build_error(const std::vector<LayerSpec>& layers, const Shape& shape) {
  try {
    ModelSpec spec;
    spec.layers = layers;
    Network net(spec);
    net.build(shape);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

class TestLayers : public QObject {
  Q_OBJECT
 private slots:
  void dense_gradients_data();
  void dense_gradients();
  void activation_layer_gradient();
  void regularization_gradient();
  void dropout_mask();
  void automatic_names();
  void activation_values();
  void reshaping_shapes();
  void reshaping_refusals_data();
  void reshaping_refusals();
  void reshaping_gradients();
  void flatten_trains_as_flat_input();
  void rescaling_values();
  void rescaling_gradients();
  void rescaling_refusals();
  void rescaling_trains_on_every_strategy();
  void global_average_pooling();
  void global_average_pooling_gradients();
  void global_average_pooling_trains_on_every_strategy();
  void layer_normalization_values_data();
  void layer_normalization_values();
  void layer_normalization_gradients_data();
  void layer_normalization_gradients();
  void layer_normalization_refusals();
  void layer_normalization_trains_on_every_strategy();
  void batch_normalization_values_data();
  void batch_normalization_values();
  void batch_normalization_gradients_data();
  void batch_normalization_gradients();
  void batch_normalization_frozen();
  void batch_normalization_on_every_strategy();
  void batch_normalization_per_device_statistics();
  void batch_normalization_device_error();
  void conv2d_values_data();
  void conv2d_values();
  void conv2d_gradients_data();
  void conv2d_gradients();
  void conv2d_refusals();
  void conv2d_sharded_along_output_channels_data();
  void conv2d_sharded_along_output_channels();
  void conv2d_glorot_counts_the_window();
  void conv2d_trains_on_every_strategy();
  void pooling_values_data();
  void pooling_values();
  void pooling_gradients_data();
  void pooling_gradients();
  void pooling_refusals();
  void pooling_trains_on_every_strategy();
};

void TestLayers::dense_gradients_data() {
  QTest::addColumn<QString>("activation");
  for (const char* a : {"linear", "relu", "sigmoid", "tanh", "softmax", "elu", "selu", "gelu",
                        "leaky_relu", "softplus", "silu", "swish"})
    QTest::newRow(a) << QString(a);
}

void TestLayers::dense_gradients() {
  QFETCH(QString, activation);
  ModelSpec spec;
  spec.layers = {dense(5, "tanh"), dense(3, activation.toStdString()),
                 dense(4, activation.toStdString(), false)};
  Fixture f(spec, 3, 6, 11);
  Matrix dx;
  const auto g = f.grads(dx);
  const double eps = 1e-2;
  int checked = 0;
  for (size_t v = 0; v < f.values.size(); ++v) {
    for (Index i = 0; i < f.values[v].size(); ++i) {
      const double numeric = f.numeric(v, i, eps);
      const double analytic = g[v].data()[i];
      if (!close(analytic, numeric, 2e-2))
        QFAIL(qPrintable(QString("%1 variable %2 element %3: analytic %4 numeric %5")
                             .arg(activation)
                             .arg(QString::fromStdString(f.net.variables()[v].path))
                             .arg(i)
                             .arg(analytic)
                             .arg(numeric)));
      ++checked;
    }
  }
  QCOMPARE(checked, 3 * 5 + 5 + 5 * 3 + 3 + 3 * 4);
}

void TestLayers::activation_layer_gradient() {
  // Dense -> Activation(softmax) -> Dense -> Activation(gelu): the gradient flows through
  // activation layers into the kernels before them.
  LayerSpec act;
  act.class_name = "Activation";
  act.activation = "softmax";
  LayerSpec act2 = act;
  act2.activation = "gelu";
  ModelSpec spec;
  spec.layers = {dense(4, "linear"), act, dense(2, "linear"), act2};
  Fixture f(spec, 3, 5, 3);
  Matrix dx;
  const auto g = f.grads(dx);
  const double eps = 1e-2;
  for (size_t v = 0; v < f.values.size(); ++v)
    for (Index i = 0; i < f.values[v].size(); ++i)
      QVERIFY2(close(g[v].data()[i], f.numeric(v, i, eps), 2e-2),
               qPrintable(QString("variable %1 element %2").arg(v).arg(i)));
}

void TestLayers::regularization_gradient() {
  LayerSpec l = dense(3, "linear");
  l.kernel_regularizer = {0.01, 0.02};
  l.bias_regularizer = {0.0, 0.5};
  ModelSpec spec;
  spec.layers = {l};
  Fixture f(spec, 2, 1, 5);
  std::vector<Matrix> g;
  std::vector<Matrix*> gp;
  for (auto& v : f.values) g.push_back(Matrix::Zero(v.rows(), v.cols()));
  for (auto& m : g) gp.push_back(&m);
  f.net.add_regularization_gradient(f.cptrs, gp);
  // loss = 0.01 * sum|K| + 0.02 * sum K^2 + 0.5 * sum b^2, by hand.
  double expected = 0.0;
  for (Index i = 0; i < f.values[0].size(); ++i) {
    const double k = f.values[0].data()[i];
    expected += 0.01 * std::abs(k) + 0.02 * k * k;
    QVERIFY(close(g[0].data()[i], 0.01 * (k > 0 ? 1 : -1) + 0.04 * k, 1e-5));
  }
  for (Index i = 0; i < f.values[1].size(); ++i) {
    const double b = f.values[1].data()[i];
    expected += 0.5 * b * b;
    QVERIFY(close(g[1].data()[i], 1.0 * b, 1e-5));
  }
  QVERIFY(close(f.net.regularization_loss(f.cptrs), expected, 1e-5));
}

void TestLayers::dropout_mask() {
  LayerSpec d;
  d.class_name = "Dropout";
  d.rate = 0.25;
  ModelSpec spec;
  spec.layers = {d};
  Network net(spec);
  net.build(200);
  Workspace ws;
  net.reserve(ws, 50);
  Matrix x = Matrix::Ones(50, 200);
  std::vector<const Matrix*> none;
  // Inference: identity.
  net.forward(none, x, ws, ForwardContext{});
  QCOMPARE(Matrix(net.output(ws, 50)), x);
  // Training: about a quarter zeroed, the rest scaled by 1 / 0.75, and the mask of a row does not
  // depend on the block it is computed in (what data parallelism relies on).
  ForwardContext ctx{.training = true, .step = 3, .row_offset = 0, .seed = 42};
  net.forward(none, x, ws, ctx);
  const Matrix whole = net.output(ws, 50);
  const double zeros = (whole.array() == 0.0f).count() / 10000.0;
  QVERIFY2(zeros > 0.22 && zeros < 0.28, qPrintable(QString::number(zeros)));
  QVERIFY(((whole.array() == 0.0f) || (whole.array() - 1.0f / 0.75f).abs() < 1e-6f).all());
  ctx.row_offset = 20;
  net.forward(none, x.bottomRows(30), ws, ctx);
  QCOMPARE(Matrix(net.output(ws, 30)), Matrix(whole.bottomRows(30)));
  ctx.step = 4;
  ctx.row_offset = 0;
  net.forward(none, x, ws, ctx);
  QVERIFY(Matrix(net.output(ws, 50)) != whole);
}

void TestLayers::automatic_names() {
  ModelSpec spec;
  LayerSpec named = dense(2, "relu");
  named.name = "dense_1";
  spec.layers = {dense(4, "relu"), named, dense(1, "sigmoid")};
  Network net(spec);
  net.build(3);
  QCOMPARE(net.layers()[0]->name(), std::string("dense"));
  QCOMPARE(net.layers()[1]->name(), std::string("dense_1"));
  QCOMPARE(net.layers()[2]->name(), std::string("dense_2"));
  QCOMPARE(net.variables()[0].path, std::string("sequential/dense/kernel"));
  QCOMPARE(net.variables()[5].path, std::string("sequential/dense_2/bias"));
}

void TestLayers::activation_values() {
  // Values of keras.activations at a few points (from their definitions, computed in double).
  Matrix z(1, 3);
  z << -1.0f, 0.5f, 2.0f;
  Matrix out(1, 3);
  auto check = [&](Activation a, std::array<double, 3> expected) {
    activation_forward(a, z, out);
    for (int i = 0; i < 3; ++i)
      QVERIFY2(std::abs(out(0, i) - expected[i]) < 1e-6,
               qPrintable(QString::fromStdString(activation_name(a))));
  };
  check(Activation::kSelu, {1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1),
                            1.0507009873554805 * 0.5, 1.0507009873554805 * 2});
  check(Activation::kGelu,
        {-1 * 0.15865525393145707, 0.5 * 0.6914624612740131, 2 * 0.9772498680518208});
  check(Activation::kLeakyRelu, {-0.2, 0.5, 2.0});
  check(Activation::kSoftplus,
        {std::log1p(std::exp(-1.0)), std::log1p(std::exp(0.5)), std::log1p(std::exp(2.0))});
  const double s = std::exp(-1.0) + std::exp(0.5) + std::exp(2.0);
  check(Activation::kSoftmax, {std::exp(-1.0) / s, std::exp(0.5) / s, std::exp(2.0) / s});
  check(Activation::kElu, {std::exp(-1.0) - 1, 0.5, 2.0});
}

void TestLayers::reshaping_shapes() {
  // keras.Sequential([Input((28, 28)), Reshape((-1, 7)), Reshape((7, 112)), Flatten(),
  // Dense(5)]): (None, 112, 7), (None, 7, 112), (None, 784), (None, 5).
  ModelSpec spec;
  spec.layers = {shaped_input({28, 28}), reshape({-1, 7}), reshape({7, 112}), flatten(),
                 dense(5, "relu")};
  Network net(spec);
  QCOMPARE(net.declared_input_units(), std::optional<int64_t>(784));
  net.build(784);  // a row of 784 values fills (28, 28)
  QCOMPARE(net.input_shape(), Shape({28, 28}));
  QCOMPARE(net.layer_shape(0), Shape({112, 7}));
  QCOMPARE(net.layer_shape(1), Shape({7, 112}));
  QCOMPARE(net.layer_shape(2), Shape({784}));
  QCOMPARE(net.layer_shape(3), Shape({5}));
  QCOMPARE(net.layer_units(1), int64_t{784});
  QCOMPARE(net.variables()[0].shape, Shape({784, 5}));
  QCOMPARE(net.layers()[0]->name(), std::string("reshape"));
  QCOMPARE(net.layers()[1]->name(), std::string("reshape_1"));
  QCOMPARE(net.layers()[2]->name(), std::string("flatten"));
  // Without an InputLayer the data's sample shape is the input's.
  ModelSpec bare;
  bare.layers = {flatten(), dense(3, "linear")};
  Network b(bare);
  b.build(Shape{4, 5});
  QCOMPARE(b.input_shape(), Shape({4, 5}));
  QCOMPARE(b.layer_shape(0), Shape({20}));
  QCOMPARE(b.variables()[0].shape, Shape({20, 3}));
  // A shape no memory could hold (read from a file, before any check) does not wrap around.
  QCOMPARE(shape_size({int64_t{1} << 40, int64_t{1} << 40}), std::numeric_limits<int64_t>::max());
  QCOMPARE(QString::fromStdString(
               build_error({shaped_input({int64_t{1} << 40, int64_t{1} << 40}), flatten()}, {1})),
           QString("model.config.layers[0].config.batch_shape: describes samples of more than "
                   "268435456 values, over fitbench's limit"));
}

void TestLayers::reshaping_refusals_data() {
  QTest::addColumn<std::vector<LayerSpec>>("layers");
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<QString>("error");
  const LayerSpec in = shaped_input({28, 28});
  LayerSpec softmax;
  softmax.class_name = "Activation";
  softmax.activation = "softmax";
  QTest::newRow("dense on an image")
      << std::vector<LayerSpec>{in, dense(5, "relu")} << Shape{784}
      << "model.config.layers[1]: this Dense layer receives (None, 28, 28): fitbench's Dense "
         "takes one axis of features, so add a Flatten layer before it (Keras would apply it to "
         "the last axis alone and output (None, 28, 5))";
  QTest::newRow("softmax on an image")
      << std::vector<LayerSpec>{in, softmax} << Shape{784}
      << "model.config.layers[1]: a softmax here would receive (None, 28, 28), and Keras's "
         "softmax runs over the last axis alone; fitbench's runs over one axis of features, so "
         "add a Flatten layer before it";
  QTest::newRow("reshape to fewer values")
      << std::vector<LayerSpec>{in, reshape({5, 5})} << Shape{784}
      << "model.config.layers[1].config.target_shape: (None, 5, 5) holds 25 values but the layer "
         "receives (None, 28, 28), 784 values; a reshape keeps the number of values";
  QTest::newRow("reshape, -1 not whole")
      << std::vector<LayerSpec>{in, reshape({-1, 5})} << Shape{784}
      << "model.config.layers[1].config.target_shape: cannot hold the 784 values of (None, 28, "
         "28): they are not a multiple of 5";
  QTest::newRow("reshape, two -1")
      << std::vector<LayerSpec>{in, reshape({-1, -1})} << Shape{784}
      << "model.config.layers[1].config.target_shape: may hold one -1 (a dimension to infer), "
         "not two";
  QTest::newRow("reshape, a 0")
      << std::vector<LayerSpec>{in, reshape({0, 4})} << Shape{784}
      << "model.config.layers[1].config.target_shape: must hold positive dimensions and at most "
         "one -1, got 0";
  QTest::newRow("reshape, no dimension")
      << std::vector<LayerSpec>{in, reshape({})} << Shape{784}
      << "model.config.layers[1].config.target_shape: must hold one to eight dimensions, e.g. "
         "[7, 112] or [-1, 28]";
  QTest::newRow("image of another size")
      << std::vector<LayerSpec>{in, flatten()} << Shape{10, 10}
      << "model: the model's input has shape (None, 28, 28), 784 values per sample, but the "
         "data's samples have 100 (shape (None, 10, 10))";
  QTest::newRow("input shape with a 0")
      << std::vector<LayerSpec>{shaped_input({28, 0}), flatten()} << Shape{784}
      << "model.config.layers[0].config.batch_shape: must describe one to eight positive "
         "dimensions after the batch's, e.g. [null, 4] or [null, 28, 28]";
}

void TestLayers::reshaping_refusals() {
  QFETCH(std::vector<LayerSpec>, layers);
  QFETCH(Shape, shape);
  QFETCH(QString, error);
  QCOMPARE(QString::fromStdString(build_error(layers, shape)), error);
}

void TestLayers::reshaping_gradients() {
  // Input((2, 3)) -> Reshape((3, 2)) -> Flatten -> Dense(4, tanh) -> Dense(2): the gradient
  // passes the reshaping layers unchanged, and every output equals the flat model's
  // Input((6,)) -> Dense(4, tanh) -> Dense(2) with the same weights, bit for bit.
  ModelSpec shaped;
  shaped.layers = {shaped_input({2, 3}), reshape({3, 2}), flatten(), dense(4, "tanh"),
                   dense(2, "linear")};
  ModelSpec flat;
  flat.layers = {dense(4, "tanh"), dense(2, "linear")};
  Fixture f(shaped, 6, 5, 9);
  Fixture g(flat, 6, 5, 9);
  QCOMPARE(f.values.size(), g.values.size());
  for (size_t v = 0; v < f.values.size(); ++v) QCOMPARE(f.values[v], g.values[v]);
  QCOMPARE(f.loss(f.x), g.loss(g.x));
  Matrix dx;
  const auto grads = f.grads(dx);
  const auto flat_grads = g.grads(dx);
  const double eps = 1e-2;
  int checked = 0;
  for (size_t v = 0; v < f.values.size(); ++v) {
    QCOMPARE(grads[v], flat_grads[v]);
    for (Index i = 0; i < f.values[v].size(); ++i) {
      QVERIFY2(close(grads[v].data()[i], f.numeric(v, i, eps), 2e-2),
               qPrintable(QString("variable %1 element %2").arg(v).arg(i)));
      ++checked;
    }
  }
  QCOMPARE(checked, 6 * 4 + 4 + 4 * 2 + 2);
}

void TestLayers::flatten_trains_as_flat_input() {
  // The trajectory of Input((2, 3)) -> Flatten -> Dense -> Dense is the flat model's, which the
  // trajectory tests check against the NumPy reference: on one device, DataParallel on 3 and
  // ModelParallel on a 1 x 2 mesh (Flatten runs whole on each device of the row).
  ModelSpec shaped;
  shaped.layers = {shaped_input({2, 3}), flatten(), dense(8, "relu"), dense(3, "softmax")};
  ModelSpec flat;
  flat.layers = {fixtures::input(6), dense(8, "relu"), dense(3, "softmax")};
  const FitOptions fit{.epochs = 3, .batch_size = 10, .shuffle = true, .verbose = 0};
  const OptimizerSpec adam = fixtures::optimizer("Adam", 0.01);
  const DistributionSpec mp = model_parallel_1x2();
  const std::vector<std::pair<QString, std::function<void(Sequential&)>>> setups = {
      {"one device", nullptr},
      {"DataParallel 3", [](Sequential& m) { use_data_parallel(m, 3); }},
      {"ModelParallel 1x2", [&](Sequential& m) { use_model_parallel(m, mp, 2, {}); }}};
  for (const auto& [name, distribute] : setups) {
    fixtures::Run a, b;
    try {
      a = fixtures::train(shaped, 6, 3, adam, distribute, fit, 1, true);
      b = fixtures::train(flat, 6, 3, adam, distribute, fit, 1, true);
    } catch (const InputError& e) {
      QFAIL(qPrintable(name + ": " + e.what()));
    }
    QVERIFY2(fixtures::max_rel_diff(a, b) == 0.0, qPrintable(name));
    QVERIFY2(a.history.history.at("loss").back() < a.history.history.at("loss").front(),
             qPrintable(name));
  }
}

void TestLayers::rescaling_values() {
  // Keras's float32 call: inputs * scale, rounded, then + offset, rounded; 1/255 and -0.5 are
  // not exact in float32, so a fused multiply-add would differ in some last bits.
  ModelSpec spec;
  spec.layers = {shaped_input({2, 3}), rescaling(1.0 / 255.0, -0.5)};
  Network net(spec);
  net.build(Shape{2, 3});
  QCOMPARE(net.layer_shape(0), (Shape{2, 3}));
  QCOMPARE(net.variables().size(), size_t{0});
  Matrix x(4, 6);
  for (Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>((i * 37) % 256);
  Workspace ws;
  net.reserve(ws, x.rows());
  net.forward({}, x, ws, ForwardContext{.training = true});
  const float scale = static_cast<float>(1.0 / 255.0), offset = -0.5f;
  for (Index i = 0; i < x.size(); ++i) {
    volatile float product = x.data()[i] * scale;  // stored: no contraction into an FMA
    const float expected = product + offset;
    QCOMPARE(net.output(ws, x.rows()).data()[i], expected);
  }
}

void TestLayers::rescaling_gradients() {
  // Dense(4, tanh) -> Rescaling(0.5, 0.1) -> Dense(2): the first kernel's gradient passes back
  // through the rescaling (dx = dy * scale), checked by central differences.
  ModelSpec spec;
  spec.layers = {fixtures::input(3), dense(4, "tanh"), rescaling(0.5, 0.1), dense(2, "linear")};
  Fixture f(spec, 3, 5, 21);
  QCOMPARE(checked_gradients(f), 3 * 4 + 4 + 4 * 2 + 2);
}

void TestLayers::rescaling_refusals() {
  QCOMPARE(
      QString::fromStdString(build_error(
          {fixtures::input(3), rescaling(std::numeric_limits<double>::infinity(), 0.0)}, Shape{3})),
      QStringLiteral(
          "model.config.layers[1].config.scale: must be a number a float32 holds, got inf"));
  QCOMPARE(
      QString::fromStdString(build_error({fixtures::input(3), rescaling(1.0, 1e39)}, Shape{3})),
      QStringLiteral(
          "model.config.layers[1].config.offset: must be a number a float32 holds, got 1e+39"));
}

void TestLayers::rescaling_trains_on_every_strategy() {
  // Rescaling(0.5, 0.25) before the Dense layers: DataParallel on 3 devices and ModelParallel on
  // a 1 x 2 mesh (Rescaling runs whole on each device of the row) train as one device does.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), rescaling(0.5, 0.25), dense(8, "relu"), dense(3, "softmax")};
  check_strategies(spec);
}

void TestLayers::layer_normalization_values_data() {
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<bool>("scale");
  QTest::addColumn<bool>("center");
  QTest::newRow("features") << Shape{5} << true << true;
  QTest::newRow("image channels") << Shape{2, 3, 4} << true << true;
  QTest::newRow("no gamma") << Shape{3, 4} << false << true;
  QTest::newRow("no beta") << Shape{3, 4} << true << false;
  QTest::newRow("neither") << Shape{6} << false << false;
}

void TestLayers::layer_normalization_values() {
  // Each group of the last axis against its normalization written out in double: the mean and
  // the population variance of the group, (x - mean) / sqrt(variance + 0.001) * gamma + beta.
  QFETCH(Shape, shape);
  QFETCH(bool, scale);
  QFETCH(bool, center);
  ModelSpec spec;
  spec.layers = {shaped_input(shape), layer_norm(scale, center)};
  Fixture f(spec, shape_size(shape), 3, 57);
  const Index channels = shape.back(), groups = shape_size(shape) / channels;
  QCOMPARE(f.net.layer_shape(0), shape);
  QCOMPARE(f.net.variables().size(), size_t(scale) + size_t(center));
  for (const auto& v : f.net.variables()) QCOMPARE(v.shape, (Shape{channels}));
  if (scale) QVERIFY(f.net.variables()[0].path.ends_with("/gamma"));
  if (center) QVERIFY(f.net.variables().back().path.ends_with("/beta"));
  f.loss(f.x);
  const Matrix y = f.net.output(f.ws, f.x.rows());
  for (Index r = 0; r < f.x.rows(); ++r)
    for (Index p = 0; p < groups; ++p) {
      double mean = 0.0, variance = 0.0;
      for (Index c = 0; c < channels; ++c) mean += f.x(r, p * channels + c);
      mean /= double(channels);
      for (Index c = 0; c < channels; ++c) variance += std::pow(f.x(r, p * channels + c) - mean, 2);
      variance /= double(channels);
      for (Index c = 0; c < channels; ++c) {
        double want = (f.x(r, p * channels + c) - mean) / std::sqrt(variance + 1e-3);
        if (scale) want *= f.values[0](0, c);
        if (center) want += f.values.back()(0, c);
        const float got = y(r, p * channels + c);
        if (std::abs(got - want) > 1e-5 * std::max(1.0, std::abs(want)))
          QFAIL(qPrintable(QString("row %1 group %2 channel %3: %4, want %5")
                               .arg(r)
                               .arg(p)
                               .arg(c)
                               .arg(got)
                               .arg(want)));
      }
    }
}

void TestLayers::layer_normalization_gradients_data() {
  QTest::addColumn<bool>("scale");
  QTest::addColumn<bool>("center");
  QTest::newRow("gamma and beta") << true << true;
  QTest::newRow("gamma") << true << false;
  QTest::newRow("beta") << false << true;
}

void TestLayers::layer_normalization_gradients() {
  // Dense(12, tanh) -> Reshape((3, 4)) -> LayerNormalization -> Flatten -> Dense(2): gamma's,
  // beta's and every Dense variable's gradient against central differences, so the input
  // gradient through the normalization is checked through the first Dense's.
  QFETCH(bool, scale);
  QFETCH(bool, center);
  ModelSpec spec;
  spec.layers = {fixtures::input(3),        dense(12, "tanh"), reshape({3, 4}),
                 layer_norm(scale, center), flatten(),         dense(2, "linear")};
  Fixture f(spec, 3, 4, 43);
  int64_t expected = 0;
  for (const auto& v : f.net.variables()) expected += shape_size(v.shape);
  QCOMPARE(checked_gradients(f), static_cast<int>(expected));
}

void TestLayers::layer_normalization_refusals() {
  LayerSpec second = layer_norm();
  second.axis = {1};
  QCOMPARE(QString::fromStdString(build_error({shaped_input({3, 4}), second}, Shape{3, 4})),
           QStringLiteral("model.config.layers[1].config.axis: fitbench normalizes over the last "
                          "axis only: -1 (or 2 for an input of shape (None, 3, 4))"));
  second.axis = {2};
  QCOMPARE(build_error({shaped_input({3, 4}), second}, Shape{3, 4}), std::string());
  LayerSpec no_epsilon = layer_norm();
  no_epsilon.epsilon = 0.0;
  QCOMPARE(
      QString::fromStdString(build_error({fixtures::input(4), no_epsilon}, Shape{4})),
      QStringLiteral("model.config.layers[1].config.epsilon: must be a number in (0, 1], got 0"));
}

void TestLayers::layer_normalization_trains_on_every_strategy() {
  // Dense(8, relu) -> LayerNormalization -> Dense(3, softmax): DataParallel on 3 devices and
  // ModelParallel on a 1 x 2 mesh (the first Dense sharded by its units, the normalization's
  // gamma and beta whole on each device of the row) train as one device does.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), dense(8, "relu"), layer_norm(), dense(3, "softmax")};
  check_strategies(spec);
}

void TestLayers::batch_normalization_values_data() {
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<bool>("scale");
  QTest::addColumn<bool>("center");
  QTest::newRow("features") << Shape{5} << true << true;
  QTest::newRow("image channels") << Shape{2, 3, 4} << true << true;
  QTest::newRow("no gamma") << Shape{3, 2} << false << true;
  QTest::newRow("no beta") << Shape{3, 2} << true << false;
}

void TestLayers::batch_normalization_values() {
  // Training: each channel against its normalization over every row and pixel written out in
  // double (the population variance), then the moving statistics moved toward the batch's by
  // 1 - momentum; inference: the moving statistics instead.
  QFETCH(Shape, shape);
  QFETCH(bool, scale);
  QFETCH(bool, center);
  ModelSpec spec;
  spec.layers = {shaped_input(shape), batch_norm(scale, center)};
  Fixture f(spec, shape_size(shape), 6, 59);
  const Index channels = shape.back(), groups = shape_size(shape) / channels;
  const size_t moving = size_t(scale) + size_t(center);
  QCOMPARE(f.net.variables().size(), moving + 2);
  QVERIFY(f.net.variables()[moving].path.ends_with("/moving_mean"));
  QVERIFY(!f.net.variables()[moving].trainable && !f.net.variables()[moving + 1].trainable);
  for (Index c = 0; c < channels; ++c) f.values[moving + 1](0, c) = 0.5f + 0.25f * float(c);
  const Matrix moving_mean = f.values[moving], moving_variance = f.values[moving + 1];
  const auto check = [&](const std::vector<double>& mean, const std::vector<double>& variance) {
    const Matrix y = f.net.output(f.ws, f.x.rows());
    for (Index r = 0; r < f.x.rows(); ++r)
      for (Index p = 0; p < groups; ++p)
        for (Index c = 0; c < channels; ++c) {
          double want =
              (f.x(r, p * channels + c) - mean[size_t(c)]) / std::sqrt(variance[size_t(c)] + 1e-3);
          if (scale) want *= f.values[0](0, c);
          if (center) want += f.values[scale ? 1 : 0](0, c);
          const float got = y(r, p * channels + c);
          if (std::abs(got - want) > 2e-5 * std::max(1.0, std::abs(want)))
            return QString("row %1 pixel %2 channel %3: %4, want %5")
                .arg(r)
                .arg(p)
                .arg(c)
                .arg(got)
                .arg(want);
        }
    return QString();
  };
  std::vector<double> mean(static_cast<size_t>(channels)), variance(mean);
  const double count = double(f.x.rows() * groups);
  for (Index c = 0; c < channels; ++c) {
    for (Index r = 0; r < f.x.rows(); ++r)
      for (Index p = 0; p < groups; ++p) mean[size_t(c)] += f.x(r, p * channels + c) / count;
    for (Index r = 0; r < f.x.rows(); ++r)
      for (Index p = 0; p < groups; ++p)
        variance[size_t(c)] += std::pow(f.x(r, p * channels + c) - mean[size_t(c)], 2) / count;
  }
  f.ctx.training = true;
  f.loss(f.x);
  QString error = check(mean, variance);
  QVERIFY2(error.isEmpty(), qPrintable(error));
  f.net.update_state(f.ptrs, f.ws);
  for (Index c = 0; c < channels; ++c) {
    QVERIFY(std::abs(f.values[moving](0, c) - (0.99 * moving_mean(0, c) + 0.01 * mean[size_t(c)])) <
            1e-6);
    QVERIFY(std::abs(f.values[moving + 1](0, c) -
                     (0.99 * moving_variance(0, c) + 0.01 * variance[size_t(c)])) < 1e-6);
  }
  f.ctx.training = false;
  f.loss(f.x);
  std::vector<double> moved_mean(static_cast<size_t>(channels)), moved_variance(moved_mean);
  for (Index c = 0; c < channels; ++c) {
    moved_mean[size_t(c)] = f.values[moving](0, c);
    moved_variance[size_t(c)] = f.values[moving + 1](0, c);
  }
  error = check(moved_mean, moved_variance);
  QVERIFY2(error.isEmpty(), qPrintable(error));
}

void TestLayers::batch_normalization_gradients_data() {
  QTest::addColumn<bool>("training");
  QTest::addColumn<bool>("scale");
  QTest::addColumn<bool>("center");
  QTest::newRow("batch statistics") << true << true << true;
  QTest::newRow("batch statistics, no gamma") << true << false << true;
  QTest::newRow("moving statistics") << false << true << true;
}

void TestLayers::batch_normalization_gradients() {
  // Dense(12, tanh) -> Reshape((3, 4)) -> BatchNormalization -> Flatten -> Dense(2): gamma's,
  // beta's and every Dense variable's gradient against central differences, by the batch's
  // statistics (training: the input's gradient goes through the mean and the variance) and by
  // the moving ones. The moving statistics have no gradient (their differences are 0 in
  // training, where the batch's replace them).
  QFETCH(bool, training);
  QFETCH(bool, scale);
  QFETCH(bool, center);
  ModelSpec spec;
  spec.layers = {fixtures::input(3),        dense(12, "tanh"), reshape({3, 4}),
                 batch_norm(scale, center), flatten(),         dense(2, "linear")};
  Fixture f(spec, 3, 5, 47);
  f.ctx.training = training;
  const size_t moving = 2 + size_t(scale) + size_t(center);
  for (Index c = 0; c < 4; ++c) f.values[moving + 1](0, c) = 0.5f + 0.25f * float(c);
  int64_t expected = 0;
  for (size_t v = 0; v < f.net.variables().size(); ++v)
    if (f.net.variables()[v].trainable || training)
      expected += shape_size(f.net.variables()[v].shape);
  if (training) {
    QCOMPARE(checked_gradients(f), static_cast<int>(expected));
  } else {
    // The moving statistics are inputs, not trained: check the trainable variables alone.
    Matrix dx;
    const auto grads = f.grads(dx);
    for (size_t v = 0; v < f.values.size(); ++v) {
      if (!f.net.variables()[v].trainable) continue;
      for (Index i = 0; i < f.values[v].size(); ++i)
        QVERIFY(close(grads[v].data()[i], f.numeric(v, i, 1e-2), 2e-2));
    }
  }
}

void TestLayers::batch_normalization_frozen() {
  // A frozen BatchNormalization (trainable false) normalizes by its moving statistics even in
  // training, as Keras 3's does, and leaves them as they are.
  ModelSpec spec;
  LayerSpec frozen = batch_norm();
  frozen.trainable = false;
  spec.layers = {shaped_input({2, 3}), frozen};
  Fixture f(spec, 6, 4, 61);
  for (Index c = 0; c < 3; ++c) f.values[3](0, c) = 0.5f + 0.25f * float(c);
  f.ctx.training = false;
  f.loss(f.x);
  const Matrix inference = f.net.output(f.ws, f.x.rows());
  f.ctx.training = true;
  f.loss(f.x);
  QCOMPARE(Matrix(f.net.output(f.ws, f.x.rows())), inference);
  const std::vector<Matrix> before = f.values;
  f.net.update_state(f.ptrs, f.ws);
  QCOMPARE(f.values[2], before[2]);
  QCOMPARE(f.values[3], before[3]);
}

void TestLayers::batch_normalization_on_every_strategy() {
  // Dense(8, relu) -> BatchNormalization -> Dense(3, softmax): DataParallel on 3 devices
  // normalizes by the global batch's statistics (summed across the devices' shards), so it
  // trains as one device does, moving statistics included.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), dense(8, "relu"), batch_norm(), dense(3, "softmax")};
  const FitOptions fit{.epochs = 3, .batch_size = 10, .shuffle = true, .verbose = 0};
  const OptimizerSpec adam = fixtures::optimizer("Adam", 0.01);
  const fixtures::Run one = fixtures::train(spec, 6, 3, adam, nullptr, fit, 1, true);
  QVERIFY(one.history.history.at("loss").back() < one.history.history.at("loss").front());
  const fixtures::Run three = fixtures::train(
      spec, 6, 3, adam, [](Sequential& m) { use_data_parallel(m, 3); }, fit, 1, true);
  QVERIFY2(fixtures::max_rel_diff(three, one) < 1e-5,
           qPrintable(QString::number(fixtures::max_rel_diff(three, one))));
  // ModelParallel: on a 1 x 2 mesh every device normalizes the whole batch; on a 2 x 2 mesh each
  // row holds half of it, and the statistics are summed over the column.
  DistributionSpec mp = model_parallel_1x2();
  const fixtures::Run row = fixtures::train(
      spec, 6, 3, adam, [&](Sequential& m) { use_model_parallel(m, mp, 2, {}); }, fit, 1, true);
  QVERIFY2(fixtures::max_rel_diff(row, one) < 1e-5,
           qPrintable(QString::number(fixtures::max_rel_diff(row, one))));
  mp.mesh_shape = {2, 2};
  const fixtures::Run mesh = fixtures::train(
      spec, 6, 3, adam, [&](Sequential& m) { use_model_parallel(m, mp, 4, {}); }, fit, 1, true);
  QVERIFY2(fixtures::max_rel_diff(mesh, one) < 1e-5,
           qPrintable(QString::number(fixtures::max_rel_diff(mesh, one))));
}

void TestLayers::batch_normalization_per_device_statistics() {
  // devices.batch_norm_statistics "per_device" (PyTorch's DistributedDataParallel without
  // SyncBatchNorm): one SGD step of DataParallel on 3 devices, 4 rows each, against the step
  // written out with one Network per shard: each shard normalized by its own statistics, the
  // gradients summed (the loss scaled by 1 / 12), and device 0's moving statistics for every
  // replica.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), dense(8, "relu"), batch_norm(), dense(3, "softmax")};
  const OptimizerSpec sgd = fixtures::optimizer("SGD", 0.1);
  set_random_seed(11);
  Matrix x, y;
  fixtures::make_data(x, y, 6, 3);
  x.conservativeResize(12, Eigen::NoChange);
  y.conservativeResize(12, Eigen::NoChange);
  Sequential m(spec);
  fixtures::compile(m, sgd);
  const std::vector<NamedWeight> initial = m.get_weights();
  DevicesSpec devices;
  devices.batch_norm_statistics = "per_device";
  use_data_parallel(m, 3, rehearsal_options(devices, 3));
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 12, .shuffle = false, .verbose = 0});
  const std::vector<NamedWeight> trained = m.get_weights();

  Network net(spec);
  net.build(6);
  std::vector<Matrix> values, sum;
  for (size_t v = 0; v < initial.size(); ++v) {
    const Index rows = matrix_rows(net.variables()[v].shape);
    const Index cols = matrix_cols(net.variables()[v].shape);
    values.push_back(Eigen::Map<const Matrix>(initial[v].values.data(), rows, cols));
    sum.push_back(Matrix::Zero(rows, cols));
  }
  std::vector<const Matrix*> cptrs;
  for (auto& v : values) cptrs.push_back(&v);
  const auto loss = make_loss(LossSpec{.name = "sparse_categorical_crossentropy"});
  Workspace ws;
  net.reserve(ws, 4);
  std::vector<Matrix> moving;
  for (Index s = 0; s < 3; ++s) {
    const Matrix xs = x.middleRows(s * 4, 4), ys = y.middleRows(s * 4, 4);
    const ForwardContext ctx{.training = true};
    net.forward(cptrs, xs, ws, ctx);
    loss->sum_and_gradient(net.output(ws, 4), ys, 1.0f / 12.0f, net.output_grad(ws, 4));
    std::vector<Matrix> g;
    std::vector<Matrix*> gp;
    for (auto& v : values) g.push_back(Matrix::Zero(v.rows(), v.cols()));
    for (size_t v = 0; v < g.size(); ++v)
      gp.push_back(net.variables()[v].trainable ? &g[v] : nullptr);
    net.backward(cptrs, xs, ws, 4, gp, ctx);
    for (size_t v = 0; v < g.size(); ++v) sum[v] += g[v];
    if (s == 0) {
      moving = values;
      std::vector<Matrix*> mp;
      for (auto& v : moving) mp.push_back(&v);
      net.update_state(mp, ws);
    }
  }
  double worst = 0.0;
  for (size_t v = 0; v < values.size(); ++v) {
    const Matrix expected =
        net.variables()[v].trainable ? Matrix(values[v] - 0.1f * sum[v]) : moving[v];
    for (Index i = 0; i < expected.size(); ++i)
      worst = std::max(
          worst, fixtures::rel(trained[v].values[static_cast<size_t>(i)], expected.data()[i]));
  }
  QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
  // Not what one device (the global batch's statistics) learns.
  const fixtures::Run one =
      fixtures::train(spec, 6, 3, sgd, nullptr, {.epochs = 2, .batch_size = 12, .verbose = 0});
  const fixtures::Run per_device = fixtures::train(
      spec, 6, 3, sgd,
      [&](Sequential& s) { use_data_parallel(s, 3, rehearsal_options(devices, 3)); },
      {.epochs = 2, .batch_size = 12, .verbose = 0});
  QVERIFY(fixtures::max_rel_diff(per_device, one) > 1e-3);
  // Under ModelParallel the option is refused with what to do (the batch axis sums the global
  // batch's statistics).
  DistributionSpec mp = model_parallel_1x2();
  mp.mesh_shape = {2, 2};
  Sequential s(spec);
  fixtures::compile(s, sgd);
  RehearsalOptions options = rehearsal_options(devices, 4);
  try {
    use_model_parallel(s, mp, 4, options);
    s.fit(x, y, FitOptions{.epochs = 1, .batch_size = 12, .verbose = 0});
    QFAIL("per-device statistics under ModelParallel were accepted");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.what()),
             QStringLiteral("devices.batch_norm_statistics: \"per_device\" is DataParallel's "
                            "contrast (PyTorch's DistributedDataParallel without SyncBatchNorm); "
                            "under ModelParallel BatchNormalization takes the global batch's "
                            "statistics over each column of the mesh: set \"global\", or choose "
                            "DataParallel"));
  }
  devices.batch_norm_statistics = "local";
  QVERIFY_THROWS_EXCEPTION(InputError, rehearsal_options(devices, 3));
}

void TestLayers::batch_normalization_device_error() {
  // A device whose loss throws (a label no class has, in the last device's shard) ends the step
  // with that error on every strategy: the other devices do not wait for it in
  // BatchNormalization's backward sums.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), dense(8, "relu"), batch_norm(), dense(3, "softmax")};
  Matrix x, y;
  fixtures::make_data(x, y, 6, 3);
  y(9, 0) = 7.0f;
  const std::vector<std::function<void(Sequential&)>> strategies = {
      [](Sequential& m) { use_data_parallel(m, 3); },
      [](Sequential& m) {
        DistributionSpec mp = model_parallel_1x2();
        mp.mesh_shape = {2, 2};
        use_model_parallel(m, mp, 4, {});
      }};
  for (const auto& distribute : strategies) {
    Sequential m(spec);
    fixtures::compile(m, fixtures::optimizer("Adam", 0.01));
    distribute(m);
    QVERIFY_THROWS_EXCEPTION(
        InputError,
        m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 10, .shuffle = false, .verbose = 0}));
  }
}

void TestLayers::global_average_pooling() {
  // (2, 3, 4) images: each of the 4 channels' mean over the 6 pixels, summed in float32 and
  // divided by 6, as Keras's float32 mean; one axis of input is refused with what to do.
  ModelSpec spec;
  spec.layers = {shaped_input({2, 3, 4}), gap2d()};
  Network net(spec);
  net.build(Shape{2, 3, 4});
  QCOMPARE(net.layer_shape(0), (Shape{4}));
  Matrix x(3, 24);
  for (Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>((i * 7) % 11) - 4.5f;
  Workspace ws;
  net.reserve(ws, x.rows());
  net.forward({}, x, ws, ForwardContext{});
  for (Index r = 0; r < x.rows(); ++r)
    for (Index c = 0; c < 4; ++c) {
      float sum = 0.0f;
      for (Index p = 0; p < 6; ++p) sum += x(r, p * 4 + c);
      QCOMPARE(net.output(ws, x.rows())(r, c), sum / 6.0f);
    }
  QCOMPARE(QString::fromStdString(build_error({fixtures::input(784), gap2d()}, Shape{784})),
           QStringLiteral("model.config.layers[1]: this GlobalAveragePooling2D layer receives "
                          "(None, 784): it takes images of shape (height, width, channels), so "
                          "give the model such an input or add a Reshape before it (e.g. to (28, "
                          "28, 1) for 28 x 28 grey pictures)"));
}

void TestLayers::global_average_pooling_gradients() {
  // Dense(12, tanh) -> Reshape((2, 2, 3)) -> GlobalAveragePooling2D -> Dense(2): the first
  // kernel's gradient passes back through the pooling (dy / 4 to each pixel), checked by central
  // differences.
  ModelSpec spec;
  spec.layers = {fixtures::input(3), dense(12, "tanh"), reshape({2, 2, 3}), gap2d(),
                 dense(2, "linear")};
  Fixture f(spec, 3, 5, 23);
  QCOMPARE(checked_gradients(f), 3 * 12 + 12 + 3 * 2 + 2);
}

void TestLayers::global_average_pooling_trains_on_every_strategy() {
  // Dense(12) -> Reshape((2, 2, 3)) -> GlobalAveragePooling2D -> Dense(3, softmax): DataParallel
  // on 3 devices and ModelParallel on a 1 x 2 mesh (the pooling runs whole on each device of the
  // row) train as one device does.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), dense(12, "relu"), reshape({2, 2, 3}), gap2d(),
                 dense(3, "softmax")};
  check_strategies(spec);
}

void TestLayers::conv2d_values_data() {
  QTest::addColumn<Shape>("image");
  QTest::addColumn<std::vector<LayerSpec>>("layer");
  QTest::addColumn<Shape>("out");
  QTest::newRow("valid 3x3") << Shape{5, 6, 2}
                             << std::vector{conv2d(3, {3, 3}, {1, 1}, "valid", "linear")}
                             << Shape{3, 4, 3};
  QTest::newRow("same 3x2 stride 2, relu")
      << Shape{5, 6, 2} << std::vector{conv2d(4, {3, 2}, {2, 2}, "same", "relu")} << Shape{3, 3, 4};
  QTest::newRow("same 4x4 stride 1x3, no bias")
      << Shape{4, 7, 3} << std::vector{conv2d(2, {4, 4}, {1, 3}, "same", "linear", false)}
      << Shape{4, 3, 2};
  QTest::newRow("valid 2x2 stride 2, softmax over channels")
      << Shape{4, 5, 1} << std::vector{conv2d(3, {2, 2}, {2, 2}, "valid", "softmax")}
      << Shape{2, 2, 3};
}

void TestLayers::conv2d_values() {
  // Each output pixel against the convolution written out in double: the window's values times
  // the kernel's, zeros where "same" reaches past the border (XLA's split: the smaller half of
  // the padding first), plus the bias, then the activation over the channels.
  QFETCH(Shape, image);
  QFETCH(std::vector<LayerSpec>, layer);
  QFETCH(Shape, out);
  const LayerSpec& l = layer.front();
  ModelSpec spec;
  spec.layers = {shaped_input(image), l};
  Fixture f(spec, shape_size(image), 3, 31);
  QCOMPARE(f.net.layer_shape(0), out);
  QCOMPARE(f.net.variables()[0].shape,
           (Shape{l.kernel_size[0], l.kernel_size[1], image[2], l.filters}));
  f.loss(f.x);
  const Matrix y = f.net.output(f.ws, f.x.rows());
  const Index h = image[0], w = image[1], c = image[2], kh = l.kernel_size[0],
              kw = l.kernel_size[1];
  const Index pad_top =
      l.padding == "same" ? std::max<Index>((out[0] - 1) * l.strides[0] + kh - h, 0) / 2 : 0;
  const Index pad_left =
      l.padding == "same" ? std::max<Index>((out[1] - 1) * l.strides[1] + kw - w, 0) / 2 : 0;
  const Matrix& kernel = f.values[0];
  for (Index r = 0; r < f.x.rows(); ++r)
    for (Index oy = 0; oy < out[0]; ++oy)
      for (Index ox = 0; ox < out[1]; ++ox) {
        std::vector<double> z(static_cast<size_t>(l.filters));
        for (Index o = 0; o < l.filters; ++o) {
          double sum = l.use_bias ? f.values[1](0, o) : 0.0;
          for (Index ky = 0; ky < kh; ++ky)
            for (Index kx = 0; kx < kw; ++kx) {
              const Index iy = oy * l.strides[0] + ky - pad_top;
              const Index ix = ox * l.strides[1] + kx - pad_left;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (Index ch = 0; ch < c; ++ch)
                sum += double(f.x(r, (iy * w + ix) * c + ch)) *
                       double(kernel((ky * kw + kx) * c + ch, o));
            }
          z[static_cast<size_t>(o)] = sum;
        }
        double total = 0.0;
        for (double& v : z) {
          if (l.activation == "relu") v = std::max(v, 0.0);
          if (l.activation == "softmax") total += v = std::exp(v);
        }
        for (Index o = 0; o < l.filters; ++o) {
          const double want = l.activation == "softmax" ? z[size_t(o)] / total : z[size_t(o)];
          const float got = y(r, (oy * out[1] + ox) * l.filters + o);
          if (std::abs(got - want) > 1e-5 * std::max(1.0, std::abs(want)))
            QFAIL(qPrintable(QString("row %1 pixel (%2, %3) filter %4: %5, want %6")
                                 .arg(r)
                                 .arg(oy)
                                 .arg(ox)
                                 .arg(o)
                                 .arg(got)
                                 .arg(want)));
        }
      }
}

void TestLayers::conv2d_gradients_data() {
  QTest::addColumn<std::vector<LayerSpec>>("layer");
  QTest::newRow("valid 2x2, tanh") << std::vector{conv2d(3, {2, 2}, {1, 1}, "valid", "tanh")};
  QTest::newRow("same 3x3 stride 2, relu")
      << std::vector{conv2d(2, {3, 3}, {2, 2}, "same", "relu")};
  QTest::newRow("same 2x3 stride 1x2, elu, no bias")
      << std::vector{conv2d(2, {2, 3}, {1, 2}, "same", "elu", false)};
}

void TestLayers::conv2d_gradients() {
  // Dense(32, tanh) -> Reshape((4, 4, 2)) -> Conv2D -> Flatten -> Dense(2): every kernel's and
  // bias's gradient against central differences, so the Conv2D's input gradient (col2im) is
  // checked through the first Dense's.
  QFETCH(std::vector<LayerSpec>, layer);
  ModelSpec spec;
  spec.layers = {fixtures::input(3), dense(32, "tanh"), reshape({4, 4, 2}),
                 layer.front(),      flatten(),         dense(2, "linear")};
  Fixture f(spec, 3, 4, 41);
  int64_t expected = 0;
  for (const auto& v : f.net.variables()) expected += shape_size(v.shape);
  QCOMPARE(checked_gradients(f), static_cast<int>(expected));
}

void TestLayers::conv2d_refusals() {
  const LayerSpec conv = conv2d(4, {3, 3}, {1, 1}, "valid", "relu");
  QCOMPARE(QString::fromStdString(build_error({fixtures::input(784), conv}, Shape{784})),
           QStringLiteral("model.config.layers[1]: this Conv2D layer receives (None, 784): it "
                          "takes images of shape (height, width, channels), so give the model "
                          "such an input or add a Reshape before it (e.g. to (28, 28, 1) for 28 x "
                          "28 grey pictures)"));
  QCOMPARE(QString::fromStdString(build_error({shaped_input({2, 5, 1}), conv}, Shape{2, 5, 1})),
           QStringLiteral("model.config.layers[1].config.kernel_size: the 3 x 3 kernel does not "
                          "fit in this layer's input (None, 2, 5, 1) with padding \"valid\": use "
                          "a smaller kernel or padding \"same\""));
  LayerSpec bad = conv;
  bad.padding = "full";
  QCOMPARE(QString::fromStdString(build_error({shaped_input({4, 4, 1}), bad}, Shape{4, 4, 1})),
           QStringLiteral("model.config.layers[1].config.padding: must be \"valid\" or "
                          "\"same\", got \"full\""));
  bad = conv;
  bad.strides = {0, 1};
  QCOMPARE(QString::fromStdString(build_error({shaped_input({4, 4, 1}), bad}, Shape{4, 4, 1})),
           QStringLiteral("model.config.layers[1].config.strides: must be two integers (height, "
                          "width) in [1, 65536]"));
  // ModelParallel splits a Conv2D kernel along its output channels only, and its bias only with
  // its kernel: anything else is refused at the entry, saying what to write.
  ModelSpec spec;
  spec.layers = {shaped_input({4, 4, 1}), conv2d(4, {2, 2}, {1, 1}, "valid", "relu"), flatten(),
                 dense(2, "softmax")};
  Network net(spec);
  net.build(Shape{4, 4, 1});
  const auto plan_error =
      [&](const std::vector<std::pair<std::string, std::vector<std::string>>>& entries) {
        DistributionSpec mp = model_parallel_1x2();
        mp.layout_map = entries;
        try {
          make_model_parallel_plan(net, mp, 2);
        } catch (const InputError& e) {
          return QString::fromStdString(e.what());
        }
        return QStringLiteral("accepted");
      };
  QCOMPARE(plan_error({{"conv2d/kernel", {"", "", "", "model"}}}), QStringLiteral("accepted"));
  QCOMPARE(plan_error({{"conv2d/kernel", {"", "", "", "model"}}, {"conv2d/bias", {"model"}}}),
           QStringLiteral("accepted"));
  QCOMPARE(plan_error({{"conv2d/kernel", {"model", "", "", ""}}}),
           QStringLiteral("distribution.layout_map[\"conv2d/kernel\"]: shards dimension 0 of "
                          "sequential/conv2d/kernel, a variable of Conv2D layer 'conv2d'; "
                          "fitbench splits a Conv2D kernel along its output channels only: use "
                          "[null, null, null, \"model\"]"));
  QCOMPARE(plan_error({{"conv2d/bias", {"model"}}}),
           QStringLiteral("distribution.layout_map[\"conv2d/bias\"]: shards "
                          "sequential/conv2d/bias, a variable of Conv2D layer 'conv2d' while its "
                          "kernel is replicated; shard the kernel's output channels too (its last "
                          "dimension), or replicate the bias"));
  ModelSpec pooled;
  pooled.layers = {shaped_input({4, 4, 1}), conv, batch_norm(), flatten(), dense(2, "softmax")};
  Network bn(pooled);
  bn.build(Shape{4, 4, 1});
  DistributionSpec mp = model_parallel_1x2();
  mp.layout_map = {{"batch_normalization/gamma", {"model"}}};
  try {
    make_model_parallel_plan(bn, mp, 2);
    QFAIL("a sharded BatchNormalization variable was accepted");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.what()),
             QStringLiteral("distribution.layout_map[\"batch_normalization/gamma\"]: shards "
                            "sequential/batch_normalization/gamma, a variable of "
                            "BatchNormalization layer 'batch_normalization'; fitbench shards the "
                            "variables of Dense and Conv2D layers only, so use null for every "
                            "dimension of this layer's variables (they are then replicated on "
                            "every device of the model axis)"));
  }
}

void TestLayers::conv2d_sharded_along_output_channels_data() {
  QTest::addColumn<int>("batch");
  QTest::addColumn<bool>("shardBias");
  QTest::addColumn<QString>("optimizer");
  for (const int b : {1, 2})
    for (const bool bias : {true, false})
      for (const char* o : {"Adam", "SGD"})
        QTest::newRow(qPrintable(
            QStringLiteral("%1x2, bias %2, %3").arg(b).arg(bias ? "sharded" : "replicated").arg(o)))
            << b << bias << QString(o);
}

void TestLayers::conv2d_sharded_along_output_channels() {
  // Dense(18) -> Reshape((3, 3, 2)) -> Conv2D(4, 2x2, same, relu) -> Conv2D(6, 2x2, valid,
  // tanh, L2 on its kernel) -> Flatten -> Dense(3, softmax), both convolutions split along their
  // output channels on a 1 x 2 and a 2 x 2 mesh (each device computes its filters of every
  // pixel; the row all-gathers them): as one device trains it.
  QFETCH(int, batch);
  QFETCH(bool, shardBias);
  QFETCH(QString, optimizer);
  LayerSpec second = conv2d(6, {2, 2}, {1, 1}, "valid", "tanh");
  second.kernel_regularizer = {0.0, 0.01};
  ModelSpec spec;
  spec.layers = {fixtures::input(6),
                 dense(18, "relu"),
                 reshape({3, 3, 2}),
                 conv2d(4, {2, 2}, {1, 1}, "same", "relu"),
                 second,
                 flatten(),
                 dense(3, "softmax")};
  DistributionSpec mp = model_parallel_1x2();
  mp.mesh_shape = {batch, 2};
  mp.layout_map = {{"conv2d.*/kernel", {"", "", "", "model"}}};
  if (shardBias) mp.layout_map.push_back({"conv2d.*/bias", {"model"}});
  const FitOptions fit{.epochs = 3, .batch_size = 10, .shuffle = true, .verbose = 0};
  const OptimizerSpec o = fixtures::optimizer(optimizer.toStdString(), 0.01);
  const fixtures::Run one = fixtures::train(spec, 6, 3, o, nullptr, fit, 1, true);
  QVERIFY(one.history.history.at("loss").back() < one.history.history.at("loss").front());
  const fixtures::Run many = fixtures::train(
      spec, 6, 3, o, [&](Sequential& m) { use_model_parallel(m, mp, 2 * batch, {}); }, fit, 1,
      true);
  const double diff = fixtures::max_rel_diff(many, one);
  QVERIFY2(diff < 1e-5, qPrintable(QString("max relative difference %1").arg(diff)));
  // The kernels were split: each device holds its filters.
  Sequential m(spec);
  m.build(int64_t{6});
  use_model_parallel(m, mp, 2 * batch, {});
  const ModelParallelPlan plan = make_model_parallel_plan(m.network(), mp, 2 * batch);
  QCOMPARE(plan.variables[2], ModelParallelPlan::Split::kColumns);
  QCOMPARE(plan.variables[3],
           shardBias ? ModelParallelPlan::Split::kColumns : ModelParallelPlan::Split::kReplicated);
}

void TestLayers::conv2d_glorot_counts_the_window() {
  // Keras's compute_fans counts the receptive field: a (3, 3, 2, 8) kernel has fan_in 18 and
  // fan_out 72, so glorot_uniform draws from +-sqrt(6 / 90).
  ModelSpec spec;
  spec.layers = {shaped_input({5, 5, 2}), conv2d(8, {3, 3}, {1, 1}, "valid", "relu")};
  Sequential model(spec);
  model.build(Shape{5, 5, 2});
  const Matrix& kernel = model.variables()[0].value;
  QCOMPARE(kernel.rows(), Index{18});
  QCOMPARE(kernel.cols(), Index{8});
  const float limit = static_cast<float>(std::sqrt(6.0 / 90.0));
  QVERIFY(kernel.cwiseAbs().maxCoeff() <= limit);
  QVERIFY(kernel.cwiseAbs().maxCoeff() > 0.9f * limit);
}

void TestLayers::conv2d_trains_on_every_strategy() {
  // Dense(18) -> Reshape((3, 3, 2)) -> Conv2D(4, 2x2, same, relu) -> Flatten -> Dense(3,
  // softmax): DataParallel on 3 devices and ModelParallel on a 1 x 2 mesh (the Conv2D whole on
  // each device of the row, its gradients summed along the batch axis) train as one device does.
  ModelSpec spec;
  spec.layers = {fixtures::input(6), dense(18, "relu"),
                 reshape({3, 3, 2}), conv2d(4, {2, 2}, {1, 1}, "same", "relu"),
                 flatten(),          dense(3, "softmax")};
  check_strategies(spec);
}

void TestLayers::pooling_values_data() {
  QTest::addColumn<Shape>("image");
  QTest::addColumn<std::vector<LayerSpec>>("layer");
  QTest::addColumn<Shape>("out");
  QTest::newRow("max 2x2") << Shape{5, 6, 2}
                           << std::vector{pool2d("MaxPooling2D", {2, 2}, {2, 2}, "valid")}
                           << Shape{2, 3, 2};
  QTest::newRow("max 3x3 stride 2, same")
      << Shape{5, 5, 2} << std::vector{pool2d("MaxPooling2D", {3, 3}, {2, 2}, "same")}
      << Shape{3, 3, 2};
  QTest::newRow("average 2x2 stride 1")
      << Shape{3, 4, 3} << std::vector{pool2d("AveragePooling2D", {2, 2}, {1, 1}, "valid")}
      << Shape{2, 3, 3};
  QTest::newRow("average 3x2 stride 2, same: border windows count their pixels")
      << Shape{4, 5, 1} << std::vector{pool2d("AveragePooling2D", {3, 2}, {2, 2}, "same")}
      << Shape{2, 3, 1};
}

void TestLayers::pooling_values() {
  // Each output against the window written out: its pixels inside the image (the padding of
  // "same" split as XLA's, the smaller half first), their maximum or their float32 sum over
  // their count.
  QFETCH(Shape, image);
  QFETCH(std::vector<LayerSpec>, layer);
  QFETCH(Shape, out);
  const LayerSpec& l = layer.front();
  ModelSpec spec;
  spec.layers = {shaped_input(image), l};
  Fixture f(spec, shape_size(image), 3, 37);
  QCOMPARE(f.net.layer_shape(0), out);
  f.loss(f.x);
  const Matrix y = f.net.output(f.ws, f.x.rows());
  const Index h = image[0], w = image[1], c = image[2];
  const Index top = l.padding == "same"
                        ? std::max<Index>((out[0] - 1) * l.strides[0] + l.pool_size[0] - h, 0) / 2
                        : 0;
  const Index left = l.padding == "same"
                         ? std::max<Index>((out[1] - 1) * l.strides[1] + l.pool_size[1] - w, 0) / 2
                         : 0;
  for (Index r = 0; r < f.x.rows(); ++r)
    for (Index oy = 0; oy < out[0]; ++oy)
      for (Index ox = 0; ox < out[1]; ++ox)
        for (Index ch = 0; ch < c; ++ch) {
          float best = -std::numeric_limits<float>::infinity(), sum = 0.0f;
          int count = 0;
          for (Index ky = 0; ky < l.pool_size[0]; ++ky)
            for (Index kx = 0; kx < l.pool_size[1]; ++kx) {
              const Index iy = oy * l.strides[0] + ky - top, ix = ox * l.strides[1] + kx - left;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const float v = f.x(r, (iy * w + ix) * c + ch);
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          const float want = l.class_name == "MaxPooling2D" ? best : sum / float(count);
          const float got = y(r, (oy * out[1] + ox) * c + ch);
          if (std::abs(got - want) > 1e-6f * std::max(1.0f, std::abs(want)))
            QFAIL(qPrintable(QString("row %1 pixel (%2, %3) channel %4: %5, want %6 of %7 pixels")
                                 .arg(r)
                                 .arg(oy)
                                 .arg(ox)
                                 .arg(ch)
                                 .arg(got)
                                 .arg(want)
                                 .arg(count)));
        }
}

void TestLayers::pooling_gradients_data() {
  QTest::addColumn<std::vector<LayerSpec>>("layer");
  QTest::newRow("max 2x2") << std::vector{pool2d("MaxPooling2D", {2, 2}, {2, 2}, "valid")};
  QTest::newRow("max 3x3 stride 2, same")
      << std::vector{pool2d("MaxPooling2D", {3, 3}, {2, 2}, "same")};
  QTest::newRow("average 3x2 stride 1x2, same")
      << std::vector{pool2d("AveragePooling2D", {3, 2}, {1, 2}, "same")};
}

void TestLayers::pooling_gradients() {
  // Dense(32, tanh) -> Reshape((4, 4, 2)) -> pooling -> Flatten -> Dense(2): the first kernel's
  // gradient passes back through the pooling (to each window's maximum, or spread over its
  // pixels), checked by central differences.
  QFETCH(std::vector<LayerSpec>, layer);
  ModelSpec spec;
  spec.layers = {fixtures::input(3), dense(32, "tanh"), reshape({4, 4, 2}),
                 layer.front(),      flatten(),         dense(2, "linear")};
  Fixture f(spec, 3, 4, 43);
  int64_t expected = 0;
  for (const auto& v : f.net.variables()) expected += shape_size(v.shape);
  QCOMPARE(checked_gradients(f, layer.front().class_name == "MaxPooling2D" ? 1e-3 : 1e-2),
           static_cast<int>(expected));
}

void TestLayers::pooling_refusals() {
  const LayerSpec pool = pool2d("MaxPooling2D", {3, 3}, {3, 3}, "valid");
  QCOMPARE(QString::fromStdString(build_error({shaped_input({2, 5, 4}), pool}, Shape{2, 5, 4})),
           QStringLiteral("model.config.layers[1].config.pool_size: the 3 x 3 window does not "
                          "fit in this layer's input (None, 2, 5, 4) with padding \"valid\": use "
                          "a smaller window or padding \"same\""));
  QCOMPARE(QString::fromStdString(build_error({fixtures::input(8), pool}, Shape{8})),
           QStringLiteral("model.config.layers[1]: this MaxPooling2D layer receives (None, 8): "
                          "it takes images of shape (height, width, channels), so give the model "
                          "such an input or add a Reshape before it (e.g. to (28, 28, 1) for 28 "
                          "x 28 grey pictures)"));
  LayerSpec bad = pool;
  bad.pool_size = {0, 2};
  QCOMPARE(QString::fromStdString(build_error({shaped_input({4, 4, 1}), bad}, Shape{4, 4, 1})),
           QStringLiteral("model.config.layers[1].config.pool_size: must be two integers "
                          "(height, width) in [1, 65536]"));
}

void TestLayers::pooling_trains_on_every_strategy() {
  // Dense(32) -> Reshape((4, 4, 2)) -> Conv2D(3, 2x2, same) -> MaxPooling2D -> AveragePooling2D
  // (same) -> Flatten -> Dense(3, softmax): DataParallel on 3 devices and ModelParallel on a
  // 1 x 2 mesh train as one device does.
  ModelSpec spec;
  spec.layers = {fixtures::input(6),
                 dense(32, "relu"),
                 reshape({4, 4, 2}),
                 conv2d(3, {2, 2}, {1, 1}, "same", "relu"),
                 pool2d("MaxPooling2D", {2, 2}, {2, 2}, "valid"),
                 pool2d("AveragePooling2D", {2, 2}, {1, 1}, "same"),
                 flatten(),
                 dense(3, "softmax")};
  check_strategies(spec);
}

QTEST_GUILESS_MAIN(TestLayers)
#include "tst_layers.moc"
