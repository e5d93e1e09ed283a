// The data panel's view of an image data set (Fashion-MNIST): the first training images, drawn
// dark on light as Keras's tutorial plots them, each with its class name, and below them a bar
// per class with its number of images. Keeps its own copy of what it draws. Widget; UI thread
// only.
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>
#include <vector>

#include "core/data/dataset.h"

namespace fitbench {

class ImageGallery : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kTile = 56;       // an image's box on screen (28 x 28 at 2x)
  static constexpr int kMaxImages = 24;  // the first images shown

  explicit ImageGallery(QWidget* parent = nullptr);

  // Shows data.x's first rows as images of data.sample_shape ((h, w) or (h, w, c) with 1, 3 or
  // 4 channels; other shapes show no image), values from 0 to `white`, dark on light when
  // `invert` (Fashion-MNIST's light garments on black read better so), labelled with
  // classNames[label] (a label column, or one-hot columns), and the count of each class over
  // every row.
  void setData(const Dataset& data, const std::vector<std::string>& classNames, float white,
               bool invert);
  void clear();

  int imageCount() const { return static_cast<int>(m_images.size()); }
  // Images per class, in class order.
  const std::vector<int64_t>& classCounts() const { return m_counts; }

  QSize sizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  int columns(int width) const;
  int cellWidth() const;
  int cellHeight() const;
  int barRow() const;

  std::vector<QImage> m_images;
  std::vector<int> m_labels;
  std::vector<QString> m_names;
  std::vector<int64_t> m_counts;
  int64_t m_rows = 0;
};

}  // namespace fitbench
