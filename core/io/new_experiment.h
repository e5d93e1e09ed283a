// The experiment a new window (File > New) starts from: two hidden tanh layers on the circle
// set, classified with binary_crossentropy. Kept in core, beside the readers, so that the
// window names no layer, optimizer, loss or metric itself. Free function; thread-safe.
#pragma once

#include "core/io/experiment.h"

namespace fitbench {

ExperimentSpec new_experiment();

}  // namespace fitbench
