// What the window's tests share: an example's path and a window for automation.
#pragma once

#include <QString>
#include <memory>

#include "ui/window/main_window.h"

namespace fitbench::fixtures {

// resources/examples/<name>.
inline QString example(const char* name) {
  return QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples/") + QLatin1String(name);
}

// A shown 1280x800 window for automation ("batch": it leaves the saved session alone).
inline std::unique_ptr<MainWindow> makeWindow() {
  auto w = std::make_unique<MainWindow>();
  w->setProperty("batch", true);
  w->resize(1280, 800);
  w->show();
  return w;
}

}  // namespace fitbench::fixtures
