// TargetChooser: presets, opened target files and the "Target file…" entry.

#include "ui/rehearsal/target_chooser.h"

#include <QFileDialog>
#include <QFileInfo>

#include "core/base/error.h"

namespace fitbench {

TargetChooser::TargetChooser(QWidget* parent) : QComboBox(parent) {
  setSizeAdjustPolicy(QComboBox::AdjustToContents);
  for (const Target& preset : target_presets()) {
    const Target t = preset.name == target_presets().front().name ? this_machine() : preset;
    m_targets.push_back(t);
    addItem(QString::fromStdString(t.name));
    setItemData(count() - 1, QString::fromStdString(t.source), Qt::ToolTipRole);
  }
  addItem(tr("Target file…"));
  setItemData(count() - 1,
              tr("A target JSON file: {\"name\", \"source\", \"memory_gb\", \"tflops\", ...} "
                 "(docs/capacity.md)"),
              Qt::ToolTipRole);
  setCurrentIndex(0);
  connect(this, &QComboBox::activated, this, &TargetChooser::onActivated);
}

void TargetChooser::onActivated(int index) {
  if (index != count() - 1) {
    choose(index);
    return;
  }
  // "Target file..."
  setCurrentIndex(m_index);
  const QString path = QFileDialog::getOpenFileName(this, tr("Target file"), QString(),
                                                    tr("Target files (*.json);;All files (*)"));
  QString error;
  if (!path.isEmpty() && !setTargetFile(path, &error)) emit fileFailed(error);
}

void TargetChooser::choose(int index) {
  m_index = index;
  setCurrentIndex(index);
  emit targetChosen();
}

bool TargetChooser::setTargetFile(const QString& path, QString* error) {
  Target t;
  try {
    t = read_target(path.toStdString(), path.toStdString());
  } catch (const InputError& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  const QString name =
      QStringLiteral("%1 (%2)").arg(QString::fromStdString(t.name), QFileInfo(path).fileName());
  int index = findText(name);
  if (index < 0) {
    index = count() - 1;
    m_targets.push_back(t);
    insertItem(index, name);
  } else {
    m_targets[static_cast<size_t>(index)] = t;
  }
  setItemData(index, QString::fromStdString(t.source) + "\n" + path, Qt::ToolTipRole);
  choose(index);
  return true;
}

bool TargetChooser::selectTarget(const QString& name) {
  for (size_t i = 0; i < m_targets.size(); ++i)
    if (QString::fromStdString(m_targets[i].name) == name) {
      choose(static_cast<int>(i));
      return true;
    }
  return false;
}

QString TargetChooser::flopsText(double flops) {
  if (flops >= 1e12) return tr("%1 TFLOP/s").arg(flops / 1e12, 0, 'g', 3);
  return tr("%1 GFLOP/s").arg(flops / 1e9, 0, 'g', 3);
}

QString TargetChooser::linkText(const LinkModel& link) {
  return tr("%1 µs + %2 GB/s").arg(link.latency_us, 0, 'g', 3).arg(link.gbps, 0, 'g', 3);
}

}  // namespace fitbench
