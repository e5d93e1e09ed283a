// model.summary(): keras/src/utils/summary_utils.py (print_summary, readable_memory_size) and the
// parts of rich it relies on: Table column sizing (rich/table.py _calculate_column_widths,
// rich/_ratio.py ratio_reduce), word wrap (rich/_wrap.py divide_line, Text.wrap/truncate) and the
// HEAVY_HEAD box (rich/box.py).
#include "core/training/summary_format.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "core/base/text.h"
#include "core/base/unicode.h"

namespace fitbench {

namespace {

#include "core/training/cell_widths.inc"

// The terminal cells a code point takes, by wcwidth's rules, which rich's cell_len follows (the
// tables and the rules: scripts/cell_widths.py): 0 for combining marks, zero-width and format
// characters, 2 for East Asian wide and fullwidth characters and emoji, 1 otherwise.
int code_point_cells(char32_t c) {
  if (c < 0x7F) return 1;
  if (in_ranges(kZeroCells, c)) return 0;
  return in_ranges(kTwoCells, c) ? 2 : 1;
}

// A character of a cell's text: its UTF-8 bytes (a code point, with the zero-width marks that
// follow it) and the terminal cells it takes.
struct Glyph {
  std::string text;
  int cells = 1;
};
using Glyphs = std::vector<Glyph>;

Glyphs to_glyphs(const std::string& s) {
  Glyphs glyphs;
  for (size_t i = 0; i < s.size();) {
    const unsigned char lead = static_cast<unsigned char>(s[i]);
    const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : 4;
    char32_t c = length == 1 ? lead : lead & (0x7F >> length);
    size_t n = 1;
    for (; n < length && i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80;
         ++n)
      c = (c << 6) | (static_cast<unsigned char>(s[i + n]) & 0x3F);
    const std::string bytes = s.substr(i, n);
    i += n;
    const int cells = code_point_cells(c);
    if (cells == 0 && !glyphs.empty()) {
      glyphs.back().text += bytes;  // a mark stays with its character when a line is cut
    } else {
      glyphs.push_back({bytes, cells});
    }
  }
  return glyphs;
}

bool is_space(const Glyph& glyph) {
  const std::string& g = glyph.text;
  return g.size() == 1 && (g[0] == ' ' || g[0] == '\t' || g[0] == '\n' || g[0] == '\r' ||
                           g[0] == '\f' || g[0] == '\v');
}

int cells(const Glyphs& glyphs, size_t begin, size_t end) {
  int n = 0;
  for (size_t i = begin; i < end; ++i) n += glyphs[i].cells;
  return n;
}

std::string join(const Glyphs& glyphs, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end; ++i) s += glyphs[i].text;
  return s;
}

// rich's divide_line(text, width, fold=False): where lines break, at the starts of words
// (a word is \s*\S+\s*), measured in cells. A word longer than the width gets a line of its own.
std::vector<size_t> divide_line(const Glyphs& text, int width) {
  std::vector<size_t> divides;
  int line_position = 0;
  size_t pos = 0;
  const size_t n = text.size();
  while (pos < n) {
    size_t start = pos;
    size_t i = pos;
    while (i < n && is_space(text[i])) ++i;
    if (i == n) break;  // no \S left: no more words
    while (i < n && !is_space(text[i])) ++i;
    int stripped_length = cells(text, start, i);
    while (i < n && is_space(text[i])) ++i;
    int word_length = cells(text, start, i);
    pos = i;
    if (line_position + stripped_length > width) {
      if (stripped_length > width) {
        if (start > 0) divides.push_back(start);
        line_position = word_length;
      } else if (line_position > 0 && start > 0) {
        divides.push_back(start);
        line_position = word_length;
      }
    } else {
      line_position += word_length;
    }
  }
  return divides;
}

enum class Justify { kLeft, kRight };

// rich's Text.wrap for a table cell (overflow "ellipsis", no folding): the lines of `text`, each
// right-stripped, cut to `width` cells with a trailing "…" and padded to `width` cells. A wide
// character that the cut would halve becomes a space, as rich's set_cell_size does.
std::vector<std::string> wrap_cell(const std::string& text, int width, Justify justify) {
  std::vector<std::string> lines;
  Glyphs all = to_glyphs(text);
  std::vector<Glyphs> paragraphs(1);
  for (const Glyph& g : all) {
    if (g.text == "\n") {
      paragraphs.emplace_back();
    } else {
      paragraphs.back().push_back(g);
    }
  }
  for (const Glyphs& paragraph : paragraphs) {
    std::vector<size_t> cuts = divide_line(paragraph, width);
    cuts.push_back(paragraph.size());
    size_t begin = 0;
    for (size_t cut : cuts) {
      size_t end = cut;
      while (end > begin && is_space(paragraph[end - 1])) --end;
      std::string body = join(paragraph, begin, end);
      int used = cells(paragraph, begin, end);
      if (used > width) {
        const int room = std::max(width - 1, 0);
        size_t keep = begin;
        used = 0;
        while (keep < end && used + paragraph[keep].cells <= room) used += paragraph[keep++].cells;
        body = join(paragraph, begin, keep) + std::string(static_cast<size_t>(room - used), ' ');
        body += "\u2026";
        used = room + 1;
      }
      std::string padding(static_cast<size_t>(std::max(width - used, 0)), ' ');
      lines.push_back(justify == Justify::kLeft ? body + padding : padding + body);
      begin = cut;
    }
  }
  return lines;
}

// A horizontal rule of the HEAVY_HEAD box: left, fill, column separator, right.
std::string rule(const std::vector<int>& widths, const char* left, const char* fill,
                 const char* cross, const char* right) {
  std::string s = left;
  for (size_t i = 0; i < widths.size(); ++i) {
    if (i > 0) s += cross;
    s += repeat(fill, widths[i]);
  }
  return s + right + "\n";
}

// One table row (one or more text lines): cells wrapped to their columns and padded by one space
// on each side, top-aligned.
std::string table_row(const std::vector<std::string>& cells, const std::vector<int>& widths,
                      const std::vector<Justify>& justify, const char* vertical) {
  std::vector<std::vector<std::string>> wrapped;
  size_t height = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    wrapped.push_back(wrap_cell(cells[i], widths[i] - 2, justify[i]));
    height = std::max(height, wrapped.back().size());
  }
  std::string s;
  for (size_t line = 0; line < height; ++line) {
    s += vertical;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) s += vertical;
      const std::string blank(static_cast<size_t>(widths[i] - 2), ' ');
      s += " " + (line < wrapped[i].size() ? wrapped[i][line] : blank) + " ";
    }
    s += std::string(vertical) + "\n";
  }
  return s;
}

// The columns' widths with their padding, without borders: Keras gives each column
// int(position * line_length) minus the previous ones; rich fits them in the table width less the
// four border characters by taking the excess from all columns in turn (ratio_reduce).
std::vector<int> column_widths(int line_length) {
  const double positions[] = {0.45, 0.80, 1.0};
  std::vector<int> widths;
  int current = 0;
  for (double position : positions) {
    int width = static_cast<int>(position * line_length) - current;
    current += width;
    widths.push_back(width);
  }
  const int max_width = line_length - 4;  // the table's width less "┃", "┃", "┃", "┃"
  int total = 0;
  for (int& w : widths) {
    w = std::min(w + 2, max_width);  // cell padding (0, 1)
    total += w;
  }
  if (total > max_width) {
    int remaining = total - max_width;
    int total_ratio = static_cast<int>(widths.size());
    for (int& w : widths) {
      // Python's round(): half to even, which nearbyint does in the default rounding mode.
      int distributed = std::min(
          w, static_cast<int>(std::nearbyint(static_cast<double>(remaining) / total_ratio)));
      w -= distributed;
      remaining -= distributed;
      total_ratio -= 1;
    }
  }
  return widths;
}

std::string format_shape(const std::vector<std::optional<int64_t>>& shape) {
  // No shape (an unbuilt layer, or one after a layer that cannot take its input): Keras's "?"
  // (keras/src/utils/summary_utils.py format_layer_shape).
  if (shape.empty()) return "?";
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += shape[i] ? std::to_string(*shape[i]) : "None";
  }
  return s + ")";
}

std::string footer(const char* label, int64_t count, double bytes) {
  return std::string(" ") + label + " params: " + format_thousands(count) + " (" +
         readable_memory_size(bytes) + ")\n";
}

}  // namespace

int summary_line_length(int terminal_columns) {
  return std::max(20, std::min(88, terminal_columns - 4));
}

std::string format_thousands(int64_t n) {
  std::string digits = std::to_string(n);
  size_t first = digits[0] == '-' ? 1 : 0;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string readable_memory_size(double bytes) {
  static const char* const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  char buffer[64];
  for (const char* unit : units) {
    if (bytes / 1024 < 1) {
      std::snprintf(buffer, sizeof buffer, "%.2f %s", bytes, unit);
      return buffer;
    }
    bytes /= 1024;
  }
  std::snprintf(buffer, sizeof buffer, "%.2f %s", bytes, units[5]);
  return buffer;
}

std::string format_summary(const std::string& model_name, const std::vector<SummaryRow>& rows,
                           int64_t trainable_params, int64_t non_trainable_params,
                           std::optional<int64_t> optimizer_params, int64_t bytes_per_param,
                           int line_length) {
  assert(line_length >= 20);
  const std::vector<int> widths = column_widths(line_length);
  const std::vector<Justify> justify = {Justify::kLeft, Justify::kLeft, Justify::kRight};

  std::string s = "Model: \"" + model_name + "\"\n";
  s += rule(widths, "\u250f", "\u2501", "\u2533", "\u2513");  // ┏━┳┓
  s += table_row({"Layer (type)", "Output Shape", "Param #"}, widths, justify, "\u2503");  // ┃
  s += rule(widths, "\u2521", "\u2501", "\u2547", "\u2529");  // ┡━╇┩
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) s += rule(widths, "\u251c", "\u2500", "\u253c", "\u2524");  // ├─┼┤
    const SummaryRow& row = rows[i];
    s += table_row({row.name + " (" + row.class_name + ")", format_shape(row.output_shape),
                    format_thousands(row.params)},
                   widths, justify, "\u2502");  // │
  }
  s += rule(widths, "\u2514", "\u2500", "\u2534", "\u2518");  // └─┴┘

  // Keras sizes each variable by its dtype; the optimizer's iteration counter is int64.
  const double trainable_bytes = static_cast<double>(trainable_params * bytes_per_param);
  const double non_trainable_bytes = static_cast<double>(non_trainable_params * bytes_per_param);
  const int64_t optimizer_count = optimizer_params.value_or(0);
  const double optimizer_bytes =
      optimizer_count > 0 ? static_cast<double>(8 + (optimizer_count - 1) * bytes_per_param) : 0.0;
  s += footer("Total", trainable_params + non_trainable_params + optimizer_count,
              trainable_bytes + non_trainable_bytes + optimizer_bytes);
  s += footer("Trainable", trainable_params, trainable_bytes);
  s += footer("Non-trainable", non_trainable_params, non_trainable_bytes);
  if (optimizer_params) s += footer("Optimizer", *optimizer_params, optimizer_bytes);
  return s;
}

}  // namespace fitbench
