#include "ui/charts/runs_list.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/session_runs.h"

namespace fitbench {
namespace {

constexpr int kIdRole = Qt::UserRole + 1;
// Run, Settings, Epochs, then one column per final value (metricKeys).
enum RunColumn { kName = 0, kSettings = 1, kEpochs = 2, kFirstValue = 3 };

// Keras's order of a history's keys: loss, the metrics, then the validation ones in the same
// order; the rest (a learning rate a callback logs) last.
int keyRank(const std::string& key) {
  if (key == "loss") return 0;
  if (key == "val_loss") return 2;
  if (key.rfind("val_", 0) == 0) return 3;
  if (key == "learning_rate" || key == "lr") return 4;
  return 1;
}

// A small swatch of the run's color (the charts' blue for runs drawn in their faded style).
QIcon runSwatch(const QColor& color) {
  QPixmap pixmap(12, 12);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color.isValid() ? color : QColor(31, 119, 180, 140));
  painter.drawEllipse(QRectF(1, 1, 10, 10));
  return QIcon(pixmap);
}

}  // namespace

RunsList::RunsList(SessionRuns* runs, QWidget* parent) : QWidget(parent), m_runs(runs) {
  m_tree = new QTreeWidget;
  m_tree->setObjectName(QStringLiteral("runsTree"));
  m_tree->setRootIsDecorated(false);
  m_tree->header()->setStretchLastSection(false);
  m_tree->header()->setMinimumSectionSize(40);
  setColumns();
  m_tree->setSelectionMode(QAbstractItemView::ExtendedSelection);
  // Only the name is edited, wherever on its row the double-click or F2 lands (the other
  // columns are the run's record).
  m_tree->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_tree->setToolTip(
      tr("Every run of this session, named by the settings in which the runs differ, with all "
         "its settings and its last epoch's values. The check box shows or hides its curves in "
         "the charts; double-click a name (or press F2) to rename it; Delete removes the "
         "selected runs."));
  m_empty = new QLabel(tr("Runs appear here as they start: Run, or each trial of a sweep."));
  m_empty->setWordWrap(true);
  m_empty->setForegroundRole(QPalette::PlaceholderText);
  m_delete = new QPushButton(tr("Delete"));
  m_delete->setToolTip(tr("Remove the selected runs from the list and the charts (Delete)"));
  m_export = new QPushButton(tr("Export CSV…"));
  m_export->setToolTip(
      tr("Write the selected runs' histories (every run's when none is selected) to a CSV file: "
         "one row per run and epoch"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_delete);
  buttons->addStretch(1);
  buttons->addWidget(m_export);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(m_empty);
  layout->addWidget(m_tree, 1);
  layout->addLayout(buttons);
  m_tree->installEventFilter(this);
  connectSignals();
  rebuild();
}

void RunsList::connectSignals() {
  connect(m_runs, &SessionRuns::added, this, [this] { rebuild(); });
  connect(m_runs, &SessionRuns::removed, this, [this] { rebuild(); });
  connect(m_runs, &SessionRuns::cleared, this, [this] { rebuild(); });
  connect(m_runs, &SessionRuns::changed, this, &RunsList::refresh);
  connect(m_tree, &QTreeWidget::itemChanged, this, &RunsList::onItemChanged);
  connect(m_tree, &QTreeWidget::itemSelectionChanged, this, &RunsList::updateButtons);
  connect(m_tree, &QTreeWidget::itemDoubleClicked, this,
          [this](QTreeWidgetItem* item) { m_tree->editItem(item, kName); });
  connect(m_delete, &QPushButton::clicked, this, &RunsList::deleteSelected);
  connect(m_export, &QPushButton::clicked, this, &RunsList::onExportClicked);
}

QStringList RunsList::metricKeys() const {
  std::vector<std::string> keys;
  for (const SessionRun& run : m_runs->runs())
    for (const auto& [key, values] : run.history.history)
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    return keyRank(a) < keyRank(b);
  });
  QStringList out;
  for (const std::string& key : keys) out << QString::fromStdString(key);
  return out;
}

void RunsList::setColumns() {
  m_keys = metricKeys();
  QStringList labels{tr("Run"), tr("Settings"), tr("Epochs")};
  labels << m_keys;
  m_tree->setColumnCount(static_cast<int>(labels.size()));
  m_tree->setHeaderLabels(labels);
  QTreeWidgetItem* header = m_tree->headerItem();
  header->setToolTip(kSettings, tr("Everything the run trained with (its experiment's "
                                   "optimizer, model, fit options, devices and data)"));
  for (int c = kFirstValue; c < labels.size(); ++c) {
    header->setToolTip(c, tr("%1 at the run's last epoch").arg(labels[c]));
    header->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  }
  QHeaderView* h = m_tree->header();
  h->setSectionResizeMode(kName, QHeaderView::Interactive);
  h->setSectionResizeMode(kSettings, QHeaderView::Stretch);
  for (int c = kEpochs; c < labels.size(); ++c)
    h->setSectionResizeMode(c, QHeaderView::ResizeToContents);
}

void RunsList::rebuild() {
  m_filling = true;
  if (metricKeys() != m_keys) setColumns();
  m_tree->clear();
  for (const SessionRun& run : m_runs->runs()) {
    auto* item = new QTreeWidgetItem(m_tree);
    item->setData(kName, kIdRole, run.id);
    fill(item, run.id);
  }
  m_filling = false;
  // The name column fits the longest name, within reason; the settings take the rest.
  m_tree->resizeColumnToContents(kName);
  m_tree->setColumnWidth(kName, std::min(m_tree->columnWidth(kName), 260));
  m_empty->setVisible(m_runs->runs().empty());
  updateButtons();
}

QTreeWidgetItem* RunsList::itemFor(int id) const {
  for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
    if (m_tree->topLevelItem(i)->data(kName, kIdRole).toInt() == id) return m_tree->topLevelItem(i);
  return nullptr;
}

void RunsList::refresh(int id) {
  if (metricKeys() != m_keys) {  // a run ended with values the table has no column for
    rebuild();
    return;
  }
  if (QTreeWidgetItem* item = itemFor(id)) {
    m_filling = true;
    fill(item, id);
    m_filling = false;
  }
}

void RunsList::fill(QTreeWidgetItem* item, int id) {
  const SessionRun* run = m_runs->find(id);
  if (!run) return;
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable |
                 Qt::ItemIsUserCheckable);
  item->setText(kName, run->label);
  item->setIcon(kName, runSwatch(run->color));
  item->setCheckState(kName, run->shown ? Qt::Checked : Qt::Unchecked);
  item->setToolTip(kName, run->fromSweep ? tr("%1 (from the sweep)").arg(run->label)
                                         : tr("%1 (from Run)").arg(run->label));
  const QString settings = QString::fromStdString(settings_text(run->settings));
  item->setText(kSettings, settings);
  item->setToolTip(kSettings, settings);
  item->setText(kEpochs, run->ended ? QString::number(run->history.epoch.size()) : tr("running"));
  item->setTextAlignment(kEpochs, Qt::AlignRight | Qt::AlignVCenter);
  for (int i = 0; i < m_keys.size(); ++i) {
    const auto values = run->history.history.find(m_keys[i].toStdString());
    const bool has = values != run->history.history.end() && !values->second.empty();
    item->setText(kFirstValue + i,
                  has ? QString::number(values->second.back(), 'g', 4) : QString());
    item->setTextAlignment(kFirstValue + i, Qt::AlignRight | Qt::AlignVCenter);
  }
}

void RunsList::onItemChanged(QTreeWidgetItem* item, int column) {
  if (m_filling || column != kName) return;
  const int id = item->data(kName, kIdRole).toInt();
  const SessionRun* run = m_runs->find(id);
  if (!run) return;
  // Either edit: the check box or the name. An emptied name goes back to the old one.
  m_runs->setShown(id, item->checkState(kName) == Qt::Checked);
  if (item->text(kName).trimmed().isEmpty())
    refresh(id);
  else
    m_runs->rename(id, item->text(kName));
}

std::vector<int> RunsList::selectedIds() const {
  std::vector<int> ids;
  for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
    if (m_tree->topLevelItem(i)->isSelected())
      ids.push_back(m_tree->topLevelItem(i)->data(kName, kIdRole).toInt());
  return ids;
}

bool RunsList::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_tree && event->type() == QEvent::KeyPress) {  // an editor has its own keys
    const int key = static_cast<QKeyEvent*>(event)->key();
    if (key == Qt::Key_Delete) {
      deleteSelected();
      return true;
    }
    if (key == Qt::Key_F2 && m_tree->currentItem()) {
      m_tree->editItem(m_tree->currentItem(), kName);
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

void RunsList::deleteSelected() {
  for (const int id : selectedIds()) m_runs->remove(id);
}

bool RunsList::exportTo(const QString& path, QString* error) {
  return m_runs->exportCsv(path, selectedIds(), error);
}

void RunsList::onExportClicked() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export runs"), tr("runs.csv"), tr("CSV file (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportTo(path, &error)) QMessageBox::warning(this, tr("Export runs"), error);
}

void RunsList::updateButtons() {
  m_delete->setEnabled(!selectedIds().empty());
  m_export->setEnabled(!m_runs->runs().empty());
}

}  // namespace fitbench
