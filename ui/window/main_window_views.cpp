// MainWindow's device-rehearsal views: the device timeline (bottom, beside the log), and the batch
// split, collectives and capacity views (right, beside the decision boundary); what each is told
// before, during and after a run.

#include <QDockWidget>
#include <QScrollArea>
#include <QTimer>
#include <algorithm>
#include <numeric>

#include "core/base/error.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/spec/strategies.h"
#include "core/io/experiment.h"
#include "core/nn/layer_registry.h"
#include "core/nn/network.h"
#include "ui/images/images_view.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/devices_panel.h"
#include "ui/rehearsal/batch_split_view.h"
#include "ui/rehearsal/capacity_view.h"
#include "ui/rehearsal/collectives_view.h"
#include "ui/rehearsal/decision_grid.h"
#include "ui/rehearsal/decision_view.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"

namespace fitbench {

void MainWindow::buildViews(QDockWidget* besideRight, QDockWidget* besideBottom) {
  m_timeline = new DeviceTimelineView;
  m_timelineDock = new QDockWidget(tr("Device timeline"), this);
  m_timelineDock->setObjectName(QStringLiteral("TimelineDock"));
  m_timelineDock->setWidget(m_timeline);
  addDockWidget(Qt::BottomDockWidgetArea, m_timelineDock);
  tabifyDockWidget(besideBottom, m_timelineDock);
  besideBottom->raise();

  m_batchSplit = new BatchSplitView;
  auto* splitScroll = new QScrollArea;
  splitScroll->setWidgetResizable(true);
  splitScroll->setFrameShape(QFrame::NoFrame);
  splitScroll->setWidget(m_batchSplit);
  auto* splitDock = new QDockWidget(tr("Batch split"), this);
  splitDock->setObjectName(QStringLiteral("BatchSplitDock"));
  splitDock->setWidget(splitScroll);
  addDockWidget(Qt::RightDockWidgetArea, splitDock);
  tabifyDockWidget(besideRight, splitDock);

  m_collectives = new CollectivesView;
  auto* collectivesScroll = new QScrollArea;
  collectivesScroll->setWidgetResizable(true);
  collectivesScroll->setFrameShape(QFrame::NoFrame);
  collectivesScroll->setWidget(m_collectives);
  auto* collectivesDock = new QDockWidget(tr("Collectives"), this);
  collectivesDock->setObjectName(QStringLiteral("CollectivesDock"));
  collectivesDock->setWidget(collectivesScroll);
  addDockWidget(Qt::RightDockWidgetArea, collectivesDock);
  tabifyDockWidget(splitDock, collectivesDock);

  m_capacity = new CapacityView;
  auto* capacityScroll = new QScrollArea;
  capacityScroll->setWidgetResizable(true);
  capacityScroll->setFrameShape(QFrame::NoFrame);
  capacityScroll->setWidget(m_capacity);
  m_capacityDock = new QDockWidget(tr("Capacity"), this);
  m_capacityDock->setObjectName(QStringLiteral("CapacityDock"));
  m_capacityDock->setWidget(capacityScroll);
  addDockWidget(Qt::RightDockWidgetArea, m_capacityDock);
  tabifyDockWidget(collectivesDock, m_capacityDock);

  m_images = new ImagesView;
  auto* imagesScroll = new QScrollArea;
  imagesScroll->setWidgetResizable(true);
  imagesScroll->setFrameShape(QFrame::NoFrame);
  imagesScroll->setWidget(m_images);
  m_imagesDock = new QDockWidget(tr("Images"), this);
  m_imagesDock->setObjectName(QStringLiteral("ImagesDock"));
  m_imagesDock->setWidget(imagesScroll);
  // Below the charts, beside the log and the timeline: the right column's tabs have no room left
  // for another title at a projector's 1280 px; --show images gives it most of the height.
  addDockWidget(Qt::BottomDockWidgetArea, m_imagesDock);
  tabifyDockWidget(m_timelineDock, m_imagesDock);
  besideBottom->raise();
  besideRight->raise();
}

void MainWindow::updateViews(const ExperimentSpec& spec) {
  const int devices = resolvedDevices();
  // Only when what the views draw changed: the last run's split and measurements stay up while
  // the user looks at them (the window calls this on every edit, and when a run ends).
  // (With the data's feature count: model_variables() below checks the model against it.)
  const std::string key = experiment_to_json(spec).dump() + "/" + std::to_string(devices) + "/" +
                          std::to_string(m_dataPanel->featureCount()) + "/" +
                          std::to_string(m_dataPanel->sampleCount());
  if (key == m_viewsKey) return;
  m_viewsKey = key;
  // Planned again after a short pause, off this thread (it loads the data).
  m_capacity->setExperiment(spec, devices, m_doc.folder());
  const bool distributed = !spec.distribution.class_name.empty();
  QStringList names;
  BatchSplitPlan plan;
  for (int d = 0; d < (distributed ? devices : 1); ++d) {
    names << QStringLiteral("cpu:%1").arg(d);
    plan.devices.push_back("cpu:" + std::to_string(d));
  }
  plan.strategy = spec.distribution.class_name;
  plan.batchSize = spec.fit.batch_size;
  plan.batchNormLayers = static_cast<int>(
      std::count_if(spec.model.layers.begin(), spec.model.layers.end(), [](const LayerSpec& l) {
        // A frozen one normalizes by its moving statistics on every device.
        return l.class_name == "BatchNormalization" && l.trainable;
      }));
  plan.perDeviceStatistics = spec.devices.batch_norm_statistics == "per_device";
  // A CSV file's row count is known once the data panel has read it.
  plan.trainingSamples = batchsplit::trainingSamples(
      spec.data.csv.empty() && spec.data.dataset.empty() && spec.data.directory.empty()
          ? spec.data.samples
          : m_dataPanel->sampleCount(),
      spec.fit.validation_split);
  int64_t parameters = 0;
  try {
    const std::vector<VariableInfo> variables =
        model_variables(spec.model, m_dataPanel->featureCount());
    // The gradient all-reduce carries the trainable variables, in model order (not a frozen
    // layer's, nor BatchNormalization's moving statistics).
    Network net(spec.model);
    const int64_t features = m_dataPanel->featureCount();
    net.build_shapes(features > 0 ? features : net.declared_input_units().value_or(1));
    for (const NetworkVariable& v : net.variables())
      if (v.trainable)
        parameters +=
            std::accumulate(v.shape.begin(), v.shape.end(), int64_t{1}, std::multiplies<int64_t>());
    if (spec.distribution.class_name == kModelParallel) {
      plan.meshShape = spec.distribution.mesh_shape;
      plan.axisNames = spec.distribution.axis_names;
      plan.batchDimName = spec.distribution.batch_dim_name;
      const LayoutCheck check = check_layout_map(variables, spec.distribution, devices);
      plan.variables = check.variables;
      plan.errors = check.errors;
    }
  } catch (const InputError&) {
    // An invalid model: its panel says why; the views show the batch split without weights.
  }
  m_batchSplit->setPlan(plan);
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  try {
    algorithm = parse_algorithm(spec.devices.allreduce, "devices.allreduce");
  } catch (const InputError&) {
  }
  m_collectives->setSetup(names, algorithm, parameters,
                          LinkModel{spec.devices.link_latency_us, spec.devices.link_gbps});
  QStringList mesh;
  if (spec.distribution.class_name == kModelParallel)
    for (const int axis : spec.distribution.mesh_shape) mesh << QString::number(axis);
  if (spec.distribution.class_name == kModelParallel && mesh.isEmpty())
    mesh << QStringLiteral("1") << QString::number(devices);  // no mesh given: 1 x N
  m_collectives->setModelParallelMesh(mesh.join(QStringLiteral(" \u00d7 ")));
  m_timeline->setReadyDevices(distributed ? devices : 0);
  // Before a run, the prediction view says already whether it can draw this setup; its title
  // follows the task (a boundary for classification, predictions for regression).
  int64_t outputs = 0;
  for (const LayerSpec& layer : spec.model.layers)
    if (const LayerInfo* info = find_layer_class(layer.class_name); info && info->outputs_units)
      outputs = layer.units;
  const DecisionPlan decision =
      planDecisionGrid(m_dataPanel->featureCount(), outputs, spec.compile.loss);
  m_decisionView->setSetupReason(m_dataPanel->featureCount() > 0 ? decision.reason : QString());
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("DecisionDock")))
    dock->setWindowTitle(decision.classifier ? tr("Decision boundary") : tr("Predictions"));
}

void MainWindow::viewsRunStarted(const QStringList& names, const QString& distribution,
                                 std::shared_ptr<const CapacityInput> model) {
  m_runDistribution = distribution;
  m_timeline->clear(names);
  m_timeline->setProcesses(m_runs->onProcesses() ? m_devicesPanel->processCount() : 1);
  m_timeline->setModelInput(model ? std::optional<CapacityInput>(*model) : std::nullopt);
  m_timeline->setLive(true);
  // A distributed run is what the timeline is for; a one-device run has nothing to draw there.
  if (!distribution.isEmpty())
    m_timelineDock->raise();
  else if (auto* log = findChild<QDockWidget*>(QStringLiteral("LogDock")))
    log->raise();
}

void MainWindow::viewsTakeSteps(const std::vector<StepTrace>& steps) {
  if (steps.empty()) return;
  m_timeline->appendSteps(steps);
  m_batchSplit->showStep(steps.back());
  // The collectives view teaches the gradient all-reduce of DataParallel; ModelParallel's steps
  // also hold activation collectives within mesh rows and columns.
  if (m_runDistribution == QLatin1StringView(kDataParallel.data(), kDataParallel.size()))
    m_collectives->showMeasured(steps.back());
}

void MainWindow::viewsRunEnded() { m_timeline->setLive(false); }

namespace {
// --show names and the docks they raise.
// ("timeline-modelled": the timeline in modelled time.)
const std::pair<const char*, const char*> kViews[] = {{"timeline", "TimelineDock"},
                                                      {"timeline-modelled", "TimelineDock"},
                                                      {"log", "LogDock"},
                                                      {"batch-split", "BatchSplitDock"},
                                                      {"collectives", "CollectivesDock"},
                                                      {"capacity", "CapacityDock"},
                                                      {"images", "ImagesDock"},
                                                      {"boundary", "DecisionDock"},
                                                      {"about", "AboutDock"},
                                                      {"runs", "RunsDock"},
                                                      {"sweep", "SweepDock"}};
// --show names of the Experiment dock's tabs, in tab order.
const char* const kTabs[] = {"data", "model", "training", "devices"};
}  // namespace

QStringList MainWindow::viewNames() {
  QStringList names;
  for (const auto& [name, dock] : kViews) names << QString::fromLatin1(name);
  for (const char* tab : kTabs) names << QString::fromLatin1(tab);
  return names;
}

void MainWindow::showView(const QString& name) {
  for (int i = 0; i < int(std::size(kTabs)) && i < m_tabs->count(); ++i)
    if (name == QLatin1String(kTabs[i])) m_tabs->setCurrentIndex(i);
  if (name.startsWith(QLatin1String("timeline")))
    m_timeline->setTimeMode(name == QLatin1String("timeline-modelled")
                                ? DeviceTimelineView::TimeMode::kModelled
                                : DeviceTimelineView::TimeMode::kMeasured);
  for (const auto& [view, dock] : kViews) {
    if (name != QLatin1String(view)) continue;
    if (auto* d = findChild<QDockWidget*>(QString::fromLatin1(dock))) {
      d->show();
      d->raise();
      // The Sweep view's table and plots need room: half the window's width, and the column's
      // height but for a short About above it.
      // The Images view's matrix and images: three fifths of the window's height.
      // The Capacity view's charts side by side with their texts: three fifths of the width (what
      // the Experiment dock and the charts leave at least) and most of the column's height,
      // once the About dock has grown to its text (the next turn of the event loop after a show).
      if (d == m_imagesDock && !d->isFloating() && isVisible())
        QTimer::singleShot(0, this, [this] {
          resizeDocks({m_imagesDock}, {std::clamp(height() * 3 / 5, 240, height() - 260)},
                      Qt::Vertical);
        });
      if (d == m_capacityDock && !d->isFloating() && isVisible())
        QTimer::singleShot(0, this, [this, d] {
          resizeDocks({d}, {std::max(560, std::min(width() * 3 / 5, width() - 640))},
                      Qt::Horizontal);
          if (auto* about = findChild<QDockWidget*>(QStringLiteral("AboutDock")))
            resizeDocks({about, d}, {110, std::max(200, height() - 200)}, Qt::Vertical);
          if (auto* log = findChild<QDockWidget*>(QStringLiteral("LogDock")))
            resizeDocks({log}, {std::clamp(height() / 6, 100, 150)}, Qt::Vertical);
        });
      // The timeline's lanes, its time words and the sentence under them need some height: two
      // fifths of the window's.
      if (d == m_timelineDock && !d->isFloating() && isVisible())
        QTimer::singleShot(0, this, [this] {
          resizeDocks({m_timelineDock}, {std::clamp(height() * 2 / 5, 220, 420)}, Qt::Vertical);
        });
      if (d == m_sweepDock && !d->isFloating() && isVisible()) {
        resizeDocks({d}, {std::max(560, width() / 2)}, Qt::Horizontal);
        if (auto* about = findChild<QDockWidget*>(QStringLiteral("AboutDock")))
          resizeDocks({about, d}, {110, std::max(200, height() - 200)}, Qt::Vertical);
        // The log gives the table some of its height (a sweep logs a line per trial).
        if (auto* log = findChild<QDockWidget*>(QStringLiteral("LogDock")))
          resizeDocks({log}, {std::clamp(height() / 6, 100, 170)}, Qt::Vertical);
      }
    }
  }
}

}  // namespace fitbench
