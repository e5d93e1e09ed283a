// One live chart of one metric (the main window shows "loss" and "accuracy"): the current run's
// per-epoch train and validation lines and its per-batch line, earlier runs as faded overlays,
// TensorBoard-style smoothing, log scale, zoom (drag, wheel) / pan (right or middle drag, arrow
// keys) / reset (double-click, Home), hover tooltips and PNG / SVG export. Runs may carry an id
// (the window's SessionRuns id) to be shown, hidden, renamed or removed, and complete runs (a
// sweep trial's, an earlier run shown again) are added in their own color with their best epoch
// marked (metric_chart_runs.cpp).
// The widget owns its chart, series and stored points. UI thread only.
#pragma once

#include <QColor>
#include <QPointF>
#include <QString>
#include <QVector>
#include <QWidget>
#include <array>
#include <vector>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QChart;
class QChartView;
class QCheckBox;
class QGraphicsSimpleTextItem;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QSlider;
class QTimer;
class QToolButton;
class QValueAxis;
QT_END_NAMESPACE

namespace fitbench {

class MetricChart : public QWidget {
  Q_OBJECT
 public:
  // Runs kept as overlays; the oldest is dropped when a newer one arrives.
  static constexpr int kMaxOverlays = 10;
  // Points drawn per batch line (the stored data stays complete).
  static constexpr int kMaxDrawnPoints = 2000;
  // The same for each line of a faded overlay: every overlay is laid out again whenever an axis
  // range changes (each tick while a run follows its data), so eight overlays at 2,000 points a
  // line kept the UI thread busy for 40 ms at a time; 400 points still trace a curve at chart
  // widths.
  static constexpr int kMaxOverlayPoints = 400;
  // Shortest time between two redraws (about 30 per second).
  static constexpr int kRedrawIntervalMs = 33;
  // Epoch points are marked while neighbours on screen are at least this far apart (px): about
  // 35 epochs across a 550 px plot; a longer run, or one zoomed out, is a line alone.
  static constexpr double kMarkedSpacingPx = 16.0;

  // `metricName` is the Keras metric key ("loss", "accuracy"); names containing "acc" start
  // with a 0..1 y range, the others range over their data.
  explicit MetricChart(const QString& metricName, QWidget* parent = nullptr);
  ~MetricChart() override;

  QString metricName() const { return m_metricName; }
  // Shows another metric (the experiment's first metric changed): the runs drawn so far, which
  // are of the old one, are cleared, and the title and y range follow the new name.
  void setMetricName(const QString& metricName);

  // A new run starts: the current run's lines (if any) become an overlay that keeps its own
  // label, drawn in the color it began with (named in the runs legend below the chart), or
  // faded when it has none; the new run is called `label` (e.g. "Adam 0.03") and drawn in the
  // train and validation colors until the next one begins, then in `color` if valid.
  // `id` (>= 0) names it for the calls below.
  void beginRun(const QString& label, int id = -1, const QColor& color = {});
  // Per-batch values of the current run; x = fractional epoch, epoch + (batch + 1) / steps.
  void addBatchPoints(const QVector<QPointF>& points);
  // One per-epoch value of the current run; `epoch` is 1-based. A second value for the same
  // epoch replaces the first.
  void addEpochPoint(bool validation, double epoch, double value);
  // Removes every overlay (runDropped for each that has an id).
  void clearOverlays();

  // A complete run as an overlay, per-epoch lines only (x = 1-based epoch), replacing one with
  // the same id. A valid `color` draws it in that color, validation dashed (a faded overlay
  // otherwise); `bestEpoch` (1-based, or 0 for none) is marked with a dot on its validation line,
  // or its train line when it has no validation values.
  void addRun(int id, const QString& label, const QVector<QPointF>& train,
              const QVector<QPointF>& validation, const QColor& color = {}, int bestEpoch = 0);
  bool hasRun(int id) const;
  void setRunVisible(int id, bool visible);
  void setRunLabel(int id, const QString& label);
  // An overlay is deleted; the current run's lines are emptied.
  void removeRun(int id);
  // The labels of the runs drawn now, the current run first ("" for an unlabelled one).
  QStringList shownRunLabels() const;
  // Whether the colored runs are named below this chart (the window names them once, below
  // the loss chart); default true.
  void setRunsLegendVisible(bool visible);
  // The colored runs' legend below the chart, as plain text ("" when none is shown).
  QString runsLegendText() const;
  // Where run `id`'s best epoch is marked (chart values), or an invalid point.
  QPointF bestMark(int id) const;

  // TensorBoard's smoothing weight, clamped to 0..0.99 (default 0.6). The setters update the
  // toolbar and emit smoothingChanged / logScaleChanged when the value changes (e.g. to keep
  // two charts in step).
  void setSmoothing(double weight);
  double smoothing() const { return m_smoothing; }
  // Log y axis; values <= 0 are not drawn on it and the chart says how many were left out.
  void setLogScale(bool on);
  bool logScale() const { return m_logScale; }
  // Back to axes that follow the data (after zooming or panning).
  void resetView();
  // True while the axes follow the data, false after the user zoomed or panned.
  bool followsData() const { return m_followData; }

  // The sentence centred on an empty chart ("" once a run has a value).
  QString emptyText() const;
  int epochPointCount(bool validation) const;
  int batchPointCount() const;
  int overlayCount() const { return static_cast<int>(m_overlays.size()); }
  QChart* chart() const { return m_chart; }
  QChartView* chartView() const { return m_view; }
  // Pushes pending data to the series now instead of at the next redraw tick.
  void flushNow();
  // The hover tooltip for a position in chartView()->viewport() coordinates ("" when no point is
  // within 14 px): line, run, epoch and value (and smoothed value) of the nearest drawn point.
  QString hoverText(const QPoint& viewPos) const;
  // Writes the chart as PNG or SVG, chosen by the file extension. On failure returns false and
  // sets *error (if given) to one sentence.
  bool exportImage(const QString& path, QString* error = nullptr);

 signals:
  void smoothingChanged(double weight);
  // Run `id` left the chart: the oldest overlay past kMaxOverlays, or clearOverlays.
  void runDropped(int id);
  void logScaleChanged(bool on);

 protected:
  void changeEvent(QEvent* event) override;  // enabled or not: the empty chart's sentence

 private:
  enum Line { kBatch = 0, kTrain = 1, kValidation = 2, kLineCount = 3 };
  // Bounds of the values a line draws (before smoothing, which stays inside them), and the x
  // bounds of all its points with a finite x, drawn or not (a run whose loss went NaN keeps its
  // epochs on the axis).
  struct Extent {
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    bool valid = false;
    double allX0 = 0, allX1 = 0;
    bool anyX = false;
  };
  struct Run {
    QString label;
    std::array<QVector<QPointF>, kLineCount> data;      // complete, as received
    std::array<QVector<QPointF>, kLineCount> smoothed;  // complete, empty when not smoothing
    std::array<QLineSeries*, kLineCount> line{};        // drawn (smoothed when smoothing)
    std::array<QLineSeries*, kLineCount> raw{};         // faint raw lines, current run only
    std::array<bool, kLineCount> dirty{};
    std::array<Extent, kLineCount> extent{};
    std::array<int, kLineCount> nonFinite{};    // values not drawn: NaN or infinite
    std::array<int, kLineCount> nonPositive{};  // values not drawn: <= 0 on the log scale
    bool isOverlay = false;
    int id = -1;                     // the window's id, or -1
    QColor color;                    // invalid: the train / validation colors
    QColor overlayColor;             // the current run's color once it is an overlay
    double bestX = 0.0;              // the marked epoch (1-based), 0: none
    bool hidden = false;             // setRunVisible(false)
    QScatterSeries* best = nullptr;  // the best epoch's dot
    bool hasData() const;
  };

  void buildWidgets();
  void connectSignals();
  QLineSeries* newLine();  // added to the chart, on its axes
  void createRunSeries(Run& run);
  void styleRun(Run& run);
  void deleteRunSeries(Run& run);
  void markDirty(Run& run, Line line);
  void markAllDirty();
  void scheduleRedraw();
  void pushLine(Run& run, Line line);
  void updateLegend();
  void updateNotes();
  // Markers on the current run's epoch lines while their visible points can be told apart.
  void updateMarkers();
  // Places (or hides) each run's best-epoch dot and applies hidden runs' visibility.
  void updateBestMarks();
  Run* findRun(int id);
  const Run* findRun(int id) const;
  // How many tick intervals an axis gets for the plot's current size.
  int divisions(Qt::Orientation orientation) const;
  void applyDataRange();
  void placeEmptyNote();
  void replaceYAxis();
  void updateTicks();
  void onUserViewChange();
  void onHover(const QPoint& viewPos);
  void onSaveClicked();
  QVector<QPointF> drawable(const QVector<QPointF>& points, int* nonFinite, int* nonPositive) const;
  QVector<QPointF> decimated(const Run& run, const QVector<QPointF>& points) const;
  std::vector<const Run*> allRuns() const;
  QString lineName(const Run& run, Line line) const;

  QString m_metricName;
  // An accuracy-like metric ("acc" in its name) starts with a 0..1 y range.
  bool isAccuracy() const {
    return m_metricName.contains(QLatin1String("acc"), Qt::CaseInsensitive);
  }
  double m_smoothing = 0.6;
  bool m_logScale = false;
  bool m_followData = true;
  std::array<double, 4> m_appliedRange{};  // x low/high, y low/high last set by the chart itself

  Run m_current;
  std::vector<Run> m_overlays;

  QChart* m_chart = nullptr;
  QChartView* m_view = nullptr;
  QValueAxis* m_xAxis = nullptr;
  QAbstractAxis* m_yAxis = nullptr;
  QTimer* m_redrawTimer = nullptr;
  QSlider* m_smoothingSlider = nullptr;
  QLabel* m_smoothingValue = nullptr;
  QCheckBox* m_logCheck = nullptr;
  QLabel* m_noteLabel = nullptr;
  QLabel* m_runsLegend = nullptr;  // the colored runs' labels
  bool m_runsLegendVisible = true;
  // "Press Run to plot the loss ...", centred on the plot while no run has a value.
  QGraphicsSimpleTextItem* m_emptyNote = nullptr;
  QToolButton* m_resetButton = nullptr;
  QToolButton* m_saveButton = nullptr;
};

}  // namespace fitbench
