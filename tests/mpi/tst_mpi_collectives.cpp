// HierarchicalCollectives over Open MPI, run by mpirun with 2 and 4 processes (ctest mpi/*): as
// flashlight's AllReduceTest, every rank fills its buffers with its rank and checks the closed
// form (the sum over ranks is N(N-1)/2), for every collective, 1 and 2 devices per process, ring
// and naive; and with uneven random values, every result bitwise equal to the thread backend's
// over the same device count (computed on each rank from every rank's values); the same for 3
// groups served at once (a ModelParallel mesh's columns), each group on buffers of its own size.
// Each through MPI's messages and through shared memory (the processes of one machine), and the
// same on sub-communicators (the processes split into groups, as a mesh's axes split them).
// Plus the start check: ranks that agree pass, a rank with another experiment is named.
#include <QTest>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "core/distribution/collectives/hierarchical_collectives.h"
#include "core/distribution/collectives/thread_collectives.h"
#include "core/python/random.h"
#include "tests/mpi/mpi_fixture.h"

using namespace fitbench;

namespace {

// Runs f(member) on `local` members at once, member 0 on this (MPI's) thread.
void on_members(int local, const std::function<void(int)>& f) {
  std::vector<std::thread> others;
  for (int m = 1; m < local; ++m) others.emplace_back(f, m);
  f(0);
  for (auto& t : others) t.join();
}

// Global rank g's input: uneven values (so that the order of additions shows in the bits).
std::vector<float> values_of(int g, int64_t size, int salt) {
  Rng rng(static_cast<uint64_t>(1000 * salt + g + 1));
  std::vector<float> v(static_cast<size_t>(size));
  for (auto& x : v) x = static_cast<float>(rng.normal() * std::pow(10.0, rng.uniform01() * 6 - 3));
  return v;
}

// The pieces (sizes 1, rest/2, rest - rest/2) of a flat buffer.
std::vector<std::span<float>> pieces_of(std::vector<float>& v) {
  const size_t n = v.size(), a = std::min<size_t>(1, n), b = (n - a) / 2;
  return {std::span<float>(v.data(), a), std::span<float>(v.data() + a, b),
          std::span<float>(v.data() + a + b, n - a - b)};
}

enum class Op {
  kAllReduce,
  kReduceScatterPieces,
  kReduceScatter,
  kAllGatherPieces,
  kAllGather,
  kBroadcast
};

// What member `rank` of `c` holds after `op` on the inputs of values_of (flat all_gather: its own
// chunk of them); `root` for broadcast. Returns the member's result buffer.
std::vector<float> run_op(Collectives& c, int rank, Op op, int64_t size, int salt, int root) {
  const int g = c.global_rank(rank), n = c.size();
  std::vector<float> v = values_of(g, size, salt);
  const Chunk own = chunk_of(size, n, g);
  switch (op) {
    case Op::kAllReduce: {
      auto p = pieces_of(v);
      c.all_reduce(rank, p);
      return v;
    }
    case Op::kReduceScatterPieces: {
      auto p = pieces_of(v);
      c.reduce_scatter(rank, p);
      return std::vector<float>(v.begin() + own.begin, v.begin() + own.begin + own.size);
    }
    case Op::kReduceScatter: {
      std::vector<float> out(static_cast<size_t>(own.size));
      c.reduce_scatter(rank, v, out);
      return out;
    }
    case Op::kAllGatherPieces: {
      auto p = pieces_of(v);
      c.all_gather(rank, p);
      return v;
    }
    case Op::kAllGather: {
      std::vector<float> in(v.begin() + own.begin, v.begin() + own.begin + own.size);
      std::vector<float> out(static_cast<size_t>(size));
      c.all_gather(rank, in, out);
      return out;
    }
    case Op::kBroadcast:
      c.broadcast(rank, root, v);
      return v;
  }
  return {};
}

}  // namespace

// Every collective of `c` on buffers of each size, each member's result bitwise the thread
// backend's over the same device count.
void check_equals_threads(HierarchicalCollectives& c, int local, CollectiveAlgorithm a,
                          std::initializer_list<int64_t> sizes) {
  const int n = c.size();
  int salt = 0;
  for (const int64_t size : sizes) {
    for (Op op : {Op::kAllReduce, Op::kReduceScatterPieces, Op::kReduceScatter,
                  Op::kAllGatherPieces, Op::kAllGather, Op::kBroadcast}) {
      ++salt;
      const int root = salt % n;
      std::vector<std::vector<float>> got(static_cast<size_t>(local));
      on_members(local, [&](int m) { got[m] = run_op(c, m, op, size, salt, root); });
      // The thread backend over every rank, in this process.
      auto threads = make_thread_collectives(n, a);
      std::vector<std::vector<float>> want(static_cast<size_t>(n));
      std::vector<std::thread> ts;
      for (int r = 0; r < n; ++r)
        ts.emplace_back([&, r] { want[r] = run_op(*threads, r, op, size, salt, root); });
      for (auto& t : ts) t.join();
      for (int m = 0; m < local; ++m) {
        const auto& w = want[static_cast<size_t>(c.global_rank(m))];
        QCOMPARE(got[static_cast<size_t>(m)].size(), w.size());
        // (A chunk may be empty: 2 floats over 4 ranks.)
        QVERIFY2(w.empty() || std::memcmp(got[m].data(), w.data(), w.size() * sizeof(float)) == 0,
                 qPrintable(QString("op %1, %2 floats, member %3: not the thread backend's bits")
                                .arg(static_cast<int>(op))
                                .arg(size)
                                .arg(m)));
      }
    }
  }
}

class TestMpiCollectives : public QObject {
  Q_OBJECT
  std::shared_ptr<ProcessGroup> group_;

 private slots:
  void initTestCase() { group_ = mpi_test::start(); }
  void cleanupTestCase() {
    group_.reset();
    mpi_test::stop();
  }
  void every_rank_fills_its_rank_data();
  void every_rank_fills_its_rank();
  void equals_thread_collectives_data();
  void equals_thread_collectives();
  void groups_equal_thread_collectives_data();
  void groups_equal_thread_collectives();
  void sub_communicators_equal_thread_collectives_data();
  void sub_communicators_equal_thread_collectives();
  void falls_back_to_messages_when_memory_cannot_be_shared();
  void start_check_names_the_differing_rank();
};

void TestMpiCollectives::every_rank_fills_its_rank_data() {
  QTest::addColumn<int>("local");
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<bool>("shared");
  for (bool shared : {true, false})
    for (int local : {1, 2})
      for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
        QTest::addRow("%d per process, %s, %s", local, algorithm_name(a),
                      shared ? "shared memory" : "MPI messages")
            << local << static_cast<int>(a) << shared;
}

void TestMpiCollectives::every_rank_fills_its_rank() {
  QFETCH(int, local);
  QFETCH(int, algorithm);
  QFETCH(bool, shared);
  if (!mpi_test::share_memory(*group_, shared))
    QSKIP("the processes do not share one machine (or FITBENCH_SHM_DISABLE=1)");
  HierarchicalCollectives c(group_, local, static_cast<CollectiveAlgorithm>(algorithm));
  const int n = c.size();
  QCOMPARE(n, group_->size() * local);
  const float sum = static_cast<float>(n * (n - 1) / 2);
  for (const int64_t size : {int64_t{1}, int64_t{3}, int64_t{1000}}) {
    std::vector<int> bad(static_cast<size_t>(local), 0);
    on_members(local, [&](int m) {
      const int g = c.global_rank(m);
      int& wrong = bad[static_cast<size_t>(m)];
      auto check = [&](const std::vector<float>& v, float want) {
        for (float x : v) wrong += x != want;
      };
      std::vector<float> v(static_cast<size_t>(size), static_cast<float>(g));
      c.all_reduce(m, v);
      check(v, sum);
      const Chunk own = chunk_of(size, n, g);
      std::vector<float> in(static_cast<size_t>(size), static_cast<float>(g)), out(own.size);
      c.reduce_scatter(m, in, out);
      check(out, sum);
      std::vector<float> w(static_cast<size_t>(size), static_cast<float>(g));
      const std::span<float> one[1] = {w};
      c.reduce_scatter(m, one);
      check(std::vector<float>(w.begin() + own.begin, w.begin() + own.begin + own.size), sum);
      // All-gather: chunk r comes from rank r, filled with r.
      std::vector<float> mine(own.size, static_cast<float>(g)), all(static_cast<size_t>(size));
      c.all_gather(m, mine, all);
      for (int r = 0; r < n; ++r) {
        const Chunk cr = chunk_of(size, n, r);
        check(std::vector<float>(all.begin() + cr.begin, all.begin() + cr.begin + cr.size),
              static_cast<float>(r));
      }
      std::vector<float> u(static_cast<size_t>(size), static_cast<float>(g));
      const std::span<float> one_u[1] = {u};
      c.all_gather(m, one_u);
      for (int r = 0; r < n; ++r) {
        const Chunk cr = chunk_of(size, n, r);
        check(std::vector<float>(u.begin() + cr.begin, u.begin() + cr.begin + cr.size),
              static_cast<float>(r));
      }
      for (int root = 0; root < n; ++root) {
        std::vector<float> b(static_cast<size_t>(size), static_cast<float>(g));
        c.broadcast(m, root, b);
        check(b, static_cast<float>(root));
      }
    });
    for (int m = 0; m < local; ++m) QCOMPARE(bad[static_cast<size_t>(m)], 0);
  }
}

void TestMpiCollectives::equals_thread_collectives_data() { every_rank_fills_its_rank_data(); }

void TestMpiCollectives::equals_thread_collectives() {
  QFETCH(int, local);
  QFETCH(int, algorithm);
  QFETCH(bool, shared);
  if (!mpi_test::share_memory(*group_, shared))
    QSKIP("the processes do not share one machine (or FITBENCH_SHM_DISABLE=1)");
  const auto a = static_cast<CollectiveAlgorithm>(algorithm);
  HierarchicalCollectives c(group_, local, a);
  check_equals_threads(c, local, a, {2, 7, 1001});
}

void TestMpiCollectives::groups_equal_thread_collectives_data() {
  every_rank_fills_its_rank_data();
}

void TestMpiCollectives::groups_equal_thread_collectives() {
  QFETCH(int, local);
  QFETCH(int, algorithm);
  QFETCH(bool, shared);
  if (!mpi_test::share_memory(*group_, shared))
    QSKIP("the processes do not share one machine (or FITBENCH_SHM_DISABLE=1)");
  const auto a = static_cast<CollectiveAlgorithm>(algorithm);
  constexpr int kGroups = 3;
  HierarchicalCollectives all(group_, local, a, kGroups);
  std::vector<std::unique_ptr<Collectives>> views;
  for (int g = 0; g < kGroups; ++g) views.push_back(all.group(g));
  const int n = all.size();
  int salt = 0;
  for (Op op : {Op::kAllReduce, Op::kReduceScatterPieces, Op::kReduceScatter, Op::kAllGatherPieces,
                Op::kAllGather, Op::kBroadcast}) {
    ++salt;
    const int root = salt % n;
    // Group g's buffers hold 5 + 3g floats and its own values.
    auto size_of = [](int g) { return int64_t{5} + 3 * g; };
    auto salt_of = [&](int g) { return 100 * g + salt; };
    std::vector<std::vector<float>> got(static_cast<size_t>(kGroups * local));
    // Slot g * local + m: member m of group g; slot 0 on this (MPI's) thread.
    on_members(kGroups * local, [&](int slot) {
      const int g = slot / local, m = slot % local;
      got[static_cast<size_t>(slot)] =
          run_op(*views[static_cast<size_t>(g)], m, op, size_of(g), salt_of(g), root);
    });
    for (int g = 0; g < kGroups; ++g) {
      auto threads = make_thread_collectives(n, a);
      std::vector<std::vector<float>> want(static_cast<size_t>(n));
      std::vector<std::thread> ts;
      for (int r = 0; r < n; ++r)
        ts.emplace_back(
            [&, r] { want[r] = run_op(*threads, r, op, size_of(g), salt_of(g), root); });
      for (auto& t : ts) t.join();
      for (int m = 0; m < local; ++m) {
        const auto& w = want[static_cast<size_t>(all.global_rank(m))];
        const auto& mine = got[static_cast<size_t>(g * local + m)];
        QCOMPARE(mine.size(), w.size());
        QVERIFY2(w.empty() || std::memcmp(mine.data(), w.data(), w.size() * sizeof(float)) == 0,
                 qPrintable(QString("op %1, group %2, member %3: not the thread backend's bits")
                                .arg(static_cast<int>(op))
                                .arg(g)
                                .arg(m)));
      }
    }
  }
}

void TestMpiCollectives::sub_communicators_equal_thread_collectives_data() {
  QTest::addColumn<QString>("split");
  QTest::addColumn<int>("local");
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<bool>("shared");
  for (bool shared : {true, false})
    for (const char* split : {"halves", "alternate", "reversed"})
      for (int local : {1, 2})
        for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
          QTest::addRow("%s, %d per process, %s, %s", split, local, algorithm_name(a),
                        shared ? "shared memory" : "MPI messages")
              << QString(split) << local << static_cast<int>(a) << shared;
}

// A mesh axis's communicator: the processes split into groups (halves: ranks 0..P/2-1 and the
// rest, on 2 processes one each; alternate: even and odd ranks; reversed: all, in reverse order),
// every group running the collectives at once on its own, each bitwise the thread backend's over
// its own devices.
void TestMpiCollectives::sub_communicators_equal_thread_collectives() {
  QFETCH(QString, split);
  QFETCH(int, local);
  QFETCH(int, algorithm);
  QFETCH(bool, shared);
  if (!mpi_test::share_memory(*group_, shared))
    QSKIP("the processes do not share one machine (or FITBENCH_SHM_DISABLE=1)");
  const int rank = group_->rank(), size = group_->size();
  int color = 0, key = rank, want_rank = rank, want_size = size;
  if (split == "halves") {
    const int half = size / 2;
    color = rank < half ? 0 : 1;
    want_rank = rank % half;
    want_size = color == 0 ? half : size - half;
  } else if (split == "alternate") {
    color = rank % 2;
    want_rank = rank / 2;
    want_size = (size - color + 1) / 2;
  } else {
    key = -rank;
    want_rank = size - 1 - rank;
  }
  const std::shared_ptr<ProcessGroup> part = group_->split(color, key);
  QCOMPARE(part->rank(), want_rank);
  QCOMPARE(part->size(), want_size);
  const auto a = static_cast<CollectiveAlgorithm>(algorithm);
  HierarchicalCollectives c(part, local, a);
  QCOMPARE(c.size(), want_size * local);
  QCOMPARE(c.global_rank(0), want_rank * local);
  // Shared memory on every machine of this test: a part shares whenever its parent does.
  QCOMPARE(static_cast<MpiProcessGroup&>(*part).shares_memory(), shared);
  check_equals_threads(c, local, a, {2, 7, 1001});
}

void TestMpiCollectives::falls_back_to_messages_when_memory_cannot_be_shared() {
  if (!mpi_test::share_memory(*group_, true))
    QSKIP("the processes do not share one machine (or FITBENCH_SHM_DISABLE=1)");
  // On the last rank only, as when one process's /dev/shm is full: every process must still take
  // the same path, and the results stay the thread backend's.
  if (group_->rank() == group_->size() - 1) MpiProcessGroup::limit_shared_bytes(4000);
  for (int local : {1, 2}) {
    HierarchicalCollectives c(group_, local, CollectiveAlgorithm::kRing);
    check_equals_threads(c, local, CollectiveAlgorithm::kRing, {2, 7});
    QVERIFY(c.shares_memory());
    // 5000 floats (more than any window of the tests before holds, so the window must grow) no
    // longer fit in the last rank's 4000 bytes.
    check_equals_threads(c, local, CollectiveAlgorithm::kRing, {5000, 2, 7});
    QVERIFY(!c.shares_memory());
  }
  MpiProcessGroup::limit_shared_bytes(-1);
}

void TestMpiCollectives::start_check_names_the_differing_rank() {
  const std::vector<StartPart> same = {{"the experiment file e.json", "{}"}, {"the options", "-"}};
  QCOMPARE(QString::fromStdString(start_mismatch(*group_, same)), QString());
  const int last = group_->size() - 1;
  const std::vector<StartPart> differ = {
      {"the experiment file e.json", group_->rank() == last ? "{\"seed\": 8}" : "{}"},
      {"the options", "-"}};
  const QString said = QString::fromStdString(start_mismatch(*group_, differ));
  QCOMPARE(said, QString("rank %1 differs from rank 0 in the experiment file e.json; every "
                         "process must run the same fitbench build on the same experiment with "
                         "the same options")
                     .arg(last));
}

QTEST_GUILESS_MAIN(TestMpiCollectives)
#include "tst_mpi_collectives.moc"
