#pragma once
// The planner's step-time rates per device: measured by a short micro-benchmark the first time a
// device is planned for (a GEMM, a convolution forward and backward, the same in bf16, a host<->device
// copy and a burst of tiny ops), then kept in the user's cache folder
// ($XDG_CACHE_HOME/headroom/device-rates.json, else ~/.cache/headroom/), keyed by the device, its
// software and (CPU) the thread count. Every step time the planner shows is an estimate from these.
//
// Deterministic rankings: with HEADROOM_RATES=nominal (every test runs with it, cmake/Cuda.cmake) or
// after pin_device_rates(), no measurement happens and the fixed nominal rates are used: CPU 40
// GFLOP/s, GPU 30 TFLOP/s (a GPU model from the table: its table rates).
#include <optional>
#include <string>

#include "plan/device_description.h"

namespace hr {

// The rates for a described device (cached per process, and on disk when measured).
DeviceRates device_rates(const DeviceDescription& d, int threads);
// The fixed rates used when nothing is measured.
DeviceRates nominal_rates(const std::string& kind);
// Pins (or with nullopt un-pins) the rates every plan in this process uses.
void pin_device_rates(std::optional<DeviceRates> rates);
// Runs the micro-benchmark on `backend` (and `host` for the host link) now: about a second.
DeviceRates measure_rates(Backend& backend, Backend& host);

// The user's cache folder for Headroom: $XDG_CACHE_HOME/headroom, else $HOME/.cache/headroom (created).
std::string headroom_cache_dir();
// A small JSON document in the cache folder: read (an object, {} when absent or unreadable) and
// written atomically. Never throws (a cache that cannot be written is simply not kept).
std::string read_cache_file(const std::string& name);
void write_cache_file(const std::string& name, const std::string& text);

}  // namespace hr
