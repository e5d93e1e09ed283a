// The Model panel's checks (model_checks.h).
#include "ui/panels/model_checks.h"

#include <QObject>

#include "core/base/error.h"
#include "core/losses/loss_registry.h"
#include "core/nn/activations.h"
#include "core/nn/layer_registry.h"
#include "core/nn/network.h"
#include "ui/common/text_style.h"

namespace fitbench {
namespace {

// The activations named by core's enum: the identity, and softmax.
const std::string& linearName() {
  static const std::string name = activation_name(Activation::kLinear);
  return name;
}
const std::string& softmaxName() {
  static const std::string name = activation_name(Activation::kSoftmax);
  return name;
}

// Whether an activation outputs probabilities: one a loss expects without from_logits.
bool givesProbabilities(const std::string& activation) {
  for (const LossInfo& l : loss_classes())
    if (!l.probabilities.empty() && l.probabilities == activation) return true;
  return false;
}

}  // namespace

bool setsWidth(const LayerSpec& l) {
  const LayerInfo* info = find_layer_class(l.class_name);
  return info != nullptr && info->outputs_units;
}

// The checks the Model panel shows as the user edits: each sentence says what is wrong and what
// would fix it. Errors stop a run (fit() would throw or cannot learn); warnings do not.
QVector<ModelIssue> validateModel(const std::vector<LayerSpec>& layers, const QStringList& names,
                                  const ModelContext& ctx) {
  QVector<ModelIssue> issues;
  const auto label = [&](int i) { return QObject::tr("Layer %1 (%2)").arg(i + 1).arg(names[i]); };
  // A layer's sentence starts with its label; the editor shows it without the label.
  const auto add = [&](int layer, const QString& field, const QString& text, bool error) {
    QString detail = text;
    if (layer >= 0 && detail.startsWith(label(layer) + QLatin1String(": "))) {
      detail.remove(0, label(layer).size() + 2);
      // "Units must ..." but "binary_crossentropy needs ...": identifiers keep their case.
      if (!detail.section(QLatin1Char(' '), 0, 0).contains(QLatin1Char('_')))
        detail[0] = detail[0].toUpper();
    }
    issues.push_back({layer, field, text, detail, error});
  };
  int lastDense = -1;
  std::map<QString, int> explicitNames;
  const std::vector<size_t> oneUnitSoftmax =
      single_unit_softmax_layers(ModelSpec{.layers = layers}, ctx.inputUnits);
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    const LayerSpec& l = layers[i];
    if (!l.name.empty()) {
      const QString name = QString::fromStdString(l.name);
      auto [it, inserted] = explicitNames.emplace(name, i);
      if (!inserted) {
        add(i, QStringLiteral("name"),
            QObject::tr("%1: the name \"%2\" is already used by layer %3; layer names must be "
                        "unique.")
                .arg(label(i), name)
                .arg(it->second + 1),
            true);
      }
    }
    if (setsWidth(l)) lastDense = i;
    if (layer_has_field(l.class_name, "units")) {
      if (l.units < 1) {
        add(i, QStringLiteral("units"),
            QObject::tr("%1: units must be at least 1 (got %2).").arg(label(i)).arg(l.units), true);
      }
    }
    if (layer_has_field(l.class_name, "filters") && l.filters < 1) {
      add(i, QStringLiteral("filters"),
          QObject::tr("%1: filters must be at least 1 (got %2).").arg(label(i)).arg(l.filters),
          true);
    }
    if (layer_has_field(l.class_name, "rate")) {
      if (!(l.rate >= 0.0 && l.rate < 1.0)) {
        add(i, QStringLiteral("rate"),
            QObject::tr("%1: the dropout rate must be at least 0 and below 1 (got %2).")
                .arg(label(i), sixDigits(l.rate)),
            true);
      }
    }
    if (std::find(oneUnitSoftmax.begin(), oneUnitSoftmax.end(), size_t(i)) !=
        oneUnitSoftmax.end()) {
      // Its output is the constant 1: with no Dense after it the model cannot learn at all (an
      // error); a Dense after it still learns a constant, the layers before it nothing.
      const bool denseAfter = std::any_of(layers.begin() + i + 1, layers.end(),
                                          [](const LayerSpec& later) { return setsWidth(later); });
      add(i, QStringLiteral("activation"),
          denseAfter ? QObject::tr("%1: softmax over a single unit always outputs 1, so the "
                                   "layers before it cannot learn; use another activation.")
                           .arg(label(i))
                     : QObject::tr("%1: softmax over a single unit always outputs 1, so nothing "
                                   "can be learned; use sigmoid for one output.")
                           .arg(label(i)),
          !denseAfter);
    }
  }
  // Shapes through the layers (Flatten, Reshape; a Dense or softmax needs one axis), as the
  // engine's Network computes them and with its sentences. A layer with a field error above
  // stops the walk: its output is unknown.
  Shape shape = !ctx.inputShape.empty() ? Shape(ctx.inputShape.begin(), ctx.inputShape.end())
                : ctx.inputUnits > 0    ? Shape{ctx.inputUnits}
                                        : Shape{};
  for (int i = 0; i < static_cast<int>(layers.size()) && !shape.empty(); ++i) {
    if (std::any_of(issues.begin(), issues.end(),
                    [i](const ModelIssue& issue) { return issue.layer == i && issue.error; }))
      break;
    const LayerSpec& l = layers[i];
    try {
      shape = make_layer(l, "")->output_shape(shape, "");
    } catch (const InputError& e) {
      const QString field = l.class_name == "Reshape"  ? QStringLiteral("target_shape")
                            : l.class_name == "Dense"  ? QStringLiteral("units")
                            : l.class_name == "Conv2D" ? QStringLiteral("kernel_size")
                            : layer_has_field(l.class_name, "pool_size")
                                ? QStringLiteral("pool_size")
                                : QStringLiteral("activation");
      QString message = QString::fromStdString(e.message());
      if (!e.place().empty() && e.place() != "." && e.place().rfind(".config.", 0) == 0)
        message = QString::fromStdString(e.place().substr(8)) + QLatin1Char(' ') + message;
      add(i, field, QObject::tr("%1: %2").arg(label(i), message), true);
      break;
    }
  }
  const bool fieldErrors = std::any_of(issues.begin(), issues.end(),
                                       [](const ModelIssue& issue) { return issue.error; });
  if (shape.size() > 1 && !layers.empty() && !fieldErrors)
    add(static_cast<int>(layers.size()) - 1, QString(),
        QObject::tr("%1: the model's output has shape %2, and fitbench's losses take one axis of "
                    "outputs; end the model with a Dense layer, or a Flatten.")
            .arg(label(static_cast<int>(layers.size()) - 1),
                 QString::fromStdString(batch_shape_text(shape))),
        true);
  if (lastDense < 0) {
    add(-1, QString(),
        QObject::tr("Add at least one Dense layer: without one the model has no weights to "
                    "train."),
        true);
    return issues;
  }
  if (!ctx.hasTargets) return issues;

  // The output width is the last Dense layer's; the final activation is the last non-linear one
  // after it (Dropout and linear Activation layers pass values through).
  const int64_t outputs = layers[lastDense].units;
  std::string finalActivation = layers[lastDense].activation;
  int finalLayer = lastDense;
  for (int i = static_cast<int>(layers.size()) - 1; i > lastDense; --i) {
    if (!setsWidth(layers[i]) && layer_has_field(layers[i].class_name, "activation") &&
        layers[i].activation != linearName()) {
      finalActivation = layers[i].activation;
      finalLayer = i;
      break;
    }
  }
  const std::string& loss = ctx.loss.name;
  const QString lossName = QString::fromStdString(loss);
  const LossInfo* lossInfo = find_loss(loss);
  const LossTargets targets = lossInfo != nullptr ? lossInfo->targets : LossTargets::kValues;
  const QString outputLabel = label(lastDense);
  int64_t wanted = 0;
  QString why;
  if (targets == LossTargets::kBinary) {
    wanted = ctx.targetColumns > 0 ? ctx.targetColumns : 1;
    why = wanted == 1 ? QObject::tr("1 output unit (the probability of class 1)")
                      : QObject::tr("one output unit per target column (%1)").arg(wanted);
  } else if (targets == LossTargets::kOneHot) {
    wanted = ctx.classes > 0 ? ctx.classes : ctx.targetColumns;
    why = QObject::tr("one output unit per class (%1)").arg(wanted);
  } else if (targets == LossTargets::kSparse) {
    wanted = ctx.classes;
    why = QObject::tr("one output unit per class (%1)").arg(wanted);
    if (ctx.targetColumns > 1) {
      add(-1, QString(),
          QObject::tr("sparse_categorical_crossentropy needs one integer class label per sample "
                      "(1 target column), but the data has %1 target columns; use "
                      "categorical_crossentropy for one-hot targets.")
              .arg(ctx.targetColumns),
          true);
    }
  } else {
    wanted = ctx.targetColumns;
    why = QObject::tr("one output unit per target column (%1)").arg(wanted);
  }
  // Sparse labels index the output units: more units than classes is valid Keras (the spare
  // units' classes never occur and learn probability 0), fewer leaves labels without a unit.
  const bool sparse = targets == LossTargets::kSparse;
  if (sparse && wanted > 0 && outputs > wanted) {
    add(lastDense, QStringLiteral("units"),
        QObject::tr("%1: the data has %2 classes (labels 0 to %3), so %4 of this layer's %5 "
                    "output units stand for classes no sample has; they learn probability 0.")
            .arg(outputLabel)
            .arg(wanted)
            .arg(wanted - 1)
            .arg(outputs - wanted)
            .arg(outputs),
        false);
  } else if (wanted > 0 && outputs >= 1 && outputs != wanted) {
    add(lastDense, QStringLiteral("units"),
        QObject::tr("%1: %2 needs %3, but this last Dense layer has %4.")
            .arg(outputLabel, lossName, why,
                 outputs == 1 ? QObject::tr("1 unit") : QObject::tr("%1 units").arg(outputs)),
        true);
  }
  if (lossInfo != nullptr && !lossInfo->probabilities.empty()) {
    const bool binary = targets == LossTargets::kBinary;
    const std::string squash(lossInfo->probabilities);
    const QString finalLabel = label(finalLayer);
    if (ctx.loss.from_logits && givesProbabilities(finalActivation)) {
      add(finalLayer, QStringLiteral("activation"),
          QObject::tr("%1: the last activation is %2 and the loss has from_logits, so the loss "
                      "applies %3 on top of it: use a linear last layer with from_logits, or turn "
                      "from_logits off.")
              .arg(finalLabel, QString::fromStdString(finalActivation),
                   QString::fromStdString(squash)),
          false);
    } else if (!ctx.loss.from_logits && finalActivation != squash &&
               !(finalActivation == softmaxName() && outputs == 1)) {
      const QString activation = QString::fromStdString(finalActivation);
      const QString wanted = QString::fromStdString(squash);
      QString text;
      if (finalActivation == linearName())  // logits: either fix is right
        text = QObject::tr(
                   "%1: the last layer is linear (it outputs logits), but %2 without "
                   "from_logits expects probabilities: give it a %3 activation, or turn "
                   "from_logits on.")
                   .arg(finalLabel, lossName, wanted);
      else if (givesProbabilities(finalActivation))
        // Probabilities already, of the other kind: from_logits would be wrong.
        text = binary ? QObject::tr(
                            "%1: softmax makes the units' probabilities add up to 1, but "
                            "%2 treats each unit as its own yes/no label: use sigmoid.")
                            .arg(finalLabel, lossName)
                      : QObject::tr(
                            "%1: sigmoid gives each unit its own probability, but %2 "
                            "expects the classes' probabilities to add up to 1: use "
                            "softmax.")
                            .arg(finalLabel, lossName);
      else
        text = QObject::tr(
                   "%1: the last activation is %2, whose outputs are not probabilities, "
                   "but %3 without from_logits expects them: give the last layer a %4 "
                   "activation (or a linear one, with from_logits on).")
                   .arg(finalLabel, activation, lossName, wanted);
      add(finalLayer, QStringLiteral("activation"), text, false);
    }
  }
  return issues;
}

}  // namespace fitbench
