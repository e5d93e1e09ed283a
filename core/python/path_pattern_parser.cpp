// The layout key parser: Python 3.11's re syntax for str patterns (Lib/re/_parser.py), read into
// pattern_ast::Ast with Python's error messages and positions (in code points).
#include <algorithm>
#include <map>

#include "core/python/path_pattern_reader.h"

namespace fitbench::pattern_ast {
namespace {

class Parser : PatternReader {
 public:
  explicit Parser(const std::u32string& p) : PatternReader(p) {}

  Ast run() {
    ast_.root = parse_sub(false, true);
    // Python's parse(): the global flags, then a ")" with no "(", then the group numbers that
    // conditional groups named.
    if ((global_flags_ & kAscii) && (global_flags_ & kUnicode))
      throw Failure{"ASCII and UNICODE flags are incompatible", false};
    if (pos_ < p_.size()) fail("unbalanced parenthesis", pos_);
    for (const auto& [group, at] : condition_refs_)  // in the order they were first named
      if (group >= groups_) fail("invalid group reference " + std::to_string(group), at);
    if (!unsupported_.empty()) throw Failure{unsupported_, true};
    return std::move(ast_);
  }

 private:
  int add(Node n) {
    ast_.nodes.push_back(std::move(n));
    return static_cast<int>(ast_.nodes.size() - 1);
  }
  int add_class(std::vector<CodePointRange> r) {
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

  // a|b|c; `top`: the whole pattern, whose first branch may start with global flags, and whose
  // branches follow the global verbose flag (Python's _parse_sub).
  int parse_sub(bool verbose, bool top = false) {
    std::vector<int> branches{parse_seq(verbose, top)};
    while (match('|')) {
      if (top) verbose = global_flags_ & kVerbose;
      branches.push_back(parse_seq(verbose, false));
    }
    if (branches.size() == 1) return branches.front();
    Node n;
    n.type = Type::kAlt;
    n.kids = std::move(branches);
    return add(std::move(n));
  }

  // A sequence of items up to "|", ")" or the end (Python's _parse); in verbose mode, blanks
  // and # comments are skipped.
  int parse_seq(bool verbose, bool first) {
    // Python recurses per level of groups too, and gives up (RecursionError) near 500.
    if (++depth_ > kMaxDepth)
      throw Failure{"groups nested more than " + std::to_string(kMaxDepth) +
                        " deep are more than fitbench's layout keys read",
                    true};
    std::vector<int> items;
    while (!at_end()) {
      const char32_t c = peek();
      if (c == '|' || c == ')') break;
      const size_t at = pos_;
      const std::u32string tok = get();
      if (verbose && tok.size() == 1 &&
          std::u32string(U" \t\n\r\v\f").find(c) != std::u32string::npos)
        continue;
      if (verbose && tok == U"#") {
        while (!at_end() && get() != U"\n") {
        }
        continue;
      }
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
        const int node = parse_group(at, verbose, first && items.empty());
        if (node >= 0) items.push_back(node);
        if (node == kGlobalFlags) verbose = global_flags_ & kVerbose;
      } else if (c == '^') {
        items.push_back(add_assert(PathPattern::Assertion::kBegin));
      } else if (c == '$') {
        items.push_back(add_assert(PathPattern::Assertion::kEnd));
      } else {
        items.push_back(add_char(c));
      }
    }
    --depth_;
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
    std::vector<CodePointRange> ranges;
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
        // Python places the error by the two tokens read, "\x" of "\x41" too.
        const size_t range_at = pos_ - this_tok.size() - 1 - that.size();
        const std::string range = encode_utf8(this_tok) + "-" + encode_utf8(that);
        if (a.is_set || b.is_set) fail("bad character range " + range, range_at);
        if (a.named || b.named) continue;  // unsupported already; its order is not known
        if (b.ch < a.ch) fail("bad character range " + range, range_at);
        ranges.push_back({a.ch, b.ch});
      } else {
        add_item(ranges, a);
      }
    }
    ranges = normalized(std::move(ranges));
    return add_class(negate ? complement(ranges) : ranges);
  }

  static void add_item(std::vector<CodePointRange>& ranges, const ClassItem& item) {
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
            fail(
                "octal escape value " + encode_utf8(p_.substr(at, 4)) + " outside of range 0-0o377",
                at);
          return add_char(v);
        }
      }
      const int group = std::stoi(encode_utf8(p_.substr(at + 1, len - 1)));
      if (group < groups_) {
        if (!closed_[size_t(group)]) fail("cannot refer to an open group", at);
        unsupported(backreference_text());
        return add_group(add(Node{}));
      }
      fail("invalid group reference " + std::to_string(group), at + 1);
    }
    if (is_ascii_letter(c)) fail("bad escape " + encode_utf8(tok), at);
    return add_char(c);
  }

  static std::string backreference_text() {
    return "backreferences (\\1, (?P=name)) cannot be matched without backtracking, which "
           "fitbench's layout keys do not do";
  }

  // A group starting at `start` (its "(" read): its node, -1 for a comment or kGlobalFlags for
  // (?flags). `at_start`: nothing but global flags and comments before it in the pattern.
  int parse_group(size_t start, bool verbose, bool at_start) {
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
            fail("redefinition of group name " + python_repr(name) + " as group " +
                     std::to_string(groups_) + "; was group " + std::to_string(it->second),
                 name_at);
        } else if (match('=')) {
          const size_t name_at = pos_;
          name = name_until(')', "group name");
          check_name(name, name_at);
          auto it = names_.find(name);
          if (it == names_.end()) fail("unknown group name " + python_repr(name), name_at);
          if (!closed_[size_t(it->second)]) fail("cannot refer to an open group", name_at);
          unsupported(backreference_text());
          return add_group(add(Node{}));
        } else {
          if (at_end()) fail("unexpected end of pattern", pos_);
          fail("unknown extension ?P" + encode_utf8(get()), q);
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
          if (d != U"=" && d != U"!") fail("unknown extension ?<" + encode_utf8(d), q);
        }
        const int sub = parse_sub(verbose);
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
          if (!names_.count(cond)) fail("unknown group name " + python_repr(cond), name_at);
        } else {
          const auto group = python_int(cond);
          if (!group || *group < 0)
            fail("bad character in group name " + python_repr(cond), name_at);
          if (*group == 0) fail("bad group number", name_at);
          if (*group >= kMaxGroups)
            fail("invalid group reference " + python_int_digits(cond), name_at);
          if (std::none_of(condition_refs_.begin(), condition_refs_.end(),
                           [&](const auto& r) { return r.first == *group; }))
            condition_refs_.emplace_back(*group, name_at);
        }
        parse_seq(verbose, false);
        if (match('|')) {
          parse_seq(verbose, false);
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
      } else if (c.size() == 1 && (flag_bit(c[0]) || c[0] == '-')) {
        // Inline flags: (?i) for the whole pattern, (?i:...) or (?-i:...) for a group.
        unsupported(
            "inline flags such as (?i) are not supported in layout keys; variable paths "
            "are matched as written");
        const auto scoped = parse_flags(c[0]);
        if (!scoped) {
          if (!at_start) fail("global flags not at the start of the expression", start);
          return kGlobalFlags;
        }
        if (scoped->first & kVerbose) verbose = true;
        if (scoped->second & kVerbose) verbose = false;
        capture = false;
      } else {
        fail("unknown extension ?" + encode_utf8(c), q);
      }
    }
    int gid = 0;
    if (capture) {
      gid = groups_++;
      closed_.push_back(false);
      if (!name.empty()) names_[name] = gid;
    }
    const int sub = parse_sub(verbose);
    if (!match(')')) fail("missing ), unterminated subpattern", start);
    if (capture) closed_[size_t(gid)] = true;
    return add_group(sub);
  }

  // Python's flag letters (re._parser.FLAGS) as bits; 0 for none.
  static constexpr unsigned kIgnoreCase = 1, kLocale = 2, kMultiline = 4, kDotAll = 8,
                            kVerbose = 16, kAscii = 32, kTemplate = 64, kUnicode = 128;
  static constexpr unsigned kTypeFlags = kAscii | kLocale | kUnicode;
  static unsigned flag_bit(char32_t c) {
    switch (c) {
      case 'i':
        return kIgnoreCase;
      case 'L':
        return kLocale;
      case 'm':
        return kMultiline;
      case 's':
        return kDotAll;
      case 'x':
        return kVerbose;
      case 'a':
        return kAscii;
      case 't':
        return kTemplate;
      case 'u':
        return kUnicode;
      default:
        return 0;
    }
  }
  static bool is_alpha(const std::u32string& tok) {
    return tok.size() == 1 && in_ranges(word_ranges(), tok[0]) &&
           !in_ranges(digit_ranges(), tok[0]) && tok[0] != '_';
  }

  // Python's _parse_flags after "(?" and its first flag character `c`: nullopt for global flags
  // "(?aiLmsux)" (added to global_flags_), else the flags a scoped group adds and removes.
  std::optional<std::pair<unsigned, unsigned>> parse_flags(char32_t c) {
    unsigned add = 0, del = 0;
    std::u32string tok(1, c);
    if (c != '-') {
      for (;;) {
        const unsigned flag = flag_bit(tok[0]);
        if (tok[0] == 'L') fail("bad inline flags: cannot use 'L' flag with a str pattern", pos_);
        add |= flag;
        if ((flag & kTypeFlags) && (add & kTypeFlags) != flag)
          fail("bad inline flags: flags 'a', 'u' and 'L' are incompatible", pos_);
        if (at_end()) fail("missing -, : or )", pos_);
        tok = get();
        if (tok == U")" || tok == U"-" || tok == U":") break;
        if (tok.size() != 1 || !flag_bit(tok[0]))
          fail(is_alpha(tok) ? "unknown flag" : "missing -, : or )", pos_ - tok.size());
      }
    }
    if (tok == U")") {
      global_flags_ |= add;
      return std::nullopt;
    }
    if (add & kTemplate) fail("bad inline flags: cannot turn on global flag", pos_ - 1);
    if (tok == U"-") {
      if (at_end()) fail("missing flag", pos_);
      tok = get();
      if (tok.size() != 1 || !flag_bit(tok[0]))
        fail(is_alpha(tok) ? "unknown flag" : "missing flag", pos_ - tok.size());
      for (;;) {
        const unsigned flag = flag_bit(tok[0]);
        if (flag & kTypeFlags)
          fail("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", pos_);
        del |= flag;
        if (at_end()) fail("missing :", pos_);
        tok = get();
        if (tok == U":") break;
        if (tok.size() != 1 || !flag_bit(tok[0]))
          fail(is_alpha(tok) ? "unknown flag" : "missing :", pos_ - tok.size());
      }
    }
    if (del & kTemplate) fail("bad inline flags: cannot turn off global flag", pos_ - 1);
    if (add & del) fail("bad inline flags: flag turned on and off", pos_ - 1);
    return std::make_pair(add, del);
  }

  static constexpr int kGlobalFlags = -2;
  static constexpr int kMaxDepth = 400;
  static constexpr int64_t kMaxGroups = 1073741823;  // Python's _sre.MAXGROUPS

  Ast ast_;
  int groups_ = 1;                   // groups opened, plus one (Python's state.groups)
  std::vector<bool> closed_{false};  // per group number: its ")" has been read
  std::map<std::u32string, int> names_;
  // The group numbers conditions name, each with the first place it is named.
  std::vector<std::pair<int64_t, size_t>> condition_refs_;
  unsigned global_flags_ = 0;
  int depth_ = 0;
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
