#include "core/run/run_events.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/io/json_reader.h"

namespace fitbench {
namespace {

// Keys in the order written: "event" first.
using Json = nlohmann::ordered_json;

Json logs_object(const Logs& logs) {
  Json o = Json::object();
  for (const auto& [key, value] : logs) o[key] = json_io::number_or_null(value);
  return o;
}

// The span names of trace.h: the kinds, a collective by its operation.
struct SpanName {
  const char* name;
  SpanKind kind;
  CollectiveOp op;
};
constexpr SpanName kSpanNames[] = {
    {"shard_copy", SpanKind::kShardCopy, CollectiveOp::kAllReduce},
    {"forward", SpanKind::kForward, CollectiveOp::kAllReduce},
    {"backward", SpanKind::kBackward, CollectiveOp::kAllReduce},
    {"update", SpanKind::kUpdate, CollectiveOp::kAllReduce},
    {"waiting", SpanKind::kWaiting, CollectiveOp::kAllReduce},
    {"all_reduce", SpanKind::kCollective, CollectiveOp::kAllReduce},
    {"all_gather", SpanKind::kCollective, CollectiveOp::kAllGather},
    {"reduce_scatter", SpanKind::kCollective, CollectiveOp::kReduceScatter},
    {"broadcast", SpanKind::kCollective, CollectiveOp::kBroadcast},
};

// One line; bytes that are not UTF-8 (none fitbench writes) become U+FFFD rather than an error.
std::string line_of(const Json& event) {
  return event.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

RunEventWriter::RunEventWriter(std::ostream& out, int processes)
    : out_(out), processes_(processes) {}

void RunEventWriter::write_line(const std::string& json) {
  out_ << json << '\n';
  out_.flush();
}

void RunEventWriter::text(const std::string& line) {
  std::string event = line_of(Json{{"event", "text"}, {"text", line}});
  if (begun_)
    write_line(event);
  else
    before_begin_.push_back(std::move(event));  // the Devices lines come before fit() starts
}

RunEventWriter::LineBuffer::int_type RunEventWriter::LineBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  if (ch == '\n') {
    writer_.text(line_);
    line_.clear();
  } else if (ch == '\r') {
    line_.clear();  // a progress bar drawn again over itself: its last drawing is the line
  } else {
    line_ += ch;
  }
  return c;
}

std::streamsize RunEventWriter::LineBuffer::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) overflow(traits_type::to_int_type(s[i]));
  return n;
}

void RunEventWriter::on_run_begin(const RunPlan& plan) {
  devices_ = plan.devices;
  device_names_ = plan.device_names;
  distribution_ = plan.spec.distribution.class_name;
  batch_size_ = plan.spec.fit.batch_size;
  train_rows_ = plan.train_rows();
}

void RunEventWriter::on_train_begin(const Logs& /*logs*/) {
  Json begin = {{"event", "begin"}, {"devices", devices_}};
  if (!device_names_.empty()) begin["device_names"] = device_names_;  // from on_run_begin
  begin["distribution"] = distribution_;
  begin["processes"] = processes_;
  begin["epochs"] = params_.epochs;
  begin["steps"] = params_.steps;
  if (batch_size_ > 0) {  // from on_run_begin
    begin["batch_size"] = batch_size_;
    begin["train_rows"] = train_rows_;
  }
  write_line(line_of(begin));
  begun_ = true;
  for (const std::string& event : before_begin_) write_line(event);
  before_begin_.clear();
}

void RunEventWriter::on_epoch_begin(int epoch, const Logs& /*logs*/) { epoch_ = epoch; }

void RunEventWriter::on_train_batch_end(int batch, const Logs& logs) {
  write_line(line_of(
      Json{{"event", "batch"}, {"epoch", epoch_}, {"batch", batch}, {"logs", logs_object(logs)}}));
}

void RunEventWriter::on_epoch_end(int epoch, Logs& logs) {
  write_line(line_of(Json{{"event", "epoch"}, {"epoch", epoch}, {"logs", logs_object(logs)}}));
}

void RunEventWriter::on_step_trace(const StepTrace& trace) {
  Json devices = Json::array();
  for (const std::vector<TraceSpan>& spans : trace.spans) {
    Json list = Json::array();
    for (const TraceSpan& s : spans) {
      Json o = {{"name", span_label(s)}, {"begin_us", s.begin_us}, {"duration_us", s.duration_us}};
      if (s.kind == SpanKind::kCollective) {
        o["algorithm"] = algorithm_name(s.algorithm);
        o["bytes_sent"] = s.bytes_sent;
        o["bytes_received"] = s.bytes_received;
      }
      list.push_back(std::move(o));
    }
    devices.push_back(std::move(list));
  }
  write_line(line_of(Json{{"event", "step"},
                          {"step", trace.step},
                          {"epoch", trace.epoch},
                          {"batch", trace.batch},
                          {"shard_rows", trace.shard_rows},
                          {"spans", std::move(devices)}}));
}

void RunEventWriter::write_end(const RunResult& result) {
  text_.flush();
  Json usage = Json::array();
  for (const DeviceUsage& u : result.usage)
    usage.push_back({{"busy_percent", u.busy_percent()},
                     {"communication_percent", u.communication_percent()},
                     {"idle_percent", u.idle_percent()}});
  write_line(line_of(Json{{"event", "end"},
                          {"stop_reason", result.stop_reason},
                          {"seconds", json_io::number_or_null(result.seconds)},
                          {"epochs_run", result.history.epoch.size()},
                          {"usage", std::move(usage)}}));
}

RunEvent parse_run_event(const std::string& line, const std::string& place) {
  using json_io::ObjectReader;
  const json_io::Json doc = json_io::Json::parse(line, nullptr, false);
  if (doc.is_discarded()) throw InputError(place, "is not one JSON object (an event)");
  if (!doc.is_object()) json_io::fail_expected(place, "a JSON object (an event)", doc);
  const json_io::Json* kind = doc.contains("event") ? &doc["event"] : nullptr;
  if (!kind) throw InputError(place, "has no \"event\" (begin, text, batch, epoch, step or end)");
  const std::string name = json_io::to_string(*kind, json_io::key_path(place, "event"));
  RunEvent e;
  const auto logs = [&](const ObjectReader& r) {
    const json_io::Json& o = r.require("logs", "the logs, an object of numbers");
    const std::string path = r.path_of("logs");
    if (!o.is_object()) json_io::fail_expected(path, "an object of numbers", o);
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string at = json_io::key_path(path, it.key());
      e.logs[it.key()] =
          it->is_null() ? std::nullopt
                        : std::optional<double>(json_io::to_number(*it, at, "a number or null"));
    }
  };
  constexpr int64_t kMaxCount = 1'000'000'000;
  if (name == "begin") {
    e.kind = RunEvent::Kind::kBegin;
    const ObjectReader r(doc, place,
                         {"event", "devices", "device_names", "distribution", "processes", "epochs",
                          "steps", "batch_size", "train_rows"});
    e.devices = static_cast<int>(r.integer("devices", 1, "a device count", 1, 1 << 20));
    if (const json_io::Json* names = r.get("device_names")) {
      if (!names->is_array()) json_io::fail_expected(r.path_of("device_names"), "a list", *names);
      for (size_t i = 0; i < names->size(); ++i)
        e.device_names.push_back(json_io::to_string(
            (*names)[i], json_io::index_path(r.path_of("device_names"), i), "a device name"));
      if (e.device_names.size() != static_cast<size_t>(e.devices))
        throw InputError(r.path_of("device_names"),
                         "names " + std::to_string(e.device_names.size()) + " devices, not " +
                             std::to_string(e.devices));
    }
    e.distribution = r.string("distribution", "");
    e.processes = static_cast<int>(r.integer("processes", 1, "a process count", 1, 1 << 20));
    e.epochs = static_cast<int>(r.integer("epochs", 0, "an epoch count", 0, kMaxCount));
    e.steps = static_cast<int>(r.integer("steps", 0, "a step count", 0, kMaxCount));
    e.batch_size = static_cast<int>(r.integer("batch_size", 0, "a batch size", 1, kMaxCount));
    e.train_rows = r.integer("train_rows", 0, "a row count", 0, int64_t{1} << 50);
  } else if (name == "text") {
    e.kind = RunEvent::Kind::kText;
    const ObjectReader r(doc, place, {"event", "text"});
    e.text = json_io::to_string(r.require("text", "the line"), r.path_of("text"));
  } else if (name == "batch") {
    e.kind = RunEvent::Kind::kBatch;
    const ObjectReader r(doc, place, {"event", "epoch", "batch", "logs"});
    e.epoch = static_cast<int>(r.integer("epoch", -1, "an epoch index", 0, kMaxCount));
    e.batch = static_cast<int>(r.integer("batch", -1, "a batch index", 0, kMaxCount));
    logs(r);
  } else if (name == "epoch") {
    e.kind = RunEvent::Kind::kEpoch;
    const ObjectReader r(doc, place, {"event", "epoch", "logs"});
    e.epoch = static_cast<int>(r.integer("epoch", -1, "an epoch index", 0, kMaxCount));
    logs(r);
  } else if (name == "step") {
    e.kind = RunEvent::Kind::kStep;
    const ObjectReader r(doc, place, {"event", "step", "epoch", "batch", "shard_rows", "spans"});
    e.step.step = static_cast<uint64_t>(r.integer("step", 0, "a step number", 0, INT64_MAX));
    e.step.epoch = static_cast<int>(r.integer("epoch", -1, "an epoch index", -1, kMaxCount));
    e.step.batch = static_cast<int>(r.integer("batch", -1, "a batch index", -1, kMaxCount));
    e.epoch = e.step.epoch;
    e.batch = e.step.batch;
    const json_io::Json& spans = r.require("spans", "a list of span lists, one per device");
    const std::string at = r.path_of("spans");
    if (!spans.is_array() || spans.empty() || spans.size() > (1u << 20))
      json_io::fail_expected(at, "a list of span lists, one per device", spans);
    if (const json_io::Json* rows = r.get("shard_rows")) {
      if (!rows->is_array() || rows->size() != spans.size())
        json_io::fail_expected(r.path_of("shard_rows"),
                               "a list of row counts, one per device of \"spans\"", *rows);
      for (size_t d = 0; d < rows->size(); ++d)
        e.step.shard_rows.push_back(json_io::to_int((*rows)[d],
                                                    json_io::index_path(r.path_of("shard_rows"), d),
                                                    "a row count", 0, INT64_MAX));
    }
    for (size_t d = 0; d < spans.size(); ++d) {
      const std::string device = json_io::index_path(at, d);
      if (!spans[d].is_array()) json_io::fail_expected(device, "a list of spans", spans[d]);
      std::vector<TraceSpan>& list = e.step.spans.emplace_back();
      for (size_t k = 0; k < spans[d].size(); ++k) {
        const ObjectReader s(
            spans[d][k], json_io::index_path(device, k),
            {"name", "begin_us", "duration_us", "algorithm", "bytes_sent", "bytes_received"});
        const std::string span_name = s.string("name", "", "a span name");
        const SpanName* known = nullptr;
        for (const SpanName& n : kSpanNames)
          if (span_name == n.name) known = &n;
        if (!known)
          throw InputError(s.path_of("name"),
                           "is not a span name: shard_copy, forward, backward, update, waiting, "
                           "all_reduce, all_gather, reduce_scatter or broadcast");
        TraceSpan t;
        t.kind = known->kind;
        t.op = known->op;
        const json_io::Bounds time{0.0, 1e18};
        t.begin_us = s.number("begin_us", 0.0, "microseconds from the run's start", time);
        t.duration_us = s.number("duration_us", 0.0, "microseconds", time);
        if (t.kind == SpanKind::kCollective) {
          t.algorithm = parse_algorithm(s.string("algorithm", "ring"), s.path_of("algorithm"));
          t.bytes_sent = s.integer("bytes_sent", 0, "a byte count", 0, INT64_MAX);
          t.bytes_received = s.integer("bytes_received", 0, "a byte count", 0, INT64_MAX);
        }
        list.push_back(t);
      }
    }
  } else if (name == "end") {
    e.kind = RunEvent::Kind::kEnd;
    const ObjectReader r(doc, place, {"event", "stop_reason", "seconds", "epochs_run", "usage"});
    e.stop_reason = r.string("stop_reason", "");
    e.seconds = r.number("seconds", 0.0, "seconds", {0.0, 1e12});
    e.epochs_run = static_cast<int>(r.integer("epochs_run", 0, "an epoch count", 0, kMaxCount));
    if (const json_io::Json* usage = r.get("usage")) {
      if (!usage->is_array() || usage->size() > (1u << 20))
        json_io::fail_expected(r.path_of("usage"), "a list, one entry per device", *usage);
      for (size_t d = 0; d < usage->size(); ++d) {
        const ObjectReader u((*usage)[d], json_io::index_path(r.path_of("usage"), d),
                             {"busy_percent", "communication_percent", "idle_percent"});
        const json_io::Bounds percent{0.0, 100.0};
        DeviceUsage out;
        out.total_us = 100.0;
        out.busy_us = u.number("busy_percent", 0.0, "a percentage", percent);
        out.communication_us = u.number("communication_percent", 0.0, "a percentage", percent);
        (void)u.number("idle_percent", 0.0, "a percentage", percent);
        e.usage.push_back(out);
      }
    }
  } else {
    throw InputError(json_io::key_path(place, "event"),
                     "is not an event: " + json_io::describe(*kind) +
                         "; expected begin, text, batch, epoch, step or end");
  }
  return e;
}

}  // namespace fitbench
