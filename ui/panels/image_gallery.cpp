#include "ui/panels/image_gallery.h"

#include <QFontMetrics>
#include <QLocale>
#include <QPainter>
#include <algorithm>

namespace fitbench {

namespace {
constexpr int kTileGap = 6;
const QColor kBar(0x08, 0x77, 0xbd);
}  // namespace

ImageGallery::ImageGallery(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

namespace {

// A row's class: its label, or its one-hot column's index.
int labelOf(const Dataset& data, Index r) {
  if (data.y.cols() == 1) return static_cast<int>(data.y(r, 0));
  Index best = 0;
  data.y.row(r).maxCoeff(&best);
  return static_cast<int>(best);
}

}  // namespace

void ImageGallery::setData(const Dataset& data, const std::vector<std::string>& classNames,
                           float white, bool invert) {
  clear();
  m_rows = data.size();
  for (const std::string& n : classNames) m_names.push_back(QString::fromStdString(n));
  m_counts.assign(classNames.size(), 0);
  for (Index r = 0; r < data.size(); ++r) {
    const auto label = static_cast<size_t>(labelOf(data, r));
    if (label < m_counts.size()) ++m_counts[label];
  }
  const Shape& s = data.sample_shape;
  const int64_t channels = s.size() == 3 ? s[2] : 1;
  const bool drawable =
      (s.size() == 2 || (s.size() == 3 && (channels == 1 || channels == 3 || channels == 4))) &&
      s[0] * s[1] * channels == data.x.cols();
  const Index shown = drawable ? std::min<Index>(kMaxImages, data.size()) : 0;
  const int h = drawable ? static_cast<int>(s[0]) : 0, w = drawable ? static_cast<int>(s[1]) : 0;
  const QImage::Format format = channels == 1   ? QImage::Format_Grayscale8
                                : channels == 3 ? QImage::Format_RGB888
                                                : QImage::Format_RGBA8888;
  for (Index r = 0; r < shown; ++r) {
    QImage image(w, h, format);
    const float* values = data.x.row(r).data();
    for (int i = 0; i < h; ++i) {
      uchar* line = image.scanLine(i);
      for (int j = 0; j < w * channels; ++j) {
        const float v = std::clamp(values[i * w * channels + j] / white, 0.0f, 1.0f);
        const bool alpha = channels == 4 && j % 4 == 3;
        const int level = qRound(v * 255.0f);
        line[j] = static_cast<uchar>(invert && !alpha ? 255 - level : level);
      }
    }
    m_images.push_back(std::move(image));
    m_labels.push_back(labelOf(data, r));
  }
  updateGeometry();
  update();
}

void ImageGallery::clear() {
  m_images.clear();
  m_labels.clear();
  m_names.clear();
  m_counts.clear();
  m_rows = 0;
  updateGeometry();
  update();
}

int ImageGallery::cellWidth() const {
  // Wide enough for the longest class name up to "Ankle boot" and a half; longer ones are elided.
  const int most = fontMetrics().horizontalAdvance(QStringLiteral("Ankle boot")) * 3 / 2;
  int name = 0;
  for (const QString& n : m_names) name = std::max(name, fontMetrics().horizontalAdvance(n));
  return std::max(kTile, std::min(name, most)) + kTileGap;
}
int ImageGallery::cellHeight() const { return kTile + fontMetrics().height() + kTileGap; }
int ImageGallery::barRow() const { return fontMetrics().height() + 2; }

int ImageGallery::columns(int width) const { return std::max(1, width / cellWidth()); }

int ImageGallery::heightForWidth(int width) const {
  const int n = static_cast<int>(m_images.size());
  const int rows = n == 0 ? 0 : (n + columns(width) - 1) / columns(width);
  return rows * cellHeight() + kTileGap + barRow() * (static_cast<int>(m_counts.size()) + 1);
}

QSize ImageGallery::sizeHint() const {
  const int width = 8 * cellWidth();
  return {width, heightForWidth(width)};
}

void ImageGallery::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QFontMetrics fm = fontMetrics();
  const int cols = columns(width());
  const int cw = cellWidth(), ch = cellHeight();
  for (size_t i = 0; i < m_images.size(); ++i) {
    const int x = static_cast<int>(i % static_cast<size_t>(cols)) * cw;
    const int y = static_cast<int>(i / static_cast<size_t>(cols)) * ch;
    // The image in the tile, its aspect kept, centred.
    const QSize size = m_images[i].size().scaled(kTile, kTile, Qt::KeepAspectRatio);
    const QRect box(x + (cw - kTileGap - size.width()) / 2, y + (kTile - size.height()) / 2,
                    size.width(), size.height());
    p.drawImage(box, m_images[i]);
    p.setPen(QColor(0xc8, 0xc8, 0xc8));
    p.drawRect(box.adjusted(0, 0, -1, -1));
    const size_t label = static_cast<size_t>(m_labels[i]);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(x, y + kTile, cw - kTileGap, fm.height()), Qt::AlignHCenter,
               fm.elidedText(label < m_names.size() ? m_names[label] : QString::number(m_labels[i]),
                             Qt::ElideRight, cw - kTileGap));
  }
  if (m_counts.empty()) return;
  const int rows = m_images.empty() ? 0 : (static_cast<int>(m_images.size()) + cols - 1) / cols;
  int y = rows * ch + kTileGap;
  const QLocale locale;
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRect(0, y, width(), barRow()), Qt::AlignLeft,
             tr("Images per class (%1 in all)").arg(locale.toString(qlonglong(m_rows))));
  y += barRow();
  int nameWidth = 0;
  for (const QString& n : m_names) nameWidth = std::max(nameWidth, fm.horizontalAdvance(n));
  const int countWidth = fm.horizontalAdvance(locale.toString(qlonglong(m_rows))) + kTileGap;
  const int barLeft = nameWidth + kTileGap;
  const int barSpace = std::max(10, width() - barLeft - countWidth);
  const int64_t most = std::max<int64_t>(1, *std::max_element(m_counts.begin(), m_counts.end()));
  for (size_t c = 0; c < m_counts.size(); ++c, y += barRow()) {
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(0, y, nameWidth, barRow()), Qt::AlignRight | Qt::AlignVCenter,
               c < m_names.size() ? m_names[c] : QString::number(c));
    const int w = static_cast<int>(barSpace * m_counts[c] / most);
    p.fillRect(barLeft, y + 2, w, barRow() - 4, kBar);
    p.drawText(QRect(barLeft + w + 4, y, countWidth, barRow()), Qt::AlignLeft | Qt::AlignVCenter,
               locale.toString(qlonglong(m_counts[c])));
  }
}

}  // namespace fitbench
