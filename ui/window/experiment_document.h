// The window's experiment as a document: the file it came from (or none: untitled), the fields
// no panel shows (name, description, ...), and the experiment as last opened or saved, so that
// unsaved changes are a difference from it; reading and writing experiment files, and the
// recent files list. The panels hold the rest; MainWindow::currentSpec() joins the two.
// UI thread only.
#pragma once

#include <QString>
#include <QStringList>
#include <string>

#include "core/io/experiment.h"

namespace fitbench {

class ExperimentDocument {
 public:
  // The fields the panels do not show, to build the current experiment on.
  const ExperimentSpec& base() const { return m_base; }
  // The absolute file path, or "" for an untitled experiment.
  const QString& filePath() const { return m_filePath; }
  // The folder relative paths start from: the file's, or the working folder when untitled.
  QString folder() const;
  // The file's name, or "Untitled".
  QString displayName() const;

  // The experiment's name and description (File > Name and lesson), to be saved with it.
  void setText(const std::string& name, const std::string& description) {
    m_base.name = name;
    m_base.description = description;
  }
  // A new content: `spec` from `filePath` ("" for untitled).
  void reset(const ExperimentSpec& spec, const QString& filePath);
  // `current` is what the document now holds unsaved-changes-free (after opening or saving).
  void markSaved(const ExperimentSpec& current);
  bool isModified(const ExperimentSpec& current) const;
  // The saved state as text, to carry over a reload (the last session's unsaved edits).
  const std::string& savedText() const { return m_savedJson; }
  void setSavedText(std::string text) { m_savedJson = std::move(text); }

  // Reads an experiment file; throws InputError naming the file and the place.
  static ExperimentSpec read(const QString& path);
  // Writes `current` to `path` atomically and makes it this document's file and saved state.
  // Throws InputError when it cannot be written (the document is then unchanged).
  void save(const ExperimentSpec& current, const QString& path);

  // The recent files, newest first (at most 8), kept in the settings.
  static QStringList recentFiles();
  static void addRecentFile(const QString& path);

 private:
  ExperimentSpec m_base;    // the fields no panel shows (name, description, verbose, ...)
  QString m_filePath;       // "" for an untitled experiment
  std::string m_savedJson;  // the experiment as last opened or saved
};

}  // namespace fitbench
