#include "ui/panels/devices_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include "core/distribution/collectives/collective_algorithms.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/spec/devices.h"
#include "ui/common/field_error.h"
#include "ui/common/field_range.h"
#include "ui/common/glossary.h"
#include "ui/common/number_spin_box.h"

namespace fitbench {

namespace {
// The window shows at most 16 devices (its timeline and batch split stay readable); the command
// line runs up to kMaxDeviceCount.
constexpr int kMaxDevices = 16;
}  // namespace

DevicesPanel::DevicesPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);

  auto* devicesBox = new QGroupBox(tr("Devices"), this);
  devicesBox->setToolTip(glossary::device());
  auto* form = new QFormLayout(devicesBox);
  m_type = new QComboBox(devicesBox);
  m_type->addItem(QStringLiteral("cpu"));
  m_type->addItem(QStringLiteral("gpu"));
  m_type->addItem(QStringLiteral("tpu"));
  const QString unavailable =
      tr("fitbench simulates CPU devices only: each is a worker thread. Rehearse here, then run "
         "the same Keras code on GPUs or TPUs.");
  if (auto* model = qobject_cast<QStandardItemModel*>(m_type->model())) {
    for (int row = 1; row < 3; ++row) {
      QStandardItem* item = model->item(row);
      item->setEnabled(false);
      item->setToolTip(unavailable);
    }
  }
  m_type->setToolTip(unavailable);
  form->addRow(tr("Type"), m_type);
  m_typeError = makeFieldErrorLabel(devicesBox);
  form->addRow(m_typeError);
  m_count = new QSpinBox(devicesBox);
  m_count->setObjectName(QStringLiteral("deviceCount"));
  takeAnyInt(m_count);  // a count the window cannot run is shown as it is, and said (checkCount)
  m_count->setToolTip(glossary::device());
  form->addRow(tr("Count"), m_count);
  m_countError = makeFieldErrorLabel(devicesBox);
  form->addRow(m_countError);

  m_table = new QTableWidget(0, 2, devicesBox);
  m_table->setHorizontalHeaderLabels({tr("Device"), tr("Relative speed")});
  m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  m_table->verticalHeader()->setVisible(false);
  m_table->setSelectionMode(QAbstractItemView::NoSelection);
  m_table->setToolTip(tr("Each simulated device and its speed relative to a full-speed device "
                         "(0.5 takes twice as long). A slower device is a straggler: ") +
                      glossary::straggler());
  m_table->setMinimumHeight(120);
  form->addRow(m_table);
  m_note = new QLabel(devicesBox);
  m_note->setWordWrap(true);
  m_note->setStyleSheet(QStringLiteral("color: palette(mid);"));
  form->addRow(m_note);
  layout->addWidget(devicesBox);

  auto* processBox = new QGroupBox(tr("Processes"), this);
  auto* processForm = new QFormLayout(processBox);
  m_processes = new QSpinBox(processBox);
  m_processes->setObjectName(QStringLiteral("processCount"));
  m_processes->setRange(1, kMaxDevices);
  m_processes->setSpecialValueText(tr("1 (this window)"));
  m_processes->setToolTip(
      tr("1: every device is a worker thread of this window. 2 or more: the run is a job of that "
         "many processes, started with Open MPI's mpirun as you would start it on a cluster "
         "(mpirun -np P fitbench-cli run ...); the devices are spread evenly over them and "
         "exchange through MPI."));
  processForm->addRow(tr("Processes"), m_processes);
  m_processError = makeFieldErrorLabel(processBox);
  processForm->addRow(m_processError);
  m_processNote = new QLabel(processBox);
  m_processNote->setObjectName(QStringLiteral("processNote"));
  m_processNote->setWordWrap(true);
  m_processNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_processNote->setStyleSheet(QStringLiteral("color: palette(mid);"));
  processForm->addRow(m_processNote);
  layout->addWidget(processBox);

  auto* linkBox = new QGroupBox(tr("Interconnect"), this);
  linkBox->setToolTip(
      tr("The links between devices. Every collective (such as the gradient "
         "all-reduce) pays the latency per message and its bytes over the "
         "bandwidth."));
  auto* linkForm = new QFormLayout(linkBox);
  // NumberSpinBox: a file's value (12.5, 0.0004, 0.333333) is shown and kept as it is.
  m_latency = new NumberSpinBox(linkBox);
  m_latency->setRange(0.0, kMaxLinkLatencyUs);
  m_latency->setSingleStep(10.0);
  m_latency->setSpecialValueText(tr("none"));
  m_latency->setToolTip(tr("Added to every message a collective sends; 0 = none."));
  linkForm->addRow(tr("Latency (µs)"), m_latency);
  m_bandwidth = new NumberSpinBox(linkBox);
  m_bandwidth->setRange(0.0, kMaxLinkGbps);
  m_bandwidth->setSingleStep(1.0);
  m_bandwidth->setSpecialValueText(tr("unlimited"));
  m_bandwidth->setToolTip(tr("Bandwidth of each link in GB/s; 0 = unlimited (shared memory)."));
  linkForm->addRow(tr("Bandwidth (GB/s)"), m_bandwidth);
  m_allreduce = new QComboBox(linkBox);
  for (const CollectiveAlgorithmInfo& a : collective_algorithms()) {
    const QString name = QString::fromUtf8(a.name.data(), a.name.size());
    m_allreduce->addItem(name, name);
    m_allreduce->setItemData(m_allreduce->count() - 1,
                             QString::fromUtf8(a.description.data(), a.description.size()),
                             Qt::ToolTipRole);
  }
  m_allreduce->setToolTip(glossary::allReduce());
  linkForm->addRow(tr("All-reduce"), m_allreduce);
  layout->addWidget(linkBox);

  auto* statisticsBox = new QGroupBox(tr("Batch statistics"), this);
  statisticsBox->setToolTip(
      tr("Whose statistics a BatchNormalization layer normalizes each device's shard by under "
         "DataParallel. The Batch split view says which one a run uses."));
  auto* statisticsForm = new QFormLayout(statisticsBox);
  m_statistics = new QComboBox(statisticsBox);
  m_statistics->setObjectName(QStringLiteral("batchNormStatistics"));
  m_statistics->addItem(tr("Global batch (Keras)"), QStringLiteral("global"));
  m_statistics->setItemData(
      0,
      tr("Every shard is normalized by the statistics of the whole batch, its sums all-reduced "
         "over the devices: what Keras computes on JAX, and what one device computes."),
      Qt::ToolTipRole);
  m_statistics->addItem(tr("Per device (PyTorch DDP)"), QStringLiteral("per_device"));
  m_statistics->setItemData(
      1,
      tr("Each device normalizes its shard by that shard's own statistics, and every replica "
         "keeps cpu:0's moving statistics: PyTorch's DistributedDataParallel without "
         "SyncBatchNorm. A teaching contrast, for DataParallel only."),
      Qt::ToolTipRole);
  m_statistics->setToolTip(statisticsBox->toolTip());
  statisticsForm->addRow(tr("BatchNormalization"), m_statistics);
  layout->addWidget(statisticsBox);
  layout->addStretch(1);

  rebuildDeviceRows(1);
  checkProcesses();
  connectSignals();
}

void DevicesPanel::connectSignals() {
  connect(m_count, &QSpinBox::valueChanged, this, [this](int n) {
    rebuildDeviceRows(std::clamp(n, 1, kMaxDevices));
    if (m_filling) return;
    m_countSet = true;
    m_fileSpeeds = 0;  // the user chose a count: the rows' speeds are what runs
    checkCount(n);
    checkProcesses();
    emit changed();
  });
  auto edited = [this] {
    if (!m_filling) emit changed();
  };
  connect(m_processes, &QSpinBox::valueChanged, this, [this] {
    checkProcesses();
    emit processesChanged();
  });
  connect(m_latency, &QDoubleSpinBox::valueChanged, this, edited);
  connect(m_bandwidth, &QDoubleSpinBox::valueChanged, this, edited);
  connect(m_allreduce, &QComboBox::currentIndexChanged, this, edited);
  connect(m_statistics, &QComboBox::currentIndexChanged, this, edited);
  connect(m_type, &QComboBox::currentIndexChanged, this, [this] {
    if (m_filling) return;
    showTypeError();
    emit changed();
  });
}

// A gpu or tpu type (from a file): shown as it is, with the CLI's sentence, and Run refuses it.
void DevicesPanel::showTypeError() {
  const QString error =
      QString::fromStdString(device_type_error(m_type->currentText().toStdString()));
  m_typeError->setText(error.isEmpty() ? QString() : tr("devices.type: %1").arg(error));
  m_typeError->setVisible(!error.isEmpty());
}

void DevicesPanel::rebuildDeviceRows(int count) {
  // Keep the speeds the user set on rows that stay.
  for (int row = 0; row < m_table->rowCount(); ++row) {
    auto* spin = qobject_cast<QDoubleSpinBox*>(m_table->cellWidget(row, 1));
    if (spin && size_t(row) < m_speeds.size()) m_speeds[size_t(row)] = spin->value();
  }
  if (m_speeds.size() < size_t(count)) m_speeds.resize(size_t(count), 1.0);
  m_table->setRowCount(count);
  for (int row = 0; row < count; ++row) {
    auto* name = new QTableWidgetItem(QStringLiteral("cpu:%1").arg(row));
    name->setFlags(Qt::ItemIsEnabled);
    name->setToolTip(glossary::device());
    m_table->setItem(row, 0, name);
    auto* spin = qobject_cast<QDoubleSpinBox*>(m_table->cellWidget(row, 1));
    if (!spin) {
      spin = new NumberSpinBox(m_table);
      spin->setRange(kMinDeviceSpeed, 1.0);
      spin->setSingleStep(0.05);
      spin->setSuffix(QStringLiteral(" ×"));
      spin->setToolTip(tr("1 = full speed; 0.5 = this device needs twice as long per step."));
      spin->setFrame(false);
      m_table->setCellWidget(row, 1, spin);
      connect(spin, &QDoubleSpinBox::valueChanged, this, [this, row](double v) {
        if (size_t(row) < m_speeds.size()) m_speeds[size_t(row)] = v;
        if (m_filling) return;
        if (m_fileSpeeds > 0) {  // an edited speed: the rows are the list now
          m_fileSpeeds = 0;
          checkCount(m_count->value());
        }
        emit changed();
      });
    }
    const bool filling = m_filling;
    m_filling = true;
    spin->setValue(m_speeds[size_t(row)]);
    m_filling = filling;
  }
  m_table->setFixedHeight(std::min(count, 6) * m_table->verticalHeader()->defaultSectionSize() +
                          m_table->horizontalHeader()->sizeHint().height() +
                          2 * m_table->frameWidth());
  updateNote();
}

void DevicesPanel::updateNote() {
  const int cores = QThread::idealThreadCount();
  const int n = m_count->value();
  if (cores > 0 && n > cores) {
    m_note->setText(tr("%1 devices share this computer's %2 cores: they take turns, so steps "
                       "take longer than on real hardware.")
                        .arg(n)
                        .arg(cores));
  } else {
    m_note->setText(tr("Each device is a worker thread on this computer (%1 cores).").arg(cores));
  }
}

void DevicesPanel::setSpec(const DevicesSpec& spec, int defaultCount,
                           const QString& environmentError) {
  m_filling = true;
  m_environmentError = environmentError;
  m_type->setCurrentIndex(std::max(0, m_type->findText(QString::fromStdString(spec.type))));
  m_countSet = spec.count.has_value();
  m_speeds = spec.speed;
  m_fileSpeeds = spec.speed.size();
  m_table->setRowCount(0);
  const int wanted = spec.count.value_or(defaultCount);
  checkCount(wanted);
  showTypeError();
  m_count->setValue(wanted);
  rebuildDeviceRows(std::clamp(wanted, 1, kMaxDevices));
  m_latency->setValue(spec.link_latency_us);
  m_bandwidth->setValue(spec.link_gbps);
  m_allreduce->setCurrentIndex(
      std::max(0, m_allreduce->findData(QString::fromStdString(spec.allreduce))));
  m_statistics->setCurrentIndex(
      std::max(0, m_statistics->findData(QString::fromStdString(spec.batch_norm_statistics))));
  m_filling = false;
}

void DevicesPanel::overrideCount(int count) {
  m_filling = true;
  m_countSet = true;
  checkCount(count);
  m_count->setValue(count);
  rebuildDeviceRows(std::clamp(count, 1, kMaxDevices));
  m_filling = false;
}

void DevicesPanel::checkCount(int wanted) {
  // Neither is changed: said beside the field (and Run refuses) until the user edits.
  if (!m_countSet && !m_environmentError.isEmpty()) {
    m_error = tr("%1. Here: set Count.").arg(m_environmentError);
  } else if (wanted < 1) {
    m_error = tr("Count must be at least 1 device; it is %1.").arg(wanted);
  } else if (wanted > kMaxDevices) {
    m_error = tr("devices.count: %1 devices are more than the window simulates (at most %2); "
                 "set a count here, or run the file with fitbench-cli (up to %3)")
                  .arg(wanted)
                  .arg(kMaxDevices)
                  .arg(kMaxDeviceCount);
  } else if (const std::string why = speed_count_error(m_fileSpeeds, wanted); !why.empty()) {
    m_error = tr("devices.speed: %1. Here: set Count to %2, or change a speed in the table "
                 "below to train with the speeds it shows")
                  .arg(QString::fromStdString(why))
                  .arg(m_fileSpeeds);
    // The rows the file gives no speed stand at the default, 1 x.
    m_error +=
        static_cast<size_t>(wanted) > m_fileSpeeds
            ? tr(" (the file has none for cpu:%1 and up, shown at 1 \u00d7).").arg(m_fileSpeeds)
            : QStringLiteral(".");
  } else {
    m_error.clear();
  }
  m_countError->setText(m_error);
  m_countError->setVisible(!m_error.isEmpty());
}

DevicesSpec DevicesPanel::spec() const {
  DevicesSpec spec;
  spec.type = m_type->currentText().toStdString();
  if (m_countSet) spec.count = m_count->value();
  // The rows there are (a count beyond them is refused by checkCount).
  const int n = std::clamp(m_count->value(), 1, kMaxDevices);
  if (m_fileSpeeds > 0 && m_fileSpeeds != size_t(n)) {
    // The file's list as it is, so that a save keeps it and a run refuses it as the CLI does.
    spec.speed.assign(m_speeds.begin(), m_speeds.begin() + long(m_fileSpeeds));
  } else {
    bool allFull = true;
    for (int i = 0; i < n; ++i) allFull = allFull && m_speeds[size_t(i)] == 1.0;
    if (!allFull) spec.speed.assign(m_speeds.begin(), m_speeds.begin() + n);
  }
  spec.link_latency_us = m_latency->value();
  spec.link_gbps = m_bandwidth->value();
  spec.allreduce = m_allreduce->currentData().toString().toStdString();
  spec.batch_norm_statistics = m_statistics->currentData().toString().toStdString();
  return spec;
}

int DevicesPanel::processCount() const { return m_processes->value(); }

QString DevicesPanel::processErrorText() const { return m_processError->text(); }

void DevicesPanel::setProcessesUnavailable(const QString& why) {
  m_processesUnavailable = why;
  if (!why.isEmpty()) m_processes->setValue(1);
  m_processes->setEnabled(why.isEmpty());
  checkProcesses();
}

QString DevicesPanel::setProcessCount(int processes) {
  if (processes < 1 || processes > m_processes->maximum())
    return tr("must be from 1 to %1, got %2").arg(m_processes->maximum()).arg(processes);
  if (processes > 1 && !m_processesUnavailable.isEmpty()) return m_processesUnavailable;
  m_processes->setValue(processes);
  return {};
}

void DevicesPanel::checkProcesses() {
  const int p = m_processes->value(), n = m_count->value();
  QString error;
  if (p > 1 && n >= 1 && n % p != 0)
    error = tr("%1 devices cannot be spread evenly over %2 processes: set Count to a multiple "
               "of %2, or Processes to a divisor of %1.")
                .arg(n)
                .arg(p);
  m_processError->setText(error);
  m_processError->setVisible(!error.isEmpty());
  if (!m_processesUnavailable.isEmpty()) {
    m_processNote->setText(m_processesUnavailable);
  } else if (p > 1) {
    m_processNote->setText(
        tr("Run starts mpirun -np %1 with fitbench-cli: each process hosts %2 of the devices "
           "and they exchange through Open MPI on this computer. The interconnect below is not "
           "simulated between processes: the real one is the cost. Pause and Step hold one "
           "process; a job runs until it ends or Stop (after the current batch; Stop again "
           "ends it at once).")
            .arg(p)
            .arg(n >= p && n % p == 0 ? QString::number(n / p) : tr("a share")));
  } else {
    m_processNote->setText(
        tr("Every device is a thread of this window. 2 or more runs the "
           "experiment as a job of that many processes (Open MPI)."));
  }
}

int DevicesPanel::deviceCount() const { return std::clamp(m_count->value(), 1, kMaxDevices); }

void DevicesPanel::setReadOnly(bool readOnly) {
  for (QWidget* w :
       std::initializer_list<QWidget*>{m_type, m_count, m_latency, m_bandwidth, m_allreduce})
    w->setEnabled(!readOnly);
  m_processes->setEnabled(!readOnly && m_processesUnavailable.isEmpty());
  for (int row = 0; row < m_table->rowCount(); ++row)
    if (QWidget* w = m_table->cellWidget(row, 1)) w->setEnabled(!readOnly);
}

}  // namespace fitbench
