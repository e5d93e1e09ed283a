// The Data panel: spec round trips for every generator, the preview and the counts following the
// user's choices, CSV import (preview rows, column roles, relative paths), errors that name the
// line and keep the previous settings, and read-only mode.

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QIcon>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <numeric>

#include "imageio/qt_image_decoder.h"
#include "tests/core/idx_fixtures.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/data_scatter.h"
#include "ui/panels/image_gallery.h"

using namespace fitbench;

namespace {

template <typename T>
T* child(const QWidget& panel, const char* name) {
  T* widget = panel.findChild<T*>(QString::fromLatin1(name));
  if (widget == nullptr) qFatal("no child widget named %s", name);
  return widget;
}

int generatorRow(const QWidget& panel, const QString& name) {
  auto* list = child<QListWidget>(panel, "generatorList");
  for (int i = 0; i < list->count(); ++i) {
    if (list->item(i)->data(Qt::UserRole).toString() == name) return i;
  }
  for (int i = 0; i < list->count(); ++i)  // "CSV file…": the item without a name
    if (!list->item(i)->data(Qt::UserRole).isValid()) return i;
  return -1;
}

void clickItem(QListWidget* list, int row) {
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                    list->visualItemRect(list->item(row)).center());
}

// Every field of two specs, or the first difference.
QString specDifference(const DataSpec& a, const DataSpec& b) {
  const auto join = [](const std::vector<std::string>& v) {
    QStringList out;
    for (const std::string& s : v) out << QString::fromStdString(s);
    return out.join('|');
  };
  const QStringList fields[] = {
      {"generator", QString::fromStdString(a.generator), QString::fromStdString(b.generator)},
      {"samples", QString::number(a.samples), QString::number(b.samples)},
      {"noise", QString::number(a.noise, 'g', 17), QString::number(b.noise, 'g', 17)},
      {"seed", QString::number(a.seed), QString::number(b.seed)},
      {"features", QString::number(a.features), QString::number(b.features)},
      {"classes", QString::number(a.classes), QString::number(b.classes)},
      {"csv", QString::fromStdString(a.csv), QString::fromStdString(b.csv)},
      {"target", join(a.target), join(b.target)},
      {"features_columns", join(a.features_columns), join(b.features_columns)},
      {"delimiter", QString(QChar(a.delimiter)), QString(QChar(b.delimiter))},
      {"standardize", QString::number(a.standardize), QString::number(b.standardize)}};
  for (const QStringList& f : fields) {
    if (f[1] != f[2]) return QStringLiteral("%1: got \"%2\", want \"%3\"").arg(f[0], f[1], f[2]);
  }
  return {};
}

void writeFile(const QString& path, const QByteArray& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size()) qFatal("cannot write");
}

// 60 rows: a = i, b = i / 2, c = -i, label = i % 3.
QByteArray sixtyRows() {
  QByteArray text = "a,b,c,label\n";
  for (int i = 0; i < 60; ++i) {
    text += QByteArray::number(i) + ',' + QByteArray::number(i * 0.5) + ',' +
            QByteArray::number(-i) + ',' + QByteArray::number(i % 3) + '\n';
  }
  return text;
}

// A shown panel in a ~380 px wide scroll area, as the main window's dock holds it.
struct DockedPanel {
  QScrollArea area;
  DataPanel* panel = new DataPanel;  // owned by the area
  DockedPanel() {
    area.setWidgetResizable(true);
    area.setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    area.setWidget(panel);
    area.resize(380, 800);
    area.show();
  }
};

DataSpec generatorSpec(const char* generator) {
  DataSpec s;
  s.generator = generator;
  return s;
}

}  // namespace

class TestDataPanel : public QObject {
  Q_OBJECT
 private slots:
  void roundTrip_data();
  void roundTrip();
  void choosingGeneratorUpdatesPreviewAndCounts();
  void validationRowsAreHollow();
  void noiseOnlyWhereTheGeneratorUsesIt();
  void generatorErrorKeepsPreviousSpec();
  void csvLoadsWithPreviewAndRoles();
  void csvPathsRelativeToBaseDir();
  void badCsvShowsLineAndKeepsPreviousSpec_data();
  void badCsvShowsLineAndKeepsPreviousSpec();
  void readOnlyDisablesEdits();
  void thumbnailsAndScreenshot();
  void fashionMnistThroughTheWidgets();
  void badImageFileKeepsPreviousSpec();
  void imageFolderThroughTheWidgets();
};

void TestDataPanel::roundTrip_data() {
  QTest::addColumn<QString>("generator");
  QTest::addColumn<double>("noise");
  QTest::addColumn<bool>("features");  // the generator takes features
  QTest::addColumn<bool>("classes");   // the generator takes classes
  QTest::newRow("seed") << "seed" << 0.0 << true << false;
  QTest::newRow("seed_legacy") << "seed_legacy" << 0.0 << true << false;
  QTest::newRow("circle") << "circle" << 0.25 << false << false;
  QTest::newRow("xor") << "xor" << 0.1 << false << false;
  QTest::newRow("gaussian") << "gaussian" << 0.35 << false << false;
  QTest::newRow("spiral") << "spiral" << 0.5 << false << false;
  QTest::newRow("moons") << "moons" << 0.75 << false << false;
  QTest::newRow("blobs") << "blobs" << 1.5 << true << true;
  QTest::newRow("plane") << "plane" << 0.05 << false << false;
  QTest::newRow("sine") << "sine" << 0.2 << false << false;
}

// setSpec shows every field and spec() gives it back; the same values entered by hand in a fresh
// panel give the same spec.
void TestDataPanel::roundTrip() {
  QFETCH(QString, generator);
  QFETCH(double, noise);
  QFETCH(bool, features);
  QFETCH(bool, classes);
  DataSpec s = generatorSpec(generator.toLatin1().constData());
  s.samples = 200;
  s.noise = noise;
  s.seed = 4294967301ULL;  // above 2^32: the seed field keeps all 64 bits
  if (features) s.features = 3;
  if (classes) s.classes = 4;
  s.standardize = true;

  DataPanel shown;
  shown.setSpec(s);
  QVERIFY2(specDifference(shown.spec(), s).isEmpty(), qPrintable(specDifference(shown.spec(), s)));
  QVERIFY(shown.errorText().isEmpty());
  auto* list = child<QListWidget>(shown, "generatorList");
  QCOMPARE(list->currentItem()->data(Qt::UserRole).toString(), generator);
  QCOMPARE(child<QSpinBox>(shown, "samples")->value(), 200);
  QCOMPARE(child<QDoubleSpinBox>(shown, "noise")->value(), noise);
  QCOMPARE(child<QLineEdit>(shown, "seed")->text(), QStringLiteral("4294967301"));
  if (features) QCOMPARE(child<QSpinBox>(shown, "features")->value(), 3);
  if (classes) QCOMPARE(child<QSpinBox>(shown, "classes")->value(), 4);
  QVERIFY(child<QCheckBox>(shown, "standardize")->isChecked());

  DataPanel edited;
  edited.setSpec(DataSpec{});
  child<QListWidget>(edited, "generatorList")->setCurrentRow(generatorRow(edited, generator));
  child<QSpinBox>(edited, "samples")->setValue(200);
  if (!generator.startsWith("seed")) child<QDoubleSpinBox>(edited, "noise")->setValue(noise);
  auto* seed = child<QLineEdit>(edited, "seed");
  seed->clear();
  QTest::keyClicks(seed, "4294967301");
  if (features) child<QSpinBox>(edited, "features")->setValue(3);
  if (classes) child<QSpinBox>(edited, "classes")->setValue(4);
  child<QCheckBox>(edited, "standardize")->setChecked(true);
  QVERIFY2(specDifference(edited.spec(), s).isEmpty(),
           qPrintable(specDifference(edited.spec(), s)));
}

void TestDataPanel::choosingGeneratorUpdatesPreviewAndCounts() {
  DataPanel panel;
  auto* scatter = child<DataScatter>(panel, "scatter");
  // The default spec: the seed set, 128 samples of 4 features, labels 0/1.
  QCOMPARE(panel.featureCount(), 4);
  QCOMPARE(panel.classCount(), 2);
  QTRY_COMPARE(scatter->pointCount(), 128);
  QCOMPARE(scatter->xTitle(), QStringLiteral("x0"));
  QCOMPARE(scatter->yTitle(), QStringLiteral("x1"));

  QSignalSpy changed(&panel, &DataPanel::changed);
  auto* list = child<QListWidget>(panel, "generatorList");
  list->setCurrentRow(generatorRow(panel, "sine"));
  QCOMPARE(changed.count(), 1);
  QCOMPARE(panel.spec().generator, std::string("sine"));
  QCOMPARE(panel.featureCount(), 1);
  QCOMPARE(panel.classCount(), 0);  // a regression target
  // One feature: the plot shows it against the target.
  QTRY_COMPARE(scatter->yTitle(), QStringLiteral("y (target)"));
  QCOMPARE(scatter->xTitle(), QStringLiteral("x0"));

  list->setCurrentRow(generatorRow(panel, "blobs"));
  QCOMPARE(panel.featureCount(), 4);
  QCOMPARE(panel.classCount(), 3);
  child<QSpinBox>(panel, "classes")->setValue(5);
  child<QSpinBox>(panel, "features")->setValue(6);
  child<QSpinBox>(panel, "samples")->setValue(90);
  QCOMPARE(panel.classCount(), 5);
  QCOMPARE(panel.featureCount(), 6);
  QTRY_COMPARE(scatter->pointCount(), 90);
  QCOMPARE(scatter->yTitle(), QStringLiteral("x1"));
  QCOMPARE(changed.count(), 5);

  list->setCurrentRow(generatorRow(panel, "circle"));
  QCOMPARE(panel.featureCount(), 2);
  QCOMPARE(panel.classCount(), 2);
  QCOMPARE(panel.spec().samples, int64_t{90});
}

void TestDataPanel::validationRowsAreHollow() {
  DataPanel panel;  // 128 samples
  auto* scatter = child<DataScatter>(panel, "scatter");
  panel.setValidationSplit(0.25);
  QCOMPARE(panel.validationSplit(), 0.25);
  QCOMPARE(child<QDoubleSpinBox>(panel, "validationSplit")->value(), 0.25);
  // Keras: the first floor(128 * 0.75) = 96 rows train, the last 32 validate.
  QTRY_COMPARE(scatter->validationPointCount(), 32);
  QVERIFY(scatter->summary().contains("96 training rows, 32 validation rows"));

  QSignalSpy changed(&panel, &DataPanel::changed);
  child<QDoubleSpinBox>(panel, "validationSplit")->setValue(0.1);
  QCOMPARE(changed.count(), 1);
  QCOMPARE(panel.validationSplit(), 0.1);
  // floor(128 * 0.9) = 115 train, 13 validate.
  QTRY_COMPARE(scatter->validationPointCount(), 13);

  // One sample cannot be split.
  child<QSpinBox>(panel, "samples")->setValue(1);
  QVERIFY(panel.errorText().contains("fit.validation_split"));
  QVERIFY(panel.errorText().contains("leaves no training rows"));
  QCOMPARE(panel.spec().samples, int64_t{1});  // the data itself is valid
}

void TestDataPanel::noiseOnlyWhereTheGeneratorUsesIt() {
  DataPanel panel;
  auto* noise = child<QDoubleSpinBox>(panel, "noise");
  auto* list = child<QListWidget>(panel, "generatorList");
  QVERIFY(!noise->isEnabled());  // the seed set has no noise
  QVERIFY(noise->toolTip().contains("no noise"));
  QVERIFY(!child<QSpinBox>(panel, "features")->toolTip().isEmpty());

  list->setCurrentRow(generatorRow(panel, "circle"));
  QVERIFY(noise->isEnabled());
  QVERIFY(!child<QSpinBox>(panel, "features")->isEnabled());
  QCOMPARE(child<QSpinBox>(panel, "features")->value(), 2);

  list->setCurrentRow(generatorRow(panel, "moons"));
  noise->setValue(0.8);
  QCOMPARE(panel.spec().noise, 0.8);
  // The Playground's limit (its 50 % / 100) applies again: the value stays as it is, and the
  // generator's check says so beside the field; the run is refused until it is changed.
  list->setCurrentRow(generatorRow(panel, "spiral"));
  QCOMPARE(panel.spec().noise, 0.8);
  QCOMPARE(noise->value(), 0.8);
  QVERIFY2(panel.errorText().contains("at most 0.5"), qPrintable(panel.errorText()));
  noise->setValue(0.5);
  QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
}

void TestDataPanel::generatorErrorKeepsPreviousSpec() {
  DockedPanel docked;
  QVERIFY(QTest::qWaitForWindowExposed(&docked.area));
  DataPanel& panel = *docked.panel;
  child<QListWidget>(panel, "generatorList")->setCurrentRow(generatorRow(panel, "blobs"));
  // 3 classes need at least 3 samples.
  child<QSpinBox>(panel, "samples")->setValue(2);
  QVERIFY(panel.errorText().startsWith("data.classes: "));
  QCOMPARE(panel.spec().samples, int64_t{128});
  auto* error = child<QLabel>(panel, "generatorError");
  QVERIFY(error->isVisible());
  QCOMPARE(error->text(), panel.errorText());
  QCOMPARE(child<QSpinBox>(panel, "classes")->toolTip(), panel.errorText());

  child<QSpinBox>(panel, "classes")->setValue(2);
  QVERIFY(panel.errorText().isEmpty());
  QVERIFY(!error->isVisible());
  QCOMPARE(panel.spec().samples, int64_t{2});
  QCOMPARE(panel.spec().classes, int64_t{2});

  auto* seed = child<QLineEdit>(panel, "seed");
  seed->clear();
  QTest::keyClicks(seed, "99999999999999999999");  // above 2^64 - 1
  QVERIFY(panel.errorText().startsWith("data.seed: "));
  // Every keystroke before the last one gave a valid seed; the last valid one is kept.
  QCOMPARE(panel.spec().seed, uint64_t{9999999999999999999ULL});
}

void TestDataPanel::csvLoadsWithPreviewAndRoles() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  writeFile(dir.filePath("data.csv"), sixtyRows());
  DataPanel panel;
  panel.setBaseDir(dir.path());
  QSignalSpy changed(&panel, &DataPanel::changed);
  QVERIFY2(panel.loadCsvFile(dir.filePath("data.csv")), qPrintable(panel.errorText()));
  QCOMPARE(changed.count(), 1);
  const DataSpec s = panel.spec();
  QCOMPARE(s.csv, std::string("data.csv"));
  QCOMPARE(s.generator, std::string());
  QCOMPARE(s.target, std::vector<std::string>{"label"});  // the last column by default
  QVERIFY(s.features_columns.empty());
  QCOMPARE(s.delimiter, ',');
  QCOMPARE(panel.featureCount(), 3);
  QCOMPARE(panel.classCount(), 3);  // labels 0, 1, 2

  auto* rows = child<QTableWidget>(panel, "csvRows");
  QCOMPARE(rows->rowCount(), 50);
  QCOMPARE(rows->columnCount(), 4);
  QCOMPARE(rows->horizontalHeaderItem(3)->text(), QStringLiteral("label"));
  QCOMPARE(rows->item(0, 1)->text(), QStringLiteral("0"));
  QCOMPARE(rows->item(49, 1)->text(), QStringLiteral("24.5"));
  QCOMPARE(rows->item(49, 3)->text(), QStringLiteral("1"));  // 49 % 3
  QCOMPARE(child<QLabel>(panel, "csvRowInfo")->text(), QStringLiteral("The first 50 of 60 rows"));
  auto* scatter = child<DataScatter>(panel, "scatter");
  QTRY_COMPARE(scatter->pointCount(), 60);
  QCOMPARE(scatter->yTitle(), QStringLiteral("b"));
  // The user plots c against the target; the choice is kept by name when the data changes.
  auto* yAxis = child<QComboBox>(*scatter, "yAxis");
  QCOMPARE(yAxis->count(), 4);  // a, b, c, label (target)
  yAxis->setCurrentIndex(3);
  emit yAxis->activated(3);
  QCOMPARE(scatter->yTitle(), QStringLiteral("label (target)"));
  child<QCheckBox>(panel, "standardize")->setChecked(true);
  QVERIFY(panel.spec().standardize);
  QTest::qWait(100);
  QCOMPARE(scatter->yTitle(), QStringLiteral("label (target)"));
  child<QCheckBox>(panel, "standardize")->setChecked(false);

  // b becomes a second target: two features are left, and the targets are not one-hot.
  auto* roles = child<QTableWidget>(panel, "csvRoles");
  roles->item(1, 1)->setCheckState(Qt::Checked);
  QCOMPARE(panel.spec().target, (std::vector<std::string>{"b", "label"}));
  QCOMPARE(panel.featureCount(), 2);
  QCOMPARE(panel.classCount(), 0);
  QCOMPARE(roles->item(1, 2)->checkState(), Qt::Unchecked);
  // a is no longer a feature: the features are listed.
  roles->item(0, 2)->setCheckState(Qt::Unchecked);
  QCOMPARE(panel.spec().features_columns, std::vector<std::string>{"c"});
  QCOMPARE(panel.featureCount(), 1);
  QCOMPARE(changed.count(), 5);  // and the two standardize clicks

  // The spec reads back in another panel with the same base folder.
  DataPanel other;
  other.setBaseDir(dir.path());
  other.setSpec(panel.spec());
  QVERIFY2(specDifference(other.spec(), panel.spec()).isEmpty(),
           qPrintable(specDifference(other.spec(), panel.spec())));
  QCOMPARE(other.featureCount(), 1);
  QVERIFY(other.errorText().isEmpty());
  QCOMPARE(child<QTableWidget>(other, "csvRoles")->item(0, 2)->checkState(), Qt::Unchecked);

  // A semicolon file: its delimiter is guessed, the target kept by name.
  writeFile(dir.filePath("semi.csv"), "x;label\n1;0\n2;1\n3;1\n");
  QVERIFY2(panel.loadCsvFile(dir.filePath("semi.csv")), qPrintable(panel.errorText()));
  QCOMPARE(panel.spec().delimiter, ';');
  QCOMPARE(panel.spec().target, std::vector<std::string>{"label"});
  QCOMPARE(panel.featureCount(), 1);
  QCOMPARE(panel.classCount(), 2);
}

void TestDataPanel::csvPathsRelativeToBaseDir() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(QDir(dir.path()).mkpath("exp/sub") && QDir(dir.path()).mkpath("other"));
  writeFile(dir.filePath("exp/sub/in.csv"), "u,v\n1,0\n2,1\n");
  writeFile(dir.filePath("other/out.csv"), "u,v\n1,0\n2,1\n");
  DataPanel panel;
  panel.setBaseDir(dir.filePath("exp"));
  QVERIFY(panel.loadCsvFile(dir.filePath("exp/sub/in.csv")));
  QCOMPARE(panel.spec().csv, std::string("sub/in.csv"));
  QVERIFY(panel.loadCsvFile(dir.filePath("other/out.csv")));
  QCOMPARE(QString::fromStdString(panel.spec().csv), dir.filePath("other/out.csv"));
  QVERIFY(panel.loadCsvFile(QStringLiteral("sub/in.csv")));  // relative to the base folder
  QCOMPARE(panel.spec().csv, std::string("sub/in.csv"));

  // The experiment is saved elsewhere: the path follows so that it names the same file.
  panel.setBaseDir(dir.filePath("exp/sub"));
  QCOMPARE(panel.spec().csv, std::string("in.csv"));
  QCOMPARE(child<QLineEdit>(panel, "csvPath")->text(), QStringLiteral("in.csv"));
  panel.setBaseDir(dir.filePath("other"));
  QCOMPARE(QString::fromStdString(panel.spec().csv), dir.filePath("exp/sub/in.csv"));
  QVERIFY(panel.errorText().isEmpty());
  QCOMPARE(panel.featureCount(), 1);

  // A relative path is resolved against the first base folder, even when it comes later.
  DataSpec s;
  s.generator.clear();
  s.csv = "sub/in.csv";
  s.target = {"v"};
  DataPanel later;
  later.setSpec(s);
  QVERIFY(later.errorText().contains("sub/in.csv"));
  QCOMPARE(later.featureCount(), 0);
  later.setBaseDir(dir.filePath("exp"));
  QVERIFY(later.errorText().isEmpty());
  QCOMPARE(later.featureCount(), 1);
  QCOMPARE(later.spec().csv, std::string("sub/in.csv"));
}

void TestDataPanel::badCsvShowsLineAndKeepsPreviousSpec_data() {
  QTest::addColumn<QByteArray>("text");
  QTest::addColumn<QString>("place");
  QTest::addColumn<int>("markedRow");     // the preview row marked red, -1 for none
  QTest::addColumn<int>("markedColumn");  // its marked cell, -1 for the whole row
  // The second data row is line 3 (the preview's second row).
  QTest::newRow("ragged row") << QByteArray("a,b,y\n1,2,0\n3,4\n") << "bad.csv:3: row has 2 fields"
                              << 1 << -1;
  QTest::newRow("non-number") << QByteArray("a,b,y\n1,2,0\n3,x,1\n") << "bad.csv:3:2 (b)" << 1 << 1;
  QTest::newRow("non-number target")
      << QByteArray("a,b,y\n1,2,0\n3,4,cat\n") << "bad.csv:3:3 (y)" << 1 << 2;
  QTest::newRow("unclosed quote") << QByteArray("a,b,y\n1,2,0\n\"3,4,1\n") << "bad.csv:3:1" << -1
                                  << -1;
}

void TestDataPanel::badCsvShowsLineAndKeepsPreviousSpec() {
  QFETCH(QByteArray, text);
  QFETCH(QString, place);
  QFETCH(int, markedRow);
  QFETCH(int, markedColumn);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  writeFile(dir.filePath("bad.csv"), text);
  writeFile(dir.filePath("good.csv"), "p,q,r\n1,2,3\n4,5,6\n");

  DockedPanel docked;
  QVERIFY(QTest::qWaitForWindowExposed(&docked.area));
  DataPanel& panel = *docked.panel;
  panel.setBaseDir(dir.path());
  const DataSpec circle = generatorSpec("circle");
  panel.setSpec(circle);
  QVERIFY(!panel.loadCsvFile(dir.filePath("bad.csv")));
  QVERIFY2(panel.errorText().contains(place), qPrintable(panel.errorText()));
  QVERIFY2(specDifference(panel.spec(), circle).isEmpty(),
           qPrintable(specDifference(panel.spec(), circle)));
  QCOMPARE(panel.featureCount(), 2);
  auto* error = child<QLabel>(panel, "csvError");
  QVERIFY(error->isVisible());
  QCOMPARE(error->text(), panel.errorText());
  QVERIFY(error->styleSheet().contains("color"));
  // The rows read are shown, labelled with their lines; the bad cell or row is marked.
  auto* rows = child<QTableWidget>(panel, "csvRows");
  QVERIFY(rows->rowCount() >= 1);
  QCOMPARE(rows->verticalHeaderItem(0)->text(), QStringLiteral("2"));
  for (int r = 0; r < rows->rowCount(); ++r) {
    for (int c = 0; c < rows->columnCount(); ++c) {
      const QTableWidgetItem* item = rows->item(r, c);
      if (item == nullptr) continue;
      const bool marked = r == markedRow && (markedColumn < 0 || c == markedColumn);
      QCOMPARE(item->background().style() != Qt::NoBrush, marked);
    }
  }

  // After a good CSV file, a bad one keeps the good one's settings.
  QVERIFY(panel.loadCsvFile(dir.filePath("good.csv")));
  QVERIFY(!panel.loadCsvFile(dir.filePath("bad.csv")));
  QCOMPARE(panel.spec().csv, std::string("good.csv"));
  QCOMPARE(panel.spec().target, std::vector<std::string>{"r"});
  QVERIFY(panel.errorText().contains(place));
}

void TestDataPanel::readOnlyDisablesEdits() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  writeFile(dir.filePath("d.csv"), "a,b\n1,0\n2,1\n");
  DataPanel panel;
  panel.setReadOnly(true);
  QVERIFY(!child<QListWidget>(panel, "generatorList")->isEnabled());
  QVERIFY(!child<QSpinBox>(panel, "samples")->isEnabled());
  QVERIFY(child<QLineEdit>(panel, "seed")->isReadOnly());
  QVERIFY(!child<QDoubleSpinBox>(panel, "validationSplit")->isEnabled());
  QVERIFY(!child<QCheckBox>(panel, "standardize")->isEnabled());
  QVERIFY(!panel.loadCsvFile(dir.filePath("d.csv")));
  QCOMPARE(panel.spec().generator, std::string("seed"));

  panel.setReadOnly(false);
  QVERIFY(child<QSpinBox>(panel, "samples")->isEnabled());
  QVERIFY(!child<QDoubleSpinBox>(panel, "noise")->isEnabled());  // still: seed has no noise
  QVERIFY(panel.loadCsvFile(dir.filePath("d.csv")));
  panel.setReadOnly(true);
  QVERIFY(!child<QPushButton>(panel, "csvBrowse")->isEnabled());
  auto* roles = child<QTableWidget>(panel, "csvRoles");
  QVERIFY(!(roles->item(0, 1)->flags() & Qt::ItemIsEnabled));
  QVERIFY(roles->isEnabled());  // the tables still scroll
  QVERIFY(child<QTableWidget>(panel, "csvRows")->isEnabled());
}

// The thumbnails are drawn from the generators' points: circle's has both class colors, and the
// regression sets use the ramp's ends. Set FITBENCH_SCREENSHOT_DIR to save the panel as PNGs.
void TestDataPanel::thumbnailsAndScreenshot() {
  DockedPanel docked;
  QVERIFY(QTest::qWaitForWindowExposed(&docked.area));
  DataPanel& panel = *docked.panel;
  auto* list = child<QListWidget>(panel, "generatorList");
  const auto colors = [&](const QString& name) {
    const QImage image = list->item(generatorRow(panel, name))
                             ->icon()
                             .pixmap(56, 56)
                             .toImage()
                             .convertToFormat(QImage::Format_RGB32);
    QSet<QRgb> seen;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) seen.insert(image.pixel(x, y));
    return seen;
  };
  const QRgb orange = DataScatter::classColor(0).rgb();
  const QRgb blue = DataScatter::classColor(1).rgb();
  QVERIFY(colors("circle").contains(orange) && colors("circle").contains(blue));
  QVERIFY(colors("blobs").contains(DataScatter::classColor(2).rgb()));
  QVERIFY(!colors("seed").contains(DataScatter::classColor(2).rgb()));
  QCOMPARE(DataScatter::rampColor(0.0).rgb(), orange);
  QCOMPARE(DataScatter::rampColor(1.0).rgb(), blue);

  const QString out = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR");
  QTRY_VERIFY(child<DataScatter>(panel, "scatter")->pointCount() > 0);
  if (!out.isEmpty()) QVERIFY(docked.area.grab().save(out + "/data_panel_seed.png"));
  list->setCurrentRow(generatorRow(panel, "spiral"));
  child<QDoubleSpinBox>(panel, "validationSplit")->setValue(0.2);
  QTest::qWait(100);
  if (!out.isEmpty()) QVERIFY(docked.area.grab().save(out + "/data_panel_spiral.png"));
  QTemporaryDir dir;
  writeFile(dir.filePath("data.csv"), sixtyRows());
  panel.setBaseDir(dir.path());
  QVERIFY(panel.loadCsvFile(dir.filePath("data.csv")));
  QTest::qWait(100);
  if (!out.isEmpty()) QVERIFY(panel.grab().save(out + "/data_panel_csv.png"));
  writeFile(dir.filePath("bad.csv"), "a,b,y\n1,2,0\n3,x,1\n");
  QVERIFY(!panel.loadCsvFile(dir.filePath("bad.csv")));
  QTest::qWait(100);
  if (!out.isEmpty()) QVERIFY(panel.grab().save(out + "/data_panel_bad.png"));
}

// Fashion-MNIST from Debian's package, as a person picks it: a click on its item, the number of
// training images typed, the test images ticked as validation data; the gallery and the class
// histogram follow, the validation split is disabled, and a click on a generator goes back.
void TestDataPanel::fashionMnistThroughTheWidgets() {
  if (!QFileInfo::exists(QString(kFashionMnistDir) + "/train-images-idx3-ubyte.gz"))
    QSKIP("dataset-fashion-mnist is not installed (scripts/deps.sh installs it)");
  DockedPanel docked;
  docked.area.resize(420, 1400);
  QVERIFY(QTest::qWaitForWindowExposed(&docked.area));
  DataPanel& panel = *docked.panel;
  auto* list = child<QListWidget>(panel, "generatorList");
  auto* gallery = child<ImageGallery>(panel, "gallery");
  QSignalSpy changed(&panel, &DataPanel::changed);
  clickItem(list, generatorRow(panel, "fashion_mnist"));
  QCOMPARE(changed.count(), 1);
  QCOMPARE(panel.spec().dataset, std::string("fashion_mnist"));
  QVERIFY(panel.spec().generator.empty() && panel.spec().csv.empty());
  QCOMPARE(panel.featureCount(), 784);
  QCOMPARE(panel.classCount(), 10);
  QCOMPARE(panel.sampleCount(), int64_t{60000});
  QVERIFY(panel.errorText().isEmpty());
  QTRY_COMPARE(gallery->imageCount(), ImageGallery::kMaxImages);
  QCOMPARE(gallery->classCounts(), std::vector<int64_t>(10, 6000));
  QVERIFY(gallery->isVisible());
  QVERIFY(!child<DataScatter>(panel, "scatter")->isVisible());

  auto* subset = child<QSpinBox>(panel, "subset");
  subset->setFocus();
  subset->selectAll();
  QTest::keyClicks(subset, "2000");
  QCOMPARE(panel.spec().subset, int64_t{0});  // nothing loads while typing
  QTest::keyClick(subset, Qt::Key_Return);
  QCOMPARE(panel.spec().subset, int64_t{2000});
  QCOMPARE(panel.sampleCount(), int64_t{2000});
  QTRY_COMPARE(
      std::accumulate(gallery->classCounts().begin(), gallery->classCounts().end(), int64_t{0}),
      int64_t{2000});

  auto* split = child<QDoubleSpinBox>(panel, "validationSplit");
  split->setValue(0.25);
  auto* test = child<QCheckBox>(panel, "validateOnTest");
  QTest::mouseClick(test, Qt::LeftButton, {}, QPoint(8, test->height() / 2));
  QVERIFY(panel.spec().validation_test);
  QCOMPARE(panel.validationSplit(), 0.0);
  QVERIFY(!split->isEnabled());
  auto* scale = child<QCheckBox>(panel, "scale");
  QTest::mouseClick(scale, Qt::LeftButton, {}, QPoint(8, scale->height() / 2));
  QVERIFY(!panel.spec().scale);
  const QString out = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR");
  if (!out.isEmpty()) QVERIFY(docked.area.grab().save(out + "/data_panel_fashion_mnist.png"));

  clickItem(list, generatorRow(panel, "xor"));
  QCOMPARE(panel.spec().generator, std::string("xor"));
  QVERIFY(panel.spec().dataset.empty());
  QCOMPARE(panel.featureCount(), 2);
  QVERIFY(split->isEnabled());
  QTRY_VERIFY(child<DataScatter>(panel, "scatter")->isVisible());
  QVERIFY(!gallery->isVisible());
}

// A damaged image file is said beside the settings, naming the file, and the panel keeps the data
// that last loaded.
void TestDataPanel::badImageFileKeepsPreviousSpec() {
  QTemporaryDir dir;
  test::write_fashion_mnist(dir.path().toStdString(), 12, 4);
  DataPanel panel;
  DataSpec s;
  s.generator.clear();
  s.dataset = "fashion_mnist";
  s.dataset_dir = dir.path().toStdString();
  panel.setSpec(s);
  QCOMPARE(panel.sampleCount(), int64_t{12});
  QVERIFY(panel.errorText().isEmpty());
  QTRY_COMPARE(child<ImageGallery>(panel, "gallery")->imageCount(), 12);
  test::write(dir.filePath("train-labels-idx1-ubyte.gz").toStdString(),
              test::gzip(test::idx({3}, {1, 2, 3})));
  auto* subset = child<QSpinBox>(panel, "subset");
  subset->setValue(5);
  const QString error = child<QLabel>(panel, "datasetError")->text();
  QVERIFY2(error.endsWith("train-labels-idx1-ubyte.gz: holds 3 labels but "
                          "train-images-idx3-ubyte.gz holds 12 images; the two files must be of "
                          "one set"),
           qPrintable(error));
  QCOMPARE(panel.errorText(), error);
  QCOMPARE(panel.spec().subset, int64_t{0});  // the settings that last loaded
  QCOMPARE(panel.sampleCount(), int64_t{12});
}

// A folder of images as a person picks it: a click on "Folder of images…" (which asks for a
// folder), the path typed with Return, the image size and color mode changed with the keyboard,
// a validation subset typed (fit's split is then disabled), an unreadable file named and then
// skipped with a click; the gallery and the class histogram follow the folder.
void TestDataPanel::imageFolderThroughTheWidgets() {
  install_qt_image_decoder();  // as the window does at start
  QTemporaryDir dir;
  const auto draw = [&](const QString& name, const QColor& color) {
    QDir(dir.path()).mkpath(QFileInfo(dir.filePath(name)).path());
    QImage image(6, 4, QImage::Format_RGB888);
    image.fill(color);
    QVERIFY(image.save(dir.filePath(name)));
  };
  for (int i = 0; i < 5; ++i) {
    draw(QStringLiteral("pictures/red/%1.png").arg(i), QColor(200, 10 * i, 0));
    draw(QStringLiteral("pictures/blue/%1.png").arg(i), QColor(0, 10 * i, 200));
  }
  draw(QStringLiteral("pictures/blue/extra.jpg"), Qt::blue);
  DockedPanel docked;
  docked.area.resize(420, 1400);
  QVERIFY(QTest::qWaitForWindowExposed(&docked.area));
  DataPanel& panel = *docked.panel;
  panel.setBaseDir(dir.path());
  auto* list = child<QListWidget>(panel, "generatorList");
  auto* gallery = child<ImageGallery>(panel, "gallery");
  auto* error = child<QLabel>(panel, "folderError");
  clickItem(list, generatorRow(panel, "directory"));
  QVERIFY2(error->isVisible() && error->text().contains("choose a folder"),
           qPrintable(error->text()));

  auto* path = child<QLineEdit>(panel, "imageFolder");
  QVERIFY(path->isVisible());
  path->setFocus();
  QTest::keyClicks(path, "pictures");
  QTest::keyClick(path, Qt::Key_Return);
  QCOMPARE(panel.spec().directory, std::string("pictures"));  // relative to the experiment
  QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
  QCOMPARE(panel.classCount(), 2);
  QCOMPARE(panel.sampleCount(), int64_t{11});
  QCOMPARE(panel.featureCount(), 256 * 256 * 3);  // Keras's default image_size, rgb
  QTRY_COMPARE(gallery->imageCount(), 11);
  QCOMPARE(gallery->classCounts(), (std::vector<int64_t>{6, 5}));  // blue, red: sorted names
  QVERIFY(gallery->isVisible());
  QVERIFY(!child<DataScatter>(panel, "scatter")->isVisible());

  for (const char* name : {"imageHeight", "imageWidth"}) {
    auto* side = child<QSpinBox>(panel, name);
    side->setFocus();
    side->selectAll();
    QTest::keyClicks(side, "8");
    QTest::keyClick(side, Qt::Key_Return);
  }
  QCOMPARE(panel.spec().image_height, int64_t{8});
  QCOMPARE(panel.spec().image_width, int64_t{8});
  QCOMPARE(panel.featureCount(), 8 * 8 * 3);
  QCOMPARE(panel.sampleShape(), (std::vector<int64_t>{8, 8, 3}));
  auto* color = child<QComboBox>(panel, "colorMode");
  color->setFocus();
  QTest::keyClick(color, Qt::Key_Up);
  QCOMPARE(panel.spec().color_mode, std::string("grayscale"));
  QCOMPARE(panel.featureCount(), 8 * 8);

  auto* fitSplit = child<QDoubleSpinBox>(panel, "validationSplit");
  fitSplit->setValue(0.2);
  auto* subsetSplit = child<QDoubleSpinBox>(panel, "folderValidationSplit");
  subsetSplit->setFocus();
  subsetSplit->selectAll();
  QTest::keyClicks(subsetSplit, "0.3");
  QTest::keyClick(subsetSplit, Qt::Key_Return);
  QCOMPARE(panel.spec().image_validation_split, 0.3);
  QCOMPARE(panel.validationSplit(), 0.0);
  QVERIFY(!fitSplit->isEnabled());
  QCOMPARE(panel.sampleCount(), int64_t{11 - 3});  // int(0.3 * 11) = 3 validate

  {
    QFile broken(dir.filePath("pictures/red/broken.png"));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("not a picture");
  }
  auto* seed = child<QLineEdit>(panel, "folderSeed");
  seed->setFocus();
  seed->selectAll();
  QTest::keyClicks(seed, "42");
  QCOMPARE(panel.spec().seed, uint64_t{7});  // the broken file stops the load: spec() stays
  QVERIFY2(error->isVisible() && error->text().contains("broken.png"), qPrintable(error->text()));
  auto* skip = child<QCheckBox>(panel, "skipUnreadable");
  QTest::mouseClick(skip, Qt::LeftButton, {}, QPoint(8, skip->height() / 2));
  QVERIFY(panel.spec().skip_unreadable);
  QCOMPARE(panel.spec().seed, uint64_t{42});
  QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
  QVERIFY(!error->isVisible());
  // The gallery shows the training part: 12 files, int(0.3 * 12) = 3 validating, less the
  // broken one when it falls among the training files.
  const int64_t training = panel.sampleCount();
  QVERIFY(training == 8 || training == 9);
  QTRY_COMPARE(gallery->imageCount(), static_cast<int>(training));
  QCOMPARE(gallery->classCounts()[0] + gallery->classCounts()[1], training);
  const QString out = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR");
  if (!out.isEmpty()) QVERIFY(docked.area.grab().save(out + "/data_panel_image_folder.png"));

  clickItem(list, generatorRow(panel, "xor"));
  QCOMPARE(panel.spec().generator, std::string("xor"));
  QVERIFY(panel.spec().directory.empty());
  QVERIFY(fitSplit->isEnabled());
  QVERIFY(!path->isVisible());
  QTRY_VERIFY(child<DataScatter>(panel, "scatter")->isVisible());
  // Back to the folder: the last one comes back.
  clickItem(list, generatorRow(panel, "directory"));
  QCOMPARE(panel.spec().directory, std::string("pictures"));
}

QTEST_MAIN(TestDataPanel)
#include "tst_data_panel.moc"
