#!/usr/bin/python3
"""Writes tests/core/path_pattern_cases.inc for tst_path_pattern: what this Python's re says of
layout keys, as PathPattern must say it.
- kSearchCases: random patterns over the syntax of layout keys, each with the paths re.search
  finds it in (a bitmask over kPaths), or "unsupported" where Python accepts a construct that
  fitbench refuses (backreferences, lookaround, conditionals, atomic groups, possessive repeats,
  inline flags, \\N{...});
- kErrorCases: patterns Python refuses, with its message (not those whose error depends on
  what a \\N{...} name stands for: fitbench does not carry Unicode's names).
Run: /usr/bin/python3 tests/reference/path_pattern_cases.py"""
import pathlib
import random
import re
import signal
import warnings
from re import _constants as C
from re import _parser

PATHS = ["sequential/dense/kernel", "sequential/dense_1/bias", "sequential/dense_12/kernel",
         "model/conv2d/kernel", "", "a", "dense", "\u00e9t\u00e9/dense_\u00e9/kernel",
         "x\ny", "ab_1", "a b", "aaaa", "Dense/KERNEL", "\u0663\u0664/\u3000x", "dense\n", "kernel\n\n"]

ATOMS = ["a", "b", "d", "e", "n", "s", "_", "1", "/", "k", ".", "\\.", "[a-e]", "[^/]", "[_\\d]",
         "\\w", "\\d", "\\W", "\\s", "\\S", "\\D", "\\b", "\\B", "^", "$", "\\A", "\\Z",
         "dense", "kernel", "bias", "\u00e9", "[\u00e0-\u00ff]", "\\u00e9", "\\x61", "\\141",
         "[\\w/]", "[^\\W_]", "[-a]", "[]a]", "\\n", "x", " "]
QUANTS = ["*", "+", "?", "{2}", "{1,3}", "{,2}", "{2,}", "*?", "+?", "??", "{0}", "{1,1}"]

UNSUPPORTED_OPS = {C.GROUPREF, C.GROUPREF_EXISTS, C.ASSERT, C.ASSERT_NOT, C.ATOMIC_GROUP,
                   C.POSSESSIVE_REPEAT}


def pattern(rng, depth=0):
    parts = []
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if depth < 3 and r < 0.2:
            inner = pattern(rng, depth + 1)
            if rng.random() < 0.4:
                inner += "|" + pattern(rng, depth + 1)
            item = rng.choice(["(", "(?:"]) + inner + ")"
        else:
            item = rng.choice(ATOMS)
        if rng.random() < 0.35 and item not in ("^", "$", "\\A", "\\Z", "\\b", "\\B"):
            item += rng.choice(QUANTS)
        parts.append(item)
    text = "".join(parts)
    if depth == 0 and rng.random() < 0.15:
        text += "|" + pattern(rng, 1)
    return text


def unsupported(p):
    if "\\N{" in p:
        return True
    try:
        tree = _parser.parse(p)
    except re.error:
        return False
    if tree.state.flags & ~(C.SRE_FLAG_UNICODE):
        return True

    def walk(items):
        for op, av in items:
            if op in UNSUPPORTED_OPS:
                return True
            if op is C.SUBPATTERN:
                if av[1] or av[2] or walk(av[3]):
                    return True
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
                if walk(av[2]):
                    return True
            elif op is C.BRANCH:
                if any(walk(b) for b in av[1]):
                    return True
        return False

    return walk(tree.data)


class Slow(Exception):
    pass


def on_alarm(*_):
    raise Slow()


def cpp(s):
    out = ""
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            out += "\\\\"
        elif ch == '"':
            out += '\\"'
        elif ch == "?":
            out += "\\?"  # no trigraphs
        elif 0x20 <= o < 0x7F:
            out += ch
        else:
            # UTF-8 bytes as octal escapes (no hex escape can swallow a following digit).
            out += "".join("\\%03o" % b for b in ch.encode("utf-8", "surrogateescape"))
    return '"' + out + '"'


HAND = ["dense.*kernel", "dense.*bias", "^sequential/dense$", "kernel$", "dense_\\d+/kernel",
        "(dense|conv2d)_?\\d*/kernel", "\\bdense\\b", "[^/]+/bias$", "(?P<layer>dense)_1",
        "(?#comment)dense", "a{,}", "x{}", "x{", "x{a}", "x{1,a}", "]", "}", "\\/", "\\-",
        "(.*)*x", "(.*.*)*x", "(a|aa)*b", "(\\w+)+$x", "(.+)+$x", "(?=a)", "(?!a)d", "(?<=a)b",
        "(?<!a)b", "(a)\\1", "(?P<n>a)(?P=n)", "(a)(?(1)b|c)", "(?>a)", "a*+", "(?i)dense",
        "(?i:dense)", "(?-i:dense)", "\\N{LATIN SMALL LETTER A}", "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10",
        "\\0", "\\012", "\\18", "[\\0]", "[\\b]", "\\a", "\\f\\t\\v\\r", "a|", "|a", "()", "(|)",
        "((a*)*)*", "(?:)*", "a(?#x)*", "\\Z", "$", "^$", "\\A\\Z", "\\b", "\\B", "x*?y", "[a-]",
        "[-]", "[\\w-]", "[a\\-z]", "\\u00e9", "\\U000000e9", "[\\u00e0-\\u00ff]+", "\u00e9t\u00e9",
        "(?x)#(", "(?x) d e n s e # the dense layer", "(?x:a b)", "(?t)", "(?mt)", "(a)(?( 1)b)",
        "(a)(?(+1)b)", "(a)(?(0_1)b)", "(a)(?(\u0661)b)", "(?:(?:(?:){99999}){99999}){99999}",
        "(?:(?:a{0}){99999}){99999}b", "[a-\\N{EM DASH}]", "\\N{EM DASH}", "(?i)(?s)d",
        "(?#c)(?i)d", "(?x)(?i)d"]

ERRORS = ["dense[", "(", ")", "*", "a**", "a{3,2}", "\\", "a\\", "\\q", "[z-a]", "[\\d-z]",
          "[a-\\d]", "\\x1", "\\u12", "\\U00110000", "\\777", "[\\777]", "\\1", "(a)\\2", "(a\\1)",
          "(?P<1a>x)", "(?P<a>x)(?P<a>y)", "(?P=b)", "(?P", "(?Px", "(?<x", "(?", "(?#abc",
          "(?x", "(?i", "(?iq)", "(?L)", "a{2}{3}", "{2}", "^*", "$+", "\\b?", "\\A*", "a|*",
          "(?:", "(?P<", "(?P<>x)", "(?P<a", "\\N", "\\N{", "\\N{}", "[a", "[]", "[^]", "[a-",
          "[a-\\", "(?(1)a|b|c)", "(?(0)a)", "(?(x)a)", "(?(1a)a)", "a{4294967295}",
          "x{99999999999}", "(a))", "a)b(", "[\\8]", "\\8", "\\c", "\\g<1>", "((a)", "(?<=a",
          "(?P<a>x)(?P=a", "\\x", "[\\x]", "\\uzzzz", "(a)(?P=a)", "a{1,2}{3}", "(?#", "(?P=)",
          "(?P=1)", "[\\", "(?<", "(?<x>y)", "x**?", "x?+*", "\u00e9\\\u00e9\\",
          "a\n(", "a\nb\n[", "(?(1)a)", "(?(2))", "(a)(?(1073741823)b)", "(?(3)a)(?(2)b)",
          "a(?i)", "(?:(?i))", "(?i)|(?m)", "(?-)", "(?-i)", "(?i-m-s:a)", "(?au)", "(?t:a)",
          "(?-t:a)", "(?-a:x)", "(?im-i:a)", "(?x)^ *", "(?x)a(?i)", "(?a)(?u)", "(?i\\x)",
          "(?\u00e9)", "(?i\u00e9)", "[a-\\x40]", "[\\x41-\\x40]", "[1-\\00]",
          "(?P<a'b>x)", "(?P<a\\\\b>x)", "(?P=\x07)", "(?P<a\nb>x)", "(?P<a\u200bb>x)",
          "[\udc80-a]", "\\U80000000", "[\\U80000000]"]


def main():
    warnings.simplefilter("ignore")  # DeprecationWarnings of conditions such as (?(+1)...)
    signal.signal(signal.SIGALRM, on_alarm)
    rng = random.Random(20261202)
    patterns = list(HAND)
    seen = set(patterns)
    while len(patterns) < 1600:
        p = pattern(rng)
        if p not in seen:
            seen.add(p)
            patterns.append(p)
    search_lines = []
    for p in patterns:
        try:
            compiled = re.compile(p)
        except (re.error, OverflowError, ValueError):
            continue
        if unsupported(p):
            search_lines.append("    {%s, -1}," % cpp(p))
            continue
        mask = 0
        try:
            for i, path in enumerate(PATHS):
                signal.alarm(2)
                if compiled.search(path) is not None:
                    mask |= 1 << i
                signal.alarm(0)
        except Slow:
            # Python backtracks for too long; PathPattern's answer is checked in the test.
            continue
        search_lines.append("    {%s, %d}," % (cpp(p), mask))
    error_lines = []
    for p in ERRORS:
        try:
            re.compile(p)
        except (re.error, OverflowError, ValueError) as e:
            error_lines.append("    {%s, %s}," % (cpp(p), cpp(str(e))))
            continue
        raise SystemExit("expected an error from %r" % p)
    out = pathlib.Path(__file__).resolve().parent.parent / "core" / "path_pattern_cases.inc"
    with open(out, "w", encoding="utf-8") as f:
        f.write("// Generated by tests/reference/path_pattern_cases.py; do not edit.\n")
        f.write("const char* const kPaths[] = {\n")
        for p in PATHS:
            f.write("    %s,\n" % cpp(p))
        f.write("};\n// {pattern, bitmask of the paths re.search finds it in, or -1: unsupported}\n")
        f.write("const SearchCase kSearchCases[] = {\n" + "\n".join(search_lines) + "\n};\n")
        f.write("// {pattern, Python's error}\n")
        f.write("const ErrorCase kErrorCases[] = {\n" + "\n".join(error_lines) + "\n};\n")
    print(out, len(search_lines), "search cases", len(error_lines), "error cases")


main()
