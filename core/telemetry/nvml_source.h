#pragma once
// NVML loaded at run time with dlopen: no link-time dependency and no NVML header. When the library
// or the driver is absent the source is simply unavailable, with status() saying so.
#include <memory>
#include <mutex>
#include <string>

#include "telemetry/telemetry.h"

namespace hr {

class NvmlSource final : public GpuTelemetrySource {
public:
    static constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

    // Never throws: a missing library, a missing symbol or a failing nvmlInit leave the source
    // unavailable with the reason in status().
    explicit NvmlSource(const std::string& library = kDefaultLibrary);
    ~NvmlSource() override;  // nvmlShutdown + dlclose
    NvmlSource(const NvmlSource&) = delete;
    NvmlSource& operator=(const NvmlSource&) = delete;

    bool available() const override;
    std::string status() const override;
    std::string driver_version() const override;
    int device_count() const override;
    std::vector<GpuStats> sample() override;

    // True when the library itself could be loaded (even if init or the device count failed).
    bool library_loaded() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// NVML when it works, otherwise a NullGpuSource saying "no NVIDIA driver ...".
std::shared_ptr<GpuTelemetrySource> make_default_gpu_source();

}  // namespace hr
