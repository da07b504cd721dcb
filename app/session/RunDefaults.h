#pragma once
// The defaults of a run, the same in both front ends: the window's setup and data panels start from them
// (and take a preset's when a preset is loaded), and `headroom train` applies its flags over them. Both
// are core's (train/preset_training.h), so the two front ends cannot drift apart.
#include <string>

#include "train/config.h"
#include "train/preset_training.h"

namespace hrapp {

inline hr::TrainConfig defaultTrainConfig(const std::string& preset = "seed-cnn") { return hr::default_train_config(preset); }
inline hr::OptimizerConfig defaultOptimizer(const std::string& kind) { return hr::default_optimizer(kind); }

}  // namespace hrapp
