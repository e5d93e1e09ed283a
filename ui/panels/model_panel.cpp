#include "ui/panels/model_panel.h"

#include <QEvent>
#include <QFontDatabase>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <set>

#include "core/base/error.h"
#include "core/losses/loss_registry.h"
#include "core/nn/activations.h"
#include "core/nn/layer_registry.h"
#include "core/nn/network.h"
#include "core/training/summary_format.h"
#include "ui/common/field_range.h"
#include "ui/common/text_style.h"
#include "ui/common/zoom.h"
#include "ui/panels/layer_editor.h"

namespace fitbench {

namespace {

constexpr int kMinSummaryLine = 40;

// Keras's automatic name prefix per class, from the layer registry (as core/nn/network.cpp).
std::string snakeName(const std::string& className) {
  const LayerInfo* info = find_layer_class(className);
  return std::string(info != nullptr ? info->auto_name : "input_layer");
}

}  // namespace

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);

  auto* layersBox = new QGroupBox(tr("Layers"), this);
  auto* layersLayout = new QVBoxLayout(layersBox);
  m_list = new QListWidget(layersBox);
  m_list->setDragDropMode(QAbstractItemView::InternalMove);
  m_list->setDefaultDropAction(Qt::MoveAction);
  m_list->setSelectionMode(QAbstractItemView::SingleSelection);
  m_list->setIconSize(QSize(16, 16));
  m_list->setToolTip(tr("The model's layers from input to output; drag a layer to move it."));
  layersLayout->addWidget(m_list);

  auto* buttons = new QHBoxLayout;
  m_add = new QPushButton(tr("Add"), layersBox);
  m_add->setToolTip(tr("Add a layer after the selected one."));
  auto* menu = new QMenu(m_add);
  // The layer registry's classes (core/nn/layer_registry.h), but the input, which the data makes.
  for (const LayerInfo& info : layer_classes()) {
    if (info.input) continue;
    QAction* action = menu->addAction(toQString(info.class_name));
    action->setData(toQString(info.class_name));
    action->setToolTip(toQString(info.description));
  }
  menu->setToolTipsVisible(true);
  m_add->setMenu(menu);
  m_remove = new QPushButton(style()->standardIcon(QStyle::SP_TrashIcon), tr("Remove"), layersBox);
  // Arrows only, so the row fits a narrow dock; the tooltips and accessible names say it.
  m_up = new QPushButton(style()->standardIcon(QStyle::SP_ArrowUp), QString(), layersBox);
  m_down = new QPushButton(style()->standardIcon(QStyle::SP_ArrowDown), QString(), layersBox);
  m_up->setAccessibleName(tr("Move up"));
  m_down->setAccessibleName(tr("Move down"));
  m_remove->setToolTip(tr("Remove the selected layer."));
  m_up->setToolTip(tr("Move the selected layer towards the input."));
  m_down->setToolTip(tr("Move the selected layer towards the output."));
  buttons->addWidget(m_add);
  buttons->addWidget(m_remove);
  buttons->addWidget(m_up);
  buttons->addWidget(m_down);
  buttons->addStretch(1);
  layersLayout->addLayout(buttons);

  m_issuesLabel = new QLabel(layersBox);
  m_issuesLabel->setWordWrap(true);
  m_issuesLabel->setTextFormat(Qt::RichText);
  layersLayout->addWidget(m_issuesLabel);
  layout->addWidget(layersBox);

  m_editor = new LayerEditor(this);
  layout->addWidget(m_editor);

  auto* summaryBox = new QGroupBox(tr("Summary"), this);
  auto* summaryLayout = new QVBoxLayout(summaryBox);
  m_summary = new QPlainTextEdit(summaryBox);
  m_summary->setReadOnly(true);
  m_summary->setLineWrapMode(QPlainTextEdit::NoWrap);
  setZoomedFont(m_summary, QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_summary->setToolTip(tr("model.summary() as Keras prints it, updated on every edit."));
  m_summary->installEventFilter(this);
  summaryLayout->addWidget(m_summary);
  layout->addWidget(summaryBox, 1);

  connectSignals();
  rebuildList(-1);
}

void ModelPanel::connectSignals() {
  connect(m_list, &QListWidget::itemSelectionChanged, this, &ModelPanel::onSelectionChanged);
  // A drag moves rows inside the list; the spec follows once the drop has finished.
  connect(m_list->model(), &QAbstractItemModel::rowsMoved, this, &ModelPanel::syncOrderFromList,
          Qt::QueuedConnection);
  connect(m_add->menu(), &QMenu::triggered, this,
          [this](QAction* action) { addLayer(action->data().toString()); });
  connect(m_remove, &QPushButton::clicked, this, &ModelPanel::removeSelectedLayer);
  connect(m_up, &QPushButton::clicked, this, [this] { moveSelectedLayer(-1); });
  connect(m_down, &QPushButton::clicked, this, [this] { moveSelectedLayer(1); });
  connect(m_editor, &LayerEditor::layerEdited, this, &ModelPanel::onLayerEdited);
}

void ModelPanel::setSpec(const ModelSpec& spec) {
  m_spec = spec;
  m_input.reset();
  if (!m_spec.layers.empty() && m_spec.layers.front().class_name == kInputLayer) {
    m_input = m_spec.layers.front();
    m_spec.layers.erase(m_spec.layers.begin());
  }
  rebuildList(m_spec.layers.empty() ? -1 : 0);
}

ModelSpec ModelPanel::spec() const {
  ModelSpec out = m_spec;
  if (m_input) {
    LayerSpec input = *m_input;
    if (m_inputFeatures > 0) input.shape = inputShape();
    out.layers.insert(out.layers.begin(), input);
  }
  return out;
}

void ModelPanel::markSaved() {
  // What was saved is the input shape: the file no longer declares another.
  if (m_input && m_inputFeatures > 0) m_input->shape = inputShape();
  refresh();
}

void ModelPanel::setInputFeatures(int features) {
  setInputShape(features > 0 ? std::vector<int64_t>{features} : std::vector<int64_t>{});
}

void ModelPanel::setInputShape(const std::vector<int64_t>& shape) {
  m_inputShape = shape;
  m_inputFeatures = shape.empty() ? 0 : static_cast<int>(shape_size(shape));
  refresh();
}

std::vector<int64_t> ModelPanel::inputShape() const {
  if (m_inputShape.empty()) return m_input ? m_input->shape : std::vector<int64_t>{};
  if (m_input && !m_input->shape.empty() && shape_size(m_input->shape) == m_inputFeatures &&
      (m_input->shape.size() == 1 || m_input->shape == m_inputShape))
    return m_input->shape;
  return m_inputShape;
}

void ModelPanel::setTargetInfo(int targetColumns, int classes, const LossSpec& loss) {
  m_hasTargetInfo = true;
  m_targetColumns = std::max(targetColumns, 0);
  m_classes = std::max(classes, 0);
  m_loss = loss;
  refresh();
}

void ModelPanel::setReadOnly(bool readOnly) {
  m_readOnly = readOnly;
  m_list->setDragDropMode(readOnly ? QAbstractItemView::NoDragDrop
                                   : QAbstractItemView::InternalMove);
  m_editor->setReadOnly(readOnly);
  updateButtons();
}

QString ModelPanel::errorText() const {
  if (const QString range = rangeError(this); !range.isEmpty()) return range;
  for (const ModelIssue& issue : m_issues) {
    if (issue.error) return issue.text;
  }
  return {};
}

QString ModelPanel::summaryText() const { return m_summary->toPlainText(); }

int ModelPanel::inputUnits() const {
  if (m_inputFeatures > 0) return m_inputFeatures;
  if (m_input && m_input->shape.size() == 1 && m_input->shape[0] > 0)
    return static_cast<int>(m_input->shape[0]);
  return 0;
}

QStringList ModelPanel::layerNames() const {
  // core/nn/network.cpp: explicit names are reserved first; an unnamed layer takes its class's
  // next free name (dense, dense_1, dense_2, ...).
  std::set<std::string> used;
  for (const LayerSpec& l : m_spec.layers) {
    if (!l.name.empty()) used.insert(l.name);
  }
  std::map<std::string, int> counters;
  QStringList names;
  for (const LayerSpec& l : m_spec.layers) {
    std::string name = l.name;
    if (name.empty()) {
      const std::string base = snakeName(l.class_name);
      for (;;) {
        int& n = counters[base];
        std::string candidate = n == 0 ? base : base + "_" + std::to_string(n);
        ++n;
        if (used.insert(candidate).second) {
          name = candidate;
          break;
        }
      }
    }
    names << QString::fromStdString(name);
  }
  return names;
}

QString ModelPanel::rowText(int index) const {
  // "Dense(8, relu)", "Conv2D(16, 3x3, same, relu)", "Dropout(0.2)", "Reshape(7, 112)",
  // "Rescaling(0.00392157)": the class and its leading number, window, activation and shape
  // fields (strides, padding and an offset when not their defaults).
  const LayerSpec& l = m_spec.layers[index];
  QStringList args;
  if (const LayerInfo* info = find_layer_class(l.class_name)) {
    for (const FieldInfo& f : info->fields) {
      if (f.key == "units") args << QString::number(l.units);
      if (f.key == "filters") args << QString::number(l.filters);
      if (f.key == "kernel_size" && l.kernel_size.size() == 2)
        args << QStringLiteral("%1x%2").arg(l.kernel_size[0]).arg(l.kernel_size[1]);
      if (f.key == "pool_size" && l.pool_size.size() == 2)
        args << QStringLiteral("%1x%2").arg(l.pool_size[0]).arg(l.pool_size[1]);
      // Strides other than the default: 1 for a convolution, the window for a pooling layer.
      const std::vector<int64_t> step =
          layer_has_field(l.class_name, "pool_size") ? l.pool_size : std::vector<int64_t>{1, 1};
      if (f.key == "strides" && l.strides.size() == 2 && l.strides != step)
        args << QStringLiteral("stride %1x%2").arg(l.strides[0]).arg(l.strides[1]);
      if (f.key == "padding" && l.padding != "valid") args << QString::fromStdString(l.padding);
      if (f.key == "rate") args << sixDigits(l.rate);
      if (f.key == "scale" && f.type == FieldType::kFloat) args << sixDigits(l.scale);
      // LayerNormalization: what differs from Keras's defaults.
      if (f.key == "scale" && f.type == FieldType::kBool && !l.scale_gamma)
        args << QStringLiteral("no gamma");
      if (f.key == "center" && !l.center) args << QStringLiteral("no beta");
      if (f.key == "momentum" && l.momentum != f.number)
        args << QStringLiteral("momentum %1").arg(sixDigits(l.momentum));
      if (f.key == "epsilon" && l.epsilon != f.number)
        args << QStringLiteral("epsilon %1").arg(sixDigits(l.epsilon));
      if (f.key == "offset" && l.offset != 0.0) args << sixDigits(l.offset);
      if (f.key == "activation") args << QString::fromStdString(l.activation);
      if (f.key == "target_shape")
        for (int64_t d : l.target_shape) args << QString::number(d);
    }
  }
  QString text = QString::fromStdString(l.class_name);
  if (!args.isEmpty()) text += QStringLiteral("(%1)").arg(args.join(QStringLiteral(", ")));
  // A name the file or the user gave (layout-map rules match it); automatic ones are in the
  // tooltip and the summary.
  if (!l.name.empty()) text += QStringLiteral(" · ") + QString::fromStdString(l.name);
  return text;
}

void ModelPanel::rebuildList(int selectIndex) {
  m_rebuilding = true;
  m_list->clear();
  auto* input = new QListWidgetItem(m_list);
  input->setFlags(Qt::ItemIsEnabled);
  input->setForeground(palette().brush(QPalette::Disabled, QPalette::Text));
  input->setToolTip(
      tr("The input layer's shape comes from the data: its feature columns, or "
         "an image's height and width."));
  for (int i = 0; i < static_cast<int>(m_spec.layers.size()); ++i) {
    auto* item = new QListWidgetItem(m_list);
    item->setData(Qt::UserRole, i);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
  }
  m_rebuilding = false;
  refresh();
  // Tall enough for every layer (4 to 12 rows); longer models scroll.
  int rowHeight = std::max(m_list->fontMetrics().height(), m_list->iconSize().height()) + 4;
  for (int row = 0; row < m_list->count(); ++row)
    rowHeight = std::max(rowHeight, m_list->sizeHintForRow(row));
  m_list->setFixedHeight(std::clamp(m_list->count(), 4, 12) * rowHeight + 2 * m_list->frameWidth() +
                         4);
  selectLayer(selectIndex);
  onSelectionChanged();
}

void ModelPanel::selectLayer(int index) {
  if (index < 0 || index >= static_cast<int>(m_spec.layers.size())) {
    m_list->clearSelection();
    return;
  }
  m_list->setCurrentRow(index + 1, QItemSelectionModel::ClearAndSelect);
}

int ModelPanel::selectedLayer() const {
  const QList<QListWidgetItem*> selected = m_list->selectedItems();
  if (selected.isEmpty()) return -1;
  const int row = m_list->row(selected.front());
  return row >= 1 ? row - 1 : -1;
}

void ModelPanel::onSelectionChanged() {
  if (m_rebuilding) return;
  const int index = selectedLayer();
  if (index < 0) {
    m_editor->clearLayer();
  } else {
    m_editor->setLayer(m_spec.layers[index], layerNames()[index]);
    QVector<LayerIssue> issues;
    for (const ModelIssue& issue : m_issues) {
      if (issue.layer == index) issues.push_back({issue.field, issue.detail, issue.error});
    }
    m_editor->setIssues(issues);
  }
  updateButtons();
}

void ModelPanel::onLayerEdited() {
  const int index = selectedLayer();
  if (index < 0) return;
  m_spec.layers[index] = m_editor->layer();
  refresh();
  emit changed();
}

void ModelPanel::addLayer(const QString& className) {
  const LayerInfo* info = find_layer_class(className.toStdString());
  if (info == nullptr || info->input) return;
  const LayerSpec layer = new_layer(*info);
  const int selected = selectedLayer();
  const int at = selected < 0 ? static_cast<int>(m_spec.layers.size()) : selected + 1;
  m_spec.layers.insert(m_spec.layers.begin() + at, layer);
  rebuildList(at);
  emit changed();
}

void ModelPanel::removeSelectedLayer() {
  const int index = selectedLayer();
  if (index < 0 || m_readOnly) return;
  m_spec.layers.erase(m_spec.layers.begin() + index);
  rebuildList(std::min(index, static_cast<int>(m_spec.layers.size()) - 1));
  emit changed();
}

void ModelPanel::moveSelectedLayer(int delta) {
  const int index = selectedLayer();
  const int to = index + delta;
  if (index < 0 || to < 0 || to >= static_cast<int>(m_spec.layers.size()) || m_readOnly) return;
  std::swap(m_spec.layers[index], m_spec.layers[to]);
  rebuildList(to);
  emit changed();
}

void ModelPanel::syncOrderFromList() {
  if (m_rebuilding) return;
  std::vector<LayerSpec> layers;
  const int selectedOld = [&] {
    const QList<QListWidgetItem*> selected = m_list->selectedItems();
    return selected.isEmpty() ? -1 : selected.front()->data(Qt::UserRole).toInt();
  }();
  int selectedNew = -1;
  for (int row = 0; row < m_list->count(); ++row) {
    const QVariant index = m_list->item(row)->data(Qt::UserRole);
    if (!index.isValid()) continue;  // the Input row
    if (index.toInt() == selectedOld) selectedNew = static_cast<int>(layers.size());
    layers.push_back(m_spec.layers[index.toInt()]);
  }
  if (layers.size() != m_spec.layers.size()) return;
  bool same = true;
  for (int row = 0, i = 0; row < m_list->count(); ++row) {
    const QVariant index = m_list->item(row)->data(Qt::UserRole);
    if (!index.isValid()) continue;
    same = same && index.toInt() == i++;
  }
  const bool inputFirst = !m_list->item(0)->data(Qt::UserRole).isValid();
  if (same && inputFirst) return;
  m_spec.layers = std::move(layers);
  rebuildList(selectedNew);
  if (!same) emit changed();
}

void ModelPanel::refresh() {
  if (m_rebuilding || m_list->count() != static_cast<int>(m_spec.layers.size()) + 1) return;
  const QStringList names = layerNames();
  m_issues = validateModel(m_spec.layers, names,
                           {.inputUnits = inputUnits(),
                            .inputShape = inputShape(),
                            .hasTargets = m_hasTargetInfo,
                            .targetColumns = m_targetColumns,
                            .classes = m_classes,
                            .loss = m_loss});
  // The window's input follows the data; a file that declares another shape is run (and saved)
  // with the data's, which is said, since fitbench-cli refuses the file as it is.
  if (m_input && !m_input->shape.empty() && m_inputFeatures > 0 && m_input->shape != inputShape()) {
    const auto batchShape = [](const std::vector<int64_t>& shape) {
      QStringList dims{QStringLiteral("null")};
      for (int64_t d : shape) dims << QString::number(d);
      return QStringLiteral("[%1]").arg(dims.join(QStringLiteral(", ")));
    };
    const QString data =
        m_inputShape.size() > 1
            ? tr("samples of shape %1").arg(QString::fromStdString(batch_shape_text(m_inputShape)))
            : (m_inputFeatures == 1 ? tr("1 feature column")
                                    : tr("%1 feature columns").arg(m_inputFeatures));
    const QString text =
        tr("Input: the file's InputLayer has batch_shape %1, but the data has %2; the window "
           "trains on the data's shape and saves batch_shape %3 (fitbench-cli refuses the file "
           "until then).")
            .arg(batchShape(m_input->shape), data, batchShape(inputShape()));
    m_issues.push_front({-1, QString(), text, text, false});
  }

  const int features = inputUnits();
  const std::vector<int64_t> shape = inputShape();
  QStringList dims;
  for (int64_t d : shape) dims << QString::number(d);
  m_list->item(0)->setText(shape.size() > 1
                               ? tr("Input (%1)").arg(dims.join(QString::fromUtf8(" × ")))
                           : features == 1 ? tr("Input (1 feature)")
                           : features > 1  ? tr("Input (%1 features)").arg(features)
                                           : tr("Input (features from the data)"));
  // Rows without a message get a blank icon so that every row's text starts at the same place.
  QPixmap blankPixmap(m_list->iconSize());
  blankPixmap.fill(Qt::transparent);
  const QIcon blank(blankPixmap);
  m_list->item(0)->setIcon(blank);
  for (int i = 0; i < static_cast<int>(m_spec.layers.size()); ++i) {
    QListWidgetItem* item = m_list->item(i + 1);
    item->setText(rowText(i));
    bool error = false;
    bool warning = false;
    QStringList texts{names[i]};
    for (const ModelIssue& issue : m_issues) {
      if (issue.layer != i) continue;
      (issue.error ? error : warning) = true;
      texts << issue.text;
    }
    item->setToolTip(texts.join(QLatin1Char('\n')));
    item->setIcon(error     ? style()->standardIcon(QStyle::SP_MessageBoxCritical)
                  : warning ? style()->standardIcon(QStyle::SP_MessageBoxWarning)
                            : blank);
  }

  QStringList lines;
  for (const ModelIssue& issue : m_issues) {
    lines << QStringLiteral("<div style=\"color:%1\">%2%3</div>")
                 .arg(issue.error ? QStringLiteral("#c62828") : QStringLiteral("#e65100"),
                      issue.error ? QString() : tr("Warning: "), issue.text.toHtmlEscaped());
  }
  m_issuesLabel->setText(lines.join(QString()));
  m_issuesLabel->setVisible(!lines.isEmpty());

  const int selected = selectedLayer();
  if (selected >= 0 && m_editor->hasLayer()) {
    m_editor->setAutoName(names[selected]);
    QVector<LayerIssue> issues;
    for (const ModelIssue& issue : m_issues) {
      if (issue.layer == selected) issues.push_back({issue.field, issue.detail, issue.error});
    }
    m_editor->setIssues(issues);
  }
  updateSummary();
}

void ModelPanel::updateButtons() {
  const int index = selectedLayer();
  const int count = static_cast<int>(m_spec.layers.size());
  m_add->setEnabled(!m_readOnly);
  m_remove->setEnabled(!m_readOnly && index >= 0);
  m_up->setEnabled(!m_readOnly && index > 0);
  m_down->setEnabled(!m_readOnly && index >= 0 && index + 1 < count);
}

void ModelPanel::updateSummary() {
  const int64_t in = inputUnits();
  const QString name = QString::fromStdString(m_spec.name.empty() ? "sequential" : m_spec.name);
  if (in <= 0) {
    setSummaryText(tr("Model: \"%1\"\nThe summary appears once the data's feature count is "
                      "known.")
                       .arg(name));
    return;
  }
  // Each layer's params are its variables' sizes as the engine builds them (a Dense's in * units
  // + units, a Conv2D's kh * kw * channels * filters + filters); a Dense after a layer whose
  // shape is unknown still counts its flat width's.
  const QStringList names = layerNames();
  std::vector<SummaryRow> rows;
  int64_t trainable = 0;
  int64_t nonTrainable = 0;
  // Shapes as the engine computes them; after a layer that cannot take its input (said in the
  // issues above), Keras's "?".
  int64_t width = in;
  std::vector<int64_t> shape = inputShape();
  for (int i = 0; i < static_cast<int>(m_spec.layers.size()); ++i) {
    const LayerSpec& l = m_spec.layers[i];
    SummaryRow row;
    row.name = names[i].toStdString();
    row.class_name = l.class_name;
    bool counted = false;
    int64_t stateParams = 0;
    if (!shape.empty()) {
      try {
        const std::unique_ptr<Layer> layer = make_layer(l, "");
        const Shape out = layer->output_shape(shape, "");
        layer->build(shape);
        for (const VariableDef& def : layer->variable_defs(shape_size(shape))) {
          row.params += shape_size(def.shape);
          // BatchNormalization's moving statistics are not trainable in a trainable layer.
          if (!def.trainable) stateParams += shape_size(def.shape);
        }
        counted = true;
        shape = out;
        width = shape_size(shape);
      } catch (const InputError&) {
        shape.clear();
      }
    }
    if (!counted && setsWidth(l)) row.params = width * l.units + (l.use_bias ? l.units : 0);
    if (!counted && setsWidth(l)) width = l.units;
    (l.trainable ? trainable : nonTrainable) += row.params - stateParams;
    nonTrainable += stateParams;
    if (!shape.empty()) {
      row.output_shape = {std::nullopt};
      for (int64_t d : shape) row.output_shape.push_back(d);
    }
    rows.push_back(std::move(row));
  }
  const int lineLength = m_summaryWidth > 0 ? m_summaryWidth : kSummaryLineLength;
  setSummaryText(QString::fromStdString(format_summary(name.toStdString(), rows, trainable,
                                                       nonTrainable, std::nullopt, 4, lineLength)));
}

void ModelPanel::setSummaryText(const QString& text) {
  m_summary->setPlainText(text);
  // Show the whole table (up to 40 lines); the panel's scroll area scrolls past it.
  const int lines = std::min(static_cast<int>(text.count(QLatin1Char('\n'))) + 1, 40);
  m_summary->setMinimumHeight(lines * m_summary->fontMetrics().lineSpacing() +
                              2 * m_summary->frameWidth() +
                              2 * static_cast<int>(m_summary->document()->documentMargin()) + 4);
}

bool ModelPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_summary && event->type() == QEvent::Resize) {
    // Fit the table to the text area, as Keras fits it to the terminal, within Keras's bounds.
    const int charWidth = std::max(1, m_summary->fontMetrics().horizontalAdvance(QLatin1Char('M')));
    const int columns = (m_summary->viewport()->width() - 8) / charWidth;
    const int width = std::clamp(columns, kMinSummaryLine, kSummaryLineLength);
    if (width != m_summaryWidth) {
      m_summaryWidth = width;
      QTimer::singleShot(0, this, &ModelPanel::updateSummary);
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace fitbench
