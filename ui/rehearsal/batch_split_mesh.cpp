// BatchSplitView's ModelParallel half: the device mesh and the variables' slices.

#include <QStringList>
#include <cmath>

#include "ui/common/glossary.h"
#include "ui/common/plot_style.h"
#include "ui/rehearsal/batch_split_canvas.h"

namespace fitbench {

using batchsplit::kMargin;

namespace {

constexpr int kPictureColumn = 80;  // a variable's picture and the gap after it
constexpr double kPictureWidth = 72, kPictureHeight = 36;

QColor replicatedColor() { return QColor(0xc8, 0xc8, 0xc8); }

// `rect` in diagonal stripes of `colors` (a plain fill for one color): a piece several devices
// hold.
void fillStripes(QPainter& p, const QRectF& rect, const std::vector<QColor>& colors) {
  if (colors.empty() || rect.isEmpty()) return;
  p.fillRect(rect, colors.front());
  if (colors.size() < 2) return;
  p.save();
  p.setClipRect(rect);
  p.setPen(Qt::NoPen);
  constexpr double kStripe = 5.0;
  const double h = rect.height();
  const int count = static_cast<int>((rect.width() + h) / kStripe) + 2;
  for (int k = 0; k < count; ++k) {
    const double x = rect.left() + k * kStripe;
    p.setBrush(colors[static_cast<size_t>(k) % colors.size()]);
    p.drawPolygon(
        QPolygonF({QPointF(x, rect.top()), QPointF(x + kStripe, rect.top()),
                   QPointF(x + kStripe - h, rect.bottom()), QPointF(x - h, rect.bottom())}));
  }
  p.restore();
}

// "5 + 5".
QString join(const std::vector<int64_t>& parts) {
  QStringList items;
  for (int64_t p : parts) items << QString::number(p);
  return items.join(QStringLiteral(" + "));
}

}  // namespace

int BatchSplitView::renderMesh(Canvas& c, int y, int width) const {
  const int w = width - 2 * kMargin;
  const int line = c.lineHeight();
  const QString heading = m_mesh.model_axis.empty()
                              ? tr("Device mesh: its rows split the batch.")
                              : tr("Device mesh: rows split the batch, columns the weights.");
  const int headingHeight = c.text(QRect(kMargin, y, w, 0), heading, c.ink());
  c.tip(QRect(kMargin, y, w, headingHeight), glossary::mesh());
  y += headingHeight + 6;
  // The batch shown (the full one before a run) decides the rows beside each mesh row.
  const std::vector<int64_t> parts =
      m_batches.empty() ? std::vector<int64_t>{} : m_batches.front().parts;
  QStringList rowLabels;
  int headerWidth = 0;
  int64_t offset = 0;
  for (int b = 0; b < m_mesh.batch; ++b) {
    const int64_t rows = static_cast<size_t>(b) < parts.size() ? parts[static_cast<size_t>(b)] : 0;
    rowLabels << batchsplit::rowRange(offset, rows);
    offset += rows;
    headerWidth = std::max(
        {headerWidth, c.fm.horizontalAdvance(rowLabels.back()),
         c.fm.horizontalAdvance(
             QStringLiteral("%1 %2").arg(QString::fromStdString(m_mesh.batch_axis)).arg(b))});
  }
  headerWidth += 10;
  const int cellWidth = std::min(96, std::max((w - headerWidth) / m_mesh.model, 40));
  const int cellHeight = 2 * line + 4;
  const int gridX = kMargin + headerWidth;
  if (!m_mesh.model_axis.empty()) {
    for (int m = 0; m < m_mesh.model; ++m)
      c.line(QRect(gridX + m * cellWidth, y, cellWidth - 3, line),
             QStringLiteral("%1 %2").arg(QString::fromStdString(m_mesh.model_axis)).arg(m),
             c.quiet(), false, Qt::AlignCenter);
    y += line + 2;
  }
  for (int b = 0; b < m_mesh.batch; ++b) {
    const int top = y + b * cellHeight;
    const QRect header(kMargin, top, headerWidth - 6, cellHeight - 3);
    c.line(QRect(header.left(), top + 2, header.width(), line),
           QStringLiteral("%1 %2").arg(QString::fromStdString(m_mesh.batch_axis)).arg(b), c.ink(),
           true);
    c.line(QRect(header.left(), top + 2 + line, header.width(), line), rowLabels[b], c.ink());
    c.tip(header,
          tr("The devices of mesh row %1 all train on %2 of this batch.").arg(b).arg(rowLabels[b]) +
              QStringLiteral("\n\n") + glossary::shard());
    for (int m = 0; m < m_mesh.model; ++m) {
      const int d = m_mesh.at(b, m);
      const QRect cell(gridX + m * cellWidth, top, cellWidth - 3, cellHeight - 3);
      const QColor color = plot::deviceColor(d);
      const QString name = batchsplit::deviceName(m_plan, d);
      if (c.painter) c.painter->fillRect(cell, color);
      c.line(cell, name, batchsplit::inkOn(color), true, Qt::AlignCenter);
      QString where = tr("%1 sits in mesh row %2").arg(name).arg(b);
      if (!m_mesh.model_axis.empty()) where += tr(", column %1").arg(m);
      c.tip(cell, where + QStringLiteral(".\n\n") + glossary::device());
    }
  }
  y += m_mesh.batch * cellHeight + 6;
  QStringList splits;
  for (const auto& b : m_batches)
    splits << QStringLiteral("%1 %2").arg(b.title.toLower(), join(b.parts));
  const QString text = tr("Rows per mesh row: %1.").arg(splits.join(QStringLiteral("; ")));
  const int textHeight = c.text(QRect(kMargin, y, w, 0), text, c.quiet());
  c.tip(QRect(kMargin, y, w, textHeight),
        tr("The devices of a mesh row all train on the same rows of each batch.") +
            QStringLiteral("\n\n") + glossary::shard());
  return y + textHeight + 12;
}

int BatchSplitView::renderVariables(Canvas& c, int y, int width) const {
  const int w = width - 2 * kMargin;
  const int line = c.lineHeight();
  c.line(QRect(kMargin, y, w, line), tr("Weights and the devices that hold them"), c.ink(), true);
  c.tip(QRect(kMargin, y, w, line), glossary::layout());
  y += line + 6;
  const int textX = kMargin + kPictureColumn, textWidth = w - kPictureColumn;
  size_t s = 0;
  for (size_t i = 0; i < m_plan.variables.size(); ++i) {
    const VariableLayout& v = m_plan.variables[i];
    std::vector<const VariableSlice*> pieces;
    for (; s < m_slices.size() && m_slices[s].variable == static_cast<int>(i); ++s)
      pieces.push_back(&m_slices[s]);
    // The variable as a matrix: a kernel (input, units), a bias one row of units.
    const double rows = v.shape.size() == 2 ? double(v.shape[0]) : 1.0;
    const double cols = v.shape.empty() ? 1.0 : double(v.shape.back());
    const double scale = std::min({kPictureWidth / cols, kPictureHeight / rows, 6.0});
    const QRectF picture(kMargin, y + 2, std::clamp(cols * scale, 8.0, kPictureWidth),
                         std::clamp(rows * scale, 6.0, kPictureHeight));
    QString about;
    for (const VariableSlice* piece : pieces) {
      QRectF r = picture;
      std::vector<QColor> colors{replicatedColor()};
      if (piece->dim >= 0) {
        const double extent = double(v.shape[static_cast<size_t>(piece->dim)]);
        const double f0 = double(piece->begin) / extent, f1 = double(piece->end) / extent;
        if (v.shape.size() == 2 && piece->dim == 0)
          r = QRectF(r.left(), r.top() + f0 * r.height(), r.width(), (f1 - f0) * r.height());
        else
          r = QRectF(r.left() + f0 * r.width(), r.top(), (f1 - f0) * r.width(), r.height());
        colors.clear();
        for (int d : piece->devices) colors.push_back(plot::deviceColor(d));
      }
      if (c.painter) {
        fillStripes(*c.painter, r, colors);
        c.painter->setPen(QPen(Qt::white, 1.5));
        c.painter->setBrush(Qt::NoBrush);
        if (piece->dim >= 0) c.painter->drawRect(r);
      }
    }
    if (c.painter) {
      c.painter->setPen(QPen(c.palette.color(QPalette::Mid), 1.0));
      c.painter->drawRect(picture);
    }
    // The name and shape, then one line per piece with its colors.
    QString path = QString::fromStdString(v.path);
    if (path.count(QLatin1Char('/')) >= 2) path = path.mid(path.indexOf(QLatin1Char('/')) + 1);
    const QString title = path + QLatin1Char(' ') + QString::fromStdString(python_tuple(v.shape));
    c.line(QRect(textX, y, textWidth, line), title, c.ink(), true);
    int lineY = y + line;
    for (const VariableSlice* piece : pieces) {
      const QRectF chip(textX, lineY + (line - 10) / 2.0, 10, 10);
      std::vector<QColor> colors{replicatedColor()};
      if (piece->dim >= 0) {
        colors.clear();
        for (int d : piece->devices) colors.push_back(plot::deviceColor(d));
      }
      if (c.painter) fillStripes(*c.painter, chip, colors);
      c.line(QRect(textX + 16, lineY, textWidth - 16, line), piece->label, c.ink());
      lineY += line;
    }
    if (!pieces.empty() && pieces.front()->dim >= 0) {
      const int dim = pieces.front()->dim;
      const QString what =
          v.shape.size() == 2 ? (dim == 0 ? tr("rows") : tr("columns")) : tr("units");
      about = tr("%1 is split along dimension %2 over the '%3' axis: each device holds %4 of its "
                 "%5 %6.")
                  .arg(path)
                  .arg(dim)
                  .arg(QString::fromStdString(m_mesh.model_axis))
                  .arg(pieces.front()->end - pieces.front()->begin)
                  .arg(v.shape[static_cast<size_t>(dim)])
                  .arg(what) +
              QStringLiteral("\n\n") + glossary::layout();
    } else {
      about = tr("%1 is replicated: every device holds all of it.").arg(path) +
              QStringLiteral("\n\n") + glossary::replica();
    }
    const int bottom = std::max(static_cast<int>(std::ceil(picture.bottom())) + 2, lineY) + 6;
    c.tip(QRect(kMargin, y, w, bottom - y - 4), about);
    y = bottom;
  }
  return y;
}

}  // namespace fitbench
