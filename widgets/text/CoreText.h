#pragma once
// Text that core/ produced, shown in the UI language. core/ builds every message a person reads as
// HR_MSG(id, "English template %1") plus its arguments (base/message.h); lupdate collects the templates
// under the context named by the id (app/CMakeLists.txt: -tr-function-alias QT_TRANSLATE_NOOP+=HR_MSG),
// and these functions look them up: QCoreApplication::translate(id, template), then %1..%9 filled in one
// pass (so an argument that itself contains "%2" stays as it is). A message without an id, or one with
// no translation loaded, shows its English. (In widgets/ so that the builder, below app/, uses it too;
// app/ includes it as app/i18n/CoreText.h. Its own library, headroom_text, needs QtCore only, so that
// the command line without widgets, headroom-cli, has it too.)
#include <QString>
#include <QStringList>

#include <cstddef>
#include <exception>
#include <vector>

#include "base/error.h"
#include "base/message.h"
#include "memory/category.h"
#include "memory/step_timeline.h"

namespace hrw {

QString coreText(const hr::Message& message);
QString coreText(const hr::TableText& text);
// Sentences of one text (an out-of-memory description), joined by a space.
QString coreText(const std::vector<hr::Message>& sentences);
QString coreText(const hr::Error& error);
// hr::Error: its message; any other exception: what() as it is.
QString coreText(const std::exception& error);

// A memory category as a person reads it ("Optimizer state"), in the UI language (the charts, the plan
// table and the report say them alike).
QString categoryText(hr::MemCategory category);

// The peak of a step's memory timeline in one sentence, in the UI language ("peak 58.1 MiB during the
// backward of layer 3 (conv2d): activations of layers 1–3 (41 MiB), gradients (12 MiB)"), built from
// core's pieces (memory/step_timeline.h: the phase, each part) each translated.
QString peakText(const hr::StepTimeline& timeline);
// One phase of it ("the forward of layer 3 (conv2d)").
QString phaseText(const hr::StepPhase& phase);

// Fills %1..%9 of a (translated) template with args in one pass, as hr::Message::format_message does.
QString fillCoreArgs(const QString& templ, const QStringList& args);

// A byte count as core writes it ("1.50 MiB"), for the interface's tables and charts.
QString coreBytesText(std::size_t bytes);

}  // namespace hrw
