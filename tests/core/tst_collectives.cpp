// Collectives from real threads: all_reduce (one buffer and several pieces), all_gather and
// reduce_scatter (flat, and in place over pieces), and broadcast with the ring and naive algorithms
// for N = 1, 2, 3, 4, 5, 8 and odd sizes, against a plain double-precision sum and, bit for bit,
// against the summation order each algorithm documents; calls back to back (buffer reuse); bytes
// per rank; the link model's modeled cost, charged to every operation and waited from the last
// rank's arrival; the wait for a late rank. No test asserts an upper bound on a measured time, or a
// ratio of two.
#include <QTest>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "core/distribution/collectives/collectives.h"
#include "core/python/random.h"

using namespace fitbench;

namespace {

// Runs body(rank) on n threads at once.
void on_threads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

// Rank r's input for round `round`: values of mixed magnitude, so the order of additions shows.
std::vector<float> input(int r, int round, int64_t size) {
  Rng rng(1000 * static_cast<uint64_t>(round) + static_cast<uint64_t>(r) + 1);
  std::vector<float> v(static_cast<size_t>(size));
  for (auto& x : v) x = static_cast<float>(rng.normal() * std::pow(10.0, rng.below(5)));
  return v;
}

// The sum the algorithm's documented order gives, in float: naive ((b0 + b1) + b2) + ...; ring:
// chunk c is added in the rank order c+1, c+2, ..., c (each step "own + received").
std::vector<float> ordered_sum(CollectiveAlgorithm a, const std::vector<std::vector<float>>& in) {
  const int n = static_cast<int>(in.size());
  const int64_t size = static_cast<int64_t>(in[0].size());
  std::vector<float> out(static_cast<size_t>(size));
  for (int c = 0; c < n; ++c) {
    const Chunk ch = chunk_of(size, n, c);
    for (int64_t i = ch.begin; i < ch.begin + ch.size; ++i) {
      if (a == CollectiveAlgorithm::kNaive) {
        float s = in[0][i];
        for (int r = 1; r < n; ++r) s = s + in[r][i];
        out[i] = s;
      } else {
        float s = in[(c + 1) % n][i];
        for (int k = 2; k <= n; ++k) s = in[(c + k) % n][i] + s;
        out[i] = s;
      }
    }
  }
  return out;
}

// The error of a float sum relative to the sum of the terms' magnitudes: at most (N-1) units of
// float rounding (2^-24 each) for any order of additions.
double relative_error(float got, double want, double magnitude) {
  return std::abs(static_cast<double>(got) - want) / std::max(1.0, magnitude);
}

}  // namespace

class TestCollectives : public QObject {
  Q_OBJECT
 private slots:
  void chunks();
  void operations_data();
  void operations();
  void bytes_per_rank();
  void modeled_cost();
  void link_cost_is_waited_data();
  void link_cost_is_waited();
  void late_rank_is_waited_for();
  void algorithm_names();
};

void TestCollectives::chunks() {
  // 1001 over 4: 250, 250, 250, 251 (size * c / n boundaries); sizes differ by at most one.
  QCOMPARE(chunk_of(1001, 4, 0).size, int64_t(250));
  QCOMPARE(chunk_of(1001, 4, 3).begin, int64_t(750));
  QCOMPARE(chunk_of(1001, 4, 3).size, int64_t(251));
  for (int n : {1, 2, 3, 5, 8})
    for (int64_t size : {0, 1, 7, 1001}) {
      int64_t at = 0, lo = size, hi = 0;
      for (int c = 0; c < n; ++c) {
        const Chunk ch = chunk_of(size, n, c);
        QCOMPARE(ch.begin, at);
        at += ch.size;
        lo = std::min(lo, ch.size);
        hi = std::max(hi, ch.size);
      }
      QCOMPARE(at, size);
      QVERIFY(hi - lo <= 1);
    }
}

void TestCollectives::operations_data() {
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<int>("ranks");
  QTest::addColumn<int>("size");
  for (int a : {0, 1})
    for (int n : {1, 2, 3, 4, 5, 8})
      for (int size : {1, 7, 1001})
        QTest::newRow(
            qPrintable(QString("%1/N=%2/size=%3").arg(a == 0 ? "ring" : "naive").arg(n).arg(size)))
            << a << n << size;
}

void TestCollectives::operations() {
  QFETCH(int, algorithm);
  QFETCH(int, ranks);
  QFETCH(int, size);
  const auto alg = static_cast<CollectiveAlgorithm>(algorithm);
  const int n = ranks;
  auto coll = make_thread_collectives(n, alg);
  QCOMPARE(coll->size(), n);
  QCOMPARE(coll->algorithm(), alg);
  constexpr int kRounds = 3;  // back to back, so staging buffers are reused
  // Per round and rank: inputs and every operation's result.
  std::vector<std::vector<std::vector<float>>> in(kRounds), reduced(kRounds), pieces(kRounds),
      gathered(kRounds), scattered(kRounds), broadcasted(kRounds), split(kRounds),
      split_chunk(kRounds);
  for (int round = 0; round < kRounds; ++round)
    for (int r = 0; r < n; ++r) in[round].push_back(input(r, round, size));
  for (auto* v : {&reduced, &pieces, &gathered, &scattered, &broadcasted, &split, &split_chunk})
    for (auto& round : *v) round.resize(n);

  on_threads(n, [&](int r) {
    for (int round = 0; round < kRounds; ++round) {
      const auto& mine = in[round][r];
      // all_reduce of one buffer.
      auto& a = reduced[round][r];
      a = mine;
      coll->all_reduce(r, std::span<float>(a));
      // all_reduce of the same values in three uneven pieces (one empty).
      auto& p = pieces[round][r];
      p = mine;
      const size_t cut1 = p.size() / 3, cut2 = cut1;  // pieces [0, cut1), [cut1, cut1), rest
      std::span<float> parts[3] = {std::span<float>(p.data(), cut1),
                                   std::span<float>(p.data() + cut1, cut2 - cut1),
                                   std::span<float>(p.data() + cut2, p.size() - cut2)};
      coll->all_reduce(r, std::span<const std::span<float>>(parts));
      // The same all-reduce split in two, in place over the pieces: reduce_scatter leaves this
      // rank's chunk summed (kept aside, then the chunk is overwritten with its own sum again and
      // everything else with garbage), all_gather brings every other rank's chunk.
      auto& q = split[round][r];
      q = mine;
      std::span<float> qparts[3] = {std::span<float>(q.data(), cut1),
                                    std::span<float>(q.data() + cut1, cut2 - cut1),
                                    std::span<float>(q.data() + cut2, q.size() - cut2)};
      coll->reduce_scatter(r, std::span<const std::span<float>>(qparts));
      {
        const Chunk c = chunk_of(size, n, r);
        split_chunk[round][r].assign(q.begin() + c.begin, q.begin() + c.begin + c.size);
        for (int64_t i = 0; i < size; ++i)
          if (i < c.begin || i >= c.begin + c.size) q[static_cast<size_t>(i)] = -7.0f;
      }
      coll->all_gather(r, std::span<const std::span<float>>(qparts));
      // all_gather of each rank's chunk of its input.
      const Chunk own = chunk_of(size, n, r);
      auto& g = gathered[round][r];
      g.assign(static_cast<size_t>(size), -1.0f);
      coll->all_gather(r, std::span<const float>(mine.data() + own.begin, own.size), g);
      // reduce_scatter: this rank's chunk of the sum.
      auto& s = scattered[round][r];
      s.assign(static_cast<size_t>(own.size), -1.0f);
      coll->reduce_scatter(r, mine, s);
      // broadcast from the last rank.
      auto& b = broadcasted[round][r];
      b = mine;
      coll->broadcast(r, n - 1, b);
    }
  });

  for (int round = 0; round < kRounds; ++round) {
    const auto& x = in[round];
    const std::vector<float> exact = ordered_sum(alg, x);
    for (int r = 0; r < n; ++r) {
      for (int64_t i = 0; i < size; ++i) {
        double plain = 0.0, magnitude = 0.0;
        for (int s = 0; s < n; ++s) {
          plain += x[s][i];
          magnitude += std::abs(x[s][i]);
        }
        // Against the plain sum: float rounding only.
        QVERIFY2(relative_error(reduced[round][r][i], plain, magnitude) < 1e-6,
                 qPrintable(QString("rank %1 element %2: %3 vs %4")
                                .arg(r)
                                .arg(i)
                                .arg(reduced[round][r][i])
                                .arg(plain)));
        // Bit for bit: the documented order, the same on every rank and with pieces.
        QCOMPARE(reduced[round][r][i], exact[i]);
        QCOMPARE(pieces[round][r][i], exact[i]);
        QCOMPARE(split[round][r][i], exact[i]);
        // all_gather puts every rank's chunk in place: the input itself.
        QCOMPARE(gathered[round][r][i], x[static_cast<size_t>([&] {
                   for (int c = 0; c < n; ++c) {
                     const Chunk ch = chunk_of(size, n, c);
                     if (i < ch.begin + ch.size) return c;
                   }
                   return n - 1;
                 }())][i]);
        QCOMPARE(broadcasted[round][r][i], x[n - 1][i]);
      }
      const Chunk own = chunk_of(size, n, r);
      for (int64_t i = 0; i < own.size; ++i) {
        QCOMPARE(scattered[round][r][i], exact[own.begin + i]);
        QCOMPARE(split_chunk[round][r][static_cast<size_t>(i)], exact[own.begin + i]);
      }
    }
  }
}

void TestCollectives::bytes_per_rank() {
  // N = 4, 1001 floats: chunks 250, 250, 250, 251. Ring all_reduce: rank r sends every chunk but
  // its own in the reduce-scatter and every chunk but chunk r+1 in the all-gather (and receives
  // the same amounts from its left). Naive: rank 0 receives and sends 3 full buffers, the others
  // one each.
  const int n = 4;
  const int64_t size = 1001;
  for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
    auto coll = make_thread_collectives(n, alg);
    std::vector<CollectiveStats> stats(n);
    std::vector<std::vector<float>> buf(n, std::vector<float>(size, 1.0f));
    on_threads(n, [&](int r) { stats[r] = coll->all_reduce(r, std::span<float>(buf[r])); });
    for (int r = 0; r < n; ++r) {
      int64_t sent = 0, messages = 0;
      if (alg == CollectiveAlgorithm::kRing) {
        sent = (size - chunk_of(size, n, r).size) + (size - chunk_of(size, n, (r + 1) % n).size);
        messages = 2 * (n - 1);
      } else {
        sent = r == 0 ? 3 * size : size;
        messages = r == 0 ? 3 : 1;
      }
      QCOMPARE(stats[r].bytes_sent, sent * 4);
      QCOMPARE(stats[r].messages_sent, static_cast<int>(messages));
      QCOMPARE(buf[r][0], 4.0f);
    }
    // Everything sent is received.
    int64_t sent = 0, received = 0;
    for (const auto& s : stats) {
      sent += s.bytes_sent;
      received += s.bytes_received;
    }
    QCOMPARE(sent, received);
    QCOMPARE(sent, int64_t(2 * (n - 1) * size * 4));
  }
}

void TestCollectives::modeled_cost() {
  // By hand, N = 4, 1000 floats, 10 us per message, 1 GB/s (1000 bytes per us):
  //   ring all_reduce: 2*3 messages of 250 floats (1000 bytes, 1 us): 6 * 11 = 66 us;
  //   naive all_reduce: 2*3 messages of 4000 bytes (4 us): 6 * 14 = 84 us;
  //   ring all_gather: 3 * 11 = 33 us; naive all_gather: 3 * (11 + 14) = 75 us;
  //   ring broadcast: 3 * 14 = 42 us.
  const LinkModel link{10.0, 1.0};
  const auto ring = CollectiveAlgorithm::kRing, naive = CollectiveAlgorithm::kNaive;
  QCOMPARE(modeled_link_us(CollectiveOp::kAllReduce, ring, 4, 1000, link), 66.0);
  QCOMPARE(modeled_link_us(CollectiveOp::kAllReduce, naive, 4, 1000, link), 84.0);
  QCOMPARE(modeled_link_us(CollectiveOp::kAllGather, ring, 4, 1000, link), 33.0);
  QCOMPARE(modeled_link_us(CollectiveOp::kAllGather, naive, 4, 1000, link), 75.0);
  QCOMPARE(modeled_link_us(CollectiveOp::kBroadcast, ring, 4, 1000, link), 42.0);
  // Off (the defaults), or one rank: free.
  QCOMPARE(modeled_link_us(CollectiveOp::kAllReduce, ring, 4, 1000, LinkModel{}), 0.0);
  QCOMPARE(modeled_link_us(CollectiveOp::kAllReduce, naive, 1, 1000, link), 0.0);
  // Latency only: 2(N-1) messages for either algorithm.
  QCOMPARE(modeled_link_us(CollectiveOp::kAllReduce, ring, 3, 5, LinkModel{7.0, 0.0}), 28.0);
}

void TestCollectives::link_cost_is_waited_data() {
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<int>("op");
  for (int a : {0, 1})
    for (int op = 0; op < 4; ++op)
      QTest::newRow(qPrintable(QString("%1/%2")
                                   .arg(a == 0 ? "ring" : "naive")
                                   .arg(op_name(static_cast<CollectiveOp>(op)))))
          << a << op;
}

void TestCollectives::link_cost_is_waited() {
  // 3 ranks, 1001 floats, 300 us per message and 0.5 GB/s. Every rank reports the modeled link
  // time of the whole buffer as its charge, and no rank returns before that much time has passed
  // since the last rank entered the call (rank 2 enters 2 ms after the others): the link is
  // charged from the moment the exchange can start. Lower bounds only: a loaded machine makes
  // the calls longer, never shorter.
  QFETCH(int, algorithm);
  QFETCH(int, op);
  const auto alg = static_cast<CollectiveAlgorithm>(algorithm);
  const auto operation = static_cast<CollectiveOp>(op);
  const LinkModel link{300.0, 0.5};
  const int n = 3;
  const int64_t size = 1001;
  const double modeled = modeled_link_us(operation, alg, n, size, link);
  QVERIFY(modeled > 300.0);
  auto coll = make_thread_collectives(n, alg, link);
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> entered(n), returned(n);
  std::vector<CollectiveStats> stats(n);
  on_threads(n, [&](int r) {
    std::vector<float> in(static_cast<size_t>(size), 1.0f), out(static_cast<size_t>(size));
    const Chunk own = chunk_of(size, n, r);
    if (r == 2) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    entered[r] = Clock::now();
    switch (operation) {
      case CollectiveOp::kAllReduce:
        stats[r] = coll->all_reduce(r, std::span<float>(in));
        break;
      case CollectiveOp::kAllGather:
        stats[r] = coll->all_gather(r, std::span<const float>(in.data(), own.size), out);
        break;
      case CollectiveOp::kReduceScatter:
        stats[r] = coll->reduce_scatter(r, in, std::span<float>(out.data(), own.size));
        break;
      case CollectiveOp::kBroadcast:
        stats[r] = coll->broadcast(r, 0, in);
        break;
    }
    returned[r] = Clock::now();
  });
  const Clock::time_point last_entered = *std::max_element(entered.begin(), entered.end());
  for (int r = 0; r < n; ++r) {
    QCOMPARE(stats[r].link_us, modeled);
    // The deadline is rounded down to the clock's nanoseconds.
    const double after_last =
        std::chrono::duration<double, std::micro>(returned[r] - last_entered).count();
    QVERIFY2(after_last >= modeled - 0.002,
             qPrintable(QString("rank %1: %2 us after the last rank entered, modeled %3")
                            .arg(r)
                            .arg(after_last)
                            .arg(modeled)));
  }
  // By hand for the ring all_reduce: 2(N-1) = 4 messages of 334 floats (1336 bytes at 500 bytes
  // per us: 2.672 us) after 300 us of latency each.
  if (alg == CollectiveAlgorithm::kRing && operation == CollectiveOp::kAllReduce)
    QCOMPARE(modeled, 4 * (300.0 + 1336.0 / 500.0));
}

void TestCollectives::late_rank_is_waited_for() {
  // Rank 1 enters each call 20 ms after rank 0. What holds on any machine: a rank's reported
  // wait is never negative and never longer than its call. That rank 0 sees the wait needs it to
  // reach the barrier before rank 1 does, which fails only when the machine holds a runnable
  // thread back for over 10 ms; of 5 rounds, at least one must show rank 0 waiting for more than
  // 10 ms (a wait that is never measured shows none).
  auto coll = make_thread_collectives(2, CollectiveAlgorithm::kNaive);
  using Clock = std::chrono::steady_clock;
  constexpr int kRounds = 5;
  std::vector<std::array<CollectiveStats, 2>> stats(kRounds);
  std::vector<std::array<double, 2>> elapsed(kRounds);
  on_threads(2, [&](int r) {
    std::vector<float> b(3, 1.0f);
    for (int round = 0; round < kRounds; ++round) {
      if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto t0 = Clock::now();
      stats[round][r] = coll->all_reduce(r, std::span<float>(b));
      elapsed[round][r] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
  });
  int rounds_seen = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int r = 0; r < 2; ++r) {
      QVERIFY(stats[round][r].wait_us >= 0.0);
      QVERIFY(stats[round][r].wait_us <= elapsed[round][r]);
    }
    if (stats[round][0].wait_us > 10000.0) ++rounds_seen;
  }
  QVERIFY2(rounds_seen >= 1, "rank 0 never reported waiting for the late rank");
}

void TestCollectives::algorithm_names() {
  QCOMPARE(parse_algorithm("ring", "x"), CollectiveAlgorithm::kRing);
  QCOMPARE(parse_algorithm("naive", "x"), CollectiveAlgorithm::kNaive);
  QCOMPARE(QString(algorithm_name(CollectiveAlgorithm::kNaive)), QString("naive"));
  try {
    parse_algorithm("tree", "devices.allreduce");
    QFAIL("no error");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.place()), QString("devices.allreduce"));
    QVERIFY(QString(e.what()).contains("\"tree\""));
  }
}

QTEST_GUILESS_MAIN(TestCollectives)
#include "tst_collectives.moc"
