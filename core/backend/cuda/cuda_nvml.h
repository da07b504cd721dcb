#pragma once
// Device memory as NVML sees it, found by PCI bus id: asks the driver without creating a CUDA context
// (cudaMemGetInfo would create one on every GPU it is asked about). NVML is loaded with dlopen (no
// link-time dependency, no NVML header); false when it is not there or does not know the device.
#include <dlfcn.h>

#include <string>

namespace hr::cuda {

struct NvmlMemory {
    unsigned long long total = 0, free = 0, used = 0;
};

inline bool nvml_memory(const std::string& pci_bus_id, NvmlMemory& out) {
    if (pci_bus_id.empty()) return false;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    using Init = int (*)();
    using ByBus = int (*)(const char*, void**);
    using MemInfo = int (*)(void*, NvmlMemory*);
    auto init = reinterpret_cast<Init>(dlsym(h, "nvmlInit_v2"));
    auto shutdown = reinterpret_cast<Init>(dlsym(h, "nvmlShutdown"));
    auto by_bus = reinterpret_cast<ByBus>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    auto mem = reinterpret_cast<MemInfo>(dlsym(h, "nvmlDeviceGetMemoryInfo"));
    bool ok = false;
    if (init && shutdown && by_bus && mem && init() == 0) {
        void* d = nullptr;
        NvmlMemory m;
        if (by_bus(pci_bus_id.c_str(), &d) == 0 && mem(d, &m) == 0) {
            out = m;
            ok = true;
        }
        shutdown();
    }
    dlclose(h);
    return ok;
}

}  // namespace hr::cuda
