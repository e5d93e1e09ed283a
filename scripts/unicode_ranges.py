"""Code point ranges as C++ tables, for the generators beside it (cell_widths.py,
path_pattern_classes.py)."""


def ranges(test):
    """The inclusive ranges of code points c for which test(c) holds."""
    out, start = [], None
    for c in range(0x110000):
        if test(c):
            if start is None:
                start = c
        elif start is not None:
            out.append((start, c - 1))
            start = None
    if start is not None:
        out.append((start, 0x10FFFF))
    return out


def table(type_name, name, rs):
    """Prints `constexpr type_name name[] = {{lo, hi}, ...};` in lines of at most 100."""
    print(f"constexpr {type_name} {name}[] = {{")
    line = "   "
    for a, b in rs:
        item = f" {{0x{a:X}, 0x{b:X}}},"
        if len(line) + len(item) > 98:
            print(line)
            line = "   "
        line += item
    print(line)
    print("};")
