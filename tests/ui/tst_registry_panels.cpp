// The window's menus, combo boxes and editor rows come from core's registries: the Model panel's
// Add menu lists the layer registry's classes and adds what it says, the layer editor shows a row
// for each field the registry gives the class, and the Training panel's optimizer and loss combos,
// metrics list and per-optimizer fields (with Keras's defaults) are the registries' entries.
// Driven by mouse clicks and key presses on the real widgets.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QTest>
#include <QTimer>

#include "core/distribution/collectives/collective_algorithms.h"
#include "core/distribution/spec/strategies.h"
#include "core/losses/loss_registry.h"
#include "core/metrics/metric_registry.h"
#include "core/nn/activation_registry.h"
#include "core/nn/layer_registry.h"
#include "core/optimizers/optimizer_registry.h"
#include "ui/common/number_spin_box.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/layer_editor.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/strategy_panel.h"
#include "ui/panels/training_panel.h"

using namespace fitbench;

namespace {

QString q(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QStringList comboItems(const QComboBox* combo) {
  QStringList items;
  for (int i = 0; i < combo->count(); ++i) items << combo->itemText(i);
  return items;
}

QPushButton* buttonWithText(QWidget* parent, const QString& text) {
  for (QPushButton* b : parent->findChildren<QPushButton*>())
    if (b->text() == text) return b;
  return nullptr;
}

// Clicks `button`, whose menu opens modally, and hands the open menu to `inspect`, which must
// close it (by a key press).
void clickMenuButton(QPushButton* button, const std::function<void(QMenu*)>& inspect) {
  bool inspected = false;
  QTimer::singleShot(0, [&] {
    QMenu* menu = button->menu();
    QTRY_VERIFY(menu->isVisible());
    inspect(menu);
    inspected = true;
  });
  QTest::mouseClick(button, Qt::LeftButton);
  QTRY_VERIFY(inspected);
}

}  // namespace

class TestRegistryPanels : public QObject {
  Q_OBJECT
 private slots:
  void addMenuListsLayerRegistry();
  void addMenuAddsEveryClassWithItsFields();
  void activationComboListsRegistry();
  void optimizerComboAndFields();
  void lossAndMetrics();
  void strategyAndAllReduceCombos();
};

void TestRegistryPanels::addMenuListsLayerRegistry() {
  ModelPanel panel;
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QPushButton* add = buttonWithText(&panel, QObject::tr("Add"));
  QVERIFY(add != nullptr);
  QStringList expected;
  for (const LayerInfo& info : layer_classes())
    if (!info.input) expected << q(info.class_name);
  QCOMPARE(expected,
           QStringList({"Dense", "Conv2D", "MaxPooling2D", "AveragePooling2D", "Activation",
                        "Dropout", "Flatten", "Reshape", "Rescaling", "GlobalAveragePooling2D",
                        "LayerNormalization", "BatchNormalization"}));
  QStringList shown;
  clickMenuButton(add, [&](QMenu* menu) {
    for (QAction* a : menu->actions()) shown << a->text();
    QTest::keyClick(menu, Qt::Key_Escape);
  });
  QCOMPARE(shown, expected);
  QCOMPARE(panel.spec().layers.size(), size_t(0));  // Escape added nothing
}

void TestRegistryPanels::addMenuAddsEveryClassWithItsFields() {
  ModelPanel panel;
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QPushButton* add = buttonWithText(&panel, QObject::tr("Add"));
  int position = 0;
  for (const LayerInfo& info : layer_classes()) {
    if (info.input) continue;
    // Down to the class's action, then Return: the menu adds it after the selected layer.
    clickMenuButton(add, [&](QMenu* menu) {
      for (int i = 0; i <= position; ++i) QTest::keyClick(menu, Qt::Key_Down);
      QTest::keyClick(menu, Qt::Key_Return);
    });
    ++position;
    const int index = panel.selectedLayer();
    QVERIFY(index >= 0);
    const ModelSpec spec = panel.spec();
    const LayerSpec& added = spec.layers[index];
    QCOMPARE(added.class_name, std::string(info.class_name));
    const LayerSpec expected = new_layer(info);
    QCOMPARE(added.units, expected.units);
    QCOMPARE(added.activation, expected.activation);
    QCOMPARE(added.rate, expected.rate);
    // A row for each field the registry gives the class, none for the others' fields.
    LayerEditor* editor = panel.layerEditor();
    for (const char* key : {"units", "activation", "use_bias", "trainable", "rate", "seed",
                            "epsilon", "center", "momentum"}) {
      QWidget* w = editor->findChild<QWidget*>(QLatin1String(key));
      QVERIFY2(w != nullptr, key);
      QCOMPARE(w->isVisibleTo(editor), layer_has_field(info.class_name, key));
    }
    QWidget* advanced = editor->findChild<QWidget*>(QStringLiteral("advanced"));
    QCOMPARE(advanced->isVisibleTo(editor),
             layer_has_field(info.class_name, "kernel_initializer") ||
                 layer_has_field(info.class_name, "gamma_initializer"));
    // Rescaling's factor and LayerNormalization's switch for gamma share the key "scale".
    const FieldInfo* scale = find_field(info.fields, "scale");
    QCOMPARE(editor->findChild<QWidget*>(QStringLiteral("scale"))->isVisibleTo(editor),
             scale != nullptr && scale->type == FieldType::kFloat);
    QCOMPARE(editor->findChild<QWidget*>(QStringLiteral("scale_gamma"))->isVisibleTo(editor),
             scale != nullptr && scale->type == FieldType::kBool);
  }
}

void TestRegistryPanels::activationComboListsRegistry() {
  ModelPanel panel;
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.addLayer(q(kInputLayer));  // refused: the data makes the input
  QCOMPARE(panel.spec().layers.size(), size_t(0));
  panel.addLayer(QStringLiteral("Dense"));
  auto* combo = panel.layerEditor()->findChild<QComboBox*>(QStringLiteral("activation"));
  QStringList expected;
  for (const ActivationInfo& a : activations())
    if (!a.alias) expected << q(a.name);
  QCOMPARE(comboItems(combo), expected);
  // Picking another activation with the keyboard edits the layer.
  combo->setFocus();
  QTest::keyClick(combo, Qt::Key_End);
  QCOMPARE(panel.spec().layers.back().activation, expected.back().toStdString());
}

void TestRegistryPanels::optimizerComboAndFields() {
  TrainingPanel panel;
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  auto* combo = panel.findChild<QComboBox*>(QStringLiteral("optimizer"));
  QStringList expected;
  for (const OptimizerInfo& o : optimizers()) expected << q(o.class_name);
  QCOMPARE(comboItems(combo), expected);
  // Every rule field of any optimizer has a row, shown for the optimizers that have the field,
  // at Keras's default.
  combo->setFocus();
  QTest::keyClick(combo, Qt::Key_Home);
  for (const OptimizerInfo& o : optimizers()) {
    QCOMPARE(combo->currentText(), q(o.class_name));
    QCOMPARE(panel.compileOptions().optimizer.class_name, std::string(o.class_name));
    auto* rate = panel.findChild<NumberSpinBox*>(QStringLiteral("learning_rate"));
    QCOMPARE(rate->value(), o.learning_rate);
    auto* decay = panel.findChild<NumberSpinBox*>(QStringLiteral("weight_decay"));
    QCOMPARE(decay->value(), o.weight_decay);
    for (const OptimizerInfo& other : optimizers()) {
      for (const OptimizerField& f : other.fields) {
        const QString key = q(f.info.key);
        QWidget* w = panel.findChild<QWidget*>(key);
        QVERIFY2(w != nullptr, qPrintable(key));
        bool has = false;
        for (const OptimizerField& mine : o.fields) has = has || mine.info.key == f.info.key;
        QCOMPARE(w->isVisibleTo(&panel), has);
        if (!has) continue;
        if (auto* spin = dynamic_cast<NumberSpinBox*>(w)) QCOMPARE(spin->value(), f.info.number);
        if (auto* check = qobject_cast<QCheckBox*>(w))
          QCOMPARE(check->isChecked(), f.info.number != 0.0);
      }
    }
    QTest::keyClick(combo, Qt::Key_Down);
  }
  // A field edited with the keyboard lands in the spec through the registry's member.
  QTest::keyClick(combo, Qt::Key_Home);  // SGD
  auto* nesterov = panel.findChild<QCheckBox*>(QStringLiteral("nesterov"));
  QTest::mouseClick(nesterov, Qt::LeftButton, {}, QPoint(4, nesterov->height() / 2));
  QVERIFY(panel.compileOptions().optimizer.nesterov);
}

void TestRegistryPanels::lossAndMetrics() {
  TrainingPanel panel;
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  auto* loss = panel.findChild<QComboBox*>(QStringLiteral("loss"));
  QStringList expected;
  for (const LossInfo& l : loss_classes()) expected << q(l.name);
  QCOMPARE(comboItems(loss), expected);
  loss->setFocus();
  QTest::keyClick(loss, Qt::Key_Home);
  for (const LossInfo& l : loss_classes()) {
    QCOMPARE(panel.compileOptions().loss.name, std::string(l.name));
    QCOMPARE(panel.findChild<QWidget*>(QStringLiteral("from_logits"))->isVisibleTo(&panel),
             find_field(l.fields, "from_logits") != nullptr);
    QCOMPARE(panel.findChild<QWidget*>(QStringLiteral("delta"))->isVisibleTo(&panel),
             find_field(l.fields, "delta") != nullptr);
    QTest::keyClick(loss, Qt::Key_Down);
  }
  auto* metrics = panel.findChild<QListWidget*>(QStringLiteral("metrics"));
  QStringList listed;
  for (const MetricInfo& m : metric_classes()) listed << q(m.listed);
  QStringList shown;
  for (int i = 0; i < metrics->count(); ++i) shown << metrics->item(i)->text();
  QCOMPARE(shown, listed);
}

void TestRegistryPanels::strategyAndAllReduceCombos() {
  StrategyPanel strategy;
  auto* combo = strategy.findChild<QComboBox*>(QStringLiteral("strategy"));
  QCOMPARE(combo->count(), static_cast<int>(strategies().size()));
  for (int i = 0; i < combo->count(); ++i) {
    QCOMPARE(combo->itemData(i).toString(), q(strategies()[i].class_name));
    QCOMPARE(combo->itemText(i), q(strategies()[i].label));
  }
  DevicesPanel devices;
  QStringList algorithms;
  for (const CollectiveAlgorithmInfo& a : collective_algorithms()) algorithms << q(a.name);
  bool found = false;
  for (QComboBox* c : devices.findChildren<QComboBox*>()) {
    if (c->count() > 0 && c->itemData(0).toString() == algorithms.front()) {
      QStringList data;
      for (int i = 0; i < c->count(); ++i) data << c->itemData(i).toString();
      QCOMPARE(data, algorithms);
      found = true;
    }
  }
  QVERIFY(found);
}

QTEST_MAIN(TestRegistryPanels)
#include "tst_registry_panels.moc"
