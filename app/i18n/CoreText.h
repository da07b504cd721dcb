#pragma once
// Core text in the UI language for app/: hrapp::coreText(message | error | exception). The functions
// live in widgets/text/CoreText.h (the builder in widgets/ shows core text too); see there.
#include "text/CoreText.h"

namespace hrapp {
using hrw::coreText;
using hrw::fillCoreArgs;
using hrw::categoryText;
using hrw::coreBytesText;
using hrw::peakText;
using hrw::phaseText;
}  // namespace hrapp
