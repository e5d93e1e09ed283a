// CollectivesView's cost and measured tables, and its number formats.

#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QTableWidget>
#include <algorithm>

#include "core/distribution/collectives/collective_schedule.h"
#include "ui/common/plot_style.h"
#include "ui/common/text_style.h"
#include "ui/rehearsal/collectives_view.h"

namespace fitbench {
namespace {

constexpr CollectiveAlgorithm kAlgorithms[] = {CollectiveAlgorithm::kRing,
                                               CollectiveAlgorithm::kNaive};

// Heights the table to show its header and up to `rows` rows without scrolling.
void fitHeight(QTableWidget* table, int rows) {
  int height = 2 * table->frameWidth();
  if (!table->horizontalHeader()->isHidden())
    height += table->horizontalHeader()->sizeHint().height();
  for (int r = 0; r < std::min(table->rowCount(), rows); ++r) height += table->rowHeight(r);
  table->setFixedHeight(height);
}

QTableWidgetItem* numberItem(const QString& text, const QVariant& value, const QString& tip) {
  auto* item = new QTableWidgetItem(text);
  if (value.isValid()) item->setData(Qt::UserRole, value);
  item->setToolTip(tip);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QIcon deviceSwatch(const QColor& color) {
  QPixmap pixmap(10, 10);
  pixmap.fill(color);
  return QIcon(pixmap);
}

QString algorithmTitle(CollectiveAlgorithm a) {
  return a == CollectiveAlgorithm::kRing ? CollectivesView::tr("Ring")
                                         : CollectivesView::tr("Naive");
}

// One decimal below 100, none above: "1.3", "12.3", "412".
QString rounded(double v) { return QString::number(v, 'f', v < 100.0 ? 1 : 0); }

}  // namespace

QString CollectivesView::formatBytes(int64_t bytes) {
  if (bytes < 1000) return tr("%1 B").arg(bytes);
  const double v = static_cast<double>(bytes);
  if (v < 1e6) return tr("%1 kB").arg(rounded(v / 1e3));
  if (v < 1e9) return tr("%1 MB").arg(rounded(v / 1e6));
  return tr("%1 GB").arg(rounded(v / 1e9));
}

QString CollectivesView::formatMicroseconds(double us) {
  if (us < 1000.0) return tr("%1 µs").arg(QString::number(us, 'f', us < 10.0 ? 1 : 0));
  if (us < 1e6) return tr("%1 ms").arg(rounded(us / 1e3));
  return tr("%1 s").arg(rounded(us / 1e6));
}

void CollectivesView::fillCostTable() {
  const int n = static_cast<int>(m_names.size());
  for (int col = 0; col < 2; ++col) {
    const CollectiveAlgorithm a = kAlgorithms[col];
    const bool used = a == m_used;
    auto* header =
        new QTableWidgetItem(used ? tr("%1 (used)").arg(algorithmTitle(a)) : algorithmTitle(a));
    QFont font = m_cost->font();
    font.setBold(used);
    header->setFont(font);
    m_cost->setHorizontalHeaderItem(col, header);
    const CollectiveSchedule& s = schedule(a);
    const int busiest = s.busiest_device();
    const QString who = m_names.value(busiest);
    m_cost->setItem(kBusiestMessages, col,
                    numberItem(QString::number(s.messages_sent(busiest)), s.messages_sent(busiest),
                               tr("%1 sends the most bytes").arg(who)));
    m_cost->setItem(kBusiestBytes, col,
                    numberItem(formatBytes(s.bytes_sent(busiest)),
                               QVariant::fromValue<qint64>(s.bytes_sent(busiest)),
                               tr("%1 bytes, sent by %2").arg(s.bytes_sent(busiest)).arg(who)));
    m_cost->setItem(
        kAllLinksBytes, col,
        numberItem(formatBytes(s.total_bytes()), QVariant::fromValue<qint64>(s.total_bytes()),
                   tr("%1 bytes on all links together").arg(s.total_bytes())));
    const QString formula =
        a == CollectiveAlgorithm::kRing
            ? tr("2(N-1) = %1 steps, each one chunk of %2 floats: latency plus its bytes over "
                 "the bandwidth")
                  .arg(2 * (n - 1))
                  .arg((m_elements + std::max(n, 1) - 1) / std::max(n, 1))
            : tr("%1 receives N-1 = %2 whole buffers, then sends N-1: latency plus %3 bytes "
                 "over the bandwidth each")
                  .arg(m_names.value(0))
                  .arg(n - 1)
                  .arg(m_elements * int64_t(sizeof(float)));
    if (m_link.active()) {
      const double us = modeled_link_us(CollectiveOp::kAllReduce, a, n, m_elements, m_link);
      m_cost->setItem(kModeledTime, col, numberItem(formatMicroseconds(us), us, formula));
    } else {
      m_cost->setItem(kModeledTime, col, numberItem(tr("—"), {}, tr("The link is unlimited")));
    }
  }
  m_cost->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  m_cost->verticalHeader()->setDefaultSectionSize(m_cost->fontMetrics().height() + 8);
  fitHeight(m_cost, kCostRows);
  if (!m_link.active()) {
    m_linkNote->setText(
        tr("Link unlimited: set a latency or bandwidth in the Devices panel to model time."));
  } else {
    const QString latency = m_link.latency_us > 0.0
                                ? tr("%1 per message").arg(formatMicroseconds(m_link.latency_us))
                                : tr("no latency");
    const QString bandwidth = m_link.gbps > 0.0
                                  ? tr("%1 GB/s per link").arg(QString::number(m_link.gbps, 'g', 4))
                                  : tr("unlimited bandwidth");
    m_linkNote->setText(tr("Link: %1, %2.").arg(latency, bandwidth));
  }
}

void CollectivesView::fillMeasuredTable() {
  m_measuredBox->setVisible(m_hasMeasured);
  m_measured->setRowCount(0);
  if (!m_hasMeasured) return;
  const int devices = static_cast<int>(m_trace.spans.size());
  const CollectiveSchedule& model = schedule(m_used);
  const bool sameDevices = devices == model.devices();
  bool any = false;
  bool split = false;  // reduce-scatter + all-gather around a sharded update
  int most = 0;        // gradient collectives of one device in the step
  m_measured->setRowCount(devices);
  for (int d = 0; d < devices; ++d) {
    double us = 0.0, waited = 0.0, modelUs = 0.0;
    int64_t sent = 0, received = 0;
    int calls = 0;
    for (const TraceSpan& s : m_trace.spans[size_t(d)]) {
      if (s.kind == SpanKind::kWaiting) waited += s.duration_us;
      if (s.kind != SpanKind::kCollective || s.op == CollectiveOp::kBroadcast) continue;
      split = split || s.op != CollectiveOp::kAllReduce;
      us += s.duration_us;
      sent += s.bytes_sent;
      received += s.bytes_received;
      modelUs += modeled_link_us(s.op, m_used, devices, m_elements, m_link);
      ++calls;
    }
    any = any || calls > 0;
    most = std::max(most, calls);
    const QString name = m_names.value(d, tr("device %1").arg(d));
    auto* device = new QTableWidgetItem(deviceSwatch(plot::deviceColor(d)), name);
    m_measured->setItem(d, kDevice, device);
    if (calls == 0) {
      for (int c = kMeasuredTime; c < kMeasuredColumns; ++c)
        m_measured->setItem(d, c, numberItem(tr("—"), {}, tr("No collective on this device")));
      continue;
    }
    m_measured->setItem(d, kMeasuredTime,
                        numberItem(formatMicroseconds(us), us,
                                   tr("%1 µs, after waiting %2 µs for the others")
                                       .arg(us, 0, 'f', 1)
                                       .arg(waited, 0, 'f', 1)));
    if (m_link.active() && sameDevices) {
      m_measured->setItem(
          d, kModelTime,
          numberItem(formatMicroseconds(modelUs), modelUs,
                     tr("The link's modeled time; the rest is the exchange itself")));
    } else {
      m_measured->setItem(d, kModelTime,
                          numberItem(tr("—"), {}, tr("The link is unlimited: no modeled time")));
    }
    // A ring reduce-scatter + all-gather moves exactly the ring all-reduce's messages; the naive
    // pair goes through device 0 twice, which the all-reduce model above does not describe.
    const bool modeled = sameDevices && (!split || m_used == CollectiveAlgorithm::kRing);
    const auto bytesItem = [&](int64_t measured, int64_t model) {
      const bool matches = !modeled || measured == model;
      auto* item = numberItem(formatBytes(measured), QVariant::fromValue<qint64>(measured),
                              modeled ? tr("%1 bytes; the model: %2 bytes").arg(measured).arg(model)
                                      : tr("%1 bytes").arg(measured));
      if (!matches) item->setForeground(QColor(0xc0, 0x20, 0x20));
      return item;
    };
    m_measured->setItem(d, kSent, bytesItem(sent, modeled ? model.bytes_sent(d) : 0));
    m_measured->setItem(d, kReceived, bytesItem(received, modeled ? model.bytes_received(d) : 0));
  }
  const QString where = m_trace.epoch >= 0 ? tr("Step %1 (epoch %2, batch %3)")
                                                 .arg(m_trace.step + 1)
                                                 .arg(m_trace.epoch + 1)
                                                 .arg(m_trace.batch + 1)
                                           : tr("Step %1").arg(m_trace.step + 1);
  QString caption;
  if (!any)
    caption = tr("%1 had no all-reduce.").arg(where);
  else if (split)
    caption = tr("%1, %2 all-reduce split around the update (reduce-scatter of the gradients, each "
                 "device updates its part, all-gather of the weights): each device's time in "
                 "both and the bytes it moved.")
                  .arg(where, algorithm_name(m_used));
  else
    caption = tr("%1, %2 all-reduce: each device's time in it and the bytes it moved.")
                  .arg(where, algorithm_name(m_used));
  if (most > (split ? 2 : 1))
    caption += tr(" A device ran %1 collectives in this step: added up.").arg(most);
  m_measuredCaption->setText(keepHyphenated(caption));
  fitHeight(m_measured, 8);
}

}  // namespace fitbench
