#pragma once
// Seconds on the steady clock, for the figures a run reports (step time, data time, throughput).
#include <chrono>

namespace hr {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace hr
