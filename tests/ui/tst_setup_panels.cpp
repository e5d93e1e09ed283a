// The Devices and Strategy panels keep what a file says: speeds, link figures and a validation
// split are shown with their digits and come back unchanged from spec(); a gpu type is shown and
// refused with the CLI's sentence; a mesh the fields cannot show is kept, explained and checked
// (and replaced once the user edits the fields); a mesh error is shown beside the mesh; layout
// keys typed into the table are read as Python's re reads them. Saves pictures of the kept mesh
// and of a refused key when FITBENCH_SCREENSHOTS names a directory.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include "core/distribution/spec/distribution_spec.h"
#include "core/nn/layer_spec.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/strategy_panel.h"

using namespace fitbench;

namespace {

ModelSpec twoDense() {
  ModelSpec m;
  m.layers = {input_layer(4), dense_layer(8, "relu"), dense_layer(2, "softmax")};
  return m;
}

DistributionSpec modelParallel(std::vector<int> shape, std::vector<std::string> axes) {
  DistributionSpec d;
  d.class_name = "ModelParallel";
  d.mesh_shape = std::move(shape);
  d.axis_names = std::move(axes);
  return d;
}

}  // namespace

class TestSetupPanels : public QObject {
  Q_OBJECT
 private slots:
  void devicesKeepTheFilesDigits() {
    DevicesPanel panel;
    DevicesSpec spec;
    spec.count = 3;
    spec.speed = {1.0, 0.333333, 0.0149};
    spec.link_latency_us = 0.0004;
    spec.link_gbps = 0.333333;
    panel.setSpec(spec, 1);
    const DevicesSpec back = panel.spec();
    QCOMPARE(back.speed.size(), size_t(3));
    for (size_t i = 0; i < 3; ++i) QCOMPARE(back.speed[i], spec.speed[i]);
    QCOMPARE(back.link_latency_us, 0.0004);
    QCOMPARE(back.link_gbps, 0.333333);
    QVERIFY(panel.errorText().isEmpty());
    // Shown as %g, with the suffix: "0.333333 ×", not "0.333 ×".
    QStringList shown;
    for (auto* spin : panel.findChildren<QDoubleSpinBox*>()) shown << spin->text();
    QVERIFY2(shown.contains(QStringLiteral("0.333333 ×")), qPrintable(shown.join(" | ")));
    QVERIFY2(shown.contains(QStringLiteral("0.0004")), qPrintable(shown.join(" | ")));
  }

  // BatchNormalization's statistics: the file's choice shown, and another chosen with the keys.
  void batchStatisticsAreChosenWithTheKeys() {
    DevicesPanel panel;
    DevicesSpec spec;
    spec.count = 8;
    spec.batch_norm_statistics = "per_device";
    panel.setSpec(spec, 1);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* statistics = panel.findChild<QComboBox*>(QStringLiteral("batchNormStatistics"));
    QVERIFY(statistics && statistics->isVisible());
    QCOMPARE(statistics->currentText(), QStringLiteral("Per device (PyTorch DDP)"));
    QCOMPARE(panel.spec().batch_norm_statistics, std::string("per_device"));
    QSignalSpy changed(&panel, &DevicesPanel::changed);
    statistics->setFocus();
    QTest::keyClick(statistics, Qt::Key_Up);
    QCOMPARE(statistics->currentText(), QStringLiteral("Global batch (Keras)"));
    QCOMPARE(panel.spec().batch_norm_statistics, std::string("global"));
    QCOMPARE(changed.count(), 1);
    panel.setSpec(DevicesSpec{}, 1);
    QCOMPARE(panel.spec().batch_norm_statistics, std::string("global"));
  }

  // Typing into the fields: a speed with its " ×" suffix, a latency back to 0 ("none").
  void typingIntoTheFields() {
    DevicesPanel panel;
    DevicesSpec spec;
    spec.count = 2;
    spec.link_latency_us = 12.5;
    panel.setSpec(spec, 1);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QDoubleSpinBox* speed = nullptr;
    QDoubleSpinBox* latency = nullptr;
    for (auto* spin : panel.findChildren<QDoubleSpinBox*>()) {
      if (spin->suffix() == QStringLiteral(" ×") && !speed) speed = spin;
      if (spin->specialValueText() == QStringLiteral("none")) latency = spin;
    }
    QVERIFY(speed && latency);
    const auto type = [](QDoubleSpinBox* spin, const QString& text) {
      spin->setFocus();
      spin->selectAll();
      QTest::keyClicks(spin, text);
      QTest::keyClick(spin, Qt::Key_Return);
    };
    type(speed, QStringLiteral("0.25"));
    QCOMPARE(speed->value(), 0.25);
    QCOMPARE(speed->text(), QStringLiteral("0.25 ×"));
    QCOMPARE(panel.spec().speed.front(), 0.25);
    type(latency, QStringLiteral("0"));
    QCOMPARE(latency->value(), 0.0);
    QCOMPARE(latency->text(), QStringLiteral("none"));
    type(latency, QStringLiteral("12.3456789"));
    QCOMPARE(panel.spec().link_latency_us, 12.3456789);
  }

  void gpuTypeIsRefusedUntilCpuIsChosen() {
    DevicesPanel panel;
    DevicesSpec spec;
    spec.type = "gpu";
    panel.setSpec(spec, 2);
    QCOMPARE(panel.spec().type, std::string("gpu"));  // kept as the file has it
    QCOMPARE(panel.errorText(),
             QStringLiteral("devices.type: \"gpu\" devices are not available: fitbench "
                            "simulates CPU devices only; use \"cpu\""));
    auto* type = panel.findChild<QComboBox*>();
    QVERIFY(type && type->currentText() == QStringLiteral("gpu"));
    type->setCurrentIndex(type->findText(QStringLiteral("cpu")));
    QVERIFY(panel.errorText().isEmpty());
    QCOMPARE(panel.spec().type, std::string("cpu"));
    type->setCurrentIndex(type->findText(QStringLiteral("tpu")));  // however it gets there
    QVERIFY2(panel.errorText().contains(QStringLiteral("\"tpu\" devices are not available")),
             qPrintable(panel.errorText()));
  }

  // A file's speeds with no count follow the count as fitbench-cli resolves it: --devices 2
  // applies them; 1 device (or --devices 3) is the CLI's error until Count or a speed is edited.
  void speedsFollowTheCountAsTheCliDoes() {
    DevicesSpec spec;
    spec.speed = {1.0, 0.25};  // no count
    {
      DevicesPanel panel;
      panel.setSpec(spec, 1);
      QCOMPARE(panel.errorText(),
               QStringLiteral("devices.speed: has 2 entries but there is 1 device; give one speed "
                              "per device. Here: set Count to 2, or change a speed in the table "
                              "below to train with the speeds it shows."));
      QCOMPARE(panel.spec().speed, spec.speed);  // kept whole, for a save and for the CLI check
      auto* count = panel.findChild<QSpinBox*>();
      QVERIFY(count);
      count->setValue(2);  // the user's count
      QVERIFY(panel.errorText().isEmpty());
      QCOMPARE(panel.spec().speed, spec.speed);
    }
    {
      DevicesPanel panel;
      panel.setSpec(spec, 1);
      panel.overrideCount(2);  // --devices 2
      QVERIFY(panel.errorText().isEmpty());
      QCOMPARE(panel.deviceCount(), 2);
      QCOMPARE(panel.spec().speed, spec.speed);
      panel.overrideCount(3);  // --devices 3: not padded with 1s
      QVERIFY2(panel.errorText().contains(QStringLiteral("has 2 entries but there are 3 devices")),
               qPrintable(panel.errorText()));
      // Editing a speed makes the rows the list: cpu:2 runs at full speed.
      QDoubleSpinBox* first = nullptr;
      for (auto* spin : panel.findChildren<QDoubleSpinBox*>())
        if (spin->suffix() == QStringLiteral(" ×") && !first) first = spin;
      QVERIFY(first);
      first->setValue(0.5);
      QVERIFY(panel.errorText().isEmpty());
      QCOMPARE(panel.spec().speed, (std::vector<double>{0.5, 0.25, 1.0}));
    }
  }

  // A bad FITBENCH_CPU_DEVICES is fitbench-cli's error while the count is left to it, and
  // nothing once the file, --devices or the user sets a count.
  void badEnvironmentCountIsAnErrorUntilACountIsSet() {
    const QString why = QStringLiteral(
        "FITBENCH_CPU_DEVICES: must be a whole number of devices from 1 to 64, got \"abc\"");
    DevicesPanel panel;
    panel.setSpec(DevicesSpec{}, 1, why);
    QCOMPARE(panel.errorText(), why + QStringLiteral(". Here: set Count."));
    panel.overrideCount(2);
    QVERIFY(panel.errorText().isEmpty());
    DevicesSpec counted;
    counted.count = 2;
    panel.setSpec(counted, 1, why);
    QVERIFY(panel.errorText().isEmpty());
    panel.setSpec(DevicesSpec{}, 1, why);
    panel.findChild<QSpinBox*>()->setValue(3);
    QVERIFY(panel.errorText().isEmpty());
  }

  // Layout map keys come back as the file has them: "" (which matches every path) and a key's
  // spaces are kept, so the window checks and runs what fitbench-cli does.
  void layoutKeysAreKeptAsTyped() {
    StrategyPanel panel;
    DistributionSpec spec = modelParallel({1, 2}, {"batch", "model"});
    spec.layout_map = {{"", {"", "model"}}, {" dense.*kernel", {"", "model"}}};
    panel.setSpec(spec);
    QCOMPARE(panel.spec().layout_map, spec.layout_map);
  }

  // Layout keys typed into the table are read as Python's re reads them, on the UI thread:
  // "(.*)*dense/kernel", which a backtracking engine would not finish, shows its match at once;
  // a lookahead is refused as fitbench's limit beside its row; a syntax error in Python's words.
  void layoutKeysReadAsPython() {
    StrategyPanel panel;
    panel.setModelContext(twoDense(), 4, 2);
    DistributionSpec spec = modelParallel({1, 2}, {"batch", "model"});
    spec.layout_map = {{"hidden", {"", "model"}}};
    panel.setSpec(spec);
    auto* table = panel.findChild<QTableWidget*>();
    QVERIFY(table && table->rowCount() >= 1 && table->item(0, 0));
    table->item(0, 0)->setText(QStringLiteral("(.*)*dense/kernel"));
    QCOMPARE(panel.rowMatches(0), QStringList{QStringLiteral("sequential/dense/kernel")});
    QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
    table->item(0, 0)->setText(QStringLiteral("dense(?=_1)"));
    QVERIFY2(panel.errorText().contains(QStringLiteral("lookahead and lookbehind")),
             qPrintable(panel.errorText()));
    QVERIFY(table->item(0, 2)->text().startsWith(QStringLiteral("✖ lookahead and lookbehind")));
    if (const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS"); !dir.isEmpty()) {
      panel.resize(380, 720);
      QVERIFY(panel.grab().save(dir + QStringLiteral("/strategy_lookahead_key.png")));
    }
    table->item(0, 0)->setText(QStringLiteral("dense["));
    QVERIFY2(panel.errorText().contains(QStringLiteral(
                 "is not a valid regular expression (unterminated character set at position 5)")),
             qPrintable(panel.errorText()));
  }

  // An empty layout map is what every run fills with the default rules: the panel counts what
  // they shard, and Fill default (clicked) writes the same rows the run plan uses into the table.
  void emptyLayoutShowsTheDefault() {
    StrategyPanel panel;
    panel.setModelContext(twoDense(), 4, 2);
    panel.setSpec(modelParallel({1, 2}, {"batch", "model"}));
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* table = panel.findChild<QTableWidget*>();
    QCOMPARE(table->rowCount(), 0);
    QLabel* messages = nullptr;
    for (QLabel* l : panel.findChildren<QLabel*>())
      if (l->text().contains(QStringLiteral("No rules"))) messages = l;
    QVERIFY(messages);
    // The 4x8 and 8x2 kernels divide by 2; the biases are replicated.
    QVERIFY2(messages->text().contains(QStringLiteral("2 of 4 variables sharded")),
             qPrintable(messages->text()));
    auto* fill = panel.findChild<QPushButton*>(QStringLiteral("fillDefaultLayout"));
    QVERIFY(fill);
    QTest::mouseClick(fill, Qt::LeftButton);
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("sequential/dense/kernel"));
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("None, model"));
    QCOMPARE(panel.spec().layout_map.size(), size_t(2));
    QVERIFY(!messages->text().contains(QStringLiteral("No rules")));
    QVERIFY(messages->text().contains(QStringLiteral("2 of 4 variables sharded")));
  }

  void validationSplitKeepsItsDigits() {
    // The field shows the file's split (Keras takes any in [0, 1)), not 0.90 or "0.33".
    DataPanel panel;
    auto* field = panel.findChild<QDoubleSpinBox*>(QStringLiteral("validationSplit"));
    QVERIFY(field);
    panel.setValidationSplit(0.95);
    QCOMPARE(panel.validationSplit(), 0.95);
    QCOMPARE(field->value(), 0.95);
    panel.setValidationSplit(0.333333);
    QCOMPARE(field->value(), 0.333333);
    QCOMPARE(field->text(), QStringLiteral("0.333333"));
  }

  void meshTheFieldsCannotShowIsKept() {
    StrategyPanel panel;
    panel.setModelContext(twoDense(), 4, 4);
    panel.setSpec(modelParallel({2, 1, 2}, {"batch", "x", "model"}));
    DistributionSpec spec = panel.spec();
    QCOMPARE(spec.mesh_shape, (std::vector<int>{2, 1, 2}));
    QCOMPARE(spec.axis_names, (std::vector<std::string>{"batch", "x", "model"}));
    QVERIFY2(panel.errorText().contains(QStringLiteral("got 3 axes")),
             qPrintable(panel.errorText()));
    auto* note = panel.findChild<QLabel*>(QStringLiteral("meshNote"));
    QVERIFY(note && !note->isHidden());
    QVERIFY2(note->text().contains(QStringLiteral("shape (2, 1, 2)")), qPrintable(note->text()));
    auto* error = panel.findChild<QLabel*>(QStringLiteral("meshError"));
    QVERIFY(error && !error->isHidden());
    if (const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS"); !dir.isEmpty()) {
      panel.resize(380, 720);
      QVERIFY(panel.grab().save(dir + QStringLiteral("/strategy_kept_mesh.png")));
    }
    // Editing the shape replaces it with what the fields show.
    auto spins = panel.findChildren<QSpinBox*>();
    QVERIFY(spins.size() >= 2);
    spins[0]->setValue(2);
    spec = panel.spec();
    QCOMPARE(spec.mesh_shape.size(), size_t(2));
    QVERIFY(note->isHidden());
    // So does choosing another batch axis.
    panel.setSpec(modelParallel({2, 1, 2}, {"batch", "x", "model"}));
    auto* batchAxis = panel.findChild<QComboBox*>(QStringLiteral("batchAxis"));
    QVERIFY(batchAxis);
    QVERIFY(batchAxis->count() == 2);
    batchAxis->setCurrentIndex(1);
    QCOMPARE(panel.spec().mesh_shape.size(), size_t(2));
    QCOMPARE(panel.spec().batch_dim_name, std::string("model"));
    // An axis longer than the fields allow (32) is kept too.
    panel.setSpec(modelParallel({1, 32}, {"batch", "model"}));
    QCOMPARE(panel.spec().mesh_shape, (std::vector<int>{1, 32}));
  }

  void meshErrorIsShownBesideTheMesh() {
    StrategyPanel panel;
    panel.setModelContext(twoDense(), 4, 4);
    panel.setSpec(modelParallel({1, 2}, {"batch", "model"}));  // 2 devices' mesh on 4 devices
    auto* error = panel.findChild<QLabel*>(QStringLiteral("meshError"));
    QVERIFY(error);
    QVERIFY2(!error->isHidden(), qPrintable(panel.errorText()));
    QVERIFY(!panel.errorText().isEmpty());
    panel.setSpec(modelParallel({2, 2}, {"batch", "model"}));
    QVERIFY(error->isHidden());
  }
};

QTEST_MAIN(TestSetupPanels)
#include "tst_setup_panels.moc"
