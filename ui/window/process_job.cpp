#include "ui/window/process_job.h"

#include <signal.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/io/model_file.h"
#include "core/run/run_events.h"
#include "core/run/run_plan.h"
#include "ui/window/feed_callback.h"

namespace fitbench {

ProcessLauncher ProcessLauncher::find() {
  ProcessLauncher l;
#ifndef FITBENCH_UI_MPI
  l.unavailable = QObject::tr(
      "This fitbench was built without Open MPI, so it cannot run on several processes: install "
      "openmpi-bin and libopenmpi-dev (sudo apt-get install openmpi-bin libopenmpi-dev, or "
      "scripts/deps.sh) and build again.");
  return l;
#else
  l.mpirun = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
  const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/fitbench-cli");
  for (const QString& c : {beside, QStringLiteral(FITBENCH_CLI_BUILT)}) {
    const QFileInfo f(c);
    if (f.isFile() && f.isExecutable()) {
      l.cli = f.absoluteFilePath();
      break;
    }
  }
  if (l.cli.isEmpty()) l.cli = QStandardPaths::findExecutable(QStringLiteral("fitbench-cli"));
  if (l.mpirun.isEmpty())
    l.unavailable = QObject::tr(
        "Open MPI's mpirun is not installed, so runs cannot use several processes: install it "
        "with sudo apt-get install openmpi-bin libopenmpi-dev (scripts/deps.sh does).");
  else if (l.cli.isEmpty())
    l.unavailable = QObject::tr(
        "fitbench-cli, which runs each process, was not found beside the window or on PATH: "
        "build it (cmake --build build --target fitbench-cli).");
  return l;
#endif
}

// The job's side on its own thread: the QProcess, the event stream and what the run ends with.
class ProcessWorker : public QObject {
  Q_OBJECT
 public:
  ProcessWorker(std::shared_ptr<LiveFeed> feed, std::shared_ptr<std::atomic<qint64>> pid,
                std::shared_ptr<TrainingControl> control)
      : m_feed(std::move(feed)), m_pid(std::move(pid)), m_control(std::move(control)) {}

  void run(const QString& program, const QStringList& args, std::shared_ptr<QTemporaryDir> dir,
           const QString& modelFile, const QString& metricKey, int processes) {
    m_dir = std::move(dir);
    m_modelFile = modelFile;
    m_metricKey = metricKey.toStdString();
    m_processes = processes;
    m_history = History{};
    m_end.reset();
    m_callback.reset();
    m_errors.clear();
    m_otherErrors.clear();
    m_badStream.clear();
    m_line = 0;
    m_epoch = -1;
    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &ProcessWorker::readEvents);
    connect(m_process, &QProcess::readyReadStandardError, this, &ProcessWorker::readErrors);
    connect(m_process, &QProcess::finished, this, &ProcessWorker::ended);
    m_process->start(program, args);
    if (!m_process->waitForStarted(30000)) {
      const QString why = m_process->errorString();
      m_process->deleteLater();
      m_process = nullptr;
      m_dir.reset();
      emit errorOccurred(tr("mpirun (%1) could not start: %2").arg(program, why));
      return;
    }
    m_pid->store(m_process->processId());
    // Stop pressed while mpirun was starting: delivered now.
    if (m_control->stop_requested()) ::kill(static_cast<pid_t>(m_process->processId()), SIGUSR1);
  }

  // The window is closing: the job ends now.
  void finish() {
    if (!m_process) return;
    if (m_process->state() != QProcess::NotRunning) {
      m_process->terminate();  // SIGTERM: mpirun ends every rank
      if (!m_process->waitForFinished(10000)) {
        m_process->kill();
        m_process->waitForFinished(5000);
      }
    }
  }

 signals:
  void started(int devices, QStringList deviceNames, QString distribution,
               std::shared_ptr<const fitbench::CapacityInput> model);
  void finished(std::shared_ptr<fitbench::RunResult> result);
  void errorOccurred(QString message);

 private:
  static Logs toLogs(const std::map<std::string, std::optional<double>>& in) {
    Logs out;
    for (const auto& [k, v] : in) out[k] = v ? *v : NAN;
    return out;
  }

  void readEvents() {
    if (!m_process) return;
    while (m_process->canReadLine()) {
      QByteArray line = m_process->readLine();
      ++m_line;
      if (!m_badStream.isEmpty()) continue;
      line.chop(line.endsWith('\n') ? 1 : 0);
      try {
        handle(parse_run_event(line.toStdString(), "events:" + std::to_string(m_line)));
      } catch (const std::exception& e) {
        // A stream this window cannot read (another fitbench build's): the job is ended.
        m_badStream = tr("fitbench-cli's event stream could not be read (%1); is it the same "
                         "fitbench build as this window?")
                          .arg(QString::fromUtf8(e.what()));
        m_process->terminate();
      }
    }
  }

  void handle(const RunEvent& e) {
    switch (e.kind) {
      case RunEvent::Kind::kBegin: {
        m_callback = std::make_unique<FeedCallback>(*m_feed, *m_control, m_metricKey, e.train_rows,
                                                    e.batch_size);
        m_callback->set_params(CallbackParams{e.epochs, e.steps, 0});
        m_callback->on_train_begin({});
        {
          DecisionGridResult none;
          none.reason =
              tr("A job on several processes trains outside this window, so the "
                 "model's predictions are not drawn as it learns: set Processes to 1 "
                 "(Devices tab) to watch the boundary move.");
          m_feed->setGrid(none);
        }
        // The step events hold process 0's devices: the views show those.
        const int own =
            m_processes > 0 && e.devices % m_processes == 0 ? e.devices / m_processes : e.devices;
        QStringList names;
        for (int d = 0; d < own && d < int(e.device_names.size()); ++d)
          names << QString::fromStdString(e.device_names[size_t(d)]);
        emit started(e.devices, names, QString::fromStdString(e.distribution), nullptr);
        break;
      }
      case RunEvent::Kind::kText:
        m_feed->addText(e.text + "\n");
        break;
      case RunEvent::Kind::kBatch:
        if (!m_callback) break;
        if (e.epoch != m_epoch) {
          m_epoch = e.epoch;
          m_callback->on_epoch_begin(e.epoch, {});
        }
        m_callback->on_train_batch_end(e.batch, toLogs(e.logs));
        break;
      case RunEvent::Kind::kEpoch: {
        if (!m_callback) break;
        Logs logs = toLogs(e.logs);
        m_history.epoch.push_back(e.epoch);
        for (const auto& [k, v] : logs) m_history.history[k].push_back(v);
        m_callback->on_epoch_end(e.epoch, logs);
        break;
      }
      case RunEvent::Kind::kStep:
        if (m_callback) m_callback->on_step_trace(e.step);
        break;
      case RunEvent::Kind::kEnd:
        m_end = e;
        break;
    }
  }

  // stderr: notes, warnings and the per-device usage go to the log as they come (as a terminal
  // shows them); everything else is kept for the error message.
  void readErrors() {
    if (!m_process) return;
    m_stderr += m_process->readAllStandardError();
    for (int nl = m_stderr.indexOf('\n'); nl >= 0; nl = m_stderr.indexOf('\n')) {
      const QString line = QString::fromUtf8(m_stderr.left(nl));
      m_stderr.remove(0, nl + 1);
      takeErrorLine(line);
    }
  }

  void takeErrorLine(const QString& line) {
    static const QString kCli = QStringLiteral("fitbench-cli: ");
    if (line.trimmed().isEmpty() || line.startsWith(QStringLiteral("mpirun: Forwarding signal")))
      return;
    if (line.startsWith(kCli + QStringLiteral("note: ")))
      m_feed->addText("Note: " + line.mid(kCli.size() + 6).toStdString() + "\n");
    else if (line.startsWith(kCli + QStringLiteral("warning: ")))
      m_feed->addText("Warning: " + line.mid(kCli.size() + 9).toStdString() + "\n");
    else if (line.startsWith(QStringLiteral("cpu:")) && line.contains(QStringLiteral(" busy ")))
      m_feed->addText(line.toStdString() + "\n");
    else if (line.startsWith(kCli))
      m_errors << line.mid(kCli.size());
    else if (!line.trimmed().startsWith(QStringLiteral("-----")))  // mpirun's frames
      m_otherErrors << line;
  }

  void ended(int code, QProcess::ExitStatus status) {
    readEvents();
    readErrors();
    if (!m_stderr.isEmpty()) takeErrorLine(QString::fromUtf8(m_stderr));
    m_stderr.clear();
    m_pid->store(0);
    m_process->deleteLater();
    m_process = nullptr;
    // fitbench-cli's own sentences when it said any; else what mpirun said (its own failures:
    // a missing executable, root without the OMPI_ALLOW_* pair), without its frames.
    const QString said = (m_errors.isEmpty() ? m_otherErrors : m_errors).join('\n');
    auto fail = [&](const QString& message) {
      m_dir.reset();
      emit errorOccurred(message);
    };
    if (!m_badStream.isEmpty()) return fail(m_badStream);
    const bool ok = status == QProcess::NormalExit && code == 0;
    if (!m_end || !ok) {
      if (m_control->stop_requested() && m_killed)
        return fail(tr("Stopped at once: the job on %1 processes was ended, so no file was "
                       "written")
                        .arg(m_processes));
      return fail(!said.isEmpty()
                      ? said
                      : tr("mpirun ended with %1 before the run ended")
                            .arg(status == QProcess::NormalExit ? tr("exit code %1").arg(code)
                                                                : tr("a crash")));
    }
    auto result = std::make_shared<RunResult>();
    result->history = std::move(m_history);
    result->stop_reason = m_end->stop_reason;
    result->seconds = m_end->seconds;
    result->usage = m_end->usage;
    try {
      result->model = read_model_file(m_modelFile.toStdString());
    } catch (const std::exception& e) {
      return fail(tr("The run ended but its model could not be read back: %1")
                      .arg(QString::fromUtf8(e.what())));
    }
    m_dir.reset();
    emit finished(result);
  }

 public:
  // Stop was pressed twice: the job is being ended at once (read when it ends).
  void setKilled(bool killed) { m_killed = killed; }

 private:
  std::atomic<bool> m_killed{false};
  std::shared_ptr<LiveFeed> m_feed;
  std::shared_ptr<std::atomic<qint64>> m_pid;
  std::shared_ptr<TrainingControl> m_control;
  QProcess* m_process = nullptr;
  std::shared_ptr<QTemporaryDir> m_dir;
  QString m_modelFile;
  std::string m_metricKey;
  int m_processes = 1;
  std::unique_ptr<FeedCallback> m_callback;
  History m_history;
  std::optional<RunEvent> m_end;
  QByteArray m_stderr;        // an unfinished line
  QStringList m_errors;       // fitbench-cli's error lines, without its prefix
  QStringList m_otherErrors;  // any other stderr line (mpirun's)
  QString m_badStream;
  int64_t m_line = 0;
  int m_epoch = -1;
};

ProcessJob::ProcessJob(std::shared_ptr<LiveFeed> feed, QObject* parent)
    : QObject(parent),
      m_feed(std::move(feed)),
      m_pid(std::make_shared<std::atomic<qint64>>(0)),
      m_control(std::make_shared<TrainingControl>()) {
  m_thread.setObjectName(QStringLiteral("fitbench-processes"));
  m_worker = new ProcessWorker(m_feed, m_pid, m_control);
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  connect(m_worker, &ProcessWorker::started, this, &ProcessJob::started);
  connect(m_worker, &ProcessWorker::finished, this, [this](std::shared_ptr<RunResult> r) {
    m_running = false;
    emit finished(r);
  });
  connect(m_worker, &ProcessWorker::errorOccurred, this, [this](const QString& message) {
    m_running = false;
    emit errorOccurred(message);
  });
  m_thread.start();
}

ProcessJob::~ProcessJob() { shutdown(); }

QString ProcessJob::start(const RunRequest& request, int processes) {
  if (m_running || !m_thread.isRunning()) return {};
  const ProcessLauncher launcher = ProcessLauncher::find();
  m_running = true;
  m_stops = 0;
  m_control->reset();
  m_worker->setKilled(false);
  auto failLater = [this](const QString& message) {
    QMetaObject::invokeMethod(
        this,
        [this, message] {
          m_running = false;
          emit errorOccurred(message);
        },
        Qt::QueuedConnection);
  };
  if (!launcher.unavailable.isEmpty()) {
    failLater(launcher.unavailable);
    return {};
  }
  // The experiment as the panels hold it, its data and initial weights by absolute path (the
  // temporary file is elsewhere); the callbacks' files stay relative to the working folder, as
  // a threaded run writes them.
  auto dir = std::make_shared<QTemporaryDir>();
  if (!dir->isValid()) {
    failLater(tr("No temporary folder for the run's experiment: %1").arg(dir->errorString()));
    return {};
  }
  ExperimentSpec spec = request.spec;
  const std::filesystem::path base = request.baseDir.toStdString();
  resolve_paths(spec, base);  // data files and initial weights from the experiment's folder
  const QString experiment = dir->filePath(QStringLiteral("experiment.json"));
  const QString model = dir->filePath(QStringLiteral("model.json"));
  try {
    write_experiment(spec, experiment.toStdString());
  } catch (const std::exception& e) {
    failLater(QString::fromUtf8(e.what()));
    return {};
  }
  QStringList args = {QStringLiteral("--oversubscribe"),
                      QStringLiteral("--bind-to"),
                      QStringLiteral("none"),
                      QStringLiteral("-np"),
                      QString::number(processes),
                      launcher.cli,
                      QStringLiteral("run"),
                      experiment,
                      QStringLiteral("--events"),
                      QStringLiteral("-"),
                      QStringLiteral("--devices"),
                      QString::number(spec.devices.count.value_or(processes)),
                      QStringLiteral("--save-model"),
                      model};
  if (!request.overrides.history_file.empty())
    args << QStringLiteral("--history") << QString::fromStdString(request.overrides.history_file);
  if (!request.overrides.trace_file.empty())
    args << QStringLiteral("--trace") << QString::fromStdString(request.overrides.trace_file);
  const QString metricKey = TrainingWorker::chartMetricKey(spec);
  ProcessWorker* worker = m_worker;
  QMetaObject::invokeMethod(
      worker,
      [worker, program = launcher.mpirun, args, dir, model, metricKey, processes] {
        worker->run(program, args, dir, model, metricKey, processes);
      },
      Qt::QueuedConnection);
  return QFileInfo(launcher.mpirun).fileName() + QLatin1Char(' ') + args.join(QLatin1Char(' '));
}

void ProcessJob::stop() {
  if (!m_running) return;
  ++m_stops;
  m_control->request_stop();  // mpirun not started yet: the worker sends it SIGUSR1 when it is
  const qint64 pid = m_pid->load();
  if (pid <= 0) return;
  if (m_stops == 1) {
    ::kill(static_cast<pid_t>(pid), SIGUSR1);
  } else {
    m_worker->setKilled(true);
    ::kill(static_cast<pid_t>(pid), SIGTERM);
  }
}

void ProcessJob::shutdown() {
  if (!m_thread.isRunning()) return;
  ProcessWorker* worker = m_worker;
  QMetaObject::invokeMethod(
      worker, [worker] { worker->finish(); }, Qt::BlockingQueuedConnection);
  m_thread.quit();
  m_thread.wait();
  m_running = false;
}

}  // namespace fitbench

#include "process_job.moc"
