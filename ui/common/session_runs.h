// The runs of a window's session: every run started with Run and every sweep trial that ended,
// each with its History, its label, whether its curves are shown in the charts, and the epoch to
// mark as its best. The runs list edits it (show, hide, rename, delete, export CSV); the window
// keeps the charts in step with its signals. Results belong to their experiment: the window
// clears it when another experiment is opened. UI thread only.
#pragma once

#include <QColor>
#include <QObject>
#include <QString>
#include <vector>

#include "core/training/history.h"
#include "ui/common/run_naming.h"

namespace fitbench {

struct SessionRun {
  int id = 0;     // given by SessionRuns::add, never reused in a session
  QString label;  // "run 2 (2 devices)", "trial 3: learning_rate=0.01, units=8"
  bool fromSweep = false;
  int trial = -1;      // the sweep trial's number, or -1 for a run from Run
  History history;     // as it ended (empty while a run from Run is still running)
  bool ended = false;  // its History is final (setHistory)
  bool shown = true;   // its curves are in the charts
  int bestEpoch = -1;  // 0-based epoch marked on its curves, or -1
  QColor color;        // its curves' color; invalid: the charts' faded style of earlier runs
  // What the run trained with (run_settings of its experiment); empty when unknown.
  std::vector<RunSetting> settings;
  QString fallbackLabel;  // "run 3": its name while no setting tells it from the others
  bool renamed = false;   // named by the user: kept as it is
};

class SessionRuns : public QObject {
  Q_OBJECT
 public:
  explicit SessionRuns(QObject* parent = nullptr) : QObject(parent) {}

  // Adds `run` (its id is set here) and returns the id. A run from Run with settings is named by
  // what differs (labels_by_difference among the session's runs from Run), and the runs from
  // Run that the user has not renamed are named again, each change emitting changed(id).
  int add(SessionRun run);
  const std::vector<SessionRun>& runs() const { return m_runs; }
  const SessionRun* find(int id) const;
  // The run of sweep trial `trial`, or null.
  const SessionRun* findTrial(int trial) const;

  // Each emits changed(id) when something changed (unknown ids are ignored).
  // The run's History as it ended (and the epoch to mark); it is no longer running.
  void setHistory(int id, const History& history, int bestEpoch = -1);
  void setShown(int id, bool shown);
  // The user's name for the run: it is no longer named by what differs.
  void rename(int id, const QString& label);
  void remove(int id);
  void clear();

  // The runs' histories as CSV: a row per run and epoch, "run,source,epoch" (1-based, as the
  // charts and Keras's progress count) and then every key any of them has (sorted), empty where
  // a run has no such key. `ids`: these runs, in this order; empty: all of them.
  std::string csv(const std::vector<int>& ids = {}) const;
  // Writes csv(ids) to `path` atomically; on failure returns false with one sentence in *error.
  bool exportCsv(const QString& path, const std::vector<int>& ids, QString* error) const;

 signals:
  void added(int id);
  void changed(int id);
  void removed(int id);
  void cleared();

 private:
  SessionRun* findMutable(int id);
  void nameByDifference();

  std::vector<SessionRun> m_runs;
  int m_nextId = 1;
};

}  // namespace fitbench
