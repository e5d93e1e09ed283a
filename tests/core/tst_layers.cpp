// Finite-difference gradient checks for every layer and activation, through Network's forward and
// backward, plus the regularization gradient and dropout's mask behaviour.
#include <QTest>

#include "core/nn/activations.h"
#include "core/nn/network.h"
#include "core/python/random.h"

using namespace fitbench;

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

  Fixture(const ModelSpec& spec, int64_t in, Index rows, uint64_t seed) : net(spec) {
    net.build(in);
    Rng rng(seed);
    for (const auto& v : net.variables()) {
      const Index rr = v.shape.size() == 1 ? 1 : v.shape[0];
      const Index cc = v.shape.size() == 1 ? v.shape[0] : v.shape[1];
      Matrix m(rr, cc);
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
    net.forward(cptrs, input, ws, ForwardContext{});
    return static_cast<double>(net.output(ws, input.rows()).cwiseProduct(r).sum());
  }

  // Analytic gradients of loss w.r.t. every variable and the input.
  std::vector<Matrix> grads(Matrix& dx) {
    std::vector<Matrix> g;
    for (auto& v : values) g.push_back(Matrix::Zero(v.rows(), v.cols()));
    std::vector<Matrix*> gp;
    for (auto& m : g) gp.push_back(&m);
    loss(x);
    net.output_grad(ws, x.rows()) = r;
    net.backward(cptrs, x, ws, x.rows(), gp);
    // dL/dx via a model with an identity first layer is not exposed; estimate it numerically
    // through the first layer's gradient instead (checked by the variable gradients).
    dx.resize(0, 0);
    return g;
  }
};

// Relative error with an absolute floor (float32 central differences).
bool close(double analytic, double numeric, double tol) {
  return std::abs(analytic - numeric) <= tol * std::max(1.0, std::abs(numeric));
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
      float& w = f.values[v].data()[i];
      const float saved = w;
      w = saved + static_cast<float>(eps);
      const double up = f.loss(f.x);
      w = saved - static_cast<float>(eps);
      const double down = f.loss(f.x);
      w = saved;
      const double numeric = (up - down) / (2 * eps);
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
    for (Index i = 0; i < f.values[v].size(); ++i) {
      float& w = f.values[v].data()[i];
      const float saved = w;
      w = saved + static_cast<float>(eps);
      const double up = f.loss(f.x);
      w = saved - static_cast<float>(eps);
      const double down = f.loss(f.x);
      w = saved;
      QVERIFY2(close(g[v].data()[i], (up - down) / (2 * eps), 2e-2),
               qPrintable(QString("variable %1 element %2").arg(v).arg(i)));
    }
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

QTEST_GUILESS_MAIN(TestLayers)
#include "tst_layers.moc"
