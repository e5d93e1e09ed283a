// CSV files as data sets (read_csv_dataset) and as plain tables (read_csv_table). Every cell that
// is used must hold a finite number: target cells too, so string class labels ("setosa") are not
// supported and must be converted to numbers (0, 1, 2, ...) or one-hot columns beforehand.

#include <algorithm>
#include <string_view>

#include "core/base/error.h"
#include "core/data/csv_reader.h"
#include "core/data/dataset.h"

namespace fitbench {
namespace {

std::string quoted(const std::string& name) { return "\"" + name + "\""; }

// The header index of `name`; an InputError at `place` if it is missing or ambiguous.
size_t find_column(const CsvReader& reader, const std::string& name, const std::string& place) {
  const std::vector<std::string>& header = reader.header();
  std::vector<size_t> found;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) found.push_back(i);
  }
  if (found.empty()) {
    throw InputError(place, "column " + quoted(name) + " is not in " + reader.display_name() +
                                "; " + describe_csv_header(header, reader.delimiter(), name));
  }
  if (found.size() > 1) {
    throw InputError(place, "column " + quoted(name) + " is ambiguous: the header of " +
                                reader.display_name() + " has it as columns " +
                                std::to_string(found[0] + 1) + " and " +
                                std::to_string(found[1] + 1));
  }
  return found.front();
}

[[noreturn]] void throw_cell_error(const CsvReader& reader, const CsvField& field, size_t index,
                                   NumberStatus status, bool is_target) {
  const std::string place = reader.cell_place(field.line, static_cast<int64_t>(index) + 1);
  switch (status) {
    case NumberStatus::kEmpty:
      throw InputError(place, "is empty: every cell that is used must hold a number");
    case NumberStatus::kNotFinite:
      throw InputError(place, "is not a finite number: " + quote_cell(field.text) +
                                  "; missing and infinite values are not supported");
    case NumberStatus::kOutOfRange:
      throw InputError(place, "is outside the range of a 32-bit float: " + quote_cell(field.text));
    case NumberStatus::kNotANumber:
    case NumberStatus::kOk:
      break;
  }
  std::string message = "is not a number: " + quote_cell(field.text);
  if (is_target) {
    message += "; string class labels are not supported, convert class labels to numbers";
  }
  throw InputError(place, message);
}

void check_row_length(const CsvReader& reader, const CsvRecord& record) {
  const int64_t have = record.field_count;
  const int64_t want = static_cast<int64_t>(reader.header().size());
  if (have == want) return;
  throw InputError(reader.display_name() + ":" + std::to_string(record.line),
                   "row has " + std::to_string(have) + (have == 1 ? " field" : " fields") +
                       ", the header has " + std::to_string(want));
}

// Appends the numbers of `columns` of `record` to `out`.
void parse_cells(const CsvReader& reader, const CsvRecord& record,
                 const std::vector<size_t>& columns, bool is_target, std::vector<float>& out) {
  for (size_t c : columns) {
    float value = 0.0f;
    const NumberStatus status = parse_float(record.fields[c].text, value);
    if (status != NumberStatus::kOk) {
      throw_cell_error(reader, record.fields[c], c, status, is_target);
    }
    out.push_back(value);
  }
}

Matrix to_matrix(const std::vector<float>& values, Index rows, Index cols) {
  return Eigen::Map<const Matrix>(values.data(), rows, cols);
}

void check_unique(const std::vector<std::string>& names, const std::string& place) {
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (names[i] == names[j])
        throw InputError(place, "names column " + quoted(names[i]) + " twice");
    }
  }
}

}  // namespace

Dataset read_csv_dataset(const DataSpec& spec, const std::filesystem::path& base_dir) {
  if (spec.csv.empty()) throw InputError("data.csv", "must name a CSV file");
  // The file first: an empty or binary file says so, rather than that no column is chosen
  // (a window chooses its columns from the header it could not read).
  std::filesystem::path file = spec.csv;
  if (file.is_relative()) file = base_dir / file;
  CsvReader reader(file, spec.csv, spec.delimiter);
  const std::vector<std::string>& header = reader.read_header();
  if (spec.target.empty()) throw InputError("data.target", "must name at least one column");
  check_unique(spec.target, "data.target");
  check_unique(spec.features_columns, "data.features");

  std::vector<size_t> targets;
  for (const std::string& name : spec.target)
    targets.push_back(find_column(reader, name, "data.target"));
  std::vector<size_t> features;
  if (spec.features_columns.empty()) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (std::find(targets.begin(), targets.end(), i) == targets.end()) features.push_back(i);
    }
    if (features.empty()) {
      throw InputError("data.target", "leaves no feature columns: every column of " +
                                          reader.display_name() + " is a target");
    }
  } else {
    for (const std::string& name : spec.features_columns) {
      const size_t c = find_column(reader, name, "data.features");
      if (std::find(targets.begin(), targets.end(), c) != targets.end()) {
        throw InputError("data.features",
                         "column " + quoted(name) + " is a target, it cannot also be a feature");
      }
      features.push_back(c);
    }
  }

  std::vector<float> xs;
  std::vector<float> ys;
  std::vector<int64_t> label_lines;  // the line of each row's first target cell
  Index rows = 0;
  CsvRecord record;
  while (reader.next(record)) {
    check_row_length(reader, record);
    parse_cells(reader, record, features, false, xs);
    parse_cells(reader, record, targets, true, ys);
    label_lines.push_back(record.fields[targets.front()].line);
    ++rows;
  }
  if (rows == 0) throw InputError(reader.display_name(), "has a header row but no data rows");

  Dataset data;
  data.x = to_matrix(xs, rows, static_cast<Index>(features.size()));
  data.y = to_matrix(ys, rows, static_cast<Index>(targets.size()));
  for (size_t c : features) data.feature_names.push_back(header[c]);
  for (size_t c : targets) data.target_names.push_back(header[c]);
  if (reader.blank_lines() > 0)
    // pandas.read_csv (skip_blank_lines) and Keras's CSV readers pass over them too; a file of
    // mostly blank lines is said, not trained on in silence.
    data.notes.push_back(reader.display_name() + ": skipped " +
                         counted(reader.blank_lines(), "blank line") +
                         " (nothing but spaces or "
                         "tabs); " +
                         counted(static_cast<long long>(rows), "data row") + " read");
  data.label_place = [file = reader.display_name(), column = static_cast<int64_t>(targets.front()),
                      name = header[targets.front()], lines = std::move(label_lines)](Index row) {
    return csv_cell_place(file, lines[static_cast<size_t>(row)], column + 1, name);
  };
  return data;
}

CsvTable read_csv_table(const std::filesystem::path& file, char delimiter) {
  CsvReader reader(file, file.string(), delimiter);
  CsvTable table;
  table.header = reader.read_header();
  std::vector<size_t> columns(table.header.size());
  for (size_t i = 0; i < columns.size(); ++i) columns[i] = i;

  std::vector<float> values;
  Index rows = 0;
  CsvRecord record;
  while (reader.next(record)) {
    check_row_length(reader, record);
    parse_cells(reader, record, columns, false, values);
    ++rows;
  }
  if (rows == 0) throw InputError(reader.display_name(), "has a header row but no data rows");
  table.values = to_matrix(values, rows, static_cast<Index>(columns.size()));
  return table;
}

}  // namespace fitbench
