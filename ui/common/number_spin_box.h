// A QDoubleSpinBox that shows its value with up to 12 significant digits in %g form ("0.2",
// "0.004", "1e-07", "0.333333") and keeps the value it is given as it is (1e-30 included; a
// step rounds to the 12 digits shown), so learning rates, epsilons, speeds and splits read well
// and a file's value is neither rounded on screen nor changed when the experiment is saved
// again. Prefix, suffix and special-value text work as
// in QDoubleSpinBox. Widget; UI thread only.
#pragma once

#include <QDoubleSpinBox>

namespace fitbench {

class NumberSpinBox : public QDoubleSpinBox {
 public:
  explicit NumberSpinBox(QWidget* parent = nullptr);
  QString textFromValue(double value) const override;
  double valueFromText(const QString& text) const override;
  QValidator::State validate(QString& text, int& pos) const override;
  void stepBy(int steps) override;

 private:
  // The number's part of a shown text: without prefix and suffix, trimmed.
  QString numberPart(const QString& text) const;
};

}  // namespace fitbench
