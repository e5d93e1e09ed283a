// Internal to path_pattern.cpp and path_pattern_parser.cpp: the syntax tree of a layout map key,
// as Python's re parser (Lib/re/_parser.py) reads it, and the parser's entry point.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/python/path_pattern.h"

namespace fitbench::pattern_ast {

enum class Type : uint8_t {
  kEmpty,   // matches the empty string
  kChar,    // one code point
  kClass,   // one code point of a class
  kAny,     // any code point but "\n"
  kAssert,  // ^ $ \A \Z \b \B
  kConcat,  // kids in order
  kAlt,     // one of the kids
  kRepeat,  // kids[0], min to max times
  kGroup,   // (...) or (?:...): kids[0]; kept apart so that "(a*)*" is not a multiple repeat
};

constexpr int kUnbounded = -1;

struct Node {
  Type type = Type::kEmpty;
  char32_t ch = 0;                                                    // kChar
  int cls = -1;                                                       // kClass: index into classes
  PathPattern::Assertion assertion = PathPattern::Assertion::kBegin;  // kAssert
  int min = 0, max = kUnbounded;                                      // kRepeat
  std::vector<int> kids;                                              // indexes into Ast::nodes
};

struct Ast {
  std::vector<Node> nodes;
  std::vector<std::vector<CodePointRange>> classes;  // sorted, disjoint, merged
  int root = -1;
};

// Parses a pattern's code points; nullopt with *error set on a syntax error (Python's message
// and position) or a construct fitbench does not run (python_accepts).
std::optional<Ast> parse(const std::u32string& pattern, PathPattern::Error* error);

// The class ranges of \w, \d and \s (Python's, for str patterns), sorted and disjoint.
std::span<const CodePointRange> word_ranges();
std::span<const CodePointRange> digit_ranges();
std::span<const CodePointRange> space_ranges();

}  // namespace fitbench::pattern_ast
