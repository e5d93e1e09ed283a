// What the window's tests share: an example's path, a window for automation, a run to its end
// and a file dialog answered as a person answers it.
#pragma once

#include <QApplication>
#include <QFileDialog>
#include <QLineEdit>
#include <QSignalSpy>
#include <QString>
#include <QTest>
#include <QTimer>
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

// Run, and wait for the run to end; true when it ended well.
inline bool runToEnd(MainWindow& w) {
  QSignalSpy ended(&w, &MainWindow::runEnded);
  w.run();
  return ended.wait(60000) && ended.first().first().toBool();
}

// Answers the next file dialog as a person does: puts `name` into its file name field and
// presses Enter. (Needs Qt::AA_DontUseNativeDialogs.)
inline void answerFileDialog(const QString& name) {
  QTimer::singleShot(0, [name] {
    auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
    if (dialog == nullptr) {
      QTimer::singleShot(50, [name] { answerFileDialog(name); });
      return;
    }
    auto* field = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
    // Set, not typed: typing pops up the dialog's completer, which takes the Enter key.
    field->setText(name);
    QTest::keyClick(field, Qt::Key_Return);
  });
}

}  // namespace fitbench::fixtures
