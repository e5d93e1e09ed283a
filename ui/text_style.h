// Text helpers shared by the panels: counts with thousands separators, and text that wraps
// without ending a line inside a compound term ("all-" / "gather") or a code span. Inline
// helpers; UI thread only.
#pragma once

#include <QLocale>
#include <QRegularExpression>
#include <QString>
#include <cstdint>

namespace fitbench {

// 273412 -> "273,412": the English grouping every panel uses (the byte counts' too).
inline QString groupedCount(int64_t n) {
  return QLocale(QLocale::English).toString(static_cast<qlonglong>(n));
}

// A hyphen between two letters becomes U+2011 NON-BREAKING HYPHEN, so a wrapped label keeps
// "all-reduce", "reduce-scatter" and "all-gather" on one line.
inline QString keepHyphenated(QString text) {
  static const QRegularExpression hyphen(QStringLiteral("(?<=\\p{L})-(?=\\p{L})"));
  return text.replace(hyphen, QString(QChar(0x2011)));
}

// Markdown for a QTextBrowser: inside `code` spans, hyphens become U+2011 and spaces U+00A0, so
// `--devices 3` or `10 % 3` are never split across lines.
inline QString unbreakableCodeSpans(const QString& markdown) {
  QString out;
  out.reserve(markdown.size());
  bool inCode = false;
  for (const QChar c : markdown) {
    if (c == QLatin1Char('`')) inCode = !inCode;
    if (inCode && c == QLatin1Char('-'))
      out += QChar(0x2011);
    else if (inCode && c == QLatin1Char(' '))
      out += QChar(0x00A0);
    else
      out += c;
  }
  return out;
}

}  // namespace fitbench
