// The Devices panel: device type, how many simulated CPU devices, each device's relative speed,
// and the interconnect (latency, bandwidth, all-reduce algorithm). Edits a DevicesSpec. Widget;
// UI thread only.
#pragma once

#include <QLabel>
#include <QWidget>

#include "core/distribution/spec/distribution_spec.h"

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;
class QTableWidget;

namespace fitbench {

class DevicesPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DevicesPanel(QWidget* parent = nullptr);

  // `defaultCount` is what the count resolves to when the spec leaves it unset (the environment's
  // FITBENCH_CPU_DEVICES / XLA_FLAGS, else 1); it is shown, and written back only once edited.
  // `environmentError` is why the environment's count could not be read (fitbench-cli's
  // sentence): an error while the count is left to the environment.
  void setSpec(const DevicesSpec& spec, int defaultCount, const QString& environmentError = {});
  // The count from the command line (--devices N), as fitbench-cli takes it: the file's speeds
  // stay, and a speed list of another length is an error until the count or a speed is edited.
  void overrideCount(int count);
  DevicesSpec spec() const;
  // The devices the panel shows rows for: its count, within 1 to 16 (a count beyond is shown
  // as it is in the field and refused by errorText()).
  int deviceCount() const;
  void setReadOnly(bool readOnly);
  // Processes: 1 runs every device as a thread of the window; P > 1 runs the experiment as a job
  // of P processes (mpirun), the devices spread evenly over them. Not part of the experiment
  // (as mpirun -np is not part of a Keras script): a setting of the window's session.
  int processCount() const;
  // Why the window cannot start jobs on several processes (Open MPI missing, ...), shown under
  // the control, which is then disabled at 1; "" when it can.
  void setProcessesUnavailable(const QString& why);
  // Sets Processes; returns why it cannot be ("" when set).
  QString setProcessCount(int processes);
  // Why the devices cannot run as set (a gpu or tpu type, a file's count beyond what the window
  // simulates, a file's speed list that does not fit the count), or empty.
  QString errorText() const {
    return m_typeError->text().isEmpty() ? m_error : m_typeError->text();
  }
  // Why the devices cannot be spread over Processes (shown beside it), or empty. The window
  // checks it after the strategy: a job needs a distribution first.
  QString processErrorText() const;

 signals:
  void changed();
  // Processes was changed (a setting of the session, not an edit of the experiment).
  void processesChanged();

 private:
  void connectSignals();
  void rebuildDeviceRows(int count);
  void updateNote();
  void showTypeError();
  // m_error for the count in m_count: beyond the window's devices, or the file's speeds not one
  // per device (fitbench-cli's sentence); shown beside the count.
  void checkCount(int wanted);

  QComboBox* m_type = nullptr;
  QSpinBox* m_count = nullptr;
  QTableWidget* m_table = nullptr;
  QDoubleSpinBox* m_latency = nullptr;
  QDoubleSpinBox* m_bandwidth = nullptr;
  QComboBox* m_allreduce = nullptr;
  QComboBox* m_statistics = nullptr;  // devices.batch_norm_statistics
  QLabel* m_note = nullptr;
  QSpinBox* m_processes = nullptr;
  QLabel* m_processNote = nullptr;
  QLabel* m_processError = nullptr;  // devices that cannot be spread evenly over the processes
  QString m_processesUnavailable;
  void checkProcesses();
  QLabel* m_typeError = nullptr;   // a type fitbench cannot simulate, beside the type
  QLabel* m_countError = nullptr;  // a count the window cannot run, beside the count
  QString m_error;                 // the count's
  bool m_countSet = false;         // the spec (or the user) gave a count
  bool m_filling = false;          // setSpec is filling the widgets: no changed()
  std::vector<double> m_speeds;    // kept when the count shrinks and grows again
  size_t m_fileSpeeds = 0;         // entries in the file's speed list until one is edited
  QString m_environmentError;      // a bad FITBENCH_CPU_DEVICES / XLA_FLAGS, until a count is set
};

}  // namespace fitbench
