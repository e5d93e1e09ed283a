#include "ui/window/experiment_document.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace fitbench {
namespace {
constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("recentFiles");
}  // namespace

QString ExperimentDocument::folder() const {
  return m_filePath.isEmpty() ? QDir::currentPath() : QFileInfo(m_filePath).absolutePath();
}

QString ExperimentDocument::displayName() const {
  return m_filePath.isEmpty() ? QCoreApplication::translate("MainWindow", "Untitled")
                              : QFileInfo(m_filePath).fileName();
}

void ExperimentDocument::reset(const ExperimentSpec& spec, const QString& filePath) {
  m_base = spec;
  m_filePath = filePath;
}

void ExperimentDocument::markSaved(const ExperimentSpec& current) {
  m_savedJson = experiment_to_json(current).dump();
}

bool ExperimentDocument::isModified(const ExperimentSpec& current) const {
  return experiment_to_json(current).dump() != m_savedJson;
}

ExperimentSpec ExperimentDocument::read(const QString& path) {
  return read_experiment(path.toStdString());
}

void ExperimentDocument::save(const ExperimentSpec& current, const QString& path) {
  write_experiment(current, path.toStdString());
  m_base = current;
  m_filePath = QFileInfo(path).absoluteFilePath();
  addRecentFile(m_filePath);
}

QStringList ExperimentDocument::recentFiles() {
  return QSettings().value(kRecentKey).toStringList();
}

void ExperimentDocument::addRecentFile(const QString& path) {
  QSettings settings;
  QStringList files = settings.value(kRecentKey).toStringList();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecent) files.removeLast();
  settings.setValue(kRecentKey, files);
}

}  // namespace fitbench
