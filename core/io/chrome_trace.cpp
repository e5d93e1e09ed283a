// Trace Event Format: "Trace Event Format" (Google, docs.google.com/document/d/
// 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): complete events ("ph": "X") with ts/dur in
// microseconds, metadata events ("ph": "M") process_name, process_sort_index and thread_name.
#include "core/io/chrome_trace.h"

#include <algorithm>
#include <cstdio>

#include "core/io/json_file.h"

namespace fitbench {
namespace {

constexpr int kComputeLane = 1;
constexpr int kCommunicationLane = 2;

void append(std::string& out, const char* format, auto... args) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof buf, format, args...);
  out.append(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
}

}  // namespace

std::string chrome_trace_json(const RunTrace& trace) {
  std::string out;
  out.reserve(256 + trace.spans().size() * 200);
  out += "{\"traceEvents\":[\n";
  bool first = true;
  auto next = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (int d = 0; d < trace.devices(); ++d) {
    next();
    append(out, R"({"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"cpu:%d"}})", d,
           d);
    next();
    append(out,
           R"({"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}})", d,
           d);
    next();
    append(out, R"({"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":"compute"}})", d,
           kComputeLane);
    next();
    append(out,
           R"({"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":"communication"}})",
           d, kCommunicationLane);
  }
  for (const RunTrace::Span& s : trace.spans()) {
    const RunTrace::Step& step = trace.steps()[s.step_index];
    const TraceSpan& t = s.span;
    const bool compute = is_compute(t.kind);
    const char* category = compute                           ? "compute"
                           : t.kind == SpanKind::kCollective ? "communication"
                                                             : "waiting";
    next();
    append(out,
           R"({"name":"%s","cat":"%s","ph":"X","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,)"
           R"("args":{"step":%llu,"epoch":%d,"batch":%d,"rows":%lld)",
           span_label(t), category, s.device, compute ? kComputeLane : kCommunicationLane,
           t.begin_us, t.duration_us, static_cast<unsigned long long>(step.step), step.epoch,
           step.batch, static_cast<long long>(trace.shard_rows(s.step_index, s.device)));
    if (t.kind == SpanKind::kCollective)
      append(out, R"(,"algorithm":"%s","bytes_sent":%lld,"bytes_received":%lld)",
             algorithm_name(t.algorithm), static_cast<long long>(t.bytes_sent),
             static_cast<long long>(t.bytes_received));
    out += "}}";
  }
  append(out,
         "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"fitbench\","
         "\"devices\":%d,\"steps\":%zu}}\n",
         trace.devices(), trace.steps().size());
  return out;
}

void write_chrome_trace(const std::filesystem::path& file, const RunTrace& trace,
                        StagedFiles* into) {
  json_io::write_file_atomically(file, chrome_trace_json(trace), into);
}

}  // namespace fitbench
