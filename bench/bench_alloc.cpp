// Counts heap allocations during fit(): every operator new/delete variant and the C allocator
// (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc, pvalloc; Eigen's
// aligned_malloc ends in std::malloc) are replaced by counting versions that forward to glibc's
// __libc_* functions. A Callback snapshots the counter at on_train_batch_begin/end, and a wrapping
// StepExecutor counts inside train_step alone. Allocations inside a steady-state step are traced
// with backtrace() and symbolized with addr2line (configure with -DCMAKE_CXX_FLAGS=-g for
// file:line). Usage: bench_alloc [--epochs N]
#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bench/bench_models.h"
#include "core/data/dataset.h"
#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/layout/layout_map.h"
#include "core/io/experiment.h"
#include "core/python/random.h"
#include "core/training/sequential.h"

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
}

namespace {

std::atomic<uint64_t> g_allocs{0};  // successful or attempted allocations of any kind
std::atomic<uint64_t> g_bytes{0};   // bytes requested by them

// Backtraces of allocations made while armed (inside a steady-state step).
constexpr int kMaxTraces = 16;
constexpr int kMaxFrames = 32;
std::atomic<bool> g_armed{false};
std::atomic<int> g_trace_count{0};
void* g_traces[kMaxTraces][kMaxFrames];
int g_trace_depth[kMaxTraces];
size_t g_trace_bytes[kMaxTraces];
thread_local bool t_in_hook = false;

void note_alloc(size_t bytes) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(bytes, std::memory_order_relaxed);
  if (g_armed.load(std::memory_order_relaxed) && !t_in_hook) {
    t_in_hook = true;
    const int slot = g_trace_count.fetch_add(1, std::memory_order_relaxed);
    if (slot < kMaxTraces) {
      g_trace_depth[slot] = backtrace(g_traces[slot], kMaxFrames);
      g_trace_bytes[slot] = bytes;
    }
    t_in_hook = false;
  }
}

void counted_free(void* p) { __libc_free(p); }

void* counted_new(size_t n) {
  note_alloc(n);
  void* p = __libc_malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void* counted_new_aligned(size_t n, std::align_val_t a) {
  note_alloc(n);
  void* p = __libc_memalign(static_cast<size_t>(a), n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

// ---- the C allocator ----
extern "C" {
void* malloc(size_t n) noexcept {
  note_alloc(n);
  return __libc_malloc(n);
}
void free(void* p) noexcept { counted_free(p); }
void* calloc(size_t n, size_t size) noexcept {
  note_alloc(n * size);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) noexcept {
  note_alloc(n);
  return __libc_realloc(p, n);
}
void* memalign(size_t alignment, size_t n) noexcept {
  note_alloc(n);
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) noexcept {
  note_alloc(n);
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) noexcept {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  note_alloc(n);
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void* valloc(size_t n) noexcept {
  note_alloc(n);
  return __libc_valloc(n);
}
void* pvalloc(size_t n) noexcept {
  note_alloc(n);
  return __libc_pvalloc(n);
}
}

// ---- every replaceable operator new/delete ----
void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  note_alloc(n);
  return __libc_malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  note_alloc(n);
  return __libc_malloc(n ? n : 1);
}
void* operator new(size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  note_alloc(n);
  return __libc_memalign(static_cast<size_t>(a), n ? n : 1);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  note_alloc(n);
  return __libc_memalign(static_cast<size_t>(a), n ? n : 1);
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_free(p);
}

namespace {

using namespace fitbench;
using fitbench::bench::dense;
using fitbench::bench::input;

uint64_t allocs() { return g_allocs.load(std::memory_order_relaxed); }
uint64_t bytes() { return g_bytes.load(std::memory_order_relaxed); }

// Per-batch and per-epoch-boundary counts as fit() sees them between its hooks. Storage is
// reserved up front so recording does not allocate.
class AllocProbe : public Callback {
 public:
  explicit AllocProbe(size_t max_batches) {
    step_allocs_.reserve(max_batches);
    step_bytes_.reserve(max_batches);
    boundaries_.reserve(max_batches);
  }

  void on_epoch_begin(int epoch, const Logs&) override { epoch_ = epoch; }
  void on_train_batch_begin(int batch, const Logs&) override {
    if (have_end_ && batch == 0) boundaries_.push_back(allocs() - last_end_);
    // Trace only the steady state: every batch but the first of the first epoch.
    const bool steady = epoch_ > 0 || batch > 0;
    begin_bytes_ = bytes();
    begin_ = allocs();
    g_armed.store(steady, std::memory_order_relaxed);
  }
  void on_train_batch_end(int batch, const Logs&) override {
    const uint64_t end = allocs();
    const uint64_t end_bytes = bytes();
    g_armed.store(false, std::memory_order_relaxed);
    if (epoch_ == 0 && batch == 0) {
      first_ = end - begin_;
    } else {
      step_allocs_.push_back(end - begin_);
      step_bytes_.push_back(end_bytes - begin_bytes_);
    }
    have_end_ = true;
    last_end_ = allocs();
  }

  uint64_t first_batch() const { return first_; }
  uint64_t steady_max() const { return max_of(step_allocs_); }
  uint64_t steady_max_bytes() const { return max_of(step_bytes_); }
  uint64_t boundary_max() const { return max_of(boundaries_); }
  size_t steady_batches() const { return step_allocs_.size(); }

 private:
  static uint64_t max_of(const std::vector<uint64_t>& v) {
    uint64_t m = 0;
    for (uint64_t x : v) m = std::max(m, x);
    return m;
  }
  int epoch_ = 0;
  bool have_end_ = false;
  uint64_t begin_ = 0, begin_bytes_ = 0, last_end_ = 0, first_ = 0;
  std::vector<uint64_t> step_allocs_, step_bytes_, boundaries_;
};

// Delegates to the executor fit() would use (local, DataParallel over `devices` devices, or
// ModelParallel on a mesh) and counts what its train_step alone allocates, on every thread.
class CountingExecutor : public StepExecutor {
 public:
  explicit CountingExecutor(std::unique_ptr<StepExecutor> inner) : inner_(std::move(inner)) {}
  void prepare(Index max_rows) override { inner_->prepare(max_rows); }
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override {
    const uint64_t before = allocs();
    inner_->train_step(x, y, step, totals);
    count(before);
  }
  void train_step_rows(ConstMatrixRef x, ConstMatrixRef y, std::span<const int64_t> index,
                       Matrix& xb, Matrix& yb, uint64_t step, StepTotals& totals) override {
    const uint64_t before = allocs();
    inner_->train_step_rows(x, y, index, xb, yb, step, totals);
    count(before);
  }
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override {
    inner_->test_step(x, y, totals);
  }
  void predict_step(ConstMatrixRef x, MatrixRef out) override { inner_->predict_step(x, out); }
  void pull_from_model() override { inner_->pull_from_model(); }
  void push_to_model() override { inner_->push_to_model(); }
  std::vector<DeviceMemory> device_memory() const override { return inner_->device_memory(); }

  static uint64_t max_after_first_;
  static uint64_t calls_;

 private:
  void count(uint64_t before) {
    const uint64_t n = allocs() - before;
    if (calls_++ > 0) max_after_first_ = std::max(max_after_first_, n);
  }

 public:
 private:
  std::unique_ptr<StepExecutor> inner_;
};
uint64_t CountingExecutor::max_after_first_ = 0;
uint64_t CountingExecutor::calls_ = 0;

struct Workload {
  std::string name;
  ModelSpec spec;
  CompileOptions compile;
  Matrix x, y;
  int batch_size = 16;
};

Workload seed_workload(int64_t samples) {
  Workload w;
  w.name = "seed 4-1 SGD bce, n=" + std::to_string(samples);
  w.spec.layers = {input(4), dense(1, "sigmoid")};
  w.compile.optimizer.class_name = "SGD";
  w.compile.optimizer.learning_rate = 0.2;
  w.compile.loss.name = "binary_crossentropy";
  w.compile.metrics = {"accuracy"};
  DataSpec data;
  data.generator = "seed";
  data.samples = samples;
  Dataset d = generate_dataset(data);
  w.x = d.x;
  w.y = d.y;
  w.batch_size = 16;
  return w;
}

Workload mlp_workload(int64_t samples) {
  Workload w;
  w.name = "MLP 784-512-512-10 Adam, n=" + std::to_string(samples);
  w.spec.layers = {input(784), dense(512, "relu"), dense(512, "relu"), dense(10, "softmax")};
  w.compile.optimizer.class_name = "Adam";
  w.compile.loss.name = "sparse_categorical_crossentropy";
  w.compile.metrics = {"accuracy"};
  Rng rng(11);
  w.x.resize(samples, 784);
  w.y.resize(samples, 1);
  for (Index i = 0; i < samples; ++i) {
    for (Index j = 0; j < 784; ++j) w.x(i, j) = static_cast<float>(rng.normal());
    w.y(i, 0) = static_cast<float>(rng.below(10));
  }
  w.batch_size = 256;
  return w;
}

// resources/examples/fashion_mnist_cnn.json's network (two Conv2D with max pooling, Adam, batch
// 32) on synthetic 28 x 28 images.
Workload cnn_workload(int64_t samples) {
  const ExperimentSpec example =
      read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");
  Workload w;
  w.name = "CNN fashion_mnist_cnn Adam, n=" + std::to_string(samples);
  w.spec = example.model;
  w.compile = example.compile;
  Rng rng(12);
  w.x.resize(samples, 784);
  w.y.resize(samples, 1);
  for (Index i = 0; i < samples; ++i) {
    for (Index j = 0; j < 784; ++j) w.x(i, j) = static_cast<float>(rng.uniform(0.0, 1.0));
    w.y(i, 0) = static_cast<float>(rng.below(10));
  }
  w.batch_size = example.fit.batch_size;
  return w;
}

// "ns::f<T, U>::g" -> "ns::f::g": template arguments make Eigen's frames unreadable.
std::string strip_templates(const std::string& name) {
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>' && depth > 0) --depth;
  }
  return out;
}

// Symbolizes one return address as "function file:line [object+offset]" through addr2line.
std::string symbolize(void* addr) {
  Dl_info info{};
  char buf[64];
  if (!dladdr(addr, &info) || !info.dli_fname) {
    std::snprintf(buf, sizeof buf, "%p", addr);
    return buf;
  }
  // A return address points after the call; step back one byte to land on the call's line.
  const auto offset =
      reinterpret_cast<uintptr_t>(addr) - reinterpret_cast<uintptr_t>(info.dli_fbase) - 1;
  std::string cmd = "addr2line -f -C -i -e '" + std::string(info.dli_fname) + "' ";
  std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(offset));
  cmd += buf;
  cmd += " 2>/dev/null";
  std::string text;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char line[4096];
    bool function_line = true;  // addr2line alternates "function" and "file:line" lines
    while (std::fgets(line, sizeof line, p)) {
      std::string l(line);
      if (!l.empty() && l.back() == '\n') l.pop_back();
      if (function_line) {
        // Drop the (long) parameter list, not "(anonymous namespace)".
        size_t paren = l.find('(');
        while (paren != std::string::npos && l.compare(paren, 21, "(anonymous namespace)") == 0)
          paren = l.find('(', paren + 1);
        if (paren != std::string::npos) l = l.substr(0, paren);
        text += (text.empty() ? "" : "\n        inlined in ") + strip_templates(l);
      } else {
        text += " " + l;
      }
      function_line = !function_line;
    }
    pclose(p);
  }
  std::snprintf(buf, sizeof buf, "+0x%lx]", static_cast<unsigned long>(offset));
  return text + "  [" + info.dli_fname + buf;
}

// Prints each distinct call stack of the allocations traced inside steady-state steps.
void print_traces() {
  const int n = std::min(g_trace_count.load(), kMaxTraces);
  std::vector<bool> printed(static_cast<size_t>(n), false);
  for (int t = 0; t < n; ++t) {
    if (printed[static_cast<size_t>(t)]) continue;
    int same = 0;
    for (int u = t; u < n; ++u) {
      if (g_trace_depth[u] == g_trace_depth[t] && g_trace_bytes[u] == g_trace_bytes[t] &&
          std::equal(g_traces[t], g_traces[t] + g_trace_depth[t], g_traces[u])) {
        printed[static_cast<size_t>(u)] = true;
        ++same;
      }
    }
    std::printf("  %d of the traced allocations, %zu bytes each, from:\n", same, g_trace_bytes[t]);
    // Frame 0 is the replaced malloc/new (note_alloc is inlined into it).
    for (int f = 1; f < g_trace_depth[t]; ++f) {
      const std::string where = symbolize(g_traces[t][f]);
      std::printf("    #%d %s\n", f, where.c_str());
      if (where.find(" main ") != std::string::npos || where.rfind("main ", 0) == 0) break;
    }
  }
}

struct Row {
  std::string name;
  std::string strategy;  // "local", "DP x2", "MP 2x2"
  bool shuffle;
  int steps, epochs;
  uint64_t first, steady_max, steady_bytes, in_step, boundary, total, traced;
};

// devices 0: the local executor; N: DataParallel over N simulated devices (worker threads);
// with `mesh` (B, M): ModelParallel on B x M devices with the CLI's default layout (every Dense
// kernel whose units divide by M split by columns).
Row run(const Workload& w, bool shuffle, int epochs, int devices,
        std::pair<int, int> mesh = {0, 0}) {
  set_random_seed(7);
  Sequential model(w.spec);
  model.compile(w.compile);
  std::string strategy = devices > 0 ? "DP x" + std::to_string(devices) : "local";
  if (mesh.first > 0) {
    DistributionSpec spec;
    spec.class_name = "ModelParallel";
    spec.mesh_shape = {mesh.first, mesh.second};
    spec.axis_names = {"batch", "model"};
    spec.layout_map = default_layout_map(model_variables(w.spec, w.x.cols()), "model", mesh.second);
    const int n = mesh.first * mesh.second;
    strategy = "MP " + std::to_string(mesh.first) + "x" + std::to_string(mesh.second);
    auto state = std::make_shared<ModelParallelOptimizers>();
    const OptimizerSpec optimizer = w.compile.optimizer;
    model.set_executor_factory([spec, n, state, optimizer](const ExecutorContext& ctx) {
      return std::make_unique<CountingExecutor>(std::make_unique<ModelParallelExecutor>(
          ctx, make_model_parallel_plan(*ctx.graph.network, spec, n), optimizer, state));
    });
  } else {
    model.set_executor_factory([devices](const ExecutorContext& ctx) {
      return std::make_unique<CountingExecutor>(
          devices > 0 ? std::unique_ptr<StepExecutor>(new DataParallelExecutor(ctx, devices))
                      : std::unique_ptr<StepExecutor>(new LocalExecutor(ctx)));
    });
  }
  CountingExecutor::max_after_first_ = 0;
  CountingExecutor::calls_ = 0;
  g_trace_count.store(0);
  const Index n = w.x.rows();
  const int steps = static_cast<int>((n + w.batch_size - 1) / w.batch_size);
  AllocProbe probe(static_cast<size_t>(steps) * epochs + 4);
  FitOptions o;
  o.epochs = epochs;
  o.batch_size = w.batch_size;
  o.shuffle = shuffle;
  o.verbose = 0;
  RunOptions r;
  r.callbacks = {&probe};
  const uint64_t before = allocs();
  model.fit(w.x, w.y, o, r);
  const uint64_t total = allocs() - before;
  Row row{w.name,
          strategy,
          shuffle,
          steps,
          epochs,
          probe.first_batch(),
          probe.steady_max(),
          probe.steady_max_bytes(),
          CountingExecutor::max_after_first_,
          probe.boundary_max(),
          total,
          static_cast<uint64_t>(g_trace_count.load())};
  if (row.traced > 0) {
    std::printf("%s, %s, shuffle=%s: %llu allocation(s) in steady-state steps; first %d traced:\n",
                w.name.c_str(), strategy.c_str(), shuffle ? "true" : "false",
                static_cast<unsigned long long>(row.traced),
                static_cast<int>(std::min<uint64_t>(row.traced, kMaxTraces)));
    print_traces();
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int epochs = 3;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--epochs") == 0) epochs = std::max(2, std::atoi(argv[i + 1]));
  // backtrace() loads libgcc's unwinder on first use, which allocates: do it before measuring.
  void* warm[4];
  backtrace(warm, 4);

  std::vector<Row> rows;
  for (int64_t samples : {128, 120}) {
    const Workload w = seed_workload(samples);
    for (bool shuffle : {false, true}) rows.push_back(run(w, shuffle, epochs, 0));
  }
  const Workload mlp = mlp_workload(2000);  // 7 full batches of 256 and one of 208
  for (bool shuffle : {false, true}) rows.push_back(run(mlp, shuffle, epochs, 0));
  // The same through DataParallel on 2 simulated devices (one worker thread each).
  rows.push_back(run(seed_workload(120), true, epochs, 2));
  rows.push_back(run(mlp, true, epochs, 2));
  // ModelParallel: the MLP's kernels split over the model axis (all-gathers and all-reduces of
  // activations), and on 2 x 2 its gradients all-reduced along the batch axis too.
  rows.push_back(run(mlp, true, epochs, 0, {1, 2}));
  rows.push_back(run(mlp, true, epochs, 0, {2, 2}));
  // Conv2D and pooling: one device and DataParallel on 2 (7 full batches of 32 and one of 16).
  const Workload cnn = cnn_workload(240);
  rows.push_back(run(cnn, true, epochs, 0));
  rows.push_back(run(cnn, true, epochs, 2));

  std::printf("\nHeap allocations during fit(verbose=0), %d epochs (counts of new/malloc calls)\n",
              epochs);
  std::printf("%-34s %-7s %-7s %6s %11s %13s %12s %11s %9s %9s\n", "workload", "strategy",
              "shuffle", "steps", "first batch", "steady max/st", "in train_st", "epoch bound",
              "fit total", "traced");
  bool clean = true;
  for (const Row& r : rows) {
    std::printf(
        "%-34s %-7s %-7s %6d %11llu %13llu %12llu %11llu %9llu %9llu\n", r.name.c_str(),
        r.strategy.c_str(), r.shuffle ? "true" : "false", r.steps * r.epochs,
        static_cast<unsigned long long>(r.first), static_cast<unsigned long long>(r.steady_max),
        static_cast<unsigned long long>(r.in_step), static_cast<unsigned long long>(r.boundary),
        static_cast<unsigned long long>(r.total), static_cast<unsigned long long>(r.traced));
    clean = clean && r.steady_max == 0 && r.in_step == 0;
  }
  std::printf(
      "\nfirst batch: hooks begin->end of epoch 0 batch 0; steady max/st: max over every later "
      "batch;\nin train_st: max inside StepExecutor::train_step after its first call; epoch "
      "bound: max between\nthe last batch of an epoch and the first of the next (on_epoch_end, "
      "History, epoch logs).\n");
  std::string result = clean ? "0 (none)" : "";
  for (const Row& r : rows) {
    if (r.steady_max == 0 && r.in_step == 0) continue;
    if (!result.empty()) result += "; ";
    result += std::to_string(std::max(r.steady_max, r.in_step)) + " in " + r.name + " " +
              r.strategy + (r.shuffle ? " shuffled" : "");
  }
  std::printf("RESULT steady-state training step allocations (max per step): %s\n", result.c_str());
  return 0;
}
