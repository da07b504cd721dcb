// The CUDA module loader (part of headroom_core in every build) and cuda_backend.h's functions,
// forwarded to the module. See cuda_module.h for the interface and cmake/Cuda.cmake for the build.
#include "backend/cuda/cuda_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "base/error.h"

#ifndef HEADROOM_CUDA_MODULE_FILE
#define HEADROOM_CUDA_MODULE_FILE "libheadroom_cuda.so"
#endif

namespace hr {

namespace {

struct Loaded {
    CudaStatus status;
    const CudaModuleApi* api = nullptr;  // null unless the module loaded and matched
};

std::string program_dir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
}

// Loads and checks one file. On success `api` is set and the library stays loaded (for the life of
// the process: objects it made must not outlive it); otherwise it is closed again.
bool try_module(const std::string& path, Loaded& out, bool keep) {
    out.status.module_path = path;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        out.status.state = CudaStatus::State::libraries_missing;
        out.status.reason = "the CUDA module " + path + " does not load: " + (e ? e : "unknown error") +
                            "; install CUDA 13 with cuBLAS and cuDNN 9 (what the headroom-cuda package needs) or "
                            "put their folder on LD_LIBRARY_PATH";
        return false;
    }
    auto fn = reinterpret_cast<HeadroomCudaModuleApiFn>(dlsym(h, HEADROOM_CUDA_MODULE_SYMBOL));
    const CudaModuleApi* api = fn ? fn() : nullptr;
    const CudaModuleApi expect{};
    std::string why;
    if (!api)
        why = "it does not export " HEADROOM_CUDA_MODULE_SYMBOL " (not a Headroom CUDA module)";
    else if (api->abi != expect.abi || std::string(api->headroom_version) != expect.headroom_version ||
             !(api->layout == expect.layout))
        why = "it is from Headroom " + std::string(api->headroom_version) + " (module interface " +
              std::to_string(api->abi) + "), this program is Headroom " + expect.headroom_version + " (interface " +
              std::to_string(expect.abi) + (api->layout == expect.layout ? "" : ", other data layouts") + ")";
    if (!why.empty()) {
        out.status.state = CudaStatus::State::module_mismatch;
        out.status.reason = "the CUDA module " + path + " does not fit this program: " + why +
                            "; install the headroom-cuda package of the same version as headroom";
        dlclose(h);
        return false;
    }
    if (!keep) {
        out.status.state = CudaStatus::State::available;
        out.status.reason.clear();
        dlclose(h);
        return true;
    }
    out.api = api;
    std::string reason;
    const int a = api->availability(reason);
    out.status.state = a == 0   ? CudaStatus::State::available
                       : a == 1 ? CudaStatus::State::no_driver
                       : a == 3 ? CudaStatus::State::driver_too_old
                                : CudaStatus::State::no_device;
    out.status.reason = a == 0 ? std::string() : reason;
    return true;
}

Loaded load(const std::vector<std::string>& candidates, bool keep) {
    Loaded out;
    out.status.searched = candidates;
    for (const auto& path : candidates) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) continue;
        try_module(path, out, keep);
        return out;  // the first file found decides (a broken module is reported, not skipped)
    }
    out.status.state = CudaStatus::State::module_missing;
    out.status.reason = std::string("the CUDA module (" HEADROOM_CUDA_MODULE_FILE ") is not installed: looked for ") +
                        joined(candidates) +
                        "; install the headroom-cuda package (or set HEADROOM_CUDA_MODULE to the module's path)";
    return out;
}

std::vector<std::string> default_candidates() {
    if (const char* env = std::getenv("HEADROOM_CUDA_MODULE"); env && *env) return {env};
    std::vector<std::string> c;
    const std::string dir = program_dir();
    if (!dir.empty()) {
        c.push_back(dir + "/" HEADROOM_CUDA_MODULE_FILE);
        c.push_back((std::filesystem::path(dir) / ".." / "lib" / "headroom" / HEADROOM_CUDA_MODULE_FILE)
                        .lexically_normal()
                        .string());
    }
    return c;
}

const Loaded& module() {
    static Loaded loaded;
    static std::once_flag once;
    std::call_once(once, [] {
        // cuda:N in the order of PCI bus ids, as nvidia-smi and NVML number the GPUs (CUDA's own default puts
        // the fastest first), unless the user chose an order; read by the driver when CUDA starts.
        setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
        try {
            loaded = load(default_candidates(), true);
        } catch (const std::exception& e) {
            loaded.status.state = CudaStatus::State::libraries_missing;
            loaded.status.reason = std::string("the CUDA module could not be loaded: ") + e.what();
        }
    });
    return loaded;
}

const CudaModuleApi& require_api() {
    const Loaded& m = module();
    if (!m.api) throw InputError(m.status.reason + "; use --device cpu");
    return *m.api;
}

}  // namespace

const char* cuda_state_name(CudaStatus::State s) {
    switch (s) {
        case CudaStatus::State::available: return "available";
        case CudaStatus::State::module_missing: return "module missing";
        case CudaStatus::State::libraries_missing: return "CUDA libraries missing";
        case CudaStatus::State::module_mismatch: return "module from another version";
        case CudaStatus::State::no_driver: return "no driver";
        case CudaStatus::State::driver_too_old: return "driver too old";
        case CudaStatus::State::no_device: return "no device";
    }
    return "unknown";
}

CudaStatus cuda_status() noexcept {
    try {
        return module().status;
    } catch (...) {
        CudaStatus s;
        s.reason = "CUDA could not be queried";
        return s;
    }
}

// For tests of the loader: what loading `path` would say (the module is closed again).
CudaStatus cuda_probe_module(const std::string& path) {
    return load({path}, false).status;
}

int cuda_device_count() noexcept {
    const Loaded& m = module();
    return m.api ? m.api->device_count() : 0;
}

std::vector<CudaDeviceInfo> cuda_devices() noexcept {
    std::vector<CudaDeviceInfo> out;
    const Loaded& m = module();
    if (m.api && m.status.state == CudaStatus::State::available) m.api->devices(out);
    return out;
}

bool cuda_device_properties(int device, CudaDeviceInfo& out) noexcept {
    const Loaded& m = module();
    return m.api && m.status.state == CudaStatus::State::available && m.api->properties(device, out);
}

std::string cuda_unavailable_reason() noexcept { return cuda_status().reason; }

void* cuda_runtime_function(const char* name) noexcept {
    try {
        const Loaded& m = module();
        return m.api && m.api->runtime_function ? m.api->runtime_function(name) : nullptr;
    } catch (...) {
        return nullptr;
    }
}

std::string cuda_built_archs() noexcept {
    try {
        const Loaded& m = module();
        std::string archs;
        if (m.api && m.api->archs) m.api->archs(archs);
        return archs;
    } catch (...) {
        return {};
    }
}

std::string cuda_versions() noexcept {
    try {
        const Loaded& m = module();
        std::string built;
        if (m.api) m.api->built_with(built);
        if (m.status.state != CudaStatus::State::available)
            return "not available: " + m.status.reason + (built.empty() ? "" : " (module built with " + built + ")");
        std::string drv;
        m.api->driver(drv);
        return built + ", " + drv;
    } catch (...) {
        return "not available: CUDA could not be queried";
    }
}

std::unique_ptr<Backend> make_cuda_backend(int device, std::shared_ptr<MemoryLedger> ledger,
                                           const CudaBackendOptions& options) {
    const CudaModuleApi& api = require_api();
    const Loaded& m = module();
    if (m.status.state != CudaStatus::State::available) throw InputError(m.status.reason + "; use --device cpu");
    return std::unique_ptr<Backend>(
        api.make_backend(device, ledger ? std::move(ledger) : std::make_shared<MemoryLedger>(), options));
}

void* cuda_compute_stream(Backend& backend) { return require_api().compute_stream(backend); }
void cuda_set_tf32(Backend& backend, bool on) { require_api().set_tf32(backend, on); }
std::size_t cuda_empty_cache(Backend& backend) { return require_api().empty_cache(backend); }
std::size_t cuda_reserved_bytes(Backend& backend) { return require_api().reserved_bytes(backend); }

CudaOverheads cuda_measure_overheads(int device, long long used_before) {
    const CudaModuleApi& api = require_api();
    if (module().status.state != CudaStatus::State::available)
        throw InputError(module().status.reason + "; use --device cpu");
    return api.measure_overheads(device, used_before);
}

}  // namespace hr
