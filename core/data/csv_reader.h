// A CSV tokenizer (RFC 4180 quoting with "" escapes, any one-byte delimiter, CRLF or LF, a UTF-8
// BOM, blank lines skipped) over a whole file held in memory, and the locale-independent number
// parser the data sets use. A CsvReader owns its text; not thread-safe (one per reader).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fitbench {

// One cell: its text without quotes (escaped quotes undone) and the 1-based line it starts on.
struct CsvField {
  std::string_view text;
  int64_t line = 0;
};

// One row: its fields in order and the 1-based line it starts on. `fields` holds at most one
// field more than the header (before the header: kMaxCsvColumns + 1), so that a row of a
// billion fields is a row problem, not an allocation of gigabytes; `field_count` counts them all.
struct CsvRecord {
  std::vector<CsvField> fields;
  int64_t field_count = 0;
  int64_t line = 0;
};

// The widest header a CSV file may have.
inline constexpr int64_t kMaxCsvColumns = 1'000'000;

// "<file>:<line>:<column> (<name>)", the place of a cell in errors; the name is left out when
// empty.
std::string csv_cell_place(const std::string& file, int64_t line, int64_t column,
                           const std::string& name);

// How an error about the missing column `wanted` describes the header: "its header has: a, b, y";
// or, when the header is one name that, split at another common delimiter (, ; tab |), holds
// `wanted`, "its header is one column, \"a;b;y\", which looks \";\"-separated: set the delimiter
// to \";\"" (a file read with the wrong delimiter).
std::string describe_csv_header(const std::vector<std::string>& header, char delimiter,
                                const std::string& wanted);

class CsvReader {
 public:
  // Reads the whole file. `display_name` is how errors name the file (e.g. "iris.csv"). Throws
  // InputError(display_name, ...) if the file cannot be opened or read or is not UTF-8 text
  // (NUL bytes, bytes that are not UTF-8), and
  // InputError("data.delimiter", ...) for a quote or line break as the delimiter.
  CsvReader(const std::filesystem::path& file, std::string display_name, char delimiter);

  // Reads the first row that is not blank as the header (names trimmed of spaces and tabs) and
  // keeps it to name columns in errors. Throws InputError(display_name, ...) for an empty file,
  // InputError("<file>:<line>", ...) for a header of more than kMaxCsvColumns columns.
  const std::vector<std::string>& read_header();

  // Fills `record` with the next row that is not blank (blank: nothing but spaces, tabs or a
  // carriage return). Returns false at the end of the file. Throws InputError naming
  // "<file>:<line>:<column>" for a quote that is never closed or text after a closing quote.
  // The views in `record` stay valid as long as this reader lives.
  bool next(CsvRecord& record);

  const std::string& display_name() const { return display_name_; }
  // The blank lines passed over so far (lines of nothing but spaces, tabs or a carriage return).
  int64_t blank_lines() const { return blank_lines_; }
  const std::vector<std::string>& header() const { return header_; }
  char delimiter() const { return delimiter_; }

  // "<file>:<line>:<column> (<name>)", the place of a cell in errors; the name is left out for a
  // column past the header's last or with an empty name.
  std::string cell_place(int64_t line, int64_t column) const;

 private:
  bool skip_blank_line();
  void read_quoted(CsvRecord& record, int64_t column);
  void read_unquoted(CsvRecord& record);

  std::string text_;
  std::string display_name_;
  std::vector<std::string> header_;
  char delimiter_;
  size_t pos_ = 0;
  int64_t line_ = 1;
  int64_t blank_lines_ = 0;
};

// How a cell's text reads as a number.
enum class NumberStatus { kOk, kEmpty, kNotANumber, kNotFinite, kOutOfRange };

// Parses a decimal number (std::from_chars, so "1.5", "-2e-3", ".5"; a leading '+' and surrounding
// spaces or tabs are allowed) into a float. "nan" and "inf" are kNotFinite; magnitudes beyond
// float's range are kOutOfRange.
NumberStatus parse_float(std::string_view text, float& out);

// The text of a cell for an error message: quoted, escaped and shortened to ~40 characters.
std::string quote_cell(std::string_view text);

}  // namespace fitbench
