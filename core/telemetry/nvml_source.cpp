#include "telemetry/nvml_source.h"

#include <dlfcn.h>

#include <cstring>

namespace hr {
// NVML's types and entry points (a named namespace: NvmlSource::Impl holds them, and a class with members of
// anonymous-namespace types draws -Wsubobject-linkage when a unity batch includes this file).
namespace nvml_api {

// The subset of NVML's C API used here, declared by hand (ABI of nvml.h, stable since NVML 4).
using nvmlReturn_t = int;  // NVML_SUCCESS = 0
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
struct nvmlUtilization_t {
    unsigned int gpu;
    unsigned int memory;
};
// nvmlPciInfo_t of nvmlDeviceGetPciInfo_v3
struct nvmlPciInfo_t {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];  // "00000000:65:00.0"
};
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM

using FnInit = nvmlReturn_t (*)();
using FnShutdown = nvmlReturn_t (*)();
using FnDeviceGetCount = nvmlReturn_t (*)(unsigned int*);
using FnDeviceGetHandleByIndex = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using FnDeviceGetName = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using FnDeviceGetMemoryInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using FnDeviceGetPowerUsage = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // mW
using FnDeviceGetEnforcedPowerLimit = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // mW
using FnDeviceGetUtilizationRates = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using FnDeviceGetTemperature = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using FnDeviceGetClockInfo = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);  // MHz
using FnDeviceGetTotalEnergyConsumption = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);  // mJ
using FnDeviceGetPciInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using FnSystemGetDriverVersion = nvmlReturn_t (*)(char*, unsigned int);

}  // namespace nvml_api
using namespace nvml_api;

struct NvmlSource::Impl {
    std::string library;
    void* handle = nullptr;
    bool initialized = false;
    bool available = false;
    std::string status;
    std::string driver;
    mutable std::mutex mutex;
    std::vector<nvmlDevice_t> devices;
    std::vector<std::string> names;
    std::vector<std::string> bus_ids;  // pci_bus_id_key form, "" unknown

    FnInit init = nullptr;
    FnShutdown shutdown = nullptr;
    FnDeviceGetCount get_count = nullptr;
    FnDeviceGetHandleByIndex get_handle = nullptr;
    FnDeviceGetName get_name = nullptr;
    FnDeviceGetMemoryInfo get_memory = nullptr;
    FnDeviceGetPowerUsage get_power = nullptr;
    FnDeviceGetEnforcedPowerLimit get_power_limit = nullptr;
    FnDeviceGetUtilizationRates get_utilization = nullptr;
    FnDeviceGetTemperature get_temperature = nullptr;
    FnDeviceGetClockInfo get_clock = nullptr;
    FnDeviceGetTotalEnergyConsumption get_energy = nullptr;
    FnSystemGetDriverVersion get_driver = nullptr;
    FnDeviceGetPciInfo get_pci = nullptr;

    template <typename F>
    void bind(F& f, const char* name) {
        f = reinterpret_cast<F>(dlsym(handle, name));
    }
};

NvmlSource::NvmlSource(const std::string& library) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.library = library;
    dlerror();
    m.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m.handle) {
        const char* e = dlerror();
        m.status = "no NVIDIA driver: " + library + " could not be loaded (" + (e ? e : "unknown reason") +
                   "); GPU telemetry is off. Install the NVIDIA driver to see power, utilisation and memory.";
        return;
    }
    m.bind(m.init, "nvmlInit_v2");
    m.bind(m.shutdown, "nvmlShutdown");
    m.bind(m.get_count, "nvmlDeviceGetCount_v2");
    m.bind(m.get_handle, "nvmlDeviceGetHandleByIndex_v2");
    m.bind(m.get_name, "nvmlDeviceGetName");
    m.bind(m.get_memory, "nvmlDeviceGetMemoryInfo");
    m.bind(m.get_power, "nvmlDeviceGetPowerUsage");
    m.bind(m.get_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    m.bind(m.get_utilization, "nvmlDeviceGetUtilizationRates");
    m.bind(m.get_temperature, "nvmlDeviceGetTemperature");
    m.bind(m.get_clock, "nvmlDeviceGetClockInfo");
    m.bind(m.get_energy, "nvmlDeviceGetTotalEnergyConsumption");
    m.bind(m.get_driver, "nvmlSystemGetDriverVersion");
    m.bind(m.get_pci, "nvmlDeviceGetPciInfo_v3");
    if (!m.init || !m.shutdown || !m.get_count || !m.get_handle) {
        m.status = "no NVIDIA driver: " + library +
                   " lacks nvmlInit_v2/nvmlDeviceGetCount_v2; the driver is too old or the library is not NVML";
        return;
    }
    nvmlReturn_t rc = m.init();
    if (rc != kNvmlSuccess) {
        m.status = "no NVIDIA driver: nvmlInit failed (NVML error " + std::to_string(rc) +
                   "); check that the NVIDIA driver is loaded (nvidia-smi)";
        return;
    }
    m.initialized = true;
    if (m.get_driver) {
        char buf[96] = {};
        if (m.get_driver(buf, sizeof buf) == kNvmlSuccess) m.driver = buf;
    }
    unsigned int count = 0;
    if (m.get_count(&count) != kNvmlSuccess) count = 0;
    for (unsigned int i = 0; i < count; ++i) {
        nvmlDevice_t d = nullptr;
        if (m.get_handle(i, &d) != kNvmlSuccess) d = nullptr;
        m.devices.push_back(d);
        std::string name = "GPU " + std::to_string(i);
        if (d && m.get_name) {
            char buf[128] = {};
            if (m.get_name(d, buf, sizeof buf) == kNvmlSuccess) name = buf;
        }
        m.names.push_back(name);
        std::string bus;  // fixed for the device's life: read once
        nvmlPciInfo_t pci{};
        if (d && m.get_pci && m.get_pci(d, &pci) == kNvmlSuccess) {
            pci.busId[sizeof pci.busId - 1] = 0;
            bus = pci_bus_id_key(pci.busId);
        }
        m.bus_ids.push_back(bus);
    }
    if (m.devices.empty()) {
        m.status = "NVML " + m.driver + ": no NVIDIA GPU found";
        return;
    }
    m.available = true;
    m.status = "NVML, driver " + m.driver + ", " + std::to_string(m.devices.size()) +
               (m.devices.size() == 1 ? " GPU" : " GPUs");
}

NvmlSource::~NvmlSource() {
    if (impl_->initialized && impl_->shutdown) impl_->shutdown();
    if (impl_->handle) dlclose(impl_->handle);
}

bool NvmlSource::available() const { return impl_->available; }
std::string NvmlSource::status() const { return impl_->status; }
std::string NvmlSource::driver_version() const { return impl_->driver; }
int NvmlSource::device_count() const { return static_cast<int>(impl_->devices.size()); }
bool NvmlSource::library_loaded() const { return impl_->handle != nullptr; }

std::vector<GpuStats> NvmlSource::sample() {
    Impl& m = *impl_;
    std::vector<GpuStats> out;
    if (!m.available) return out;
    std::lock_guard lock(m.mutex);
    for (std::size_t i = 0; i < m.devices.size(); ++i) {
        GpuStats g;
        g.index = static_cast<int>(i);
        g.name = m.names[i];
        g.pci_bus_id = m.bus_ids[i];
        nvmlDevice_t d = m.devices[i];
        if (d) {
            nvmlMemory_t mem{};
            if (m.get_memory && m.get_memory(d, &mem) == kNvmlSuccess) {
                g.memory_used = static_cast<std::int64_t>(mem.used);
                g.memory_total = static_cast<std::int64_t>(mem.total);
            }
            unsigned int v = 0;
            if (m.get_power && m.get_power(d, &v) == kNvmlSuccess) g.power_watts = v / 1000.0;
            if (m.get_power_limit && m.get_power_limit(d, &v) == kNvmlSuccess) g.power_limit_watts = v / 1000.0;
            nvmlUtilization_t u{};
            if (m.get_utilization && m.get_utilization(d, &u) == kNvmlSuccess) {
                g.gpu_utilization = u.gpu;
                g.memory_utilization = u.memory;
            }
            if (m.get_temperature && m.get_temperature(d, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
                g.temperature_c = v;
            if (m.get_clock && m.get_clock(d, kNvmlClockSm, &v) == kNvmlSuccess) g.sm_clock_mhz = v;
            unsigned long long mj = 0;
            if (m.get_energy && m.get_energy(d, &mj) == kNvmlSuccess) g.energy_joules = mj / 1000.0;
        }
        out.push_back(std::move(g));
    }
    return out;
}

std::shared_ptr<GpuTelemetrySource> make_default_gpu_source() { return std::make_shared<NvmlSource>(); }

}  // namespace hr
