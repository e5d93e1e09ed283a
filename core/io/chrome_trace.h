// A run's trace in the Chrome trace event format (the JSON that Perfetto and chrome://tracing
// open): one process per device, named "cpu:0", "cpu:1", ..., with a "compute" lane (tid 1: shard
// copy, forward, backward, update) and a "communication" lane (tid 2: waiting and all_reduce, with
// the algorithm and bytes in args). Timestamps in microseconds since the run's start. Free
// functions.
#pragma once

#include <filesystem>
#include <string>

#include "core/distribution/trace/trace.h"

namespace fitbench {

class StagedFiles;  // core/staged_files.h

// The JSON document ({"traceEvents": [...], ...}).
std::string chrome_trace_json(const RunTrace& trace);

// Writes chrome_trace_json(trace) to `file` atomically (json_io::write_file_atomically; with
// `into`, only staged there). Throws InputError("<file>", ...) when it cannot be written.
void write_chrome_trace(const std::filesystem::path& file, const RunTrace& trace,
                        StagedFiles* into = nullptr);

}  // namespace fitbench
