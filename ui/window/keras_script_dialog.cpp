#include "ui/window/keras_script_dialog.h"

#include <QClipboard>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/base/error.h"
#include "core/io/json_file.h"
#include "ui/common/zoom.h"

namespace fitbench {

KerasScriptDialog::KerasScriptDialog(QWidget* parent)
    : QDialog(parent),
      m_text(new QPlainTextEdit(this)),
      m_status(new QLabel(this)),
      m_copy(new QPushButton(tr("&Copy"), this)),
      m_save(new QPushButton(tr("&Save…"), this)),
      m_close(new QPushButton(tr("Close"), this)) {
  setWindowTitle(tr("Keras script"));
  setObjectName(QStringLiteral("kerasScriptDialog"));
  m_text->setObjectName(QStringLiteral("kerasScriptText"));
  m_text->setReadOnly(true);
  m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::TypeWriter);
  setZoomedFont(m_text, mono);
  m_status->setObjectName(QStringLiteral("kerasScriptStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* intro = new QLabel(
      tr("The experiment as a Keras 3 script: the same seed, distribution, data, model, "
         "compile() and fit() as a run here. Run it with python3 where Keras 3 is installed."),
      this);
  intro->setWordWrap(true);
  auto* buttons = new QDialogButtonBox(this);
  buttons->addButton(m_copy, QDialogButtonBox::ActionRole);
  buttons->addButton(m_save, QDialogButtonBox::ActionRole);
  buttons->addButton(m_close, QDialogButtonBox::RejectRole);
  m_close->setDefault(true);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(intro);
  layout->addWidget(m_text, 1);
  layout->addWidget(m_status);
  layout->addWidget(buttons);
  resize(760, 620);
  connectSignals();
}

void KerasScriptDialog::connectSignals() {
  connect(m_copy, &QPushButton::clicked, this, &KerasScriptDialog::copyScript);
  connect(m_save, &QPushButton::clicked, this, &KerasScriptDialog::save);
  connect(m_close, &QPushButton::clicked, this, &QDialog::reject);
}

void KerasScriptDialog::setScript(const QString& script, const QString& suggestedPath) {
  m_text->setPlainText(script);
  m_suggestedPath = suggestedPath;
  m_copy->setEnabled(true);
  m_save->setEnabled(true);
  setStatus({}, false);
}

void KerasScriptDialog::setError(const QString& sentences) {
  m_text->clear();
  m_copy->setEnabled(false);
  m_save->setEnabled(false);
  setStatus(tr("No script: %1").arg(sentences), true);
}

QString KerasScriptDialog::script() const { return m_text->toPlainText(); }

QString KerasScriptDialog::errorText() const {
  return m_status->property("error").toBool() ? m_status->text() : QString();
}

void KerasScriptDialog::copyScript() {
  QGuiApplication::clipboard()->setText(script());
  setStatus(tr("Copied the script to the clipboard."), false);
}

void KerasScriptDialog::save() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save Keras script"), m_suggestedPath,
                                                    tr("Python script (*.py)"));
  if (!path.isEmpty()) saveTo(path);
}

bool KerasScriptDialog::saveTo(const QString& path) {
  try {
    json_io::write_file_atomically(path.toStdString(), script().toStdString());
  } catch (const InputError& e) {
    setStatus(tr("Could not save: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  setStatus(tr("Saved %1").arg(path), false);
  return true;
}

void KerasScriptDialog::setStatus(const QString& text, bool error) {
  m_status->setText(text);
  m_status->setProperty("error", error);
  m_status->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
  m_status->setVisible(!text.isEmpty());
}

}  // namespace fitbench
