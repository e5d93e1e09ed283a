// The seed's Keras script (docs: DESIGN.md) translated line by line to fitbench's C++ API: a
// one-unit logistic regression trained with DataParallel on the simulated CPU devices. The device
// count comes from FITBENCH_CPU_DEVICES or the script's own
// XLA_FLAGS=--xla_force_host_platform_device_count=N, as for the Keras script. Prints the same
// lines as the script: Devices, Distribution, one line per epoch, Final accuracy.
#include <cstdio>
#include <iostream>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/distribution/api/distribution_api.h"
#include "core/distribution/spec/devices.h"
#include "core/python/random.h"
#include "core/training/sequential.h"

using namespace fitbench;

int main() {
  try {
    // keras.utils.set_random_seed(7)
    set_random_seed(7);
    // rng = np.random.default_rng(7)
    // x = rng.normal(size=(128, 4)).astype("float32"); y = (x[:, 0] > 0)
    const Dataset data =
        generate_dataset(DataSpec{.generator = "seed", .samples = 128, .seed = 7, .features = 4});
    // devices = keras.distribution.list_devices("cpu")
    const std::vector<std::string> devices = list_devices("cpu");
    // print("Devices:", devices)
    std::cout << "Devices: " << device_list_repr(devices) << "\n";
    // distribution = keras.distribution.DataParallel(devices=devices)
    const DataParallel distribution(devices);
    // keras.distribution.set_distribution(distribution)
    set_distribution(distribution);
    // print("Distribution:", type(distribution).__name__)
    std::cout << "Distribution: " << distribution.class_name() << "\n";
    // model = keras.Sequential([layers.Input(shape=(4,)), layers.Dense(1, activation="sigmoid")])
    ModelSpec spec;
    spec.layers = {LayerSpec{.class_name = "InputLayer", .shape = {4}},
                   LayerSpec{.class_name = "Dense", .units = 1, .activation = "sigmoid"}};
    Sequential model(spec);
    // (Keras places a model made under a distribution on its devices implicitly.)
    distribute(model);
    // model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.2),
    //               loss="binary_crossentropy", metrics=["accuracy"])
    model.compile(CompileOptions{.optimizer = {.class_name = "SGD", .learning_rate = 0.2},
                                 .loss = {.name = "binary_crossentropy"},
                                 .metrics = {"accuracy"}});
    // history = model.fit(x, y, epochs=4, batch_size=16, verbose=2)
    const History history =
        model.fit(data.x, data.y, FitOptions{.epochs = 4, .batch_size = 16, .verbose = 2});
    // print(f"Final accuracy: {history.history['accuracy'][-1]:.4f}")
    std::printf("Final accuracy: %.4f\n", history.last("accuracy"));
    return 0;
  } catch (const InputError& e) {
    std::cerr << "train_distributed: " << e.what() << "\n";
    return 2;
  }
}
