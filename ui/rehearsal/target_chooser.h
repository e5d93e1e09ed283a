// The target combo box the Capacity view and the device timeline share: the presets ("this
// machine" with its cores), the target files the user opened, and "Target file…" last, which
// asks for one. A file that cannot be read leaves the chosen target as it was and says why.
// Widget; UI thread only.
#pragma once

#include <QComboBox>
#include <vector>

#include "core/run/target.h"

namespace fitbench {

class TargetChooser : public QComboBox {
  Q_OBJECT
 public:
  explicit TargetChooser(QWidget* parent = nullptr);

  const Target& target() const { return m_targets[static_cast<size_t>(m_index)]; }
  // Reads a target file and chooses it (listed by its name and file); false with read_target's
  // sentence in *error, the target as it was.
  bool setTargetFile(const QString& path, QString* error);
  // Chooses a preset or an opened file by its target's name; false if there is none.
  bool selectTarget(const QString& name);
  // "20 GFLOP/s", "15.7 TFLOP/s": a device's rate in words.
  static QString flopsText(double flops);
  // "2 µs + 10 GB/s": a link's latency and bandwidth.
  static QString linkText(const LinkModel& link);

 signals:
  // The target changed (chosen by the user or by a call).
  void targetChosen();
  // A file picked with "Target file…" could not be read: read_target's sentence.
  void fileFailed(const QString& sentence);

 private:
  void choose(int index);
  void onActivated(int index);

  std::vector<Target> m_targets;  // the entries but the last ("Target file...")
  int m_index = 0;                // the entry target() is
};

}  // namespace fitbench
