#include "ui/window/evaluate_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>
#include <optional>

#include "core/base/error.h"
#include "core/data/csv_reader.h"
#include "core/io/json_file.h"
#include "core/run/model_on_csv.h"
#include "core/training/fit_options.h"

namespace fitbench {

// One job of the dialog's thread: a run (evaluate or predict) or an export of a run's results.
// The thread writes the outputs; the UI thread reads them once the thread has finished.
struct EvaluateJob {
  std::shared_ptr<const ModelFile> model;
  CsvInput in;
  bool predict = false;
  QString exportPath;                         // set: write `source`'s results here
  std::shared_ptr<const EvaluateJob> source;  // the run whose results are exported

  std::optional<Evaluation> evaluation;
  std::optional<Predictions> predictions;
  bool failed = false;
  std::string place, message;

  void work() {
    try {
      if (!exportPath.isEmpty()) {
        const bool json = exportPath.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
        const std::string text =
            source->predictions
                ? (json ? predictions_json(*source->predictions)
                        : predictions_csv(*source->predictions))
                : (json ? logs_json(source->evaluation->logs) : logs_csv(source->evaluation->logs));
        json_io::write_file_atomically(exportPath.toStdString(), text);
      } else if (predict) {
        predictions = predict_on_csv(*model, in);
      } else {
        evaluation = evaluate_on_csv(*model, in);
      }
    } catch (const InputError& e) {
      failed = true;
      place = e.place();
      message = e.message();
    } catch (const std::exception& e) {  // out of memory on a huge file, an engine failure
      failed = true;
      message = e.what();
    }
  }
};

namespace {

const char* kAsTrained = "";  // the target item whose data is "": the model's own targets

// "1 row", "2,000 rows" (the locale's digit grouping).
QString rowsText(qint64 n) {
  return n == 1 ? EvaluateDialog::tr("1 row")
                : EvaluateDialog::tr("%1 rows").arg(QLocale().toString(n));
}

}  // namespace

EvaluateDialog::EvaluateDialog(Mode mode, const ModelFile& model, const QString& modelName,
                               QWidget* parent)
    : QDialog(parent),
      m_mode(mode),
      m_model(model),
      m_modelName(modelName),
      m_path(new QLineEdit(this)),
      m_browse(new QPushButton(tr("&Browse…"), this)),
      m_targetLabel(new QLabel(this)),
      m_target(new QComboBox(this)),
      m_batchSize(new QSpinBox(this)),
      m_run(new QPushButton(mode == Mode::kEvaluate ? tr("&Evaluate") : tr("&Predict"), this)),
      m_status(new QLabel(this)),
      m_table(new QTableWidget(this)),
      m_export(new QPushButton(tr("E&xport…"), this)),
      m_close(new QPushButton(tr("Close"), this)) {
  const bool evaluate = mode == Mode::kEvaluate;
  setWindowTitle(evaluate ? tr("Evaluate on CSV") : tr("Predict on CSV"));
  setObjectName(QStringLiteral("evaluateDialog"));
  m_path->setObjectName(QStringLiteral("csvPath"));
  m_path->setPlaceholderText(tr("A CSV file with a header row"));
  m_browse->setObjectName(QStringLiteral("browseButton"));
  m_target->setObjectName(QStringLiteral("targetColumn"));
  m_batchSize->setObjectName(QStringLiteral("batchSize"));
  m_batchSize->setRange(1, kMaxFitCount);
  m_batchSize->setValue(32);  // Keras's evaluate() and predict() default
  m_batchSize->setToolTip(tr("Rows per batch; the results do not depend on it"));
  m_run->setObjectName(QStringLiteral("runButton"));
  m_run->setDefault(true);
  m_status->setObjectName(QStringLiteral("evaluateStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_table->setObjectName(QStringLiteral("resultsTable"));
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().lineSpacing() + 8);
  m_table->verticalHeader()->setVisible(!evaluate);
  m_table->setFocusPolicy(Qt::NoFocus);  // a table to read: no current-cell frame
  m_export->setObjectName(QStringLiteral("exportButton"));
  m_export->setToolTip(evaluate ? tr("Write the loss and metrics as CSV (name,value) or JSON")
                                : tr("Write every row, its features and its predictions, as CSV "
                                     "or JSON"));

  const bool named = m_model.data && !m_model.data->features.empty();
  const QString features = named ? QString::fromStdString([&] {
    std::string all;
    for (const std::string& f : m_model.data->features) all += (all.empty() ? "" : ", ") + f;
    return all;
  }())
                                 : QString();
  QString intro = evaluate ? tr("The trained model's loss and metrics on the rows of another CSV "
                                "file, as Keras's model.evaluate() gives them.")
                           : tr("The trained model's predictions for the rows of another CSV "
                                "file, as Keras's model.predict() gives them.");
  intro += QLatin1Char(' ') +
           (named ? tr("Its features are read by the names it was trained on: %1.").arg(features)
                  : tr("Every column but the target is a feature, in the file's order."));
  if (m_model.data && !m_model.data->mean.empty())
    intro += QLatin1Char(' ') + tr("They are standardized with the training data's statistics.");
  auto* introLabel = new QLabel(intro, this);
  introLabel->setWordWrap(true);

  m_targetLabel->setText(evaluate ? tr("&Target column:") : tr("&Leave out column:"));
  m_targetLabel->setBuddy(m_target);
  // Predict needs no target, unless the model does not name its features.
  const bool showTarget = evaluate || !named;
  m_target->setMinimumContentsLength(16);
  m_target->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);

  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(m_path, 1);
  pathRow->addWidget(m_browse);
  auto* form = new QFormLayout;
  form->addRow(tr("CSV &file:"), pathRow);
  form->addRow(m_targetLabel, m_target);
  m_targetLabel->setVisible(showTarget);
  m_target->setVisible(showTarget);
  auto* batchRow = new QHBoxLayout;
  batchRow->addWidget(m_batchSize);
  batchRow->addStretch(1);
  batchRow->addWidget(m_run);
  form->addRow(tr("&Batch size:"), batchRow);
  static_cast<QLabel*>(form->labelForField(pathRow))->setBuddy(m_path);
  static_cast<QLabel*>(form->labelForField(batchRow))->setBuddy(m_batchSize);

  auto* buttons = new QDialogButtonBox(this);
  buttons->addButton(m_export, QDialogButtonBox::ActionRole);
  buttons->addButton(m_close, QDialogButtonBox::RejectRole);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(introLabel);
  layout->addLayout(form);
  layout->addWidget(m_status);
  layout->addWidget(m_table, 1);
  layout->addWidget(buttons);
  resize(evaluate ? 540 : 760, evaluate ? 340 : 560);
  readHeader();  // the combo's first item, before any file
  setStatus(
      evaluate ? tr("Choose a CSV file, then Evaluate.") : tr("Choose a CSV file, then Predict."),
      false);
  updateButtons();
  connectSignals();
}

EvaluateDialog::~EvaluateDialog() {
  if (m_thread) {
    // The job cannot be interrupted; it ends on its own (its results are dropped).
    m_thread->disconnect(this);
    m_thread->wait();
    delete m_thread;
  }
}

void EvaluateDialog::connectSignals() {
  connect(m_browse, &QPushButton::clicked, this, &EvaluateDialog::browse);
  connect(m_path, &QLineEdit::editingFinished, this, &EvaluateDialog::readHeader);
  connect(m_path, &QLineEdit::returnPressed, this, [this] { start(); });
  connect(m_run, &QPushButton::clicked, this, [this] { start(); });
  connect(m_export, &QPushButton::clicked, this, &EvaluateDialog::exportDialog);
  connect(m_close, &QPushButton::clicked, this, &QDialog::reject);
}

void EvaluateDialog::setCsvPath(const QString& path) {
  m_path->setText(path);
  readHeader();
}

QString EvaluateDialog::csvPath() const { return m_path->text().trimmed(); }

QString EvaluateDialog::statusText() const { return m_status->text(); }

QString EvaluateDialog::errorText() const {
  return m_status->property("error").toBool() ? m_status->text() : QString();
}

void EvaluateDialog::browse() {
  const QString start =
      csvPath().isEmpty() ? QDir::homePath() : QFileInfo(csvPath()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("CSV file"), start,
                                                    tr("CSV files (*.csv *.txt);;All files (*)"));
  if (!path.isEmpty()) setCsvPath(QDir::toNativeSeparators(path));
}

void EvaluateDialog::readHeader() {
  const QString path = csvPath();
  if (path == m_headerOf && m_target->count() > 0) return;
  m_headerOf = path;
  const QString chosen = m_target->currentData().toString();
  const bool hadChoice = m_target->currentIndex() >= 0;
  m_target->clear();
  const bool evaluate = m_mode == Mode::kEvaluate;
  if (evaluate && names_trained_columns(m_model)) {
    QString targets;
    for (const std::string& t : m_model.data->targets)
      targets += (targets.isEmpty() ? "" : ", ") + QString::fromStdString(t);
    m_target->addItem(tr("As trained: %1").arg(targets), QString::fromLatin1(kAsTrained));
  } else if (!evaluate) {
    m_target->addItem(tr("Nothing (every column is a feature)"), QString::fromLatin1(kAsTrained));
  }
  m_target->setPlaceholderText(tr("Choose the target column"));
  if (!path.isEmpty()) {
    // The header alone, as the data panel reads it (the whole file is read on Run, off this
    // thread). An unreadable file is said here, and again on Run.
    try {
      CsvReader reader(path.toStdString(), path.toStdString(), ',');
      for (const std::string& name : reader.read_header()) {
        const bool feature = m_model.data && std::count(m_model.data->features.begin(),
                                                        m_model.data->features.end(), name);
        if (!feature) m_target->addItem(QString::fromStdString(name), QString::fromStdString(name));
      }
      if (errorText().startsWith(path)) setStatus({}, false);
    } catch (const InputError& e) {
      setStatus(QString::fromStdString(e.what()), true);
    }
  }
  const int again = hadChoice ? m_target->findData(chosen) : -1;
  m_target->setCurrentIndex(again >= 0 ? again
                            : m_target->count() > 0 && m_target->itemData(0).toString().isEmpty()
                                ? 0
                                : -1);
}

bool EvaluateDialog::start() {
  if (m_thread) return false;  // one job at a time
  readHeader();
  auto job = std::make_shared<EvaluateJob>();
  job->model = std::make_shared<const ModelFile>(m_model);
  job->predict = m_mode == Mode::kPredict;
  job->in.csv = csvPath().toStdString();
  job->in.target = m_target->currentIndex() >= 0 ? m_target->currentData().toString().toStdString()
                                                 : std::string();
  job->in.batch_size = m_batchSize->value();
  job->in.model_name = m_modelName.toStdString();
  job->in.target_option = tr("the Leave out column").toStdString();
  if (csvPath().isEmpty()) {
    setStatus(
        tr("CSV file: choose the file to %1 on").arg(job->predict ? tr("predict") : tr("evaluate")),
        true);
    return false;
  }
  runJob(job, job->predict ? tr("Predicting…") : tr("Evaluating…"));
  return true;
}

bool EvaluateDialog::exportTo(const QString& path) {
  if (m_thread || !m_result) return false;
  auto job = std::make_shared<EvaluateJob>();
  job->exportPath = path;
  job->source = m_result;
  runJob(job, tr("Writing %1…").arg(path));
  return true;
}

void EvaluateDialog::exportDialog() {
  if (!m_result) return;
  const QString stem = m_mode == Mode::kEvaluate ? QStringLiteral("evaluation.csv")
                                                 : QStringLiteral("predictions.csv");
  const QString dir = csvPath().isEmpty() ? QDir::homePath() : QFileInfo(csvPath()).absolutePath();
  QString path = QFileDialog::getSaveFileName(this, tr("Export results"), QDir(dir).filePath(stem),
                                              tr("CSV file (*.csv);;JSON file (*.json)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
  exportTo(path);
}

void EvaluateDialog::runJob(std::shared_ptr<EvaluateJob> job, const QString& working) {
  m_job = std::move(job);
  m_thread = QThread::create([job = m_job] { job->work(); });
  m_thread->setStackSize(16u << 20);  // as the training thread: Eigen's buffers on the stack
  connect(m_thread, &QThread::finished, this, &EvaluateDialog::onJobFinished);
  setStatus(working, false);
  updateButtons();
  m_thread->start();
}

void EvaluateDialog::onJobFinished() {
  m_thread->deleteLater();
  m_thread = nullptr;
  std::shared_ptr<EvaluateJob> job = std::move(m_job);
  const bool exporting = !job->exportPath.isEmpty();
  if (job->failed) {
    const QString sentence = placed(job->place, job->message);
    setStatus(exporting ? tr("Could not export: %1").arg(sentence) : sentence, true);
  } else if (exporting) {
    const QString what = job->source->predictions
                             ? rowsText(job->source->predictions->outputs.rows())
                             : tr("the loss and metrics");
    setStatus(tr("Wrote %1 to %2").arg(what, QDir::toNativeSeparators(job->exportPath)), false);
  } else {
    m_result = job;
    if (job->predictions)
      showPredictions();
    else
      showEvaluation();
  }
  if (!exporting && job->failed) {
    m_result.reset();  // the table would show another file's results
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
  }
  updateButtons();
  // Disabled while the job ran, Run lost the focus (to Close, which Enter would then press).
  if (!focusWidget() || focusWidget() == m_close) m_run->setFocus();
  emit jobFinished(!job->failed);
}

void EvaluateDialog::showEvaluation() {
  const Evaluation& e = *m_result->evaluation;
  m_table->clear();
  m_table->setColumnCount(2);
  m_table->setHorizontalHeaderLabels({tr("Metric"), tr("Value")});
  m_table->setRowCount(int(e.logs.size()));
  int row = 0;
  for (const auto& [name, value] : e.logs) {
    m_table->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(name)));
    auto* item = new QTableWidgetItem(QString::fromStdString(keras_number(value)));
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setData(Qt::UserRole, value);
    m_table->setItem(row++, 1, item);
  }
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  setStatus(tr("Evaluated on %1 of %2.").arg(rowsText(e.rows), QFileInfo(csvPath()).fileName()),
            false);
}

void EvaluateDialog::showPredictions() {
  const Predictions& p = *m_result->predictions;
  const int rows = int(p.outputs.rows());
  const int shown = std::min(rows, kShownRows);
  QStringList names;
  for (const std::string& n : p.input_names) names << QString::fromStdString(n);
  for (const std::string& n : p.output_names) names << QString::fromStdString(n);
  m_table->clear();
  m_table->setColumnCount(int(names.size()));
  m_table->setHorizontalHeaderLabels(names);
  m_table->setRowCount(shown);
  const auto inputs = int(p.inputs.cols());
  for (int r = 0; r < shown; ++r) {
    for (int c = 0; c < names.size(); ++c) {
      const double v = c < inputs ? p.inputs(r, c) : p.outputs(r, c - inputs);
      auto* item = new QTableWidgetItem(QString::number(v, 'g', 6));
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      item->setData(Qt::UserRole, v);
      if (c >= inputs) {
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
      }
      m_table->setItem(r, c, item);
    }
  }
  // A few columns share the width; many keep their own and scroll.
  m_table->horizontalHeader()->setSectionResizeMode(names.size() <= 8 ? QHeaderView::Stretch
                                                                      : QHeaderView::Interactive);
  if (names.size() > 8) m_table->resizeColumnsToContents();
  setStatus(shown == rows ? tr("Showing all %1.").arg(rowsText(rows))
                          : tr("Showing %1 of %2; Export writes them all.")
                                .arg(QLocale().toString(shown), rowsText(rows)),
            false);
}

QString EvaluateDialog::placed(const std::string& place, const std::string& message) const {
  QString field = QString::fromStdString(place);
  if (place == "data.target")
    field = m_targetLabel->text().remove(QLatin1Char('&')).remove(QLatin1Char(':'));
  else if (place == "batch_size")
    field = tr("Batch size");
  const QString text = QString::fromStdString(message);
  return field.isEmpty() ? text : field + QStringLiteral(": ") + text;
}

void EvaluateDialog::setStatus(const QString& text, bool error) {
  m_status->setText(text);
  m_status->setProperty("error", error);
  m_status->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
}

void EvaluateDialog::updateButtons() {
  const bool busy = m_thread != nullptr;
  for (QWidget* w : {static_cast<QWidget*>(m_path), static_cast<QWidget*>(m_browse),
                     static_cast<QWidget*>(m_target), static_cast<QWidget*>(m_batchSize),
                     static_cast<QWidget*>(m_run)})
    w->setEnabled(!busy);
  m_export->setEnabled(!busy && m_result != nullptr);
}

}  // namespace fitbench
