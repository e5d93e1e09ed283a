// DeviceTimelineView: the timeline's canvas, its step controls and the Chrome trace export.

#include "ui/rehearsal/device_timeline_view.h"

#include <QButtonGroup>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QThread>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <filesystem>

#include "core/io/chrome_trace.h"
#include "ui/common/glossary.h"
#include "ui/common/text_style.h"

namespace fitbench {
namespace {

constexpr int kDefaultStepsShown = 3;
constexpr qint64 kUsageIntervalMs = 500;

QString legendToolTip(SpanKind kind) {
  switch (kind) {
    case SpanKind::kShardCopy:
      return DeviceTimelineView::tr(
                 "Shard copy: the device copies its rows of the batch into its own buffers.") +
             QStringLiteral("\n\n") + glossary::shard();
    case SpanKind::kForward:
      return DeviceTimelineView::tr(
          "Forward: the model's outputs, loss and metrics on the device's shard.");
    case SpanKind::kBackward:
      return DeviceTimelineView::tr("Backward: the gradients of the loss on the device's shard.");
    case SpanKind::kCollective:
      return glossary::allReduce();
    case SpanKind::kUpdate:
      return DeviceTimelineView::tr(
          "Update: the optimizer applies the summed gradients to the device's replica. For a "
          "model of 16,384 weights or more, DataParallel shards it: each device updates its 1/N "
          "of the weights between a reduce-scatter and an all-gather (unless clipnorm needs "
          "whole-gradient norms).");
    case SpanKind::kWaiting:
      return DeviceTimelineView::tr(
                 "Waiting: the device is done and waits for the others before a collective.") +
             QStringLiteral("\n\n") + glossary::straggler();
  }
  return {};
}

// One of the segmented pair Measured | Modelled.
QToolButton* makeModeButton(const QString& text, const QString& name, const QString& toolTip) {
  auto* button = new QToolButton;
  button->setText(text);
  button->setObjectName(name);
  button->setToolTip(toolTip);
  button->setCheckable(true);
  button->setAutoRaise(false);
  button->setFocusPolicy(Qt::StrongFocus);
  button->setToolButtonStyle(Qt::ToolButtonTextOnly);
  return button;
}

}  // namespace

DeviceTimelineView::DeviceTimelineView(QWidget* parent, size_t capacity)
    : QWidget(parent), m_store(capacity) {
  m_canvas = new TimelineCanvas(&m_store);
  m_canvas->setObjectName(QStringLiteral("timelineCanvas"));
  m_canvas->installEventFilter(this);

  m_stepsShown = new QSpinBox;
  m_stepsShown->setObjectName(QStringLiteral("stepsShown"));
  m_stepsShown->setRange(1, kMaxStepsShown);
  m_stepsShown->setValue(kDefaultStepsShown);
  m_stepsShown->setToolTip(tr("How many consecutive training steps the timeline shows"));
  auto* stepsLabel = new QLabel(tr("Steps shown"));
  stepsLabel->setBuddy(m_stepsShown);

  m_slider = new QSlider(Qt::Horizontal);
  m_slider->setObjectName(QStringLiteral("stepSlider"));
  m_slider->setToolTip(tr("Choose the first step to show"));
  m_stepSpin = new QSpinBox;
  m_stepSpin->setObjectName(QStringLiteral("step"));
  m_stepSpin->setToolTip(m_slider->toolTip());
  m_slider->setMinimumWidth(60);
  auto* stepLabel = new QLabel(tr("Step"));
  stepLabel->setBuddy(m_stepSpin);

  m_follow = new QPushButton(tr("Follow latest"));
  m_follow->setObjectName(QStringLiteral("followLatest"));
  m_follow->setCheckable(true);
  m_follow->setChecked(true);
  m_follow->setToolTip(tr("Keep showing the latest steps as they arrive"));
  m_export = new QPushButton(tr("Export trace…"));
  m_export->setObjectName(QStringLiteral("exportTrace"));
  m_export->setToolTip(
      tr("Save the kept steps as a Chrome trace (JSON) to open in Perfetto or chrome://tracing"));

  m_measuredButton = makeModeButton(
      tr("Measured"), QStringLiteral("measuredTime"),
      tr("Measured time: what each device's thread took on this computer, synchronization "
         "included"));
  m_modelledButton = makeModeButton(
      tr("Modelled"), QStringLiteral("modelledTime"),
      tr("Modelled time: the same steps as the step model predicts them on the target: compute "
         "from each device's FLOPs at the target's rate, collectives from its link model "
         "(docs/capacity.md)"));
  m_measuredButton->setChecked(true);
  auto* modeGroup = new QButtonGroup(this);
  modeGroup->addButton(m_measuredButton);
  modeGroup->addButton(m_modelledButton);
  m_target = new TargetChooser;
  m_target->setObjectName(QStringLiteral("timelineTarget"));
  m_target->setToolTip(tr("The devices and links the modelled time is predicted for"));
  m_targetLabel = new QLabel(tr("Target"));
  m_targetLabel->setBuddy(m_target);
  m_modeLabel = new QLabel;
  m_modeLabel->setObjectName(QStringLiteral("timeModeText"));
  m_modeLabel->setWordWrap(true);
  m_modeLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_syncNote = new QLabel;
  m_syncNote->setObjectName(QStringLiteral("synchronizationNote"));
  m_syncNote->setWordWrap(true);
  m_syncNote->setStyleSheet(QStringLiteral("color: #8a4b00;"));
  m_syncNote->setContentsMargins(10, 0, 10, 0);
  m_syncNote->hide();

  // One row below the lanes: the time's mode (and its target) on the left, the step controls on
  // the right, so that a 240 px dock (a 1280 x 720 screen's first layout) keeps four lanes. The
  // mode's sentence takes the room left and says the rest in its tooltip.
  m_modeLabel->setWordWrap(false);
  m_modeLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_modeLabel->setMinimumWidth(60);
  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(10, 0, 10, 6);
  controls->setSpacing(0);
  controls->addWidget(m_measuredButton);
  controls->addWidget(m_modelledButton);
  controls->addSpacing(10);
  controls->addWidget(m_targetLabel);
  controls->addSpacing(6);
  controls->addWidget(m_target);
  controls->addSpacing(10);
  controls->addWidget(m_modeLabel, 2);
  controls->addSpacing(12);
  controls->addWidget(stepsLabel);
  controls->addSpacing(4);
  controls->addWidget(m_stepsShown);
  controls->addSpacing(12);
  controls->addWidget(stepLabel);
  controls->addSpacing(4);
  controls->addWidget(m_slider, 1);
  controls->addSpacing(4);
  controls->addWidget(m_stepSpin);
  controls->addSpacing(8);
  controls->addWidget(m_follow);
  controls->addSpacing(4);
  controls->addWidget(m_export);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  // Lanes keep at least a line of text each (the canvas's minimumSizeHint); with many devices in
  // a low dock the lanes scroll instead of being squeezed into an unreadable stripe.
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(m_canvas);
  layout->addWidget(scroll, 1);
  layout->addWidget(m_syncNote);
  layout->addLayout(controls);
  // Tab goes to the pair's chosen button (the arrows choose) and the target before the lanes and
  // the step controls.
  setTabOrder(m_measuredButton, m_modelledButton);
  setTabOrder(m_modelledButton, m_target);
  setTabOrder(m_target, scroll);
  m_modelled.setTarget(m_target->target());
  connectSignals();
  setTimeMode(TimeMode::kMeasured);
}

DeviceTimelineView::~DeviceTimelineView() = default;

void DeviceTimelineView::connectSignals() {
  connect(m_stepsShown, &QSpinBox::valueChanged, this, [this] {
    if (m_follow->isChecked()) m_first = latestFirst();
    updateView();
  });
  connect(m_slider, &QSlider::valueChanged, this,
          [this](int value) { showStep(static_cast<size_t>(std::max(value, 0))); });
  connect(m_stepSpin, &QSpinBox::valueChanged, this, [this](int value) {
    if (value >= 1) showStep(static_cast<size_t>(value - 1));
  });
  connect(m_follow, &QPushButton::toggled, this, [this](bool on) {
    if (!on) return;
    m_first = latestFirst();
    updateView();
  });
  connect(m_export, &QPushButton::clicked, this, &DeviceTimelineView::exportWithDialog);
  connect(m_measuredButton, &QToolButton::toggled, this, [this](bool on) {
    if (on) setTimeMode(TimeMode::kMeasured);
  });
  connect(m_modelledButton, &QToolButton::toggled, this, [this](bool on) {
    if (on) setTimeMode(TimeMode::kModelled);
  });
  connect(m_target, &TargetChooser::targetChosen, this, [this] {
    m_modelled.setTarget(m_target->target());
    syncModelled();
    m_canvas->refresh();
    refreshUsage(true);
    updateView();
  });
}

void DeviceTimelineView::setModelInput(std::optional<CapacityInput> input) {
  m_modelled.setInput(std::move(input));
  syncModelled();
  m_canvas->refresh();
  refreshUsage(true);
  updateView();
}

void DeviceTimelineView::setTimeMode(TimeMode mode) {
  m_mode = mode;
  {
    const QSignalBlocker measured(m_measuredButton);
    const QSignalBlocker modelled(m_modelledButton);
    m_measuredButton->setChecked(mode == TimeMode::kMeasured);
    m_modelledButton->setChecked(mode == TimeMode::kModelled);
  }
  m_targetLabel->setVisible(mode == TimeMode::kModelled);
  m_target->setVisible(mode == TimeMode::kModelled);
  syncModelled();
  m_canvas->setStore(&shownStore());
  refreshUsage(true);
  updateView();
}

const TraceStore& DeviceTimelineView::shownStore() const {
  return m_mode == TimeMode::kModelled && m_modelledStore ? *m_modelledStore : m_store;
}

void DeviceTimelineView::syncModelled() { m_modelledStore = &m_modelled.sync(m_store); }

QString DeviceTimelineView::modeText() const { return m_modeLabel->text(); }

QString DeviceTimelineView::synchronizationText() const {
  return m_syncNote->isHidden() ? QString() : m_syncNote->text();
}

void DeviceTimelineView::updateTexts() {
  const int cores = std::max(QThread::idealThreadCount(), 1);
  const bool job = m_processes > 1;
  QString tip;  // the row may show only the label's start: the tooltip has it whole
  if (m_mode == TimeMode::kMeasured && job) {
    m_modeLabel->setText(
        tr("Measured: process 0's devices of a job of %1 processes.").arg(m_processes));
    tip = tr("A job of %1 processes, each its own program, exchanging through Open MPI: the "
             "steps shown are process 0's devices; the trace file (--trace) has every device.")
              .arg(m_processes);
  } else if (m_mode == TimeMode::kMeasured) {
    m_modeLabel->setText(
        cores == 1 ? tr("Measured time on this computer: each device is a thread, on 1 core.")
                   : tr("Measured time on this computer: each device is a thread, on %1 cores.")
                         .arg(cores));
  } else if (!m_modelled.problem().isEmpty()) {
    m_modeLabel->setText(m_modelled.problem());
  } else {
    const Target& t = m_modelled.target();
    const int devices = std::max(m_store.devices(), 1);
    QString text =
        tr("Modelled time: compute at %1 per device, links %2 (target: %3).")
            .arg(TargetChooser::flopsText(t.flops), TargetChooser::linkText(t.link_for(devices)),
                 QString::fromStdString(t.name));
    if (t.cores > 0.0 && devices > t.cores)
      text += QLatin1Char(' ') +
              tr("The %1 devices take turns on %2 cores.").arg(devices).arg(t.cores, 0, 'g', 3);
    m_modeLabel->setText(text);
  }
  // (A job's collectives are MPI's, not this window's threads'.)
  const bool note = m_mode == TimeMode::kMeasured && !job && m_sync.dominated();
  if (note)
    m_syncNote->setText(
        tr("Collectives here are mostly thread synchronization on this %n-core computer "
           "(%1% of each step; a median %2 a step, the link model (%3) says %4): see Modelled.",
           "", cores)
            .arg(QString::number(m_sync.measuredShare, 'f', 0), durationText(m_sync.measuredUs),
                 QString::fromStdString(m_modelled.target().name),
                 durationText(m_sync.modelledUs)));
  m_syncNote->setVisible(note);
  m_modeLabel->setToolTip(tip.isEmpty() ? m_modeLabel->text() : tip);
}

void DeviceTimelineView::clear(const QStringList& deviceNames) {
  m_store.clear(static_cast<int>(deviceNames.size()));
  syncModelled();
  m_names = deviceNames;
  m_first = 0;
  {
    const QSignalBlocker blocker(m_follow);
    m_follow->setChecked(true);
  }
  m_usageClock.invalidate();
  m_canvas->setDeviceNames(deviceNames);
  m_canvas->setUsage({});
  m_sync = {};
  updateTexts();
  m_canvas->refresh();
  updateView();
}

void DeviceTimelineView::appendSteps(const std::vector<StepTrace>& steps) {
  if (steps.empty()) return;
  const size_t droppedBefore = m_store.dropped();
  for (const StepTrace& step : steps) m_store.append(step);
  const size_t newlyDropped = m_store.dropped() - droppedBefore;
  syncModelled();
  // Following: the latest steps; scrubbed: the same step, as long as it is kept.
  if (m_follow->isChecked())
    m_first = latestFirst();
  else
    m_first = m_first > newlyDropped ? m_first - newlyDropped : 0;
  m_canvas->refresh();
  refreshUsage(false);
  updateView();
}

void DeviceTimelineView::setProcesses(int processes) {
  m_processes = std::max(processes, 1);
  updateTexts();
}

void DeviceTimelineView::setLive(bool live) {
  m_live = live;
  if (live) m_follow->setChecked(true);
  refreshUsage(true);
  updateView();
}

bool DeviceTimelineView::exportChromeTrace(const QString& path, QString* error) const {
  if (m_store.empty()) {
    if (error) *error = tr("There are no steps to export: run a distributed experiment first.");
    return false;
  }
  try {
    write_chrome_trace(std::filesystem::path(QFile::encodeName(path).toStdString()),
                       m_store.toRunTrace());
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

void DeviceTimelineView::exportWithDialog() {
  QString path = QFileDialog::getSaveFileName(
      this, tr("Export trace"), QStringLiteral("trace.json"), tr("Chrome trace (*.json)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
  QString error;
  if (!exportChromeTrace(path, &error)) QMessageBox::warning(this, tr("Export trace"), error);
}

int DeviceTimelineView::stepsShown() const { return m_stepsShown->value(); }
void DeviceTimelineView::setStepsShown(int steps) { m_stepsShown->setValue(steps); }

void DeviceTimelineView::showStep(size_t index) {
  {
    const QSignalBlocker blocker(m_follow);
    m_follow->setChecked(false);
  }
  m_first = std::min(index, latestFirst());
  updateView();
}

size_t DeviceTimelineView::latestFirst() const {
  const auto shown = static_cast<size_t>(stepsShown());
  const size_t size = shownStore().size();
  return size > shown ? size - shown : 0;
}

size_t DeviceTimelineView::visibleStepCount() const {
  const size_t size = shownStore().size();
  if (m_first >= size) return 0;
  return std::min(static_cast<size_t>(stepsShown()), size - m_first);
}

void DeviceTimelineView::updateView() {
  const size_t size = shownStore().size();
  // The window is always full: its first step goes up to the last stepsShown().
  const size_t last = latestFirst();
  m_first = std::min(m_first, last);
  m_canvas->setWindow(m_first, static_cast<size_t>(stepsShown()));
  const int count = static_cast<int>(size);
  {
    const QSignalBlocker sliderBlocker(m_slider);
    const QSignalBlocker spinBlocker(m_stepSpin);
    m_slider->setRange(0, static_cast<int>(last));
    m_slider->setValue(static_cast<int>(m_first));
    m_stepSpin->setRange(count > 0 ? 1 : 0, count > 0 ? static_cast<int>(last) + 1 : 0);
    m_stepSpin->setValue(count > 0 ? static_cast<int>(m_first) + 1 : 0);
    m_stepSpin->setSuffix(tr(" of %1").arg(count));
  }
  const bool any = size > 0;
  m_slider->setEnabled(any);
  m_stepSpin->setEnabled(any);
  m_follow->setEnabled(any || m_live);
  m_export->setEnabled(any);
  const QString scrub =
      m_store.dropped() > 0
          ? tr("Choose the first step to show (the oldest %1 steps were dropped; the timeline "
               "keeps the latest %2)")
                .arg(m_store.dropped())
                .arg(m_store.capacity())
          : tr("Choose the first step to show");
  if (m_slider->toolTip() != scrub) {
    m_slider->setToolTip(scrub);
    m_stepSpin->setToolTip(scrub);
  }
}

void DeviceTimelineView::refreshUsage(bool force) {
  if (!force && m_live && m_store.dropped() > 0 && m_usageClock.isValid() &&
      m_usageClock.elapsed() < kUsageIntervalMs)
    return;
  m_canvas->setUsage(shownStore().usage());
  m_sync = m_modelled.synchronization(m_store);
  updateTexts();
  m_usageClock.start();
}

QString DeviceTimelineView::caption() const {
  return visibleStepCount() > 0 ? m_canvas->stepText(m_first) : QString();
}

void DeviceTimelineView::setReadyDevices(int devices) { m_canvas->setReadyDevices(devices); }

QString DeviceTimelineView::message() const { return m_canvas->message(); }
int DeviceTimelineView::laneCount() const { return m_canvas->laneCount(); }
QString DeviceTimelineView::laneText(int device) const { return m_canvas->laneText(device); }

std::vector<DeviceTimelineView::SpanBox> DeviceTimelineView::visibleSpans() const {
  std::vector<SpanBox> boxes = m_canvas->boxes();
  for (SpanBox& b : boxes) b.rect.translate(m_canvas->pos());
  return boxes;
}

QString DeviceTimelineView::toolTipAt(const QPoint& pos) const {
  const QPointF at(pos - m_canvas->pos());
  if (!m_canvas->message().isEmpty()) return {};
  if (const SpanBox* box = m_canvas->boxAt(at)) return spanToolTip(*box);
  const int lane = m_canvas->laneLabelAt(at);
  if (lane >= 0) {
    const auto& usage = m_canvas->usage();
    const QString name = m_canvas->deviceName(lane);
    const QString line =
        static_cast<size_t>(lane) < usage.size()
            ? QString::fromStdString(usage_line(name.toStdString(), usage[size_t(lane)]))
            : name;
    return line + QStringLiteral("\n\n") + glossary::device();
  }
  if (const auto kind = m_canvas->legendAt(at)) return legendToolTip(*kind);
  return {};
}

QString DeviceTimelineView::spanToolTip(const SpanBox& box) const {
  const StepTrace& step = shownStore().step(box.step);
  const auto d = static_cast<size_t>(box.device);
  const TraceSpan& span = step.spans[d][box.span];
  QStringList lines;
  lines << QStringLiteral("%1 · %2").arg(m_canvas->deviceName(box.device),
                                         QLatin1String(span_label(span)));
  lines << m_canvas->stepText(box.step);
  lines << tr("Duration: %1").arg(durationText(span.duration_us));
  const qlonglong rows = d < step.shard_rows.size() ? step.shard_rows[d] : 0;
  switch (span.kind) {
    case SpanKind::kShardCopy:
    case SpanKind::kForward:
    case SpanKind::kBackward:
      lines << tr("Shard: %1 rows").arg(rows);
      break;
    case SpanKind::kCollective:
      lines << tr("Algorithm: %1").arg(QLatin1String(algorithm_name(span.algorithm)));
      if (m_mode == TimeMode::kModelled)
        lines << tr("Sent and received about %1 (the link model's bytes of the step, per device)")
                     .arg(bytesText(span.bytes_sent));
      else
        lines << tr("Sent %1, received %2")
                     .arg(bytesText(span.bytes_sent), bytesText(span.bytes_received));
      break;
    case SpanKind::kUpdate:
      lines << tr(
          "The optimizer updates this device's part of the weights (or its whole replica).");
      break;
    case SpanKind::kWaiting:
      lines << tr("Done early: waits for the slowest device (a straggler) before the collective.");
      break;
  }
  if (m_mode == TimeMode::kModelled) lines << m_modeLabel->text();
  return lines.join(QLatin1Char('\n'));
}

bool DeviceTimelineView::eventFilter(QObject* watched, QEvent* event) {
  if (watched != m_canvas || event->type() != QEvent::ToolTip)
    return QWidget::eventFilter(watched, event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const QString text = toolTipAt(m_canvas->mapTo(this, help->pos()));
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(help->globalPos(), text, m_canvas);
  return true;
}

QString DeviceTimelineView::durationText(double us) {
  if (us < 1000.0) return QString::number(us, 'f', 1) + QStringLiteral(" µs");
  return QString::number(us / 1000.0, 'f', 2) + QStringLiteral(" ms");
}

QString DeviceTimelineView::bytesText(int64_t bytes) {
  QString text = groupedCount(bytes) + tr(" bytes");
  if (bytes >= 1000000)
    text += QStringLiteral(" (%1 MB)").arg(QString::number(bytes / 1e6, 'f', 1));
  else if (bytes >= 10000)
    text += QStringLiteral(" (%1 kB)").arg(QString::number(bytes / 1e3, 'f', 1));
  return text;
}

}  // namespace fitbench
