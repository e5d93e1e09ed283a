#include "core/io/json_file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/file_checks.h"
#include "core/staged_files.h"

namespace fitbench::json_io {

namespace {

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string parse_error_reason(const std::string& what) {
  std::string reason = what;
  const auto column = reason.find("column ");
  if (column != std::string::npos) {
    const auto colon = reason.find(": ", column);
    if (colon != std::string::npos) return reason.substr(colon + 2);
  }
  const auto bracket = reason.find("] ");
  if (bracket != std::string::npos) reason = reason.substr(bracket + 2);
  return reason;
}

}  // namespace

namespace {

// Finds keys given twice in one object while nlohmann parses (it would keep the last one
// silently), naming the key's JSON path: "fit.epochs", "model.config.layers[1].config.units".
class DuplicateKeys {
 public:
  static constexpr int kMaxDepth = 256;

  DuplicateKeys(const std::string& source, WeightValues weight_values)
      : source_(source), skip_weight_values_(weight_values == WeightValues::kSkip) {}

  bool operator()(int depth, nlohmann::ordered_json::parse_event_t event,
                  nlohmann::ordered_json& parsed) {
    using Event = nlohmann::ordered_json::parse_event_t;
    if (skip_depth_ >= 0) {
      // Inside a dropped value: nlohmann reports the starts of its parts but not their ends; it
      // is over at the next key of its object or at the object's end.
      const bool over = (event == Event::key && depth == skip_depth_) ||
                        (event == Event::object_end && depth == skip_depth_ - 1);
      if (!over) return true;
      skip_depth_ = -1;
    }
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        // Deeper nesting would overflow the stack when the value is copied or destroyed; an
        // experiment or model file is nested a handful of levels.
        if (depth >= kMaxDepth) {
          std::string where = path();
          if (where.size() > 60) where = where.substr(0, 60) + "...";
          throw InputError(source_.empty() ? where : source_ + ": " + where,
                           "nests arrays and objects more than " + std::to_string(kMaxDepth) +
                               " levels deep; fitbench's files need fewer than 10");
        }
        element_begins();
        frames_.push_back(Frame{event == Event::array_start, {}, {}, -1});
        break;
      case Event::object_end:
      case Event::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case Event::key: {
        Frame& f = frames_.back();
        std::string key = parsed.get<std::string>();
        if (!f.keys.insert(key).second) {
          std::string place = path() + member(key, frames_.size() > 1);
          if (!source_.empty()) place = source_ + ": " + place;
          throw InputError(place, "is given twice in one object; give each key once");
        }
        f.key = std::move(key);
        // A model file's weights[i].values, dropped with the key (its numbers are still read
        // as JSON, not kept).
        if (skip_weight_values_ && f.key == "values" && frames_.size() == 3 && !frames_[0].array &&
            frames_[0].key == "weights" && frames_[1].array) {
          skip_depth_ = depth;
          return false;
        }
        break;
      }
      case Event::value:
        element_begins();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    std::set<std::string> keys;  // an object's keys so far
    std::string key;             // an object's current key
    int64_t index;               // an array's current element
  };
  void element_begins() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  // The path of the current innermost object (its key is appended by the caller).
  // `.key`, or `["h.*bias"]` for a key that is not a plain name (a layout map's regex), as the
  // readers' own messages write it.
  static std::string member(const std::string& key, bool after_something) {
    const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (plain) return (after_something ? "." : "") + key;
    return "[" + nlohmann::ordered_json(key).dump() + "]";
  }

  std::string path() const {
    std::string out;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.array) {
        out += "[" + std::to_string(f.index) + "]";
      } else {
        out += member(f.key, !out.empty());
      }
    }
    return out;
  }

  std::string source_;
  std::vector<Frame> frames_;
  bool skip_weight_values_;
  int skip_depth_ = -1;  // the depth of the object whose dropped value is being read
};

}  // namespace

// "source: line L, column C" of the byte at `pos` (0-based) of `text`.
std::string text_place(const std::string& text, size_t pos, const std::string& source) {
  pos = std::min(pos, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const size_t column = pos - line_start + 1;
  std::string place = "line " + std::to_string(line) + ", column " + std::to_string(column);
  return source.empty() ? place : source + ": " + place;
}

// Where the parse fails, for an error nlohmann throws without a position (a number too large
// for a double, out_of_range.406): its SAX parser reports the position where the DOM parser
// does not. Only the failure is kept; no value is built.
struct FailurePosition : nlohmann::json_sax<nlohmann::ordered_json> {
  size_t begin = std::string::npos;  // the failing token's first byte
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception&) override {
    // `position` is the count of bytes read, the token's last included.
    begin = position >= last_token.size() ? position - last_token.size() : 0;
    return false;
  }
};

nlohmann::ordered_json parse_json_text(const std::string& text, const std::string& source,
                                       WeightValues weight_values) {
  try {
    return nlohmann::ordered_json::parse(text, DuplicateKeys(source, weight_values));
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based index of the character at which parsing failed.
    throw InputError(text_place(text, e.byte > 0 ? e.byte - 1 : 0, source),
                     "is not valid JSON: " + parse_error_reason(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range.406 "number overflow parsing '1e400'".
    FailurePosition failure;
    nlohmann::ordered_json::sax_parse(text, &failure);
    const std::string place =
        failure.begin == std::string::npos ? source : text_place(text, failure.begin, source);
    throw InputError(place, "is not valid JSON: " + parse_error_reason(e.what()));
  }
}

nlohmann::ordered_json read_json_file(const std::filesystem::path& file,
                                      WeightValues weight_values) {
  check_regular_file(file, file.string());
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw InputError(file.string(), std::string("cannot be read: ") + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw InputError(file.string(), std::string("cannot be read: ") + std::strerror(errno));
  }
  return parse_json_text(text.str(), file.string(), weight_values);
}

namespace {

bool is_scalar_array(const nlohmann::ordered_json& v) {
  if (!v.is_array()) return false;
  for (const auto& item : v) {
    if (item.is_structured()) return false;
  }
  return true;
}

// nlohmann's dump(2), except that arrays of scalars stay on one line ("batch_shape": [null, 4]).
void dump_value(const nlohmann::ordered_json& v, int indent, std::string& out) {
  if (v.is_object() && !v.empty()) {
    out += "{\n";
    size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      out.append(static_cast<size_t>(indent + 2), ' ');
      out += nlohmann::ordered_json(it.key()).dump();
      out += ": ";
      dump_value(*it, indent + 2, out);
      out += i + 1 < v.size() ? ",\n" : "\n";
    }
    out.append(static_cast<size_t>(indent), ' ');
    out += '}';
  } else if (v.is_array() && !v.empty() && !is_scalar_array(v)) {
    out += "[\n";
    for (size_t i = 0; i < v.size(); ++i) {
      out.append(static_cast<size_t>(indent + 2), ' ');
      dump_value(v[i], indent + 2, out);
      out += i + 1 < v.size() ? ",\n" : "\n";
    }
    out.append(static_cast<size_t>(indent), ' ');
    out += ']';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ", ";
      out += v[i].dump();
    }
    out += ']';
  } else {
    out += v.dump();
  }
}

}  // namespace

std::string dump_document(const nlohmann::ordered_json& doc) {
  std::string out;
  dump_value(doc, 0, out);
  return out + "\n";
}

void write_file_atomically(const std::filesystem::path& file, const std::string& text,
                           StagedFiles* into) {
  if (into) {
    into->stage(file, text);
    return;
  }
  StagedFiles one;
  one.stage(file, text);
  one.commit();
}

}  // namespace fitbench::json_io
