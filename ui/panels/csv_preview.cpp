// CsvPreview: the CSV file's path, delimiter, first rows and column roles.

#include "ui/panels/csv_preview.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTableWidget>
#include <algorithm>
#include <array>
#include <utility>

#include "core/base/error.h"
#include "core/data/csv_reader.h"
#include "ui/common/field_error.h"

namespace fitbench {
namespace {

constexpr int kTargetColumn = 1;
constexpr int kFeatureColumn = 2;

const std::array<std::pair<const char*, char>, 5> kDelimiters = {
    {{"Comma  ,", ','}, {"Semicolon  ;", ';'}, {"Tab", '\t'}, {"Pipe  |", '|'}, {"Space", ' '}}};

bool contains(const std::vector<std::string>& names, const QString& name) {
  return std::find(names.begin(), names.end(), name.toStdString()) != names.end();
}

QTableWidgetItem* checkItem(bool checked) {
  auto* item = new QTableWidgetItem;
  item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
  return item;
}

}  // namespace

CsvPreview::CsvPreview(QWidget* parent) : QWidget(parent) {
  m_path = new QLineEdit;
  m_path->setObjectName("csvPath");
  m_path->setReadOnly(true);
  m_path->setPlaceholderText(tr("No file chosen"));
  m_browse = new QPushButton(tr("Browse…"));
  m_browse->setObjectName("csvBrowse");
  m_browse->setToolTip(
      tr("Choose a CSV file with a header row (you can also drop one on the window)"));
  auto* fileRow = new QHBoxLayout;
  fileRow->setContentsMargins(0, 0, 0, 0);
  fileRow->addWidget(m_path, 1);
  fileRow->addWidget(m_browse);

  m_delimiter = new QComboBox;
  m_delimiter->setObjectName("csvDelimiter");
  for (const auto& [label, c] : kDelimiters) m_delimiter->addItem(tr(label), int(c));

  m_rows = new QTableWidget;
  m_rows->setObjectName("csvRows");
  m_rows->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_rows->setSelectionMode(QAbstractItemView::NoSelection);
  m_rows->verticalHeader()->setDefaultSectionSize(m_rows->fontMetrics().height() + 4);
  m_rows->horizontalHeader()->setDefaultSectionSize(64);
  m_rows->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  m_rowInfo = new QLabel;
  m_rowInfo->setObjectName("csvRowInfo");
  m_rowInfo->setForegroundRole(QPalette::PlaceholderText);

  m_roles = new QTableWidget(0, 3);
  m_roles->setObjectName("csvRoles");
  m_roles->setHorizontalHeaderLabels({tr("Column"), tr("Target"), tr("Feature")});
  m_roles->setToolTip(
      tr("Target: what the model predicts (one column, or several one-hot columns). Feature: the "
         "model's inputs; every column that is not a target, unless you uncheck some."));
  m_roles->setSelectionMode(QAbstractItemView::NoSelection);
  m_roles->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_roles->verticalHeader()->hide();
  m_roles->verticalHeader()->setDefaultSectionSize(m_roles->fontMetrics().height() + 6);
  m_roles->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_roles->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  m_roles->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);

  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->addRow(tr("File"), fileRow);
  form->addRow(tr("Delimiter"), m_delimiter);
  form->addRow(new QLabel(tr("First rows")));
  form->addRow(m_rows);
  form->addRow(m_rowInfo);
  form->addRow(new QLabel(tr("Columns")));
  form->addRow(m_roles);
  m_error = makeFieldErrorLabel();
  m_error->setObjectName("csvError");
  form->addRow(m_error);
  connectSignals();
}

void CsvPreview::connectSignals() {
  connect(m_browse, &QPushButton::clicked, this, &CsvPreview::browse);
  connect(m_delimiter, &QComboBox::activated, this, &CsvPreview::delimiterEdited);
  connect(m_roles, &QTableWidget::itemChanged, this, &CsvPreview::onRoleItemChanged);
}

bool CsvPreview::showFile(const QString& file, const QString& shownPath, char delimiter) {
  m_path->setText(shownPath);
  m_path->setProperty("file", file);
  m_path->setToolTip(file);
  m_path->setCursorPosition(0);
  setDelimiterItem(delimiter);
  m_header.clear();
  m_rows->clear();
  m_rows->setRowCount(0);
  m_rows->setColumnCount(0);

  std::vector<std::vector<QString>> cells;
  m_rowLines.clear();
  qint64 total = 0;
  bool ok = true;
  try {
    CsvReader reader(file.toStdString(), shownPath.toStdString(), delimiter);
    for (const std::string& name : reader.read_header()) m_header << QString::fromStdString(name);
    CsvRecord record;
    while (reader.next(record)) {
      if (total < kPreviewRows) {
        std::vector<QString> row;
        for (const CsvField& f : record.fields)
          row.push_back(QString::fromUtf8(f.text.data(), static_cast<qsizetype>(f.text.size())));
        cells.push_back(std::move(row));
        m_rowLines.push_back(record.line);
      }
      ++total;
    }
  } catch (const InputError&) {
    ok = false;  // the panel shows the data set's own error, which names the line and column
  }

  int columns = static_cast<int>(m_header.size());
  for (const auto& row : cells) columns = std::max(columns, static_cast<int>(row.size()));
  m_rows->setColumnCount(columns);
  m_rows->setRowCount(static_cast<int>(cells.size()));
  QStringList labels = m_header;
  while (labels.size() < columns) labels << QString();
  m_rows->setHorizontalHeaderLabels(labels);
  // Each column as wide as its name, up to 160 px; a longer name ends in an ellipsis (its
  // tooltip has it whole).
  const QFontMetrics fm(m_rows->horizontalHeader()->font());
  constexpr int kMostWidth = 160, kPadding = 16;
  for (int c = 0; c < columns; ++c) {
    QTableWidgetItem* item = m_rows->horizontalHeaderItem(c);
    if (!item) continue;
    item->setToolTip(labels[c]);
    item->setText(fm.elidedText(labels[c], Qt::ElideRight, kMostWidth - kPadding));
    m_rows->setColumnWidth(
        c, std::clamp(fm.horizontalAdvance(item->text()) + kPadding, 64, kMostWidth));
  }
  QStringList lines;  // rows are labelled with their line in the file, as errors name them
  for (int64_t line : m_rowLines) lines << QString::number(line);
  m_rows->setVerticalHeaderLabels(lines);
  fitHeight(m_rows, static_cast<int>(cells.size()), 7);
  for (int r = 0; r < static_cast<int>(cells.size()); ++r) {
    for (int c = 0; c < static_cast<int>(cells[r].size()); ++c)
      m_rows->setItem(r, c, new QTableWidgetItem(cells[r][c]));
  }
  const QLocale locale;
  if (!ok) {
    m_rowInfo->setText(tr("Read %1 rows before the error").arg(locale.toString(total)));
  } else if (total > kPreviewRows) {
    m_rowInfo->setText(tr("The first %1 of %2 rows").arg(kPreviewRows).arg(locale.toString(total)));
  } else {
    m_rowInfo->setText(total == 1 ? tr("1 row") : tr("All %1 rows").arg(total));
  }

  m_filling = true;
  m_roles->setRowCount(static_cast<int>(m_header.size()));
  for (int r = 0; r < static_cast<int>(m_header.size()); ++r) {
    auto* name = new QTableWidgetItem(m_header[r]);
    name->setFlags(Qt::ItemIsEnabled);
    m_roles->setItem(r, 0, name);
    m_roles->setItem(r, kTargetColumn, checkItem(false));
    m_roles->setItem(r, kFeatureColumn, checkItem(true));
  }
  m_filling = false;
  fitHeight(m_roles, static_cast<int>(m_header.size()), 6);
  applyRoleFlags();
  return ok;
}

// Tall enough for `rows` rows (at least 2, at most maxRows; more scroll) and a scroll bar.
void CsvPreview::fitHeight(QTableWidget* table, int rows, int maxRows) {
  const int shown = std::clamp(rows, 2, maxRows);
  const int scrollBar = table == m_rows ? table->horizontalScrollBar()->sizeHint().height() : 0;
  const int height = table->horizontalHeader()->sizeHint().height() +
                     shown * table->verticalHeader()->defaultSectionSize() + scrollBar +
                     2 * table->frameWidth();
  if (table->height() != height) table->setFixedHeight(height);
}

void CsvPreview::clearFile() {
  m_path->clear();
  m_path->setProperty("file", QString());
  m_path->setToolTip({});
  m_header.clear();
  m_rows->clear();
  m_rows->setRowCount(0);
  m_rows->setColumnCount(0);
  m_rowInfo->clear();
  m_rowLines.clear();
  m_roles->setRowCount(0);
}

QString CsvPreview::shownPath() const { return m_path->text(); }

void CsvPreview::setRoles(const std::vector<std::string>& targets,
                          const std::vector<std::string>& features) {
  m_filling = true;
  for (int r = 0; r < m_roles->rowCount(); ++r) {
    const bool target = contains(targets, m_header[r]);
    const bool feature = !target && (features.empty() || contains(features, m_header[r]));
    m_roles->item(r, kTargetColumn)->setCheckState(target ? Qt::Checked : Qt::Unchecked);
    m_roles->item(r, kFeatureColumn)->setCheckState(feature ? Qt::Checked : Qt::Unchecked);
  }
  m_filling = false;
  applyRoleFlags();
}

bool CsvPreview::isChecked(int row, int column) const {
  return m_roles->item(row, column)->checkState() == Qt::Checked;
}

std::vector<std::string> CsvPreview::targets() const {
  std::vector<std::string> out;
  for (int r = 0; r < m_roles->rowCount(); ++r) {
    if (isChecked(r, kTargetColumn)) out.push_back(m_header[r].toStdString());
  }
  return out;
}

std::vector<std::string> CsvPreview::features() const {
  std::vector<std::string> out;
  bool every = true;
  for (int r = 0; r < m_roles->rowCount(); ++r) {
    if (isChecked(r, kTargetColumn)) continue;
    if (isChecked(r, kFeatureColumn)) {
      out.push_back(m_header[r].toStdString());
    } else {
      every = false;
    }
  }
  if (every) out.clear();
  return out;
}

char CsvPreview::delimiter() const { return static_cast<char>(m_delimiter->currentData().toInt()); }

void CsvPreview::setDelimiterItem(char delimiter) {
  int index = m_delimiter->findData(int(delimiter));
  if (index < 0) {
    m_delimiter->addItem(QStringLiteral("'%1'").arg(QChar::fromLatin1(delimiter)), int(delimiter));
    index = m_delimiter->count() - 1;
  }
  m_delimiter->setCurrentIndex(index);
}

void CsvPreview::setReadOnly(bool readOnly) {
  m_readOnly = readOnly;
  m_browse->setEnabled(!readOnly);
  m_delimiter->setEnabled(!readOnly);
  applyRoleFlags();
}

// A target's feature box is off and greyed; in read-only mode every box is greyed (the table
// still scrolls).
void CsvPreview::applyRoleFlags() {
  const bool filling = std::exchange(m_filling, true);
  for (int r = 0; r < m_roles->rowCount(); ++r) {
    const Qt::ItemFlags editable = Qt::ItemIsEnabled | Qt::ItemIsUserCheckable;
    m_roles->item(r, kTargetColumn)->setFlags(m_readOnly ? Qt::ItemIsUserCheckable : editable);
    const bool target = isChecked(r, kTargetColumn);
    m_roles->item(r, kFeatureColumn)
        ->setFlags(m_readOnly || target ? Qt::ItemIsUserCheckable : editable);
  }
  m_filling = filling;
}

void CsvPreview::onRoleItemChanged(QTableWidgetItem* item) {
  if (m_filling) return;
  if (item->column() == kTargetColumn) {
    m_filling = true;
    m_roles->item(item->row(), kFeatureColumn)
        ->setCheckState(item->checkState() == Qt::Checked ? Qt::Unchecked : Qt::Checked);
    m_filling = false;
    applyRoleFlags();
  } else if (item->column() != kFeatureColumn) {
    return;
  }
  emit rolesEdited();
}

void CsvPreview::setError(const QString& message, const QString& place) {
  m_error->setText(message);
  m_error->setVisible(!message.isEmpty());
  m_path->setToolTip(message.isEmpty() ? m_path->property("file").toString() : message);
  for (int r = 0; r < m_rows->rowCount(); ++r) {
    for (int c = 0; c < m_rows->columnCount(); ++c) {
      if (QTableWidgetItem* item = m_rows->item(r, c)) item->setBackground(QBrush());
    }
  }
  static const QRegularExpression cell(QStringLiteral(":(\\d+)(?::(\\d+))?(?: \\(.*\\))?$"));
  const QRegularExpressionMatch match = cell.match(place);
  if (message.isEmpty() || !match.hasMatch()) return;
  const auto at = std::find(m_rowLines.begin(), m_rowLines.end(), match.captured(1).toLongLong());
  if (at == m_rowLines.end()) return;
  const int row = static_cast<int>(at - m_rowLines.begin());
  const int column = match.captured(2).isEmpty() ? -1 : match.captured(2).toInt() - 1;
  for (int c = 0; c < m_rows->columnCount(); ++c) {
    QTableWidgetItem* item = m_rows->item(row, c);
    if (item != nullptr && (column < 0 || c == column))
      item->setBackground(QColor(0xff, 0xcd, 0xd2));
  }
  m_rows->scrollToItem(m_rows->item(row, std::max(column, 0)));
}

std::vector<std::string> CsvPreview::targetsOrDefault(
    const std::vector<std::string>& wanted) const {
  const bool present =
      !wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& n) {
        return m_header.contains(QString::fromStdString(n));
      });
  if (present || m_header.isEmpty()) return present ? wanted : std::vector<std::string>{};
  return {m_header.back().toStdString()};
}

void CsvPreview::browse() {
  const QString shown = m_path->property("file").toString();
  const QString dir = shown.isEmpty() ? m_startDir : QFileInfo(shown).absolutePath();
  const QString file = QFileDialog::getOpenFileName(
      this, tr("Open a CSV file"), dir, tr("CSV files (*.csv *.tsv *.txt);;All files (*)"));
  if (!file.isEmpty()) emit fileChosen(file);
}

char CsvPreview::guessDelimiter(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return ',';
  QByteArray line;
  while (!f.atEnd() && line.trimmed().isEmpty()) line = f.readLine(1 << 16);
  char best = ',';
  qsizetype bestCount = 0;
  for (char c : {',', ';', '\t', '|'}) {
    const qsizetype n = line.count(c);
    if (n > bestCount) {
      best = c;
      bestCount = n;
    }
  }
  return best;
}

}  // namespace fitbench
