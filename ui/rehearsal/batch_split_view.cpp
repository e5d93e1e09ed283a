// BatchSplitView: the widget, its layout pass and the batches' shards (one device, DataParallel);
// the ModelParallel half is in batch_split_mesh.cpp.

#include "ui/rehearsal/batch_split_view.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QToolTip>
#include <cmath>

#include "core/distribution/spec/strategies.h"
#include "ui/common/glossary.h"
#include "ui/common/plot_style.h"
#include "ui/common/text_style.h"
#include "ui/rehearsal/batch_split_canvas.h"

namespace fitbench {

using batchsplit::kMargin;

namespace {

constexpr int kBarWidth = 36;         // the batch column
constexpr double kMaxRowHeight = 18;  // one row of a batch, at most

QColor errorColor() { return QColor(0xc0, 0x39, 0x2b); }

// "A\n\nB" as a tooltip that wraps: one paragraph per part.
QString richTip(const QString& text) {
  QString html;
  for (const QString& part : text.split(QStringLiteral("\n\n")))
    html += QStringLiteral("<p>") + part.toHtmlEscaped() + QStringLiteral("</p>");
  return html;
}

}  // namespace

BatchSplitView::BatchSplitView(QWidget* parent) : QWidget(parent) {
  // The policy's flag, not only hasHeightForWidth(): a resizable QScrollArea reads the policy to
  // make the view as tall as heightForWidth asks and scroll the rest.
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

BatchSplitView::~BatchSplitView() = default;

std::vector<int64_t> BatchSplitView::shardRows(int64_t rows, int devices) {
  return batchsplit::shardRows(rows, devices);
}

void BatchSplitView::setPlan(const BatchSplitPlan& plan) {
  m_plan = plan;
  m_hasPlan = true;
  const bool modelParallel = plan.strategy == kModelParallel;
  m_mesh = modelParallel ? batchsplit::meshPlacement(plan) : MeshPlacement{};
  m_slices.clear();
  if (modelParallel && plan.errors.empty()) m_slices = batchsplit::variableSlices(plan, m_mesh);
  m_batches = batchsplit::plannedBatches(plan);
  m_caption = batchsplit::plannedCaption(plan);
  updateGeometry();
  update();
}

void BatchSplitView::showStep(const StepTrace& step) {
  if (!m_hasPlan) return;
  m_batches = {batchsplit::liveBatch(m_plan, step)};
  m_caption = batchsplit::liveCaption(m_plan, step, m_batches.front().rows);
  update();
}

void BatchSplitView::clear() {
  m_hasPlan = false;
  m_plan = BatchSplitPlan{};
  m_mesh = MeshPlacement{};
  m_caption.clear();
  m_batches.clear();
  m_slices.clear();
  updateGeometry();
  update();
}

QStringList BatchSplitView::errorLines() const {
  QStringList out;
  if (m_plan.strategy == kModelParallel)
    for (const auto& e : m_plan.errors) out << QString::fromStdString(e.text());
  return out;
}

QString BatchSplitView::toolTipAt(const QPoint& pos) const {
  std::vector<std::pair<QRect, QString>> tips;
  Canvas canvas(*this, nullptr, &tips);
  render(canvas, width(), height());
  for (auto it = tips.rbegin(); it != tips.rend(); ++it)
    if (it->first.contains(pos)) return it->second;
  return {};
}

QSize BatchSplitView::sizeHint() const { return {380, heightForWidth(380)}; }

int BatchSplitView::heightForWidth(int width) const {
  Canvas canvas(*this, nullptr, nullptr);
  return render(canvas, width, 0);
}

void BatchSplitView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  Canvas canvas(*this, &painter, nullptr);
  render(canvas, width(), height());
}

bool BatchSplitView::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const QString text = toolTipAt(help->pos());
  if (text.isEmpty()) {
    QToolTip::hideText();
    event->ignore();
  } else {
    QToolTip::showText(help->globalPos(), richTip(text), this);
  }
  return true;
}

int BatchSplitView::render(Canvas& c, int width, int height) const {
  const int w = std::max(width - 2 * kMargin, 120);
  int y = kMargin;
  if (!m_hasPlan) {
    y += c.text(QRect(kMargin, y + 20, w, 0),
                tr("Open an experiment to see how its batches are split over the devices."),
                c.quiet(), false, Qt::AlignHCenter);
    return y + 20 + kMargin;
  }
  const int devices = batchsplit::deviceCount(m_plan);
  QString title, about;
  if (m_plan.strategy == kModelParallel) {
    const auto& s = m_plan.meshShape;
    title = s.size() == 2 ? tr("ModelParallel on a %1 × %2 mesh").arg(s[0]).arg(s[1])
                          : tr("ModelParallel on %1 devices").arg(m_mesh.device.size());
    about = glossary::modelParallel();
  } else if (m_plan.strategy == kDataParallel) {
    title = devices == 1 ? tr("DataParallel on 1 device")
                         : tr("DataParallel on %1 devices").arg(devices);
    about = glossary::dataParallel();
  } else {
    title = tr("One device: %1").arg(batchsplit::deviceName(m_plan, 0));
    about = glossary::device();
  }
  const int titleHeight = c.text(QRect(kMargin, y, w, 0), title, c.ink(), true);
  c.tip(QRect(kMargin, y, w, titleHeight), about);
  y += titleHeight + 2;
  y += c.text(QRect(kMargin, y, w, 0), m_caption, c.ink()) + 10;
  if (const QString note = statisticsNote(); !note.isEmpty())
    y += c.text(QRect(kMargin, y, w, 0), note, c.ink()) + 10;
  if (m_plan.strategy != kModelParallel) return renderBatches(c, y, width, height) + kMargin;
  const QStringList errors = errorLines();
  if (!errors.isEmpty()) {
    y += c.text(QRect(kMargin, y, w, 0), tr("This layout cannot run:"), errorColor(), true) + 4;
    for (const QString& e : errors) y += c.text(QRect(kMargin, y, w, 0), e, errorColor()) + 4;
    return y + kMargin;
  }
  y = renderMesh(c, y, width);
  return renderVariables(c, y, width) + kMargin;
}

int BatchSplitView::renderBatches(Canvas& c, int y, int width, int height) const {
  const int w = width - 2 * kMargin;
  const int n = static_cast<int>(m_batches.size());
  if (n == 0) return y;
  const QString note = keepHyphenated(
      m_plan.strategy.empty()
          ? tr("One device trains on every row of each batch and holds the whole model.")
          : tr("Every device holds a full replica of the model; after each step the devices "
               "all-reduce their gradients, so the replicas stay identical (a larger model: "
               "reduce-scatter, each device updates its part, all-gather)."));
  const int noteHeight = c.measure(w, note);
  // Columns side by side; titles first.
  constexpr int kGap = 14;
  const int colWidth = std::max((w - kGap * (n - 1)) / n, kBarWidth + 60);
  int titleHeight = 0;
  for (int i = 0; i < n; ++i) {
    const BatchSplit& b = m_batches[static_cast<size_t>(i)];
    const QRect box(kMargin + i * (colWidth + kGap), y, colWidth, 0);
    titleHeight = std::max(
        titleHeight,
        c.text(box, b.title + QStringLiteral(" · ") + batchsplit::rowsText(b.rows), c.ink(), true));
  }
  y += titleHeight + 6;
  // One row height for every column, so a partial batch looks shorter than a full one.
  // The largest batch the data gives, not the nominal batch size (which may exceed the data).
  int64_t longest = batchsplit::largestBatch(m_plan);
  for (const auto& b : m_batches) longest = std::max(longest, b.rows);
  const double room = height > 0 ? std::max(120, height - y - noteHeight - kMargin - 12) : 300;
  const double rowHeight = std::min(kMaxRowHeight, room / static_cast<double>(longest));
  const int line = c.lineHeight();
  int bottom = y + static_cast<int>(std::ceil(rowHeight * static_cast<double>(longest)));
  for (int i = 0; i < n; ++i) {
    const BatchSplit& b = m_batches[static_cast<size_t>(i)];
    const int x = kMargin + i * (colWidth + kGap);
    const int labelX = x + kBarWidth + 16, labelWidth = colWidth - kBarWidth - 16;
    QPainter* p = c.painter;
    if (p && b.partial) {  // the rows a full batch would have, dashed
      p->setPen(QPen(c.quiet(), 1.0, Qt::DashLine));
      p->setBrush(Qt::NoBrush);
      p->drawRect(QRectF(x + 0.5, y + 0.5, kBarWidth - 1.0, rowHeight * double(longest) - 1.0));
    }
    int64_t offset = 0;
    int labelTop = y;
    for (size_t d = 0; d < b.parts.size(); ++d) {
      const int64_t rows = b.parts[d];
      const QRectF shard(x, y + rowHeight * double(offset), kBarWidth, rowHeight * double(rows));
      const QColor color = plot::deviceColor(static_cast<int>(d));
      const QString name = batchsplit::deviceName(m_plan, static_cast<int>(d));
      const int labelY = std::max(static_cast<int>(shard.center().y()) - line / 2, labelTop);
      const QRect label(labelX, labelY, labelWidth, line);
      labelTop = labelY + line;
      if (p) {
        p->fillRect(shard, color);
        if (rowHeight >= 5.0) {  // the rows inside the shard
          p->setPen(QPen(color.lighter(130), 1.0));
          for (int64_t r = 1; r < rows; ++r)
            p->drawLine(QPointF(x, shard.top() + rowHeight * double(r)),
                        QPointF(x + kBarWidth, shard.top() + rowHeight * double(r)));
        }
        p->setRenderHint(QPainter::Antialiasing);
        p->setPen(QPen(color, 1.5));
        p->drawLine(QPointF(x + kBarWidth + 2, shard.center().y()),
                    QPointF(labelX - 3, label.center().y() + 0.5));
        p->setRenderHint(QPainter::Antialiasing, false);
      }
      c.line(label, name + QStringLiteral(" · ") + batchsplit::rowsText(rows),
             rows > 0 ? c.ink() : c.quiet());
      const QString tip =
          tr("%1 trains on %2 of this batch (%3).")
              .arg(name, batchsplit::rowRange(offset, rows), batchsplit::rowsText(rows)) +
          QStringLiteral("\n\n") + glossary::shard();
      c.tip(shard.toAlignedRect(), tip);
      c.tip(label, tip);
      offset += rows;
    }
    if (p) {  // white seams between shards, then the batch's outline
      p->setPen(QPen(Qt::white, 2.0));
      int64_t at = 0;
      for (size_t d = 0; d + 1 < b.parts.size(); ++d) {
        at += b.parts[d];
        if (at > 0 && at < b.rows)
          p->drawLine(QPointF(x, y + rowHeight * double(at)),
                      QPointF(x + kBarWidth, y + rowHeight * double(at)));
      }
      p->setPen(QPen(c.palette.color(QPalette::Mid), 1.0));
      p->drawRect(QRectF(x, y, kBarWidth, rowHeight * double(b.rows)));
    }
    bottom = std::max(bottom, labelTop);
  }
  y = bottom + 12;
  const int h = c.text(QRect(kMargin, y, w, 0), note, c.quiet());
  if (!m_plan.strategy.empty()) c.tip(QRect(kMargin, y, w, h), glossary::replica());
  return y + h;
}

}  // namespace fitbench
