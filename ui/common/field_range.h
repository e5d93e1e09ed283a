// Fields that never change a value in silence: a spin box given an allowed range shows any number
// typed into it or read from a file as it is, and while the number is outside the range a red
// sentence right under the field says so ("Learning rate must be at most 100; it is 1e+09"), and
// the panel's errorText() refuses the run with it (docs/workbench.md, "Values as they are").
// UI thread only.
#pragma once

#include <QString>
#include <cstdint>

class QAbstractSpinBox;
class QDoubleSpinBox;
class QSpinBox;
class QWidget;

namespace fitbench {

// The field takes every int (its own range), and says when its value is outside [lo, hi].
void allowRange(QSpinBox* spin, int lo, int hi);
// The field takes every finite double, and says when its value is outside [lo, hi] (with
// `lo_open`, (lo, hi]). Called again, it replaces the range.
void allowRange(QDoubleSpinBox* spin, double lo, double hi, bool lo_open = false);
// A field whose value another check judges (a core check with its own sentence): it takes every
// int, so the value reaches that check as it is.
void takeAnyInt(QSpinBox* spin);

// A count from a file as a QSpinBox can hold it (beyond int's range, int's end).
int fieldInt(int64_t value);

// Puts a hidden sentence row under each field of `root` given an allowed range, in its form
// (once the panel's forms are built: a row added to a form laid out before may get no height).
void addRangeRows(QWidget* root);

// The field's sentence while its value is outside its allowed range ("" otherwise).
QString rangeSentence(const QAbstractSpinBox* spin);
// The first sentence of a field under `root` that is not hidden ("" when every value is in range).
QString rangeError(const QWidget* root);

}  // namespace fitbench
