// File > Name and lesson: the experiment's name and its description (the lesson shown in "About
// this experiment", Markdown), edited in the window and saved with the experiment. Modal dialog;
// UI thread only.
#pragma once

#include <QDialog>
#include <QString>

class QLineEdit;
class QPlainTextEdit;

namespace fitbench {

class LessonDialog : public QDialog {
  Q_OBJECT

 public:
  LessonDialog(const QString& name, const QString& description, QWidget* parent = nullptr);

  QString name() const;         // trimmed
  QString description() const;  // as typed, trailing blank lines dropped

 private:
  QLineEdit* m_name;
  QPlainTextEdit* m_description;
};

}  // namespace fitbench
