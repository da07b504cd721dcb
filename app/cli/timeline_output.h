#pragma once
// One step's memory timeline on the command line (issue 47, docs/timeline.md): `headroom plan --timeline`
// (predicted) and `headroom train --timeline` (measured) print it; --trace FILE writes it as Chrome's Trace
// Event Format JSON.
#include <QString>

#include "memory/step_timeline.h"

namespace hrapp {

// The phases with the live bytes after each (activations and the total), the peak's phase marked, then the
// peak in one sentence; long timelines show the phases around the peak and say how many were left out.
QString timelineText(const hr::StepTimeline& timeline);
// Writes the trace atomically (the file appears whole or not at all); false with *error a sentence
// naming the file and what to do.
bool writeTimelineTrace(const QString& path, const hr::StepTimeline& timeline, const QString& name, QString* error);

}  // namespace hrapp
