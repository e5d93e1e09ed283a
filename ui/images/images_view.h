// The Images view: what the last run's classifier of images got right and wrong. A confusion
// matrix of the validation or the training images (counts and row percentages, rows the true
// class, with each class's accuracy beside its row; click a cell, or move to it with the arrow
// keys, to see its images), a grid of predictions (the mistakes first, the most confident first,
// each with its predicted and true class) and the first Conv2D layer's filters as pictures.
// Predictions are made off the UI thread, once per part, when the view is shown. Widgets; UI
// thread only.
#pragma once

#include <QWidget>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/io/experiment.h"
#include "core/run/class_predictions.h"
#include "core/training/model_state.h"

class QComboBox;
class QLabel;

namespace fitbench {

// One part's predictions with its images as 8-bit pixels for drawing (each image scaled from its
// own least to its greatest value), rows x (height * width * channels).
struct PredictedPart {
  ClassPredictions predictions;
  int height = 0, width = 0, channels = 0;  // 0: the samples are not images
  std::vector<uint8_t> pixels;
};

// The confusion matrix with each class's accuracy. Emits cellChosen(-1, -1) when the choice is
// cleared (Escape, or a click on the chosen cell).
class ConfusionMatrixWidget : public QWidget {
  Q_OBJECT
 public:
  explicit ConfusionMatrixWidget(QWidget* parent = nullptr);
  void setPredictions(const ClassPredictions* predictions, const QStringList& classNames);
  void choose(int trueClass, int predictedClass);  // -1, -1: none
  int chosenTrue() const { return m_true; }
  int chosenPredicted() const { return m_predicted; }
  QRect cellRect(int trueClass, int predictedClass) const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 signals:
  void cellChosen(int trueClass, int predictedClass);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  int labelWidth() const;
  QSize cellSize() const;
  int top() const;
  const ClassPredictions* m_p = nullptr;
  QStringList m_names;
  int m_true = -1, m_predicted = -1;
};

// Images with their predicted and true classes, a wrong one framed in red.
class SampleGrid : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxTiles = 60;
  explicit SampleGrid(QWidget* parent = nullptr);
  void setSamples(const PredictedPart* part, std::vector<Index> samples,
                  const QStringList& classNames);
  const std::vector<Index>& samples() const { return m_samples; }
  int shown() const { return std::min<int>(kMaxTiles, static_cast<int>(m_samples.size())); }
  QSize sizeHint() const override;
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  // tooltips

 private:
  QSize tile() const;
  int columns(int width) const;
  int at(QPoint position) const;
  const PredictedPart* m_part = nullptr;
  std::vector<Index> m_samples;
  QStringList m_names;
};

// The first Conv2D layer's filters, each kh x kw (averaged over its input channels), scaled from
// its least weight (black) to its greatest (white).
class FilterStrip : public QWidget {
  Q_OBJECT
 public:
  explicit FilterStrip(QWidget* parent = nullptr);
  void setFilters(const FirstFilters& filters);
  int filterCount() const { return m_images.size(); }
  QSize sizeHint() const override;
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  int zoom() const;
  QList<QImage> m_images;
};

class ImagesView : public QWidget {
  Q_OBJECT
 public:
  explicit ImagesView(QWidget* parent = nullptr);
  ~ImagesView() override;

  // The run to show: its experiment (the data as it read them; relative paths from baseDir) and
  // its trained model. Predictions of the chosen part start when the view is shown.
  void setRun(const ExperimentSpec& spec, const QString& baseDir, const ModelFile& model);
  // Nothing to show: `why` says what to do ("" for the view's own sentence).
  void clear(const QString& why = {});

  // For tests and --show: the part on screen (none while it is predicted), the sentence above
  // the matrix, the parts.
  const PredictedPart* part() const;
  QString status() const;
  // The classes' names in label order, the data set's (Fashion-MNIST's, a folder's subfolders),
  // once the predictions have read the data; empty before.
  QStringList classNames() const { return m_names; }
  bool busy() const { return m_job.joinable(); }
  ConfusionMatrixWidget* matrix() const { return m_matrix; }
  SampleGrid* grid() const { return m_grid; }
  FilterStrip* filters() const { return m_filters; }
  QComboBox* partChoice() const { return m_partChoice; }
  QString gridCaption() const;

 signals:
  // A part's predictions are on screen (or its error is said).
  void partReady();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  struct Job;
  void predictIfShown();
  void finishJob(int generation);
  void showPart();
  void showCell(int trueClass, int predictedClass);
  void stopJob();
  int chosenPart() const;  // 0 validation, 1 training

  QComboBox* m_partChoice = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_gridCaption = nullptr;
  QLabel* m_filtersCaption = nullptr;
  QWidget* m_content = nullptr;
  ConfusionMatrixWidget* m_matrix = nullptr;
  SampleGrid* m_grid = nullptr;
  FilterStrip* m_filters = nullptr;

  std::optional<ExperimentSpec> m_spec;
  QString m_baseDir;
  std::shared_ptr<const ModelFile> m_model;
  QStringList m_names;
  std::optional<PredictedPart> m_parts[2];
  QString m_partError[2];
  QString m_why;
  std::thread m_job;
  std::shared_ptr<Job> m_jobState;
  int m_generation = 0;
};

}  // namespace fitbench
