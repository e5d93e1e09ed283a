// TimelineCanvas: lanes, span boxes, step captions, time axis and legend of the device timeline.

#include "ui/rehearsal/timeline_canvas.h"

#include <QEvent>
#include <QFontMetrics>
#include <QPaintEvent>
#include <QPainter>
#include <algorithm>
#include <array>
#include <cmath>

#include "ui/common/plot_style.h"

namespace fitbench {
namespace {

constexpr std::array<SpanKind, 6> kKinds = {SpanKind::kShardCopy,  SpanKind::kForward,
                                            SpanKind::kBackward,   SpanKind::kWaiting,
                                            SpanKind::kCollective, SpanKind::kUpdate};
constexpr int kCanvasMargin = 10;  // around the drawing
constexpr int kTextLeft = 20;      // a lane's text, right of the device's colour bar
constexpr int kPlotInset = 8;      // between the time area's edge and its first / last instant
constexpr double kMaxBox = 30.0;   // a span box's height at most
constexpr int kSwatch = 12;        // a legend swatch's side
const QColor kWaitingHatch(0x9a, 0x9a, 0x9a);

QString percent(double p) { return QString::number(p, 'f', 1) + QLatin1Char('%'); }

// Black or white, whichever reads better on `fill` (ITU-R BT.601 luma).
QColor inkOn(const QColor& fill) {
  const double luma = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
  return luma > 150.0 ? QColor(0x20, 0x20, 0x20) : Qt::white;
}

void fillSpan(QPainter& painter, const QRectF& rect, SpanKind kind) {
  painter.fillRect(rect, plot::spanColor(kind));
  if (kind == SpanKind::kWaiting) painter.fillRect(rect, QBrush(kWaitingHatch, Qt::BDiagPattern));
}

QFont boldOf(const QFont& font) {
  QFont bold = font;
  bold.setBold(true);
  return bold;
}

}  // namespace

double TimelineCanvas::Geometry::toX(double us) const {
  const double w = std::max(plot.width() - 2.0 * kPlotInset, 1.0);
  return plot.left() + kPlotInset + (us - t0) / (t1 - t0) * w;
}

QRectF TimelineCanvas::Geometry::laneRect(int device) const {
  return QRectF(lanes.left(), lanes.top() + device * laneHeight, lanes.width(), laneHeight);
}

TimelineCanvas::TimelineCanvas(const TraceStore* store, QWidget* parent)
    : QWidget(parent), m_store(store) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void TimelineCanvas::setDeviceNames(const QStringList& names) {
  m_names = names;
  updateGeometry();  // the minimum height grows with the lanes
  invalidate();
}

void TimelineCanvas::setStore(const TraceStore* store) {
  m_store = store;
  updateGeometry();
  invalidate();
}

void TimelineCanvas::setWindow(size_t first, size_t count) {
  m_first = first;
  m_count = count;
  invalidate();
}

void TimelineCanvas::setUsage(std::vector<DeviceUsage> usage) {
  m_usage = std::move(usage);
  update();  // the gutter's width does not depend on the numbers
}

void TimelineCanvas::refresh() { invalidate(); }

void TimelineCanvas::invalidate() {
  m_geometry.reset();
  update();
}

size_t TimelineCanvas::windowCount() const {
  const size_t size = m_store->size();
  return m_first < size ? std::min(m_count, size - m_first) : 0;
}

int TimelineCanvas::laneCount() const {
  return std::max(static_cast<int>(m_names.size()), m_store->devices());
}

QString TimelineCanvas::deviceName(int device) const {
  return device < m_names.size() ? m_names[device] : QStringLiteral("cpu:%1").arg(device);
}

QStringList TimelineCanvas::laneParts(int device) const {
  if (device < 0 || static_cast<size_t>(device) >= m_usage.size()) return {};
  const DeviceUsage& u = m_usage[static_cast<size_t>(device)];
  return {tr("busy %1").arg(percent(u.busy_percent())),
          tr("comm. %1").arg(percent(u.communication_percent())),
          tr("idle %1").arg(percent(u.idle_percent()))};
}

QString TimelineCanvas::laneText(int device) const {
  return laneParts(device).join(QStringLiteral(" · "));
}

QString TimelineCanvas::message() const {
  if (windowCount() > 0) return {};
  if (m_readyDevices == 1) return tr("Press Run to see what the device does in each step.");
  if (m_readyDevices > 1)
    return tr("Press Run to see what each of the %1 devices does in each step.")
        .arg(m_readyDevices);
  return tr("Run a distributed experiment to see what each device does in each step.");
}

void TimelineCanvas::setReadyDevices(int devices) {
  if (devices == m_readyDevices) return;
  m_readyDevices = devices;
  update();
}

QString TimelineCanvas::stepText(size_t i) const {
  const StepTrace& s = m_store->step(i);
  if (s.epoch < 0) return tr("Step %1").arg(s.step + 1);
  return tr("Epoch %1, batch %2 (step %3)").arg(s.epoch + 1).arg(s.batch + 1).arg(s.step + 1);
}

QString TimelineCanvas::kindText(SpanKind kind) {
  switch (kind) {
    case SpanKind::kShardCopy:
      return tr("shard copy");
    case SpanKind::kForward:
      return tr("forward");
    case SpanKind::kBackward:
      return tr("backward");
    case SpanKind::kCollective:
      return tr("collective");
    case SpanKind::kUpdate:
      return tr("update");
    case SpanKind::kWaiting:
      return tr("waiting");
  }
  return {};
}

QString TimelineCanvas::shortLabel(const QString& label) {
  // Collectives by their initials, as the literature writes them; the rest cut to a syllable.
  static const std::pair<const char*, const char*> kShort[] = {
      {"all-reduce", "AR"}, {"all-gather", "AG"}, {"reduce-scatter", "RS"},
      {"broadcast", "BC"},  {"update", "upd"},    {"forward", "fwd"},
      {"backward", "bwd"},  {"waiting", "wait"},  {"shard copy", "copy"}};
  for (const auto& [full, brief] : kShort)
    if (label == QLatin1String(full)) return QString::fromLatin1(brief);
  return label;
}

QSize TimelineCanvas::sizeHint() const { return {900, 260}; }

QSize TimelineCanvas::minimumSizeHint() const {
  // The legend, the step captions and the time axis (a line each, the legend two where it
  // wraps), then a line per lane: in a 240 px dock four lanes fit without scrolling.
  const QFontMetrics fm(font());
  const int line = fm.height();
  int legend = 0;  // one row's width: a swatch, its word and a gap per kind
  for (SpanKind kind : {SpanKind::kShardCopy, SpanKind::kForward, SpanKind::kBackward,
                        SpanKind::kCollective, SpanKind::kUpdate})
    legend += line + fm.horizontalAdvance(kindText(kind)) + 2 * line;
  legend += line + fm.horizontalAdvance(tr("waiting")) + 2 * line;
  const int legendRows = width() > 0 && width() < legend ? 2 : 1;
  return {320, (2 + legendRows) * line + 26 + std::max(laneCount(), 1) * (line + 4)};
}

// ---- layout ----

const TimelineCanvas::Geometry& TimelineCanvas::geometry() const {
  if (m_geometry) return *m_geometry;
  m_geometry.emplace();
  Geometry& g = *m_geometry;
  g.line = QFontMetrics(font()).height();
  const int lanes = laneCount();
  const size_t count = windowCount();
  if (count == 0 || lanes == 0) return g;

  // The rows of this widget a scroll area shows (all of it outside one, or hidden): the legend and
  // captions go at the top of those, the axis at their bottom; the lanes are laid out on the whole
  // height.
  int shownTop = 0, shownBottom = height();
  if (const QWidget* parent = parentWidget(); parent && isVisible()) {
    shownTop = std::clamp(-y(), 0, height());
    shownBottom = std::clamp(parent->height() - y(), shownTop, height());
  }
  layoutLegend(g, kCanvasMargin / 2);
  const int headerTop = g.legend.bottom() + 1 + 6;
  const int lanesTop = headerTop + g.line + 2;
  const int axisHeight = g.line + 8;
  const int lanesBottom = height() - axisHeight - kCanvasMargin / 2;
  g.laneHeight = std::max(static_cast<double>(lanesBottom - lanesTop) / lanes, 4.0);
  const int lanesHeight = static_cast<int>(std::lround(g.laneHeight * lanes));
  g.lanes = QRect(0, lanesTop, width(), lanesHeight);
  layoutGutter(g);  // sets plot's left and width
  if (shownTop > 0) {
    g.legendItems.clear();
    layoutLegend(g, shownTop + kCanvasMargin / 2);
    g.scrolled = true;
  }
  g.header = QRect(g.plot.left(), headerTop + shownTop, g.plot.width(), g.line);
  const int axisTop =
      std::min(lanesTop + lanesHeight, shownBottom - axisHeight - kCanvasMargin / 2);
  g.axis = QRect(g.plot.left(), axisTop, g.plot.width(), axisHeight);
  const int shownLanesTop = lanesTop + shownTop;
  g.shown = QRect(0, shownLanesTop, width(), std::max(axisTop - shownLanesTop, 0));

  // The window's time range and each step's start.
  bool any = false;
  for (size_t i = m_first; i < m_first + count; ++i) {
    double begin = 0.0;
    bool seen = false;
    for (const auto& spans : m_store->step(i).spans)
      for (const TraceSpan& s : spans) {
        if (!seen || s.begin_us < begin) begin = s.begin_us;
        seen = true;
        if (!any || s.begin_us < g.t0) g.t0 = s.begin_us;
        if (!any || s.end_us() > g.t1) g.t1 = s.end_us();
        any = true;
      }
    g.stepBegin.push_back(seen ? begin : (g.stepBegin.empty() ? 0.0 : g.stepBegin.back()));
  }
  if (!any) g.t0 = 0.0;
  if (!(g.t1 > g.t0)) g.t1 = g.t0 + 1.0;
  g.unit = g.t1 - g.t0 >= 1000.0 ? 1000.0 : 1.0;
  layoutBoxes(g);
  return g;
}

void TimelineCanvas::layoutGutter(Geometry& g) const {
  const QFontMetrics fm(font());
  const QFontMetrics fmBold(boldOf(font()));
  for (int d = 0; d < laneCount(); ++d)
    g.nameWidth = std::max(g.nameWidth, fmBold.horizontalAdvance(deviceName(d)));
  // The widest texts, so the gutter keeps its width as the numbers change.
  const int usage = fm.horizontalAdvance(tr("busy 100.0% · comm. 100.0% · idle 100.0%"));
  const int part = fm.horizontalAdvance(tr("comm. 100.0%"));
  const int title = fm.horizontalAdvance(tr("Time (µs)"));
  const int most = width() * 40 / 100 - kTextLeft - 10;  // the text's widest
  const bool twoLines = g.laneHeight >= 2 * g.line + 6;
  int text = g.nameWidth;
  if (twoLines && std::max(g.nameWidth, usage) <= most) {
    g.gutter = Gutter::kBelow;
    text = std::max(g.nameWidth, usage);
  } else if (g.laneHeight >= 4 * g.line + 6) {
    g.gutter = Gutter::kStacked;
    text = std::max(g.nameWidth, part);
  } else if (twoLines) {
    g.gutter = Gutter::kBelow;  // elided; the lane's tooltip has it all
    text = std::max(g.nameWidth, most);
  } else {
    g.gutter = Gutter::kInline;
    g.usageShown = g.nameWidth + 12 + usage <= most;
    if (g.usageShown) text = g.nameWidth + 12 + usage;
  }
  const int gutter = std::max(kTextLeft + text + 10, kCanvasMargin + title + 12);
  g.plot = QRect(gutter, g.lanes.top(), std::max(width() - gutter - kCanvasMargin, 10),
                 g.lanes.height());
}

void TimelineCanvas::layoutLegend(Geometry& g, int top) const {
  const QFontMetrics fm(font());
  const int right = width() - kCanvasMargin;
  int x = kCanvasMargin;
  int y = top;
  for (SpanKind kind : kKinds) {
    const int w = kSwatch + 5 + fm.horizontalAdvance(kindText(kind));
    if (x > kCanvasMargin && x + w > right) {  // the next row
      x = kCanvasMargin;
      y += g.line + 2;
    }
    g.legendItems.push_back({QRectF(x, y, w, g.line), kind});
    x += w + 18;
  }
  g.legend = QRect(kCanvasMargin, top, right - kCanvasMargin, y + g.line - top);
}

void TimelineCanvas::layoutBoxes(Geometry& g) const {
  const double boxHeight = g.laneHeight >= 2 * g.line + 6 ? std::min(g.laneHeight - 10.0, kMaxBox)
                                                          : std::max(g.laneHeight - 4.0, 2.0);
  const size_t count = windowCount();
  const int lanes = laneCount();
  for (size_t i = m_first; i < m_first + count; ++i) {
    const StepTrace& step = m_store->step(i);
    const int devices = std::min(lanes, static_cast<int>(step.spans.size()));
    for (int d = 0; d < devices; ++d) {
      const double centre = g.laneRect(d).center().y();
      const auto& spans = step.spans[static_cast<size_t>(d)];
      for (size_t k = 0; k < spans.size(); ++k) {
        const double x0 = g.toX(spans[k].begin_us);
        const double x1 = g.toX(spans[k].end_us());
        const QRectF rect(x0, centre - boxHeight / 2.0, std::max(x1 - x0, 1.0), boxHeight);
        g.boxes.push_back({d, i, k, spans[k].kind, rect});
      }
    }
  }
}

QRect TimelineCanvas::timeAxisRect() const { return geometry().axis; }

const std::vector<TimelineCanvas::SpanBox>& TimelineCanvas::boxes() const {
  return geometry().boxes;
}

// ---- hit tests ----

const TimelineCanvas::SpanBox* TimelineCanvas::boxAt(const QPointF& pos) const {
  if (!QRectF(geometry().shown).contains(pos)) return nullptr;  // under the legend or the axis
  const SpanBox* nearest = nullptr;
  double best = 3.5;
  bool inside = false;
  for (const SpanBox& b : geometry().boxes) {
    if (pos.y() < b.rect.top() || pos.y() > b.rect.bottom()) continue;
    if (b.rect.contains(pos)) {
      const double distance = std::abs(pos.x() - b.rect.center().x());
      if (!inside || distance < best) {
        best = distance;
        nearest = &b;
      }
      inside = true;
    } else if (!inside) {
      const double distance =
          pos.x() < b.rect.left() ? b.rect.left() - pos.x() : pos.x() - b.rect.right();
      if (distance < best) {
        best = distance;
        nearest = &b;
      }
    }
  }
  return nearest;
}

int TimelineCanvas::laneLabelAt(const QPointF& pos) const {
  const Geometry& g = geometry();
  if (g.plot.isEmpty() || pos.x() >= g.plot.left() || !QRectF(g.shown).contains(pos)) return -1;
  for (int d = 0; d < laneCount(); ++d)
    if (g.laneRect(d).contains(pos)) return d;
  return -1;
}

std::optional<SpanKind> TimelineCanvas::legendAt(const QPointF& pos) const {
  for (const LegendItem& item : geometry().legendItems)
    if (item.rect.contains(pos)) return item.kind;
  return std::nullopt;
}

// ---- painting ----

void TimelineCanvas::resizeEvent(QResizeEvent* event) {
  m_geometry.reset();
  QWidget::resizeEvent(event);
}

void TimelineCanvas::moveEvent(QMoveEvent* event) {
  invalidate();  // the legend, captions and axis follow what is shown
  QWidget::moveEvent(event);
}

bool TimelineCanvas::event(QEvent* event) {
  // A scroll area's viewport that changes height moves where the axis goes.
  if (event->type() == QEvent::ParentAboutToChange && parentWidget())
    parentWidget()->removeEventFilter(this);
  if (event->type() == QEvent::ParentChange && parentWidget()) {
    parentWidget()->installEventFilter(this);
    invalidate();
  }
  // The layout depends on whether the widget is shown (the sticky rows follow what is shown).
  if (event->type() == QEvent::Show || event->type() == QEvent::Hide) m_geometry.reset();
  return QWidget::event(event);
}

bool TimelineCanvas::eventFilter(QObject* watched, QEvent* event) {
  if (watched == parentWidget() && event->type() == QEvent::Resize) invalidate();
  return QWidget::eventFilter(watched, event);
}

void TimelineCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  const QString text = message();
  if (!text.isEmpty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    const int w = std::min(width() - 24, 320);
    painter.drawText(QRect((width() - w) / 2, 12, w, height() - 24),
                     Qt::AlignCenter | Qt::TextWordWrap, text);
    return;
  }
  const Geometry& g = geometry();
  drawLanes(painter, g);
  drawSteps(painter, g);
  drawBoxes(painter, g);
  coverBands(painter, g);
  drawCaptions(painter, g);
  drawAxis(painter, g);
  drawLegend(painter, g);
}

void TimelineCanvas::coverBands(QPainter& painter, const Geometry& g) const {
  painter.setPen(palette().color(QPalette::Mid));
  if (g.scrolled) {
    painter.fillRect(QRect(0, 0, width(), g.shown.top()), palette().window());
    painter.drawLine(QPointF(g.plot.left(), g.shown.top()), QPointF(g.plot.right(), g.shown.top()));
  }
  if (g.axis.top() < g.lanes.bottom()) {
    painter.fillRect(QRect(0, g.axis.top(), width(), height() - g.axis.top()), palette().window());
    painter.drawLine(QPointF(g.plot.left(), g.axis.top()), QPointF(g.plot.right(), g.axis.top()));
  }
}

void TimelineCanvas::drawLanes(QPainter& painter, const Geometry& g) const {
  painter.fillRect(g.plot, palette().base());
  const QFontMetrics fm(font());
  const int textWidth = g.plot.left() - kTextLeft - 8;
  for (int d = 0; d < laneCount(); ++d) {
    const QRectF lane = g.laneRect(d);
    const QRectF time(g.plot.left(), lane.top(), g.plot.width(), lane.height());
    if (d % 2 == 1) painter.fillRect(time, QColor(0xf4, 0xf5, 0xf7));
    painter.setPen(QColor(0xdd, 0xdd, 0xdd));
    if (d > 0)
      painter.drawLine(QPointF(kCanvasMargin, lane.top()), QPointF(time.right(), lane.top()));
    // The device's colour as a bar, its name, and its usage where the gutter has room.
    const QColor color = plot::deviceColor(d);
    painter.fillRect(QRectF(kCanvasMargin, lane.top() + 3, 4, lane.height() - 6), color);
    QStringList lines;
    if (g.gutter == Gutter::kBelow) lines = QStringList{laneText(d)};
    if (g.gutter == Gutter::kStacked) lines = laneParts(d);
    const double top = lane.center().y() - (1 + lines.size()) * g.line / 2.0;
    painter.setFont(boldOf(font()));
    painter.setPen(color.darker(115));
    painter.drawText(QRectF(kTextLeft, top, textWidth, g.line), Qt::AlignLeft | Qt::AlignVCenter,
                     deviceName(d));
    painter.setFont(font());
    painter.setPen(palette().color(QPalette::Text));
    if (g.gutter == Gutter::kInline && g.usageShown)
      painter.drawText(QRectF(kTextLeft + g.nameWidth + 12, top, textWidth, g.line),
                       Qt::AlignLeft | Qt::AlignVCenter, laneText(d));
    for (qsizetype i = 0; i < lines.size(); ++i)
      painter.drawText(QRectF(kTextLeft, top + (i + 1) * g.line, textWidth, g.line),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(lines[i], Qt::ElideRight, textWidth));
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(g.plot.adjusted(0, 0, -1, -1));
}

void TimelineCanvas::drawSteps(QPainter& painter, const Geometry& g) const {
  // Light grid lines at the ticks, then a dashed line where each step starts.
  painter.setPen(QColor(0xec, 0xec, 0xec));
  for (double v : plot::ticks({0.0, (g.t1 - g.t0) / g.unit}, std::max(2, g.plot.width() / 110))) {
    const double x = g.toX(g.t0 + v * g.unit);
    painter.drawLine(QPointF(x, g.plot.top() + 1), QPointF(x, g.plot.bottom() - 1));
  }
  painter.setPen(QPen(QColor(0x80, 0x80, 0x80), 1.0, Qt::DashLine));
  for (double begin : g.stepBegin)
    painter.drawLine(QPointF(g.toX(begin), g.plot.top()), QPointF(g.toX(begin), g.plot.bottom()));
}

void TimelineCanvas::drawCaptions(QPainter& painter, const Geometry& g) const {
  const QFontMetrics fm(font());
  const size_t count = g.stepBegin.size();
  for (size_t j = 0; j < count; ++j) {
    const double x = g.toX(g.stepBegin[j]);
    const double next = j + 1 < count ? g.toX(g.stepBegin[j + 1]) : g.plot.right();
    painter.setPen(QPen(QColor(0x80, 0x80, 0x80), 1.0, Qt::DashLine));
    painter.drawLine(QPointF(x, g.header.top()), QPointF(x, g.shown.top()));
    // The step's caption, shortened to what fits before the next step.
    const int room = static_cast<int>(next - x) - 8;
    const StepTrace& step = m_store->step(m_first + j);
    QString caption = stepText(m_first + j);
    if (fm.horizontalAdvance(caption) > room && step.epoch >= 0)
      caption = tr("Batch %1 (step %2)").arg(step.batch + 1).arg(step.step + 1);
    if (fm.horizontalAdvance(caption) > room) caption = tr("step %1").arg(step.step + 1);
    if (fm.horizontalAdvance(caption) > room) continue;
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRectF(x + 4, g.header.top(), room, g.line), Qt::AlignLeft | Qt::AlignVCenter,
                     caption);
  }
}

void TimelineCanvas::drawBoxes(QPainter& painter, const Geometry& g) const {
  const QFontMetrics fm(font());
  painter.save();
  painter.setClipRect(g.plot.adjusted(1, 1, -1, -1));
  for (const SpanBox& b : g.boxes) {
    const QColor color = plot::spanColor(b.kind);
    fillSpan(painter, b.rect, b.kind);
    if (b.rect.width() >= 4.0) {
      painter.setPen(color.darker(135));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(b.rect.adjusted(0.5, 0.5, -0.5, -0.5));
    }
    if (b.rect.height() < g.line) continue;
    const TraceSpan& span = m_store->step(b.step).spans[static_cast<size_t>(b.device)][b.span];
    QString label = kindText(b.kind);
    if (b.kind == SpanKind::kCollective)  // its operation: all-reduce, reduce-scatter, ...
      label = QString::fromLatin1(span_label(span)).replace(QLatin1Char('_'), QLatin1Char('-'));
    // A narrow span takes its short name (AR, AG, RS; upd, fwd, ...); the tooltip has the rest.
    if (fm.horizontalAdvance(label) + 8 > b.rect.width()) label = shortLabel(label);
    if (fm.horizontalAdvance(label) + 8 > b.rect.width()) continue;
    painter.setPen(inkOn(color));
    painter.drawText(b.rect, Qt::AlignCenter, label);
  }
  painter.restore();
}

void TimelineCanvas::drawAxis(QPainter& painter, const Geometry& g) const {
  painter.setPen(palette().color(QPalette::Text));
  for (double v : plot::ticks({0.0, (g.t1 - g.t0) / g.unit}, std::max(2, g.plot.width() / 110))) {
    const double x = g.toX(g.t0 + v * g.unit);
    painter.drawLine(QPointF(x, g.axis.top()), QPointF(x, g.axis.top() + 4));
    painter.drawText(QRectF(x - 50, g.axis.top() + 5, 100, g.line), Qt::AlignHCenter,
                     plot::tickLabel(v));
  }
  const QString title = g.unit > 1.0 ? tr("Time (ms)") : tr("Time (µs)");
  painter.drawText(
      QRectF(kCanvasMargin, g.axis.top() + 5, g.plot.left() - kCanvasMargin - 8, g.line),
      Qt::AlignRight | Qt::AlignVCenter, title);
}

void TimelineCanvas::drawLegend(QPainter& painter, const Geometry& g) const {
  for (const LegendItem& item : g.legendItems) {
    const QRectF swatch(item.rect.left(), item.rect.center().y() - kSwatch / 2.0, kSwatch, kSwatch);
    fillSpan(painter, swatch, item.kind);
    painter.setPen(plot::spanColor(item.kind).darker(135));
    painter.drawRect(swatch.adjusted(0.5, 0.5, -0.5, -0.5));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(item.rect.adjusted(kSwatch + 5, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter,
                     kindText(item.kind));
  }
}

}  // namespace fitbench
