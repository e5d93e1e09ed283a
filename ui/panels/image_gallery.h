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
  static constexpr int kSide = 28;       // the images' width and height
  static constexpr int kMaxImages = 24;  // the first images shown
  static constexpr int kZoom = 2;        // screen pixels per image pixel

  explicit ImageGallery(QWidget* parent = nullptr);

  // Shows data.x's rows as kSide x kSide images (values 0-1 when `scaled`, else 0-255) labelled
  // with classNames[y], and the count of each class over every row.
  void setData(const Dataset& data, const std::vector<std::string>& classNames, bool scaled);
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
