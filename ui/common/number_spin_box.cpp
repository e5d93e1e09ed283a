#include "ui/common/number_spin_box.h"

#include <cfloat>

namespace fitbench {

NumberSpinBox::NumberSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
  // QDoubleSpinBox rounds every value to its decimals: the most it allows, so that 1e-30 stays
  // 1e-30 (12 decimals made it 0).
  setDecimals(DBL_MAX_10_EXP + DBL_DIG);
  setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
}

void NumberSpinBox::stepBy(int steps) {
  QDoubleSpinBox::stepBy(steps);
  // Stepping's float noise (0.1 + 0.2) is not kept: 12 significant digits, as shown.
  setValue(QString::number(value(), 'g', 12).toDouble());
}

// 12 significant digits, trailing zeros dropped: a file's 12.3456789 reads (and is read back)
// as it is, while the float noise of stepping (0.30000000000000004) does not show.
QString NumberSpinBox::textFromValue(double value) const { return QString::number(value, 'g', 12); }

QString NumberSpinBox::numberPart(const QString& text) const {
  QString t = text;
  if (!prefix().isEmpty() && t.startsWith(prefix())) t.remove(0, prefix().size());
  if (!suffix().isEmpty() && t.endsWith(suffix())) t.chop(suffix().size());
  return t.trimmed();
}

double NumberSpinBox::valueFromText(const QString& text) const {
  if (!specialValueText().isEmpty() && text == specialValueText()) return minimum();
  return numberPart(text).toDouble();
}

QValidator::State NumberSpinBox::validate(QString& text, int& /*pos*/) const {
  if (!specialValueText().isEmpty() && text == specialValueText()) return QValidator::Acceptable;
  const QString t = numberPart(text);
  if (t.isEmpty() || t == QLatin1String("-") || t == QLatin1String(".") ||
      t.endsWith(QLatin1Char('e'), Qt::CaseInsensitive) || t.endsWith(QLatin1String("e-")) ||
      t.endsWith(QLatin1String("e+"))) {
    return QValidator::Intermediate;
  }
  bool ok = false;
  const double v = t.toDouble(&ok);
  if (!ok) return QValidator::Invalid;
  return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
}

}  // namespace fitbench
