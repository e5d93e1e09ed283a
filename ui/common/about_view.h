// The "About this experiment" view: the experiment's Markdown description in a QTextBrowser whose
// code spans never break across lines (unbreakableCodeSpans) while runs too long for a line do
// (breakableLongRuns), and whose copied text is what was typed (a copied `--devices 3` pastes
// into a shell as it reads). Widget; UI thread only.
#pragma once

#include <QMimeData>
#include <QTextBrowser>
#include <QTextDocumentFragment>

#include "ui/common/text_style.h"

namespace fitbench {

class AboutView : public QTextBrowser {
 public:
  using QTextBrowser::QTextBrowser;

  // Shows the description (Markdown) under a heading with the experiment's name.
  void setDescription(const QString& name, const QString& markdown) {
    setMarkdown(
        breakableLongRuns(unbreakableCodeSpans(QStringLiteral("## %1\n\n%2").arg(name, markdown))));
  }

 protected:
  QMimeData* createMimeDataFromSelection() const override {
    auto* data = new QMimeData;
    data->setText(plainTyped(textCursor().selection().toPlainText()));
    return data;
  }
};

}  // namespace fitbench
