#include "base/log.h"

#include <mutex>

namespace hr {
namespace {
std::mutex g_mutex;
LogSink g_sink;
}  // namespace

void set_log_sink(LogSink sink) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_sink = std::move(sink);
}

void log(LogLevel level, const std::string& message) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_sink) g_sink(level, message);
}

const char* log_level_name(LogLevel level) {
    switch (level) {
        case LogLevel::debug: return "debug";
        case LogLevel::info: return "info";
        case LogLevel::warning: return "warning";
        case LogLevel::error: return "error";
    }
    return "?";
}

}  // namespace hr
