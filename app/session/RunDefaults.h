#pragma once
// The defaults of a run, the same in both front ends: the window's setup and data panels start from them
// (and take a preset's when a preset is loaded), and `headroom train` applies its flags over them. Both
// are core's (train/preset_training.h), so the two front ends cannot drift apart.
#include <QDateTime>
#include <QString>

#include <string>

#include "train/config.h"
#include "train/preset_training.h"

namespace hrapp {

inline hr::TrainConfig defaultTrainConfig(const std::string& preset = "seed-cnn") { return hr::default_train_config(preset); }
inline hr::OptimizerConfig defaultOptimizer(const std::string& kind) { return hr::default_optimizer(kind); }

// The one rule for a new run's folder, in both front ends (`headroom train` without --out: parent
// "runs"; the window: "runs" beside its history): PARENT/run-YYYYMMDD-HHMMSS in local time, with -2, -3 ...
// appended while a folder of that name exists, so two runs started in the same second never share one.
QString newRunFolder(const QString& parent, const QDateTime& now = QDateTime::currentDateTime());

}  // namespace hrapp
