// The layout key parser: Python 3.11's re syntax for str patterns (Lib/re/_parser.py), read into
// pattern_ast::Ast with Python's error messages and positions (in code points).
#include <algorithm>
#include <map>

#include "core/distribution/path_pattern_reader.h"

namespace fitbench::pattern_ast {
namespace {

class Parser : PatternReader {
 public:
  explicit Parser(const std::u32string& p) : PatternReader(p) {}

  Ast run() {
    ast_.root = parse_sub();
    if (pos_ < p_.size()) fail("unbalanced parenthesis", pos_);  // a ')' with no '('
    if (!unsupported_.empty()) throw Failure{unsupported_, true};
    return std::move(ast_);
  }

 private:
  int add(Node n) {
    ast_.nodes.push_back(std::move(n));
    return static_cast<int>(ast_.nodes.size() - 1);
  }
  int add_class(std::vector<PatternRange> r) {
    ast_.classes.push_back(normalized(std::move(r)));
    Node n;
    n.type = Type::kClass;
    n.cls = static_cast<int>(ast_.classes.size() - 1);
    return add(std::move(n));
  }
  int add_char(char32_t c) {
    Node n;
    n.type = Type::kChar;
    n.ch = c;
    return add(std::move(n));
  }
  int add_assert(PathPattern::Assertion a) {
    Node n;
    n.type = Type::kAssert;
    n.assertion = a;
    return add(std::move(n));
  }
  int add_group(int kid) {
    Node n;
    n.type = Type::kGroup;
    n.kids = {kid};
    return add(std::move(n));
  }

  // a|b|c
  int parse_sub() {
    std::vector<int> branches{parse_seq()};
    while (match('|')) branches.push_back(parse_seq());
    if (branches.size() == 1) return branches.front();
    Node n;
    n.type = Type::kAlt;
    n.kids = std::move(branches);
    return add(std::move(n));
  }

  // A sequence of items up to "|", ")" or the end.
  int parse_seq() {
    std::vector<int> items;
    while (!at_end()) {
      const char32_t c = peek();
      if (c == '|' || c == ')') break;
      const size_t at = pos_;
      const std::u32string tok = get();
      if (tok.size() == 2) {
        const int node = escape(tok, at);
        if (node >= 0) items.push_back(node);
      } else if (c == '[') {
        items.push_back(parse_class(at));
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!repeat(c, at, items)) items.push_back(add_char('{'));
      } else if (c == '.') {
        Node n;
        n.type = Type::kAny;
        items.push_back(add(std::move(n)));
      } else if (c == '(') {
        const int node = parse_group(at);
        if (node >= 0) items.push_back(node);
      } else if (c == '^') {
        items.push_back(add_assert(PathPattern::Assertion::kBegin));
      } else if (c == '$') {
        items.push_back(add_assert(PathPattern::Assertion::kEnd));
      } else {
        items.push_back(add_char(c));
      }
    }
    if (items.size() == 1) return items.front();
    Node n;
    n.type = items.empty() ? Type::kEmpty : Type::kConcat;
    n.kids = std::move(items);
    return add(std::move(n));
  }

  // The quantifier `c` at `at` applied to the last item; false when a "{" is a literal.
  bool repeat(char32_t c, size_t at, std::vector<int>& items) {
    uint64_t min = 0, max = kMaxRepeat;
    if (c == '?') max = 1;
    if (c == '+') min = 1;
    if (c == '{') {
      if (next_is('}')) return false;
      const size_t here = pos_;
      std::u32string lo, hi;
      while (!at_end() && is_digit(p_[pos_])) {
        lo += p_[pos_];
        step();
      }
      if (match(',')) {
        while (!at_end() && is_digit(p_[pos_])) {
          hi += p_[pos_];
          step();
        }
      } else {
        hi = lo;
      }
      if (!match('}')) {
        pos_ = here;
        return false;
      }
      const auto number = [](const std::u32string& digits) {
        uint64_t v = 0;
        for (char32_t d : digits) v = std::min<uint64_t>(v * 10 + (d - '0'), kMaxRepeat);
        return v;
      };
      if (!lo.empty()) {
        min = number(lo);
        if (min >= kMaxRepeat) throw Failure{"the repetition number is too large", false};
      }
      if (!hi.empty()) {
        max = number(hi);
        if (max >= kMaxRepeat) throw Failure{"the repetition number is too large", false};
        if (max < min) fail("min repeat greater than max repeat", here);
      }
    }
    if (items.empty() || ast_.nodes[size_t(items.back())].type == Type::kAssert)
      fail("nothing to repeat", at);
    if (ast_.nodes[size_t(items.back())].type == Type::kRepeat) fail("multiple repeat", at);
    if (!match('?') && match('+'))
      unsupported(
          "possessive quantifiers (*+, ++, ?+, {m,n}+) cannot be matched without "
          "backtracking, which fitbench's layout keys do not do");
    Node n;
    n.type = Type::kRepeat;
    n.min = static_cast<int>(std::min<uint64_t>(min, PathPattern::kMaxProgram + 1));
    n.max = max == kMaxRepeat
                ? kUnbounded
                : static_cast<int>(std::min<uint64_t>(max, PathPattern::kMaxProgram + 1));
    n.kids = {items.back()};
    items.back() = add(std::move(n));
    return true;
  }

  // [...] starting at `here`.
  int parse_class(size_t here) {
    const bool negate = match('^');
    std::vector<PatternRange> ranges;
    bool first = true;
    for (;;) {
      if (at_end()) fail("unterminated character set", here);
      const size_t at = pos_;
      const std::u32string this_tok = get();
      if (this_tok == U"]" && !first) break;
      first = false;
      const ClassItem a =
          this_tok.size() == 2 ? class_escape(this_tok, at) : ClassItem{false, this_tok[0], {}};
      if (match('-')) {
        if (at_end()) fail("unterminated character set", here);
        const size_t that_at = pos_;
        const std::u32string that = get();
        if (that == U"]") {
          add_item(ranges, a);
          ranges.push_back({'-', '-'});
          break;
        }
        const ClassItem b =
            that.size() == 2 ? class_escape(that, that_at) : ClassItem{false, that[0], {}};
        if (a.is_set || b.is_set || b.ch < a.ch)
          fail("bad character range " + to_utf8(this_tok) + "-" + to_utf8(that), at);
        ranges.push_back({a.ch, b.ch});
      } else {
        add_item(ranges, a);
      }
    }
    ranges = normalized(std::move(ranges));
    return add_class(negate ? complement(ranges) : ranges);
  }

  static void add_item(std::vector<PatternRange>& ranges, const ClassItem& item) {
    if (item.is_set)
      ranges.insert(ranges.end(), item.set.begin(), item.set.end());
    else
      ranges.push_back({item.ch, item.ch});
  }

  // An escape outside a class, read as the token `tok` at `at`: its node, or -1 for none.
  int escape(const std::u32string& tok, size_t at) {
    const char32_t c = tok[1];
    using A = PathPattern::Assertion;
    switch (c) {
      case 'A':
        return add_assert(A::kBegin);
      case 'Z':
        return add_assert(A::kEndOnly);
      case 'b':
        return add_assert(A::kWordBoundary);
      case 'B':
        return add_assert(A::kNotWordBoundary);
      default:
        break;
    }
    if (auto set = category(c)) return add_class(std::move(*set));
    if (const char32_t s = simple_escape(c, false)) return add_char(s);
    if (c == 'x' || c == 'u' || c == 'U') return add_char(hex_escape(c, at));
    if (c == 'N') {
      named_escape();
      return add_char(0);
    }
    if (c == '0') {
      uint32_t v = 0;
      for (int n = 0; n < 2 && !at_end() && is_octal(p_[pos_]); ++n) {
        v = v * 8 + (p_[pos_] - '0');
        step();
      }
      return add_char(v);
    }
    if (is_digit(c)) {
      // An octal escape of three digits, or a group reference.
      size_t len = 2;
      if (!at_end() && is_digit(p_[pos_])) {
        step();
        ++len;
        if (is_octal(p_[at + 1]) && is_octal(p_[at + 2]) && !at_end() && is_octal(p_[pos_])) {
          step();
          const uint32_t v = (p_[at + 1] - '0') * 64 + (p_[at + 2] - '0') * 8 + (p_[at + 3] - '0');
          if (v > 0377)
            fail("octal escape value " + to_utf8(p_.substr(at, 4)) + " outside of range 0-0o377",
                 at);
          return add_char(v);
        }
      }
      const int group = std::stoi(to_utf8(p_.substr(at + 1, len - 1)));
      if (group < groups_) {
        if (!closed_[size_t(group)]) fail("cannot refer to an open group", at);
        unsupported(backreference_text());
        return add_group(add(Node{}));
      }
      fail("invalid group reference " + std::to_string(group), at + 1);
    }
    if (is_ascii_letter(c)) fail("bad escape " + to_utf8(tok), at);
    return add_char(c);
  }

  static std::string backreference_text() {
    return "backreferences (\\1, (?P=name)) cannot be matched without backtracking, which "
           "fitbench's layout keys do not do";
  }

  // A group starting at `start` (its "(" read): its node, or -1 for a comment.
  int parse_group(size_t start) {
    bool capture = true;
    std::u32string name;
    if (match('?')) {
      const size_t q = pos_ - 1;
      if (at_end()) fail("unexpected end of pattern", pos_);
      const std::u32string c = get();
      if (c == U"P") {
        if (match('<')) {
          const size_t name_at = pos_;
          name = name_until('>', "group name");
          check_name(name, name_at);
          if (auto it = names_.find(name); it != names_.end())
            fail("redefinition of group name '" + to_utf8(name) + "' as group " +
                     std::to_string(groups_) + "; was group " + std::to_string(it->second),
                 name_at);
        } else if (match('=')) {
          const size_t name_at = pos_;
          name = name_until(')', "group name");
          check_name(name, name_at);
          auto it = names_.find(name);
          if (it == names_.end()) fail("unknown group name '" + to_utf8(name) + "'", name_at);
          if (!closed_[size_t(it->second)]) fail("cannot refer to an open group", name_at);
          unsupported(backreference_text());
          return add_group(add(Node{}));
        } else {
          if (at_end()) fail("unexpected end of pattern", pos_);
          fail("unknown extension ?P" + to_utf8(get()), q);
        }
      } else if (c == U":") {
        capture = false;
      } else if (c == U"#") {
        for (;;) {
          if (at_end()) fail("missing ), unterminated comment", start);
          if (get() == U")") return -1;
        }
      } else if (c == U"=" || c == U"!" || c == U"<") {
        if (c == U"<") {
          if (at_end()) fail("unexpected end of pattern", pos_);
          const std::u32string d = get();
          if (d != U"=" && d != U"!") fail("unknown extension ?<" + to_utf8(d), q);
        }
        const int sub = parse_sub();
        if (!match(')')) fail("missing ), unterminated subpattern", start);
        unsupported(
            "lookahead and lookbehind ((?=...), (?!...), (?<=...), (?<!...)) are not "
            "supported in layout keys");
        (void)sub;
        return add_group(add(Node{}));
      } else if (c == U"(") {
        const size_t name_at = pos_;
        const std::u32string cond = name_until(')', "group name");
        if (is_identifier(cond)) {
          if (!names_.count(cond)) fail("unknown group name '" + to_utf8(cond) + "'", name_at);
        } else if (!std::all_of(cond.begin(), cond.end(), is_digit)) {
          fail("bad character in group name '" + to_utf8(cond) + "'", name_at);
        } else if (std::all_of(cond.begin(), cond.end(), [](char32_t d) { return d == '0'; })) {
          fail("bad group number", name_at);
        }
        parse_seq();
        if (match('|')) {
          parse_seq();
          if (next_is('|')) fail("conditional backref with more than two branches", pos_);
        }
        if (!match(')')) fail("missing ), unterminated subpattern", start);
        unsupported("conditional groups ((?(1)yes|no)) are not supported in layout keys");
        return add_group(add(Node{}));
      } else if (c == U">") {
        capture = false;
        unsupported(
            "atomic groups ((?>...)) cannot be matched without backtracking, which "
            "fitbench's layout keys do not do");
      } else if (c.size() == 1 &&
                 (std::u32string(U"aiLmsux-").find(c[0]) != std::u32string::npos)) {
        // Inline flags: (?i) for the whole pattern, (?i:...) or (?-i:...) for a group.
        if (c == U"L") fail("bad inline flags: cannot use 'L' flag with a str pattern", pos_);
        while (!at_end() && std::u32string(U"aimsux-").find(p_[pos_]) != std::u32string::npos)
          step();
        if (at_end()) fail("missing -, : or )", pos_);
        if (is_ascii_letter(p_[pos_]) && p_[pos_] != 'L') fail("unknown flag", pos_);
        unsupported(
            "inline flags such as (?i) are not supported in layout keys; variable paths "
            "are matched as written");
        if (match(')')) return -1;
        if (!match(':')) fail("missing -, : or )", pos_);
        capture = false;
      } else {
        fail("unknown extension ?" + to_utf8(c), q);
      }
    }
    int gid = 0;
    if (capture) {
      gid = groups_++;
      closed_.push_back(false);
      if (!name.empty()) names_[name] = gid;
    }
    const int sub = parse_sub();
    if (!match(')')) fail("missing ), unterminated subpattern", start);
    if (capture) closed_[size_t(gid)] = true;
    return add_group(sub);
  }

  Ast ast_;
  int groups_ = 1;                   // groups opened, plus one (Python's state.groups)
  std::vector<bool> closed_{false};  // per group number: its ")" has been read
  std::map<std::u32string, int> names_;
};

}  // namespace

std::optional<Ast> parse(const std::u32string& pattern, PathPattern::Error* error) {
  try {
    return Parser(pattern).run();
  } catch (const Failure& f) {
    if (error) *error = {f.message, f.python_accepts};
    return std::nullopt;
  }
}

}  // namespace fitbench::pattern_ast
