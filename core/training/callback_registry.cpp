#include "core/training/callback_registry.h"

#include <array>

namespace fitbench {
namespace {

constexpr double kMaxCount = 1 << 30;
constexpr FieldInfo kMonitor{.key = "monitor",
                             .type = FieldType::kString,
                             .text = "val_loss",
                             .description = "The logged value to watch."};
constexpr FieldInfo kVerbose{.key = "verbose",
                             .type = FieldType::kInt,
                             .number = 0,
                             .description = "1: print a message when it acts.",
                             .lo = 0,
                             .hi = 1};
constexpr FieldInfo kMode{
    .key = "mode",
    .type = FieldType::kString,
    .text = "auto",
    .description = "\"min\", \"max\", or \"auto\" (from the monitor's name)."};

constexpr std::array<FieldInfo, 8> kEarlyStoppingFields{{
    kMonitor,
    {.key = "min_delta",
     .number = 0.0,
     .description = "A change smaller than this does not count as an improvement.",
     .lo = 0.0},
    {.key = "patience",
     .type = FieldType::kInt,
     .number = 0,
     .description = "Epochs without improvement before training stops.",
     .lo = 0,
     .hi = kMaxCount},
    kVerbose,
    kMode,
    {.key = "baseline",
     .description = "Stop unless the monitor beats this value; null: none.",
     .optional = true},
    {.key = "restore_best_weights",
     .type = FieldType::kBool,
     .number = 0,
     .description = "At the end, go back to the weights of the best epoch."},
    {.key = "start_from_epoch",
     .type = FieldType::kInt,
     .number = 0,
     .description = "Epochs to wait before watching.",
     .lo = 0,
     .hi = kMaxCount},
}};
constexpr std::array<FieldInfo, 8> kModelCheckpointFields{{
    {.key = "filepath",
     .type = FieldType::kString,
     .description = "The model file to write (may hold {epoch} and {monitor} fields)."},
    kMonitor,
    kVerbose,
    {.key = "save_best_only",
     .type = FieldType::kBool,
     .number = 0,
     .description = "Write only when the monitor improves."},
    {.key = "save_weights_only",
     .type = FieldType::kBool,
     .number = 0,
     .description = "fitbench's model files always hold the config and the weights."},
    kMode,
    {.key = "save_freq",
     .type = FieldType::kString,
     .text = "epoch",
     .description = "When to write: after each epoch."},
    {.key = "initial_value_threshold", .description = "Not supported; null.", .optional = true},
}};
constexpr std::array<FieldInfo, 3> kCsvLoggerFields{{
    {.key = "filename", .type = FieldType::kString, .description = "The CSV file to write."},
    {.key = "separator",
     .type = FieldType::kString,
     .text = ",",
     .description = "The column separator."},
    {.key = "append",
     .type = FieldType::kBool,
     .number = 0,
     .description = "Append to an existing file instead of replacing it."},
}};
constexpr std::array<FieldInfo, 8> kReduceLrFields{{
    kMonitor,
    {.key = "factor",
     .number = 0.1,
     .description = "The new learning rate is the old one times this factor.",
     .lo = 0.0,
     .hi = 1.0},
    {.key = "patience",
     .type = FieldType::kInt,
     .number = 10,
     .description = "Epochs without improvement before the rate is reduced.",
     .lo = 0,
     .hi = kMaxCount},
    kVerbose,
    kMode,
    {.key = "min_delta",
     .number = 1e-4,
     .description = "A change smaller than this does not count as an improvement.",
     .lo = 0.0},
    {.key = "cooldown",
     .type = FieldType::kInt,
     .number = 0,
     .description = "Epochs to wait after a reduction before watching again.",
     .lo = 0,
     .hi = kMaxCount},
    {.key = "min_lr",
     .number = 0.0,
     .description = "The learning rate is never reduced below this.",
     .lo = 0.0},
}};
constexpr std::array<FieldInfo, 2> kSchedulerFields{{
    {.key = "schedule",
     .type = FieldType::kSchedule,
     .description = "A learning-rate schedule evaluated at each epoch."},
    kVerbose,
}};

constexpr std::array<CallbackInfo, 6> kCallbacks{{
    {kEarlyStopping, "Stops training when the monitored value stops improving.",
     kEarlyStoppingFields},
    {"ModelCheckpoint", "Writes the model file after epochs.", kModelCheckpointFields},
    {"CSVLogger", "Writes each epoch's logs as a CSV row.", kCsvLoggerFields},
    {kReduceLROnPlateau, "Reduces the learning rate when the monitored value stops improving.",
     kReduceLrFields},
    {"LearningRateScheduler", "Sets the learning rate at each epoch from a schedule.",
     kSchedulerFields},
    {"TerminateOnNaN", "Stops training when the loss becomes NaN or infinite.", {}},
}};

}  // namespace

std::span<const CallbackInfo> callback_classes() { return kCallbacks; }

const CallbackInfo* find_callback_class(std::string_view class_name) {
  for (const CallbackInfo& c : kCallbacks)
    if (c.class_name == class_name) return &c;
  return nullptr;
}

}  // namespace fitbench
