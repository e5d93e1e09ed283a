#include "ui/common/session_runs.h"

#include <QSaveFile>
#include <algorithm>
#include <cmath>
#include <set>

#include "core/python/python_repr.h"

namespace fitbench {
namespace {

// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

}  // namespace

int SessionRuns::add(SessionRun run) {
  run.id = m_nextId++;
  const int id = run.id;
  const bool named = !run.fromSweep && !run.settings.empty();
  m_runs.push_back(std::move(run));
  if (named) {
    // The new run's name is set before anyone hears of it; the others' changes follow.
    std::vector<QString> before;
    for (const SessionRun& r : m_runs) before.push_back(r.label);
    nameByDifference();
    emit added(id);
    for (size_t i = 0; i + 1 < m_runs.size(); ++i)
      if (m_runs[i].label != before[i]) emit changed(m_runs[i].id);
    return id;
  }
  emit added(id);
  return id;
}

void SessionRuns::nameByDifference() {
  std::vector<SessionRun*> named;
  for (SessionRun& r : m_runs)
    if (!r.fromSweep && !r.settings.empty()) named.push_back(&r);
  std::vector<std::vector<RunSetting>> settings;
  std::vector<std::string> fallback;
  for (const SessionRun* r : named) {
    settings.push_back(r->settings);
    fallback.push_back(r->fallbackLabel.toStdString());
  }
  const std::vector<std::string> labels = labels_by_difference(settings, fallback);
  for (size_t i = 0; i < named.size(); ++i)
    if (!named[i]->renamed) named[i]->label = QString::fromStdString(labels[i]);
}

const SessionRun* SessionRuns::find(int id) const {
  const auto it =
      std::find_if(m_runs.begin(), m_runs.end(), [id](const SessionRun& r) { return r.id == id; });
  return it == m_runs.end() ? nullptr : &*it;
}

SessionRun* SessionRuns::findMutable(int id) { return const_cast<SessionRun*>(find(id)); }

const SessionRun* SessionRuns::findTrial(int trial) const {
  for (const SessionRun& run : m_runs)
    if (run.fromSweep && run.trial == trial) return &run;
  return nullptr;
}

void SessionRuns::setHistory(int id, const History& history, int bestEpoch) {
  if (SessionRun* run = findMutable(id)) {
    run->history = history;
    run->bestEpoch = bestEpoch;
    run->ended = true;
    emit changed(id);
  }
}

void SessionRuns::setShown(int id, bool shown) {
  SessionRun* run = findMutable(id);
  if (!run || run->shown == shown) return;
  run->shown = shown;
  emit changed(id);
}

void SessionRuns::rename(int id, const QString& label) {
  SessionRun* run = findMutable(id);
  const QString trimmed = label.trimmed();
  if (!run || trimmed.isEmpty() || run->label == trimmed) return;
  run->label = trimmed;
  run->renamed = true;
  emit changed(id);
}

void SessionRuns::remove(int id) {
  const auto it =
      std::find_if(m_runs.begin(), m_runs.end(), [id](const SessionRun& r) { return r.id == id; });
  if (it == m_runs.end()) return;
  m_runs.erase(it);
  emit removed(id);
}

void SessionRuns::clear() {
  m_runs.clear();
  emit cleared();
}

std::string SessionRuns::csv(const std::vector<int>& ids) const {
  std::vector<const SessionRun*> chosen;
  if (ids.empty())
    for (const SessionRun& run : m_runs) chosen.push_back(&run);
  for (const int id : ids)
    if (const SessionRun* run = find(id)) chosen.push_back(run);
  std::set<std::string> keys;
  for (const SessionRun* run : chosen)
    for (const auto& [key, values] : run->history.history) keys.insert(key);
  std::string text = "run,source,epoch";
  for (const std::string& key : keys) text += "," + csvField(key);
  text += "\n";
  for (const SessionRun* run : chosen) {
    const History& h = run->history;
    const std::string label = csvField(run->label.toStdString());
    const std::string source = run->fromSweep ? "sweep" : "run";
    for (size_t i = 0; i < h.epoch.size(); ++i) {
      text += label + "," + source + "," + std::to_string(h.epoch[i] + 1);
      for (const std::string& key : keys) {
        text += ',';
        const auto values = h.history.find(key);
        if (values != h.history.end() && i < values->second.size())
          text += python_repr(values->second[i]);
      }
      text += "\n";
    }
  }
  return text;
}

bool SessionRuns::exportCsv(const QString& path, const std::vector<int>& ids,
                            QString* error) const {
  QSaveFile file(path);
  const std::string text = csv(ids);
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(text.data(), qint64(text.size())) != qint64(text.size()) || !file.commit()) {
    if (error) *error = tr("%1: cannot write the file: %2.").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace fitbench
