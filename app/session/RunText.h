#pragma once
// Small pieces of text both front ends show the same way.
#include <QString>

#include <string>

#include "base/message.h"

namespace hr {
struct TrainResult;
struct PresetTraining;
struct LogEvent;
}

namespace hrapp {

// "m:ss" under an hour, "h:mm:ss" from there; "--:--" when not known (NaN, negative).
QString formatDuration(double seconds);

// A message core wrote (hr::Message: id, English template, arguments) in the user's language
// (app/i18n's coreText()).
QString messageText(const hr::Message& message);
// A failed run's error, as the front ends show it: coreText() of the result's translatable sentences
// (TrainResult::error_messages), else the trainer's English text.
QString resultError(const hr::TrainResult& result);
// A line of the run's log in the user's language: its translatable sentence when it has one, else its text.
QString logText(const hr::LogEvent& event);
// What a preset trains with (core/train/preset_training.h), in a sentence: `headroom presets` and the
// window's preset menu show it.
QString presetTrainingText(const hr::PresetTraining& training);
// The preset a run trains when none was chosen, for its data (hr::default_preset_for_data), said the same
// way by both front ends: "tabular-mlp, the model for tables".
QString dataPresetText(const std::string& data);

}  // namespace hrapp
