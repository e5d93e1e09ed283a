// The red sentence a panel shows beside a field whose value cannot run (hidden while empty), the
// same in every panel. Inline helper; UI thread only.
#pragma once

#include <QLabel>

namespace fitbench {

inline QLabel* makeFieldErrorLabel(QWidget* parent = nullptr) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setStyleSheet(QStringLiteral("color: #c62828;"));
  label->hide();
  return label;
}

}  // namespace fitbench
