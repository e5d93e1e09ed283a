// File > Export > Keras script: the experiment as a runnable Keras 3 script (core's
// keras_script), read-only in a monospace editor, with Copy (to the clipboard), Save... (a .py
// file, written atomically) and Close. A problem (the experiment cannot be planned, the file
// cannot be written) is a sentence in the dialog. Lives on the UI thread.
#pragma once

#include <QDialog>
#include <QString>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace fitbench {

class KerasScriptDialog : public QDialog {
  Q_OBJECT

 public:
  explicit KerasScriptDialog(QWidget* parent = nullptr);

  // Shows the script; `suggestedPath` is where Save... proposes to write it.
  void setScript(const QString& script, const QString& suggestedPath);
  // Shows why there is no script (one sentence per line); Copy and Save are disabled.
  void setError(const QString& sentences);

  QString script() const;
  QString errorText() const;

  // Copies the script to the clipboard and says so.
  void copyScript();
  // Writes the script to `path`; false (and the reason shown) when it cannot.
  bool saveTo(const QString& path);

 private:
  void connectSignals();
  void save();
  void setStatus(const QString& text, bool error);

  QPlainTextEdit* m_text;
  QLabel* m_status;
  QPushButton* m_copy;
  QPushButton* m_save;
  QPushButton* m_close;
  QString m_suggestedPath;
};

}  // namespace fitbench
