#include "ui/rehearsal/sweep_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "ui/rehearsal/objective_scatter.h"
#include "ui/rehearsal/parallel_coordinates.h"
#include "ui/rehearsal/trials_filter.h"
#include "ui/rehearsal/trials_model.h"

namespace fitbench {

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("sweepView"));
  m_model = new TrialsModel(this);
  m_filter = new TrialsFilter(m_model, this);

  m_summary = new QLabel;
  m_summary->setObjectName(QStringLiteral("sweepSummary"));
  m_summary->setWordWrap(true);
  m_error = new QLabel;
  m_error->setObjectName(QStringLiteral("sweepError"));
  m_error->setStyleSheet(QStringLiteral("color: #b00020;"));
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->hide();
  m_intro = new QLabel;
  m_intro->setWordWrap(true);
  m_intro->setForegroundRole(QPalette::PlaceholderText);
  m_filterEdit = new QLineEdit;
  m_filterEdit->setObjectName(QStringLiteral("sweepFilter"));
  m_filterEdit->setPlaceholderText(tr("Filter trials (any column)"));
  m_filterEdit->setClearButtonEnabled(true);
  m_clearBrushes = new QPushButton(tr("Clear brushes"));
  m_clearBrushes->setToolTip(tr("Show every trial again (the plot's brushed ranges go)"));
  m_clearBrushes->hide();
  m_open = new QPushButton(tr("Open as experiment"));
  m_open->setToolTip(
      tr("Load the selected trial's resolved settings into the panels, as an untitled experiment"));
  m_open->setEnabled(false);

  m_table = new QTableView;
  m_table->setObjectName(QStringLiteral("trialsTable"));
  m_table->setModel(m_filter);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(0, Qt::AscendingOrder);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->hide();
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setMinimumHeight(m_table->verticalHeader()->defaultSectionSize() * 2 + 28);
  m_table->setToolTip(
      tr("Click a column's header to sort by it; select trials to overlay their "
         "curves in the loss and metric charts."));

  m_parallel = new ParallelCoordinates(m_filter);
  m_scatter = new ObjectiveScatter(m_filter);

  m_jobs = new QSpinBox;
  m_jobs->setObjectName(QStringLiteral("sweepJobs"));
  m_jobs->setRange(1, 64);
  m_jobs->setValue(std::max(1, QThread::idealThreadCount()));
  m_jobs->setPrefix(tr("jobs "));
  m_jobs->setToolTip(
      tr("Cores the trials share: a trial of d devices takes d of them, so 2 jobs "
         "run two 1-device trials at once"));
  auto* bar = m_bar = new QHBoxLayout;
  bar->addWidget(m_jobs);
  bar->addWidget(m_filterEdit, 1);
  bar->addWidget(m_clearBrushes);
  bar->addWidget(m_open);
  // The table above, the two plots side by side below: a dock beside the charts is wider than
  // it is tall on a 1280 x 720 projector.
  auto* plots = new QSplitter(Qt::Horizontal);
  plots->addWidget(m_parallel);
  plots->addWidget(m_scatter);
  plots->setStretchFactor(0, 3);
  plots->setStretchFactor(1, 2);
  plots->setChildrenCollapsible(false);
  auto* splitter = new QSplitter(Qt::Vertical);
  m_splitter = splitter;
  splitter->setObjectName(QStringLiteral("sweepSplitter"));
  splitter->addWidget(m_table);
  splitter->addWidget(plots);
  splitter->setStretchFactor(0, 4);
  splitter->setStretchFactor(1, 5);
  splitter->setChildrenCollapsible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->setSpacing(3);
  layout->addWidget(m_summary);
  layout->addWidget(m_error);
  layout->addWidget(m_intro);
  layout->addLayout(bar);
  layout->addWidget(splitter, 1);
  layout->addStretch(0);
  connectSignals();
  updateSummary();
}

void SweepView::connectSignals() {
  connect(m_filterEdit, &QLineEdit::textChanged, m_filter,
          &QSortFilterProxyModel::setFilterFixedString);
  connect(m_clearBrushes, &QPushButton::clicked, m_filter, &TrialsFilter::clearBrushes);
  connect(m_filter, &TrialsFilter::brushesChanged, this,
          [this] { m_clearBrushes->setVisible(!m_filter->brushes().empty()); });
  connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &SweepView::onSelectionChanged);
  connect(m_open, &QPushButton::clicked, this, [this] {
    const QList<int> trials = selectedTrials();
    if (trials.size() == 1) emit openAsExperiment(trials.front());
  });
  connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (!m_running) emit openAsExperiment(index.data(TrialsModel::kTrialRole).toInt());
  });
  const auto select = [this](int trial) { selectTrials({trial}); };
  connect(m_parallel, &ParallelCoordinates::trialClicked, this, select);
  connect(m_scatter, &ObjectiveScatter::trialClicked, this, select);
  connect(m_filter, &TrialsFilter::drawingChanged, this, &SweepView::updateSummary);
}

int SweepView::jobs() const { return m_jobs->value(); }

void SweepView::setRunActions(QAction* sweep, QAction* stop) {
  int at = 0;
  for (QAction* action : {sweep, stop}) {
    auto* button = new QToolButton;
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_bar->insertWidget(at++, button);
  }
}

void SweepView::setIntro(const QString& text) {
  m_intro->setText(text);
  m_intro->setVisible(!text.isEmpty());
}

void SweepView::setError(const QString& error) {
  m_error->setText(error);
  m_error->setVisible(!error.isEmpty());
}

QString SweepView::errorText() const { return m_error->text(); }

void SweepView::setRunning(bool running) {
  m_running = running;
  m_open->setEnabled(!running && selectedTrials().size() == 1);
  updateSummary();
}

void SweepView::updateSummary() {
  const int trials = m_model->trialCount();
  // No sweep yet: the bar and what to do, not an empty table and empty plots.
  m_splitter->setVisible(trials > 0);
  if (trials == 0) {
    m_summary->clear();
    m_summary->hide();
    return;
  }
  int done = 0, running = 0;
  for (int t = 0; t < trials; ++t) {
    const auto status = m_model->result(t).status;
    if (status == TrialResult::Status::kRunning)
      ++running;
    else if (status != TrialResult::Status::kPending)
      ++done;
  }
  QString text = tr("<b>%1 sweep</b> · %2 of %3 trials done")
                     .arg(QString::fromStdString(m_model->plan()->spec.method))
                     .arg(done)
                     .arg(trials);
  if (m_running && running > 0) text += tr(" · %1 running").arg(running);
  if (const int best = m_model->bestTrial(); best >= 0)
    text += tr(" · best %1 %2 (trial %3)")
                .arg(m_model->objectiveName())
                .arg(m_model->result(best).objective, 0, 'g', 4)
                .arg(best);
  if (m_filter->rowCount() < trials) text += tr(" · %1 shown").arg(m_filter->rowCount());
  m_summary->setText(text);
  m_summary->show();
}

QList<int> SweepView::selectedTrials() const {
  QList<int> trials;
  QModelIndexList rows = m_table->selectionModel()->selectedRows();
  std::sort(rows.begin(), rows.end(),
            [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  for (const QModelIndex& index : rows) trials << index.data(TrialsModel::kTrialRole).toInt();
  return trials;
}

void SweepView::selectTrials(const QList<int>& trials) {
  QItemSelection selection;
  for (int row = 0; row < m_filter->rowCount(); ++row) {
    const QModelIndex index = m_filter->index(row, 0);
    if (trials.contains(index.data(TrialsModel::kTrialRole).toInt()))
      selection.select(index, m_filter->index(row, m_filter->columnCount() - 1));
  }
  m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
  if (!selection.isEmpty()) m_table->scrollTo(selection.indexes().front());
}

void SweepView::onSelectionChanged() {
  const QList<int> trials = selectedTrials();
  m_open->setEnabled(!m_running && trials.size() == 1);
  m_parallel->setSelected(trials);
  m_scatter->setSelected(trials);
  emit selectionChanged(trials);
}

}  // namespace fitbench
