#pragma once
// An option that takes a value, given twice (`--devices 2 --devices 3`): QCommandLineParser
// keeps both and value() returns the last, so a run would silently ignore the first. Both
// programs refuse it as a usage error instead.
#include <QCommandLineParser>
#include <QSet>
#include <QStringList>

namespace fitbench {

// "--devices is given 2 times (2, 3); give it once", or empty when every option is given once.
inline QString repeated_option_error(const QCommandLineParser& parser) {
  QSet<QString> seen;
  for (const QString& name : parser.optionNames()) {
    if (seen.contains(name)) continue;
    seen.insert(name);
    const QStringList values = parser.values(name);
    if (values.size() < 2) continue;
    QStringList shown;
    for (const QString& v : values) shown << (v.isEmpty() ? QStringLiteral("\"\"") : v);
    return QStringLiteral("%1%2 is given %3 times (%4); give it once")
        .arg(name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--"), name)
        .arg(values.size())
        .arg(shown.join(QStringLiteral(", ")));
  }
  return {};
}

}  // namespace fitbench
