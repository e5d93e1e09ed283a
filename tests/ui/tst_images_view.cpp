// The Images view as a person uses it: after a run of a small convolutional classifier of
// Fashion-MNIST-shaped fixture images it predicts the validation images once shown, says how many
// are right (as the run's val_accuracy does), a click on a cell of the confusion matrix shows
// that cell's images and a click again or Escape all of them mistakes first, the arrow keys move
// from cell to cell, the part is chosen with the keyboard, and the first Conv2D's filters are
// drawn. Data that are not images, and a model that is not a classifier, are said.
// FITBENCH_SCREENSHOT_DIR=dir saves the view.
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>
#include <sstream>

#include "core/io/experiment.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"
#include "imageio/qt_image_decoder.h"
#include "tests/core/idx_fixtures.h"
#include "ui/images/images_view.h"

using namespace fitbench;

namespace {

struct Trained {
  ExperimentSpec spec;
  RunResult result;
};

Trained train(const QString& dir) {
  test::write_fashion_mnist(dir.toStdString(), 400, 150);
  const nlohmann::json doc = nlohmann::json::parse(R"({"seed": 3,
    "data": {"dataset": "fashion_mnist", "path": "images", "validation_data": "test"},
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28]}},
      {"class_name": "Reshape", "config": {"target_shape": [28, 28, 1]}},
      {"class_name": "Conv2D", "config": {"filters": 6, "kernel_size": [5, 5], "strides": [3, 3],
                                          "activation": "relu"}},
      {"class_name": "Flatten", "config": {}},
      {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]}},
    "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
                "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
    "fit": {"epochs": 2, "batch_size": 32, "verbose": 0}})");
  // Relative to the experiment's folder, as the window reads it: the parent of "images".
  ExperimentSpec spec = parse_experiment(doc, "t.json", {});
  spec.data.dataset_dir = "images";
  PlanContext context;
  context.base_dir = (dir + QStringLiteral("/..")).toStdString();
  RunPlan plan = plan_run(spec, {}, context);
  std::ostringstream quiet;
  RunIO io;
  io.out = &quiet;
  io.warnings = &quiet;
  return {spec, execute_run(plan, io)};
}

void save(QWidget& view, const QString& name) {
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR");
  if (!dir.isEmpty()) QVERIFY(view.grab().save(dir + QLatin1Char('/') + name));
}

}  // namespace

class TestImagesView : public QObject {
  Q_OBJECT

 private slots:
  // A folder of images: the classes are named after its subfolders, in the matrix and the grid.
  void aFolderOfImagesNamesItsClasses() {
    install_qt_image_decoder();  // as the window does at start
    QTemporaryDir dir;
    for (int i = 0; i < 8; ++i)
      for (const auto& [name, value] : {std::pair{"dark", 30}, std::pair{"light", 220}}) {
        QDir(dir.path()).mkpath(QStringLiteral("pictures/") + name);
        QImage image(6, 6, QImage::Format_Grayscale8);
        image.fill(QColor(value + i, value + i, value + i));
        QVERIFY(image.save(dir.filePath(QStringLiteral("pictures/%1/%2.png").arg(name).arg(i))));
      }
    const nlohmann::json doc = nlohmann::json::parse(R"({"seed": 3,
      "data": {"directory": "pictures", "image_size": [6, 6], "color_mode": "grayscale",
               "validation_split": 0.25, "seed": 5},
      "model": {"class_name": "Sequential", "config": {"layers": [
        {"class_name": "InputLayer", "config": {"batch_shape": [null, 6, 6, 1]}},
        {"class_name": "Rescaling", "config": {"scale": 0.00392156862745098}},
        {"class_name": "Flatten", "config": {}},
        {"class_name": "Dense", "config": {"units": 2, "activation": "softmax"}}]}},
      "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.05}},
                  "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
      "fit": {"epochs": 20, "batch_size": 4, "verbose": 0}})");
    const ExperimentSpec spec = parse_experiment(doc, "t.json", {});
    PlanContext context;
    context.base_dir = dir.path().toStdString();
    RunPlan plan = plan_run(spec, {}, context);
    std::ostringstream quiet;
    RunIO io;
    io.out = &quiet;
    io.warnings = &quiet;
    const RunResult result = execute_run(plan, io);
    ImagesView view;
    view.resize(900, 700);
    view.setRun(spec, dir.path(), result.model);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTRY_VERIFY_WITH_TIMEOUT(view.part() != nullptr, 30000);
    QCOMPARE(view.part()->predictions.size(), Index{4});  // int(0.25 * 16) validate
    QCOMPARE(view.classNames(), (QStringList{QStringLiteral("dark"), QStringLiteral("light")}));
    QCOMPARE(static_cast<float>(view.part()->predictions.accuracy()),
             static_cast<float>(result.history.last("val_accuracy")));
    QVERIFY2(view.status().contains(QStringLiteral("of the 4 validation images")),
             qPrintable(view.status()));
    save(view, QStringLiteral("images-view-folder.png"));
  }

  void aRunIsShownAndExplored() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("images")));
    const Trained t = train(dir.filePath(QStringLiteral("images")));
    ImagesView view;
    view.resize(1000, 1100);
    QVERIFY(view.status().contains(QStringLiteral("Train a classifier of images")));
    view.setRun(t.spec, dir.path(), t.result.model);
    QVERIFY(!view.busy());  // not shown: nothing predicted
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTRY_VERIFY_WITH_TIMEOUT(view.part() != nullptr, 30000);
    const ClassPredictions& p = view.part()->predictions;
    QCOMPARE(p.size(), Index{150});
    QCOMPARE(static_cast<float>(p.accuracy()),
             static_cast<float>(t.result.history.last("val_accuracy")));
    QVERIFY2(view.status().contains(QStringLiteral("of the 150 test images (the validation data)")),
             qPrintable(view.status()));
    QCOMPARE(view.filters()->filterCount(), 6);
    // Unselected, the grid holds every image, the mistakes first, up to its limit.
    QCOMPARE(view.grid()->samples(), p.mistakes_first());
    QCOMPARE(view.grid()->shown(), SampleGrid::kMaxTiles);
    save(view, QStringLiteral("images-view.png"));

    // A click on the fullest mistake cell shows its images.
    int bestT = 0, bestP = 1;
    for (int a = 0; a < p.classes; ++a)
      for (int b = 0; b < p.classes; ++b)
        if (a != b && p.at(a, b) > p.at(bestT, bestP)) bestT = a, bestP = b;
    QVERIFY(p.at(bestT, bestP) > 0);
    ConfusionMatrixWidget* matrix = view.matrix();
    QTest::mouseClick(matrix, Qt::LeftButton, {}, matrix->cellRect(bestT, bestP).center());
    QCOMPARE(matrix->chosenTrue(), bestT);
    QCOMPARE(view.grid()->samples(), p.cell(bestT, bestP));
    QVERIFY2(view.gridCaption().startsWith(QString::number(p.at(bestT, bestP)) + QLatin1Char(' ')),
             qPrintable(view.gridCaption()));
    QVERIFY2(view.gridCaption().contains(QStringLiteral(" images predicted as ")),
             qPrintable(view.gridCaption()));
    save(view, QStringLiteral("images-view-cell.png"));
    // Clicked again, it lets go.
    QTest::mouseClick(matrix, Qt::LeftButton, {}, matrix->cellRect(bestT, bestP).center());
    QCOMPARE(matrix->chosenTrue(), -1);
    QCOMPARE(view.grid()->samples(), p.mistakes_first());

    // The keys: the first arrow chooses the top-left cell, the next ones move, Escape lets go.
    matrix->setFocus();
    QTest::keyClick(matrix, Qt::Key_Down);
    QCOMPARE(matrix->chosenTrue(), 0);
    QCOMPARE(matrix->chosenPredicted(), 0);
    QTest::keyClick(matrix, Qt::Key_Right);
    QTest::keyClick(matrix, Qt::Key_Down);
    QCOMPARE(matrix->chosenTrue(), 1);
    QCOMPARE(matrix->chosenPredicted(), 1);
    QCOMPARE(view.grid()->samples(), p.cell(1, 1));
    QVERIFY(view.gridCaption().contains(QStringLiteral("predicted right")));
    QTest::keyClick(matrix, Qt::Key_Escape);
    QCOMPARE(matrix->chosenTrue(), -1);

    // The training images, chosen with the keyboard, are predicted in turn.
    QComboBox* part = view.partChoice();
    part->setFocus();
    QTest::keyClick(part, Qt::Key_Down);
    QCOMPARE(part->currentIndex(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(view.part() != nullptr, 30000);
    QCOMPARE(view.part()->predictions.size(), Index{400});
    QVERIFY2(view.status().contains(QStringLiteral("of the 400 training images")),
             qPrintable(view.status()));
    // Back to the validation images: kept, not predicted again.
    QTest::keyClick(part, Qt::Key_Up);
    QVERIFY(!view.busy());
    QCOMPARE(view.part()->predictions.size(), Index{150});
  }

  void whatItCannotShowIsSaid() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("images")));
    Trained t = train(dir.filePath(QStringLiteral("images")));
    ImagesView view;
    view.show();
    ExperimentSpec points = t.spec;
    points.data = DataSpec{};  // the xor generator's points
    view.setRun(points, dir.path(), t.result.model);
    QVERIFY2(view.status().contains(QStringLiteral("data are not images")),
             qPrintable(view.status()));
    QVERIFY(!view.busy());
    ModelFile regression = t.result.model;
    regression.compile->loss.name = "mean_squared_error";
    view.setRun(t.spec, dir.path(), regression);
    QVERIFY2(view.status().startsWith(QStringLiteral("The model is not trained as a classifier")),
             qPrintable(view.status()));
    // A data folder gone since the run: its sentence, not a crash.
    view.setRun(t.spec, dir.path() + QStringLiteral("/gone"), t.result.model);
    QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 30000);
    QVERIFY2(view.status().contains(QStringLiteral("gone")), qPrintable(view.status()));
    // Cleared while predicting: the thread is stopped, nothing is shown.
    view.setRun(t.spec, dir.path(), t.result.model);
    view.clear();
    QVERIFY(!view.busy());
    QVERIFY(view.part() == nullptr);
  }
};

QTEST_MAIN(TestImagesView)
#include "tst_images_view.moc"
