// An optimizer with Keras 3's update rules: it owns its slot variables (momenta, moments,
// accumulators), its iteration count and its learning rate or schedule; `apply` updates the given
// variables in place from their gradients. One optimizer per replica: apply() is not thread-safe,
// but replicas given identical gradients stay bitwise identical. clone() copies the state.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/optimizers/optimizer_spec.h"

namespace fitbench {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Creates slot variables shaped like `variables` (called once before the first apply).
  virtual void build(std::span<Matrix* const> variables) = 0;
  // One update step: clips gradients (clipnorm / clipvalue / global_clipnorm, may modify
  // `gradients`), applies the rule to every variable, then increments iterations().
  // No allocation after build().
  virtual void apply(std::span<Matrix* const> variables, std::span<Matrix* const> gradients) = 0;

  // True when each element's update depends on that element's gradient alone (no clipnorm or
  // global_clipnorm, which need whole-gradient norms): then apply_range() over disjoint ranges
  // that cover every element equals one apply().
  virtual bool elementwise() const = 0;
  // apply() restricted to elements [begin, end) of the logical buffer made of `variables` one
  // after the other (the flat order Collectives uses): only those elements of the variables and
  // of the slots change; iterations() is incremented. Requires elementwise(). No allocation
  // after build().
  virtual void apply_range(std::span<Matrix* const> variables, std::span<Matrix* const> gradients,
                           int64_t begin, int64_t end) = 0;
  // Copies elements [begin, end) of every slot variable from `other`, an optimizer of the same
  // class built for the same variables (a replica that updated that range), and takes its
  // iteration count.
  virtual void copy_state_range(const Optimizer& other, int64_t begin, int64_t end) = 0;
  // Keeps the slots of elements [begin, end) of that logical buffer only, and frees the rest
  // (now, or at build() when not yet built): the part of a sharded update one device owns
  // (DataParallel's ZeRO-1-style path), so that its slots take 1/N of the memory. Afterwards
  // apply_range() and copy_state_range() (as `other`) stay inside [begin, end); apply(),
  // set_state() and keras_slots() are for an optimizer that keeps every element.
  virtual void keep_range(int64_t begin, int64_t end) = 0;
  // The bytes the slot variables hold now (0 before build()).
  virtual int64_t slot_bytes() const = 0;

  // The learning rate that the next apply() will use (the schedule's value at iterations()).
  virtual double learning_rate() const = 0;
  // Sets a constant learning rate (ReduceLROnPlateau, LearningRateScheduler); replaces a schedule.
  virtual void set_learning_rate(double lr) = 0;
  // True when the learning rate comes from a schedule (then callbacks must not change it).
  virtual bool has_schedule() const = 0;

  virtual int64_t iterations() const = 0;
  virtual std::string name() const = 0;  // Keras's class name, e.g. "Adam"

  // The slot variables as Keras's optimizer.variables list them after `iteration` and
  // `learning_rate` (what a .weights.h5 file stores under optimizer/vars): in the order Keras
  // creates them, the kinds of one add_optimizer_variables call interleaved per variable and the
  // calls one after another (Adam: m, v of each variable, then every velocity_hat). `variable`
  // indexes build()'s list; `kind` is Keras's slot name ("momentum"). Empty before build().
  struct SlotVariable {
    const Matrix* value;
    size_t variable;
    std::string kind;
  };
  virtual bool built() const = 0;
  virtual std::vector<SlotVariable> keras_slots() const = 0;
  // Restores a saved state: the iteration count and every slot, `slots` in keras_slots() order
  // and shaped as they are (the caller checks counts and shapes). Requires built().
  virtual void set_state(int64_t iterations, std::span<const Matrix> slots) = 0;
  virtual std::unique_ptr<Optimizer> clone() const = 0;
};

// Whether the rule `spec` describes updates each element from its own gradient alone (no
// clipnorm or global_clipnorm): Optimizer::elementwise() of the optimizer it makes.
bool elementwise_update(const OptimizerSpec& spec);

// Builds an optimizer; throws InputError(place, ...) for bad arguments (e.g. a negative rate).
std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, const std::string& place);

// The value of a learning-rate schedule at `step` (Keras's formulas). Throws InputError for a
// malformed schedule when `place` is given at construction time through make_optimizer.
double schedule_value(const ScheduleSpec& schedule, double step);

}  // namespace fitbench
