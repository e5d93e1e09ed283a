// Convolution speed: (a) resources/examples/fashion_mnist_cnn.json's network (two Conv2D with max
// pooling, Dense 128, Dense 10; Adam, batch 32) trained through Sequential::fit on synthetic
// 28 x 28 images, on one device and with DataParallel on 2 simulated devices, in samples/s;
// (b) one Conv2D alone (the example's second, 13 x 13 x 16 into 32 filters of 3 x 3, batch 32),
// forward and backward with the input's gradient, in GFLOP/s against this machine's one-thread
// Eigen SGEMM on the same matrix product and on 1024^3: the "at least 50% of SGEMM".
// torch_peer.py --cnn runs (a) in PyTorch. Usage: bench_conv [--repeats N]
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/bench_gemm.h"
#include "core/distribution/executors/distribution.h"
#include "core/io/experiment.h"
#include "core/nn/network.h"
#include "core/training/sequential.h"

namespace {

using namespace fitbench;
using fitbench::bench::Clock;
using fitbench::bench::EpochTimer;
using fitbench::bench::gemm_gflops_1;
using fitbench::bench::median;
using fitbench::bench::random_matrix;
using fitbench::bench::seconds_since;
using fitbench::bench::time_per_iteration;

// The example's network trained on `x`, `y` for 1 + repeats epochs: the median samples/s of the
// epochs after the first (which also pays the setup).
double cnn_samples_per_s(const ExperimentSpec& spec, const Matrix& x, const Matrix& y, int repeats,
                         int devices) {
  set_random_seed(1);
  Sequential model(spec.model);
  model.compile(spec.compile);
  if (devices > 0) use_data_parallel(model, devices);
  EpochTimer timer;
  RunOptions run;
  run.callbacks = {&timer};
  FitOptions fit = spec.fit;
  fit.epochs = 1 + repeats;
  fit.verbose = 0;
  model.fit(x, y, fit, run);
  const std::vector<double> steady(timer.seconds.begin() + 1, timer.seconds.end());
  return static_cast<double>(x.rows()) / median(steady);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = std::atoi(argv[++i]);
  std::printf("host: %s; load average %s\n", bench::host_cpu().c_str(),
              bench::load_average().c_str());

  // (a) The example's network.
  const ExperimentSpec spec =
      read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");
  const Index samples = 4096;
  Matrix x = random_matrix(samples, 784, 31).array().abs();
  Matrix y(samples, 1);
  Rng rng(32);
  for (Index i = 0; i < samples; ++i) y(i, 0) = static_cast<float>(rng.below(10));
  const double one = cnn_samples_per_s(spec, x, y, repeats, 0);
  const double two = cnn_samples_per_s(spec, x, y, repeats, 2);

  // (b) One Conv2D's forward and backward (the kernel's and the input's gradients).
  const Index batch = spec.fit.batch_size, h = 13, w = 13, c = 16, filters = 32, k = 3;
  LayerSpec input;
  input.class_name = "InputLayer";
  input.shape = {h, w, c};
  LayerSpec pass;  // so that the Conv2D is not the first layer and computes its input gradient
  pass.class_name = "Reshape";
  pass.target_shape = {h, w, c};
  LayerSpec conv;
  conv.class_name = "Conv2D";
  conv.filters = filters;
  conv.kernel_size = {k, k};
  conv.activation = "relu";
  ModelSpec m;
  m.layers = {input, pass, conv};
  Network net(m);
  net.build(Shape{h, w, c});
  Matrix kernel = random_matrix(k * k * c, filters, 33) * 0.1f;
  Matrix bias = random_matrix(1, filters, 34) * 0.1f;
  Matrix dk(kernel.rows(), kernel.cols()), db(1, filters);
  const std::vector<const Matrix*> params = {&kernel, &bias};
  const std::vector<Matrix*> grads = {&dk, &db};
  const Matrix images = random_matrix(batch, h * w * c, 35);
  Workspace ws;
  net.reserve(ws, batch);
  const Index pixels = (h - k + 1) * (w - k + 1);
  const double flops = 6.0 * double(batch * pixels) * double(k * k * c) * double(filters);
  const double step = time_per_iteration(
      [&](long it) {
        for (long i = 0; i < it; ++i) {
          net.forward(params, images, ws, ForwardContext{.training = true});
          net.output_grad(ws, batch) = net.output(ws, batch);
          net.backward(params, images, ws, batch, grads);
        }
      },
      repeats, 0.3);
  const double conv_gflops = flops / step * 1e-9;
  const double sgemm_same = gemm_gflops_1(batch * pixels, k * k * c, filters, repeats);
  const double sgemm_cube = gemm_gflops_1(1024, 1024, 1024, repeats);

  std::printf("%-58s %10.0f samples/s\n", "(a) fashion_mnist_cnn fit, 1 device", one);
  std::printf("%-58s %10.0f samples/s\n", "(a) fashion_mnist_cnn fit, DataParallel 2 devices", two);
  std::printf("%-58s %10.1f GF/s\n", "(b) Conv2D 13x13x16 -> 32 (3x3), batch 32, fwd+bwd",
              conv_gflops);
  std::printf("%-58s %10.1f GF/s\n", "(b) SGEMM of its windows 5408x144x32, 1 thread", sgemm_same);
  std::printf("%-58s %10.1f GF/s\n", "(b) SGEMM 1024^3, 1 thread", sgemm_cube);
  std::printf("%-58s %10.2f\n", "Conv2D GF/s / SGEMM 1024^3 (target >= 0.50)",
              conv_gflops / sgemm_cube);
  std::printf("%-58s %10.2f\n", "DataParallel 2 / 1 device samples/s", two / one);
  std::printf(
      "RESULT cnn_samples_per_s=%.0f cnn_samples_per_s_dp2=%.0f conv_gflops=%.1f "
      "sgemm_same_1t=%.1f sgemm_1024_1t=%.1f\n",
      one, two, conv_gflops, sgemm_same, sgemm_cube);
  return 0;
}
