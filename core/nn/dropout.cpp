#include "core/nn/dropout.h"

#include "core/python/random.h"

namespace fitbench {

void Dropout::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y,
                      MatrixRef cache, const ForwardContext& ctx) const {
  const double rate = spec().rate;
  if (!ctx.training || rate <= 0.0) {
    y = x;
    cache.setOnes();
    return;
  }
  const float scale = static_cast<float>(1.0 / (1.0 - rate));
  const uint64_t layer_seed = spec().seed ? *spec().seed : ctx.seed;
  const uint64_t name_hash = std::hash<std::string>{}(name());
  for (Index r = 0; r < x.rows(); ++r) {
    const uint64_t row = static_cast<uint64_t>(ctx.row_offset + r);
    for (Index c = 0; c < x.cols(); ++c) {
      const double u = hash_uniform01({layer_seed, name_hash, ctx.step, row, uint64_t(c)});
      cache(r, c) = u >= rate ? scale : 0.0f;
    }
  }
  y = x.cwiseProduct(cache);
}

void Dropout::backward(std::span<const Matrix* const>, ConstMatrixRef, ConstMatrixRef,
                       MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                       std::span<Matrix* const>, const ForwardContext&) const {
  if (want_dx) dx = dy.cwiseProduct(cache);
}

}  // namespace fitbench
