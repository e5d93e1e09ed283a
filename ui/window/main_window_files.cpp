// MainWindow's files: New / Open / Save / Save As, recent files, examples, drag and drop, the
// unsaved-changes prompt, exports, and the settings restored at the next start.
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

#include "core/base/error.h"
#include "core/io/history_file.h"
#include "core/io/json_file.h"
#include "core/io/keras_file.h"
#include "core/io/model_file.h"
#include "core/run/keras_script.h"
#include "core/run/run_plan.h"
#include "ui/charts/metric_chart.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/model_panel.h"
#include "ui/window/evaluate_dialog.h"
#include "ui/window/keras_script_dialog.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/sweep_controller.h"

namespace fitbench {

// The dock layout's version for saveState / restoreState: raised when the set of docks changes.
constexpr int kLayoutVersion = 3;  // 3: the runs table below the charts

namespace {
const char* const kFilter = "fitbench experiments (*.json);;All files (*)";
// Whether `path` is one of the teaching examples (resources/examples): read-only templates.
bool isExample(const QString& path) {
  if (path.isEmpty()) return false;
  const QString examples = QDir(QStringLiteral(FITBENCH_EXAMPLES_DIR)).absolutePath() + '/';
  return QFileInfo(path).absoluteFilePath().startsWith(examples);
}
const char* const kOpenFilter =
    "fitbench experiments and Keras models (*.json *.keras);;fitbench experiments "
    "(*.json);;Keras models (*.keras);;All files (*)";
}  // namespace

void MainWindow::newExperiment() {
  if (m_runs->isRunning() || isSweeping() || !maybeSave()) return;
  loadSpec(default_experiment(), QString());
}

void MainWindow::openDialog() {
  if (m_runs->isRunning() || isSweeping() || !maybeSave()) return;
  const QString dir =
      m_doc.filePath().isEmpty() ? QStringLiteral(FITBENCH_EXAMPLES_DIR) : m_doc.folder();
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open experiment"), dir, tr(kOpenFilter));
  if (!path.isEmpty()) openFile(path);
}

bool MainWindow::openFile(const QString& path, QString* error, bool quiet) {
  if (is_keras_archive(path.toStdString())) return openKerasModel(path, error, quiet);
  try {
    const ExperimentSpec spec = ExperimentDocument::read(path);
    loadSpec(spec, QFileInfo(path).absoluteFilePath());
    if (!property("batch").toBool()) addRecentFile(QFileInfo(path).absoluteFilePath());
    int tab = 0;
    const QString problem = setupError(&tab);
    showStatus(problem.isEmpty()
                   ? tr("Opened %1").arg(QDir::toNativeSeparators(path))
                   : tr("Opened %1; to run it, fix the %2 tab: %3")
                         .arg(QDir::toNativeSeparators(path), m_tabs->tabText(tab), problem),
               problem.isEmpty() ? 5000 : 15000);
    if (!problem.isEmpty())
      appendLog(tr("To run %1, fix the %2 tab: %3")
                    .arg(QFileInfo(path).fileName(), m_tabs->tabText(tab), problem),
                QStringLiteral("#b00020"));
    return true;
  } catch (const InputError& e) {
    const QString message = QString::fromStdString(e.what());
    if (error) *error = message;
    appendLog(tr("Could not open: %1").arg(message), QStringLiteral("#b00020"));
    if (!quiet) QMessageBox::warning(this, tr("Could not open the experiment"), message);
    return false;
  }
}

bool MainWindow::save() {
  // An example is a template: Save makes a copy elsewhere, never writes over it.
  if (m_doc.filePath().isEmpty() || isExample(m_doc.filePath())) return saveAsDialog();
  return saveTo(m_doc.filePath());
}

bool MainWindow::saveAsDialog() {
  QString dir = m_doc.filePath().isEmpty() ? QDir::homePath() : m_doc.filePath();
  // Examples are read-only teaching material: suggest the home folder for a copy.
  if (isExample(m_doc.filePath()))
    dir = QDir::home().filePath(QFileInfo(m_doc.filePath()).fileName());
  QString path = QFileDialog::getSaveFileName(this, tr("Save experiment"), dir, tr(kFilter));
  if (path.isEmpty()) return false;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
  return saveTo(path);
}

bool MainWindow::saveTo(const QString& path) {
  const QString oldDir = m_doc.folder();
  try {
    // The data panel rewrites a relative CSV path for the new folder, so that it still names the
    // same file.
    const QString newDir = QFileInfo(path).absolutePath();
    m_dataPanel->setBaseDir(newDir);
    m_doc.save(currentSpec(), path);
    const QString abs = m_doc.filePath();
    m_modelPanel->markSaved();
    m_doc.markSaved(currentSpec());
    updateRecentMenu();
    updateTitle();
    showStatus(tr("Saved %1").arg(QDir::toNativeSeparators(abs)), 5000);
    return true;
  } catch (const InputError& e) {
    m_dataPanel->setBaseDir(oldDir);
    const QString message = QString::fromStdString(e.what());
    appendLog(tr("Could not save: %1").arg(message), QStringLiteral("#b00020"));
    if (!property("batch").toBool()) QMessageBox::warning(this, tr("Could not save"), message);
    return false;
  }
}

bool MainWindow::maybeSave() {
  if (!isModified()) return true;
  // Cancel is the default: a stray Enter must neither write the file nor drop the changes.
  const auto answer = QMessageBox::warning(
      this, tr("Unsaved changes"),
      tr("The experiment has changes that are not saved. Save them first?"),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Cancel);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::addRecentFile(const QString& path) {
  ExperimentDocument::addRecentFile(path);
  updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
  m_recentMenu->clear();
  const QStringList files = ExperimentDocument::recentFiles();
  const QFontMetrics metrics(m_recentMenu->font());
  for (const QString& f : files) {
    // The folder too: two seed.json files look alike by name alone.
    const QString folder = metrics.elidedText(QDir::toNativeSeparators(QFileInfo(f).absolutePath()),
                                              Qt::ElideMiddle, 420);
    QString text = QStringLiteral("%1 \u2014 %2").arg(QFileInfo(f).fileName(), folder);
    text.replace('&', QStringLiteral("&&"));  // a menu reads & as a mnemonic
    m_recentMenu
        ->addAction(text, this,
                    [this, f] {
                      if (!m_runs->isRunning() && !isSweeping() && maybeSave()) openFile(f);
                    })
        ->setToolTip(f);
  }
  m_recentMenu->setToolTipsVisible(true);
  if (files.isEmpty()) m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
}

void MainWindow::updateExamplesMenu() {
  m_examplesMenu->clear();
  const QDir dir(QStringLiteral(FITBENCH_EXAMPLES_DIR));
  for (const QFileInfo& info :
       dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    QString title = info.completeBaseName();
    try {
      const std::string name = read_experiment(info.absoluteFilePath().toStdString()).name;
      if (!name.empty()) title = QString::fromStdString(name);
    } catch (const InputError&) {
      // Listed by its file name; opening it shows the error.
    }
    const QString path = info.absoluteFilePath();
    m_examplesMenu->addAction(title, this, [this, path] {
      if (!m_runs->isRunning() && !isSweeping() && maybeSave()) openFile(path);
    });
  }
  if (m_examplesMenu->isEmpty())
    m_examplesMenu->addAction(tr("(no examples found in %1)").arg(dir.path()))->setEnabled(false);
}

void MainWindow::exportHistory(bool csv) {
  if (!lastResult()) return;
  const QString suffix = csv ? QStringLiteral("csv") : QStringLiteral("json");
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export history"), QDir::home().filePath(QStringLiteral("history.") + suffix),
      csv ? tr("CSV (*.csv)") : tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  try {
    json_io::write_file_atomically(path.toStdString(), history_text(lastResult()->history, csv));
    showStatus(tr("Wrote %1").arg(path), 5000);
  } catch (const InputError& e) {
    QMessageBox::warning(this, tr("Could not export"), QString::fromStdString(e.what()));
  }
}

void MainWindow::exportChart(MetricChart* chart) {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export chart"), QDir::home().filePath(QStringLiteral("chart.png")),
      tr("PNG image (*.png);;SVG drawing (*.svg)"));
  if (path.isEmpty()) return;
  QString error;
  if (!chart->exportImage(path, &error))
    QMessageBox::warning(this, tr("Could not export"), error);
  else
    showStatus(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportModel(ModelFormat format) {
  if (!lastResult()) return;
  struct Choice {
    const char* name;
    const char* filter;
  };
  const Choice choice = format == ModelFormat::kKeras
                            ? Choice{"model.keras", "Keras model (*.keras)"}
                        : format == ModelFormat::kKerasWeights
                            ? Choice{"model.weights.h5", "Keras weights (*.weights.h5)"}
                            : Choice{"model.json", "fitbench model (*.json)"};
  QString path = QFileDialog::getSaveFileName(
      this, tr("Export trained model"), QDir::home().filePath(choice.name), tr(choice.filter));
  if (path.isEmpty()) return;
  // Keras tells its files apart by their names: the chosen kind gets its own ending.
  const QString ending =
      QString::fromLatin1(choice.name).mid(5);  // ".keras", ".weights.h5", ".json"
  if (!path.endsWith(ending)) path += ending;
  try {
    write_model_file(lastResult()->model, path.toStdString());
    showStatus(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
  } catch (const std::exception& e) {
    const QString message = QString::fromStdString(e.what());
    appendLog(tr("Could not export: %1").arg(message), QStringLiteral("#b00020"));
    QMessageBox::warning(this, tr("Could not export"), message);
  }
}

bool MainWindow::openKerasModel(const QString& path, QString* error, bool quiet) {
  try {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const ModelFile file = read_model_file(absolute.toStdString());
    ExperimentSpec spec = currentSpec();
    spec.name = QFileInfo(path).fileName().toStdString();
    spec.description =
        tr("The Keras model %1, trained further on this data. Run starts from its weights%2.")
            .arg(QFileInfo(path).fileName(),
                 file.optimizer ? tr(" and its optimizer's state") : QString())
            .toStdString();
    spec.model = file.config;
    if (file.compile) spec.compile = *file.compile;
    spec.initial_weights = absolute.toStdString();
    // Its Normalization layer is fitbench's standardization of the inputs.
    if (file.data && !file.data->mean.empty()) spec.data.standardize = true;
    loadSpec(spec, QString());
    if (!property("batch").toBool()) addRecentFile(absolute);
    int tab = 0;
    const QString problem = setupError(&tab);
    const QString opened = tr("Opened the Keras model %1 on this experiment's data")
                               .arg(QDir::toNativeSeparators(path));
    showStatus(
        problem.isEmpty()
            ? opened
            : tr("%1; to run it, fix the %2 tab: %3").arg(opened, m_tabs->tabText(tab), problem),
        problem.isEmpty() ? 5000 : 15000);
    appendLog(opened + (file.compile ? QString()
                                     : tr("; the file has no compile options, so "
                                          "the Training tab's are used")),
              problem.isEmpty() ? QString() : QStringLiteral("#b00020"));
    return true;
  } catch (const InputError& e) {
    const QString message = QString::fromStdString(e.what());
    if (error) *error = message;
    appendLog(tr("Could not open: %1").arg(message), QStringLiteral("#b00020"));
    if (!quiet) QMessageBox::warning(this, tr("Could not open the Keras model"), message);
    return false;
  }
}

void MainWindow::exportKerasScript() {
  auto* dialog = new KerasScriptDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  const QString file = m_doc.filePath();
  // The script is made from the run plan a Run would build: the same devices, mesh and layout.
  try {
    ExperimentSpec spec = currentSpec();
    spec.devices.count = resolvedDevices();
    PlanContext context;
    context.base_dir =
        (file.isEmpty() ? QDir::currentPath() : QFileInfo(file).absolutePath()).toStdString();
    context.experiment_file = file.toStdString();
    const RunPlan plan = plan_run(std::move(spec), {}, context);
    const QString stem =
        file.isEmpty() ? QStringLiteral("experiment") : QFileInfo(file).completeBaseName();
    const QString folder = file.isEmpty() ? QDir::homePath() : QFileInfo(file).absolutePath();
    dialog->setScript(QString::fromStdString(keras_script(plan)),
                      QDir(folder).filePath(stem + QStringLiteral(".py")));
  } catch (const PlanError& e) {
    QStringList lines;
    for (const PlanProblem& p : e.problems()) lines << QString::fromStdString(p.text());
    dialog->setError(lines.join('\n'));
  } catch (const InputError& e) {
    dialog->setError(QString::fromStdString(e.what()));
  }
  dialog->open();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!property("batch").toBool() && !maybeSave()) {
    event->ignore();
    return;
  }
  // Training stops within one batch; the thread is joined before the window goes.
  m_sweeps->shutdown();
  m_runs->shutdown();
  // Automation (--quit, --screenshot) leaves the person's saved session and layout alone.
  if (!property("batch").toBool()) saveSettings();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (m_runs->isRunning() || isSweeping() || !event->mimeData()->hasUrls()) return;
  for (const QUrl& url : event->mimeData()->urls()) {
    const QString suffix = QFileInfo(url.toLocalFile()).suffix().toLower();
    if (suffix == "json" || suffix == "csv" || suffix == "keras") {
      event->acceptProposedAction();
      return;
    }
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  if (m_runs->isRunning() || isSweeping()) return;
  for (const QUrl& url : event->mimeData()->urls()) {
    const QString path = url.toLocalFile();
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "json" || suffix == "keras") {
      if (maybeSave()) openFile(path);
      event->acceptProposedAction();
      return;
    }
    if (suffix == "csv") {
      m_tabs->setCurrentIndex(0);
      m_dataPanel->loadCsvFile(path);
      event->acceptProposedAction();
      return;
    }
  }
}

void MainWindow::restoreSettings() {
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  // A layout saved with another set of docks (kLayoutVersion) is not restored.
  m_defaultLayoutPending =
      !restoreState(settings.value(QStringLiteral("window/state")).toByteArray(), kLayoutVersion);
  applyZoom(settings.value(QStringLiteral("view/zoom"), 1.0).toDouble());
  updateRecentMenu();
}

void MainWindow::saveSettings() {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
  settings.setValue(QStringLiteral("session/file"), m_doc.filePath());
  // The settings as the window had them, saved or not, so the next start continues from them.
  settings.setValue(QStringLiteral("session/experiment"),
                    QString::fromStdString(experiment_to_json(currentSpec()).dump()));
}

void MainWindow::restoreLastSession() {
  QSettings settings;
  const QString file = settings.value(QStringLiteral("session/file")).toString();
  const QString text = settings.value(QStringLiteral("session/experiment")).toString();
  if (text.isEmpty()) return;
  try {
    const QString base = file.isEmpty() ? QDir::currentPath() : QFileInfo(file).absolutePath();
    const ExperimentSpec spec = parse_experiment(nlohmann::json::parse(text.toStdString()),
                                                 "the last session", base.toStdString());
    if (!file.isEmpty() && QFileInfo::exists(file)) {
      // Compare with the file so that unsaved edits still show as unsaved.
      QString error;
      if (openFile(file, &error, true)) {
        const std::string saved = m_doc.savedText();
        loadSpec(spec, m_doc.filePath());
        m_doc.setSavedText(saved);
        updateTitle();
        return;
      }
    }
    // Untitled: unsaved unless it equals the default experiment.
    loadSpec(default_experiment(), QString());
    const std::string defaults = m_doc.savedText();
    loadSpec(spec, QString());
    m_doc.setSavedText(defaults);
    updateTitle();
  } catch (const std::exception&) {
    // A damaged session entry is ignored; the window starts with the default experiment.
  }
}

void MainWindow::openEvaluateDialog(bool predict) {
  if (!lastResult() || m_runs->isRunning()) return;
  auto* dialog =
      new EvaluateDialog(predict ? EvaluateDialog::Mode::kPredict : EvaluateDialog::Mode::kEvaluate,
                         lastResult()->model, tr("the trained model"), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  // The experiment's own CSV file to start from (a generator's data has none).
  const std::string csv = currentSpec().data.csv;
  if (!csv.empty()) {
    const QString file = m_doc.filePath();
    const QDir base(file.isEmpty() ? QDir::currentPath() : QFileInfo(file).absolutePath());
    dialog->setCsvPath(
        QDir::toNativeSeparators(base.absoluteFilePath(QString::fromStdString(csv))));
  }
  dialog->open();
}

}  // namespace fitbench
