// MainWindow's actions, toolbar and menus: File (New, Open, Examples, Recent, Save, Export,
// Quit), Run (Run, Pause, Step, Stop, Reset, Clear previous runs), View and Help. The window's
// other parts: main_window.cpp.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>
#include <algorithm>
#include <cmath>

#include "ui/charts/metric_chart.h"
#include "ui/common/about_view.h"
#include "ui/common/zoom.h"
#include "ui/rehearsal/sweep_view.h"
#include "ui/window/lesson_dialog.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/training_session.h"

namespace fitbench {

void MainWindow::buildActions() {
  auto make = [this](const QString& text, QStyle::StandardPixmap icon, const QKeySequence& key,
                     const QString& tip) {
    auto* act = new QAction(style()->standardIcon(icon), text, this);
    if (!key.isEmpty()) act->setShortcut(key);
    act->setShortcutVisibleInContextMenu(true);  // every shortcut is shown in the menus
    act->setToolTip(
        key.isEmpty() ? tip
                      : QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
    act->setStatusTip(tip);
    return act;
  };
  m_newAct = make(tr("&New"), QStyle::SP_FileIcon, QKeySequence::New, tr("A new experiment"));
  m_openAct = make(tr("&Open…"), QStyle::SP_DialogOpenButton, QKeySequence::Open,
                   tr("Open an experiment file"));
  m_saveAct =
      make(tr("&Save"), QStyle::SP_DialogSaveButton, QKeySequence::Save, tr("Save the experiment"));
  // Explicit: QKeySequence::SaveAs is empty where the platform has no binding for it (X11
  // without a desktop theme, e.g. Xvfb with openbox, and the offscreen platform).
  m_saveAsAct =
      make(tr("Save &As…"), QStyle::SP_DialogSaveButton,
           QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), tr("Save the experiment to a new file"));
  m_runAct = make(tr("&Run"), QStyle::SP_MediaPlay, QKeySequence(Qt::CTRL | Qt::Key_R),
                  tr("Train the model with fit()"));
  m_pauseAct = make(tr("&Pause"), QStyle::SP_MediaPause, QKeySequence(Qt::CTRL | Qt::Key_P),
                    tr("Pause or resume training between two batches"));
  m_stepAct = make(tr("S&tep"), QStyle::SP_MediaSkipForward, QKeySequence(Qt::Key_F10),
                   tr("Train one batch, then hold"));
  m_stopAct = make(tr("St&op"), QStyle::SP_MediaStop, QKeySequence(Qt::CTRL | Qt::Key_Period),
                   tr("Stop training after the current batch"));
  m_resetAct =
      make(tr("Re&set"), QStyle::SP_BrowserReload, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
           tr("Forget the trained weights and the current run's curves; the next run "
              "starts from freshly initialized weights"));
  m_clearRunsAct = make(tr("&Clear previous runs"), QStyle::SP_DialogResetButton, {},
                        tr("Remove the faded curves of earlier runs from the charts"));

  m_sweepAct = make(tr("S&weep"), QStyle::SP_FileDialogListView,
                    QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W),
                    tr("Run the experiment's sweep section: its trials side by side in the Sweep "
                       "view (Stop ends it)"));
  m_sweepAct->setObjectName(QStringLiteral("sweepAction"));
  m_stopAct->setObjectName(QStringLiteral("stopAction"));
  m_evaluateAct = make(tr("&Evaluate on CSV…"), QStyle::SP_FileDialogContentsView,
                       QKeySequence(Qt::CTRL | Qt::Key_E),
                       tr("The trained model's loss and metrics on another CSV file"));
  m_predictAct = make(tr("Pre&dict on CSV…"), QStyle::SP_FileDialogDetailedView,
                      QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P),
                      tr("The trained model's predictions for another CSV file's rows"));
  m_evaluateAct->setObjectName(QStringLiteral("evaluateAction"));
  m_predictAct->setObjectName(QStringLiteral("predictAction"));
  connect(m_evaluateAct, &QAction::triggered, this, [this] { openEvaluateDialog(false); });
  connect(m_predictAct, &QAction::triggered, this, [this] { openEvaluateDialog(true); });
  m_stopAct->setToolTip(tr("Stop training (or the sweep) after the current batch (%1)")
                            .arg(m_stopAct->shortcut().toString(QKeySequence::NativeText)));

  auto* bar = addToolBar(tr("Run"));
  m_toolBar = bar;
  bar->setObjectName(QStringLiteral("RunToolBar"));
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  bar->addAction(m_openAct);
  bar->addAction(m_saveAct);
  bar->addSeparator();
  for (QAction* a : {m_runAct, m_pauseAct, m_stepAct, m_stopAct, m_resetAct}) bar->addAction(a);
  bar->addSeparator();
  // The pace, for a lesson narrated step by step (Step, F10, is the step-per-click pace).
  auto* pace = new QComboBox(bar);
  pace->setObjectName(QStringLiteral("pace"));
  pace->addItem(tr("Real time"), 0.0);
  pace->addItem(tr("30 steps/s"), 1.0 / 30.0);
  pace->addItem(tr("10 steps/s"), 0.1);
  pace->addItem(tr("3 steps/s"), 1.0 / 3.0);
  pace->addItem(tr("1 step/s"), 1.0);
  pace->setToolTip(
      tr("How fast training goes: as fast as it can, or slowed down so each step "
         "can be followed in the charts and the device timeline. Step (F10) trains "
         "one batch per press."));
  connect(pace, &QComboBox::currentIndexChanged, this, [this, pace] {
    m_runs->session()->setMinStepInterval(pace->currentData().toDouble());
    showStatus(tr("Pace: %1").arg(pace->currentText()), 3000);
  });
  auto* paceLabel = new QLabel(tr(" Pace "), bar);
  paceLabel->setBuddy(pace);
  bar->addWidget(paceLabel);
  bar->addWidget(pace);
  bar->addSeparator();
  bar->addAction(m_clearRunsAct);
  // Open and Save by their icons alone (their tooltips name them): the Layout toolbar beside
  // this one fits at 1280 px.
  for (QAction* a : {m_openAct, m_saveAct})
    if (auto* button = qobject_cast<QToolButton*>(bar->widgetForAction(a)))
      button->setToolButtonStyle(Qt::ToolButtonIconOnly);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(m_newAct);
  file->addAction(m_openAct);
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  m_examplesMenu = file->addMenu(tr("&Examples"));
  file->addSeparator();
  file->addAction(m_saveAct);
  file->addAction(m_saveAsAct);
  file->addSeparator();
  QMenu* exports = file->addMenu(tr("&Export"));
  m_exportActs << exports->addAction(tr("History as CSV…"), this, [this] { exportHistory(true); });
  m_exportActs << exports->addAction(tr("History as JSON…"), this,
                                     [this] { exportHistory(false); });
  m_exportTrialsAct =
      exports->addAction(tr("Sweep trials (CSV or JSON)…"), this, [this] { exportTrials(); });
  m_exportTrialsAct->setObjectName(QStringLiteral("exportTrialsAction"));
  m_exportTrialsAct->setStatusTip(
      tr("The Sweep view's trials as fitbench-cli sweep writes trials.csv or trials.json: "
         "parameters, objective, best epoch, status, time"));
  QAction* model = exports->addAction(tr("Trained model (fitbench JSON)…"), this,
                                      [this] { exportModel(ModelFormat::kFitbench); });
  QAction* keras = exports->addAction(tr("Trained model for Keras (.keras)…"), this,
                                      [this] { exportModel(ModelFormat::kKeras); });
  QAction* weights = exports->addAction(tr("Trained weights for Keras (.weights.h5)…"), this,
                                        [this] { exportModel(ModelFormat::kKerasWeights); });
  keras->setObjectName(QStringLiteral("exportKerasModelAction"));
  weights->setObjectName(QStringLiteral("exportKerasWeightsAction"));
  m_exportActs << model << keras << weights;
  QAction* script = exports->addAction(tr("Keras script…"), this, [this] { exportKerasScript(); });
  script->setObjectName(QStringLiteral("exportKerasScriptAction"));
  exports->addSeparator();
  exports->addAction(tr("Loss chart (PNG or SVG)…"), this, [this] { exportChart(m_lossChart); });
  exports->addAction(tr("Metric chart (PNG or SVG)…"), this,
                     [this] { exportChart(m_metricChart); });
  file->addSeparator();
  QAction* lesson = file->addAction(tr("Name and &lesson…"), this, [this] { editLesson(); });
  lesson->setObjectName(QStringLiteral("lessonAction"));
  lesson->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  lesson->setShortcutVisibleInContextMenu(true);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));  // QKeySequence::Quit: as SaveAs
  quit->setShortcutVisibleInContextMenu(true);

  QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
  for (QAction* a : {m_runAct, m_pauseAct, m_stepAct, m_stopAct, m_resetAct}) runMenu->addAction(a);
  runMenu->addSeparator();
  runMenu->addAction(m_sweepAct);
  runMenu->addSeparator();
  runMenu->addAction(m_evaluateAct);
  runMenu->addAction(m_predictAct);
  runMenu->setToolTipsVisible(true);  // why Evaluate and Predict are disabled before a run
  m_sweepView->setRunActions(m_sweepAct, m_stopAct);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(m_clearRunsAct);
  view->addSeparator();
  // Presentation zoom: every text and chart larger for a projector (ui/common/zoom.h). The keys
  // are explicit, as QKeySequence::ZoomIn is empty where the platform binds nothing.
  m_zoomInAct = view->addAction(tr("Zoom &in"), this, [this] { zoomBy(1); });
  m_zoomInAct->setShortcuts(
      {QKeySequence(Qt::CTRL | Qt::Key_Plus), QKeySequence(Qt::CTRL | Qt::Key_Equal)});
  m_zoomOutAct = view->addAction(tr("Zoom &out"), this, [this] { zoomBy(-1); });
  m_zoomOutAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Minus));
  m_zoomResetAct = view->addAction(tr("&Actual size"), this, [this] { zoomBy(0); });
  m_zoomResetAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  for (QAction* a : {m_zoomInAct, m_zoomOutAct, m_zoomResetAct}) {
    a->setShortcutVisibleInContextMenu(true);
    a->setShortcutContext(Qt::ApplicationShortcut);
  }
  m_zoomInAct->setObjectName(QStringLiteral("zoomInAction"));
  m_zoomOutAct->setObjectName(QStringLiteral("zoomOutAction"));
  m_zoomResetAct->setObjectName(QStringLiteral("zoomResetAction"));
  view->addSeparator();
  buildLayouts(view);
  view->addSeparator();
  for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About fitbench"), this, [this] {
    QMessageBox::about(
        this, tr("About fitbench"),
        tr("<b>fitbench</b> %1<br>A workbench for rehearsing Keras-style distributed training "
           "on simulated CPU devices.")
            .arg(QApplication::applicationVersion()));
  });
  updateExamplesMenu();
}

void MainWindow::editLesson() {
  const ExperimentSpec& base = m_doc.base();
  LessonDialog dialog(QString::fromStdString(base.name), QString::fromStdString(base.description),
                      this);
  if (dialog.exec() != QDialog::Accepted) return;
  m_doc.setText(dialog.name().toStdString(), dialog.description().toStdString());
  m_about->setDescription(dialog.name().isEmpty() ? tr("Untitled") : dialog.name(),
                          dialog.description());
  updateTitle();  // modified until saved
}

void MainWindow::zoomBy(int steps) {
  const std::vector<double>& all = zoomSteps();
  double next = 1.0;
  if (steps != 0) {
    // The step nearest the factor in effect, then `steps` along (held at the ends).
    size_t at = 0;
    for (size_t i = 0; i < all.size(); ++i)
      if (std::abs(all[i] - zoomFactor()) < std::abs(all[at] - zoomFactor())) at = i;
    const long to = std::clamp<long>(static_cast<long>(at) + steps, 0, long(all.size()) - 1);
    next = all[size_t(to)];
  }
  applyZoom(next);
  QSettings().setValue(QStringLiteral("view/zoom"), next);
  showStatus(tr("Zoom %1%").arg(qRound(next * 100)), 3000);
}

void MainWindow::applyZoom(double factor) {
  if (m_baseIconSize.isEmpty() && m_toolBar) m_baseIconSize = m_toolBar->iconSize();
  setZoom(factor);
  if (m_toolBar) m_toolBar->setIconSize(m_baseIconSize * zoomFactor());
  m_zoomInAct->setEnabled(zoomFactor() < zoomSteps().back());
  m_zoomOutAct->setEnabled(zoomFactor() > zoomSteps().front());
  m_zoomResetAct->setEnabled(zoomFactor() != 1.0);
}

}  // namespace fitbench
