#pragma once
// What the About box and the device list know about the machine at run time.
#include <QList>
#include <QString>

namespace hrapp {

struct DeviceChoice {
    QString id;     // TrainConfig::device: "cpu", "cuda:0", ...
    QString label;  // for people
};

// The devices a run may use. Today: the CPU only. HOOK: when core gains a CUDA device query
// (e.g. hr::cuda_devices()), append one DeviceChoice per device here ("cuda:N", "NVIDIA ... 80 GB").
QList<DeviceChoice> availableDevices();

// Library versions found at run time, e.g. "12.4" or "not found".
QString cudaRuntimeVersion();
QString cudnnVersion();
QString ncclVersion();
QString gpuDriverStatus();  // from core's NVML telemetry source

}  // namespace hrapp
