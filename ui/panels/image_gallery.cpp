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

void ImageGallery::setData(const Dataset& data, const std::vector<std::string>& classNames,
                           bool scaled) {
  clear();
  m_rows = data.size();
  for (const std::string& n : classNames) m_names.push_back(QString::fromStdString(n));
  m_counts.assign(classNames.size(), 0);
  for (Index r = 0; r < data.size(); ++r) {
    const auto label = static_cast<size_t>(data.y(r, 0));
    if (label < m_counts.size()) ++m_counts[label];
  }
  const Index shown = std::min<Index>(kMaxImages, data.size());
  const float top = scaled ? 1.0f : 255.0f;
  for (Index r = 0; r < shown && data.x.cols() == kSide * kSide; ++r) {
    QImage image(kSide, kSide, QImage::Format_Grayscale8);
    for (int i = 0; i < kSide; ++i) {
      uchar* line = image.scanLine(i);
      for (int j = 0; j < kSide; ++j) {
        const float v = std::clamp(data.x(r, i * kSide + j) / top, 0.0f, 1.0f);
        line[j] = static_cast<uchar>(255 - qRound(v * 255.0f));  // dark on light
      }
    }
    m_images.push_back(std::move(image));
    m_labels.push_back(static_cast<int>(data.y(r, 0)));
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
  return std::max(kSide * kZoom, fontMetrics().horizontalAdvance(QStringLiteral("Ankle boot"))) +
         kTileGap;
}
int ImageGallery::cellHeight() const { return kSide * kZoom + fontMetrics().height() + kTileGap; }
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
    const QRect box(x + (cw - kTileGap - kSide * kZoom) / 2, y, kSide * kZoom, kSide * kZoom);
    p.drawImage(box, m_images[i]);
    p.setPen(QColor(0xc8, 0xc8, 0xc8));
    p.drawRect(box.adjusted(0, 0, -1, -1));
    const size_t label = static_cast<size_t>(m_labels[i]);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(x, y + kSide * kZoom, cw - kTileGap, fm.height()), Qt::AlignHCenter,
               label < m_names.size() ? m_names[label] : QString::number(m_labels[i]));
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
