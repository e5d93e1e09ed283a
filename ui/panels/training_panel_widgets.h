// What the Training panel's two files share (training_panel.cpp: the optimizer, loss and fit
// boxes; training_panel_checks.cpp: the callbacks and the checks): field factories and limits.
// Internal to the panel; inline helpers; UI thread only.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QStringList>
#include <limits>

#include "ui/common/field_range.h"
#include "ui/common/number_spin_box.h"

namespace fitbench::training_panel {

inline constexpr int kMaxSeed = std::numeric_limits<int>::max();
inline constexpr int kMaxPatience = 100000;
inline const QStringList kMonitors = {QStringLiteral("val_loss"), QStringLiteral("loss"),
                                      QStringLiteral("val_accuracy"), QStringLiteral("accuracy")};

// The largest float32: what a rate or threshold kept in a float32 variable may be.
inline constexpr double kFloat32Max = std::numeric_limits<float>::max();

inline NumberSpinBox* makeNumber(QWidget* parent, const char* name, double lo, double hi) {
  auto* spin = new NumberSpinBox(parent);
  spin->setObjectName(QLatin1String(name));
  allowRange(spin, lo, hi);
  return spin;
}

inline QSpinBox* makeInteger(QWidget* parent, const char* name, int lo, int hi) {
  auto* spin = new QSpinBox(parent);
  spin->setObjectName(QLatin1String(name));
  allowRange(spin, lo, hi);
  return spin;
}

inline QCheckBox* makeCheck(QWidget* parent, const char* name, const QString& text) {
  auto* check = new QCheckBox(text, parent);
  check->setObjectName(QLatin1String(name));
  return check;
}

inline QComboBox* makeCombo(QWidget* parent, const char* name, const QStringList& items) {
  auto* combo = new QComboBox(parent);
  combo->setObjectName(QLatin1String(name));
  combo->addItems(items);
  // Long names ("sparse_categorical_crossentropy") must not widen the panel past a narrow dock.
  combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo->setMinimumContentsLength(12);
  return combo;
}

// "[x] [ value ]" in one form row: an optional value.
inline QWidget* optionalRow(QWidget* parent, QCheckBox* check, QWidget* field) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  check->setParent(row);
  field->setParent(row);
  layout->addWidget(check);
  layout->addWidget(field, 1);
  return row;
}

inline QLabel* makeIssueLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setVisible(false);
  return label;
}

// A grey note of a file's settings the panel keeps but has no field for.
inline QLabel* makeFromFileLabel(QWidget* parent, const char* name) {
  auto* label = new QLabel(parent);
  label->setObjectName(QLatin1String(name));
  label->setWordWrap(true);
  label->setStyleSheet(QStringLiteral("color: palette(mid);"));
  label->setToolTip(
      QObject::tr("Kept from the file and used as it is; edit the file to change it."));
  label->setVisible(false);
  return label;
}

inline void setComboText(QComboBox* combo, const QString& text) {
  if (combo->findText(text) < 0) combo->addItem(text);
  combo->setCurrentText(text);
}

}  // namespace fitbench::training_panel
