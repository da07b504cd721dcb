#pragma once
// The interface between headroom_core and the CUDA module (libheadroom_cuda.so, cmake/Cuda.cmake).
//
// The module exports one C function, headroom_cuda_module_api(), that returns this table. core's
// loader (cuda_module.cpp) dlopen()s the module, checks that the table is from the same Headroom
// version and layout (the two sides exchange C++ objects: Backend, Tensor, MemoryLedger, strings),
// and forwards cuda_backend.h's functions to it. The module holds its own copy of the core code it
// uses (tensors, allocator, ledger), built from the same sources.
//
// Entries may throw hr::Error / hr::InputError (same C++ runtime on both sides) unless noexcept.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"

namespace hr {

constexpr int kCudaModuleAbi = 4;

// Layout checks of the types both sides share (a module from another build is refused).
struct CudaModuleLayout {
    std::size_t tensor = sizeof(Tensor);
    std::size_t ledger_snapshot = sizeof(LedgerSnapshot);
    std::size_t options = sizeof(CudaBackendOptions);
    std::size_t device_info = sizeof(CudaDeviceInfo);
    std::size_t overheads = sizeof(CudaOverheads);
    bool operator==(const CudaModuleLayout&) const = default;
};

struct CudaModuleApi {
    int abi = kCudaModuleAbi;
    const char* headroom_version = HEADROOM_VERSION;
    CudaModuleLayout layout{};
    // 0: cuda:0 exists; 1: no usable driver; 2: no device; 3: the driver is older than the runtime.
    // `reason` says so for a person.
    int (*availability)(std::string& reason) noexcept = nullptr;
    int (*device_count)() noexcept = nullptr;
    void (*devices)(std::vector<CudaDeviceInfo>& out) noexcept = nullptr;
    bool (*properties)(int device, CudaDeviceInfo& out) noexcept = nullptr;  // creates no context
    void (*built_with)(std::string& out) noexcept = nullptr;  // "CUDA runtime 13.0, cuDNN 9.19.0, cuBLAS 13.0.2"
    void (*driver)(std::string& out) noexcept = nullptr;      // "driver supports CUDA 13.0"
    void (*archs)(std::string& out) noexcept = nullptr;       // "80-real;86-real;89-real;90" (HEADROOM_CUDA_ARCHS)
    Backend* (*make_backend)(int device, std::shared_ptr<MemoryLedger> ledger, const CudaBackendOptions& o) = nullptr;
    void* (*compute_stream)(Backend& b) = nullptr;
    void (*set_tf32)(Backend& b, bool on) = nullptr;
    std::size_t (*empty_cache)(Backend& b) = nullptr;
    std::size_t (*reserved_bytes)(Backend& b) = nullptr;
    CudaOverheads (*measure_overheads)(int device, long long used_before) = nullptr;
    // A function of the module's CUDA runtime (linked into it statically) by name, for core code that
    // drives CUDA streams and events itself (the NCCL communicator); null for a name it does not offer.
    void* (*runtime_function)(const char* name) noexcept = nullptr;
};

}  // namespace hr

extern "C" {
// Exported by the module; the name the loader looks up.
using HeadroomCudaModuleApiFn = const hr::CudaModuleApi* (*)();
}
#define HEADROOM_CUDA_MODULE_SYMBOL "headroom_cuda_module_api"

namespace hr {
// What loading `path` as the CUDA module would say (for tests of the loader; the file is closed again
// and does not become the process's module). Part of headroom_core.
CudaStatus cuda_probe_module(const std::string& path);
}  // namespace hr
