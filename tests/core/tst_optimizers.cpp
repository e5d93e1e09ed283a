// Golden multi-step tests of every optimizer and option against optimizer_reference.py (Keras 3's
// formulas in float64), plus clone(), learning-rate control, validation and the no-allocation
// promise of apply().
#include <QTest>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/sanitized.h"
#include "core/optimizers/optimizer.h"

using namespace fitbench;

// apply() must not allocate after build(): count malloc calls on this thread while asked to.
// Sanitizer builds provide their own malloc, so the check is skipped there.
#if !defined(FITBENCH_SANITIZED) && defined(__GLIBC__)
#define FITBENCH_COUNT_MALLOC 1
extern "C" void* __libc_malloc(size_t size);
namespace {
thread_local bool t_counting = false;
std::atomic<long> g_mallocs{0};
}  // namespace
extern "C" void* malloc(size_t size) {
  if (t_counting) g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
#endif

Q_DECLARE_METATYPE(fitbench::OptimizerSpec)

namespace {

constexpr int kSteps = 6;
constexpr float kKernel0[6] = {0.5f, -0.25f, 1.0f, -0.75f, 0.125f, 0.375f};
constexpr float kBias0[3] = {0.0625f, -0.5f, 0.25f};

// Element i of the flattened (kernel, bias) at step t: ((7 i + 5 t + 3) mod 13 - 6) / 4, exact in
// float32; the same sequence as optimizer_reference.py.
float gradient_value(int i, int step) {
  return static_cast<float>((7 * i + 5 * step + 3) % 13 - 6) / 4.0f;
}

// A 2x3 kernel and a 1x3 bias with their gradients, as a Dense(3) on 2 inputs has.
struct Model {
  Matrix kernel{2, 3};
  Matrix bias{1, 3};
  Matrix kernel_grad{2, 3};
  Matrix bias_grad{1, 3};
  Model() {
    for (int i = 0; i < 6; ++i) kernel.data()[i] = kKernel0[i];
    for (int i = 0; i < 3; ++i) bias.data()[i] = kBias0[i];
  }
  Model(const Model& other)
      : kernel(other.kernel), bias(other.bias), kernel_grad(2, 3), bias_grad(1, 3) {}
  std::vector<Matrix*> variables() { return {&kernel, &bias}; }
  std::vector<Matrix*> gradients() { return {&kernel_grad, &bias_grad}; }
  void step(Optimizer& optimizer, int t) {
    for (int i = 0; i < 6; ++i) kernel_grad.data()[i] = gradient_value(i, t);
    for (int i = 0; i < 3; ++i) bias_grad.data()[i] = gradient_value(6 + i, t);
    optimizer.apply(variables(), gradients());
  }
  double value(int i) const { return i < 6 ? kernel.data()[i] : bias.data()[i - 6]; }
};

// Relative tolerance 1e-5 of the float64 reference, with magnitudes below 0.1 held to 1e-6
// absolute (float32 rounding of the O(1) intermediates).
bool close(double actual, double expected) {
  return std::abs(actual - expected) <= 1e-5 * std::max(std::abs(expected), 0.1);
}

void compare_to_golden(const Model& m, const QList<double>& expected) {
  QCOMPARE(expected.size(), 9);
  for (int i = 0; i < 9; ++i) {
    if (!close(m.value(i), expected[i]))
      QFAIL(qPrintable(QString("element %1: got %2, expected %3")
                           .arg(i)
                           .arg(m.value(i), 0, 'g', 9)
                           .arg(expected[i], 0, 'g', 9)));
  }
}

OptimizerSpec spec(const char* class_name, std::optional<double> lr = std::nullopt) {
  OptimizerSpec s;
  s.class_name = class_name;
  s.learning_rate = lr;
  return s;
}

ScheduleSpec exponential(double initial, double decay_steps, double decay_rate, bool staircase) {
  ScheduleSpec s;
  s.class_name = "ExponentialDecay";
  s.initial_learning_rate = initial;
  s.decay_steps = decay_steps;
  s.decay_rate = decay_rate;
  s.staircase = staircase;
  return s;
}

ScheduleSpec cosine_warmup() {
  ScheduleSpec s;
  s.class_name = "CosineDecay";
  s.initial_learning_rate = 0.0;
  s.decay_steps = 4.0;
  s.alpha = 0.1;
  s.warmup_target = 0.1;
  s.warmup_steps = 2.0;
  return s;
}

ScheduleSpec piecewise() {
  ScheduleSpec s;
  s.class_name = "PiecewiseConstantDecay";
  s.boundaries = {1.0, 3.0};
  s.values = {0.1, 0.05, 0.01};
  return s;
}

// The rows of optimizer_reference.py's CASES, each with the kernel (6 values) and bias (3 values)
// after 6 updates as that script prints them.
std::vector<std::pair<const char*, OptimizerSpec>> golden_specs() {
  std::vector<std::pair<const char*, OptimizerSpec>> rows;
  auto add = [&](const char* name, OptimizerSpec s) { rows.emplace_back(name, std::move(s)); };
  OptimizerSpec s;
  add("sgd", spec("SGD", 0.1));
  add("sgd_default_rate", spec("SGD"));
  s = spec("SGD", 0.1), s.momentum = 0.9, add("sgd_momentum", s);
  s = spec("SGD", 0.1), s.momentum = 0.9, s.nesterov = true, add("sgd_nesterov", s);
  s = spec("SGD", 0.1), s.weight_decay = 0.2, add("sgd_weight_decay", s);
  add("adam", spec("Adam", 0.05));
  add("adam_defaults", spec("Adam"));
  s = spec("Adam", 0.05), s.beta_1 = 0.8, s.beta_2 = 0.95, s.epsilon = 0.1;
  add("adam_betas_epsilon", s);
  s = spec("Adam", 0.05), s.beta_2 = 0.9, s.amsgrad = true, add("adam_amsgrad", s);
  s = spec("AdamW", 0.05), s.weight_decay = 0.1, add("adamw", s);
  add("adamw_defaults", spec("AdamW"));
  s = spec("AdamW", 0.05), s.weight_decay = 0.1, s.beta_2 = 0.9, s.amsgrad = true;
  add("adamw_amsgrad", s);
  add("rmsprop", spec("RMSprop", 0.01));
  s = spec("RMSprop", 0.01), s.rho = 0.8, s.epsilon = 0.1, add("rmsprop_rho_epsilon", s);
  s = spec("RMSprop", 0.01), s.momentum = 0.9, add("rmsprop_momentum", s);
  s = spec("RMSprop", 0.01), s.centered = true, add("rmsprop_centered", s);
  s = spec("RMSprop", 0.01), s.centered = true, s.momentum = 0.5, s.epsilon = 0.01;
  add("rmsprop_centered_momentum", s);
  add("adagrad", spec("Adagrad", 0.1));
  s = spec("Adagrad", 0.1), s.initial_accumulator_value = 0.5, s.epsilon = 0.1;
  add("adagrad_accumulator_epsilon", s);
  s = spec("SGD", 0.1), s.momentum = 0.5, s.clipnorm = 2.0, add("sgd_clipnorm", s);
  s = spec("SGD", 0.1), s.global_clipnorm = 2.8, add("sgd_global_clipnorm", s);
  s = spec("SGD", 0.1), s.clipvalue = 0.6, add("sgd_clipvalue", s);
  s = spec("Adam", 0.05), s.clipnorm = 0.8, add("adam_clipnorm", s);
  s = spec("RMSprop", 0.01), s.global_clipnorm = 1.0, add("rmsprop_global_clipnorm", s);
  s = spec("SGD"), s.momentum = 0.9, s.schedule = exponential(0.2, 2.0, 0.5, true);
  add("sgd_exponential_staircase", s);
  s = spec("Adagrad"), s.schedule = exponential(0.1, 3.0, 0.7, false);
  add("adagrad_exponential", s);
  s = spec("Adam"), s.schedule = cosine_warmup(), add("adam_cosine_warmup", s);
  s = spec("AdamW"), s.weight_decay = 0.1, s.schedule = piecewise(), add("adamw_piecewise", s);
  return rows;
}

// Printed by /usr/bin/python3 tests/core/optimizer_reference.py (float64 numpy).
const std::map<std::string, QList<double>>& golden_values() {
  static const std::map<std::string, QList<double>> values = {
      // clang-format off
    {"sgd", {0.7, -0.45, 1.05, -0.775, 0.025, 0.2, 0.1375, -0.5, 0.175}},
    {"sgd_default_rate", {0.52, -0.27, 1.005, -0.7525, 0.115, 0.3575, 0.07, -0.5, 0.2425}},
    {"sgd_momentum", {1.14026425, -0.781524, 1.194522, -0.84651625, -0.12622025, -0.1672585, -0.0169625, 0.034816, -0.27520475}},
    {"sgd_nesterov", {1.27623783, -0.9283716, 1.2250698, -0.861864625, -0.201098225, -0.28803265, 0.06598375, -0.0186656, -0.297684275}},
    {"sgd_weight_decay", {0.631785642, -0.413205659, 0.932009809, -0.686693873, 0.0142007015, 0.167181781, 0.134638529, -0.456853067, 0.158036951}},
    {"adam", {0.641205013, -0.355307923, 1.07247843, -0.807102847, 0.124777685, 0.260381305, 0.021866702, -0.376449362, 0.10234975}},
    {"adam_defaults", {0.5028241, -0.252106158, 1.00144957, -0.751142057, 0.124995554, 0.372707626, 0.061687334, -0.497528987, 0.247046995}},
    {"adam_betas_epsilon", {0.599188959, -0.329044228, 1.04110104, -0.782016198, 0.102023642, 0.293656119, 0.0417852719, -0.416725696, 0.1641318}},
    {"adam_amsgrad", {0.638973379, -0.35492068, 1.07127425, -0.808210382, 0.12635686, 0.259000971, 0.0219208651, -0.376457166, 0.10340217}},
    {"adamw", {0.62423473, -0.346370387, 1.0414214, -0.783354091, 0.120383705, 0.251340599, 0.020986516, -0.364026699, 0.0976278121}},
    {"adamw_defaults", {0.502812066, -0.252100134, 1.00142555, -0.751124032, 0.124992543, 0.37269866, 0.0616858497, -0.497517026, 0.247041038}},
    {"adamw_amsgrad", {0.622026764, -0.345988669, 1.04023099, -0.784448687, 0.121949119, 0.249980925, 0.021023062, -0.36403034, 0.0986609817}},
    {"rmsprop", {0.544528057, -0.292607132, 1.02215269, -0.763387457, 0.126737894, 0.340992502, 0.0642698038, -0.489982902, 0.202839457}},
    {"rmsprop_rho_epsilon", {0.527117085, -0.277369958, 1.00910218, -0.757798741, 0.114322751, 0.352211812, 0.0660819553, -0.495800834, 0.23355224}},
    {"rmsprop_momentum", {0.665242809, -0.386609202, 1.10066566, -0.810846304, 0.171593782, 0.255260686, 0.00976794879, -0.377340605, 0.00791197555}},
    {"rmsprop_centered", {0.54827019, -0.29553722, 1.02423597, -0.765030373, 0.126955968, 0.338408227, 0.0626319547, -0.487632516, 0.198310784}},
    {"rmsprop_centered_momentum", {0.579664854, -0.323029148, 1.03524329, -0.769982301, 0.108840138, 0.319103939, 0.0509704442, -0.456964578, 0.169881002}},
    {"adagrad", {0.633168693, -0.374403599, 1.0582169, -0.789583039, 0.0976058408, 0.273640149, 0.0644845173, -0.462243089, 0.137417222}},
    {"adagrad_accumulator_epsilon", {0.614612671, -0.359377121, 1.03812751, -0.781944019, 0.0789222164, 0.282061413, 0.0704365185, -0.468950126, 0.175008602}},
    {"sgd_clipnorm", {0.755483259, -0.472969843, 1.03565132, -0.735509573, -0.0591806135, 0.169658491, 0.1234375, -0.35625, 0.06015625}},
    {"sgd_global_clipnorm", {0.705661616, -0.450820707, 1.05783081, -0.776917929, 0.035, 0.200251263, 0.128002525, -0.50084596, 0.167671717}},
    {"sgd_clipvalue", {0.595, -0.345, 1.05, -0.775, 0.115, 0.305, 0.0975, -0.5, 0.215}},
    {"adam_clipnorm", {0.627088893, -0.333635431, 1.05540501, -0.79528801, 0.111252364, 0.267500037, 0.0337857644, -0.382409694, 0.103214271}},
    {"rmsprop_global_clipnorm", {0.545718805, -0.293139729, 1.02364716, -0.764128024, 0.128349109, 0.340320158, 0.0639177767, -0.490543466, 0.202169142}},
    {"sgd_exponential_staircase", {1.3319285, -0.850573, 1.202919, -1.0988325, -0.3010905, -0.602842, -0.68385, 0.938782, -1.1253595}},
    {"adagrad_exponential", {0.615816887, -0.351178598, 1.0580763, -0.794891531, 0.11516763, 0.284177728, 0.0430087329, -0.43647893, 0.132665569}},
    {"adam_cosine_warmup", {0.633968445, -0.316964046, 1.05217883, -0.764879673, 0.0853266869, 0.289013129, -0.00301062019, -0.399774114, 0.112046744}},
    {"adamw_piecewise", {0.659939414, -0.367488317, 1.07809039, -0.848257478, 0.164827321, 0.19369323, -0.0328160352, -0.280376089, 0.0108479582}},
      // clang-format on
  };
  return values;
}

}  // namespace

class TestOptimizers : public QObject {
  Q_OBJECT

 private slots:
  void golden_data();
  void golden();
  void clone_continues_identically_data() { golden_data(); }
  void clone_continues_identically();
  void large_variable_matches_golden_data() { golden_data(); }
  void large_variable_matches_golden();
  void kept_ranges_match_golden_data() { golden_data(); }
  void kept_ranges_match_golden();
  void apply_does_not_allocate_data() { golden_data(); }
  void apply_does_not_allocate();
  void names_and_default_rates_data();
  void names_and_default_rates();
  void set_learning_rate();
  void set_learning_rate_replaces_schedule();
  void iterations_count_updates();
  void clipnorm_leaves_zero_gradient_alone();
  void global_clipnorm_of_infinite_gradient_is_nan();
  void validation_data();
  void validation();
};

void TestOptimizers::golden_data() {
  QTest::addColumn<OptimizerSpec>("spec");
  QTest::addColumn<QList<double>>("expected");
  for (const auto& [name, s] : golden_specs()) QTest::newRow(name) << s << golden_values().at(name);
}

void TestOptimizers::golden() {
  QFETCH(OptimizerSpec, spec);
  QFETCH(QList<double>, expected);
  auto optimizer = make_optimizer(spec, "compile.optimizer");
  Model m;
  optimizer->build(m.variables());
  for (int t = 0; t < kSteps; ++t) m.step(*optimizer, t);
  QCOMPARE(optimizer->iterations(), int64_t{kSteps});
  compare_to_golden(m, expected);
}

void TestOptimizers::clone_continues_identically() {
  QFETCH(OptimizerSpec, spec);
  QFETCH(QList<double>, expected);
  auto original = make_optimizer(spec, "compile.optimizer");
  Model m;
  original->build(m.variables());
  for (int t = 0; t < 3; ++t) m.step(*original, t);
  auto copy = original->clone();
  QCOMPARE(copy->name(), original->name());
  QCOMPARE(copy->iterations(), int64_t{3});
  QCOMPARE(copy->learning_rate(), original->learning_rate());
  Model n(m);
  for (int t = 3; t < kSteps; ++t) {
    m.step(*original, t);
    n.step(*copy, t);
  }
  // Each continues from the shared state on its own, so both land on the reference and on each
  // other bit for bit (shared slots would have been advanced twice).
  compare_to_golden(m, expected);
  QVERIFY(m.kernel == n.kernel);
  QVERIFY(m.bias == n.bias);
}

// A 600x9 variable (several cache blocks plus a partial one) whose column c starts at, and is
// driven by, element c of the small model must end at element c of the golden values.
void TestOptimizers::large_variable_matches_golden() {
  QFETCH(OptimizerSpec, spec);
  QFETCH(QList<double>, expected);
  if (spec.clipnorm || spec.global_clipnorm) QSKIP("norm clipping couples the elements");
  auto optimizer = make_optimizer(spec, "compile.optimizer");
  Matrix w(600, 9), g(600, 9);
  for (Index r = 0; r < w.rows(); ++r)
    for (int c = 0; c < 9; ++c) w(r, c) = c < 6 ? kKernel0[c] : kBias0[c - 6];
  std::vector<Matrix*> vars = {&w}, grads = {&g};
  optimizer->build(vars);
  for (int t = 0; t < kSteps; ++t) {
    for (Index r = 0; r < g.rows(); ++r)
      for (int c = 0; c < 9; ++c) g(r, c) = gradient_value(c, t);
    optimizer->apply(vars, grads);
  }
  for (Index r = 0; r < w.rows(); ++r)
    for (int c = 0; c < 9; ++c)
      if (!close(w(r, c), expected[c]))
        QFAIL(qPrintable(QString("(%1, %2): got %3, expected %4")
                             .arg(r)
                             .arg(c)
                             .arg(w(r, c), 0, 'g', 9)
                             .arg(expected[c], 0, 'g', 9)));
}

// Three optimizers each keeping the slots of one range of the 9 elements (the middle one across
// the kernel/bias boundary), as DataParallel's sharded update has them: together they follow the
// reference, hold 9 floats per slot kind between them, and gathered into a whole optimizer give
// the whole one's slots bit for bit. The first range is cut from a clone that has trained.
void TestOptimizers::kept_ranges_match_golden() {
  QFETCH(OptimizerSpec, spec);
  QFETCH(QList<double>, expected);
  if (spec.clipnorm || spec.global_clipnorm) QSKIP("norm clipping couples the elements");
  Model m, r;
  auto reference = make_optimizer(spec, "compile.optimizer");
  reference->build(r.variables());
  const int64_t ranges[3][2] = {{0, 4}, {4, 7}, {7, 9}};
  std::vector<std::unique_ptr<Optimizer>> parts;
  for (int p = 0; p < 3; ++p) {
    parts.push_back(make_optimizer(spec, "compile.optimizer"));
    if (p > 0) parts.back()->keep_range(ranges[p][0], ranges[p][1]);
  }
  for (int t = 0; t < kSteps; ++t) {
    for (int i = 0; i < 6; ++i) m.kernel_grad.data()[i] = gradient_value(i, t);
    for (int i = 0; i < 3; ++i) m.bias_grad.data()[i] = gradient_value(6 + i, t);
    if (t == 2) {  // the first part trained whole so far: a clone keeps its range from here
      parts[0] = parts[0]->clone();
      parts[0]->keep_range(ranges[0][0], ranges[0][1]);
    }
    for (int p = 0; p < 3; ++p)
      parts[p]->apply_range(m.variables(), m.gradients(), ranges[p][0], ranges[p][1]);
    r.step(*reference, t);
  }
  compare_to_golden(m, expected);
  const int64_t kinds = static_cast<int64_t>(reference->keras_slots().size()) / 2;
  int64_t held = 0;
  for (const auto& part : parts) held += part->slot_bytes();
  QCOMPARE(held, kinds * 9 * 4);
  QCOMPARE(reference->slot_bytes(), kinds * 9 * 4);
  auto whole = make_optimizer(spec, "compile.optimizer");
  whole->build(Model().variables());
  for (int p = 0; p < 3; ++p) whole->copy_state_range(*parts[p], ranges[p][0], ranges[p][1]);
  const auto mine = whole->keras_slots(), theirs = reference->keras_slots();
  QCOMPARE(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) QVERIFY(*mine[i].value == *theirs[i].value);
}

void TestOptimizers::apply_does_not_allocate() {
#ifndef FITBENCH_COUNT_MALLOC
  QSKIP("malloc is not counted in sanitizer builds");
#else
  QFETCH(OptimizerSpec, spec);
  auto optimizer = make_optimizer(spec, "compile.optimizer");
  Matrix kernel = Matrix::Constant(300, 200, 0.5f), bias = Matrix::Constant(1, 200, -0.25f);
  Matrix kernel_grad(300, 200), bias_grad(1, 200);
  std::vector<Matrix*> vars = {&kernel, &bias}, grads = {&kernel_grad, &bias_grad};
  optimizer->build(vars);
  const long before = g_mallocs.load();
  for (int t = 0; t < 3; ++t) {
    kernel_grad.setConstant(0.01f * static_cast<float>(t + 1));
    bias_grad.setConstant(-0.02f);
    t_counting = true;
    optimizer->apply(vars, grads);
    t_counting = false;
  }
  QCOMPARE(g_mallocs.load() - before, 0L);
  // The counter works: a Matrix allocates.
  t_counting = true;
  Matrix probe(64, 64);
  t_counting = false;
  QVERIFY(g_mallocs.load() - before > 0);
  QVERIFY(probe.size() == 4096);
#endif
}

void TestOptimizers::names_and_default_rates_data() {
  QTest::addColumn<QString>("class_name");
  QTest::addColumn<QString>("name");
  QTest::addColumn<double>("rate");
  QTest::newRow("SGD") << "SGD"
                       << "SGD" << 0.01;
  QTest::newRow("sgd") << "sgd"
                       << "SGD" << 0.01;
  QTest::newRow("Adam") << "Adam"
                        << "Adam" << 0.001;
  QTest::newRow("adam") << "adam"
                        << "Adam" << 0.001;
  QTest::newRow("AdamW") << "AdamW"
                         << "AdamW" << 0.001;
  QTest::newRow("adamw") << "adamw"
                         << "AdamW" << 0.001;
  QTest::newRow("RMSprop") << "RMSprop"
                           << "RMSprop" << 0.001;
  QTest::newRow("rmsprop") << "rmsprop"
                           << "RMSprop" << 0.001;
  QTest::newRow("Adagrad") << "Adagrad"
                           << "Adagrad" << 0.001;
  QTest::newRow("adagrad") << "adagrad"
                           << "Adagrad" << 0.001;
}

void TestOptimizers::names_and_default_rates() {
  QFETCH(QString, class_name);
  QFETCH(QString, name);
  QFETCH(double, rate);
  auto optimizer = make_optimizer(spec(class_name.toStdString().c_str()), "compile.optimizer");
  QCOMPARE(QString::fromStdString(optimizer->name()), name);
  QCOMPARE(optimizer->learning_rate(), rate);
  QVERIFY(!optimizer->has_schedule());
  QCOMPARE(optimizer->iterations(), int64_t{0});
}

// SGD on one weight with gradient 1: each update subtracts the rate in force.
void TestOptimizers::set_learning_rate() {
  auto optimizer = make_optimizer(spec("SGD", 0.1), "compile.optimizer");
  Matrix w = Matrix::Constant(1, 1, 1.0f), g(1, 1);
  std::vector<Matrix*> vars = {&w}, grads = {&g};
  optimizer->build(vars);
  g(0, 0) = 1.0f;
  optimizer->apply(vars, grads);
  QCOMPARE(w(0, 0), 0.9f);
  optimizer->set_learning_rate(0.25);
  QCOMPARE(optimizer->learning_rate(), 0.25);
  g(0, 0) = 1.0f;
  optimizer->apply(vars, grads);
  QCOMPARE(w(0, 0), 0.65f);
  QCOMPARE(optimizer->iterations(), int64_t{2});
}

void TestOptimizers::set_learning_rate_replaces_schedule() {
  OptimizerSpec s = spec("SGD");
  s.schedule = piecewise();  // 0.1 for updates 0 and 1, 0.05 for 2 and 3, then 0.01
  auto optimizer = make_optimizer(s, "compile.optimizer");
  QVERIFY(optimizer->has_schedule());
  Matrix w = Matrix::Constant(1, 1, 1.0f), g(1, 1);
  std::vector<Matrix*> vars = {&w}, grads = {&g};
  optimizer->build(vars);
  for (int t = 0; t < 2; ++t) {
    g(0, 0) = 1.0f;
    optimizer->apply(vars, grads);
  }
  QCOMPARE(optimizer->learning_rate(), 0.05);
  QCOMPARE(w(0, 0), 0.8f);
  optimizer->set_learning_rate(0.5);
  QVERIFY(!optimizer->has_schedule());
  QCOMPARE(optimizer->learning_rate(), 0.5);
  g(0, 0) = 1.0f;
  optimizer->apply(vars, grads);
  QCOMPARE(w(0, 0), 0.3f);
  QCOMPARE(optimizer->learning_rate(), 0.5);  // no longer follows the schedule
}

void TestOptimizers::iterations_count_updates() {
  auto optimizer = make_optimizer(spec("Adam"), "compile.optimizer");
  Model m;
  optimizer->build(m.variables());
  for (int t = 0; t < 4; ++t) {
    QCOMPARE(optimizer->iterations(), int64_t{t});
    m.step(*optimizer, t);
  }
  QCOMPARE(optimizer->iterations(), int64_t{4});
  auto copy = optimizer->clone();
  m.step(*copy, 4);
  QCOMPARE(copy->iterations(), int64_t{5});
  QCOMPARE(optimizer->iterations(), int64_t{4});
}

// Keras guards the zero norm: an all-zero gradient stays zero, no NaN.
void TestOptimizers::clipnorm_leaves_zero_gradient_alone() {
  OptimizerSpec s = spec("SGD", 0.1);
  s.clipnorm = 1.0;
  auto optimizer = make_optimizer(s, "compile.optimizer");
  Matrix w = Matrix::Constant(2, 2, 0.5f), g = Matrix::Zero(2, 2);
  std::vector<Matrix*> vars = {&w}, grads = {&g};
  optimizer->build(vars);
  optimizer->apply(vars, grads);
  QVERIFY(w == Matrix::Constant(2, 2, 0.5f));
}

// base_optimizer.py clip_by_global_norm: a non-finite global norm turns the update into NaN.
void TestOptimizers::global_clipnorm_of_infinite_gradient_is_nan() {
  OptimizerSpec s = spec("SGD", 0.1);
  s.global_clipnorm = 1.0;
  auto optimizer = make_optimizer(s, "compile.optimizer");
  Matrix a = Matrix::Constant(1, 2, 0.5f), b = Matrix::Constant(1, 1, 0.5f);
  Matrix ga = Matrix::Constant(1, 2, 0.1f), gb(1, 1);
  gb(0, 0) = std::numeric_limits<float>::infinity();
  std::vector<Matrix*> vars = {&a, &b}, grads = {&ga, &gb};
  optimizer->build(vars);
  optimizer->apply(vars, grads);
  QVERIFY(std::isnan(a(0, 0)));
  QVERIFY(std::isnan(b(0, 0)));
}

void TestOptimizers::validation_data() {
  QTest::addColumn<OptimizerSpec>("spec");
  QTest::addColumn<QString>("place");
  QTest::addColumn<QString>("message");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  OptimizerSpec s;
  auto row = [](const char* name, const OptimizerSpec& spec, const char* place, const char* msg) {
    QTest::newRow(name) << spec << QString("compile.optimizer") + place << QString(msg);
  };
  row("unknown class", spec("Adamax"), ".class_name",
      "unknown optimizer \"Adamax\"; expected one of SGD, Adam, AdamW, RMSprop, Adagrad");
  row("wrong case", spec("ADAM"), ".class_name",
      "unknown optimizer \"ADAM\"; expected one of SGD, Adam, AdamW, RMSprop, Adagrad");
  row("negative rate", spec("SGD", -0.1), ".learning_rate",
      "must be a non-negative number, got -0.1");
  row("NaN rate", spec("Adam", nan), ".learning_rate", "must be a non-negative number, got nan");
  s = spec("SGD"), s.momentum = 1.5;
  row("SGD momentum above 1", s, ".momentum", "must be in [0, 1], got 1.5");
  s = spec("SGD"), s.momentum = -0.1;
  row("SGD negative momentum", s, ".momentum", "must be in [0, 1], got -0.1");
  s = spec("RMSprop"), s.momentum = 2.0;
  row("RMSprop momentum", s, ".momentum", "must be in [0, 1], got 2");
  s = spec("Adam"), s.beta_1 = 1.0;
  row("beta_1 of 1", s, ".beta_1", "must be in [0, 1), got 1");
  s = spec("AdamW"), s.beta_2 = -0.5;
  row("negative beta_2", s, ".beta_2", "must be in [0, 1), got -0.5");
  s = spec("Adam"), s.epsilon = 0.0;
  row("Adam zero epsilon", s, ".epsilon", "must be a positive number, got 0");
  s = spec("RMSprop"), s.epsilon = -1e-7;
  row("RMSprop negative epsilon", s, ".epsilon", "must be a positive number, got -1e-07");
  s = spec("Adagrad"), s.epsilon = 0.0;
  row("Adagrad zero epsilon", s, ".epsilon", "must be a positive number, got 0");
  s = spec("RMSprop"), s.rho = 1.0;
  row("rho of 1", s, ".rho", "must be in [0, 1), got 1");
  s = spec("Adagrad"), s.initial_accumulator_value = -0.1;
  row("negative accumulator", s, ".initial_accumulator_value",
      "must be a non-negative number, got -0.1");
  s = spec("AdamW"), s.weight_decay = -0.004;
  row("negative weight decay", s, ".weight_decay", "must be a non-negative number, got -0.004");
  s = spec("SGD"), s.clipnorm = 0.0;
  row("zero clipnorm", s, ".clipnorm", "must be a positive number, got 0");
  s = spec("SGD"), s.clipvalue = -1.0;
  row("negative clipvalue", s, ".clipvalue", "must be a positive number, got -1");
  s = spec("SGD"), s.global_clipnorm = nan;
  row("NaN global_clipnorm", s, ".global_clipnorm", "must be a positive number, got nan");
  s = spec("SGD"), s.clipnorm = 1.0, s.clipvalue = 0.5;
  row("clipnorm and clipvalue", s, ".clipvalue",
      "cannot be set together with clipnorm; only one of clipnorm, clipvalue and "
      "global_clipnorm can be set");
  s = spec("Adam"), s.clipnorm = 1.0, s.global_clipnorm = 1.0;
  row("clipnorm and global_clipnorm", s, ".global_clipnorm",
      "cannot be set together with clipnorm; only one of clipnorm, clipvalue and "
      "global_clipnorm can be set");
  s = spec("RMSprop"), s.clipvalue = 1.0, s.global_clipnorm = 1.0;
  row("clipvalue and global_clipnorm", s, ".global_clipnorm",
      "cannot be set together with clipvalue; only one of clipnorm, clipvalue and "
      "global_clipnorm can be set");
  s = spec("SGD"), s.schedule = exponential(0.1, 0.0, 0.5, false);
  row("schedule decay_steps", s, ".learning_rate.config.decay_steps",
      "must be a positive number, got 0");
}

void TestOptimizers::validation() {
  QFETCH(OptimizerSpec, spec);
  QFETCH(QString, place);
  QFETCH(QString, message);
  try {
    make_optimizer(spec, "compile.optimizer");
    QFAIL("no InputError");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.place()), place);
    QCOMPARE(QString::fromStdString(e.message()), message);
  }
}

QTEST_GUILESS_MAIN(TestOptimizers)
#include "tst_optimizers.moc"
