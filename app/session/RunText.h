#pragma once
// Small pieces of text both front ends show the same way.
#include <QString>

#include "base/message.h"

namespace hr {
struct TrainResult;
}

namespace hrapp {

// "m:ss" under an hour, "h:mm:ss" from there; "--:--" when not known (NaN, negative).
QString formatDuration(double seconds);

// A message core wrote (hr::Message: id, English template, arguments) in the user's language.
// Today the English text; app/i18n's coreText() takes its place once it lands (one call site each).
QString messageText(const hr::Message& message);
// A failed run's error, as the front ends show it: today the trainer's English text; with app/i18n,
// coreText() of the result's translatable sentences (one place to change).
QString resultError(const hr::TrainResult& result);

}  // namespace hrapp
