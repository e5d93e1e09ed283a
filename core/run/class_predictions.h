// What a trained classifier says of a part of its data, for the window's Images view: each
// sample's predicted class (the output with the largest value, as np.argmax(model.predict(x))),
// its true class, and the confusion matrix Keras users draw with
// sklearn.metrics.confusion_matrix (rows the true class, columns the predicted one). The part is
// read again as the run read it: the experiment's data, the run's standardization, Keras's
// validation_split from the end or the data set's own test images. Free functions on values;
// each call builds its own model, so calls on different threads are independent.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/data/dataset.h"
#include "core/io/experiment.h"
#include "core/training/model_state.h"

namespace fitbench {

struct ClassPredictions {
  int classes = 0;
  std::vector<int> truth;          // per sample
  std::vector<int> predicted;      // per sample
  std::vector<float> score;        // the predicted class's output (a softmax's probability)
  std::vector<int64_t> confusion;  // classes x classes, row-major: [true][predicted]

  Index size() const { return static_cast<Index>(truth.size()); }
  int64_t at(int true_class, int predicted_class) const {
    return confusion[static_cast<size_t>(true_class * classes + predicted_class)];
  }
  int64_t row_total(int true_class) const;  // the samples of a class
  int64_t correct() const;                  // the diagonal's sum
  double accuracy() const;                  // correct / size (0 for no sample)
  // A class's accuracy: its samples predicted right (its recall); none when it has no sample.
  std::optional<double> class_accuracy(int true_class) const;
  // The samples of one cell, in data order.
  std::vector<Index> cell(int true_class, int predicted_class) const;
  // Every sample, the wrong ones first (the most confident mistake first), then the right ones
  // (the least confident first): the order a predictions grid shows them in.
  std::vector<Index> mistakes_first() const;
};

// Classes from outputs (rows, classes >= 2) and labels y: a column of class indices, or one-hot
// columns as many as the outputs. Throws InputError("data", ...) when the labels do not fit.
ClassPredictions classify(const Matrix& outputs, const Matrix& y);

// Whether the images view can classify with this model: its last layer has 2 or more outputs and
// the loss takes class labels (sparse_categorical_crossentropy or categorical_crossentropy).
// Otherwise the sentence says why; empty when it can.
std::string classifier_problem(const ModelFile& model);

// One part of a run's data, as the run trained or validated on it.
struct DataPart {
  Matrix x, y;
  Shape sample_shape;  // (28, 28) for Fashion-MNIST; empty: (features,)
};

// The training part (`validation` false) or the validation part of `data`, which
// load_dataset read for `spec`: the rows before Keras's validation_split point, or the rest /
// the data set's test images; standardized as `model` was trained. An empty part (no validation
// data) has no rows.
DataPart data_part(const Dataset& data, const ExperimentSpec& spec, const ModelFile& model,
                   bool validation);

// The model's predictions for `part`, in batches of 256 rows; stops early, returning what it
// has (fewer samples), when `cancel` becomes true. Throws InputError for a model file that
// does not build on the part's shape.
ClassPredictions predict_classes(const ModelFile& model, const DataPart& part,
                                 const std::atomic<bool>* cancel = nullptr);

// The first Conv2D layer's kernel, (kh, kw, in, out) row-major, and its shape; an empty shape
// when the model has no Conv2D.
struct FirstFilters {
  std::string layer;  // the layer's name
  Shape shape;        // (kh, kw, in, out)
  std::vector<float> values;
};
FirstFilters first_conv_filters(const ModelFile& model);

}  // namespace fitbench
