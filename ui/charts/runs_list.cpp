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
#include <cmath>

#include "ui/common/session_runs.h"

namespace fitbench {
namespace {

constexpr int kIdRole = Qt::UserRole + 1;
enum Column { kName = 0, kEpochs = 1, kLoss = 2 };

// A small swatch of the run's color (the charts' blue for runs drawn in their faded style).
QIcon swatch(const QColor& color) {
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
  m_tree->setColumnCount(3);
  m_tree->setHeaderLabels({tr("Run"), tr("Epochs"), tr("Final loss")});
  m_tree->header()->setSectionResizeMode(kName, QHeaderView::Stretch);
  m_tree->header()->setSectionResizeMode(kEpochs, QHeaderView::ResizeToContents);
  m_tree->header()->setSectionResizeMode(kLoss, QHeaderView::ResizeToContents);
  m_tree->header()->setStretchLastSection(false);
  m_tree->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_tree->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  m_tree->setToolTip(
      tr("Every run of this session. The check box shows or hides its curves in the charts; "
         "double-click a name (or press F2) to rename it; Delete removes the selected runs."));
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
  connect(m_delete, &QPushButton::clicked, this, &RunsList::deleteSelected);
  connect(m_export, &QPushButton::clicked, this, &RunsList::onExportClicked);
}

void RunsList::rebuild() {
  m_filling = true;
  m_tree->clear();
  for (const SessionRun& run : m_runs->runs()) {
    auto* item = new QTreeWidgetItem(m_tree);
    item->setData(kName, kIdRole, run.id);
    fill(item, run.id);
  }
  m_filling = false;
  m_empty->setVisible(m_runs->runs().empty());
  updateButtons();
}

QTreeWidgetItem* RunsList::itemFor(int id) const {
  for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
    if (m_tree->topLevelItem(i)->data(kName, kIdRole).toInt() == id) return m_tree->topLevelItem(i);
  return nullptr;
}

void RunsList::refresh(int id) {
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
  item->setIcon(kName, swatch(run->color));
  item->setCheckState(kName, run->shown ? Qt::Checked : Qt::Unchecked);
  item->setToolTip(kName, run->fromSweep ? tr("%1 (from the sweep)").arg(run->label)
                                         : tr("%1 (from Run)").arg(run->label));
  const auto loss = run->history.history.find("loss");
  item->setText(kEpochs, run->ended ? QString::number(run->history.epoch.size()) : tr("running"));
  item->setText(kLoss, loss != run->history.history.end() && !loss->second.empty()
                           ? QString::number(loss->second.back(), 'g', 4)
                           : QString());
  item->setTextAlignment(kEpochs, Qt::AlignRight | Qt::AlignVCenter);
  item->setTextAlignment(kLoss, Qt::AlignRight | Qt::AlignVCenter);
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
  if (watched == m_tree && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Delete) {  // an editor has its own keys
    deleteSelected();
    return true;
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
