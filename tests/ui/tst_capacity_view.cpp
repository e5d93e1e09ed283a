// The Capacity view as a person uses it: the capacity example on its classroom target fits on
// the 2x4 mesh and not with DataParallel; the bars, the target's line and the verdict follow the
// target combo, the device count, the strategy, a layer's units and the what-ifs exactly as
// core's plan_memory says; a bad target file is refused with its sentence; an invalid model
// clears the charts; a run adds its measured step. The bars' bytes by hand: an MLP with Adam on
// DataParallel holds 16 bytes per parameter in weights, gradients and slots.
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QHorizontalStackedBarSeries>
#include <QLineSeries>
#include <QProcess>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStackedBarSeries>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
#include <cmath>

#include "core/distribution/spec/strategies.h"
#include "core/io/experiment.h"
#include "core/run/capacity_report.h"
#include "core/run/run_plan.h"
#include "ui/common/number_spin_box.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/layer_editor.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/strategy_panel.h"
#include "ui/rehearsal/capacity_view.h"
#include "ui/window/main_window.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::example;
using fixtures::makeWindow;

namespace {

QString classroomTarget() { return example("targets/classroom_8x32mb.json"); }

// Waits until the view has drawn the plan of the experiment as it is now.
bool settled(CapacityView* view) {
  QTest::qWait(10);
  return QTest::qWaitFor([view] { return !view->isBusy(); }, 20000);
}

// What core plans for the window's experiment as it is now (the view's what-ifs applied).
CapacityInput coreInput(MainWindow& w) {
  RunOverrides o;
  o.devices = w.devicesPanel()->deviceCount();
  PlanContext context;
  context.base_dir = QFileInfo(w.filePath()).absolutePath().toStdString();
  CapacityView* v = w.capacityView();
  return scale_input(
      plan_capacity(w.currentSpec(), o, context),
      {v->batchFactor()->value(), v->widthFactor()->value(), v->devicesFactor()->value()});
}

QStackedBarSeries* bars(CapacityView* view) {
  for (QAbstractSeries* s : view->memoryChart()->series())
    if (auto* b = qobject_cast<QStackedBarSeries*>(s)) return b;
  return nullptr;
}

// Bytes per unit of the memory chart's value axis ("MiB per device").
double axisUnit(CapacityView* view) {
  for (QAbstractAxis* a : view->memoryChart()->axes(Qt::Vertical)) {
    const QString unit = a->titleText().section(QLatin1Char(' '), 0, 0);
    if (unit == QLatin1String("GiB")) return double(1 << 30);
    if (unit == QLatin1String("MiB")) return double(1 << 20);
    if (unit == QLatin1String("KiB")) return 1024;
    if (unit == QLatin1String("bytes")) return 1;
  }
  return 0;
}

// Device d's bars in bytes, by kind.
std::vector<double> barBytes(CapacityView* view, int d) {
  std::vector<double> out;
  QStackedBarSeries* series = bars(view);
  if (!series) return out;
  for (QBarSet* set : series->barSets()) out.push_back(set->at(d) * axisUnit(view));
  return out;
}

// The target's line on the memory chart, in bytes (0: none).
double lineBytes(CapacityView* view) {
  for (QAbstractSeries* s : view->memoryChart()->series())
    if (auto* line = qobject_cast<QLineSeries*>(s); line && line->count() == 2)
      return line->at(0).y() * axisUnit(view);
  return 0;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

// Every device's bars are core's plan, kind by kind.
void compareBars(CapacityView* view, const MemoryPlan& plan) {
  QStackedBarSeries* series = bars(view);
  QVERIFY(series);
  QCOMPARE(series->barSets().size(), 5);
  QCOMPARE(qsizetype(series->barSets()[0]->count()), qsizetype(plan.devices.size()));
  for (size_t d = 0; d < plan.devices.size(); ++d) {
    const DeviceMemory& m = plan.devices[d];
    const std::vector<double> b = barBytes(view, int(d));
    const double want[] = {double(m.weights), double(m.gradients), double(m.optimizer_slots),
                           double(m.activations), double(m.buffers)};
    for (int k = 0; k < 5; ++k)
      QVERIFY2(near(b[size_t(k)], want[k]),
               qPrintable(QStringLiteral("device %1 kind %2: %3, core %4")
                              .arg(d)
                              .arg(k)
                              .arg(b[size_t(k)])
                              .arg(want[k])));
  }
}

// Chooses `text` in a combo box with the keyboard, as a person does.
void chooseWithKeys(QComboBox* combo, int index) {
  combo->setFocus();
  while (combo->currentIndex() < index) QTest::keyClick(combo, Qt::Key_Down);
  while (combo->currentIndex() > index) QTest::keyClick(combo, Qt::Key_Up);
}

void typeInto(QAbstractSpinBox* spin, const QString& text) {
  spin->setFocus();
  spin->selectAll();
  QTest::keyClicks(spin, text);
  QTest::keyClick(spin, Qt::Key_Enter);
}

// A target file in `dir` with a key target files do not have ("colour"); "" if not written.
QString badTargetFile(const QTemporaryDir& dir) {
  const QString path = dir.filePath(QStringLiteral("lab.json"));
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  file.write(R"({"name": "lab", "memory_gb": 24, "tflops": 35.6, "colour": "red"})");
  return path;
}

// A window with the capacity example open, its classroom target chosen, the view settled.
std::unique_ptr<MainWindow> classroomWindow() {
  auto w = makeWindow();
  if (!w->openFile(example("capacity_model_parallel.json"), nullptr, true)) return nullptr;
  w->showView(QStringLiteral("capacity"));
  if (!w->capacityView()->setTargetFile(classroomTarget())) return nullptr;
  if (!settled(w->capacityView())) return nullptr;
  return w;
}

}  // namespace

class TestCapacityView : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // The widget file dialog, which a test can drive, on every platform.
    QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
  }

  void meshFitsAndDataParallelDoesNot() {
    auto w = classroomWindow();
    QVERIFY(w);
    CapacityView* view = w->capacityView();
    const CapacityInput mesh = coreInput(*w);
    QCOMPARE(mesh.distribution.class_name, std::string(kModelParallel));
    const MemoryPlan meshPlan = plan_memory(mesh);
    compareBars(view, meshPlan);
    QCOMPARE(qint64(lineBytes(view)), qint64(32'000'000));  // memory_gb 0.032
    QVERIFY2(view->verdictText().startsWith(QStringLiteral("Fits: yes: the largest device needs ")),
             qPrintable(view->verdictText()));
    QCOMPARE(view->verdictText(),
             QString::fromStdString(fit_sentence(capacity_row(mesh, view->target(), 1.0))));
    QVERIFY(view->collectivesText().contains(QStringLiteral("all_gather")));

    // The strategy combo, with the keyboard: DataParallel.
    auto* strategy = w->strategyPanel()->findChild<QComboBox*>(QStringLiteral("strategy"));
    QVERIFY(strategy);
    chooseWithKeys(strategy, strategy->findData(QStringLiteral("DataParallel")));
    QVERIFY(settled(view));
    const CapacityInput dp = coreInput(*w);
    QCOMPARE(dp.distribution.class_name, std::string(kDataParallel));
    const MemoryPlan dpPlan = plan_memory(dp);
    compareBars(view, dpPlan);
    QCOMPARE(view->verdictText(),
             QStringLiteral("Fits: no: the largest device needs %1 of 30.5 MiB")
                 .arg(QString::fromStdString(bytes_text(dpPlan.largest_device()))));
    QVERIFY(dpPlan.largest_device() > meshPlan.largest_device());
    // The curve marks this plan on the DataParallel curve at 8 devices.
    bool marked = false;
    for (QAbstractSeries* s : view->scalingChart()->series())
      if (auto* sc = qobject_cast<QScatterSeries*>(s); sc && sc->name().startsWith("this plan"))
        marked = sc->count() == 1 && sc->at(0).x() == 8;
    QVERIFY(marked);
  }

  void targetComboAndDevicesMoveTheBars() {
    auto w = classroomWindow();
    QVERIFY(w);
    CapacityView* view = w->capacityView();
    // dgx1-v100 with the keyboard: 16 GB per device, the same bars.
    QComboBox* combo = view->targetCombo();
    chooseWithKeys(combo, combo->findText(QStringLiteral("dgx1-v100")));
    QVERIFY(settled(view));
    QCOMPARE(view->target().name, std::string("dgx1-v100"));
    QCOMPARE(qint64(std::llround(lineBytes(view))), qint64(16'000'000'000));
    QVERIFY(view->verdictText().startsWith(QStringLiteral("Fits: yes")));
    compareBars(view, plan_memory(coreInput(*w)));
    // this-machine: the devices share the process, so no line, and the job's verdict.
    chooseWithKeys(combo, combo->findText(QStringLiteral("this-machine")));
    QVERIFY(settled(view));
    QCOMPARE(lineBytes(view), 0.0);
    QVERIFY2(view->verdictText().contains(QStringLiteral("this process may take")),
             qPrintable(view->verdictText()));

    // 4 devices: the 2 x 4 mesh no longer fits them; the view says so, the charts clear.
    auto* count = w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"));
    QVERIFY(count);
    typeInto(count, QStringLiteral("4"));
    QCOMPARE(w->devicesPanel()->deviceCount(), 4);
    QVERIFY(settled(view));
    QVERIFY2(view->errorText().contains(QStringLiteral("the mesh needs 8 devices")),
             qPrintable(view->errorText()));
    QVERIFY(view->memoryChart()->series().isEmpty());
    QVERIFY(view->scalingChart()->series().isEmpty());
    // DataParallel on the 4: every device a replica.
    auto* strategy = w->strategyPanel()->findChild<QComboBox*>(QStringLiteral("strategy"));
    chooseWithKeys(strategy, strategy->findData(QStringLiteral("DataParallel")));
    QVERIFY(settled(view));
    QVERIFY(view->errorText().isEmpty());
    const MemoryPlan after = plan_memory(coreInput(*w));
    QCOMPARE(after.devices.size(), size_t(4));
    compareBars(view, after);

    // A layer's units: wide_2 at 512 units has a quarter of the kernel (layer 0 is the input).
    w->showView(QStringLiteral("model"));
    QCOMPARE(w->currentSpec().model.layers[2].name, std::string("wide_2"));
    w->modelPanel()->selectLayer(1);  // the panel lists the input apart
    auto* units = w->modelPanel()->layerEditor()->findChild<QSpinBox*>(QStringLiteral("units"));
    QVERIFY(units);
    typeInto(units, QStringLiteral("512"));
    QCOMPARE(units->value(), 512);
    QCOMPARE(w->currentSpec().model.layers[2].units, 512);
    QVERIFY(settled(view));
    const MemoryPlan narrow = plan_memory(coreInput(*w));
    QVERIFY(narrow.devices[0].weights < after.devices[0].weights);
    compareBars(view, narrow);
  }

  void whatIfsScaleThePlan() {
    auto w = classroomWindow();
    QVERIFY(w);
    CapacityView* view = w->capacityView();
    const MemoryPlan base = plan_memory(coreInput(*w));
    typeInto(view->batchFactor(), QStringLiteral("4"));
    QCOMPARE(view->batchFactor()->value(), 4.0);
    QVERIFY(settled(view));
    const MemoryPlan bigBatch = plan_memory(coreInput(*w));
    QVERIFY(bigBatch.devices[0].activations > base.devices[0].activations);
    compareBars(view, bigBatch);
    typeInto(view->widthFactor(), QStringLiteral("2"));
    QVERIFY(settled(view));
    const MemoryPlan wide = plan_memory(coreInput(*w));
    QVERIFY(wide.devices[0].weights > 3 * base.devices[0].weights);  // 2x2 the middle kernel
    compareBars(view, wide);
    QVERIFY2(view->verdictText().startsWith(QStringLiteral("Fits: no")),
             qPrintable(view->verdictText()));
    typeInto(view->devicesFactor(), QStringLiteral("2"));
    QVERIFY(settled(view));
    QCOMPARE(bars(view)->barSets()[0]->count(), 16);  // a 4 x 4 mesh
    compareBars(view, plan_memory(coreInput(*w)));
  }

  void badTargetFileSaysWhy() {
    QTemporaryDir dir;
    const QString path = badTargetFile(dir);
    QVERIFY(!path.isEmpty());
    auto w = classroomWindow();
    QVERIFY(w);
    CapacityView* view = w->capacityView();
    QComboBox* combo = view->targetCombo();
    const QString before = combo->currentText();
    // "Target file..." with the keyboard, and the file in the dialog.
    QCOMPARE(combo->currentIndex(), combo->count() - 2);  // the classroom file, above it
    fixtures::answerFileDialog(path);
    combo->setFocus();
    QTest::keyClick(combo, Qt::Key_Down);
    QTRY_VERIFY_WITH_TIMEOUT(!view->targetErrorText().isEmpty(), 10000);
    QVERIFY2(view->targetErrorText().contains(path) &&
                 view->targetErrorText().contains(QStringLiteral("colour")),
             qPrintable(view->targetErrorText()));
    QCOMPARE(combo->currentText(), before);  // the target stays
    QVERIFY(view->verdictText().startsWith(QStringLiteral("Fits: yes")));
    // A file that is no JSON at all.
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write("not json");
    file.close();
    QVERIFY(!view->setTargetFile(path));
    QVERIFY2(view->targetErrorText().startsWith(path), qPrintable(view->targetErrorText()));
  }

  // The window's --target, as fitbench-cli plan's: a preset or a file; a bad file exits 2 with
  // its sentence.
  void windowTakesTargetOption() {
    QTemporaryDir dir;
    const QString bad = badTargetFile(dir);
    QVERIFY(!bad.isEmpty());
    const auto gui = [](const QString& target, QString* err) {
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
      p.setProcessEnvironment(env);
      p.start(QStringLiteral(FITBENCH_GUI),
              {example("capacity_model_parallel.json"), QStringLiteral("--target"), target,
               QStringLiteral("--quit")});
      if (!p.waitForFinished(60000)) return -1;
      *err = QString::fromUtf8(p.readAllStandardError());
      return p.exitCode();
    };
    QString err;
    QCOMPARE(gui(bad, &err), 2);
    QVERIFY2(err.contains(QStringLiteral("--target: %1: colour: unknown key").arg(bad)),
             qPrintable(err));
    QCOMPARE(gui(QStringLiteral("dgx1-v100"), &err), 0);
    QCOMPARE(gui(classroomTarget(), &err), 0);
  }

  // What plan_run would say before training, said before anything runs: the default layout map
  // filled in, a layout entry that matches nothing.
  void layoutNoticesAreShown() {
    auto w = classroomWindow();
    QVERIFY(w);
    CapacityView* view = w->capacityView();
    // The example's layout map is given and every entry matches (more devices than cores may be
    // noted on a small machine).
    QVERIFY2(!view->noticesText().contains(QStringLiteral("layout_map")),
             qPrintable(view->noticesText()));
    ExperimentSpec spec = w->currentSpec();
    spec.distribution.layout_map.clear();
    w->loadSpec(spec, w->filePath());
    QVERIFY(settled(view));
    QVERIFY2(view->noticesText().contains(QStringLiteral(
                 "layout_map: none given, so 2 Dense kernels split by output units")),
             qPrintable(view->noticesText()));
    spec.distribution.layout_map = {{"wide.*kernel", {"", "model"}}, {"wdie.*bias", {"model"}}};
    w->loadSpec(spec, w->filePath());
    QVERIFY(settled(view));
    QVERIFY2(view->noticesText().contains(QStringLiteral("wdie.*bias")),
             qPrintable(view->noticesText()));
    QVERIFY(view->errorText().isEmpty());
  }

  void invalidModelClearsTheCharts() {
    auto w = classroomWindow();
    QVERIFY(w);
    CapacityView* view = w->capacityView();
    // A layout map entry for a kernel split along its inputs by a mesh axis the mesh lacks.
    ExperimentSpec spec = w->currentSpec();
    spec.distribution.layout_map = {{"wide.*kernel", {"nope", "model"}}};
    w->loadSpec(spec, w->filePath());
    QVERIFY(settled(view));
    QVERIFY2(!view->errorText().isEmpty(), qPrintable(view->verdictText()));
    QVERIFY(view->errorText().contains(QStringLiteral("nope")));
    QVERIFY(view->memoryChart()->series().isEmpty());
    QVERIFY(view->scalingChart()->series().isEmpty());
    QVERIFY(view->verdictText().isEmpty() || !view->findChild<QWidget*>("verdict")->isVisible());
  }

  // Weights + gradients + Adam's two slots: 16 bytes per parameter on each DataParallel device
  // (fewer than 16,384 trainable floats: no sharded update).
  void mlpWithAdamHolds16BytesPerParameter() {
    const ExperimentSpec spec = parse_experiment(nlohmann::json::parse(R"({
        "devices": {"type": "cpu", "count": 2},
        "distribution": {"class_name": "DataParallel"},
        "data": {"generator": "blobs", "samples": 64, "features": 4, "classes": 3, "seed": 5},
        "model": {"class_name": "Sequential", "config": {"layers": [
            {"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}},
            {"class_name": "Dense", "config": {"units": 8, "activation": "relu"}},
            {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}},
        "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"},
        "fit": {"batch_size": 16}})"),
                                                 "mlp", QDir::currentPath().toStdString());
    CapacityView view;
    view.resize(900, 700);
    view.show();
    view.setExperiment(spec, 2, QDir::currentPath());
    QVERIFY(settled(&view));
    QVERIFY2(view.errorText().isEmpty(), qPrintable(view.errorText()));
    const int64_t parameters = 4 * 8 + 8 + 8 * 3 + 3;  // 67
    for (int d = 0; d < 2; ++d) {
      const std::vector<double> b = barBytes(&view, d);
      QCOMPARE(b.size(), size_t(5));
      QCOMPARE(qint64(std::llround(b[0] + b[1] + b[2])), qint64(16 * parameters));
      QCOMPARE(qint64(std::llround(b[0])), qint64(4 * parameters));
    }
  }

  void runAddsTheMeasuredStep() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("one_vs_data_parallel.json"), nullptr, true));
    ExperimentSpec shorter = w->currentSpec();
    shorter.fit.epochs = 3;  // 39 steps
    w->loadSpec(shorter, w->filePath());
    w->showView(QStringLiteral("capacity"));
    CapacityView* view = w->capacityView();
    QVERIFY(settled(view));
    QVERIFY(view->measuredText().isEmpty());
    QVERIFY(!view->measuredStep());
    QVERIFY(fixtures::runToEnd(*w));
    QVERIFY(settled(view));
    const std::optional<double> step = view->measuredStep();
    QVERIFY(step && *step > 0);
    QVERIFY2(view->measuredText().startsWith(QStringLiteral("Measured on this machine, run 1")),
             qPrintable(view->measuredText()));
    // The step chart has the measured bar beside the prediction, at the median.
    QHorizontalStackedBarSeries* series = nullptr;
    for (QAbstractSeries* s : view->stepChart()->series())
      series = qobject_cast<QHorizontalStackedBarSeries*>(s);
    QVERIFY(series);
    QCOMPARE(series->barSets().size(), 3);
    QBarSet* measured = series->barSets()[2];
    QVERIFY(measured->label().startsWith(QStringLiteral("measured (run 1")));
    QVERIFY(measured->at(0) > 0);
    QCOMPARE(series->barSets()[0]->at(0), 0.0);  // compute is the prediction's
    auto* y = qobject_cast<QBarCategoryAxis*>(view->stepChart()->axes(Qt::Vertical).first());
    QVERIFY(y && y->categories().first().startsWith(QStringLiteral("measured")));
    // Opening another experiment forgets it.
    QVERIFY(w->openFile(example("capacity_model_parallel.json"), nullptr, true));
    QVERIFY(!view->measuredStep());
  }
};

QTEST_MAIN(TestCapacityView)
#include "tst_capacity_view.moc"
