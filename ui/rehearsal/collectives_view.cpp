// CollectivesView: the ring and naive pictures, the step controls, the cost table and the
// measured step.

#include "ui/rehearsal/collectives_view.h"

#include <QGridLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QSlider>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "core/distribution/collectives/collective_schedule.h"
#include "ui/common/glossary.h"
#include "ui/common/text_style.h"
#include "ui/rehearsal/collectives_diagram.h"

namespace fitbench {
namespace {

QTableWidget* makeTable(int rows, int columns, const QString& name) {
  auto* table = new QTableWidget(rows, columns);
  table->setObjectName(name);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionMode(QAbstractItemView::NoSelection);
  table->setFocusPolicy(Qt::NoFocus);
  table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table->horizontalHeader()->setHighlightSections(false);
  table->verticalHeader()->setHighlightSections(false);
  table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 8);
  table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  return table;
}

}  // namespace

CollectivesView::CollectivesView(QWidget* parent) : QWidget(parent) {
  m_header = new QLabel;
  m_header->setObjectName(QStringLiteral("header"));
  m_header->setWordWrap(true);
  m_header->setToolTip(glossary::allReduce());
  m_message = new QLabel;
  m_message->setObjectName(QStringLiteral("message"));
  m_message->setWordWrap(true);
  m_message->setAlignment(Qt::AlignCenter);
  m_message->setToolTip(glossary::allReduce());
  m_message->setMargin(24);

  m_ring = new CollectivesDiagram(CollectiveAlgorithm::kRing);
  m_naive = new CollectivesDiagram(CollectiveAlgorithm::kNaive);
  m_previous = new QToolButton;
  m_previous->setArrowType(Qt::LeftArrow);
  m_previous->setToolTip(tr("Previous step"));
  m_next = new QToolButton;
  m_next->setArrowType(Qt::RightArrow);
  m_next->setToolTip(tr("Next step"));
  m_play = new QToolButton;
  m_play->setText(tr("Play"));
  m_play->setToolButtonStyle(Qt::ToolButtonTextOnly);
  m_play->setObjectName(QStringLiteral("play"));
  m_play->setToolTip(tr("Step through the ring at one step a second"));
  m_slider = new QSlider(Qt::Horizontal);
  m_slider->setObjectName(QStringLiteral("ringStep"));
  m_slider->setPageStep(1);
  m_slider->setTickPosition(QSlider::TicksBelow);
  m_slider->setTickInterval(1);
  m_slider->setMinimumWidth(60);
  m_stepLabel = new QLabel;
  m_stepLabel->setMinimumWidth(
      m_stepLabel->fontMetrics().horizontalAdvance(QStringLiteral("88/88")));
  m_ringCaption = new QLabel;
  m_ringCaption->setObjectName(QStringLiteral("ringCaption"));
  m_ringCaption->setWordWrap(true);
  m_ringCaption->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_naiveCaption = new QLabel;
  m_naiveCaption->setObjectName(QStringLiteral("naiveCaption"));
  m_naiveCaption->setWordWrap(true);
  m_naiveCaption->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_timer = new QTimer(this);
  m_timer->setInterval(1000);

  auto* controls = new QHBoxLayout;
  controls->setSpacing(4);
  controls->addWidget(m_previous);
  controls->addWidget(m_play);
  controls->addWidget(m_next);
  controls->addWidget(m_slider, 1);
  controls->addWidget(m_stepLabel);
  auto* pictures = new QGridLayout;
  pictures->setContentsMargins(0, 0, 0, 0);
  pictures->setHorizontalSpacing(10);
  pictures->addWidget(m_ring, 0, 0);
  pictures->addWidget(m_naive, 0, 1);
  pictures->addLayout(controls, 1, 0, 1, 2);
  pictures->addWidget(m_ringCaption, 2, 0);
  pictures->addWidget(m_naiveCaption, 2, 1);
  pictures->setColumnStretch(0, 3);
  pictures->setColumnStretch(1, 2);
  pictures->setRowStretch(0, 1);

  m_cost = makeTable(kCostRows, 2, QStringLiteral("costTable"));
  m_cost->setVerticalHeaderLabels({tr("Messages, busiest device"), tr("Sent, busiest device"),
                                   tr("Sent on all links"), tr("Modeled time")});
  m_cost->verticalHeaderItem(kBusiestMessages)
      ->setToolTip(tr("Messages sent by the device that sends the most bytes"));
  m_cost->verticalHeaderItem(kAllLinksBytes)
      ->setToolTip(tr("Every device's bytes sent, added up: the traffic on all links"));
  m_cost->verticalHeaderItem(kModeledTime)
      ->setToolTip(tr("The all-reduce's critical path under the link model: latency per "
                      "message plus its bytes over the bandwidth"));
  m_cost->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_linkNote = new QLabel;
  m_linkNote->setObjectName(QStringLiteral("linkNote"));
  m_linkNote->setWordWrap(true);
  auto* costBox = new QGroupBox(tr("One all-reduce"));
  costBox->setToolTip(glossary::allReduce());
  auto* costLayout = new QVBoxLayout(costBox);
  costLayout->setContentsMargins(6, 4, 6, 6);
  costLayout->addWidget(m_cost);
  costLayout->addWidget(m_linkNote);

  m_measuredCaption = new QLabel;
  m_measuredCaption->setObjectName(QStringLiteral("measuredCaption"));
  m_measuredCaption->setWordWrap(true);
  m_measured = makeTable(0, kMeasuredColumns, QStringLiteral("measuredTable"));
  m_measured->verticalHeader()->hide();
  m_measured->setHorizontalHeaderLabels(
      {tr("Device"), tr("Measured"), tr("Model"), tr("Sent"), tr("Received")});
  m_measured->horizontalHeaderItem(kMeasuredTime)
      ->setToolTip(tr("The device's time in the gradient collectives (reduce-scatter and "
                      "all-gather, or one all-reduce), after it waited for the others"));
  m_measured->horizontalHeaderItem(kModelTime)
      ->setToolTip(tr("The link model's time for these collectives (every device ends each one "
                      "together)"));
  m_measured->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_measuredBox = new QGroupBox(tr("Last step, measured"));
  m_measuredBox->setObjectName(QStringLiteral("measuredBox"));
  auto* measuredLayout = new QVBoxLayout(m_measuredBox);
  measuredLayout->setContentsMargins(6, 4, 6, 6);
  measuredLayout->addWidget(m_measuredCaption);
  measuredLayout->addWidget(m_measured);

  m_body = new QWidget;
  auto* body = new QVBoxLayout(m_body);
  body->setContentsMargins(0, 0, 0, 0);
  body->setSpacing(6);
  body->addLayout(pictures, 1);
  body->addWidget(costBox);
  body->addWidget(m_measuredBox);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->setSpacing(6);
  layout->addWidget(m_header);
  layout->addWidget(m_message, 1);
  layout->addWidget(m_body, 1);
  connectSignals();
  clear();
}

CollectivesView::~CollectivesView() = default;

void CollectivesView::connectSignals() {
  connect(m_slider, &QSlider::valueChanged, this, [this] { updateStep(); });
  connect(m_slider, &QSlider::sliderPressed, this, [this] { setPlaying(false); });
  connect(m_previous, &QToolButton::clicked, this, [this] {
    setPlaying(false);
    setRingStep(ringStep() - 1);
  });
  connect(m_next, &QToolButton::clicked, this, [this] {
    setPlaying(false);
    setRingStep(ringStep() + 1);
  });
  connect(m_play, &QToolButton::clicked, this, [this] {
    if (isPlaying()) {
      setPlaying(false);
      return;
    }
    if (ringStep() >= ringStepCount()) setRingStep(0);
    setPlaying(true);
  });
  connect(m_timer, &QTimer::timeout, this, [this] {
    setRingStep(ringStep() + 1);
    if (ringStep() >= ringStepCount()) setPlaying(false);
  });
}

void CollectivesView::setSetup(const QStringList& deviceNames, CollectiveAlgorithm used,
                               int64_t elements, const LinkModel& link) {
  const bool same = m_hasSetup && deviceNames == m_names && used == m_used &&
                    elements == m_elements && link.latency_us == m_link.latency_us &&
                    link.gbps == m_link.gbps;
  if (same) return;
  m_names = deviceNames.mid(0, 64);
  m_used = used;
  m_elements = std::max<int64_t>(elements, 0);
  m_link = link;
  m_hasSetup = !m_names.isEmpty();
  m_hasMeasured = false;
  rebuild();
}

void CollectivesView::setModelParallelMesh(const QString& mesh) {
  if (mesh == m_modelParallelMesh) return;
  m_modelParallelMesh = mesh;
  rebuild();
}

void CollectivesView::showMeasured(const StepTrace& trace) {
  m_trace = trace;
  m_hasMeasured = true;
  for (const auto& spans : trace.spans)
    for (const TraceSpan& s : spans)
      if (s.kind == SpanKind::kCollective && s.op != CollectiveOp::kBroadcast) m_used = s.algorithm;
  m_ring->setUsed(m_used == CollectiveAlgorithm::kRing);
  m_naive->setUsed(m_used == CollectiveAlgorithm::kNaive);
  fillCostTable();
  fillMeasuredTable();
}

void CollectivesView::clear() {
  setPlaying(false);
  m_names.clear();
  m_elements = 0;
  m_link = {};
  m_hasSetup = false;
  m_hasMeasured = false;
  m_trace = {};
  rebuild();
}

void CollectivesView::rebuild() {
  setPlaying(false);
  const int n = static_cast<int>(m_names.size());
  if (!m_hasSetup)
    m_message->setText(
        tr("Choose two or more devices to see how DataParallel adds up their "
           "gradients in each step."));
  else if (n == 1)
    m_message->setText(
        tr("One device needs no collective: its gradients already cover the whole "
           "batch, so there is nothing to all-reduce. Choose two or more devices "
           "to compare ring and naive all-reduce."));
  if (!m_modelParallelMesh.isEmpty())
    m_message->setText(
        tr("This view draws DataParallel's gradient all-reduce. ModelParallel on a %1 mesh runs "
           "other collectives in each step: the activations are all-gathered along the model "
           "axis and the gradients reduced along the batch axis. The Device timeline shows "
           "each of them with its algorithm and bytes; pick DataParallel on the Devices tab to "
           "see the all-reduce here.")
            .arg(m_modelParallelMesh));
  const bool shown = m_hasSetup && n >= 2 && m_modelParallelMesh.isEmpty();
  m_message->setVisible(!shown);
  m_body->setVisible(shown);
  m_header->setVisible(shown);
  m_ring->setDevices(shown ? m_names : QStringList{}, m_elements);
  m_naive->setDevices(shown ? m_names : QStringList{}, m_elements);
  m_ring->setUsed(m_used == CollectiveAlgorithm::kRing);
  m_naive->setUsed(m_used == CollectiveAlgorithm::kNaive);
  m_header->setText(tr("All-reduce of the gradients: %1 floats (%2) on each of %3 devices.")
                        .arg(groupedCount(m_elements))
                        .arg(formatBytes(m_elements * int64_t(sizeof(float))))
                        .arg(n));
  const QString hub = m_names.value(0);
  const QString whole = formatBytes(m_elements * int64_t(sizeof(float)));
  m_naiveCaption->setText(
      n == 2 ? tr("%1 sends its whole buffer (%2) to %3, which adds it to its own and sends the "
                  "sum back.")
                   .arg(m_names.value(1), whole, hub)
             : tr("Each device sends its whole buffer (%1) to %2, which adds them up and sends "
                  "the sum back: %2 alone sends %3 messages of %1.")
                   .arg(whole, hub)
                   .arg(n - 1));
  {
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, ringStepCount());
    m_slider->setValue(0);
  }
  updateStep();
  fillCostTable();
  fillMeasuredTable();
}

int CollectivesView::ringStepCount() const { return m_ring->schedule().steps(); }
int CollectivesView::ringStep() const { return m_slider->value(); }
void CollectivesView::setRingStep(int step) {
  m_slider->setValue(std::clamp(step, 0, ringStepCount()));
}
bool CollectivesView::isPlaying() const { return m_timer->isActive(); }
QString CollectivesView::ringCaption() const { return m_ringCaption->text(); }
QString CollectivesView::message() const {
  return m_body->isHidden() ? m_message->text() : QString();
}

const CollectiveSchedule& CollectivesView::schedule(CollectiveAlgorithm algorithm) const {
  return algorithm == CollectiveAlgorithm::kRing ? m_ring->schedule() : m_naive->schedule();
}

void CollectivesView::setPlaying(bool playing) {
  if (playing)
    m_timer->start();
  else
    m_timer->stop();
  m_play->setText(playing ? tr("Pause") : tr("Play"));
}

void CollectivesView::updateStep() {
  const int step = ringStep(), steps = ringStepCount();
  const CollectiveSchedule& ring = m_ring->schedule();
  const int n = ring.devices();
  m_ring->setStep(step);
  m_stepLabel->setText(QStringLiteral("%1/%2").arg(step).arg(steps));
  m_previous->setEnabled(step > 0);
  m_next->setEnabled(step < steps);
  QString text;
  if (steps == 0) {
    text.clear();
  } else if (step == 0) {
    text = tr("Start: each device holds its own gradients, cut into %1 chunks. Press Play or step "
              "through the %2 steps: %3 of reduce-scatter, then %3 of all-gather. For a model of "
              "16,384 weights or more, DataParallel runs the optimizer update in between, so its "
              "all-gather carries updated weights.")
               .arg(n)
               .arg(steps)
               .arg(n - 1);
  } else {
    int64_t lo = INT64_MAX, hi = 0;
    for (const CollectiveMessage& m : ring.messages(step)) {
      lo = std::min(lo, m.bytes);
      hi = std::max(hi, m.bytes);
    }
    // Chunk sizes differ by at most one float: a range only when it shows.
    const QString size = formatBytes(lo) == formatBytes(hi)
                             ? formatBytes(lo)
                             : tr("%1 to %2").arg(formatBytes(lo), formatBytes(hi));
    const bool reduce = ring.is_reduce_scatter(step);
    const int k = reduce ? step : step - (n - 1);
    text = reduce ? tr("Reduce-scatter %1 of %2: each device sends one chunk of %3 to its right "
                       "neighbour, which adds it to its own.")
                        .arg(k)
                        .arg(n - 1)
                        .arg(size)
                  : tr("All-gather %1 of %2: each device passes one summed chunk of %3 to its "
                       "right neighbour, which keeps it.")
                        .arg(k)
                        .arg(n - 1)
                        .arg(size);
    if (step == n - 1) text += tr(" Now each device holds the full sum of one chunk.");
    if (step == steps) text += tr(" Now every device holds the whole sum.");
  }
  m_ringCaption->setText(keepHyphenated(text));
}

}  // namespace fitbench
