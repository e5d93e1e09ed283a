#include "ui/panels/layer_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "core/nn/activation_registry.h"
#include "core/nn/initializer_registry.h"
#include "core/nn/layer_registry.h"
#include "core/nn/network.h"
#include "ui/common/field_range.h"
#include "ui/common/text_style.h"

namespace fitbench {

namespace {

constexpr int kMaxUnits = 1 << 20;
constexpr int kMaxLayerSeed = std::numeric_limits<int>::max();

QString errorColor(bool error) {
  return error ? QStringLiteral("#c62828") : QStringLiteral("#e65100");
}

// A label for messages under a field: wrapped, coloured by setIssues.
QLabel* makeFieldIssueLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  return label;
}

// "Fixed [x] [ 42 ]": an optional seed.
QWidget* makeSeedRow(QWidget* parent, QCheckBox** check, QSpinBox** spin) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  *check = new QCheckBox(QObject::tr("Fixed"), row);
  *spin = new QSpinBox(row);
  allowRange(*spin, 0, kMaxLayerSeed);
  layout->addWidget(*check);
  layout->addWidget(*spin, 1);
  return row;
}

// Two integer fields side by side, height x width (a Conv2D's kernel_size or strides), named
// `key` (the row) and key_height, key_width.
QWidget* makePairRow(QWidget* parent, const QString& key, QSpinBox** height, QSpinBox** width) {
  auto* row = new QWidget(parent);
  row->setObjectName(key);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  for (QSpinBox** spin : {height, width}) {
    *spin = new QSpinBox(row);
    allowRange(*spin, 1, static_cast<int>(kMaxConvSize));
    layout->addWidget(*spin);
    if (spin == height) layout->addWidget(new QLabel(QStringLiteral("\u00d7"), row));
  }
  (*height)->setObjectName(key + QStringLiteral("_height"));
  (*width)->setObjectName(key + QStringLiteral("_width"));
  layout->addStretch(1);
  return row;
}

NumberSpinBox* makeNumber(QWidget* parent, double lo, double hi) {
  auto* spin = new NumberSpinBox(parent);
  allowRange(spin, lo, hi);
  return spin;
}

// Whether the initializer named `name` has the config field `key` (mean, seed, ...).
bool initializerHas(const std::string& name, std::string_view key) {
  const InitializerInfo* info = find_initializer(name);
  return info != nullptr && find_field(info->fields, key) != nullptr;
}

// The registry's default of a layer class's field (an initializer's name), "" when it has none.
std::string defaultText(const std::string& className, std::string_view key) {
  const LayerInfo* info = find_layer_class(className);
  const FieldInfo* field = info != nullptr ? find_field(info->fields, key) : nullptr;
  return field != nullptr ? std::string(field->text) : std::string();
}

}  // namespace

QStringList activationNames() {
  // The canonical names; an alias ("swish") is stored under its canonical name.
  QStringList names;
  for (const ActivationInfo& a : activations())
    if (!a.alias) names << toQString(a.name);
  return names;
}

QStringList initializerNames() {
  QStringList names;
  for (const InitializerInfo& i : initializers()) names << toQString(i.name);
  return names;
}

LayerEditor::LayerEditor(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_hint = new QLabel(tr("Select a layer to edit it. The input's feature count comes from the "
                         "data."),
                      this);
  m_hint->setWordWrap(true);
  m_hint->setStyleSheet(QStringLiteral("color: palette(mid);"));
  layout->addWidget(m_hint);
  buildLayerBox();
  layout->addWidget(m_layerBox);
  buildInitializerBox(m_kernelInit, tr("Kernel initializer"), QStringLiteral("kernel_initializer"));
  layout->addWidget(m_kernelInit.box);
  buildInitializerBox(m_biasInit, tr("Bias initializer"), QStringLiteral("bias_initializer"));
  layout->addWidget(m_biasInit.box);
  buildInitializerBox(m_gammaInit, tr("Gamma initializer"), QStringLiteral("gamma_initializer"));
  layout->addWidget(m_gammaInit.box);
  buildInitializerBox(m_betaInit, tr("Beta initializer"), QStringLiteral("beta_initializer"));
  layout->addWidget(m_betaInit.box);
  buildInitializerBox(m_movingMeanInit, tr("Moving mean initializer"),
                      QStringLiteral("moving_mean_initializer"));
  layout->addWidget(m_movingMeanInit.box);
  buildInitializerBox(m_movingVarianceInit, tr("Moving variance initializer"),
                      QStringLiteral("moving_variance_initializer"));
  layout->addWidget(m_movingVarianceInit.box);
  buildRegularizerBox();
  layout->addWidget(m_regularizerBox);
  for (const QString& field :
       {QStringLiteral("name"), QStringLiteral("units"), QStringLiteral("filters"),
        QStringLiteral("kernel_size"), QStringLiteral("pool_size"), QStringLiteral("activation"),
        QStringLiteral("rate"), QStringLiteral("target_shape")}) {
    m_defaultTips.insert(field, fieldWidget(field)->toolTip());
  }
  addRangeRows(this);  // a hidden sentence row under each field with a range
  connectSignals();
  clearLayer();
}

void LayerEditor::buildLayerBox() {
  m_layerBox = new QGroupBox(this);
  m_layerForm = new QFormLayout(m_layerBox);
  m_name = new QLineEdit(m_layerBox);
  m_name->setObjectName(QStringLiteral("name"));
  m_name->setToolTip(
      tr("The layer's name in the summary and in weight paths. Empty: Keras's "
         "automatic name (dense, dense_1, ...)."));
  m_layerForm->addRow(tr("Name"), m_name);
  m_nameIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_nameIssue);
  m_units = new QSpinBox(m_layerBox);
  m_units->setObjectName(QStringLiteral("units"));
  // Fewer than 1 is the model checks' sentence; more than the field's most is said here.
  allowRange(m_units, std::numeric_limits<int>::min(), kMaxUnits);
  m_units->setToolTip(tr("How many outputs (neurons) the layer has."));
  m_layerForm->addRow(tr("Units"), m_units);
  m_unitsIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_unitsIssue);
  m_filters = new QSpinBox(m_layerBox);
  m_filters->setObjectName(QStringLiteral("filters"));
  allowRange(m_filters, std::numeric_limits<int>::min(), static_cast<int>(kMaxConvSize));
  m_filters->setToolTip(tr("How many filters the layer learns: its output's channels."));
  m_layerForm->addRow(tr("Filters"), m_filters);
  m_filtersIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_filtersIssue);
  m_kernelSize =
      makePairRow(m_layerBox, QStringLiteral("kernel_size"), &m_kernelHeight, &m_kernelWidth);
  m_kernelSize->setToolTip(tr("The window's height and width in pixels."));
  m_layerForm->addRow(tr("Kernel size"), m_kernelSize);
  m_kernelSizeIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_kernelSizeIssue);
  m_poolSize = makePairRow(m_layerBox, QStringLiteral("pool_size"), &m_poolHeight, &m_poolWidth);
  m_poolSize->setToolTip(tr("The window's height and width in pixels."));
  m_layerForm->addRow(tr("Pool size"), m_poolSize);
  m_poolSizeIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_poolSizeIssue);
  m_strides = makePairRow(m_layerBox, QStringLiteral("strides"), &m_strideHeight, &m_strideWidth);
  m_strides->setToolTip(tr("How many pixels the window moves each time, down and across."));
  m_layerForm->addRow(tr("Strides"), m_strides);
  m_padding = new QComboBox(m_layerBox);
  m_padding->setObjectName(QStringLiteral("padding"));
  m_padding->addItems({QStringLiteral("valid"), QStringLiteral("same")});
  m_padding->setToolTip(
      tr("valid: windows inside the image only, so it shrinks by the kernel's size less one; "
         "same: zeros around it, so with strides 1 it keeps its size."));
  m_layerForm->addRow(tr("Padding"), m_padding);
  m_activation = new QComboBox(m_layerBox);
  m_activation->setObjectName(QStringLiteral("activation"));
  m_activation->addItems(activationNames());
  m_activation->setToolTip(tr("The function applied to each output; linear applies none."));
  m_layerForm->addRow(tr("Activation"), m_activation);
  m_activationIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_activationIssue);
  m_useBias = new QCheckBox(tr("Use bias"), m_layerBox);
  m_useBias->setObjectName(QStringLiteral("use_bias"));
  m_useBias->setToolTip(tr("Add a learned bias to each unit."));
  m_layerForm->addRow(QString(), m_useBias);
  m_trainable = new QCheckBox(tr("Trainable"), m_layerBox);
  m_trainable->setObjectName(QStringLiteral("trainable"));
  m_trainable->setToolTip(
      tr("fit() updates the layer's weights; unticked, they keep their "
         "initial values (non-trainable params in the summary)."));
  m_layerForm->addRow(QString(), m_trainable);
  m_rate = makeNumber(m_layerBox, 0.0, 1.0);
  m_rate->setObjectName(QStringLiteral("rate"));
  m_rate->setToolTip(
      tr("The fraction of inputs set to zero at each training step (the others "
         "are scaled by 1 / (1 - rate)); at least 0 and below 1."));
  m_layerForm->addRow(tr("Rate"), m_rate);
  m_rateIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_rateIssue);
  const double most = std::numeric_limits<float>::max();
  m_scale = makeNumber(m_layerBox, -most, most);
  m_scale->setObjectName(QStringLiteral("scale"));
  m_scale->setToolTip(
      tr("Each value is multiplied by this: 1/255 (0.00392156862745) maps pixels in [0, 255] "
         "to [0, 1]."));
  m_layerForm->addRow(tr("Scale"), m_scale);
  m_offset = makeNumber(m_layerBox, -most, most);
  m_offset->setObjectName(QStringLiteral("offset"));
  m_offset->setToolTip(
      tr("Then this is added to each value: with scale 1/127.5, an offset of -1 maps pixels to "
         "[-1, 1]."));
  m_layerForm->addRow(tr("Offset"), m_offset);
  m_momentum = makeNumber(m_layerBox, 0.0, 1.0);
  m_momentum->setObjectName(QStringLiteral("momentum"));
  m_momentum->setToolTip(
      tr("How much of the moving mean and variance each training step keeps: moving = moving x "
         "momentum + batch x (1 - momentum) (Keras: 0.99)."));
  m_layerForm->addRow(tr("Momentum"), m_momentum);
  m_epsilon = makeNumber(m_layerBox, 1e-12, 1.0);
  m_epsilon->setObjectName(QStringLiteral("epsilon"));
  m_epsilon->setToolTip(
      tr("Added to each variance before its square root, so that values that are all equal "
         "still give a finite output (Keras: 0.001)."));
  m_layerForm->addRow(tr("Epsilon"), m_epsilon);
  m_scaleGamma = new QCheckBox(tr("Scale by a learned gamma"), m_layerBox);
  m_scaleGamma->setObjectName(QStringLiteral("scale_gamma"));
  m_scaleGamma->setToolTip(
      tr("Multiply the normalized values by a learned gamma per channel (Keras's scale)."));
  m_layerForm->addRow(QString(), m_scaleGamma);
  m_center = new QCheckBox(tr("Center by a learned beta"), m_layerBox);
  m_center->setObjectName(QStringLiteral("center"));
  m_center->setToolTip(
      tr("Add a learned beta per channel to the normalized values (Keras's center)."));
  m_layerForm->addRow(QString(), m_center);
  m_targetShape = new QLineEdit(m_layerBox);
  m_targetShape->setObjectName(QStringLiteral("target_shape"));
  m_targetShape->setPlaceholderText(tr("e.g. 7, 112"));
  m_targetShape->setToolTip(
      tr("The shape of one sample after the layer, its dimensions separated by commas; one may "
         "be -1, inferred from the number of values."));
  m_layerForm->addRow(tr("Target shape"), m_targetShape);
  m_targetShapeIssue = makeFieldIssueLabel(m_layerBox);
  m_layerForm->addRow(QString(), m_targetShapeIssue);
  QWidget* seedRow = makeSeedRow(m_layerBox, &m_seedSet, &m_seed);
  m_seedSet->setObjectName(QStringLiteral("seed_set"));
  m_seed->setObjectName(QStringLiteral("seed"));
  seedRow->setToolTip(
      tr("Fixed: the dropout mask comes from this seed. Otherwise it is drawn "
         "from the global seed."));
  m_layerForm->addRow(tr("Seed"), seedRow);
  m_advanced = new QToolButton(m_layerBox);
  m_advanced->setObjectName(QStringLiteral("advanced"));
  m_advanced->setCheckable(true);
  m_advanced->setAutoRaise(true);
  m_advanced->setArrowType(Qt::RightArrow);
  m_advanced->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_advanced->setToolTip(tr("How the weights start and the penalties on them."));
  m_layerForm->addRow(m_advanced);
}

void LayerEditor::buildInitializerBox(InitializerRows& rows, const QString& title,
                                      const QString& prefix) {
  rows.box = new QGroupBox(title, this);
  rows.box->setObjectName(prefix);
  rows.form = new QFormLayout(rows.box);
  rows.name = new QComboBox(rows.box);
  rows.name->addItems(initializerNames());
  rows.form->addRow(tr("Initializer"), rows.name);
  rows.mean = makeNumber(rows.box, -1e6, 1e6);
  rows.form->addRow(tr("Mean"), rows.mean);
  rows.stddev = makeNumber(rows.box, 0.0, 1e6);
  rows.form->addRow(tr("Std dev"), rows.stddev);
  rows.minval = makeNumber(rows.box, -1e6, 1e6);
  rows.form->addRow(tr("Minimum"), rows.minval);
  rows.maxval = makeNumber(rows.box, -1e6, 1e6);
  rows.form->addRow(tr("Maximum"), rows.maxval);
  QWidget* seedRow = makeSeedRow(rows.box, &rows.seedSet, &rows.seed);
  seedRow->setToolTip(
      tr("Fixed: the initial values come from this seed. Otherwise the seed is "
         "drawn from the global seed."));
  rows.form->addRow(tr("Seed"), seedRow);
  rows.name->setObjectName(prefix + QStringLiteral("_name"));
  rows.mean->setObjectName(prefix + QStringLiteral("_mean"));
  rows.stddev->setObjectName(prefix + QStringLiteral("_stddev"));
  rows.minval->setObjectName(prefix + QStringLiteral("_minval"));
  rows.maxval->setObjectName(prefix + QStringLiteral("_maxval"));
  rows.seedSet->setObjectName(prefix + QStringLiteral("_seed_set"));
  rows.seed->setObjectName(prefix + QStringLiteral("_seed"));
}

void LayerEditor::buildRegularizerBox() {
  m_regularizerBox = new QGroupBox(tr("Regularizers"), this);
  m_regularizerBox->setToolTip(
      tr("Penalties added to the loss: L1 sums |w|, L2 sums w² of the "
         "weights, each times its factor; 0 = none."));
  m_regularizerForm = new QFormLayout(m_regularizerBox);
  m_kernelL1 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_kernelL1->setObjectName(QStringLiteral("kernel_l1"));
  m_regularizerForm->addRow(tr("Kernel L1"), m_kernelL1);
  m_kernelL2 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_kernelL2->setObjectName(QStringLiteral("kernel_l2"));
  m_regularizerForm->addRow(tr("Kernel L2"), m_kernelL2);
  m_biasL1 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_biasL1->setObjectName(QStringLiteral("bias_l1"));
  m_regularizerForm->addRow(tr("Bias L1"), m_biasL1);
  m_biasL2 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_biasL2->setObjectName(QStringLiteral("bias_l2"));
  m_regularizerForm->addRow(tr("Bias L2"), m_biasL2);
  m_gammaL1 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_gammaL1->setObjectName(QStringLiteral("gamma_l1"));
  m_regularizerForm->addRow(tr("Gamma L1"), m_gammaL1);
  m_gammaL2 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_gammaL2->setObjectName(QStringLiteral("gamma_l2"));
  m_regularizerForm->addRow(tr("Gamma L2"), m_gammaL2);
  m_betaL1 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_betaL1->setObjectName(QStringLiteral("beta_l1"));
  m_regularizerForm->addRow(tr("Beta L1"), m_betaL1);
  m_betaL2 = makeNumber(m_regularizerBox, 0.0, 100.0);
  m_betaL2->setObjectName(QStringLiteral("beta_l2"));
  m_regularizerForm->addRow(tr("Beta L2"), m_betaL2);
}

void LayerEditor::connectSignals() {
  connect(m_name, &QLineEdit::textEdited, this, [this](const QString& text) {
    m_layer.name = text.trimmed().toStdString();
    edited();
  });
  connect(m_units, &QSpinBox::valueChanged, this, [this](int v) {
    m_layer.units = v;
    edited();
  });
  connect(m_activation, &QComboBox::currentTextChanged, this, [this](const QString& text) {
    m_layer.activation = text.toStdString();
    edited();
  });
  connect(m_filters, &QSpinBox::valueChanged, this, [this](int v) {
    m_layer.filters = v;
    edited();
  });
  const auto pair = [this](QSpinBox* spin, std::vector<int64_t> LayerSpec::*member, size_t axis) {
    connect(spin, &QSpinBox::valueChanged, this, [this, member, axis](int v) {
      (m_layer.*member).resize(2, 1);
      (m_layer.*member)[axis] = v;
      edited();
    });
  };
  pair(m_kernelHeight, &LayerSpec::kernel_size, 0);
  pair(m_kernelWidth, &LayerSpec::kernel_size, 1);
  pair(m_poolHeight, &LayerSpec::pool_size, 0);
  pair(m_poolWidth, &LayerSpec::pool_size, 1);
  pair(m_strideHeight, &LayerSpec::strides, 0);
  pair(m_strideWidth, &LayerSpec::strides, 1);
  connect(m_padding, &QComboBox::currentTextChanged, this, [this](const QString& text) {
    m_layer.padding = text.toStdString();
    edited();
  });
  connect(m_advanced, &QToolButton::toggled, this, [this](bool on) {
    m_advanced->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    updateVisibility();
  });
  connect(m_useBias, &QCheckBox::toggled, this, [this](bool on) {
    m_layer.use_bias = on;
    updateVisibility();
    edited();
  });
  // A field that is one member of the layer.
  const auto check = [this](QCheckBox* box, bool LayerSpec::*member) {
    connect(box, &QCheckBox::toggled, this, [this, member](bool on) {
      m_layer.*member = on;
      edited();
    });
  };
  const auto number = [this](NumberSpinBox* spin, double LayerSpec::*member) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, member](double v) {
      m_layer.*member = v;
      edited();
    });
  };
  check(m_trainable, &LayerSpec::trainable);
  check(m_scaleGamma, &LayerSpec::scale_gamma);
  check(m_center, &LayerSpec::center);
  number(m_rate, &LayerSpec::rate);
  number(m_scale, &LayerSpec::scale);
  number(m_offset, &LayerSpec::offset);
  number(m_epsilon, &LayerSpec::epsilon);
  number(m_momentum, &LayerSpec::momentum);
  connect(m_targetShape, &QLineEdit::textEdited, this, [this](const QString& text) {
    // "7, 112" (commas or spaces between); text that is not whole numbers leaves no shape, which
    // the model checks say with what target_shape takes.
    m_layer.target_shape.clear();
    for (const QString& part :
         text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
      bool ok = false;
      const qlonglong d = part.toLongLong(&ok);
      if (!ok) {
        m_layer.target_shape.clear();
        break;
      }
      m_layer.target_shape.push_back(d);
    }
    edited();
  });
  connect(m_seedSet, &QCheckBox::toggled, this, [this](bool on) {
    m_seed->setEnabled(on);
    m_layer.seed = on ? std::optional<uint64_t>(m_seed->value()) : std::nullopt;
    edited();
  });
  connect(m_seed, &QSpinBox::valueChanged, this, [this](int v) {
    if (m_seedSet->isChecked()) m_layer.seed = static_cast<uint64_t>(v);
    edited();
  });
  connectInitializer(m_kernelInit, &LayerSpec::kernel_initializer);
  connectInitializer(m_biasInit, &LayerSpec::bias_initializer);
  connectInitializer(m_gammaInit, &LayerSpec::gamma_initializer);
  connectInitializer(m_betaInit, &LayerSpec::beta_initializer);
  connectInitializer(m_movingMeanInit, &LayerSpec::moving_mean_initializer);
  connectInitializer(m_movingVarianceInit, &LayerSpec::moving_variance_initializer);
  const auto regularizer = [this](NumberSpinBox* spin, RegularizerSpec LayerSpec::*member,
                                  double RegularizerSpec::*field) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, member, field](double v) {
      (m_layer.*member).*field = v;
      edited();
    });
  };
  regularizer(m_kernelL1, &LayerSpec::kernel_regularizer, &RegularizerSpec::l1);
  regularizer(m_kernelL2, &LayerSpec::kernel_regularizer, &RegularizerSpec::l2);
  regularizer(m_biasL1, &LayerSpec::bias_regularizer, &RegularizerSpec::l1);
  regularizer(m_biasL2, &LayerSpec::bias_regularizer, &RegularizerSpec::l2);
  regularizer(m_gammaL1, &LayerSpec::gamma_regularizer, &RegularizerSpec::l1);
  regularizer(m_gammaL2, &LayerSpec::gamma_regularizer, &RegularizerSpec::l2);
  regularizer(m_betaL1, &LayerSpec::beta_regularizer, &RegularizerSpec::l1);
  regularizer(m_betaL2, &LayerSpec::beta_regularizer, &RegularizerSpec::l2);
}

void LayerEditor::connectInitializer(InitializerRows& rows, InitializerSpec LayerSpec::*member) {
  connect(rows.name, &QComboBox::currentTextChanged, this, [this, member](const QString& text) {
    (m_layer.*member).name = text.toStdString();
    updateVisibility();
    edited();
  });
  const auto number = [this, member](NumberSpinBox* spin, double InitializerSpec::*field) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, member, field](double v) {
      (m_layer.*member).*field = v;
      edited();
    });
  };
  number(rows.mean, &InitializerSpec::mean);
  number(rows.stddev, &InitializerSpec::stddev);
  number(rows.minval, &InitializerSpec::minval);
  number(rows.maxval, &InitializerSpec::maxval);
  QCheckBox* seedSet = rows.seedSet;
  QSpinBox* seed = rows.seed;
  connect(seedSet, &QCheckBox::toggled, this, [this, member, seedSet, seed](bool on) {
    seed->setEnabled(on);
    (m_layer.*member).seed = on ? std::optional<uint64_t>(seed->value()) : std::nullopt;
    edited();
  });
  connect(seed, &QSpinBox::valueChanged, this, [this, member, seedSet](int v) {
    if (seedSet->isChecked()) (m_layer.*member).seed = static_cast<uint64_t>(v);
    edited();
  });
}

void LayerEditor::edited() {
  if (m_filling) return;
  updateVisibility();
  emit layerEdited();
}

void LayerEditor::fillInitializer(InitializerRows& rows, const InitializerSpec& spec) {
  const QString name = QString::fromStdString(spec.name);
  if (rows.name->findText(name) < 0) rows.name->addItem(name);
  rows.name->setCurrentText(name);
  rows.mean->setValue(spec.mean);
  rows.stddev->setValue(spec.stddev);
  rows.minval->setValue(spec.minval);
  rows.maxval->setValue(spec.maxval);
  rows.seedSet->setChecked(spec.seed.has_value());
  rows.seed->setValue(static_cast<int>(std::min<uint64_t>(spec.seed.value_or(0), kMaxLayerSeed)));
  rows.seed->setEnabled(spec.seed.has_value());
}

void LayerEditor::setLayer(const LayerSpec& layer, const QString& autoName) {
  m_filling = true;
  m_layer = layer;
  m_hasLayer = true;
  m_layerBox->setTitle(tr("%1 layer").arg(QString::fromStdString(layer.class_name)));
  m_name->setText(QString::fromStdString(layer.name));
  setAutoName(autoName);
  m_units->setValue(fieldInt(layer.units));
  m_filters->setValue(fieldInt(layer.filters));
  const auto fillPair = [](QSpinBox* height, QSpinBox* width, const std::vector<int64_t>& dims) {
    height->setValue(fieldInt(dims.size() == 2 ? dims[0] : 1));
    width->setValue(fieldInt(dims.size() == 2 ? dims[1] : 1));
  };
  fillPair(m_kernelHeight, m_kernelWidth, layer.kernel_size);
  fillPair(m_poolHeight, m_poolWidth, layer.pool_size);
  fillPair(m_strideHeight, m_strideWidth, layer.strides);
  const QString padding = QString::fromStdString(layer.padding);
  if (m_padding->findText(padding) < 0) m_padding->addItem(padding);
  m_padding->setCurrentText(padding);
  const QString activation = QString::fromStdString(layer.activation);
  if (m_activation->findText(activation) < 0) m_activation->addItem(activation);
  m_activation->setCurrentText(activation);
  m_useBias->setChecked(layer.use_bias);
  m_trainable->setChecked(layer.trainable);
  m_rate->setValue(layer.rate);
  m_scale->setValue(layer.scale);
  m_offset->setValue(layer.offset);
  m_epsilon->setValue(layer.epsilon);
  m_momentum->setValue(layer.momentum);
  m_scaleGamma->setChecked(layer.scale_gamma);
  m_center->setChecked(layer.center);
  QStringList dims;
  for (int64_t d : layer.target_shape) dims << QString::number(d);
  m_targetShape->setText(dims.join(QStringLiteral(", ")));
  m_seedSet->setChecked(layer.seed.has_value());
  m_seed->setValue(static_cast<int>(std::min<uint64_t>(layer.seed.value_or(0), kMaxLayerSeed)));
  m_seed->setEnabled(layer.seed.has_value());
  fillInitializer(m_kernelInit, layer.kernel_initializer);
  fillInitializer(m_biasInit, layer.bias_initializer);
  fillInitializer(m_gammaInit, layer.gamma_initializer);
  fillInitializer(m_betaInit, layer.beta_initializer);
  fillInitializer(m_movingMeanInit, layer.moving_mean_initializer);
  fillInitializer(m_movingVarianceInit, layer.moving_variance_initializer);
  m_kernelL1->setValue(layer.kernel_regularizer.l1);
  m_kernelL2->setValue(layer.kernel_regularizer.l2);
  m_biasL1->setValue(layer.bias_regularizer.l1);
  m_biasL2->setValue(layer.bias_regularizer.l2);
  m_gammaL1->setValue(layer.gamma_regularizer.l1);
  m_gammaL2->setValue(layer.gamma_regularizer.l2);
  m_betaL1->setValue(layer.beta_regularizer.l1);
  m_betaL2->setValue(layer.beta_regularizer.l2);
  setIssues({});
  updateVisibility();
  m_filling = false;
}

void LayerEditor::setAutoName(const QString& autoName) {
  m_name->setPlaceholderText(tr("%1 (automatic)").arg(autoName));
}

void LayerEditor::clearLayer() {
  m_hasLayer = false;
  m_layer = LayerSpec{};
  updateVisibility();
}

void LayerEditor::updateVisibility() {
  // A row shows when the layer registry says the class has its field.
  const std::string& c = m_layer.class_name;
  const auto has = [&](std::string_view key) { return m_hasLayer && layer_has_field(c, key); };
  m_hint->setVisible(!m_hasLayer);
  m_layerBox->setVisible(m_hasLayer);
  m_layerForm->setRowVisible(m_units, has("units"));
  m_layerForm->setRowVisible(m_filters, has("filters"));
  m_layerForm->setRowVisible(m_kernelSize, has("kernel_size"));
  m_layerForm->setRowVisible(m_poolSize, has("pool_size"));
  m_layerForm->setRowVisible(m_strides, has("strides"));
  m_layerForm->setRowVisible(m_padding, has("padding"));
  m_layerForm->setRowVisible(m_activation, has("activation"));
  m_layerForm->setRowVisible(m_useBias, has("use_bias"));
  m_layerForm->setRowVisible(m_trainable, has("trainable"));
  m_layerForm->setRowVisible(m_rate, has("rate"));
  // "scale" is Rescaling's factor and LayerNormalization's switch for gamma.
  const auto hasOfType = [&](std::string_view key, FieldType type) {
    const LayerInfo* info = m_hasLayer ? find_layer_class(c) : nullptr;
    const FieldInfo* field = info ? find_field(info->fields, key) : nullptr;
    return field != nullptr && field->type == type;
  };
  m_layerForm->setRowVisible(m_scale, hasOfType("scale", FieldType::kFloat));
  m_layerForm->setRowVisible(m_offset, has("offset"));
  m_layerForm->setRowVisible(m_epsilon, has("epsilon"));
  m_layerForm->setRowVisible(m_momentum, has("momentum"));
  m_layerForm->setRowVisible(m_scaleGamma, hasOfType("scale", FieldType::kBool));
  m_layerForm->setRowVisible(m_center, has("center"));
  m_layerForm->setRowVisible(m_targetShape, has("target_shape"));
  m_layerForm->setRowVisible(m_seed->parentWidget(), has("seed"));
  const bool kernelInit = has("kernel_initializer");
  const bool biasInit = has("bias_initializer") && m_layer.use_bias;
  const bool gammaInit = has("gamma_initializer") && m_layer.scale_gamma;
  const bool betaInit = has("beta_initializer") && m_layer.center;
  const bool regularizers = has("kernel_regularizer") || has("bias_regularizer") ||
                            has("gamma_regularizer") || has("beta_regularizer");
  const bool anyAdvanced =
      kernelInit || has("bias_initializer") || has("gamma_initializer") || regularizers;
  const bool advanced = anyAdvanced && m_advanced->isChecked();
  m_layerForm->setRowVisible(m_advanced, anyAdvanced);
  const bool customized =
      (kernelInit && m_layer.kernel_initializer.name != defaultText(c, "kernel_initializer")) ||
      m_layer.kernel_initializer.seed ||
      (has("bias_initializer") &&
       m_layer.bias_initializer.name != defaultText(c, "bias_initializer")) ||
      m_layer.bias_initializer.seed || m_layer.kernel_regularizer.active() ||
      m_layer.bias_regularizer.active() ||
      (has("gamma_initializer") &&
       (m_layer.gamma_initializer.name != defaultText(c, "gamma_initializer") ||
        m_layer.beta_initializer.name != defaultText(c, "beta_initializer") ||
        m_layer.gamma_initializer.seed || m_layer.beta_initializer.seed ||
        m_layer.gamma_regularizer.active() || m_layer.beta_regularizer.active())) ||
      (has("moving_mean_initializer") &&
       (m_layer.moving_mean_initializer.name != defaultText(c, "moving_mean_initializer") ||
        m_layer.moving_variance_initializer.name != defaultText(c, "moving_variance_initializer") ||
        m_layer.moving_mean_initializer.seed || m_layer.moving_variance_initializer.seed));
  m_advanced->setText(customized ? tr("Initializers and regularizers (customized)")
                                 : tr("Initializers and regularizers"));
  m_kernelInit.box->setVisible(advanced && kernelInit);
  m_biasInit.box->setVisible(advanced && biasInit);
  m_gammaInit.box->setVisible(advanced && gammaInit);
  m_betaInit.box->setVisible(advanced && betaInit);
  m_movingMeanInit.box->setVisible(advanced && has("moving_mean_initializer"));
  m_movingVarianceInit.box->setVisible(advanced && has("moving_variance_initializer"));
  m_regularizerBox->setVisible(advanced && regularizers);
  m_regularizerForm->setRowVisible(m_kernelL1, has("kernel_regularizer"));
  m_regularizerForm->setRowVisible(m_kernelL2, has("kernel_regularizer"));
  m_regularizerForm->setRowVisible(m_biasL1, has("bias_regularizer") && m_layer.use_bias);
  m_regularizerForm->setRowVisible(m_biasL2, has("bias_regularizer") && m_layer.use_bias);
  for (NumberSpinBox* spin : {m_gammaL1, m_gammaL2})
    m_regularizerForm->setRowVisible(spin, has("gamma_regularizer") && m_layer.scale_gamma);
  for (NumberSpinBox* spin : {m_betaL1, m_betaL2})
    m_regularizerForm->setRowVisible(spin, has("beta_regularizer") && m_layer.center);
  // An initializer's rows show when the initializer registry says it takes their field.
  const auto initializerRows = [](InitializerRows& rows, const InitializerSpec& spec) {
    rows.form->setRowVisible(rows.mean, initializerHas(spec.name, "mean"));
    rows.form->setRowVisible(rows.stddev, initializerHas(spec.name, "stddev"));
    rows.form->setRowVisible(rows.minval, initializerHas(spec.name, "minval"));
    rows.form->setRowVisible(rows.maxval, initializerHas(spec.name, "maxval"));
    rows.form->setRowVisible(rows.seed->parentWidget(), initializerHas(spec.name, "seed"));
  };
  initializerRows(m_kernelInit, m_layer.kernel_initializer);
  initializerRows(m_biasInit, m_layer.bias_initializer);
  initializerRows(m_gammaInit, m_layer.gamma_initializer);
  initializerRows(m_betaInit, m_layer.beta_initializer);
  initializerRows(m_movingMeanInit, m_layer.moving_mean_initializer);
  initializerRows(m_movingVarianceInit, m_layer.moving_variance_initializer);
  // An issue label shows only while it has text and its field is shown.
  for (QLabel* label : {m_nameIssue, m_unitsIssue, m_filtersIssue, m_kernelSizeIssue,
                        m_poolSizeIssue, m_activationIssue, m_rateIssue, m_targetShapeIssue}) {
    bool fieldShown = m_hasLayer;
    if (label == m_unitsIssue) fieldShown = has("units");
    if (label == m_filtersIssue) fieldShown = has("filters");
    if (label == m_kernelSizeIssue) fieldShown = has("kernel_size");
    if (label == m_poolSizeIssue) fieldShown = has("pool_size");
    if (label == m_rateIssue) fieldShown = has("rate");
    if (label == m_targetShapeIssue) fieldShown = has("target_shape");
    if (label == m_activationIssue) fieldShown = has("activation");
    m_layerForm->setRowVisible(label, fieldShown && !label->text().isEmpty());
  }
}

QLabel* LayerEditor::issueLabelFor(const QString& field) const {
  if (field == QLatin1String("units")) return m_unitsIssue;
  if (field == QLatin1String("filters")) return m_filtersIssue;
  if (field == QLatin1String("kernel_size")) return m_kernelSizeIssue;
  if (field == QLatin1String("pool_size")) return m_poolSizeIssue;
  if (field == QLatin1String("rate")) return m_rateIssue;
  if (field == QLatin1String("target_shape")) return m_targetShapeIssue;
  if (field == QLatin1String("activation")) return m_activationIssue;
  if (field == QLatin1String("name")) return m_nameIssue;
  return nullptr;
}

QWidget* LayerEditor::fieldWidget(const QString& field) const {
  if (field == QLatin1String("units")) return m_units;
  if (field == QLatin1String("filters")) return m_filters;
  if (field == QLatin1String("kernel_size")) return m_kernelSize;
  if (field == QLatin1String("pool_size")) return m_poolSize;
  if (field == QLatin1String("strides")) return m_strides;
  if (field == QLatin1String("padding")) return m_padding;
  if (field == QLatin1String("rate")) return m_rate;
  if (field == QLatin1String("scale")) return m_scale;
  if (field == QLatin1String("offset")) return m_offset;
  if (field == QLatin1String("epsilon")) return m_epsilon;
  if (field == QLatin1String("momentum")) return m_momentum;
  if (field == QLatin1String("target_shape")) return m_targetShape;
  if (field == QLatin1String("activation")) return m_activation;
  if (field == QLatin1String("name")) return m_name;
  return nullptr;
}

void LayerEditor::setIssues(const QVector<LayerIssue>& issues) {
  for (auto it = m_defaultTips.cbegin(); it != m_defaultTips.cend(); ++it) {
    const QString& field = it.key();
    QStringList texts;
    bool error = false;
    for (const LayerIssue& issue : issues) {
      if (issue.field != field) continue;
      texts << issue.text;
      error = error || issue.error;
    }
    QLabel* label = issueLabelFor(field);
    label->setText(texts.join(QLatin1Char('\n')));
    label->setStyleSheet(QStringLiteral("color: %1;").arg(errorColor(error)));
    fieldWidget(field)->setToolTip(texts.isEmpty() ? it.value() : texts.join(QLatin1Char('\n')));
  }
  updateVisibility();
}

void LayerEditor::setReadOnly(bool readOnly) {
  m_name->setReadOnly(readOnly);
  m_targetShape->setReadOnly(readOnly);
  for (QAbstractSpinBox* spin : findChildren<QAbstractSpinBox*>()) spin->setReadOnly(readOnly);
  for (QComboBox* combo : findChildren<QComboBox*>()) combo->setEnabled(!readOnly);
  for (QCheckBox* check : findChildren<QCheckBox*>()) check->setEnabled(!readOnly);
}

}  // namespace fitbench
