// CollectivesDiagram: devices on a circle (cpu:0 at the top, then clockwise), buffers as chunk
// strips, and the messages of the ring's step or of the naive star.

#include "ui/rehearsal/collectives_diagram.h"

#include <QFontMetricsF>
#include <QPaintEvent>
#include <QPainter>
#include <QPolygonF>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ui/common/glossary.h"
#include "ui/common/plot_style.h"

namespace fitbench {
namespace {

constexpr double kCellHeight = 12.0;

QFont smallFont(const QFont& base) {
  QFont f = base;
  f.setPointSizeF(base.pointSizeF() * 0.85);
  return f;
}

// The part of a path's points outside both rectangles: from the first point past `from` to the
// last one before `to`.
QPolygonF between(const QPolygonF& points, const QRectF& from, const QRectF& to) {
  qsizetype i = 0, j = points.size() - 1;
  while (i < j && from.contains(points[i])) ++i;
  while (j > i && to.contains(points[j])) --j;
  return points.mid(i, j - i + 1);
}

// A polyline with an arrowhead at its last point.
void drawArrow(QPainter& painter, const QPolygonF& line, const QColor& color, double width) {
  if (line.size() < 2) return;
  const QPointF tip = line.back();
  const QPointF d = tip - line[line.size() - 2];
  const double length = std::hypot(d.x(), d.y());
  if (length <= 0.0) return;
  const QPointF u = d / length, v(-u.y(), u.x());
  const double head = 4.0 + 1.5 * width;
  QPolygonF shaft = line;
  shaft.back() = tip - u * head * 0.8;  // the shaft stops inside the head, not past its point
  painter.setPen(QPen(color, width, Qt::SolidLine, Qt::FlatCap, Qt::RoundJoin));
  painter.setBrush(Qt::NoBrush);
  painter.drawPolyline(shaft);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  painter.drawPolygon(
      QPolygonF({tip, tip - u * head + v * head * 0.55, tip - u * head - v * head * 0.55}));
}

// A small label on a coloured pill, centred at `centre`.
void drawPill(QPainter& painter, const QPointF& centre, const QString& text, const QColor& color) {
  const QFontMetricsF fm(painter.font());
  const QSizeF size(fm.horizontalAdvance(text) + 8, fm.height());
  const QRectF r(centre - QPointF(size.width() / 2, size.height() / 2), size);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  painter.drawRoundedRect(r, size.height() / 2, size.height() / 2);
  painter.setPen(Qt::white);
  painter.drawText(r, Qt::AlignCenter, text);
}

// The naive picture's boxes on a fan: device 0 at the top centre, the others on the lower half of
// an ellipse around it, from left to right, so that every arrow runs straight to device 0 and
// none crosses another box. Empty when the boxes would touch (the caller then uses rows).
std::vector<QPointF> naiveFan(const QRectF& area, double boxWidth, double boxHeight, int n) {
  const int others = n - 1;
  const QPointF hub(area.center().x(), area.top() + boxHeight / 2);
  const double rx = area.width() / 2 - boxWidth / 2;
  const double ry = area.bottom() - boxHeight / 2 - hub.y();
  if (rx < 16.0 || ry < 2.5 * boxHeight) return {};
  // A quarter turn between neighbours at most, and over 108 degrees when that fits; wider fans
  // (to 144 degrees) for more devices, as long as the outermost stay below device 0.
  const double pi = std::numbers::pi;
  for (double most : {0.6 * pi, 0.7 * pi, 0.8 * pi}) {
    const double spread = std::min(most, (others - 1) * 0.25 * pi);
    std::vector<QPointF> centres{hub};
    for (int i = 0; i < others; ++i) {
      const double t = others == 1 ? 0.5 : i / (others - 1.0);
      const double angle = pi / 2 + spread / 2 - spread * t;
      centres.emplace_back(hub.x() + rx * std::cos(angle), hub.y() + ry * std::sin(angle));
    }
    bool fits = centres.size() < 2 || centres[1].y() - hub.y() >= boxHeight + 8;
    for (size_t a = 0; a < centres.size() && fits; ++a)
      for (size_t b = a + 1; b < centres.size() && fits; ++b)
        fits = std::abs(centres[a].x() - centres[b].x()) >= boxWidth + 8 ||
               std::abs(centres[a].y() - centres[b].y()) >= boxHeight + 8;
    if (fits) return centres;
    if (spread < most) break;  // a wider fan would not spread these further
  }
  return {};
}
}  // namespace

struct CollectivesDiagram::Geometry {
  QRectF title;    // the title row
  QRectF legend;   // the legend row (ring only)
  QPointF centre;  // of the ellipse the devices sit on
  double rx = 0.0, ry = 0.0;
  double cellWidth = 0.0;
  std::vector<QRectF> boxes;  // one per device; empty when nothing is drawn
};

CollectivesDiagram::CollectivesDiagram(CollectiveAlgorithm algorithm, QWidget* parent)
    : QWidget(parent), m_algorithm(algorithm), m_schedule(algorithm, 1, 0) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setToolTip(glossary::allReduce());
}

void CollectivesDiagram::setDevices(const QStringList& names, int64_t elements) {
  m_names = names;
  const int n = static_cast<int>(std::clamp<qsizetype>(names.size(), 1, 64));
  m_schedule = CollectiveSchedule(m_algorithm, n, std::max<int64_t>(elements, 0));
  m_step = 0;
  update();
}

void CollectivesDiagram::setStep(int step) {
  m_step = std::clamp(step, 0, m_schedule.steps());
  update();
}

void CollectivesDiagram::setUsed(bool used) {
  m_used = used;
  update();
}

CollectivesDiagram::Geometry CollectivesDiagram::geometry() const {
  Geometry g;
  const QFontMetricsF fm(font()), fs(smallFont(font()));
  g.title = QRectF(4, 2, width() - 8, fm.height() + 4);
  const double legendHeight = m_algorithm == CollectiveAlgorithm::kRing ? fs.height() + 6 : 0.0;
  g.legend = QRectF(4, height() - legendHeight - 2, width() - 8, legendHeight);
  const int n = m_schedule.devices();
  if (n < 2 || n > kMaxDrawn) return g;
  const QRectF area(6, g.title.bottom() + 4, width() - 12, g.legend.top() - g.title.bottom() - 8);
  double nameWidth = 0.0;
  for (const QString& name : m_names) nameWidth = std::max(nameWidth, fs.horizontalAdvance(name));
  const double boxHeight = fs.height() + kCellHeight + 9;
  // Wide cells while the boxes fit without touching one another: on an ellipse for the ring,
  // device 0 above the others for the naive algorithm.
  const bool ring = m_algorithm == CollectiveAlgorithm::kRing;
  // The widest cells first: about a quarter of the picture's smaller side for the whole strip.
  const double widest = std::floor(std::min(area.width(), area.height()) * 0.28 / n);
  // Naive: the fan at any cell width before rows (whose arrows may cross the upper row's boxes).
  for (int pass = ring ? 1 : 0; pass < 2 && g.boxes.empty(); ++pass)
    for (double cell = std::clamp(widest, 5.0, 22.0); cell >= 3.0; cell -= 1.0) {
      const double boxWidth = std::max(nameWidth, n * cell) + 10;
      std::vector<QRectF> boxes;
      const auto boxAt = [&](const QPointF& at) {
        boxes.emplace_back(at - QPointF(boxWidth / 2, boxHeight / 2), QSizeF(boxWidth, boxHeight));
      };
      double rx = (area.width() - boxWidth) / 2.0, ry = (area.height() - boxHeight) / 2.0;
      if (ring) {
        if (rx < 16.0 || ry < 16.0) continue;
        // Not flatter than 4:3, so the ring still reads as a circle.
        rx = std::min(rx, ry * 4.0 / 3.0);
        ry = std::min(ry, rx * 4.0 / 3.0);
        for (int d = 0; d < n; ++d) {
          const double angle = -std::numbers::pi / 2 + 2.0 * std::numbers::pi * d / n;
          boxAt(area.center() + QPointF(rx * std::cos(angle), ry * std::sin(angle)));
        }
      } else if (pass == 0) {
        const auto fan = naiveFan(area, boxWidth, boxHeight, n);
        if (fan.empty()) continue;
        for (const QPointF& at : fan) boxAt(at);
      } else {
        // The others in one row at the bottom, or two when one is too narrow (the upper row
        // first); room above them for the arrows.
        const int others = n - 1;
        const double pitch = boxWidth + 8;
        const int perRow = others * pitch <= area.width() + 8 ? others : (others + 1) / 2;
        if (perRow * pitch > area.width() + 8) continue;
        const int rows = (others + perRow - 1) / perRow;
        const double top = area.top() + boxHeight / 2, bottom = area.bottom() - boxHeight / 2;
        const double rowGap = boxHeight + 10;
        if (bottom - (rows - 1) * rowGap - top < 2.5 * boxHeight) continue;
        boxAt({area.center().x(), top});
        for (int i = 0; i < others; ++i) {
          const int row = i / perRow, inRow = std::min(perRow, others - row * perRow);
          boxAt({area.center().x() + (i % perRow - (inRow - 1) / 2.0) * pitch,
                 bottom - (rows - 1 - row) * rowGap});
        }
      }
      bool overlap = false;
      for (int a = 0; a < n && !overlap; ++a)
        for (int b = a + 1; b < n && !overlap; ++b)
          overlap = boxes[size_t(a)].adjusted(-4, -4, 4, 4).intersects(boxes[size_t(b)]);
      if (overlap) continue;
      g.centre = area.center();
      g.rx = rx;
      g.ry = ry;
      g.cellWidth = cell;
      g.boxes = std::move(boxes);
      break;
    }
  return g;
}

std::vector<QRectF> CollectivesDiagram::deviceRects() const { return geometry().boxes; }

void CollectivesDiagram::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  const Geometry g = geometry();
  const int n = m_schedule.devices();
  const bool ring = m_algorithm == CollectiveAlgorithm::kRing;

  // The title, and a badge on the algorithm the run uses.
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  painter.setPen(palette().color(QPalette::Text));
  const QString title =
      ring ? tr("Ring") : tr("Naive, via %1").arg(m_names.value(0, QStringLiteral("cpu:0")));
  painter.drawText(g.title, Qt::AlignLeft | Qt::AlignVCenter, title);
  const QFont small = smallFont(font());
  if (m_used) {
    const double x = g.title.left() + QFontMetricsF(bold).horizontalAdvance(title) + 8;
    painter.setFont(small);
    painter.setRenderHint(QPainter::Antialiasing);
    drawPill(painter,
             QPointF(x + QFontMetricsF(small).horizontalAdvance(tr("used")) / 2 + 4,
                     g.title.center().y()),
             tr("used"), palette().color(QPalette::Highlight));
  }
  painter.setFont(small);
  if (g.boxes.empty()) {
    if (n >= 2) {
      painter.setPen(palette().color(QPalette::PlaceholderText));
      painter.drawText(
          rect().adjusted(12, 0, -12, 0), Qt::AlignCenter | Qt::TextWordWrap,
          n > kMaxDrawn ? tr("The picture draws up to %1 devices; the table below counts all %2.")
                              .arg(kMaxDrawn)
                              .arg(n)
                        : tr("Enlarge the view to draw %1 devices.").arg(n));
    }
    return;
  }
  painter.setRenderHint(QPainter::Antialiasing);
  const auto onEllipse = [&](double a) {
    return g.centre + QPointF(g.rx * std::cos(a), g.ry * std::sin(a));
  };
  const auto angleOf = [n](double d) {
    return -std::numbers::pi / 2 + 2.0 * std::numbers::pi * d / n;
  };
  const auto outside = [&](int d) { return g.boxes[size_t(d)].adjusted(-3, -3, 3, 3); };
  std::vector<uint64_t> holds;
  if (ring) {
    // Arrows to the next device along the circle: grey at the start, then the step's messages.
    const std::vector<CollectiveMessage> sent = m_schedule.messages(m_step);
    for (int d = 0; d < n; ++d) {
      QPolygonF arc;
      for (int i = 0; i <= 64; ++i) {
        const double a = angleOf(d + i / 64.0);
        arc << onEllipse(a);
      }
      const QPolygonF line = between(arc, outside(d), outside((d + 1) % n));
      const bool active = !sent.empty();
      drawArrow(painter, line, active ? plot::deviceColor(d) : palette().color(QPalette::Mid),
                active ? 2.2 : 1.2);
      if (active && line.size() > 1) {
        const double a = angleOf(d + 0.5);
        drawPill(painter, onEllipse(a), QStringLiteral("c%1").arg(sent[size_t(d)].chunk),
                 plot::deviceColor(d));
      }
    }
    holds = m_schedule.holds(m_step);
  } else {
    // Every device's whole buffer up to device 0 and the sum back down, side by side; the
    // arrows meet device 0 spread along its lower edge, in the order of the devices below.
    std::vector<int> order;
    for (int d = 1; d < n; ++d) order.push_back(d);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return g.boxes[size_t(a)].center().x() < g.boxes[size_t(b)].center().x();
    });
    const QRectF& hub = g.boxes[0];
    for (size_t k = 0; k < order.size(); ++k) {
      const int d = order[k];
      const QPointF a(g.boxes[size_t(d)].center().x(), g.boxes[size_t(d)].top());
      const QPointF b(hub.left() + hub.width() * (k + 0.5) / double(order.size()), hub.bottom());
      const QPointF u = (b - a) / std::hypot(b.x() - a.x(), b.y() - a.y());
      const QPointF side = QPointF(-u.y(), u.x()) * 3.5;
      QPolygonF up, down;
      for (int i = 0; i <= 64; ++i) {
        up << a + (b - a) * (i / 64.0) + side;
        down << b + (a - b) * (i / 64.0) + side * -1.0;
      }
      drawArrow(painter, between(up, outside(d), outside(0)), plot::deviceColor(d), 2.6);
      drawArrow(painter, between(down, outside(0), outside(d)), plot::deviceColor(0), 2.6);
    }
    holds = m_schedule.holds(1);  // device 0 holds the sum it sends back
  }
  for (int d = 0; d < n; ++d) drawBox(painter, g, d, holds);
  // The step's sent and received chunks, outlined in the sender's colour.
  if (ring) {
    for (const CollectiveMessage& m : m_schedule.messages(m_step)) {
      painter.setPen(QPen(plot::deviceColor(m.from), 2.0));
      painter.setBrush(Qt::NoBrush);
      for (int d : {m.from, m.to}) {
        const QRectF box = g.boxes[size_t(d)];
        const double x0 = box.center().x() - n * g.cellWidth / 2;
        const QRectF cell(x0 + m.chunk * g.cellWidth, box.bottom() - kCellHeight - 4, g.cellWidth,
                          kCellHeight);
        painter.drawRect(cell.adjusted(-1.5, -1.5, 1.5, 1.5));
      }
    }
    drawLegend(painter, g.legend);
  }
}

void CollectivesDiagram::drawBox(QPainter& painter, const Geometry& g, int device,
                                 const std::vector<uint64_t>& holds) const {
  const int n = m_schedule.devices();
  const QRectF box = g.boxes[size_t(device)];
  const QColor color = plot::deviceColor(device);
  const bool hub = m_algorithm == CollectiveAlgorithm::kNaive && device == 0;
  painter.setPen(QPen(color, hub ? 2.6 : 1.4));
  painter.setBrush(palette().base());
  painter.drawRoundedRect(box, 4, 4);
  QFont name = painter.font();
  name.setBold(true);
  painter.save();
  painter.setFont(name);
  painter.setPen(color.darker(115));
  const QFontMetricsF fm(name);
  painter.drawText(QRectF(box.left() + 2, box.top() + 2, box.width() - 4, fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop,
                   fm.elidedText(m_names.value(device), Qt::ElideRight, box.width() - 4));
  painter.restore();
  const double x0 = box.center().x() - n * g.cellWidth / 2;
  for (int c = 0; c < n; ++c)
    drawCell(painter,
             QRectF(x0 + c * g.cellWidth, box.bottom() - kCellHeight - 4, g.cellWidth, kCellHeight),
             holds[size_t(device * n + c)]);
}

void CollectivesDiagram::drawCell(QPainter& painter, const QRectF& cell, uint64_t holds) const {
  const int n = m_schedule.devices();
  painter.fillRect(cell, palette().base());
  // One slot per device, filled in its colour when the chunk includes its gradients.
  const double slot = cell.width() / n;
  for (int j = 0; j < n; ++j)
    if (holds >> j & 1)
      painter.fillRect(QRectF(cell.left() + j * slot, cell.top(), slot, cell.height()),
                       plot::deviceColor(j));
  const bool full = holds == m_schedule.everyone();
  painter.setPen(full ? QPen(palette().color(QPalette::Text), 1.6)
                      : QPen(palette().color(QPalette::Mid), 0.8));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(cell);
}

void CollectivesDiagram::drawLegend(QPainter& painter, const QRectF& row) const {
  const QFontMetricsF fm(painter.font());
  const int n = m_schedule.devices();
  double x = row.left();
  const double cellWidth = std::max(3.0 * n, 12.0);
  const auto item = [&](uint64_t holds, const QString& text) {
    drawCell(painter, QRectF(x, row.center().y() - 5, cellWidth, 10), holds);
    x += cellWidth + 4;
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRectF(x, row.top(), fm.horizontalAdvance(text) + 2, row.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, text);
    x += fm.horizontalAdvance(text) + 12;
  };
  item(uint64_t{1}, tr("own"));
  if (n > 2) item(uint64_t{3}, tr("partial sum"));
  item(m_schedule.everyone(), tr("full sum"));
}

}  // namespace fitbench
