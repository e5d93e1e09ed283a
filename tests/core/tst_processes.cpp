// The process layout of a multi-process run, read from the environment as jax.distributed
// detects it (Keras's KERAS_DISTRIBUTION_* first, Open MPI's OMPI_COMM_WORLD_* otherwise), with a
// clear error for each bad value; and the start check's sentence for ranks that differ, with a
// stand-in process group (no MPI needed).
#include <QTest>
#include <cstring>
#include <map>

#include "core/base/error.h"
#include "core/distribution/processes/process_group.h"

using namespace fitbench;

namespace {

using Env = std::map<std::string, std::string>;

ProcessLayout layout(const Env& env) {
  return detect_process_layout([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

QString error_of(const Env& env) {
  try {
    layout(env);
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// Process `rank` of a group whose other processes hashed `others` (one list of part hashes per
// rank, this rank's included and replaced by its own).
class StandIn : public ProcessGroup {
 public:
  StandIn(int rank, std::vector<std::vector<std::string>> contents)
      : rank_(rank), contents_(std::move(contents)) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(contents_.size()); }
  int local_rank() const override { return 0; }
  void all_to_all(const float*, const int*, const int*, float*, const int*, const int*) override {}
  void all_gather(const float*, float*, const int*, const int*) override {}
  void broadcast(float*, int64_t, int) override {}
  void all_gather_bytes(const void* send, int64_t bytes, void* recv) override {
    auto* out = static_cast<char*>(recv);
    for (size_t r = 0; r < contents_.size(); ++r) {
      if (static_cast<int>(r) == rank_) {
        std::memcpy(out + r * bytes, send, static_cast<size_t>(bytes));
        continue;
      }
      std::vector<uint64_t> h;
      for (const std::string& c : contents_[r]) h.push_back(fnv1a(c));
      std::memcpy(out + r * bytes, h.data(), static_cast<size_t>(bytes));
    }
  }
  void barrier() override {}
  std::shared_ptr<ProcessGroup> split(int, int) override { return nullptr; }  // not used here

 private:
  int rank_;
  std::vector<std::vector<std::string>> contents_;
};

}  // namespace

class TestProcesses : public QObject {
  Q_OBJECT
 private slots:
  void one_process_without_settings() {
    const ProcessLayout l = layout({});
    QCOMPARE(l.size, 1);
    QCOMPARE(l.rank, 0);
    QVERIFY(!l.multi());
    QCOMPARE(QString::fromStdString(l.source), QString());
  }
  void open_mpi_settings() {
    const ProcessLayout l = layout({{"OMPI_COMM_WORLD_SIZE", "4"},
                                    {"OMPI_COMM_WORLD_RANK", "3"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
    QCOMPARE(l.size, 4);
    QCOMPARE(l.rank, 3);
    QCOMPARE(l.local_rank, 1);
    QCOMPARE(QString::fromStdString(l.source), QString("OMPI_COMM_WORLD_SIZE"));
  }
  void keras_settings_come_first() {
    const ProcessLayout l = layout({{"KERAS_DISTRIBUTION_NUM_PROCESSES", "2"},
                                    {"KERAS_DISTRIBUTION_PROCESS_ID", "1"},
                                    {"KERAS_DISTRIBUTION_JOB_ADDRESSES", "a:1234,b:1234"},
                                    {"OMPI_COMM_WORLD_SIZE", "4"},
                                    {"OMPI_COMM_WORLD_RANK", "3"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
    QCOMPARE(l.size, 2);
    QCOMPARE(l.rank, 1);
    QCOMPARE(l.job_addresses, (std::vector<std::string>{"a:1234", "b:1234"}));
    QCOMPARE(QString::fromStdString(l.source), QString("KERAS_DISTRIBUTION_NUM_PROCESSES"));
  }
  void bad_settings_are_named() {
    QCOMPARE(error_of({{"OMPI_COMM_WORLD_SIZE", "two"}}),
             QString("OMPI_COMM_WORLD_SIZE: must be a whole number from 1 to 65536, got \"two\""));
    QCOMPARE(error_of({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "2"}}),
             QString("OMPI_COMM_WORLD_RANK: must be a whole number from 0 to 1, got \"2\""));
    QCOMPARE(error_of({{"KERAS_DISTRIBUTION_NUM_PROCESSES", "2"}}),
             QString("KERAS_DISTRIBUTION_PROCESS_ID: must be set with "
                     "KERAS_DISTRIBUTION_NUM_PROCESSES (this process's index from 0)"));
    QCOMPARE(error_of({{"KERAS_DISTRIBUTION_NUM_PROCESSES", "3"},
                       {"KERAS_DISTRIBUTION_PROCESS_ID", "0"},
                       {"KERAS_DISTRIBUTION_JOB_ADDRESSES", "a:1,b:1"}}),
             QString("KERAS_DISTRIBUTION_JOB_ADDRESSES: lists 2 addresses but "
                     "KERAS_DISTRIBUTION_NUM_PROCESSES is 3; give one host:port per process"));
  }
  void start_check_sentences() {
    const std::vector<std::string> same = {"build", "exp", "opts"};
    const std::vector<StartPart> mine = {{"the fitbench build", "build"},
                                         {"the experiment file e.json", "exp"},
                                         {"the options", "opts"}};
    StandIn agree(0, {same, same, same});
    QCOMPARE(QString::fromStdString(start_mismatch(agree, mine)), QString());
    // Rank 1 has another experiment, rank 2 other options too; every rank says the same.
    const std::vector<std::vector<std::string>> differ = {
        same, {"build", "other", "opts"}, {"build", "other", "more"}};
    for (int rank = 0; rank < 3; ++rank) {
      StandIn g(rank, differ);
      const std::vector<StartPart> parts = {{"the fitbench build", differ[rank][0]},
                                            {"the experiment file e.json", differ[rank][1]},
                                            {"the options", differ[rank][2]}};
      QCOMPARE(QString::fromStdString(start_mismatch(g, parts)),
               QString("ranks 1 and 2 differ from rank 0 in the experiment file e.json and the "
                       "options; every process must run the same fitbench build on the same "
                       "experiment with the same options"));
    }
  }
};

QTEST_GUILESS_MAIN(TestProcesses)
#include "tst_processes.moc"
