#include "core/nn/initializer_registry.h"

#include <array>

namespace fitbench {
namespace {

// keras/src/initializers/random_initializers.py and constant_initializers.py.
constexpr FieldInfo kSeed{.key = "seed",
                          .type = FieldType::kSeed,
                          .description = "Null: drawn from the global seed; else a fixed seed.",
                          .optional = true};
constexpr std::array<FieldInfo, 1> kSeedOnly{kSeed};
constexpr std::array<FieldInfo, 3> kNormalFields{{
    {.key = "mean", .number = 0.0, .description = "The mean of the values.", .lo = -1e6, .hi = 1e6},
    {.key = "stddev",
     .number = 0.05,
     .description = "The standard deviation of the values.",
     .lo = 0.0,
     .hi = 1e6},
    kSeed,
}};
constexpr std::array<FieldInfo, 3> kUniformFields{{
    {.key = "minval", .number = -0.05, .description = "The smallest value.", .lo = -1e6, .hi = 1e6},
    {.key = "maxval",
     .number = 0.05,
     .description = "The largest value (>= minval).",
     .lo = -1e6,
     .hi = 1e6},
    kSeed,
}};

constexpr std::array<InitializerInfo, 10> kInitializers{{
    {"glorot_uniform", "GlorotUniform", "", "Uniform in ±sqrt(6 / (fan_in + fan_out)).", kSeedOnly},
    {"glorot_normal", "GlorotNormal", "", "Truncated normal, stddev sqrt(2 / (fan_in + fan_out)).",
     kSeedOnly},
    {"he_uniform", "HeUniform", "", "Uniform in ±sqrt(6 / fan_in).", kSeedOnly},
    {"he_normal", "HeNormal", "", "Truncated normal, stddev sqrt(2 / fan_in).", kSeedOnly},
    {"lecun_uniform", "LecunUniform", "", "Uniform in ±sqrt(3 / fan_in).", kSeedOnly},
    {"lecun_normal", "LecunNormal", "", "Truncated normal, stddev sqrt(1 / fan_in).", kSeedOnly},
    {"random_normal", "RandomNormal", "normal", "Normal with the given mean and stddev.",
     kNormalFields},
    {"random_uniform", "RandomUniform", "uniform", "Uniform in [minval, maxval).", kUniformFields},
    {"zeros", "Zeros", "zero", "All zeros.", {}, false},
    {"ones", "Ones", "one", "All ones.", {}, false},
}};

}  // namespace

std::span<const InitializerInfo> initializers() { return kInitializers; }

const InitializerInfo* find_initializer(std::string_view id) {
  if (id.empty()) return nullptr;
  for (const InitializerInfo& i : kInitializers)
    if (id == i.name || id == i.class_name || id == i.alias) return &i;
  return nullptr;
}

}  // namespace fitbench
