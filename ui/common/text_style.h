// Text helpers shared by the panels: counts with thousands separators, and text that wraps
// without ending a line inside a compound term ("all-" / "gather") or a code span. Inline
// helpers; UI thread only.
#pragma once

#include <QLocale>
#include <QRegularExpression>
#include <QString>
#include <cstdint>
#include <string_view>

namespace fitbench {

// UTF-8 text from the core as a QString.
inline QString toQString(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// A number with six significant digits, as a stream writes it: 0.001, 1e-07.
inline QString sixDigits(double v) { return QString::number(v, 'g', 6); }

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

// Markdown for a QTextBrowser: inside `code` spans, hyphens become U+2011, spaces U+00A0, and
// every other punctuation mark is followed by U+2060 WORD JOINER, so `--devices 3`, `10 % 3` or
// `cpu:1` are never split across lines. A span opens with a run of backticks
// and closes at the next run of the same length (CommonMark); a backtick without its closing run
// is text, and fenced blocks (``` lines), which do not wrap, are left as they are.
inline QString unbreakableCodeSpans(const QString& markdown) {
  QString out;
  out.reserve(markdown.size());
  const auto runAt = [&](qsizetype i) {
    qsizetype n = 0;
    while (i + n < markdown.size() && markdown[i + n] == QLatin1Char('`')) ++n;
    return n;
  };
  bool fenced = false;
  for (qsizetype i = 0; i < markdown.size();) {
    if (i == 0 || markdown[i - 1] == QLatin1Char('\n')) {
      const qsizetype end = markdown.indexOf(QLatin1Char('\n'), i);
      const qsizetype stop = end < 0 ? markdown.size() : end + 1;
      if (markdown.mid(i, stop - i).trimmed().startsWith(QLatin1String("```"))) {  // a fence
        out += markdown.mid(i, stop - i);
        fenced = !fenced;
        i = stop;
        continue;
      }
    }
    if (fenced || markdown[i] != QLatin1Char('`')) {
      out += markdown[i++];
      continue;
    }
    const qsizetype open = runAt(i);
    qsizetype close = -1;
    for (qsizetype j = i + open; j < markdown.size(); ++j) {
      if (markdown[j] != QLatin1Char('`')) continue;
      const qsizetype n = runAt(j);
      if (n == open) {
        close = j;
        break;
      }
      j += n - 1;
    }
    if (close < 0) {  // no closing run: the backticks are text
      out += markdown.mid(i, open);
      i += open;
      continue;
    }
    out += markdown.mid(i, open);
    for (qsizetype k = i + open; k < close; ++k) {
      const QChar c = markdown[k];
      out += c == QLatin1Char('-') ? QChar(0x2011) : c == QLatin1Char(' ') ? QChar(0x00A0) : c;
      if (c != QLatin1Char('-') && (c.isPunct() || c.isSymbol()) && k + 1 < close &&
          markdown[k + 1] != QLatin1Char(' '))
        out += QChar(0x2060);
    }
    out += markdown.mid(close, open);
    i = close + open;
  }
  return out;
}

// Text for a QTextBrowser with a break opportunity (U+200B ZERO WIDTH SPACE) every 30 characters
// in each run of 60 or more without a space: Qt lays out one long word in time quadratic in its
// length (a 200 KB token took 13 s), and a line that long cannot be read anyway. A run that holds
// "://" (a link's address, which a break would change) is left whole up to 2,000 characters.
inline QString breakableLongRuns(const QString& text) {
  constexpr qsizetype kLong = 60, kEvery = 30, kLongAddress = 2000;
  QString out;
  out.reserve(text.size() + text.size() / kEvery);
  for (qsizetype i = 0; i < text.size();) {
    if (text[i].isSpace() && text[i] != QChar(0x00A0)) {
      out += text[i++];
      continue;
    }
    qsizetype end = i;
    while (end < text.size() && !(text[end].isSpace() && text[end] != QChar(0x00A0))) ++end;
    const QStringView run = QStringView(text).mid(i, end - i);
    const qsizetype most = run.contains(QLatin1String("://")) ? kLongAddress : kLong;
    if (run.size() < most) {
      out += run;
    } else {
      for (qsizetype k = 0; k < run.size(); k += kEvery) {
        if (k > 0) out += QChar(0x200B);
        out += run.mid(k, kEvery);
      }
    }
    i = end;
  }
  return out;
}

// The text as typed: U+2011 back to '-', U+00A0 to ' ', and no U+2060 or U+200B (what a copy of
// shown text gives).
inline QString plainTyped(QString text) {
  return text.replace(QChar(0x2011), QLatin1Char('-'))
      .replace(QChar(0x00A0), QLatin1Char(' '))
      .remove(QChar(0x2060))
      .remove(QChar(0x200B));
}

}  // namespace fitbench
