// Installs a QImageReader decoder for core/data/image_folder.h: PNG, JPEG, BMP and GIF (the first
// frame), each to 8-bit gray, RGB or RGBA pixels as the file holds them.
#pragma once

namespace fitbench {

// Call at program start, before any folder of images is read; later calls do nothing.
void install_qt_image_decoder();

}  // namespace fitbench
