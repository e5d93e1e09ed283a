#include "core/io/new_experiment.h"

namespace fitbench {

ExperimentSpec new_experiment() {
  ExperimentSpec spec;
  spec.name = "Untitled";
  // Its own text, true whatever data the user picks next: what to do, and where to write the
  // lesson (a data set named here would be wrong once another is chosen).
  spec.description =
      "A new experiment. Change the data, the model or the devices on the left, then press "
      "**Run**. Give it a name and write what to try and what to watch in **File > Name and "
      "lesson**; the text is saved with the experiment.";
  spec.seed = 7;
  spec.data.generator = "circle";
  spec.data.samples = 400;
  spec.data.noise = 0.1;
  spec.data.features = 2;
  LayerSpec hidden;
  hidden.class_name = "Dense";
  hidden.units = 8;
  hidden.activation = "tanh";
  LayerSpec out;
  out.class_name = "Dense";
  out.units = 1;
  out.activation = "sigmoid";
  spec.model.layers = {hidden, hidden, out};
  spec.compile.optimizer.class_name = "Adam";
  spec.compile.optimizer.learning_rate = 0.03;
  spec.compile.loss.name = "binary_crossentropy";
  spec.compile.metrics = {"accuracy"};
  spec.fit.epochs = 30;
  spec.fit.batch_size = 16;
  spec.fit.validation_split = 0.2;
  spec.fit.verbose = 2;
  return spec;
}

}  // namespace fitbench
