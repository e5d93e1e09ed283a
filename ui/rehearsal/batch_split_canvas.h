// The batch split view's drawing surface, shared by its two source files: a painter (or none,
// to measure a layout) with the widget's fonts and palette, the tooltip regions it collects, and
// the small drawing helpers. Internal to BatchSplitView; UI thread only.
#pragma once

#include <QFontMetrics>
#include <QPainter>
#include <QPolygonF>
#include <algorithm>
#include <utility>
#include <vector>

#include "ui/rehearsal/batch_split_view.h"

namespace fitbench {
namespace batchsplit {

constexpr int kMargin = 10;  // around the whole view

// White or black text, whichever reads better on `fill`.
inline QColor inkOn(const QColor& fill) {
  return qGray(fill.rgb()) < 150 ? QColor(Qt::white) : QColor(Qt::black);
}

}  // namespace batchsplit

// Where render() draws: a painter (or none, to measure) and the tooltip regions it collects.
class BatchSplitView::Canvas {
 public:
  static constexpr int kWrap = Qt::AlignTop | Qt::TextWordWrap;

  Canvas(const QWidget& widget, QPainter* painter, std::vector<std::pair<QRect, QString>>* tips)
      : painter(painter),
        palette(widget.palette()),
        font(widget.font()),
        bold(widget.font()),
        fm(widget.font()),
        tips_(tips) {
    bold.setBold(true);
  }

  int lineHeight() const { return fm.height(); }
  // The height of word-wrapped text `width` wide.
  int measure(int width, const QString& s, bool isBold = false) const {
    const QFontMetrics m(isBold ? bold : font);
    return m.boundingRect(QRect(0, 0, std::max(width, 1), 100000), kWrap, s).height();
  }
  // Word-wrapped text from box's top left in box's width; returns its height.
  int text(const QRect& box, const QString& s, const QColor& color, bool isBold = false,
           int align = Qt::AlignLeft) const {
    const int h = measure(box.width(), s, isBold);
    if (painter) {
      painter->setFont(isBold ? bold : font);
      painter->setPen(color);
      painter->drawText(QRect(box.left(), box.top(), box.width(), h), align | kWrap, s);
      painter->setFont(font);
    }
    return h;
  }
  // One line, elided to the box's width.
  void line(const QRect& box, const QString& s, const QColor& color, bool isBold = false,
            int align = Qt::AlignLeft | Qt::AlignVCenter) const {
    if (!painter) return;
    const QFontMetrics m(isBold ? bold : font);
    painter->setFont(isBold ? bold : font);
    painter->setPen(color);
    painter->drawText(box, align, m.elidedText(s, Qt::ElideRight, box.width()));
    painter->setFont(font);
  }
  void tip(const QRect& r, const QString& s) const {
    if (tips_) tips_->emplace_back(r, s);
  }
  QColor ink() const { return palette.color(QPalette::Text); }
  QColor quiet() const { return palette.color(QPalette::PlaceholderText); }

  QPainter* painter;  // null: measure only
  QPalette palette;
  QFont font, bold;
  QFontMetrics fm;

 private:
  std::vector<std::pair<QRect, QString>>* tips_;
};

}  // namespace fitbench
