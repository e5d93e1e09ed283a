// CapacityView: the target chooser, the what-ifs, the debounced planning on its own thread, the
// texts and the measured step. The charts are drawn in capacity_charts.cpp.

#include "ui/rehearsal/capacity_view.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QGraphicsLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "core/base/error.h"
#include "ui/common/number_spin_box.h"
#include "ui/common/text_style.h"
#include "ui/common/zoom.h"

namespace fitbench {
namespace {

constexpr int kDebounceMs = 150;

QLabel* makeText(const QString& name) {
  auto* label = new QLabel;
  label->setObjectName(name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  return label;
}

NumberSpinBox* makeFactor(const QString& name, const QString& prefix, const QString& tip) {
  auto* spin = new NumberSpinBox;
  spin->setObjectName(name);
  spin->setPrefix(prefix);
  spin->setRange(1.0 / 64, 1024);
  spin->setValue(1.0);
  spin->setSingleStep(1.0);
  spin->setKeyboardTracking(false);
  spin->setToolTip(tip);
  spin->setMaximumWidth(spin->fontMetrics().horizontalAdvance(prefix + QStringLiteral("0.0625")) +
                        40);
  return spin;
}

QChartView* makeChartView(QChart* chart, const QString& name) {
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setBackgroundRoundness(0);
  chart->setMargins(QMargins(4, 4, 8, 4));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  QFont title = chart->titleFont();
  title.setBold(true);
  title.setPointSizeF(title.pointSizeF() * 1.05);
  chart->setTitleFont(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  QFont legend = chart->legend()->font();
  legend.setPointSizeF(legend.pointSizeF() * 0.9);
  chart->legend()->setFont(legend);
  auto* view = new QChartView(chart);
  view->setObjectName(name);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(280, 250);
  return view;
}

// A chart with the texts under it, as one cell of the grid.
QWidget* box(QWidget* chart, std::initializer_list<QWidget*> below) {
  auto* w = new QWidget;
  auto* layout = new QVBoxLayout(w);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(chart, 1);
  for (QWidget* b : below) layout->addWidget(b);
  return w;
}

}  // namespace

CapacityView::CapacityView(QWidget* parent) : QWidget(parent) {
  m_debounce = new QTimer(this);
  m_debounce->setSingleShot(true);
  m_debounce->setInterval(kDebounceMs);

  m_targetCombo = new TargetChooser;
  m_targetCombo->setObjectName(QStringLiteral("target"));
  m_targetSource = makeText(QStringLiteral("targetSource"));
  m_targetSource->setStyleSheet(QStringLiteral("color: #555555;"));
  QFont small = m_targetSource->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  m_targetSource->setFont(small);
  m_targetError = makeText(QStringLiteral("targetError"));
  m_targetError->setStyleSheet(QStringLiteral("color: #b00020;"));
  m_targetError->hide();
  m_batchFactor = makeFactor(QStringLiteral("batchFactor"), tr("batch ×"),
                             tr("What if the batch (and the data set) were this many times as "
                                "large? (fitbench-cli plan --scale-batch)"));
  m_widthFactor = makeFactor(QStringLiteral("widthFactor"), tr("width ×"),
                             tr("What if every Dense layer but the output had this many times "
                                "the units? (--scale-width)"));
  m_devicesFactor = makeFactor(QStringLiteral("devicesFactor"), tr("devices ×"),
                               tr("What if there were this many times the devices? "
                                  "ModelParallel: the mesh's batch axis. (--scale-devices)"));

  auto* controls = new QHBoxLayout;
  auto* targetLabel = new QLabel(tr("&Target:"));
  targetLabel->setBuddy(m_targetCombo);
  controls->addWidget(targetLabel);
  controls->addWidget(m_targetCombo);
  controls->addStretch(1);
  auto* whatIfs = new QHBoxLayout;
  whatIfs->addWidget(new QLabel(tr("What if:")));
  whatIfs->addWidget(m_batchFactor);
  whatIfs->addWidget(m_widthFactor);
  whatIfs->addWidget(m_devicesFactor);
  whatIfs->addStretch(1);

  m_summary = makeText(QStringLiteral("summary"));
  m_verdict = makeText(QStringLiteral("verdict"));
  QFont big = m_verdict->font();
  big.setBold(true);
  big.setPointSizeF(big.pointSizeF() * 1.15);
  m_verdict->setFont(big);
  m_error = makeText(QStringLiteral("error"));
  m_error->setStyleSheet(QStringLiteral("color: #b00020;"));
  m_error->hide();
  m_notices = makeText(QStringLiteral("notices"));
  m_notices->setStyleSheet(QStringLiteral("color: #555555;"));
  m_notices->hide();
  m_stepText = makeText(QStringLiteral("stepText"));
  m_collectives = makeText(QStringLiteral("collectives"));
  m_measuredLabel = makeText(QStringLiteral("measured"));
  m_measuredLabel->hide();

  m_memoryChart = new QChart;
  m_stepChart = new QChart;
  m_scalingChart = new QChart;
  m_memoryView = makeChartView(m_memoryChart, QStringLiteral("memoryChart"));
  m_stepView = makeChartView(m_stepChart, QStringLiteral("stepChart"));
  m_stepView->setMinimumHeight(210);
  m_scalingView = makeChartView(m_scalingChart, QStringLiteral("scalingChart"));
  for (QChart* chart : {m_memoryChart, m_stepChart, m_scalingChart}) followZoom(chart, this);
  m_memoryBox = box(m_memoryView, {});
  m_stepBox = box(m_stepView, {});
  m_stepTexts = new QWidget;
  auto* texts = new QVBoxLayout(m_stepTexts);
  texts->setContentsMargins(4, 4, 4, 4);
  texts->addWidget(m_stepText);
  texts->addWidget(m_collectives);
  texts->addWidget(m_measuredLabel);
  texts->addStretch(1);
  m_scalingBox = box(m_scalingView, {});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(m_targetSource);
  layout->addLayout(whatIfs);
  layout->addWidget(m_targetError);
  layout->addWidget(m_summary);
  layout->addWidget(m_verdict);
  layout->addWidget(m_error);
  layout->addWidget(m_notices);
  m_grid = new QGridLayout;
  m_grid->setSpacing(8);
  layout->addLayout(m_grid, 1);
  reflow();

  onTargetChosen();
  connectSignals();
  showResult();
}

CapacityView::~CapacityView() {
  // A plan in flight ends before the view does; its queued takeResult() dies with the view.
  if (m_thread.joinable()) m_thread.join();
}

void CapacityView::connectSignals() {
  connect(m_targetCombo, &TargetChooser::targetChosen, this, &CapacityView::onTargetChosen);
  connect(m_targetCombo, &TargetChooser::fileFailed, this, &CapacityView::showTargetError);
  connect(m_debounce, &QTimer::timeout, this, &CapacityView::startCompute);
  for (NumberSpinBox* spin : {m_batchFactor, m_widthFactor, m_devicesFactor})
    connect(spin, &QDoubleSpinBox::valueChanged, this, &CapacityView::schedule);
}

void CapacityView::onTargetChosen() {
  m_target = m_targetCombo->target();
  m_targetError->hide();
  m_targetError->clear();
  m_targetErrorSentence.clear();
  const QString memory =
      m_target.memory_bytes == 0
          ? tr("the devices share this process's memory")
          : tr("%1 per device").arg(QString::fromStdString(bytes_text(m_target.memory_bytes)));
  m_targetSource->setText(tr("%1; %2 TFLOP/s per device; %3 devices per host. Source: %4")
                              .arg(memory)
                              .arg(m_target.flops / 1e12, 0, 'g', 3)
                              .arg(m_target.devices_per_host)
                              .arg(QString::fromStdString(m_target.source)));
  schedule();
}

void CapacityView::showTargetError(const QString& sentence) {
  m_targetErrorSentence = sentence;
  m_targetError->setText(tr("Cannot use the target: %1").arg(m_targetErrorSentence));
  m_targetError->show();
}

bool CapacityView::setTargetFile(const QString& path) {
  QString error;
  if (m_targetCombo->setTargetFile(path, &error)) return true;
  showTargetError(error);
  return false;
}

bool CapacityView::selectTarget(const QString& name) { return m_targetCombo->selectTarget(name); }

void CapacityView::setExperiment(const ExperimentSpec& spec, int devices, const QString& baseDir) {
  m_spec = spec;
  m_devices = devices;
  m_baseDir = baseDir;
  m_haveSpec = true;
  schedule();
}

void CapacityView::schedule() {
  ++m_generation;  // whatever is computing now answers an older question
  if (m_haveSpec) m_debounce->start();
}

bool CapacityView::isBusy() const { return m_debounce->isActive() || m_computing; }

void CapacityView::startCompute() {
  if (m_computing) {
    m_dirty = true;
    return;
  }
  CapacityRequest request;
  request.generation = m_generation;
  request.spec = m_spec;
  // The window's count overrides the experiment's only when they differ (--devices), so that
  // the plan's notes speak of --devices only then.
  if (m_devices != m_spec.devices.count) request.overrides.devices = m_devices;
  request.baseDir = m_baseDir;
  request.target = m_target;
  request.scale = {m_batchFactor->value(), m_widthFactor->value(), m_devicesFactor->value()};
  m_computing = true;
  if (m_thread.joinable()) m_thread.join();  // the last plan's thread, already done
  m_thread = std::thread([this, request = std::move(request)] {
    CapacityResult result = computeCapacity(request);
    {
      std::lock_guard lock(m_readyMutex);
      m_ready = std::move(result);
    }
    QMetaObject::invokeMethod(this, "takeResult", Qt::QueuedConnection);
  });
}

void CapacityView::takeResult() {
  std::optional<CapacityResult> result;
  {
    std::lock_guard lock(m_readyMutex);
    result.swap(m_ready);
  }
  if (!result) return;
  m_thread.join();  // it has nothing left to do but end
  onComputed(*result);
}

void CapacityView::onComputed(const CapacityResult& result) {
  m_computing = false;
  if (result.generation == m_generation) {
    m_result = result;
    showResult();
    emit updated();
  }
  if (m_dirty || result.generation != m_generation) {
    m_dirty = false;
    if (!m_debounce->isActive()) startCompute();
  }
}

void CapacityView::showResult() {
  const CapacityResult& r = m_result;
  const bool ok = r.error.isEmpty() && r.generation > 0;
  m_error->setText(r.error);
  m_error->setVisible(!r.error.isEmpty());
  m_notices->setText(r.notices.isEmpty() ? QString() : tr("Note: %1").arg(r.notices.join("\n")));
  m_notices->setVisible(!r.notices.isEmpty());
  if (ok) {
    const MemoryPlan& m = r.row.memory;
    QStringList whatIf;
    if (m_batchFactor->value() != 1.0) whatIf << m_batchFactor->text();
    if (m_widthFactor->value() != 1.0) whatIf << m_widthFactor->text();
    if (m_devicesFactor->value() != 1.0) whatIf << m_devicesFactor->text();
    QString summary =
        tr("%1 · %2 parameters · %3 keeps %4 slot(s) per parameter · %5 rows per device per step")
            .arg(QString::fromStdString(r.row.strategy), groupedCount(m.parameters),
                 QString::fromStdString(r.input.optimizer.class_name))
            .arg(m.slots_per_variable)
            .arg(m.rows_per_device);
    if (m.sharded_update)
      summary += tr(" · sharded update (each device keeps the optimizer slots of 1/%1 of the "
                    "variables)")
                     .arg(r.input.devices);
    if (!whatIf.isEmpty()) summary = tr("What if %1: ").arg(whatIf.join(", ")) + summary;
    m_summary->setText(summary);
    m_verdict->setText(QString::fromStdString(fit_sentence(r.row)));
    m_verdict->setStyleSheet(r.row.fit.fits ? QStringLiteral("color: #1b7f3b;")
                                            : QStringLiteral("color: #b00020;"));
    m_stepText->setText(QString::fromStdString(step_sentence(r.row)));
    QStringList lines;
    for (const CollectiveCost& c : r.row.step.collectives)
      lines << QStringLiteral("• ") + keepHyphenated(QString::fromStdString(collective_text(c)));
    m_collectives->setText(lines.isEmpty() ? tr("Communication per step: none")
                                           : tr("Communication per step:\n") + lines.join("\n"));
  } else {
    m_summary->setText(r.generation == 0 ? tr("Planning…") : QString());
    m_verdict->clear();
    m_stepText->clear();
    m_collectives->clear();
  }
  m_verdict->setVisible(ok);
  drawMemory();
  drawStep();
  drawScaling();
  showMeasured();
}

void CapacityView::clearMeasured() {
  m_runLabel.clear();
  m_measured.clear();
  drawStep();
  showMeasured();
}

void CapacityView::runStarted(const QString& label) {
  m_runLabel = label;
  m_measured.clear();
  drawStep();
  showMeasured();
}

void CapacityView::addMeasuredSteps(const QVector<double>& seconds) {
  if (seconds.isEmpty()) return;
  m_measured.insert(m_measured.end(), seconds.begin(), seconds.end());
  drawStep();
  showMeasured();
}

std::optional<double> CapacityView::measuredStep() const {
  if (m_measured.size() < 2) return std::nullopt;  // the first step warms up
  std::vector<double> steps(m_measured.begin() + 1, m_measured.end());
  const auto mid = steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2);
  std::nth_element(steps.begin(), mid, steps.end());
  return *mid;
}

void CapacityView::showMeasured() {
  const std::optional<double> step = measuredStep();
  m_measuredLabel->setVisible(step.has_value());
  if (!step) return;
  QString text = tr("Measured on this machine, %1: median %2 per step over %3 steps (the first "
                    "left out).")
                     .arg(m_runLabel, QString::fromStdString(seconds_text(*step)))
                     .arg(m_measured.size() - 1);
  if (m_result.error.isEmpty() && m_result.generation > 0) {
    const double predicted = m_result.row.step.total_s;
    if (m_target.memory_bytes == 0)  // this machine
      text += tr(" Predicted for this machine: %1 (%2%), with its uncalibrated FLOP/s and links "
                 "(fitbench-cli plan --calibrate measures them).")
                  .arg(QString::fromStdString(seconds_text(predicted)),
                       QString::fromStdString(fixed_text((predicted / *step - 1.0) * 100.0, 0)));
    else
      text += tr(" The prediction is for %1, not this machine: compare with the this-machine "
                 "target.")
                  .arg(QString::fromStdString(m_target.name));
  }
  m_measuredLabel->setText(text);
}

QString CapacityView::verdictText() const { return m_verdict->text(); }
QString CapacityView::errorText() const { return m_error->text(); }
QString CapacityView::targetErrorText() const { return m_targetErrorSentence; }
QString CapacityView::measuredText() const {
  return m_measuredLabel->isHidden() ? QString() : m_measuredLabel->text();
}
QString CapacityView::noticesText() const { return m_result.notices.join(QLatin1Char('\n')); }
QString CapacityView::collectivesText() const { return m_collectives->text(); }

void CapacityView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  reflow();
}

void CapacityView::reflow() {
  // Two columns when there is room for two charts side by side: memory and scaling above, the
  // step and its texts below; one column (memory, step, texts, scaling) otherwise.
  const int columns = width() >= 1000 ? 2 : 1;
  if (columns == m_columns) return;
  m_columns = columns;
  for (QWidget* w : {m_memoryBox, m_stepBox, m_stepTexts, m_scalingBox}) m_grid->removeWidget(w);
  for (int r = 0; r < 4; ++r) m_grid->setRowStretch(r, 0);
  for (int c = 0; c < 2; ++c) m_grid->setColumnStretch(c, 0);
  if (columns == 2) {
    m_grid->addWidget(m_memoryBox, 0, 0);
    m_grid->addWidget(m_scalingBox, 0, 1);
    m_grid->addWidget(m_stepBox, 1, 0);
    m_grid->addWidget(m_stepTexts, 1, 1);
    m_grid->setRowStretch(0, 3);
    m_grid->setRowStretch(1, 2);
    m_grid->setColumnStretch(0, 1);
    m_grid->setColumnStretch(1, 1);
  } else {
    m_grid->addWidget(m_memoryBox, 0, 0);
    m_grid->addWidget(m_stepBox, 1, 0);
    m_grid->addWidget(m_stepTexts, 2, 0);
    m_grid->addWidget(m_scalingBox, 3, 0);
    m_grid->setRowStretch(0, 3);
    m_grid->setRowStretch(1, 1);
    m_grid->setRowStretch(3, 3);
  }
}

}  // namespace fitbench
