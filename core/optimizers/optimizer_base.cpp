#include "core/optimizers/optimizer_base.h"

#include <cassert>
#include <cmath>

namespace fitbench {

OptimizerBase::OptimizerBase(const OptimizerSpec& spec, double default_learning_rate)
    : learning_rate_(spec.learning_rate.value_or(default_learning_rate)),
      schedule_(spec.schedule),
      weight_decay_(spec.weight_decay),
      clipnorm_(spec.clipnorm),
      clipvalue_(spec.clipvalue),
      global_clipnorm_(spec.global_clipnorm),
      elementwise_(elementwise_update(spec)) {}

bool elementwise_update(const OptimizerSpec& spec) {
  return !(spec.clipnorm && *spec.clipnorm > 0.0) &&
         !(spec.global_clipnorm && *spec.global_clipnorm > 0.0);
}

// As Keras's build(), a second call keeps the slots made by the first.
void OptimizerBase::build(std::span<Matrix* const> variables) {
  if (built_) return;
  if (kept_end_ >= 0) {
    std::vector<int64_t> sizes;
    for (const Matrix* v : variables) sizes.push_back(v->size());
    place_kept_range(sizes);
  }
  build_slots(variables);
  built_ = true;
}

double OptimizerBase::learning_rate() const {
  return schedule_ ? schedule_value(*schedule_, static_cast<double>(iterations_)) : learning_rate_;
}

void OptimizerBase::set_learning_rate(double lr) {
  schedule_.reset();
  learning_rate_ = lr;
}

// base_optimizer.py _clip_gradients, _clip_by_norm and clip_by_global_norm, in float32. At most
// one of the three is set (make_optimizer checks).
void OptimizerBase::clip_gradients(std::span<Matrix* const> gradients) const {
  if (clipnorm_ && *clipnorm_ > 0.0) {
    // Per variable: g * clipnorm / max(||g||, clipnorm).
    const float c = static_cast<float>(*clipnorm_);
    for (Matrix* g : gradients) {
      const float l2sum = g->squaredNorm();
      const float l2norm = l2sum > 0.0f ? std::sqrt(l2sum) : l2sum;
      const float denominator = std::max(l2norm, c);
      g->array() = g->array() * c / denominator;
    }
  } else if (global_clipnorm_ && *global_clipnorm_ > 0.0) {
    // All together: g * clip * min(1 / ||all||, 1 / clip); a non-finite norm makes every
    // gradient NaN, as in Keras.
    const float c = static_cast<float>(*global_clipnorm_);
    float squared = 0.0f;
    for (const Matrix* g : gradients) squared += g->squaredNorm();
    const float norm = std::sqrt(squared);
    const float scale = c * std::min(1.0f / norm, 1.0f / c) + (norm - norm);
    for (Matrix* g : gradients) g->array() *= scale;
  } else if (clipvalue_ && *clipvalue_ > 0.0) {
    const float v = static_cast<float>(*clipvalue_);
    for (Matrix* g : gradients) g->array() = g->array().max(-v).min(v);
  }
}

// base_optimizer.py apply / _backend_apply_gradients: clip, decay the weights, run the rule with
// the learning rate of this iteration, then count the iteration.
void OptimizerBase::apply(std::span<Matrix* const> variables, std::span<Matrix* const> gradients) {
  if (!built_) build(variables);
  assert(variables.size() == gradients.size() && kept_end_ < 0);
  clip_gradients(gradients);
  int64_t total = 0;
  for (const Matrix* v : variables) total += v->size();
  update_range(variables, gradients, 0, total);
}

bool OptimizerBase::elementwise() const { return elementwise_; }

Matrix OptimizerBase::new_slot(size_t index, const Matrix& variable, float value) const {
  if (kept_end_ < 0) return Matrix::Constant(variable.rows(), variable.cols(), value);
  return Matrix::Constant(slot_lengths_[index], 1, value);
}

void OptimizerBase::place_kept_range(const std::vector<int64_t>& sizes) {
  slot_offsets_.assign(sizes.size(), 0);
  slot_lengths_.assign(sizes.size(), 0);
  int64_t base = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t lo = std::clamp(kept_begin_, base, base + sizes[i]);
    const int64_t hi = std::clamp(kept_end_, base, base + sizes[i]);
    slot_offsets_[i] = static_cast<Index>(lo - base);
    slot_lengths_[i] = static_cast<Index>(std::max<int64_t>(hi - lo, 0));
    base += sizes[i];
  }
}

// A built optimizer (a clone of one that has trained) cuts its slots down to the kept range.
void OptimizerBase::keep_range(int64_t begin, int64_t end) {
  assert(kept_end_ < 0 && 0 <= begin && begin <= end);
  kept_begin_ = begin;
  kept_end_ = end;
  if (!built_) return;
  const auto groups = slots();
  std::vector<int64_t> sizes;
  for (const auto* group : groups)
    if (!group->empty() && sizes.empty())
      for (const Matrix& m : *group) sizes.push_back(m.size());
  place_kept_range(sizes);
  for (const auto* group : groups) {
    auto& list = const_cast<std::vector<Matrix>&>(*group);  // ours, and this call is not const
    for (size_t i = 0; i < list.size(); ++i) {
      Matrix part =
          Eigen::Map<const Matrix>(list[i].data() + slot_offsets_[i], slot_lengths_[i], 1);
      list[i] = std::move(part);
    }
  }
}

int64_t OptimizerBase::slot_bytes() const {
  int64_t floats = 0;
  for (const auto* group : slots())
    for (const Matrix& m : *group) floats += m.size();
  return floats * static_cast<int64_t>(sizeof(float));
}

void OptimizerBase::apply_range(std::span<Matrix* const> variables,
                                std::span<Matrix* const> gradients, int64_t begin, int64_t end) {
  assert(elementwise() && (kept_end_ < 0 || (kept_begin_ <= begin && end <= kept_end_)));
  if (!built_) build(variables);
  assert(variables.size() == gradients.size());
  if (clipvalue_ && *clipvalue_ > 0.0) {
    const float v = static_cast<float>(*clipvalue_);
    for_each_piece(gradients, begin, end, [&](size_t, Matrix& g, Index lo, Index n) {
      ArrayMap g_block = block(g, lo, n);
      g_block = g_block.max(-v).min(v);
    });
  }
  update_range(variables, gradients, begin, end);
}

void OptimizerBase::update_range(std::span<Matrix* const> variables,
                                 std::span<Matrix* const> gradients, int64_t begin, int64_t end) {
  Step step;
  step.learning_rate = static_cast<float>(learning_rate());
  step.weight_decay = static_cast<float>(weight_decay_.value_or(0.0));
  step.local_step = iterations_ + 1;
  for_each_piece(variables, begin, end, [&](size_t i, Matrix& v, Index lo, Index n) {
    assert(v.rows() == gradients[i]->rows() && v.cols() == gradients[i]->cols());
    update(i, v, *gradients[i], step, lo, lo + n);
  });
  ++iterations_;
}

void OptimizerBase::copy_state_range(const Optimizer& other, int64_t begin, int64_t end) {
  const auto& from = dynamic_cast<const OptimizerBase&>(other);
  assert(kept_end_ < 0 &&
         (from.kept_end_ < 0 || (from.kept_begin_ <= begin && end <= from.kept_end_)));
  const auto mine = slots(), theirs = from.slots();
  assert(mine.size() == theirs.size());
  for (size_t s = 0; s < mine.size(); ++s) {
    // A slot list is empty when the rule does not use it (or before build()).
    auto& to = const_cast<std::vector<Matrix>&>(*mine[s]);  // ours, and this call is not const
    const auto& src = *theirs[s];
    if (to.empty() || src.empty()) continue;
    assert(to.size() == src.size());
    std::vector<Matrix*> pieces;
    for (auto& m : to) pieces.push_back(&m);
    for_each_piece(std::span<Matrix* const>(pieces), begin, end,
                   [&](size_t i, Matrix& m, Index lo, Index n) {
                     block(m, lo, n) = block(src[i], lo - from.slot_offset(i), n);
                   });
  }
  iterations_ = from.iterations_;
}

std::vector<Optimizer::SlotVariable> OptimizerBase::keras_slots() const {
  const auto groups = slots();
  const auto kinds = slot_kinds();
  assert(groups.size() == kinds.size());
  std::vector<SlotVariable> out;
  auto add_call = [&](size_t first, size_t last) {  // kinds [first, last) made by one call
    size_t variables = 0;
    for (size_t k = first; k < last; ++k) variables = std::max(variables, groups[k]->size());
    for (size_t v = 0; v < variables; ++v)
      for (size_t k = first; k < last; ++k)
        if (v < groups[k]->size()) out.push_back({&(*groups[k])[v], v, kinds[k]});
  };
  const size_t together = std::min(kinds_made_together(), groups.size());
  add_call(0, together);
  for (size_t k = together; k < groups.size(); ++k) add_call(k, k + 1);
  return out;
}

void OptimizerBase::set_state(int64_t iterations, std::span<const Matrix> values) {
  assert(built_ && kept_end_ < 0);
  const auto order = keras_slots();
  assert(order.size() == values.size());
  for (size_t i = 0; i < order.size(); ++i) {
    // The slots are ours and this call is not const.
    auto& slot = const_cast<Matrix&>(*order[i].value);
    assert(slot.rows() == values[i].rows() && slot.cols() == values[i].cols());
    slot = values[i];
  }
  iterations_ = iterations;
}

}  // namespace fitbench
