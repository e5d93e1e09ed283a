#include "ui/panels/strategy_panel.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/base/error.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/spec/strategies.h"
#include "ui/common/field_error.h"
#include "ui/common/field_range.h"
#include "ui/common/glossary.h"
#include "ui/common/text_style.h"

namespace fitbench {

namespace {

// The most devices the mesh fields show on an axis as a file's mesh (a larger one is kept as the
// file has it, with a note); typed, any number is shown and the mesh's check judges it.
constexpr int kMaxMeshAxis = 16;

// The strategy the combo box shows (no distribution when it shows nothing known).
const StrategyInfo& strategyOf(const QComboBox* combo) {
  const StrategyInfo* info = find_strategy_by_class(combo->currentData().toString().toStdString());
  return info != nullptr ? *info : strategies().front();
}

// What a strategy does: the glossary's words for the two distributions, else the registry's.
QString strategyTip(const StrategyInfo& info) {
  if (info.class_name == kDataParallel) return glossary::dataParallel();
  if (info.class_name == kModelParallel) return glossary::modelParallel();
  return QCoreApplication::translate("StrategyPanel", std::string(info.description).c_str());
}
enum LayoutColumn { kKey = 0, kAxes = 1, kMatches = 2 };
const QColor kErrorColor(0xb0, 0x00, 0x20);
const QColor kWarningColor(0xb2, 0x6a, 0x00);
}  // namespace

QString StrategyPanel::axesToText(const std::vector<std::string>& axes) {
  QStringList parts;
  for (const std::string& a : axes)
    parts << (a.empty() ? QStringLiteral("None") : QString::fromStdString(a));
  return parts.join(QStringLiteral(", "));
}

std::vector<std::string> StrategyPanel::axesFromText(const QString& text) {
  std::vector<std::string> axes;
  QString t = text.trimmed();
  if (t.startsWith('(') && t.endsWith(')')) t = t.mid(1, t.size() - 2);
  if (t.trimmed().isEmpty()) return axes;
  for (QString part : t.split(',')) {
    part = part.trimmed();
    if ((part.startsWith('"') && part.endsWith('"')) ||
        (part.startsWith('\'') && part.endsWith('\'')))
      part = part.mid(1, part.size() - 2);
    axes.push_back(part == QStringLiteral("None") ? std::string() : part.toStdString());
  }
  // "(None, 'model',)": Python's trailing comma.
  if (axes.size() > 1 && axes.back().empty() && text.trimmed().endsWith(QStringLiteral(",)")))
    axes.pop_back();
  return axes;
}

StrategyPanel::StrategyPanel(QWidget* parent) : QWidget(parent) {
  // The Devices panel's margins at the sides and bottom (it sits under that panel on one tab).
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(style()->pixelMetric(QStyle::PM_LayoutLeftMargin), 0,
                             style()->pixelMetric(QStyle::PM_LayoutRightMargin),
                             style()->pixelMetric(QStyle::PM_LayoutBottomMargin));

  auto* box = new QGroupBox(tr("Strategy"), this);
  auto* boxLayout = new QVBoxLayout(box);
  m_strategy = new QComboBox(box);
  m_strategy->setObjectName(QStringLiteral("strategy"));
  // The strategies' registry (core/distribution/spec/strategies.h) names them.
  for (const StrategyInfo& info : strategies()) {
    m_strategy->addItem(
        QCoreApplication::translate("StrategyPanel", std::string(info.label).c_str()),
        toQString(info.class_name));
    m_strategy->setItemData(m_strategy->count() - 1, strategyTip(info), Qt::ToolTipRole);
  }
  boxLayout->addWidget(m_strategy);
  m_explain = new QLabel(box);
  m_explain->setWordWrap(true);
  boxLayout->addWidget(m_explain);
  layout->addWidget(box);

  m_meshBox = new QGroupBox(tr("Device mesh"), this);
  m_meshBox->setToolTip(glossary::mesh());
  auto* meshForm = new QFormLayout(m_meshBox);
  auto* shapeRow = new QHBoxLayout;
  m_rows = new QSpinBox(m_meshBox);
  m_rows->setObjectName(QStringLiteral("meshRows"));
  takeAnyInt(m_rows);  // the mesh's check says what a shape takes
  m_cols = new QSpinBox(m_meshBox);
  m_cols->setObjectName(QStringLiteral("meshCols"));
  takeAnyInt(m_cols);
  shapeRow->addWidget(m_rows);
  shapeRow->addWidget(new QLabel(QStringLiteral("×"), m_meshBox));
  shapeRow->addWidget(m_cols);
  shapeRow->addStretch(1);
  meshForm->addRow(tr("Shape"), shapeRow);
  auto* namesRow = new QHBoxLayout;
  m_axis0 = new QLineEdit(m_meshBox);
  m_axis1 = new QLineEdit(m_meshBox);
  namesRow->addWidget(m_axis0);
  namesRow->addWidget(m_axis1);
  meshForm->addRow(tr("Axis names"), namesRow);
  m_batchAxis = new QComboBox(m_meshBox);
  m_batchAxis->setObjectName(QStringLiteral("batchAxis"));
  m_batchAxis->setToolTip(tr("The mesh axis the batch is split along (batch_dim_name)."));
  meshForm->addRow(tr("Batch axis"), m_batchAxis);
  m_meshNote = new QLabel(m_meshBox);
  m_meshNote->setObjectName(QStringLiteral("meshNote"));
  m_meshNote->setWordWrap(true);
  m_meshNote->hide();
  meshForm->addRow(m_meshNote);
  m_meshError = makeFieldErrorLabel(m_meshBox);
  m_meshError->setObjectName(QStringLiteral("meshError"));
  meshForm->addRow(m_meshError);
  layout->addWidget(m_meshBox);

  m_layoutBox = new QGroupBox(tr("Layout map"), this);
  m_layoutBox->setToolTip(glossary::layout());
  auto* layoutLayout = new QVBoxLayout(m_layoutBox);
  m_table = new QTableWidget(0, 3, m_layoutBox);
  m_table->setHorizontalHeaderLabels({tr("Variable regex"), tr("Axes"), tr("Matches")});
  m_table->horizontalHeader()->setSectionResizeMode(kKey, QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(kAxes, QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(kMatches, QHeaderView::Stretch);
  m_table->verticalHeader()->setVisible(false);
  m_table->setMinimumHeight(130);
  m_table->horizontalHeaderItem(kKey)->setToolTip(
      tr("A variable path such as sequential/dense/kernel, or a regular expression searched in "
         "each path (as Keras's LayoutMap does)."));
  m_table->horizontalHeaderItem(kAxes)->setToolTip(
      tr("One mesh axis per dimension of the variable, None for a dimension every device holds "
         "whole: \"None, model\" splits a kernel by its output units."));
  layoutLayout->addWidget(m_table);
  auto* buttons = new QHBoxLayout;
  m_add = new QPushButton(tr("Add"), m_layoutBox);
  m_remove = new QPushButton(tr("Remove"), m_layoutBox);
  m_suggest = new QPushButton(tr("Fill default"), m_layoutBox);
  m_suggest->setObjectName(QStringLiteral("fillDefaultLayout"));
  m_suggest->setToolTip(
      tr("Fill the map with the rules a run uses when the map is empty: every Dense kernel "
         "whose units divide by the model axis is split by its output units; the rest is "
         "replicated."));
  buttons->addWidget(m_add);
  buttons->addWidget(m_remove);
  buttons->addStretch(1);
  buttons->addWidget(m_suggest);
  layoutLayout->addLayout(buttons);
  m_messages = new QLabel(m_layoutBox);
  m_messages->setObjectName(QStringLiteral("layoutMessages"));
  m_messages->setWordWrap(true);
  m_messages->setTextFormat(Qt::RichText);
  layoutLayout->addWidget(m_messages);
  layout->addWidget(m_layoutBox);

  setSpec(DistributionSpec{});
  connectSignals();
}

void StrategyPanel::connectSignals() {
  connect(m_strategy, &QComboBox::currentIndexChanged, this, [this] {
    QString note;
    if (!m_filling && strategyOf(m_strategy).has_mesh) {
      // A mesh for the devices there are (2 x 2 for 4), unless the file gave one.
      if (!m_keepFileMesh) {
        m_meshFollowsDevices = true;
        setMeshForDevices();
      }
      if (m_table->rowCount() == 0) note = fillDenseLayout();
    }
    updateVisibility();
    edited();
    showFillNote(note);
  });
  // Editing the mesh's fields replaces a kept file mesh with what they show.
  const auto meshEdited = [this] {
    if (m_filling) return;
    m_keepFileMesh = false;
    m_meshFollowsDevices = false;
    m_meshNote->hide();
    edited();
  };
  connect(m_rows, &QSpinBox::valueChanged, this, meshEdited);
  connect(m_cols, &QSpinBox::valueChanged, this, meshEdited);
  connect(m_axis0, &QLineEdit::textEdited, this, [this, meshEdited] {
    updateBatchAxes();
    meshEdited();
  });
  connect(m_axis1, &QLineEdit::textEdited, this, [this, meshEdited] {
    updateBatchAxes();
    meshEdited();
  });
  connect(m_batchAxis, &QComboBox::currentIndexChanged, this, meshEdited);
  connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (item->column() != kMatches) edited();
  });
  connect(m_add, &QPushButton::clicked, this, [this] {
    addRow(QStringLiteral("dense.*kernel"), QStringLiteral("None, %1").arg(m_axis1->text()));
    m_table->editItem(m_table->item(m_table->rowCount() - 1, kKey));
    edited();
  });
  connect(m_remove, &QPushButton::clicked, this, [this] {
    const int row = m_table->currentRow();
    if (row < 0) return;
    m_table->removeRow(row);
    edited();
  });
  connect(m_suggest, &QPushButton::clicked, this, [this] {
    const QString note = fillDenseLayout();
    edited();
    showFillNote(note);
  });
}

void StrategyPanel::addRow(const QString& key, const QString& axes) {
  const bool filling = m_filling;
  m_filling = true;
  const int row = m_table->rowCount();
  m_table->insertRow(row);
  m_table->setItem(row, kKey, new QTableWidgetItem(key));
  m_table->setItem(row, kAxes, new QTableWidgetItem(axes));
  auto* matches = new QTableWidgetItem;
  matches->setFlags(Qt::ItemIsEnabled);
  m_table->setItem(row, kMatches, matches);
  m_filling = filling;
}

QString StrategyPanel::fillDenseLayout() {
  // The plan's own rule (fill_default_layout), so the rows are what an empty map runs with.
  DistributionSpec filled = spec();
  filled.layout_map.clear();
  std::vector<VariableInfo> variables;
  try {
    variables = model_variables(m_model, m_features);
    fill_default_layout(filled, variables);
  } catch (const InputError&) {
    return {};  // the model panel shows why the model has no variables yet
  }
  const bool filling = m_filling;
  m_filling = true;
  m_table->setRowCount(0);
  for (const auto& [key, axes] : filled.layout_map) {
    QStringList names;
    for (const std::string& a : axes)
      names << (a.empty() ? QStringLiteral("None") : QString::fromStdString(a));
    addRow(QString::fromStdString(key), names.join(QStringLiteral(", ")));
  }
  m_filling = filling;
  if (!filled.layout_map.empty() || filled.mesh_shape.size() != 2) return {};
  // Nothing to split: say why, with the units there are.
  QStringList units;
  for (const VariableInfo& v : variables)
    if (v.shape.size() == 2) units << QString::number(v.shape[1]);
  const int model = filled.mesh_shape[1];
  return units.isEmpty()
             ? tr("Fill default found no Dense kernel to split: the model has none.")
             : tr("Fill default split nothing: no Dense layer's units (%1) divide by the %2 "
                  "axis's %3 devices (a layer of 1 unit is never split). Change the mesh's %2 "
                  "axis or the units, or write rules by hand.")
                   .arg(units.join(QStringLiteral(", ")), m_axis1->text())
                   .arg(model);
}

void StrategyPanel::showFillNote(const QString& note) {
  if (note.isEmpty()) return;
  m_fillNote = note;
  validate();
}

void StrategyPanel::setMeshForDevices() {
  // The most square mesh of the devices, its larger side the model axis: 1 x 2, 2 x 2, 2 x 4,
  // 3 x 3, 4 x 4 (docs/window.md). The fields hold up to 16 per axis.
  const int n = std::max(1, m_devices);
  int rows = 1;
  for (int r = 1; r * r <= n; ++r)
    if (n % r == 0) rows = r;
  const bool filling = m_filling;
  m_filling = true;
  m_rows->setValue(rows);
  m_cols->setValue(n / rows);
  m_filling = filling;
}

void StrategyPanel::updateBatchAxes() {
  const QString current = m_batchAxis->currentText();
  const bool filling = m_filling;
  m_filling = true;
  m_batchAxis->clear();
  m_batchAxis->addItem(m_axis0->text());
  m_batchAxis->addItem(m_axis1->text());
  m_batchAxis->setCurrentIndex(std::max(0, m_batchAxis->findText(current)));
  m_filling = filling;
}

void StrategyPanel::updateVisibility() {
  const StrategyInfo& s = strategyOf(m_strategy);
  m_meshBox->setVisible(s.has_mesh);
  m_layoutBox->setVisible(s.has_mesh);
  m_explain->setText(keepHyphenated(strategyTip(s)));
}

void StrategyPanel::edited() {
  if (m_filling) return;
  m_fillNote.clear();
  validate();
  emit changed();
}

void StrategyPanel::setSpec(const DistributionSpec& spec) {
  m_meshFollowsDevices = false;
  m_fillNote.clear();
  m_filling = true;
  m_strategy->setCurrentIndex(
      std::max(0, m_strategy->findData(QString::fromStdString(spec.class_name))));
  // A mesh the fields cannot show is kept as the file has it (a run or Save then gives the
  // CLI's error); the fields show the default 1 x 2 until they are edited.
  const auto fits = [](int v) { return v >= 1 && v <= kMaxMeshAxis; };
  m_keepFileMesh = spec.class_name == kModelParallel &&
                   (spec.mesh_shape.size() != 2 || spec.axis_names.size() != 2 ||
                    !std::all_of(spec.mesh_shape.begin(), spec.mesh_shape.end(), fits));
  m_fileShape = spec.mesh_shape;
  m_fileAxes = spec.axis_names;
  m_fileBatchDim = spec.batch_dim_name;
  if (m_keepFileMesh) {
    QStringList dims, names;
    for (int d : spec.mesh_shape) dims << QString::number(d);
    for (const std::string& a : spec.axis_names) names << QString::fromStdString(a);
    m_meshNote->setText(
        tr("The file's mesh, shape (%1) with axes (%2), is kept as it is: these fields edit "
           "meshes of 2 axes of 1 to 16 devices each. Editing the mesh's fields replaces it.")
            .arg(dims.join(QStringLiteral(", ")), names.join(QStringLiteral(", "))));
  }
  m_meshNote->setVisible(m_keepFileMesh);
  const std::vector<int> shape =
      spec.mesh_shape.size() == 2 && !m_keepFileMesh ? spec.mesh_shape : std::vector<int>{1, 2};
  m_rows->setValue(shape[0]);
  m_cols->setValue(shape[1]);
  m_axis0->setText(spec.axis_names.size() == 2 ? QString::fromStdString(spec.axis_names[0])
                                               : QStringLiteral("batch"));
  m_axis1->setText(spec.axis_names.size() == 2 ? QString::fromStdString(spec.axis_names[1])
                                               : QStringLiteral("model"));
  updateBatchAxes();
  if (!spec.batch_dim_name.empty())
    m_batchAxis->setCurrentIndex(
        std::max(0, m_batchAxis->findText(QString::fromStdString(spec.batch_dim_name))));
  m_table->setRowCount(0);
  for (const auto& [key, axes] : spec.layout_map)
    addRow(QString::fromStdString(key), axesToText(axes));
  updateVisibility();
  m_filling = false;
  validate();
}

DistributionSpec StrategyPanel::spec() const {
  DistributionSpec spec;
  spec.class_name = m_strategy->currentData().toString().toStdString();
  if (spec.class_name != kModelParallel) return spec;
  spec.mesh_shape = {m_rows->value(), m_cols->value()};
  spec.axis_names = {m_axis0->text().trimmed().toStdString(),
                     m_axis1->text().trimmed().toStdString()};
  // The default (the first axis) is written as nothing, as Keras's argument default.
  if (m_batchAxis->currentIndex() > 0)
    spec.batch_dim_name = m_batchAxis->currentText().toStdString();
  if (m_keepFileMesh) {
    spec.mesh_shape = m_fileShape;
    spec.axis_names = m_fileAxes;
    spec.batch_dim_name = m_fileBatchDim;
  }
  for (int row = 0; row < m_table->rowCount(); ++row) {
    if (!isEntryRow(row)) continue;
    const QTableWidgetItem* key = m_table->item(row, kKey);
    const QTableWidgetItem* axes = m_table->item(row, kAxes);
    // The key as typed: a regex's spaces are part of it, and "" (which matches every path) is a
    // key like any other.
    spec.layout_map.emplace_back(key ? key->text().toStdString() : std::string(),
                                 axesFromText(axes ? axes->text() : QString()));
  }
  return spec;
}

bool StrategyPanel::isEntryRow(int row) const {
  // A row left blank (a rule just added) is not an entry; a key or axes make it one.
  const QTableWidgetItem* key = m_table->item(row, kKey);
  const QTableWidgetItem* axes = m_table->item(row, kAxes);
  return (key && !key->text().trimmed().isEmpty()) || (axes && !axes->text().trimmed().isEmpty());
}

void StrategyPanel::setModelContext(const ModelSpec& model, int inputFeatures, int devices) {
  m_model = model;
  m_features = inputFeatures;
  const bool devicesChanged = devices != m_devices;
  m_devices = devices;
  // The window reads the mesh from spec() after this call (no changed(): it is in its update).
  if (devicesChanged && m_meshFollowsDevices && strategyOf(m_strategy).has_mesh)
    setMeshForDevices();
  validate();
}

QStringList StrategyPanel::rowMatches(int row) const {
  return row >= 0 && size_t(row) < m_matches.size() ? m_matches[size_t(row)] : QStringList();
}

void StrategyPanel::validate() {
  m_error.clear();
  m_matches.assign(size_t(m_table->rowCount()), {});
  const DistributionSpec spec = this->spec();
  const bool filling = m_filling;
  m_filling = true;
  for (int row = 0; row < m_table->rowCount(); ++row) {
    if (QTableWidgetItem* item = m_table->item(row, kMatches)) {
      item->setText(QString());
      item->setToolTip(QString());
    }
  }
  m_filling = filling;
  m_meshError->clear();
  m_meshError->hide();
  if (spec.class_name != kModelParallel) {
    m_messages->clear();
    return;
  }
  std::vector<VariableInfo> variables;
  QStringList lines;
  try {
    variables = model_variables(m_model, m_features);
  } catch (const InputError& e) {
    // The model panel shows its own errors; the map cannot be checked until they are fixed.
    lines << tr("<span style=\"color:%1\">The layout map is checked once the model is valid: "
                "%2</span>")
                 .arg(kWarningColor.name(), QString::fromStdString(e.what()).toHtmlEscaped());
    m_messages->setText(lines.join(QStringLiteral("<br>")));
    return;
  }
  // An empty map runs with the default rules (fill_default_layout): checked and counted as such.
  DistributionSpec checked = spec;
  const bool defaulted = fill_default_layout(checked, variables);
  const LayoutCheck check = check_layout_map(variables, checked, m_devices);
  // The mesh's own first error (not a layout-map entry's) also beside the mesh's fields.
  for (const LayoutDiagnostic& d : check.errors) {
    if (d.entry >= 0) continue;
    m_meshError->setText(QStringLiteral("✖ ") + QString::fromStdString(d.message));
    m_meshError->show();
    break;
  }

  // Table rows that hold an entry (blank rows are skipped by spec()).
  std::vector<int> rowOfEntry;
  for (int row = 0; row < m_table->rowCount(); ++row)
    if (isEntryRow(row)) rowOfEntry.push_back(row);
  m_filling = true;
  for (size_t e = 0; e < check.entries.size() && e < rowOfEntry.size(); ++e) {
    const LayoutEntryCheck& entry = check.entries[e];
    const int row = rowOfEntry[e];
    QStringList names;
    for (const std::string& v : entry.variables) names << QString::fromStdString(v);
    m_matches[size_t(row)] = names;
    QTableWidgetItem* item = m_table->item(row, kMatches);
    if (!item) continue;
    QString text = names.isEmpty() ? tr("no variable") : names.join(QStringLiteral(", "));
    QColor color = palette().color(QPalette::Text);
    QStringList tips = names;
    if (!entry.warning.empty()) {
      color = kWarningColor;
      tips << QString::fromStdString(entry.warning);
    }
    for (const LayoutDiagnostic& d : check.errors) {
      if (d.entry != int(e)) continue;
      color = kErrorColor;
      text = QStringLiteral("✖ ") + QString::fromStdString(d.message);
      tips << QString::fromStdString(d.message);
    }
    item->setText(text);
    item->setForeground(color);
    item->setToolTip(tips.join('\n'));
  }
  m_filling = filling;

  for (const LayoutDiagnostic& d : check.errors) {
    lines << QStringLiteral("<span style=\"color:%1\">✖ %2</span>")
                 .arg(kErrorColor.name(), QString::fromStdString(d.text()).toHtmlEscaped());
  }
  for (const LayoutDiagnostic& d : check.warnings) {
    lines << QStringLiteral("<span style=\"color:%1\">⚠ %2</span>")
                 .arg(kWarningColor.name(), QString::fromStdString(d.text()).toHtmlEscaped());
  }
  if (check.ok()) {
    int sharded = 0;
    for (const VariableLayout& v : check.variables) {
      bool any = false;
      for (const std::string& a : v.axes) any = any || !a.empty();
      sharded += any;
    }
    lines.prepend(tr("%1 of %2 variables sharded; the rest are replicated on every device.")
                      .arg(sharded)
                      .arg(check.variables.size()));
    if (defaulted)
      lines.prepend(tr("No rules: a run uses the default layout (Fill default shows it)."));
  } else {
    m_error = QString::fromStdString(check.errors.front().text());
  }
  if (!m_fillNote.isEmpty())
    lines.prepend(QStringLiteral("<span style=\"color:%1\">⚠ %2</span>")
                      .arg(kWarningColor.name(), m_fillNote.toHtmlEscaped()));
  m_messages->setText(lines.join(QStringLiteral("<br>")));
}

void StrategyPanel::setReadOnly(bool readOnly) {
  for (QWidget* w : std::initializer_list<QWidget*>{m_strategy, m_rows, m_cols, m_axis0, m_axis1,
                                                    m_batchAxis, m_add, m_remove, m_suggest})
    w->setEnabled(!readOnly);
  m_table->setEditTriggers(readOnly ? QAbstractItemView::NoEditTriggers
                                    : QAbstractItemView::DoubleClicked |
                                          QAbstractItemView::EditKeyPressed |
                                          QAbstractItemView::AnyKeyPressed);
}

}  // namespace fitbench
