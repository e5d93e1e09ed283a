#include "imageio/qt_image_decoder.h"

#include <QImage>
#include <QImageReader>
#include <QString>
#include <cstring>
#include <mutex>

#include "core/data/image_folder.h"

namespace fitbench {
namespace {

DecodedImage decode(const std::filesystem::path& file, std::string& error) {
  QImageReader reader(QString::fromStdString(file.string()));
  reader.setAutoTransform(false);  // tf.io.decode_image ignores EXIF orientation too
  QImage image = reader.read();
  DecodedImage out;
  if (image.isNull()) {
    error = reader.errorString().toStdString();
    return out;
  }
  // A gray file stays one channel; color is RGB, or RGBA when the file has alpha. Alpha is not
  // premultiplied, as the file stores it.
  const bool gray = image.isGrayscale() && !image.hasAlphaChannel();
  const QImage::Format format = gray                      ? QImage::Format_Grayscale8
                                : image.hasAlphaChannel() ? QImage::Format_RGBA8888
                                                          : QImage::Format_RGB888;
  image.convertTo(format);
  out.width = image.width();
  out.height = image.height();
  out.channels = gray ? 1 : image.hasAlphaChannel() ? 4 : 3;
  const size_t row = static_cast<size_t>(out.width * out.channels);
  out.pixels.resize(row * static_cast<size_t>(out.height));
  for (int y = 0; y < image.height(); ++y)
    std::memcpy(out.pixels.data() + row * static_cast<size_t>(y), image.constScanLine(y), row);
  return out;
}

}  // namespace

void install_qt_image_decoder() {
  static std::once_flag once;
  std::call_once(once, [] { set_image_decoder(decode); });
}

}  // namespace fitbench
