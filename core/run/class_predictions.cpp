#include "core/run/class_predictions.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/python/random.h"
#include "core/run/model_on_csv.h"
#include "core/training/sequential.h"

namespace fitbench {

int64_t ClassPredictions::row_total(int true_class) const {
  int64_t n = 0;
  for (int p = 0; p < classes; ++p) n += at(true_class, p);
  return n;
}

int64_t ClassPredictions::correct() const {
  int64_t n = 0;
  for (int c = 0; c < classes; ++c) n += at(c, c);
  return n;
}

double ClassPredictions::accuracy() const {
  return truth.empty() ? 0.0 : static_cast<double>(correct()) / static_cast<double>(truth.size());
}

std::optional<double> ClassPredictions::class_accuracy(int true_class) const {
  const int64_t n = row_total(true_class);
  if (n == 0) return std::nullopt;
  return static_cast<double>(at(true_class, true_class)) / static_cast<double>(n);
}

std::vector<Index> ClassPredictions::cell(int true_class, int predicted_class) const {
  std::vector<Index> rows;
  for (size_t i = 0; i < truth.size(); ++i)
    if (truth[i] == true_class && predicted[i] == predicted_class)
      rows.push_back(static_cast<Index>(i));
  return rows;
}

std::vector<Index> ClassPredictions::mistakes_first() const {
  std::vector<Index> order(truth.size());
  std::iota(order.begin(), order.end(), Index{0});
  std::stable_sort(order.begin(), order.end(), [this](Index a, Index b) {
    const auto i = static_cast<size_t>(a), j = static_cast<size_t>(b);
    const bool wrong_a = truth[i] != predicted[i], wrong_b = truth[j] != predicted[j];
    if (wrong_a != wrong_b) return wrong_a;
    return wrong_a ? score[i] > score[j] : score[i] < score[j];
  });
  return order;
}

namespace {

// Appends the classes of `outputs`' rows and their labels' to `out`.
void add_rows(const Matrix& outputs, const Matrix& y, Index y_first, ClassPredictions& out) {
  const int classes = out.classes;
  for (Index r = 0; r < outputs.rows(); ++r) {
    Index best = 0;
    outputs.row(r).maxCoeff(&best);
    int label = 0;
    if (y.cols() == 1) {
      const float v = y(y_first + r, 0);
      if (!(v >= 0.0f && v < static_cast<float>(classes)) || v != std::floor(v))
        throw InputError("data", "sample " + std::to_string(y_first + r) + " has the label " +
                                     format_number(v) + ", which is not a class index below " +
                                     std::to_string(classes));
      label = static_cast<int>(v);
    } else {
      Index hot = 0;
      y.row(y_first + r).maxCoeff(&hot);
      label = static_cast<int>(hot);
    }
    out.truth.push_back(label);
    out.predicted.push_back(static_cast<int>(best));
    out.score.push_back(outputs(r, best));
    ++out.confusion[static_cast<size_t>(label * classes + best)];
  }
}

void start(ClassPredictions& out, Index classes, const Matrix& y, Index rows) {
  if (classes < 2)
    throw InputError("model", "has " + counted(classes, "output") +
                                  ": a confusion matrix needs one output per class");
  if (y.cols() != 1 && y.cols() != classes)
    throw InputError("data", "has " + counted(y.cols(), "target column") + " for " +
                                 counted(classes, "output") +
                                 ": the labels must be a class index or one-hot");
  out = ClassPredictions{};
  out.classes = static_cast<int>(classes);
  out.confusion.assign(static_cast<size_t>(classes * classes), 0);
  out.truth.reserve(static_cast<size_t>(rows));
  out.predicted.reserve(static_cast<size_t>(rows));
  out.score.reserve(static_cast<size_t>(rows));
}

}  // namespace

ClassPredictions classify(const Matrix& outputs, const Matrix& y) {
  ClassPredictions out;
  start(out, outputs.cols(), y, outputs.rows());
  add_rows(outputs, y, 0, out);
  return out;
}

std::string classifier_problem(const ModelFile& model) {
  const std::string& loss = model.compile ? model.compile->loss.name : std::string();
  if (loss != "sparse_categorical_crossentropy" && loss != "categorical_crossentropy")
    return "The model is not trained as a classifier of several classes (its loss is " +
           (loss.empty() ? std::string("not given") : loss) +
           "; sparse_categorical_crossentropy or categorical_crossentropy is)";
  return {};
}

DataPart data_part(const Dataset& data, const ExperimentSpec& spec, const ModelFile& model,
                   bool validation) {
  DataPart part;
  part.sample_shape = data.sample_shape;
  const Index split = validation_split_at(data.size(), spec.fit.validation_split);
  if (!validation) {
    part.x = data.x.topRows(split);
    part.y = data.y.topRows(split);
  } else if (data.has_validation_data()) {
    part.x = data.validation_x;
    part.y = data.validation_y;
  } else {
    part.x = data.x.bottomRows(data.size() - split);
    part.y = data.y.bottomRows(data.size() - split);
  }
  standardize_as_trained(model, part.x, "the model");
  return part;
}

ClassPredictions predict_classes(const ModelFile& file, const DataPart& part,
                                 const std::atomic<bool>* cancel) {
  std::unique_ptr<Sequential> model;
  {
    RandomScope own_seeds;  // building draws initializer seeds: not the process-wide sequence's
    model = std::make_unique<Sequential>(file.config);
    if (!model->built())
      model->build(part.sample_shape.empty() ? Shape{part.x.cols()} : part.sample_shape);
    model->set_weights(file.weights, "the model");
  }
  if (model->network().input_units() != part.x.cols())
    throw InputError("the model", "takes " + counted(model->network().input_units(), "feature") +
                                      " but the data has " + counted(part.x.cols(), "feature"));
  ClassPredictions out;
  start(out, model->network().output_units(), part.y, part.x.rows());
  constexpr Index kChunk = 256;
  for (Index first = 0; first < part.x.rows(); first += kChunk) {
    if (cancel && cancel->load(std::memory_order_relaxed)) break;
    const Index n = std::min(kChunk, part.x.rows() - first);
    const Matrix outputs = model->predict(part.x.middleRows(first, n), static_cast<int>(kChunk));
    add_rows(outputs, part.y, first, out);
  }
  return out;
}

FirstFilters first_conv_filters(const ModelFile& model) {
  for (const NamedWeight& w : model.weights) {
    const std::string suffix = "/kernel";
    if (w.shape.size() != 4 || w.path.size() < suffix.size() ||
        w.path.compare(w.path.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    FirstFilters f;
    const std::string layer_path = w.path.substr(0, w.path.size() - suffix.size());
    const size_t slash = layer_path.rfind('/');
    f.layer = slash == std::string::npos ? layer_path : layer_path.substr(slash + 1);
    f.shape = w.shape;
    f.values = w.values;
    return f;
  }
  return {};
}

}  // namespace fitbench
