// The ModelParallel layout checks the GUI relies on: model_variables() names and shapes variables
// as a built Sequential does; a layout map resolves paths by Keras's rule (exact key, then
// re.search, several matches an error); every error names its place and says what is wrong;
// unmatched entries are warnings; the mesh checks use Keras's sentences. Expected texts are
// written by hand from keras/src/distribution/distribution_lib.py's messages.
#include <QTest>

#include "core/base/error.h"
#include "core/distribution/layout/layout_map.h"
#include "core/training/sequential.h"

using namespace fitbench;

namespace {

LayerSpec dense(int64_t units, const std::string& name = "", bool bias = true) {
  LayerSpec l;
  l.class_name = "Dense";
  l.units = units;
  l.name = name;
  l.use_bias = bias;
  return l;
}

// input 4 -> dense(8) -> dropout -> dense_1(3) -> dense_2(2, no bias)
ModelSpec mlp() {
  ModelSpec spec;
  LayerSpec in;
  in.class_name = "InputLayer";
  in.shape = {4};
  LayerSpec drop;
  drop.class_name = "Dropout";
  drop.rate = 0.5;
  spec.layers = {in, dense(8), drop, dense(3), dense(2, "", false)};
  return spec;
}

const std::vector<int> kMesh22 = {2, 2};
const std::vector<std::string> kAxes = {"batch", "model"};

std::vector<VariableInfo> mlp_vars() { return model_variables(mlp(), 0); }

QStringList texts(const std::vector<LayoutDiagnostic>& d) {
  QStringList out;
  for (const auto& x : d) out << QString::fromStdString(x.text());
  return out;
}

}  // namespace

class TestLayoutMap : public QObject {
  Q_OBJECT
 private slots:
  void model_variables_named_as_keras();
  void model_variables_match_a_built_model();
  void model_variables_errors();
  void exact_key_before_regex();
  void regex_is_a_search_not_a_full_match();
  void valid_layout_resolves_every_variable();
  void errors_data();
  void errors();
  void ambiguous_path_is_reported_on_both_entries();
  void unmatched_entry_is_a_warning();
  void mesh_checks_data();
  void mesh_checks();
  void spec_overload_checks_batch_dim_name();
  void keras_objects();
  void default_layout_map_shards_divisible_kernels();
};

void TestLayoutMap::model_variables_named_as_keras() {
  const auto vars = mlp_vars();
  // Keras: Dense layers are dense, dense_1, dense_2 (Dropout has no variables); kernel (in, out),
  // bias (out,).
  const std::vector<VariableInfo> expected = {
      {"sequential/dense/kernel", {4, 8}},   {"sequential/dense/bias", {8}},
      {"sequential/dense_1/kernel", {8, 3}}, {"sequential/dense_1/bias", {3}},
      {"sequential/dense_2/kernel", {3, 2}},
  };
  QVERIFY(vars == expected);

  // A user name that takes an automatic name: Keras skips it ("dense_1" is taken, so the third
  // unnamed Dense becomes dense_2) and a model name changes the prefix.
  ModelSpec named;
  named.name = "mlp";
  named.layers = {dense(5), dense(6, "dense_1"), dense(7)};
  const auto v2 = model_variables(named, 3);
  QCOMPARE(v2.size(), size_t(6));
  QCOMPARE(v2[0].path, std::string("mlp/dense/kernel"));
  QCOMPARE(v2[2].path, std::string("mlp/dense_1/kernel"));
  QVERIFY(v2[2].shape == (Shape{5, 6}));
  QCOMPARE(v2[4].path, std::string("mlp/dense_2/kernel"));
  QVERIFY(v2[4].shape == (Shape{6, 7}));
}

void TestLayoutMap::model_variables_match_a_built_model() {
  ModelSpec spec = mlp();
  spec.layers.erase(spec.layers.begin());  // no InputLayer: the width comes from the data
  Sequential model(spec);
  model.build(6);
  const auto vars = model_variables(spec, 6);
  QCOMPARE(vars.size(), model.variables().size());
  for (size_t i = 0; i < vars.size(); ++i) {
    QCOMPARE(vars[i].path, model.variables()[i].path);
    QVERIFY(vars[i].shape == model.variables()[i].shape);
  }
}

void TestLayoutMap::model_variables_errors() {
  ModelSpec no_input = mlp();
  no_input.layers.erase(no_input.layers.begin());
  try {
    model_variables(no_input, 0);
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("model"));
  }
  try {
    model_variables(mlp(), 5);  // the InputLayer says 4
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QVERIFY(std::string(e.what()).find("4 features but the data has 5") != std::string::npos);
  }
  ModelSpec bad = mlp();
  bad.layers[1].units = 0;
  QVERIFY_THROWS_EXCEPTION(InputError, model_variables(bad, 0));
}

void TestLayoutMap::exact_key_before_regex() {
  // "kernel" as a regex matches every kernel, but the exact key wins for dense/kernel: no
  // ambiguity there, while dense_1's and dense_2's kernels take the regex entry.
  const LayoutEntries entries = {{"kernel", {"", ""}}, {"sequential/dense/kernel", {"model", ""}}};
  const auto c = check_layout_map(mlp_vars(), kMesh22, kAxes, entries, 4);
  QVERIFY2(c.ok(), qPrintable(texts(c.errors).join("\n")));
  QCOMPARE(c.variables[0].entry, 1);
  QVERIFY(c.variables[0].axes == (std::vector<std::string>{"model", ""}));
  QCOMPARE(c.variables[2].entry, 0);  // dense_1/kernel
  QCOMPARE(c.variables[4].entry, 0);  // dense_2/kernel
  QCOMPARE(c.entries[0].variables.size(), size_t(2));
  QCOMPARE(c.entries[1].variables, std::vector<std::string>{"sequential/dense/kernel"});
}

void TestLayoutMap::regex_is_a_search_not_a_full_match() {
  const auto vars = mlp_vars();
  std::vector<std::optional<PathPattern>> re = {PathPattern::compile("dense_1"),
                                                PathPattern::compile("^dense"),
                                                PathPattern::compile("bias$")};
  const LayoutEntries e = {{"dense_1", {}}, {"^dense", {}}, {"bias$", {}}};
  // re.search finds "dense_1" inside "sequential/dense_1/kernel"; a full match would not.
  auto k1 = lookup_layout(e, re, "sequential/dense_1/kernel");
  QCOMPARE(k1.entry, 0);
  QVERIFY(!k1.exact);
  // "^dense" is anchored at the start of the path, which is "sequential/...": no match.
  QCOMPARE(lookup_layout({e[1]}, {re[1]}, "sequential/dense/kernel").entry, -1);
  // dense_1/bias is found by two keys: ambiguous.
  auto b1 = lookup_layout(e, re, "sequential/dense_1/bias");
  QCOMPARE(b1.entry, -1);
  QCOMPARE(b1.matches, (std::vector<int>{0, 2}));
  // An invalid key (nullopt) never matches.
  QCOMPARE(lookup_layout({{"(", {}}}, {std::nullopt}, "(").entry, 0);  // but exact keys still do
  QCOMPARE(lookup_layout({{"(", {}}}, {std::nullopt}, "x(").entry, -1);
}

void TestLayoutMap::valid_layout_resolves_every_variable() {
  // dense_1 has 3 units, so it is left replicated by naming only dense/ and dense_2/.
  const LayoutEntries entries = {
      {"dense/kernel", {"model"}}, {"dense/bias", {"model"}}, {"dense_2/kernel", {"", "model"}}};
  const auto c = check_layout_map(mlp_vars(), kMesh22, kAxes, entries, 4);
  QVERIFY2(c.ok(), qPrintable(texts(c.errors).join("\n")));
  QVERIFY(c.warnings.empty());
  QCOMPARE(c.entries[0].variables, std::vector<std::string>{"sequential/dense/kernel"});
  QCOMPARE(c.entries[1].variables, std::vector<std::string>{"sequential/dense/bias"});
  QCOMPARE(c.entries[2].variables, std::vector<std::string>{"sequential/dense_2/kernel"});
  // A layout shorter than the rank replicates the rest (a JAX PartitionSpec).
  QCOMPARE(c.variables[0].entry, 0);
  QVERIFY(c.variables[0].axes == (std::vector<std::string>{"model", ""}));
  QCOMPARE(c.variables[1].entry, 1);
  QCOMPARE(c.variables[2].entry, -1);  // dense_1/kernel: replicated
  QVERIFY(c.variables[2].axes == (std::vector<std::string>{"", ""}));
  QCOMPARE(c.variables[4].entry, 2);
  QVERIFY(c.variables[4].axes == (std::vector<std::string>{"", "model"}));
}

void TestLayoutMap::errors_data() {
  QTest::addColumn<QString>("key");
  QTest::addColumn<QStringList>("axes");
  QTest::addColumn<QString>("place");
  QTest::addColumn<QString>("message");
  QTest::addColumn<bool>("fitbench_limit");
  const QString kernel1 = "distribution.layout_map[\"dense_1/kernel\"]";
  QTest::newRow("not divisible")
      << "dense_1/kernel" << QStringList{"", "model"} << kernel1 + "[1]"
      << "sequential/dense_1/kernel has shape (8, 3): dimension 1 of size 3 cannot be split "
         "evenly across the 2 devices of mesh axis 'model'"
      << false;
  QTest::newRow("unknown axis")
      << "dense_1/kernel" << QStringList{"modle", ""} << kernel1 + "[0]"
      << "Invalid axis names for Layout. Valid axis names: ['batch', 'model'], Got 'modle'"
      << false;
  QTest::newRow("too many axes")
      << "dense/bias" << QStringList{"", "model"} << "distribution.layout_map[\"dense/bias\"]"
      << "the layout has 2 axes but sequential/dense/bias has rank 1 (shape (8,))" << false;
  QTest::newRow("axis twice") << "dense/kernel" << QStringList{"model", "model"}
                              << "distribution.layout_map[\"dense/kernel\"][1]"
                              << "mesh axis 'model' already shards dimension 0; a layout may use "
                                 "each mesh axis once"
                              << false;
  QTest::newRow("invalid regex") << "dense[" << QStringList{"model"}
                                 << "distribution.layout_map[\"dense[\"]"
                                 << "is not a valid regular expression" << false;
  QTest::newRow("batch axis") << "dense/kernel" << QStringList{"batch", ""}
                              << "distribution.layout_map[\"dense/kernel\"][0]"
                              << "fitbench shards variables along the model axis only, and "
                                 "'batch' is the batch axis (batch_dim_name); use null to "
                                 "replicate this dimension"
                              << true;
  // The batch axis on a dimension it does not divide (3 over 2): one message, the batch axis's.
  QTest::newRow("batch axis, indivisible too")
      << "dense_1/kernel" << QStringList{"", "batch"} << kernel1 + "[1]"
      << "fitbench shards variables along the model axis only, and 'batch' is the batch axis"
      << true;
}

void TestLayoutMap::errors() {
  QFETCH(QString, key);
  QFETCH(QStringList, axes);
  QFETCH(QString, place);
  QFETCH(QString, message);
  QFETCH(bool, fitbench_limit);
  std::vector<std::string> a;
  for (const auto& s : axes) a.push_back(s.toStdString());
  const LayoutEntries entries = {{key.toStdString(), a}};
  const auto c = check_layout_map(mlp_vars(), kMesh22, kAxes, entries, 4);
  QCOMPARE(c.errors.size(), size_t(1));
  const auto& e = c.errors.front();
  QCOMPARE(QString::fromStdString(e.place), place);
  QVERIFY2(QString::fromStdString(e.message).startsWith(message), e.message.c_str());
  QCOMPARE(e.kind,
           fitbench_limit ? LayoutDiagnostic::Kind::kFitbench : LayoutDiagnostic::Kind::kKeras);
  QCOMPARE(e.entry, 0);
  QCOMPARE(c.entries[0].errors.size(), size_t(1));
  QCOMPARE(c.entries[0].errors[0], e.message);
  try {
    c.throw_if_invalid();
    QFAIL("expected an InputError");
  } catch (const InputError& err) {
    QCOMPARE(QString::fromStdString(err.place()), place);
  }
}

void TestLayoutMap::ambiguous_path_is_reported_on_both_entries() {
  const LayoutEntries entries = {{"dense.*kernel", {"", "model"}}, {"kernel", {"", ""}}};
  const auto c = check_layout_map(mlp_vars(), kMesh22, kAxes, entries, 4);
  // Three kernels, each matched by both keys: three errors, in model order.
  QCOMPARE(c.errors.size(), size_t(3));
  QCOMPARE(c.errors[0].text(),
           std::string("distribution.layout_map: Path 'sequential/dense/kernel' matches multiple "
                       "layout specification keys: ['dense.*kernel', 'kernel']. Please make sure "
                       "each tensor/variable path only matches at most one layout specification "
                       "key in the LayoutMap."));
  QCOMPARE(c.entries[0].errors.size(), size_t(3));
  QCOMPARE(c.entries[1].errors.size(), size_t(3));
  QVERIFY(c.variables[0].ambiguous);
  QCOMPARE(c.variables[0].entry, -1);
  QCOMPARE(c.entries[0].variables.size(), size_t(3));
  QVERIFY(!c.variables[1].ambiguous);  // dense/bias matches neither
  // Ambiguous variables are not checked for divisibility (dense_1/kernel has 3 columns).
  for (const auto& e : c.errors) QVERIFY(e.message.find("cannot be split") == std::string::npos);
}

void TestLayoutMap::unmatched_entry_is_a_warning() {
  const LayoutEntries entries = {{"conv2d.*kernel", {"", "", "", "model"}},
                                 {"dense/kernel", {"", "model"}},
                                 {"dense/kernel", {"", ""}}};
  const auto c = check_layout_map(mlp_vars(), kMesh22, kAxes, entries, 4);
  QCOMPARE(c.warnings.size(), size_t(1));  // the duplicate is an error, not also a warning
  QCOMPARE(c.warnings[0].place, std::string("distribution.layout_map[\"conv2d.*kernel\"]"));
  QCOMPARE(c.warnings[0].message,
           std::string("matches no variable of the model, so it shards nothing (the variables "
                       "are sequential/dense/kernel, sequential/dense/bias, "
                       "sequential/dense_1/kernel, sequential/dense_1/bias, ...)"));
  QVERIFY(c.entries[0].matches_nothing());
  QCOMPARE(c.entries[0].warning, c.warnings[0].message);
  // Keras's duplicate-key error, on the second entry; the first still applies.
  QCOMPARE(c.errors.size(), size_t(1));
  QCOMPARE(c.errors[0].entry, 2);
  QCOMPARE(c.errors[0].message, std::string("dense/kernel already exist in the LayoutMap. Please "
                                            "make sure to not use duplicated keys."));
  QCOMPARE(c.variables[0].entry, 1);
}

void TestLayoutMap::mesh_checks_data() {
  QTest::addColumn<QList<int>>("shape");
  QTest::addColumn<QStringList>("names");
  QTest::addColumn<int>("devices");
  QTest::addColumn<QString>("expected");
  QTest::newRow("ok") << QList<int>{2, 2} << QStringList{"batch", "model"} << 4 << "";
  QTest::newRow("empty") << QList<int>{} << QStringList{} << 4
                         << "distribution.mesh: Shape and axis_names cannot be empty. Received: "
                            "shape=(), axis_names=[]";
  QTest::newRow("names count") << QList<int>{2, 2} << QStringList{"batch"} << 4
                               << "distribution.mesh.axis_names: Shape and axis_names should have "
                                  "same size. Received: shape=(2, 2), axis_names=['batch']";
  QTest::newRow("devices") << QList<int>{2, 2} << QStringList{"batch", "model"} << 2
                           << "distribution.mesh.shape: Shape does not match the number of "
                              "devices. Received: shape=(2, 2); devices.shape=(2,) (the mesh "
                              "needs 4 devices, there are 2 devices)";
  QTest::newRow("zero axis") << QList<int>{0, 2} << QStringList{"batch", "model"} << 0
                             << "distribution.mesh.shape[0]: must be a positive number of "
                                "devices, got 0";
  QTest::newRow("duplicate name") << QList<int>{1, 2} << QStringList{"x", "x"} << 2
                                  << "distribution.mesh.axis_names[1]: 'x' is already the name "
                                     "of another axis";
  QTest::newRow("3 axes") << QList<int>{1, 2, 1} << QStringList{"batch", "model", "seq"} << 2
                          << "distribution.mesh.shape: fitbench runs ModelParallel on a mesh of "
                             "one or two axes (the batch axis and one model axis), got 3 axes";
}

void TestLayoutMap::mesh_checks() {
  QFETCH(QList<int>, shape);
  QFETCH(QStringList, names);
  QFETCH(int, devices);
  QFETCH(QString, expected);
  std::vector<int> s(shape.begin(), shape.end());
  std::vector<std::string> n;
  for (const auto& x : names) n.push_back(x.toStdString());
  const std::optional<int> count = devices > 0 ? std::optional<int>(devices) : std::nullopt;
  const auto c = check_layout_map(mlp_vars(), s, n, {}, count);
  if (expected.isEmpty()) {
    QVERIFY2(c.ok(), qPrintable(texts(c.errors).join("\n")));
    return;
  }
  QCOMPARE(texts(c.errors), QStringList{expected});
  // The Keras-named object refuses the same mesh (3 axes is a fitbench limit of ModelParallel
  // only, not of DeviceMesh).
  if (s.size() <= 2 && count) {
    std::vector<std::string> devs;
    for (int i = 0; i < *count; ++i) devs.push_back("cpu:" + std::to_string(i));
    QVERIFY_THROWS_EXCEPTION(InputError, DeviceMesh(s, n, devs));
  }
}

void TestLayoutMap::spec_overload_checks_batch_dim_name() {
  DistributionSpec spec;
  spec.class_name = "ModelParallel";
  spec.mesh_shape = {2, 2};
  spec.axis_names = {"data", "model"};
  spec.batch_dim_name = "batch";
  spec.layout_map = {{"dense/kernel", {"", "model"}}};
  auto c = check_layout_map(mlp_vars(), spec, 4);
  QCOMPARE(texts(c.errors),
           QStringList{"distribution.batch_dim_name: Invalid axis names for Layout. Valid axis "
                       "names: ['data', 'model'], Got 'batch' (batch_dim_name must be one of the "
                       "mesh's axes)"});
  // With batch_dim_name = "model" the roles swap: sharding over "model" is now the batch axis.
  spec.batch_dim_name = "model";
  c = check_layout_map(mlp_vars(), spec, 4);
  QCOMPARE(c.errors.size(), size_t(1));
  QCOMPARE(c.errors[0].kind, LayoutDiagnostic::Kind::kFitbench);
  spec.layout_map = {{"dense/kernel", {"", "data"}}};
  QVERIFY(check_layout_map(mlp_vars(), spec, 4).ok());
}

void TestLayoutMap::keras_objects() {
  const std::vector<std::string> devs = {"cpu:0", "cpu:1", "cpu:2", "cpu:3"};
  DeviceMesh mesh({2, 2}, {"batch", "model"}, devs);
  QCOMPARE(mesh.repr(), std::string("<DeviceMesh shape=(2, 2), axis_names=['batch', 'model']>"));
  QCOMPARE(mesh.axis_size("model"), 2);
  QCOMPARE(mesh.axis_index("nothing"), -1);

  LayoutMap map(mesh);
  map.set("dense.*kernel", std::vector<std::string>{"", "model"});
  map.set("dense.*bias", TensorLayout({"model"}));
  QCOMPARE(map.size(), size_t(2));
  // Keras's docstring examples: dense_1.kernel -> the 2-D layout; conv3d -> None.
  auto k = map.get("dense_1.kernel");
  QVERIFY(k.has_value());
  QCOMPARE(k->repr(), std::string("<TensorLayout axes=(None, 'model'), device_mesh=<DeviceMesh "
                                  "shape=(2, 2), axis_names=['batch', 'model']>>"));
  QVERIFY(map.get("dense_2.bias")->axes() == std::vector<std::string>{"model"});
  QVERIFY(!map.get("my_model/conv3d_1/kernel").has_value());
  // Duplicate keys, invalid keys, ambiguous lookups and invalid axes raise.
  QVERIFY_THROWS_EXCEPTION(InputError, map.set("dense.*bias", std::vector<std::string>{""}));
  QVERIFY_THROWS_EXCEPTION(InputError, map.set("(", std::vector<std::string>{""}));
  map.set("kernel", std::vector<std::string>{"", ""});
  QVERIFY_THROWS_EXCEPTION(InputError, map.get("dense/kernel"));
  QVERIFY(map.get("kernel").has_value());  // exact key: no ambiguity
  QVERIFY(map.erase("kernel"));
  QVERIFY(!map.erase("kernel"));
  QVERIFY(map.get("dense/kernel").has_value());
  QVERIFY_THROWS_EXCEPTION(InputError, TensorLayout({"modle"}, mesh));
  TensorLayout bound({"model"}, mesh);
  QVERIFY_THROWS_EXCEPTION(InputError, bound.set_device_mesh(mesh));
  const LayoutEntries entries = map.entries();
  QCOMPARE(entries.size(), size_t(2));
  QCOMPARE(entries[1].first, std::string("dense.*bias"));
}

void TestLayoutMap::default_layout_map_shards_divisible_kernels() {
  // Kernels (4, 8), (8, 3), (3, 2): on 2 model devices the 8- and 2-unit kernels split.
  const auto vars = mlp_vars();
  const LayoutEntries two = default_layout_map(vars, "model", 2);
  QCOMPARE(two.size(), size_t(2));
  QCOMPARE(two[0].first, std::string("sequential/dense/kernel"));
  QCOMPARE(two[1].first, std::string("sequential/dense_2/kernel"));
  QVERIFY(two[1].second == (std::vector<std::string>{"", "model"}));
  QVERIFY(check_layout_map(vars, kMesh22, kAxes, two, 4).ok());
  // On 4 devices only dense's 8 units divide.
  const LayoutEntries four = default_layout_map(vars, "model", 4);
  QCOMPARE(four.size(), size_t(1));
  QVERIFY(check_layout_map(vars, {1, 4}, kAxes, four, 4).ok());
}

QTEST_GUILESS_MAIN(TestLayoutMap)
#include "tst_layout_map.moc"
