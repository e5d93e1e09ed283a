// A layout map key as Python's re module reads it, matched against variable paths in time
// linear in the path: the pattern compiles to a Thompson NFA that is run state set by state set
// (no backtracking), so a key such as "(.*)*x", which keeps a backtracking engine (Python's re,
// std::regex) busy for hours on a 25-character path, answers at once. Value type; const use from
// many threads.
//
// Syntax is Python 3.11's for str patterns, with its error messages ("unterminated character set
// at position 5"); \w, \d, \s and \b take Python's Unicode classes. Constructs Python accepts but
// an NFA cannot run (backreferences, lookaround, conditionals, atomic groups, possessive
// quantifiers), inline flags, \N{...} and groups nested over 400 deep are refused with a sentence
// that says so (such a pattern is still read to its end first, so that a syntax error anywhere
// is reported as Python reports it). Not checked as Python checks them: the names in \N{...},
// lookbehind's fixed width, and group names beyond ASCII (taken as identifiers when every
// character is a word character and the first is not a digit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/unicode.h"

namespace fitbench {

class PathPattern {
 public:
  // Why a key does not compile.
  struct Error {
    // Python's message ("unterminated character set at position 5"), or a sentence to follow
    // the key ("lookahead and lookbehind (...) are not supported in layout keys").
    std::string message;
    bool python_accepts = false;  // valid for Python's re, beyond what fitbench runs
  };

  // The most NFA instructions a key may compile to ("a{1000}" takes 1,001).
  static constexpr size_t kMaxProgram = 20000;

  // Compiles `pattern` (UTF-8); nullopt with *error set when it is not a pattern fitbench runs.
  static std::optional<PathPattern> compile(const std::string& pattern, Error* error = nullptr);

  // re.search(pattern, text) is not None: a match anywhere in `text` (UTF-8; a byte that is not
  // UTF-8 counts as one character, as Python's surrogateescape decodes it).
  bool search(const std::string& text) const;

  // The number of NFA instructions (at most kMaxProgram).
  size_t program_size() const { return program_.size(); }

  enum class Op : uint8_t { kChar, kClass, kAny, kAssert, kSplit, kJump, kMatch };
  enum class Assertion : uint8_t { kBegin, kEnd, kEndOnly, kWordBoundary, kNotWordBoundary };
  struct Inst {
    Op op = Op::kMatch;
    uint32_t x = 0;  // kChar: the code point; kClass: its index; kAssert: the Assertion;
                     // kSplit and kJump: the next instruction
    uint32_t y = 0;  // kSplit: the other next instruction
  };

 private:
  std::vector<Inst> program_;
  std::vector<std::vector<CodePointRange>> classes_;  // sorted, disjoint ranges

  friend class PathPatternCompiler;
};

}  // namespace fitbench
