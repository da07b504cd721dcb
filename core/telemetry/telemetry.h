#pragma once
// Telemetry value types and the GPU source interface (docs/design.md: telemetry module).
// Plain C++20: NVML is loaded at run time (nvml_source.h), host figures come from /proc (host_stats.h),
// and a sampler thread (sampler.h) delivers TelemetrySample values to a callback.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace hr {

inline constexpr double kTelemetryNaN = std::numeric_limits<double>::quiet_NaN();

// One GPU at one moment. A figure NVML could not give is NaN (doubles) or -1 (integers).
struct GpuStats {
    int index = -1;
    std::string name;
    // PCI address "0000:65:00.0" (pci_bus_id_key's form; "" unknown): how a process that trains on
    // cuda:K finds its GPU among NVML's, whose order may differ from CUDA's (CUDA_VISIBLE_DEVICES,
    // fastest-first enumeration).
    std::string pci_bus_id;
    std::int64_t memory_used = -1;   // bytes
    std::int64_t memory_total = -1;  // bytes
    double power_watts = kTelemetryNaN;
    double power_limit_watts = kTelemetryNaN;
    double gpu_utilization = kTelemetryNaN;     // percent 0..100
    double memory_utilization = kTelemetryNaN;  // percent 0..100 (memory controller busy)
    double temperature_c = kTelemetryNaN;
    double sm_clock_mhz = kTelemetryNaN;
    double energy_joules = kTelemetryNaN;       // total since the driver loaded
};

// The host and this process at one moment.
struct HostStats {
    double cpu_utilization = kTelemetryNaN;  // percent 0..100 over all cores since the previous reading
    int cpu_count = 0;
    std::int64_t ram_used = -1;     // bytes (MemTotal - MemAvailable)
    std::int64_t ram_total = -1;    // bytes
    std::int64_t process_rss = -1;  // bytes resident of this process
};

struct TelemetrySample {
    double t_seconds = 0;     // since the sampler started
    std::int64_t step = -1;   // training step the sample falls in (-1: no run / before training)
    HostStats host;
    std::vector<GpuStats> gpus;
};

// A PCI address in one form whoever wrote it: NVML's "00000000:65:00.0" and CUDA's "0000:65:00.0" both
// give "0000:65:00.0" (lower-case hex, 4-digit domain); "" when `text` is not domain:bus:device.function.
std::string pci_bus_id_key(const std::string& text);
// The GPU among `gpus` at PCI address `bus_id` (any form pci_bus_id_key reads): its NVML index, or -1.
int gpu_index_of_bus_id(const std::vector<GpuStats>& gpus, const std::string& bus_id);

// Where GPU figures come from: NVML in the program, a fake in tests.
class GpuTelemetrySource {
public:
    virtual ~GpuTelemetrySource() = default;
    // False when there is no driver or no device; status() says why.
    virtual bool available() const = 0;
    // "NVML 550.54.15, 2 GPUs" or "no NVIDIA driver: libnvidia-ml.so.1 could not be loaded (...)".
    virtual std::string status() const = 0;
    virtual std::string driver_version() const = 0;  // "" when unknown
    virtual int device_count() const = 0;
    // Figures for every device now. Never throws: a failing query leaves that figure NaN / -1.
    virtual std::vector<GpuStats> sample() = 0;
};

// A source with no devices (used when no GPU telemetry is wanted).
class NullGpuSource final : public GpuTelemetrySource {
public:
    explicit NullGpuSource(std::string why = "GPU telemetry is off") : why_(std::move(why)) {}
    bool available() const override { return false; }
    std::string status() const override { return why_; }
    std::string driver_version() const override { return {}; }
    int device_count() const override { return 0; }
    std::vector<GpuStats> sample() override { return {}; }

private:
    std::string why_;
};

}  // namespace hr
