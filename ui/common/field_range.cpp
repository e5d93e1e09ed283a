#include "ui/common/field_range.h"

#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <algorithm>
#include <limits>

namespace fitbench {
namespace {

const char* const kMin = "allowedMin";
const char* const kMax = "allowedMax";
const char* const kMinOpen = "allowedMinOpen";
const char* const kLabel = "rangeLabel";
const char* const kWatched = "rangeWatched";

// The form row that holds `spin` (or the row widget it sits in), and its position.
QFormLayout* formOf(QWidget* spin, int* row) {
  for (QWidget* w = spin; w != nullptr && w->parentWidget() != nullptr; w = w->parentWidget()) {
    if (auto* form = qobject_cast<QFormLayout*>(w->parentWidget()->layout())) {
      QFormLayout::ItemRole role;
      form->getWidgetPosition(w, row, &role);
      if (*row >= 0) return form;
    }
  }
  return nullptr;
}

// The field's name as its form shows it ("Learning rate"), else its object name.
QString fieldName(QWidget* spin) {
  int row = -1;
  if (QFormLayout* form = formOf(spin, &row)) {
    if (QLayoutItem* item = form->itemAt(row, QFormLayout::LabelRole))
      if (auto* label = qobject_cast<QLabel*>(item->widget())) {
        QString text = label->text().remove(QLatin1Char('&')).trimmed();
        if (text.endsWith(QLatin1Char(':'))) text.chop(1);
        if (!text.isEmpty()) return text;
      }
  }
  return spin->objectName().isEmpty() ? QObject::tr("This field") : spin->objectName();
}

// A value as the field shows it; a bound in 6 digits (float32's largest reads 3.40282e+38).
QString numberText(const QAbstractSpinBox* spin, double v, int digits = 12) {
  if (qobject_cast<const QSpinBox*>(spin) != nullptr)
    return QLocale().toString(static_cast<qlonglong>(v));
  return QString::number(v, 'g', digits);
}

double valueOf(const QAbstractSpinBox* spin) {
  if (const auto* s = qobject_cast<const QSpinBox*>(spin)) return s->value();
  if (const auto* d = qobject_cast<const QDoubleSpinBox*>(spin)) return d->value();
  return 0.0;
}

// The red sentence under a field. QFormLayout's height for a width leaves out a wrapped label in
// a row after rows hidden with setRowVisible (the label got 0 px in the Training tab), so this
// one has no height for width: it asks for the height its text takes at the width it is given.
class Sentence : public QLabel {
 public:
  Sentence() {
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setStyleSheet(QStringLiteral("color: #c62828;"));
  }
  bool hasHeightForWidth() const override { return false; }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QLabel::resizeEvent(event);
    fit();
  }
  void changeEvent(QEvent* event) override {
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange) fit();
  }

 public:
  void fit() {
    const int h = QLabel::heightForWidth(std::max(width(), 1));
    if (h > 0 && h != minimumHeight()) setMinimumHeight(h);
  }
};

// The hidden sentence row under the field, made once, when the field is in its form.
QLabel* labelOf(QAbstractSpinBox* spin) {
  if (auto* label = qobject_cast<QLabel*>(spin->property(kLabel).value<QObject*>())) return label;
  int row = -1;
  QFormLayout* form = formOf(spin, &row);
  if (form == nullptr) return nullptr;
  auto* label = new Sentence;
  label->setObjectName(spin->objectName() + QStringLiteral("RangeError"));
  form->insertRow(row + 1, QString(), label);
  form->setRowVisible(label, false);
  spin->setProperty(kLabel, QVariant::fromValue<QObject*>(label));
  return label;
}

// Shows or hides the sentence under the field (and as its tooltip).
void update(QAbstractSpinBox* spin) {
  const QString sentence = rangeSentence(spin);
  QLabel* label = sentence.isEmpty()
                      ? qobject_cast<QLabel*>(spin->property(kLabel).value<QObject*>())
                      : labelOf(spin);
  // The tooltip: the sentence while there is one, the field's own tip again after.
  const QString shown = spin->property("rangeTip").toString();
  if (!sentence.isEmpty()) {
    if (shown.isEmpty() || spin->toolTip() != shown)
      spin->setProperty("rangeBaseTip", spin->toolTip());
    spin->setToolTip(sentence);
    spin->setProperty("rangeTip", sentence);
  } else if (!shown.isEmpty()) {
    if (spin->toolTip() == shown) spin->setToolTip(spin->property("rangeBaseTip").toString());
    spin->setProperty("rangeTip", QString());
  }
  if (label == nullptr) return;
  label->setText(sentence.isEmpty() ? QString() : QStringLiteral("✖ ") + sentence);
  if (auto* fitted = dynamic_cast<Sentence*>(label)) fitted->fit();
  int row = -1;
  if (QFormLayout* form = formOf(label, &row)) form->setRowVisible(label, !sentence.isEmpty());
}

// A field switched off (an optional setting unticked) says nothing; switched on, it speaks again.
class EnabledWatch : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::EnabledChange)
      if (auto* spin = qobject_cast<QAbstractSpinBox*>(watched)) update(spin);
    return false;
  }
};

void watch(QAbstractSpinBox* spin) {
  spin->setProperty(kWatched, true);
  spin->installEventFilter(new EnabledWatch(spin));
}

}  // namespace

void allowRange(QSpinBox* spin, int lo, int hi) {
  spin->setRange(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  spin->setProperty(kMin, lo);
  spin->setProperty(kMax, hi);
  if (!spin->property(kWatched).toBool()) {
    watch(spin);
    QObject::connect(spin, &QSpinBox::valueChanged, spin, [spin] { update(spin); });
  }
  update(spin);
}

void allowRange(QDoubleSpinBox* spin, double lo, double hi, bool lo_open) {
  spin->setRange(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
  spin->setProperty(kMin, lo);
  spin->setProperty(kMax, hi);
  spin->setProperty(kMinOpen, lo_open);
  if (!spin->property(kWatched).toBool()) {
    watch(spin);
    QObject::connect(spin, &QDoubleSpinBox::valueChanged, spin, [spin] { update(spin); });
  }
  update(spin);
}

void takeAnyInt(QSpinBox* spin) {
  spin->setRange(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
}

int fieldInt(int64_t value) {
  return static_cast<int>(
      std::clamp<int64_t>(value, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

QString rangeSentence(const QAbstractSpinBox* spin) {
  const QVariant lo = spin->property(kMin), hi = spin->property(kMax);
  if (!lo.isValid() || !hi.isValid() || !spin->isEnabled()) return {};
  const double v = valueOf(spin), min = lo.toDouble(), max = hi.toDouble();
  const bool open = spin->property(kMinOpen).toBool();
  if ((open ? v > min : v >= min) && v <= max) return {};
  const QString name = fieldName(const_cast<QAbstractSpinBox*>(spin));
  if (open)
    return QObject::tr("%1 must be above %2 and at most %3; it is %4.")
        .arg(name, numberText(spin, min, 6), numberText(spin, max, 6), numberText(spin, v));
  const bool noMin =
      min <= std::numeric_limits<int>::min() || min == std::numeric_limits<double>::lowest();
  if (noMin)
    return QObject::tr("%1 must be at most %2; it is %3.")
        .arg(name, numberText(spin, max, 6), numberText(spin, v));
  return QObject::tr("%1 must be from %2 to %3; it is %4.")
      .arg(name, numberText(spin, min, 6), numberText(spin, max, 6), numberText(spin, v));
}

void addRangeRows(QWidget* root) {
  for (QAbstractSpinBox* spin : root->findChildren<QAbstractSpinBox*>())
    if (spin->property(kMin).isValid()) labelOf(spin);
}

QString rangeError(const QWidget* root) {
  for (const QAbstractSpinBox* spin : root->findChildren<QAbstractSpinBox*>()) {
    if (!spin->isVisibleTo(root) && spin != root) continue;
    if (QString s = rangeSentence(spin); !s.isEmpty()) return s;
  }
  return {};
}

}  // namespace fitbench
