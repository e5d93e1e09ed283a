#include "ui/window/lesson_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace fitbench {

LessonDialog::LessonDialog(const QString& name, const QString& description, QWidget* parent)
    : QDialog(parent),
      m_name(new QLineEdit(name, this)),
      m_description(new QPlainTextEdit(description, this)) {
  setWindowTitle(tr("Name and lesson"));
  m_name->setObjectName(QStringLiteral("experimentName"));
  m_description->setObjectName(QStringLiteral("experimentDescription"));
  m_description->setTabChangesFocus(true);
  auto* hint = new QLabel(
      tr("Shown in About this experiment and saved with it (the file's \"name\" and "
         "\"description\"). Markdown: **bold**, `code`, lists; a blank line starts a paragraph."),
      this);
  hint->setWordWrap(true);
  hint->setStyleSheet(QStringLiteral("color: palette(mid);"));
  auto* form = new QFormLayout;
  form->addRow(tr("Name"), m_name);
  form->addRow(tr("Lesson"), m_description);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form, 1);
  layout->addWidget(hint);
  layout->addWidget(buttons);
  resize(560, 380);
}

QString LessonDialog::name() const { return m_name->text().trimmed(); }

QString LessonDialog::description() const {
  QString text = m_description->toPlainText();
  while (text.endsWith(QLatin1Char('\n')) || text.endsWith(QLatin1Char(' '))) text.chop(1);
  return text;
}

}  // namespace fitbench
