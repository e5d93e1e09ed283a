// The Model panel: round trips of every layer field, the live summary (hand-counted params and
// core's own Sequential::summary as the reference), Keras's automatic names, the validation
// sentences, layer editing, adding, removing, moving (buttons and drag) and read-only mode.
#include <QAbstractItemModel>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QToolButton>

#include "core/training/sequential.h"
#include "ui/panels/layer_editor.h"
#include "ui/panels/model_panel.h"

using namespace fitbench;

namespace {

LayerSpec dense(int64_t units, const std::string& activation = "linear",
                const std::string& name = "") {
  LayerSpec l;
  l.class_name = "Dense";
  l.units = units;
  l.activation = activation;
  l.name = name;
  return l;
}

LayerSpec dropout(double rate) {
  LayerSpec l;
  l.class_name = "Dropout";
  l.rate = rate;
  return l;
}

LayerSpec activation(const std::string& name) {
  LayerSpec l;
  l.class_name = "Activation";
  l.activation = name;
  return l;
}

LayerSpec input(int64_t features) {
  LayerSpec l;
  l.class_name = "InputLayer";
  l.name = "input_layer";
  l.shape = {features};
  return l;
}

ModelSpec model(std::vector<LayerSpec> layers) {
  ModelSpec m;
  m.layers = std::move(layers);
  return m;
}

bool sameInitializer(const InitializerSpec& a, const InitializerSpec& b) {
  return a.name == b.name && a.mean == b.mean && a.stddev == b.stddev && a.minval == b.minval &&
         a.maxval == b.maxval && a.seed == b.seed;
}

bool sameLayer(const LayerSpec& a, const LayerSpec& b) {
  return a.class_name == b.class_name && a.name == b.name && a.trainable == b.trainable &&
         a.shape == b.shape && a.units == b.units && a.use_bias == b.use_bias &&
         sameInitializer(a.kernel_initializer, b.kernel_initializer) &&
         sameInitializer(a.bias_initializer, b.bias_initializer) &&
         a.kernel_regularizer.l1 == b.kernel_regularizer.l1 &&
         a.kernel_regularizer.l2 == b.kernel_regularizer.l2 &&
         a.bias_regularizer.l1 == b.bias_regularizer.l1 &&
         a.bias_regularizer.l2 == b.bias_regularizer.l2 && a.activation == b.activation &&
         a.rate == b.rate && a.seed == b.seed;
}

bool sameModel(const ModelSpec& a, const ModelSpec& b) {
  if (a.name != b.name || a.layers.size() != b.layers.size()) return false;
  for (size_t i = 0; i < a.layers.size(); ++i) {
    if (!sameLayer(a.layers[i], b.layers[i])) return false;
  }
  return true;
}

QStringList classNames(const ModelSpec& m) {
  QStringList names;
  for (const LayerSpec& l : m.layers) names << QString::fromStdString(l.class_name);
  return names;
}

LossSpec loss(const std::string& name, bool fromLogits = false) {
  LossSpec l;
  l.name = name;
  l.from_logits = fromLogits;
  return l;
}

QString warnings(const ModelPanel& panel) {
  QStringList texts;
  for (const ModelIssue& issue : panel.issues()) {
    if (!issue.error) texts << issue.text;
  }
  return texts.join('\n');
}

}  // namespace

class TestModelPanel : public QObject {
  Q_OBJECT

 private slots:
  void roundTripKeepsEveryField() {
    LayerSpec first = dense(16, "tanh", "hidden");
    first.use_bias = false;
    first.trainable = false;
    first.kernel_initializer = {"random_uniform", 0.5, 0.2, -0.3, 0.7, 11};
    first.bias_initializer = {"random_normal", 0.1, 0.02, -0.05, 0.05, std::nullopt};
    first.kernel_regularizer = {0.001, 0.01};
    first.bias_regularizer = {0.0, 0.002};
    LayerSpec drop = dropout(0.35);
    drop.seed = 5;
    ModelSpec spec = model({input(3), first, drop, activation("gelu"), dense(2, "softmax")});
    spec.name = "my_model";
    ModelPanel panel;
    QSignalSpy spy(&panel, &ModelPanel::changed);
    panel.setSpec(spec);
    QVERIFY(sameModel(panel.spec(), spec));
    QCOMPARE(spy.count(), 0);  // setSpec emits nothing
    // Visiting every layer in the editor changes nothing either.
    for (int i = 0; i < 4; ++i) panel.selectLayer(i);
    QVERIFY(sameModel(panel.spec(), spec));
    QCOMPARE(spy.count(), 0);
  }

  void rowsShowEachLayer() {
    ModelPanel panel;
    panel.setSpec(model({input(4), dense(8, "relu"), dropout(0.2), activation("softmax")}));
    QListWidget* list = panel.layerList();
    QCOMPARE(list->count(), 4);
    QCOMPARE(list->item(0)->text(), QStringLiteral("Input (4 features)"));
    QVERIFY(!(list->item(0)->flags() & Qt::ItemIsSelectable));
    QCOMPARE(list->item(1)->text(), QStringLiteral("Dense(8, relu)"));
    QCOMPARE(list->item(2)->text(), QStringLiteral("Dropout(0.2)"));
    QCOMPARE(list->item(3)->text(), QStringLiteral("Activation(softmax)"));
    panel.setInputFeatures(1);
    QCOMPARE(list->item(0)->text(), QStringLiteral("Input (1 feature)"));
    // A given name (what a layout map's rules match) follows the layer; automatic ones do not.
    panel.setSpec(model({dense(8, "relu", "hidden_1"), dense(1)}));
    QCOMPARE(list->item(1)->text(), QStringLiteral("Dense(8, relu) · hidden_1"));
    QCOMPARE(list->item(2)->text(), QStringLiteral("Dense(1, linear)"));
  }

  void summaryTotalParams_data() {
    QTest::addColumn<int>("inputs");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<bool>("dropoutBetween");
    QTest::addColumn<QString>("total");
    QTest::addColumn<QString>("nonTrainable");
    // 4 -> Dense(8) -> Dense(3): (4*8 + 8) + (8*3 + 3) = 40 + 27 = 67 params, 67 * 4 = 268 B.
    QTest::newRow("4-8-3") << 4 << true << false << "Total params: 67 (268.00 B)"
                           << "Non-trainable params: 0 (0.00 B)";
    // A Dropout has no weights: still 67.
    QTest::newRow("4-8-dropout-3") << 4 << true << true << "Total params: 67 (268.00 B)"
                                   << "Non-trainable params: 0 (0.00 B)";
    // Without biases: 4*8 + 8*3 = 56 params = 224 B.
    QTest::newRow("no bias") << 4 << false << false << "Total params: 56 (224.00 B)"
                             << "Non-trainable params: 0 (0.00 B)";
    // 10 inputs: (10*8 + 8) + 27 = 115 = 460 B.
    QTest::newRow("10-8-3") << 10 << true << false << "Total params: 115 (460.00 B)"
                            << "Non-trainable params: 0 (0.00 B)";
  }
  void summaryTotalParams() {
    QFETCH(int, inputs);
    QFETCH(bool, bias);
    QFETCH(bool, dropoutBetween);
    QFETCH(QString, total);
    QFETCH(QString, nonTrainable);
    LayerSpec a = dense(8, "relu");
    LayerSpec b = dense(3, "softmax");
    a.use_bias = b.use_bias = bias;
    std::vector<LayerSpec> layers{a, b};
    if (dropoutBetween) layers.insert(layers.begin() + 1, dropout(0.5));
    ModelPanel panel;
    panel.setSpec(model(layers));
    panel.setInputFeatures(inputs);
    const QString text = panel.summaryText();
    QVERIFY2(text.contains(total), qPrintable(text));
    QVERIFY2(text.contains(nonTrainable), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("dense (Dense)")));
    QVERIFY(text.contains(QStringLiteral("dense_1 (Dense)")));
    QVERIFY(text.contains(QStringLiteral("(None, 3)")));
  }

  void summaryUpdatesOnEdit() {
    ModelPanel panel;
    panel.setSpec(model({dense(8, "relu"), dense(3)}));
    panel.setInputFeatures(4);
    panel.selectLayer(0);
    auto* units = panel.layerEditor()->findChild<QSpinBox*>(QStringLiteral("units"));
    QVERIFY(units);
    QSignalSpy spy(&panel, &ModelPanel::changed);
    units->setValue(5);  // as if typed
    QVERIFY(spy.count() >= 1);
    // (4*5 + 5) + (5*3 + 3) = 25 + 18 = 43 = 172 B.
    QVERIFY2(panel.summaryText().contains(QStringLiteral("Total params: 43 (172.00 B)")),
             qPrintable(panel.summaryText()));
    QCOMPARE(panel.spec().layers[0].units, 5);
    QCOMPARE(panel.layerList()->item(1)->text(), QStringLiteral("Dense(5, relu)"));
    // A frozen layer moves its params to the non-trainable line: 18 = 72 B.
    panel.selectLayer(1);
    panel.layerEditor()->findChild<QCheckBox*>(QStringLiteral("trainable"))->setChecked(false);
    QVERIFY(panel.summaryText().contains(QStringLiteral("Non-trainable params: 18 (72.00 B)")));
  }

  void summaryMatchesCore_data() {
    QTest::addColumn<int>("inputs");
    QTest::addColumn<int>("variant");
    QTest::newRow("seed model") << 4 << 0;
    QTest::newRow("named and unnamed") << 2 << 1;
    QTest::newRow("every layer kind") << 5 << 2;
  }
  void summaryMatchesCore() {
    // core's Sequential builds the model and prints its summary; the panel computes the same
    // table from the spec alone.
    QFETCH(int, inputs);
    QFETCH(int, variant);
    ModelSpec spec;
    if (variant == 0) spec = model({input(inputs), dense(1, "sigmoid")});
    if (variant == 1) spec = model({dense(4), dense(3, "relu", "dense"), dense(1), dense(2)});
    if (variant == 2) {
      LayerSpec frozen = dense(6, "relu");
      frozen.trainable = false;
      spec = model({frozen, dropout(0.1), activation("tanh"), dense(3, "linear", "out"),
                    activation("softmax"), dropout(0.2)});
    }
    ModelPanel panel;
    panel.setSpec(spec);
    panel.setInputFeatures(inputs);
    Sequential reference(spec);
    reference.build(inputs);
    QCOMPARE(panel.summaryText(), QString::fromStdString(reference.summary()));
  }

  void automaticNames() {
    // An explicit "dense" is reserved first, so the unnamed layers take dense_1 and dense_2
    // (core/nn/network.cpp).
    ModelPanel panel;
    panel.setSpec(model({dense(4), dense(3, "relu", "dense"), dense(1)}));
    panel.setInputFeatures(2);
    const QString text = panel.summaryText();
    QVERIFY(text.contains(QStringLiteral("dense_1 (Dense)")));
    QVERIFY(text.contains(QStringLiteral("dense_2 (Dense)")));
    QVERIFY(text.indexOf(QStringLiteral("dense_1 (Dense)")) <
            text.indexOf(QStringLiteral("dense (Dense)")));
    auto* name = panel.layerEditor()->findChild<QLineEdit*>(QStringLiteral("name"));
    panel.selectLayer(2);
    QCOMPARE(name->placeholderText(), QStringLiteral("dense_2 (automatic)"));
  }

  // A file whose InputLayer declares another width than the data: the window trains on the
  // data's and says so (fitbench-cli refuses such a file); once saved, the file agrees.
  void fileInputWidthOtherThanTheDataWarns() {
    ModelPanel panel;
    panel.setSpec(model({input(3), dense(2, "softmax")}));
    panel.setInputFeatures(4);
    QVERIFY(panel.errorText().isEmpty());
    QStringList warnings;
    for (const ModelIssue& issue : panel.issues())
      if (!issue.error) warnings << issue.text;
    QCOMPARE(warnings.value(0),
             QStringLiteral("Input: the file's InputLayer has batch_shape [null, 3], but the data "
                            "has 4 feature columns; the window trains on the data's shape and "
                            "saves batch_shape [null, 4] (fitbench-cli refuses the file until "
                            "then)."));
    QCOMPARE(panel.spec().layers.front().shape, (std::vector<int64_t>{4}));
    panel.markSaved();
    for (const ModelIssue& issue : panel.issues())
      QVERIFY2(!issue.text.startsWith(QStringLiteral("Input:")), qPrintable(issue.text));
    panel.setInputFeatures(3);  // the data's width is the file's: nothing to say
    panel.setSpec(model({input(3), dense(2, "softmax")}));
    for (const ModelIssue& issue : panel.issues())
      QVERIFY2(!issue.text.startsWith(QStringLiteral("Input:")), qPrintable(issue.text));
  }

  // Images: the input takes the data's (28, 28); a Dense on it is refused with the engine's
  // sentence until a Flatten (added and moved with the panel's own actions) comes first; a
  // Reshape's target shape is typed into its field, and every shape reaches the summary as
  // core's Sequential prints it.
  void imagesThroughFlattenAndReshape() {
    ModelPanel panel;
    panel.setSpec(model({input(784), dense(10, "softmax")}));
    panel.setInputShape({28, 28});
    QCOMPARE(panel.layerList()->item(0)->text(), QString::fromUtf8("Input (784 features)"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));  // flat rows: valid
    panel.setSpec(model({dense(10, "softmax")}));
    QCOMPARE(panel.layerList()->item(0)->text(), QString::fromUtf8("Input (28 × 28)"));
    QVERIFY2(panel.errorText().startsWith(
                 "Layer 1 (dense): this Dense layer receives (None, 28, 28): fitbench's Dense "
                 "takes one axis of features, so add a Flatten layer before it"),
             qPrintable(panel.errorText()));
    QVERIFY(panel.summaryText().contains(QStringLiteral("│ ?")));
    panel.selectLayer(-1);
    panel.addLayer(QStringLiteral("Flatten"));
    panel.moveSelectedLayer(-1);
    QCOMPARE(classNames(panel.spec()), QStringList({"Flatten", "Dense"}));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("Reshape"));
    QCOMPARE(classNames(panel.spec()), QStringList({"Flatten", "Reshape", "Dense"}));
    QCOMPARE(panel.spec().layers[1].target_shape, (std::vector<int64_t>{-1}));
    auto* target = panel.layerEditor()->findChild<QLineEdit*>(QStringLiteral("target_shape"));
    QVERIFY(target && target->isVisibleTo(&panel));
    QCOMPARE(target->text(), QStringLiteral("-1"));
    target->selectAll();
    QTest::keyClicks(target, QStringLiteral("7, 112"));
    QCOMPARE(panel.spec().layers[1].target_shape, (std::vector<int64_t>{7, 112}));
    QCOMPARE(panel.layerList()->item(2)->text(), QStringLiteral("Reshape(7, 112)"));
    QVERIFY2(
        panel.errorText().startsWith("Layer 3 (dense): this Dense layer receives (None, 7, 112)"),
        qPrintable(panel.errorText()));
    target->selectAll();
    QTest::keyClicks(target, QStringLiteral("5, 5"));
    QCOMPARE(panel.errorText(),
             QStringLiteral("Layer 2 (reshape): target_shape (None, 5, 5) holds 25 values but the "
                            "layer receives (None, 784), 784 values; a reshape keeps the number "
                            "of values"));
    QVERIFY(target->toolTip().contains(QStringLiteral("holds 25 values")));
    target->selectAll();
    QTest::keyClicks(target, QStringLiteral("-1, 16"));
    QVERIFY2(
        panel.errorText().startsWith("Layer 3 (dense): this Dense layer receives (None, 49, 16)"),
        qPrintable(panel.errorText()));
    target->selectAll();
    QTest::keyClicks(target, QStringLiteral("784"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    // A model whose output has two axes is refused: the losses take one.
    panel.selectLayer(2);
    panel.addLayer(QStringLiteral("Reshape"));
    target->selectAll();
    QTest::keyClicks(target, QStringLiteral("2, 5"));
    QCOMPARE(panel.errorText(),
             QStringLiteral("Layer 4 (reshape_1): the model's output has shape (None, 2, 5), and "
                            "fitbench's losses take one axis of outputs; end the model with a "
                            "Dense layer, or a Flatten."));
    panel.removeSelectedLayer();
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    // The table is core's.
    ModelSpec spec = panel.spec();
    Sequential reference(spec);
    reference.build(Shape{28, 28});
    QCOMPARE(panel.summaryText(), QString::fromStdString(reference.summary()));
    QVERIFY(panel.summaryText().contains(QStringLiteral("(None, 784)")));
  }

  // Rescaling from the Add menu starts at Keras's tutorial value, 1/255; its scale and offset are
  // typed into their fields and show in the layer's row, and the summary is core's.
  void rescalingFromItsFields() {
    ModelPanel panel;
    panel.setSpec(model({dense(10, "softmax")}));
    panel.setInputShape({28, 28});
    panel.selectLayer(-1);
    panel.addLayer(QStringLiteral("Flatten"));
    panel.moveSelectedLayer(-1);
    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("Rescaling"));
    QCOMPARE(classNames(panel.spec()), QStringList({"Flatten", "Rescaling", "Dense"}));
    QCOMPARE(panel.spec().layers[1].scale, 1.0 / 255.0);
    QCOMPARE(panel.layerList()->item(2)->text(), QStringLiteral("Rescaling(0.00392157)"));
    auto* scale = panel.layerEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("scale"));
    auto* offset = panel.layerEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("offset"));
    auto* rate = panel.layerEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("rate"));
    QVERIFY(scale && scale->isVisibleTo(&panel));
    QVERIFY(offset && offset->isVisibleTo(&panel));
    QVERIFY(rate && !rate->isVisibleTo(&panel));
    scale->selectAll();
    QTest::keyClicks(scale, QStringLiteral("0.0078431372549"));
    QTest::keyClick(scale, Qt::Key_Enter);
    offset->selectAll();
    QTest::keyClicks(offset, QStringLiteral("-1"));
    QTest::keyClick(offset, Qt::Key_Enter);
    QCOMPARE(panel.spec().layers[1].scale, 0.0078431372549);
    QCOMPARE(panel.spec().layers[1].offset, -1.0);
    QCOMPARE(panel.layerList()->item(2)->text(), QStringLiteral("Rescaling(0.00784314, -1)"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    Sequential reference(panel.spec());
    reference.build(Shape{28, 28});
    QCOMPARE(panel.summaryText(), QString::fromStdString(reference.summary()));
    QVERIFY(panel.summaryText().contains(QStringLiteral("rescaling (Rescaling)")));
  }

  // GlobalAveragePooling2D takes (height, width, channels): on flat rows the panel says what to
  // do, and after a Reshape to (28, 28, 1) the summary shows one mean per channel.
  void globalAveragePoolingNeedsImages() {
    ModelPanel panel;
    panel.setSpec(model({dense(10, "softmax")}));
    panel.setInputShape({784});
    panel.selectLayer(-1);
    panel.addLayer(QStringLiteral("GlobalAveragePooling2D"));
    panel.moveSelectedLayer(-1);
    QCOMPARE(classNames(panel.spec()), QStringList({"GlobalAveragePooling2D", "Dense"}));
    QVERIFY2(panel.errorText().startsWith(
                 "Layer 1 (global_average_pooling2d): this GlobalAveragePooling2D layer receives "
                 "(None, 784): it takes images of shape (height, width, channels)"),
             qPrintable(panel.errorText()));
    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("Reshape"));
    panel.moveSelectedLayer(-1);
    QCOMPARE(classNames(panel.spec()), QStringList({"Reshape", "GlobalAveragePooling2D", "Dense"}));
    auto* target = panel.layerEditor()->findChild<QLineEdit*>(QStringLiteral("target_shape"));
    target->selectAll();
    QTest::keyClicks(target, QStringLiteral("28, 28, 1"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    QVERIFY(panel.summaryText().contains(QStringLiteral("(None, 1)")));
  }

  // A Conv2D and a MaxPooling2D from the Add menu's classes, their fields typed with keys: the
  // rows read as their settings, the summary is the engine's, and a kernel larger than the image
  // is said at the kernel size.
  void convolutionFromItsFields() {
    ModelPanel panel;
    LayerSpec flat;
    flat.class_name = "Flatten";
    panel.setSpec(model({flat, dense(10, "softmax")}));
    panel.setInputShape({28, 28, 1});
    panel.selectLayer(-1);
    panel.addLayer(QStringLiteral("Conv2D"));
    panel.moveSelectedLayer(-1);
    panel.moveSelectedLayer(-1);
    QCOMPARE(classNames(panel.spec()), QStringList({"Conv2D", "Flatten", "Dense"}));
    QCOMPARE(panel.layerList()->item(1)->text(), QStringLiteral("Conv2D(16, 3x3, relu)"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    QWidget* editor = panel.layerEditor();
    auto spin = [&](const char* name) {
      auto* s = editor->findChild<QSpinBox*>(QString::fromLatin1(name));
      return s && s->isVisibleTo(&panel) ? s : nullptr;
    };
    QVERIFY(spin("filters") && spin("kernel_size_height") && spin("strides_width"));
    QVERIFY(!spin("units") && !spin("pool_size_height"));
    const auto type = [](QSpinBox* s, const QString& text) {
      s->selectAll();
      QTest::keyClicks(s, text);
      QTest::keyClick(s, Qt::Key_Enter);
    };
    type(spin("filters"), QStringLiteral("8"));
    type(spin("kernel_size_height"), QStringLiteral("5"));
    type(spin("strides_width"), QStringLiteral("2"));
    auto* padding = editor->findChild<QComboBox*>(QStringLiteral("padding"));
    QVERIFY(padding && padding->isVisibleTo(&panel));
    padding->setFocus();
    QTest::keyClick(padding, Qt::Key_Down);
    const LayerSpec conv = panel.spec().layers[0];
    QCOMPARE(conv.filters, int64_t{8});
    QCOMPARE(conv.kernel_size, (std::vector<int64_t>{5, 3}));
    QCOMPARE(conv.strides, (std::vector<int64_t>{1, 2}));
    QCOMPARE(conv.padding, std::string("same"));
    QCOMPARE(panel.layerList()->item(1)->text(),
             QStringLiteral("Conv2D(8, 5x3, stride 1x2, same, relu)"));

    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("MaxPooling2D"));
    QCOMPARE(classNames(panel.spec()), QStringList({"Conv2D", "MaxPooling2D", "Flatten", "Dense"}));
    QCOMPARE(panel.layerList()->item(2)->text(), QStringLiteral("MaxPooling2D(2x2)"));
    QVERIFY(spin("pool_size_height") && !spin("filters"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    Sequential reference(panel.spec());
    reference.build(Shape{28, 28, 1});
    QCOMPARE(panel.summaryText(), QString::fromStdString(reference.summary()));
    QVERIFY(panel.summaryText().contains(QStringLiteral("(None, 28, 14, 8)")));
    QVERIFY(panel.summaryText().contains(QStringLiteral("(None, 14, 7, 8)")));

    // A 40-pixel kernel with padding "valid" does not fit in 28 rows: said at the kernel size.
    panel.selectLayer(0);
    padding->setFocus();
    QTest::keyClick(padding, Qt::Key_Up);
    type(spin("kernel_size_height"), QStringLiteral("40"));
    QVERIFY2(panel.errorText().contains(
                 QStringLiteral("the 40 x 3 kernel does not fit in this layer's input (None, 28, "
                                "28, 1) with padding \"valid\"")),
             qPrintable(panel.errorText()));
    const QList<QLabel*> issue = editor->findChildren<QLabel*>();
    bool shown = false;
    for (QLabel* label : issue)
      shown = shown || (label->isVisibleTo(&panel) && label->text().contains("40 x 3 kernel"));
    QVERIFY(shown);
  }

  // A LayerNormalization between two Dense layers, edited as a person does: gamma switched off
  // with a click, epsilon typed, the gamma initializer's box gone with gamma, and the summary
  // counting beta's parameters alone.
  void layerNormalizationFromItsFields() {
    ModelPanel panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setSpec(model({dense(6, "relu"), dense(3, "softmax")}));
    panel.setInputShape({4});
    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("LayerNormalization"));
    QCOMPARE(classNames(panel.spec()), QStringList({"Dense", "LayerNormalization", "Dense"}));
    QCOMPARE(panel.layerList()->item(2)->text(), QStringLiteral("LayerNormalization"));
    QWidget* editor = panel.layerEditor();
    auto* gamma = editor->findChild<QCheckBox*>(QStringLiteral("scale_gamma"));
    auto* center = editor->findChild<QCheckBox*>(QStringLiteral("center"));
    auto* epsilon = editor->findChild<QDoubleSpinBox*>(QStringLiteral("epsilon"));
    QVERIFY(gamma && gamma->isVisible() && gamma->isChecked());
    QVERIFY(center && center->isVisible() && center->isChecked());
    QVERIFY(epsilon && epsilon->isVisible());
    QVERIFY(!editor->findChild<QWidget*>(QStringLiteral("scale"))->isVisible());
    QVERIFY(!editor->findChild<QWidget*>(QStringLiteral("units"))->isVisible());
    auto* advanced = editor->findChild<QToolButton*>(QStringLiteral("advanced"));
    QVERIFY(advanced && advanced->isVisible());
    QTest::mouseClick(advanced, Qt::LeftButton);
    QVERIFY(editor->findChild<QWidget*>(QStringLiteral("gamma_initializer"))->isVisible());
    QVERIFY(!editor->findChild<QWidget*>(QStringLiteral("kernel_initializer"))->isVisible());

    QTest::mouseClick(gamma, Qt::LeftButton, {}, QPoint(4, gamma->height() / 2));
    QVERIFY(!panel.spec().layers[1].scale_gamma);
    QVERIFY(!editor->findChild<QWidget*>(QStringLiteral("gamma_initializer"))->isVisible());
    QVERIFY(!editor->findChild<QWidget*>(QStringLiteral("gamma_l2"))->isVisible());
    QVERIFY(editor->findChild<QWidget*>(QStringLiteral("beta_l2"))->isVisible());
    epsilon->selectAll();
    QTest::keyClicks(epsilon, QStringLiteral("0.01"));
    QTest::keyClick(epsilon, Qt::Key_Enter);
    QCOMPARE(panel.spec().layers[1].epsilon, 0.01);
    QCOMPARE(panel.layerList()->item(2)->text(),
             QStringLiteral("LayerNormalization(epsilon 0.01, no gamma)"));
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    // beta alone: 6 parameters (the shown panel's summary fits its width, so no comparison
    // with Keras's 98 columns here; convolutionFromItsFields makes it).
    QVERIFY2(panel.summaryText().contains(
                 QRegularExpression(QStringLiteral("layer_normaliz\\S*[ │]+\\(None, 6\\)[ │]+6 "))),
             qPrintable(panel.summaryText()));
  }

  // A BatchNormalization added after a Dense: its momentum typed, its moving statistics counted
  // as non-trainable parameters in the summary while gamma and beta train.
  void batchNormalizationFromItsFields() {
    ModelPanel panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setSpec(model({dense(6, "relu"), dense(3, "softmax")}));
    panel.setInputShape({4});
    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("BatchNormalization"));
    QCOMPARE(classNames(panel.spec()), QStringList({"Dense", "BatchNormalization", "Dense"}));
    QWidget* editor = panel.layerEditor();
    auto* momentum = editor->findChild<QDoubleSpinBox*>(QStringLiteral("momentum"));
    QVERIFY(momentum && momentum->isVisible());
    QVERIFY(editor->findChild<QWidget*>(QStringLiteral("epsilon"))->isVisible());
    momentum->selectAll();
    QTest::keyClicks(momentum, QStringLiteral("0.9"));
    QTest::keyClick(momentum, Qt::Key_Enter);
    QCOMPARE(panel.spec().layers[1].momentum, 0.9);
    QCOMPARE(panel.layerList()->item(2)->text(),
             QStringLiteral("BatchNormalization(momentum 0.9)"));
    auto* advanced = editor->findChild<QToolButton*>(QStringLiteral("advanced"));
    QTest::mouseClick(advanced, Qt::LeftButton);
    QVERIFY(
        editor->findChild<QWidget*>(QStringLiteral("moving_variance_initializer"))->isVisible());
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    // dense 30 + gamma and beta 12 + dense_1 21 train; the moving statistics' 12 do not.
    QVERIFY2(panel.summaryText().contains(QStringLiteral("Trainable params: 63 ")),
             qPrintable(panel.summaryText()));
    QVERIFY2(panel.summaryText().contains(QStringLiteral("Non-trainable params: 12 ")),
             qPrintable(panel.summaryText()));
  }

  void summaryWaitsForTheData() {
    ModelPanel panel;
    panel.setSpec(model({dense(3)}));
    QVERIFY(panel.summaryText().contains(QStringLiteral("feature count")));
    QVERIFY(!panel.summaryText().contains(QStringLiteral("Total params")));
  }

  void validation_data() {
    QTest::addColumn<int>("variant");
    QTest::addColumn<int>("targetColumns");
    QTest::addColumn<int>("classes");
    QTest::addColumn<QString>("lossName");
    QTest::addColumn<bool>("fromLogits");
    QTest::addColumn<QString>("error");    // a part of errorText(); "" = valid
    QTest::addColumn<QString>("warning");  // a part of the warnings; "" = none
    QTest::newRow("valid binary") << 0 << 1 << 2 << "binary_crossentropy" << false << ""
                                  << "";
    QTest::newRow("no dense") << 1 << 1 << 2 << "binary_crossentropy" << false
                              << "Add at least one Dense layer"
                              << "";
    QTest::newRow("zero units") << 2 << 0 << 0 << "mean_squared_error" << false
                                << "Layer 1 (dense): units must be at least 1 (got 0)."
                                << "";
    QTest::newRow("dropout rate 1") << 3 << 0 << 0 << "mean_squared_error" << false
                                    << "the dropout rate must be at least 0 and below 1 (got 1)"
                                    << "";
    QTest::newRow("binary wants 1 unit")
        << 4 << 1 << 2 << "binary_crossentropy" << false
        << "binary_crossentropy needs 1 output unit (the probability of class 1), but this last "
           "Dense layer has 3 units."
        << "";
    QTest::newRow("categorical wants classes")
        << 5 << 3 << 3 << "categorical_crossentropy" << false
        << "categorical_crossentropy needs one output unit per class (3), but this last Dense "
           "layer has 2 units."
        << "";
    QTest::newRow("sparse wants classes") << 5 << 1 << 3 << "sparse_categorical_crossentropy"
                                          << false << "one output unit per class (3)"
                                          << "";
    // More units than classes is valid (labels index the units): a warning, not an error.
    QTest::newRow("sparse with spare units")
        << 6 << 1 << 2 << "sparse_categorical_crossentropy" << false << ""
        << "so 1 of this layer's 3 output units stand for";
    QTest::newRow("sparse wants labels")
        << 6 << 3 << 3 << "sparse_categorical_crossentropy" << false
        << "needs one integer class label per sample (1 target column), but the data has 3"
        << "";
    QTest::newRow("regression wants target columns")
        << 7 << 2 << 0 << "mean_squared_error" << false
        << "needs one output unit per target column (2), but this last Dense layer has 1 unit."
        << "";
    QTest::newRow("huber too") << 7 << 2 << 0 << "huber" << false
                               << "one output unit per target column (2)"
                               << "";
    QTest::newRow("softmax on one unit") << 8 << 1 << 0 << "mean_squared_error" << false
                                         << "softmax over a single unit always outputs 1"
                                         << "";
    QTest::newRow("softmax layer on one unit") << 9 << 1 << 0 << "mean_squared_error" << false
                                               << "Layer 2 (activation): softmax over a single unit"
                                               << "";
    // A Dense after it still learns a constant from the softmax's 1: a warning.
    QTest::newRow("softmax on one unit, then a Dense")
        << 14 << 1 << 0 << "mean_squared_error" << false << ""
        << "Layer 1 (dense): softmax over a single unit always outputs 1, so the layers before it "
           "cannot learn; use another activation.";
    // Issues come in layer order: the error a run is refused for is layer 1's, then layer 2's.
    QTest::newRow("issues in layer order")
        << 15 << 1 << 0 << "mean_squared_error" << false
        << "Layer 1 (dense): softmax over a single unit always outputs 1, so nothing can be "
           "learned"
        << "";
    QTest::newRow("sigmoid and from_logits")
        << 0 << 1 << 2 << "binary_crossentropy" << true << ""
        << "Layer 2 (dense_1): the last activation is sigmoid and the loss has from_logits, so "
           "the loss applies sigmoid on top of it";
    QTest::newRow("linear without from_logits")
        << 10 << 3 << 3 << "categorical_crossentropy" << false << ""
        << "Layer 1 (dense): the last layer is linear (it outputs logits), but "
           "categorical_crossentropy without from_logits expects probabilities: give it a softmax "
           "activation, or turn from_logits on.";
    // Probabilities of the other kind: the advice is the other activation, never from_logits.
    QTest::newRow("softmax with binary_crossentropy")
        << 5 << 2 << 0 << "binary_crossentropy" << false << ""
        << "Layer 1 (dense): softmax makes the units' probabilities add up to 1, but "
           "binary_crossentropy treats each unit as its own yes/no label: use sigmoid.";
    QTest::newRow("sigmoid with categorical_crossentropy")
        << 4 << 3 << 3 << "categorical_crossentropy" << false << ""
        << "Layer 1 (dense): sigmoid gives each unit its own probability, but "
           "categorical_crossentropy expects the classes' probabilities to add up to 1: use "
           "softmax.";
    QTest::newRow("relu without from_logits")
        << 13 << 3 << 3 << "categorical_crossentropy" << false << ""
        << "Layer 1 (dense): the last activation is relu, whose outputs are not probabilities, "
           "but categorical_crossentropy without from_logits expects them: give the last layer a "
           "softmax activation (or a linear one, with from_logits on).";
    QTest::newRow("linear with from_logits")
        << 10 << 3 << 3 << "categorical_crossentropy" << true << ""
        << "";
    QTest::newRow("softmax via an Activation layer")
        << 11 << 3 << 3 << "categorical_crossentropy" << false << ""
        << "";
    QTest::newRow("duplicate names") << 12 << 1 << 0 << "mean_squared_error" << false
                                     << "Layer 2 (out): the name \"out\" is already used by layer 1"
                                     << "";
  }
  void validation() {
    QFETCH(int, variant);
    QFETCH(int, targetColumns);
    QFETCH(int, classes);
    QFETCH(QString, lossName);
    QFETCH(bool, fromLogits);
    QFETCH(QString, error);
    QFETCH(QString, warning);
    const std::vector<std::vector<LayerSpec>> models = {
        {dense(8, "relu"), dense(1, "sigmoid")},               // 0
        {dropout(0.2)},                                        // 1
        {dense(0)},                                            // 2
        {dense(4), dropout(1.0), dense(1)},                    // 3
        {dense(3, "sigmoid")},                                 // 4
        {dense(2, "softmax")},                                 // 5
        {dense(3, "softmax")},                                 // 6
        {dense(1)},                                            // 7
        {dense(1, "softmax")},                                 // 8
        {dense(1), activation("softmax")},                     // 9
        {dense(3)},                                            // 10
        {dense(3), dropout(0.1), activation("softmax")},       // 11
        {dense(2, "relu", "out"), dense(1, "linear", "out")},  // 12
        {dense(3, "relu")},                                    // 13
        {dense(1, "softmax"), dense(1)},                       // 14
        {dense(1, "softmax"), dropout(1.5)},                   // 15
    };
    ModelPanel panel;
    panel.setSpec(model(models[variant]));
    panel.setInputFeatures(4);
    panel.setTargetInfo(targetColumns, classes, loss(lossName.toStdString(), fromLogits));
    if (error.isEmpty()) {
      QCOMPARE(panel.errorText(), QString());
    } else {
      QVERIFY2(panel.errorText().contains(error), qPrintable(panel.errorText()));
    }
    if (warning.isEmpty()) {
      QCOMPARE(warnings(panel), QString());
    } else {
      QVERIFY2(warnings(panel).contains(warning), qPrintable(warnings(panel)));
    }
  }

  void errorShownBesideTheField() {
    ModelPanel panel;
    panel.setSpec(model({dense(3, "sigmoid")}));
    panel.setTargetInfo(1, 2, loss("binary_crossentropy"));
    panel.selectLayer(0);
    auto* units = panel.layerEditor()->findChild<QSpinBox*>(QStringLiteral("units"));
    // Beside the field, without the "Layer 1 (dense):" the editor's title already says.
    QVERIFY(units->toolTip().startsWith(QStringLiteral("binary_crossentropy needs 1 output unit")));
    QVERIFY(panel.layerList()->item(1)->toolTip().contains(QStringLiteral("needs 1 output unit")));
    // Fixing it in the editor clears the error and the tooltip.
    units->setValue(1);
    QCOMPARE(panel.errorText(), QString());
    QVERIFY(!units->toolTip().contains(QStringLiteral("needs")));
  }

  void addRemoveMove() {
    ModelPanel panel;
    panel.setSpec(model({input(4), dense(8, "relu"), dense(1, "sigmoid")}));
    QSignalSpy spy(&panel, &ModelPanel::changed);
    panel.selectLayer(0);
    panel.addLayer(QStringLiteral("Dropout"));  // after the selected layer
    QCOMPARE(classNames(panel.spec()), QStringList({"InputLayer", "Dense", "Dropout", "Dense"}));
    QCOMPARE(panel.selectedLayer(), 1);
    QCOMPARE(panel.spec().layers[2].rate, 0.2);
    QCOMPARE(spy.count(), 1);
    panel.moveSelectedLayer(-1);
    QCOMPARE(classNames(panel.spec()), QStringList({"InputLayer", "Dropout", "Dense", "Dense"}));
    QCOMPARE(panel.selectedLayer(), 0);
    panel.moveSelectedLayer(-1);  // already first: nothing
    QCOMPARE(spy.count(), 2);
    panel.selectLayer(2);
    panel.removeSelectedLayer();
    QCOMPARE(classNames(panel.spec()), QStringList({"InputLayer", "Dropout", "Dense"}));
    QCOMPARE(panel.spec().layers[2].units, 8);
    QCOMPARE(spy.count(), 3);
    panel.selectLayer(-1);
    panel.addLayer(QStringLiteral("Activation"));  // nothing selected: at the end
    QCOMPARE(classNames(panel.spec()),
             QStringList({"InputLayer", "Dropout", "Dense", "Activation"}));
  }

  void dragReorders() {
    ModelPanel panel;
    panel.setSpec(model({dense(8, "relu"), dropout(0.3), dense(1, "sigmoid")}));
    QSignalSpy spy(&panel, &ModelPanel::changed);
    QListWidget* list = panel.layerList();
    // What a drop does inside the list: Dense(8) (row 1) moves below Dense(1) (row 3).
    QVERIFY(list->model()->moveRow(QModelIndex(), 1, QModelIndex(), 4));
    QTRY_COMPARE(spy.count(), 1);
    const ModelSpec spec = panel.spec();
    QCOMPARE(classNames(spec), QStringList({"Dropout", "Dense", "Dense"}));
    QCOMPARE(spec.layers[1].units, 1);
    QCOMPARE(spec.layers[2].units, 8);
    // Dropped above the Input row: the Input stays first.
    QVERIFY(list->model()->moveRow(QModelIndex(), 2, QModelIndex(), 0));
    QTRY_COMPARE(spy.count(), 2);
    QCOMPARE(list->item(0)->text(), QStringLiteral("Input (features from the data)"));
    QCOMPARE(panel.spec().layers[0].units, 1);
  }

  void inputLayerFollowsTheData() {
    ModelPanel panel;
    panel.setSpec(model({input(4), dense(1)}));
    QCOMPARE(panel.spec().layers[0].shape, std::vector<int64_t>{4});
    panel.setInputFeatures(7);
    QCOMPARE(panel.spec().layers[0].shape, std::vector<int64_t>{7});
    // A spec without an InputLayer gets none.
    panel.setSpec(model({dense(1)}));
    QCOMPARE(panel.spec().layers.size(), size_t(1));
  }

  void editorShowsTheLayersFields() {
    ModelPanel panel;
    LayerSpec d = dense(4, "relu");
    d.kernel_initializer.name = "random_normal";
    panel.setSpec(model({d, dropout(0.5)}));
    LayerEditor* editor = panel.layerEditor();
    panel.selectLayer(0);
    const auto shown = [&](const char* name) {
      QWidget* w = editor->findChild<QWidget*>(QLatin1String(name));
      return w && w->isVisibleTo(&panel);
    };
    QVERIFY(shown("units"));
    // Initializers and regularizers sit behind a toggle that says when they are not Keras's
    // defaults.
    auto* advanced = editor->findChild<QToolButton*>(QStringLiteral("advanced"));
    QVERIFY(!shown("kernel_initializer_mean"));
    QCOMPARE(advanced->text(), QStringLiteral("Initializers and regularizers (customized)"));
    advanced->click();
    QVERIFY(shown("kernel_initializer_mean"));
    QVERIFY(shown("kernel_initializer_stddev"));
    QVERIFY(!shown("kernel_initializer_minval"));
    QVERIFY(!shown("rate"));
    // Choosing random_uniform swaps the parameter rows and is written to the spec.
    editor->findChild<QComboBox*>(QStringLiteral("kernel_initializer_name"))
        ->setCurrentText(QStringLiteral("random_uniform"));
    QVERIFY(shown("kernel_initializer_minval"));
    QVERIFY(!shown("kernel_initializer_mean"));
    QCOMPARE(panel.spec().layers[0].kernel_initializer.name, std::string("random_uniform"));
    panel.selectLayer(1);
    QVERIFY(shown("rate"));
    QVERIFY(!shown("units"));
    QVERIFY(!shown("kernel_initializer_name"));
  }

  void readOnly() {
    ModelPanel panel;
    panel.setSpec(model({dense(8, "relu"), dense(1)}));
    panel.selectLayer(0);
    panel.setReadOnly(true);
    auto* units = panel.layerEditor()->findChild<QSpinBox*>(QStringLiteral("units"));
    auto* activationBox = panel.layerEditor()->findChild<QComboBox*>(QStringLiteral("activation"));
    QVERIFY(units->isReadOnly());
    QVERIFY(!activationBox->isEnabled());
    for (QPushButton* b : panel.findChildren<QPushButton*>()) QVERIFY(!b->isEnabled());
    QCOMPARE(panel.layerList()->dragDropMode(), QAbstractItemView::NoDragDrop);
    // Reading still works: another layer can be selected and shown.
    QVERIFY(panel.layerList()->isEnabled());
    panel.selectLayer(1);
    QCOMPARE(units->value(), 1);
    panel.setReadOnly(false);
    QVERIFY(!units->isReadOnly());
    QVERIFY(activationBox->isEnabled());
    QCOMPARE(panel.layerList()->dragDropMode(), QAbstractItemView::InternalMove);
  }
};

QTEST_MAIN(TestModelPanel)
#include "tst_model_panel.moc"
