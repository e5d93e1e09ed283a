// The CSV part of the data panel: the chosen file, its delimiter, a table of its first rows and
// each column's role (target or feature). It reads the file's first rows itself for the preview;
// the panel builds the data set from the roles. Widget; UI thread only.
#pragma once

#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;
class QTableWidgetItem;

namespace fitbench {

class CsvPreview : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kPreviewRows = 50;

  explicit CsvPreview(QWidget* parent = nullptr);

  // Reads `file` (an absolute path) with `delimiter` and shows its header and first rows;
  // `shownPath` is the path as the data spec names it. Returns false when the file or its first
  // rows cannot be read (the table keeps what could be read). Emits nothing.
  bool showFile(const QString& file, const QString& shownPath, char delimiter);
  void clearFile();
  QString shownPath() const;

  // Checks the target columns and the feature columns (empty: every column that is not a
  // target). Names not in the header are ignored. Emits nothing.
  void setRoles(const std::vector<std::string>& targets, const std::vector<std::string>& features);
  // The checked targets, in header order.
  std::vector<std::string> targets() const;
  // The checked features in header order; empty when every column that is not a target is.
  std::vector<std::string> features() const;
  QStringList header() const { return m_header; }

  char delimiter() const;
  void setReadOnly(bool readOnly);
  // Shown in red under the tables ("" hides it); the cell or row that `place` names
  // ("<file>:<line>[:<column>]...") is marked in the preview when it is shown.
  void setError(const QString& message, const QString& place = {});

  // `wanted` when every name is in the header, else the header's last column (none without one).
  std::vector<std::string> targetsOrDefault(const std::vector<std::string>& wanted) const;

  // Opens a file dialog in the shown file's folder, else in `startDir`; emits fileChosen.
  void browse();
  void setStartDir(const QString& dir) { m_startDir = dir; }

  // The delimiter the file's first line most likely uses: the most frequent of ',', ';', tab and
  // '|' (',' when none occurs or the file cannot be read).
  static char guessDelimiter(const QString& file);

 signals:
  void fileChosen(const QString& path);
  void delimiterEdited();
  void rolesEdited();

 private:
  void connectSignals();
  void setDelimiterItem(char delimiter);
  void applyRoleFlags();
  void onRoleItemChanged(QTableWidgetItem* item);
  bool isChecked(int row, int column) const;
  void fitHeight(QTableWidget* table, int rows, int maxRows);

  QLineEdit* m_path = nullptr;
  QPushButton* m_browse = nullptr;
  QComboBox* m_delimiter = nullptr;
  QTableWidget* m_rows = nullptr;
  QLabel* m_rowInfo = nullptr;
  QTableWidget* m_roles = nullptr;
  QLabel* m_error = nullptr;
  QStringList m_header;
  std::vector<int64_t> m_rowLines;  // the file line each preview row starts on
  QString m_startDir;
  bool m_readOnly = false;
  bool m_filling = false;  // filling the role table: no rolesEdited()
};

}  // namespace fitbench
