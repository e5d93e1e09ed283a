// The part every Keras 3 optimizer shares (keras/src/optimizers/base_optimizer.py): learning rate
// or schedule, iteration count, gradient clipping and decoupled weight decay around a per-variable
// update rule. Owns its slot variables; not thread-safe (one instance per replica).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "core/optimizers/optimizer.h"

namespace fitbench {

class OptimizerBase : public Optimizer {
 public:
  void build(std::span<Matrix* const> variables) final;
  void apply(std::span<Matrix* const> variables, std::span<Matrix* const> gradients) final;
  bool elementwise() const final;
  void apply_range(std::span<Matrix* const> variables, std::span<Matrix* const> gradients,
                   int64_t begin, int64_t end) final;
  void copy_state_range(const Optimizer& other, int64_t begin, int64_t end) final;
  void keep_range(int64_t begin, int64_t end) final;
  int64_t slot_bytes() const final;

  double learning_rate() const final;
  void set_learning_rate(double lr) final;
  bool has_schedule() const final { return schedule_.has_value(); }
  int64_t iterations() const final { return iterations_; }
  bool built() const final { return built_; }
  std::vector<SlotVariable> keras_slots() const final;
  void set_state(int64_t iterations, std::span<const Matrix> slots) final;

 protected:
  // `spec` has passed make_optimizer's validation; `default_learning_rate` is Keras's default for
  // the class, used when spec.learning_rate is unset.
  OptimizerBase(const OptimizerSpec& spec, double default_learning_rate);

  // What one update step needs besides the gradient, in the variables' float32.
  struct Step {
    float learning_rate;  // the schedule's value at iterations(), or the constant rate
    float weight_decay;   // 0 when disabled
    int64_t local_step;   // iterations() + 1, as Keras's bias corrections count
  };

  // Creates the rule's slot variables for `variables` (called once), each made by new_slot().
  virtual void build_slots(std::span<Matrix* const> variables) = 0;
  // A slot for variables[index] filled with `value`: shaped as the variable, or as the part of
  // it keep_range() keeps (one column).
  Matrix new_slot(size_t index, const Matrix& variable, float value = 0.0f) const;
  // Elements [offset, offset + length) of variable `index`'s slot `slot`, in the variable's
  // element numbering (a kept range's slot starts at its first kept element).
  Eigen::Map<Eigen::ArrayXf> slot_block(Matrix& slot, size_t index, Index offset,
                                        Index length) const {
    return Eigen::Map<Eigen::ArrayXf>(slot.data() + (offset - slot_offset(index)), length);
  }
  // Updates elements [begin, end) of variables[index] in place from its clipped gradient; starts
  // each block with decay_block() so that weight decay precedes the rule as in Keras.
  virtual void update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step,
                      Index begin, Index end) = 0;
  // The rule's slot variables: one list per kind of slot, each with one matrix per variable.
  virtual std::vector<const std::vector<Matrix>*> slots() const = 0;
  // Keras's name of each kind of slots() ("momentum", ...), and how many of the first kinds one
  // add_optimizer_variables call makes together (interleaved per variable; Adam: 2).
  virtual std::vector<std::string> slot_kinds() const = 0;
  virtual size_t kinds_made_together() const { return 1; }

  using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
  using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

  // Runs f(offset, length) over [begin, end) in blocks small enough that the several passes of a
  // rule (one fused expression per slot) find their operands in the L1 cache.
  template <class F>
  static void for_each_block(Index begin, Index end, F&& f) {
    constexpr Index kBlock = 1024;
    for (Index offset = begin; offset < end; offset += kBlock)
      f(offset, std::min(kBlock, end - offset));
  }
  // Calls f(index, matrix, offset, length) for the part of each matrix that lies in [begin, end)
  // of the logical buffer made of `matrices` one after the other.
  template <class F>
  static void for_each_piece(std::span<Matrix* const> matrices, int64_t begin, int64_t end, F&& f) {
    int64_t base = 0;
    for (size_t i = 0; i < matrices.size() && base < end; ++i) {
      const int64_t size = matrices[i]->size();
      const int64_t lo = std::max(begin, base), hi = std::min(end, base + size);
      if (lo < hi) f(i, *matrices[i], static_cast<Index>(lo - base), static_cast<Index>(hi - lo));
      base += size;
    }
  }
  static ArrayMap block(Matrix& m, Index offset, Index length) {
    return ArrayMap(m.data() + offset, length);
  }
  static ConstArrayMap block(const Matrix& m, Index offset, Index length) {
    return ConstArrayMap(m.data() + offset, length);
  }
  // base_optimizer.py _apply_weight_decay: variable -= variable * weight_decay * learning_rate.
  static void decay_block(ArrayMap w, const Step& step) {
    if (step.weight_decay != 0.0f) w -= w * step.weight_decay * step.learning_rate;
  }

 private:
  void clip_gradients(std::span<Matrix* const> gradients) const;
  // The update of elements [begin, end) of the logical buffer (the whole of it for apply()).
  void update_range(std::span<Matrix* const> variables, std::span<Matrix* const> gradients,
                    int64_t begin, int64_t end);

  // The first element of variable `index` its slots hold (0 unless a range is kept).
  Index slot_offset(size_t index) const {
    return index < slot_offsets_.size() ? slot_offsets_[index] : 0;
  }
  // Sets slot_offsets_ and slot_lengths_ for variables of these sizes and the kept range.
  void place_kept_range(const std::vector<int64_t>& sizes);

  double learning_rate_;                  // constant rate, used when schedule_ is unset
  std::optional<ScheduleSpec> schedule_;  // learning rate as a function of iterations_
  std::optional<double> weight_decay_;
  std::optional<double> clipnorm_;
  std::optional<double> clipvalue_;
  std::optional<double> global_clipnorm_;
  bool elementwise_;  // elementwise_update() of the spec
  int64_t iterations_ = 0;
  bool built_ = false;
  // keep_range(): the elements kept ([kept_begin_, kept_end_) of the logical buffer, all when
  // kept_end_ < 0) and per variable the first element and the count its slots hold.
  int64_t kept_begin_ = 0, kept_end_ = -1;
  std::vector<Index> slot_offsets_, slot_lengths_;
};

}  // namespace fitbench
