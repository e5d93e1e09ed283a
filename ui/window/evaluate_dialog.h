// Run > Evaluate on CSV... and Run > Predict on CSV...: the trained model (a copy of the last
// run's ModelFile) on another CSV file (core/run/model_on_csv.h). The CSV path with Browse, the
// target column (from the file's header; Evaluate), the batch size, a Run button, the results
// (loss and metrics; or the first rows of features and predictions) and Export... (CSV or JSON by
// the file's name). Reading the data, evaluating or predicting, and exporting run on a thread of
// their own, one job at a time; only the header, for the target column, is read on the UI thread
// when the path is set (as the data panel's preview reads its file). A problem is a sentence in
// the dialog naming its place. Lives on the UI thread.
#pragma once

#include <QDialog>
#include <QString>
#include <QStringList>
#include <memory>

#include "core/training/model_state.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QThread;

namespace fitbench {

struct EvaluateJob;

class EvaluateDialog : public QDialog {
  Q_OBJECT

 public:
  enum class Mode { kEvaluate, kPredict };
  // Predictions shows this many rows; Export writes them all.
  static constexpr int kShownRows = 100;

  // `model` is copied; `modelName` names it in errors ("the trained model").
  EvaluateDialog(Mode mode, const ModelFile& model, const QString& modelName,
                 QWidget* parent = nullptr);
  ~EvaluateDialog() override;

  Mode mode() const { return m_mode; }
  // Sets the CSV path field and fills the target column from the file's header.
  void setCsvPath(const QString& path);
  QString csvPath() const;
  // Starts evaluating (or predicting) on a thread of its own; false when a job is running.
  bool start();
  // Writes the results to `path` (JSON for a .json name, else CSV) on the job thread; false when
  // there is nothing to export or a job is running.
  bool exportTo(const QString& path);
  bool isBusy() const { return m_thread != nullptr; }
  // The status line: rows, "Showing 100 of 2,000 rows", what was written, or the error.
  QString statusText() const;
  QString errorText() const;

 signals:
  // A job (run or export) ended; ok is false when it ended with an error.
  void jobFinished(bool ok);

 private:
  void connectSignals();
  void browse();
  void exportDialog();
  void readHeader();
  void runJob(std::shared_ptr<EvaluateJob> job, const QString& working);
  void onJobFinished();
  void showEvaluation();
  void showPredictions();
  void setStatus(const QString& text, bool error);
  void updateButtons();
  // A sentence whose engine place ("data.target", "batch_size") is the dialog's field name.
  QString placed(const std::string& place, const std::string& message) const;

  Mode m_mode;
  ModelFile m_model;
  QString m_modelName;
  QLineEdit* m_path;
  QPushButton* m_browse;
  QLabel* m_targetLabel;
  QComboBox* m_target;
  QSpinBox* m_batchSize;
  QPushButton* m_run;
  QLabel* m_status;
  QTableWidget* m_table;
  QPushButton* m_export;
  QPushButton* m_close;
  QString m_headerOf;  // the path whose header the target combo shows
  QThread* m_thread = nullptr;
  std::shared_ptr<EvaluateJob> m_job;     // the running job
  std::shared_ptr<EvaluateJob> m_result;  // the last run's results (what Export writes)
};

}  // namespace fitbench
