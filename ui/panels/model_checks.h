// The Model panel's checks, as the user edits: each sentence says what is wrong with the layers
// (or the model against its data and loss) and what would fix it. Errors stop a run (fit() would
// throw or cannot learn); warnings do not. Pure functions over value types; the sentences are
// translated, so UI thread only.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>
#include <vector>

#include "core/losses/loss_spec.h"
#include "core/nn/layer_spec.h"

namespace fitbench {

// One validation message: about a layer (index among the non-input layers) or the whole model.
struct ModelIssue {
  int layer = -1;  // -1: the model as a whole
  QString field;   // the editor field it concerns ("units", "rate", "activation", "name")
  QString text;    // one sentence, already naming the layer
  QString detail;  // the same sentence without the layer's label (for the layer editor)
  bool error = true;
};

// What validateModel looks at besides the layers.
struct ModelContext {
  int inputUnits = 0;  // 0: unknown
  // One sample's shape at the input ((28, 28) for an image); empty: (inputUnits).
  std::vector<int64_t> inputShape;
  bool hasTargets = false;
  int targetColumns = 0;
  int classes = 0;
  LossSpec loss;
};

// The issues of `layers` (the non-input ones, named `names`) in `ctx`.
QVector<ModelIssue> validateModel(const std::vector<LayerSpec>& layers, const QStringList& names,
                                  const ModelContext& ctx);

// Whether the layer sets the output width (a Dense): its `units` are the next layer's inputs.
bool setsWidth(const LayerSpec& l);

}  // namespace fitbench
