#pragma once
#include <functional>
#include <string>

namespace hr {

enum class LogLevel { debug, info, warning, error };

using LogSink = std::function<void(LogLevel, const std::string&)>;

// Process-wide log sink (default: none). The app installs one that forwards to Qt or stderr.
void set_log_sink(LogSink sink);
void log(LogLevel level, const std::string& message);
const char* log_level_name(LogLevel level);

}  // namespace hr
