#include "core/data/csv_reader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <system_error>

#include "core/base/error.h"
#include "core/base/unicode.h"
#include "core/file_checks.h"

namespace fitbench {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The 1-based line of text[pos].
int64_t line_at(const std::string& text, size_t pos) {
  return 1 + static_cast<int64_t>(std::count(text.begin(), text.begin() + long(pos), '\n'));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

CsvReader::CsvReader(const std::filesystem::path& file, std::string display_name, char delimiter)
    : display_name_(std::move(display_name)), delimiter_(delimiter) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r') {
    throw InputError("data.delimiter", "cannot be a quote or a line break");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw InputError(display_name_, "cannot be opened: it is a directory, not a CSV file");
  }
  check_regular_file(file, display_name_);
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw InputError(display_name_, std::string("cannot be opened: ") +
                                        (err != 0 ? std::strerror(err) : "unknown reason"));
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) throw InputError(display_name_, "cannot be read");
  text_.resize(static_cast<size_t>(size));
  if (size > 0 && !in.read(text_.data(), size)) throw InputError(display_name_, "cannot be read");
  const std::string_view start = std::string_view(text_).substr(0, 2);
  if (start == "\xFF\xFE" || start == "\xFE\xFF") {
    throw InputError(display_name_,
                     "is UTF-16 text (as some spreadsheets save \"Unicode text\"); save it as a "
                     "UTF-8 or plain CSV file");
  }
  // A binary file (a spreadsheet's .xlsx, an image) would otherwise fail at some cell with its
  // bytes in the message; pandas.read_csv reads UTF-8 and refuses other bytes the same way.
  if (const size_t nul = text_.find('\0'); nul != std::string::npos) {
    throw InputError(display_name_, "is not a text file: it holds NUL bytes (the first on line " +
                                        std::to_string(line_at(text_, nul)) +
                                        "); a CSV file is UTF-8 text");
  }
  for (size_t i = 0; i < text_.size();) {
    const size_t n = utf8_length(text_, i);
    if (n == 0) {
      throw InputError(display_name_, "is not UTF-8 text: line " +
                                          std::to_string(line_at(text_, i)) +
                                          " has bytes that are not UTF-8 (a Latin-1 file?); "
                                          "save it as UTF-8 CSV");
    }
    i += n;
  }
  // Lines ended by a carriage return alone (classic Mac OS, some spreadsheet exports), as pandas
  // and Python's csv module read them.
  if (text_.find('\n') == std::string::npos) std::replace(text_.begin(), text_.end(), '\r', '\n');
  if (std::string_view(text_).substr(0, kBom.size()) == kBom) pos_ = kBom.size();
}

std::string csv_cell_place(const std::string& file, int64_t line, int64_t column,
                           const std::string& name) {
  std::string place = file + ":" + std::to_string(line) + ":" + std::to_string(column);
  if (name.empty()) return place;
  // A quoted header cell may hold a line break: written \n, so that the message stays one line.
  place += " (";
  for (char c : name)
    place += c == '\n' ? std::string("\\n") : c == '\r' ? "\\r" : std::string(1, c);
  return place + ")";
}

std::string describe_csv_header(const std::vector<std::string>& header, char delimiter,
                                const std::string& wanted) {
  // Whether `wanted` is one of the parts of `name` split at `c` (each trimmed, as header names).
  const auto holds = [&](const std::string& name, char c) {
    size_t start = 0;
    for (;;) {
      const size_t end = std::min(name.find(c, start), name.size());
      if (trim(std::string_view(name).substr(start, end - start)) == wanted) return true;
      if (end == name.size()) return false;
      start = end + 1;
    }
  };
  char other = 0;
  if (header.size() == 1) {
    for (const char c : {',', ';', '\t', '|'})
      if (c != delimiter && other == 0 && holds(header[0], c)) other = c;
  }
  if (other != 0) {
    const std::string shown =
        other == '\t' ? "\"\\t\" (a tab)" : "\"" + std::string(1, other) + "\"";
    return "its header is one column, " + quote_cell(header[0]) + ", which looks " + shown +
           "-separated: set the delimiter to " + shown;
  }
  std::string names;
  for (const std::string& name : header) names += (names.empty() ? "" : ", ") + name;
  return "its header has: " + names;
}

std::string CsvReader::cell_place(int64_t line, int64_t column) const {
  const bool named = column >= 1 && static_cast<size_t>(column) <= header_.size();
  return csv_cell_place(display_name_, line, column,
                        named ? header_[static_cast<size_t>(column - 1)] : std::string());
}

const std::vector<std::string>& CsvReader::read_header() {
  CsvRecord record;
  if (!next(record)) throw InputError(display_name_, "is empty: a header row is required");
  if (record.field_count > kMaxCsvColumns)
    throw InputError(display_name_ + ":" + std::to_string(record.line),
                     "the header has " + std::to_string(record.field_count) +
                         " columns; a CSV file may have at most " + std::to_string(kMaxCsvColumns));
  header_.clear();
  header_.reserve(record.fields.size());
  // An empty name is named as pandas.read_csv names it: "Unnamed: 3" (0-based index).
  for (const CsvField& f : record.fields) {
    std::string name(trim(f.text));
    if (name.empty()) name = "Unnamed: " + std::to_string(header_.size());
    header_.push_back(std::move(name));
  }
  return header_;
}

bool CsvReader::skip_blank_line() {
  size_t p = pos_;
  while (p < text_.size() && text_[p] != delimiter_ && (is_space(text_[p]) || text_[p] == '\r')) {
    ++p;
  }
  if (p == text_.size()) {
    if (p > pos_) ++blank_lines_;  // spaces after the last line break
    pos_ = p;
    return true;
  }
  if (text_[p] != '\n') return false;
  pos_ = p + 1;
  ++line_;
  ++blank_lines_;
  return true;
}

bool CsvReader::next(CsvRecord& record) {
  record.fields.clear();
  record.field_count = 0;
  while (pos_ < text_.size() && skip_blank_line()) {
  }
  if (pos_ >= text_.size()) return false;
  record.line = line_;
  const size_t n = text_.size();
  // One field past the header is kept (a row problem names the row, not its extra cells).
  const size_t kept = header_.empty() ? size_t{kMaxCsvColumns} + 1 : header_.size() + 1;
  for (;;) {
    const int64_t column = ++record.field_count;
    size_t p = pos_;
    while (p < n && text_[p] != delimiter_ && is_space(text_[p])) ++p;
    if (p < n && text_[p] == '"') {
      pos_ = p;
      read_quoted(record, column);
    } else {
      read_unquoted(record);
    }
    if (record.fields.size() > kept) record.fields.pop_back();
    if (pos_ >= n) return true;
    if (text_[pos_] == delimiter_) {
      ++pos_;
      continue;
    }
    ++pos_;  // the '\n' ending the row
    ++line_;
    return true;
  }
}

void CsvReader::read_unquoted(CsvRecord& record) {
  const size_t n = text_.size();
  const size_t start = pos_;
  size_t p = pos_;
  while (p < n && text_[p] != delimiter_ && text_[p] != '\n') ++p;
  size_t end = p;
  if (end > start && text_[end - 1] == '\r' && (p == n || text_[p] == '\n')) --end;
  record.fields.push_back({std::string_view(text_).substr(start, end - start), line_});
  pos_ = p;
}

void CsvReader::read_quoted(CsvRecord& record, int64_t column) {
  // Undoes "" escapes in place: the unescaped text is never longer than the quoted one.
  const size_t n = text_.size();
  const int64_t first_line = line_;
  const size_t start = pos_ + 1;
  size_t r = start;
  size_t w = start;
  for (;;) {
    if (r >= n) {
      throw InputError(cell_place(first_line, column), "has an opening quote that is never closed");
    }
    const char c = text_[r];
    if (c == '"') {
      if (r + 1 < n && text_[r + 1] == '"') {
        text_[w++] = '"';
        r += 2;
        continue;
      }
      ++r;
      break;
    }
    if (c == '\n') ++line_;
    text_[w++] = c;
    ++r;
  }
  record.fields.push_back({std::string_view(text_).substr(start, w - start), first_line});
  while (r < n && text_[r] != delimiter_ && is_space(text_[r])) ++r;
  if (r < n && text_[r] == '\r' && (r + 1 == n || text_[r + 1] == '\n')) ++r;
  if (r < n && text_[r] != delimiter_ && text_[r] != '\n') {
    size_t end = r;
    while (end < n && text_[end] != delimiter_ && text_[end] != '\n') ++end;
    throw InputError(cell_place(line_, column),
                     "has text after its closing quote: " +
                         quote_cell(std::string_view(text_).substr(r, end - r)));
  }
  pos_ = r;
}

NumberStatus parse_float(std::string_view text, float& out) {
  text = trim(text);
  if (text.empty()) return NumberStatus::kEmpty;
  if (text.front() == '+') {
    text.remove_prefix(1);
    if (text.empty() || text.front() == '-' || text.front() == '+')
      return NumberStatus::kNotANumber;
  }
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::invalid_argument || ptr != end) return NumberStatus::kNotANumber;
  if (ec == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  if (!std::isfinite(value)) return NumberStatus::kNotFinite;
  if (std::fabs(value) > std::numeric_limits<float>::max()) return NumberStatus::kOutOfRange;
  out = static_cast<float>(value);
  return NumberStatus::kOk;
}

std::string quote_cell(std::string_view text) {
  constexpr size_t kMax = 40;
  bool cut = false;
  if (text.size() > kMax) {
    size_t end = kMax;
    // Back off to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
    cut = true;
  }
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

}  // namespace fitbench
