// PathPattern: the syntax tree (path_pattern_parser.cpp) compiled to a Thompson NFA, run as a
// Pike VM without captures: one list of live instructions per position of the path, each
// instruction at most once per list, so a search takes O(path length x program size) whatever
// the pattern (Russ Cox, "Regular Expression Matching Can Be Simple And Fast", 2007).
#include "core/python/path_pattern.h"

#include <limits>

#include "core/python/path_pattern_ast.h"

namespace fitbench {

using pattern_ast::Ast;
using pattern_ast::Node;
using pattern_ast::Type;

class PathPatternCompiler {
 public:
  explicit PathPatternCompiler(Ast ast) : ast_(std::move(ast)) {}

  std::optional<PathPattern> run(PathPattern::Error* error) {
    if (size(ast_.root) + 1 > PathPattern::kMaxProgram) {
      if (error)
        *error = {"is too large or too complex to compile (over " +
                      std::to_string(PathPattern::kMaxProgram) +
                      " steps, as counted repeats such as {1000} multiply); use a shorter "
                      "pattern",
                  true};
      return std::nullopt;
    }
    emit(ast_.root);
    add(PathPattern::Op::kMatch);
    out_.classes_ = std::move(ast_.classes);
    return std::move(out_);
  }

 private:
  static constexpr size_t kTooMany = PathPattern::kMaxProgram + 1;

  static size_t capped(size_t n) { return n > kTooMany ? kTooMany : n; }

  // Instructions `node` compiles to, capped just over the limit.
  size_t size(int index) const {
    const Node& n = ast_.nodes[static_cast<size_t>(index)];
    switch (n.type) {
      case Type::kEmpty:
        return 0;
      case Type::kChar:
      case Type::kClass:
      case Type::kAny:
      case Type::kAssert:
        return 1;
      case Type::kGroup:
        return size(n.kids[0]);
      case Type::kConcat:
      case Type::kAlt: {
        size_t total = n.type == Type::kAlt ? 2 * (n.kids.size() - 1) : 0;
        for (int k : n.kids) total = capped(total + size(k));
        return total;
      }
      case Type::kRepeat: {
        const size_t s = size(n.kids[0]);
        if (s == 0) return 0;  // see emit()
        const size_t min = static_cast<size_t>(n.min);
        size_t total = capped(min * s);
        if (n.max == pattern_ast::kUnbounded)
          total = capped(total + s + 2);
        else
          total = capped(total + static_cast<size_t>(n.max - n.min) * (s + 1));
        return total;
      }
    }
    return kTooMany;
  }

  uint32_t pc() const { return static_cast<uint32_t>(out_.program_.size()); }
  uint32_t add(PathPattern::Op op, uint32_t x = 0, uint32_t y = 0) {
    out_.program_.push_back({op, x, y});
    return pc() - 1;
  }

  void emit(int index) {
    const Node& n = ast_.nodes[static_cast<size_t>(index)];
    using Op = PathPattern::Op;
    switch (n.type) {
      case Type::kEmpty:
        return;
      case Type::kChar:
        add(Op::kChar, n.ch);
        return;
      case Type::kClass:
        add(Op::kClass, static_cast<uint32_t>(n.cls));
        return;
      case Type::kAny:
        add(Op::kAny);
        return;
      case Type::kAssert:
        add(Op::kAssert, static_cast<uint32_t>(n.assertion));
        return;
      case Type::kGroup:
        emit(n.kids[0]);
        return;
      case Type::kConcat:
        for (int k : n.kids) emit(k);
        return;
      case Type::kAlt: {
        // split(L1, next) L1: a; jump end; next: split(L2, next') ... last: z; end:
        std::vector<uint32_t> jumps;
        for (size_t i = 0; i + 1 < n.kids.size(); ++i) {
          const uint32_t split = add(Op::kSplit, pc() + 1);
          emit(n.kids[i]);
          jumps.push_back(add(Op::kJump));
          out_.program_[split].y = pc();
        }
        emit(n.kids.back());
        for (uint32_t j : jumps) out_.program_[j].x = pc();
        return;
      }
      case Type::kRepeat: {
        // A body that compiles to nothing matches only "", however often: nothing to emit
        // (and (?:(?:){99999}){99999} would otherwise loop 10^10 times emitting nothing).
        if (size(n.kids[0]) == 0) return;
        for (int i = 0; i < n.min; ++i) emit(n.kids[0]);
        if (n.max == pattern_ast::kUnbounded) {
          // loop: split(body, end) body: x; jump loop; end:
          const uint32_t loop = add(Op::kSplit, pc() + 1);
          emit(n.kids[0]);
          add(Op::kJump, loop);
          out_.program_[loop].y = pc();
          return;
        }
        // Up to max - min more, each optional: split(body, end) body: x; split(...) ...
        std::vector<uint32_t> splits;
        for (int i = n.min; i < n.max; ++i) {
          splits.push_back(add(Op::kSplit, pc() + 1));
          emit(n.kids[0]);
        }
        for (uint32_t s : splits) out_.program_[s].y = pc();
        return;
      }
    }
  }

  Ast ast_;
  PathPattern out_;
};

std::optional<PathPattern> PathPattern::compile(const std::string& pattern, Error* error) {
  auto ast = pattern_ast::parse(decode_utf8_lenient(pattern), error);
  if (!ast) return std::nullopt;
  return PathPatternCompiler(std::move(*ast)).run(error);
}

namespace {

bool is_word(const std::u32string& s, size_t i) {
  return i < s.size() && in_ranges(pattern_ast::word_ranges(), s[i]);
}

// Python's _sre at position i of s (SRE(at) in Modules/_sre/sre_lib.h).
bool holds(PathPattern::Assertion a, const std::u32string& s, size_t i) {
  using A = PathPattern::Assertion;
  switch (a) {
    case A::kBegin:
      return i == 0;
    case A::kEnd:
      return i == s.size() || (i + 1 == s.size() && s[i] == '\n');
    case A::kEndOnly:
      return i == s.size();
    case A::kWordBoundary:
    case A::kNotWordBoundary: {
      if (s.empty()) return false;  // neither holds in an empty string
      const bool before = i > 0 && is_word(s, i - 1);
      return (before != is_word(s, i)) == (a == A::kWordBoundary);
    }
  }
  return false;
}

// The live instructions at one position: each at most once.
class ThreadList {
 public:
  explicit ThreadList(size_t program) : at_(program, kNone) {}
  bool contains(uint32_t pc) const { return at_[pc] < pcs_.size() && pcs_[at_[pc]] == pc; }
  void insert(uint32_t pc) {
    at_[pc] = static_cast<uint32_t>(pcs_.size());
    pcs_.push_back(pc);
  }
  void clear() { pcs_.clear(); }
  const std::vector<uint32_t>& pcs() const { return pcs_; }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> at_;  // sparse: pc -> index in pcs_ (checked against pcs_)
  std::vector<uint32_t> pcs_;
};

}  // namespace

bool PathPattern::search(const std::string& text) const {
  const std::u32string s = decode_utf8_lenient(text);
  // Every instruction's set of positions is a list of program counters; "visited" also holds the
  // ones that consume nothing, so that an empty loop such as (a*)* ends.
  ThreadList current(program_.size()), next(program_.size()), visited(program_.size());
  std::vector<uint32_t> stack;
  // Adds pc and what it leads to without consuming, at position i; true when that reaches kMatch.
  const auto add = [&](ThreadList& list, uint32_t start, size_t i) {
    stack.assign(1, start);
    while (!stack.empty()) {
      const uint32_t pc = stack.back();
      stack.pop_back();
      if (visited.contains(pc)) continue;
      visited.insert(pc);
      const Inst& in = program_[pc];
      switch (in.op) {
        case Op::kJump:
          stack.push_back(in.x);
          break;
        case Op::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Op::kAssert:
          if (holds(static_cast<Assertion>(in.x), s, i)) stack.push_back(pc + 1);
          break;
        case Op::kMatch:
          return true;
        default:
          list.insert(pc);
          break;
      }
    }
    return false;
  };
  for (size_t i = 0;; ++i) {
    // re.search: a match may start at every position.
    if (add(current, 0, i)) return true;
    if (i == s.size()) return false;
    const char32_t c = s[i];
    next.clear();
    visited.clear();
    for (uint32_t pc : current.pcs()) {
      const Inst& in = program_[pc];
      const bool takes = (in.op == Op::kChar && in.x == c) || (in.op == Op::kAny && c != '\n') ||
                         (in.op == Op::kClass && in_ranges(classes_[in.x], c));
      if (takes && add(next, pc + 1, i + 1)) return true;
    }
    std::swap(current, next);
  }
}

}  // namespace fitbench
