// The CUDA module's one exported symbol (cuda_module.h): the table core's loader forwards
// cuda_backend.h's functions to. Also the overhead measurement behind cuda_measure_overheads.
#include <cuda.h>  // CUresult and the driver entry point's signature only: no link to libcuda

#include <dlfcn.h>

#include <vector>

#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/cuda_nvml.h"
#include "backend/cuda/cuda_runtime_functions.h"

namespace hr {
namespace cudamod {
// cuda_backend.cpp
int availability(std::string& reason) noexcept;
int device_count() noexcept;
void devices(std::vector<CudaDeviceInfo>& out) noexcept;
bool properties(int device, CudaDeviceInfo& out) noexcept;
void built_with_text(std::string& out) noexcept;
void driver_text(std::string& out) noexcept;
void built_archs(std::string& out) noexcept;
Backend* make_backend(int device, std::shared_ptr<MemoryLedger> ledger, const CudaBackendOptions& options);
CudaBackend& as_cuda(Backend& b);

namespace {

// Whether this process already has cuda:`device`'s primary context (then its size cannot be measured
// here). Asked through the runtime's driver entry points: the module does not link libcuda.
bool context_exists(int device) {
    using Fn = CUresult (*)(CUdevice, unsigned int*, int*);
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &fn, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !fn) {
        (void)cudaGetLastError();
        return true;  // unknown: assume it exists (so nothing is claimed)
    }
    unsigned int flags = 0;
    int active = 0;
    if (reinterpret_cast<Fn>(fn)(static_cast<CUdevice>(device), &flags, &active) != CUDA_SUCCESS) return true;
    return active != 0;
}

// Device memory in use on cuda:`device` now according to NVML (by the device's PCI bus id, which creates
// no context); -1 when NVML is not there.
long long nvml_used(int device) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    cuda::NvmlMemory m;
    return cuda::nvml_memory(bus, m) ? static_cast<long long>(m.used) : -1;
}

CudaOverheads measure_overheads(int device, long long used_before) {
    CudaOverheads o;
    const bool had_context = context_exists(device);
    if (!had_context && used_before < 0) used_before = nvml_used(device);
    HR_CUDA_CHECK(cudaSetDevice(device));
    HR_CUDA_CHECK(cudaFree(nullptr));  // the primary context now exists
    std::size_t free0 = 0, total = 0;
    HR_CUDA_CHECK(cudaMemGetInfo(&free0, &total));
    if (!had_context && used_before >= 0 && total - free0 >= static_cast<std::size_t>(used_before)) {
        o.context_measured = true;
        o.context_bytes = total - free0 - static_cast<std::size_t>(used_before);
    }
    auto ledger = std::make_shared<MemoryLedger>();
    std::size_t reserved = 0, free1 = 0;
    {
        std::unique_ptr<Backend> b(make_backend(device, ledger, {}));
        // a GEMM, a convolution and a reduction: cuBLAS and cuDNN load their kernels on first use
        Allocator& a = b->allocator();
        Tensor x = Tensor::empty(a, {64, 64}, DType::f32, MemCategory::other);
        Tensor y = Tensor::empty(a, {64, 64}, DType::f32, MemCategory::other);
        b->gemm(false, true, 1.0f, x, x, 0.0f, y);
        Tensor xi = Tensor::empty(a, {8, 16, 16, 16}, DType::f32, MemCategory::other);
        Tensor w = Tensor::empty(a, {16, 16, 3, 3}, DType::f32, MemCategory::other);
        Tensor yo = Tensor::empty(a, {8, 16, 16, 16}, DType::f32, MemCategory::other);
        Conv2dParams p;
        p.pad_h = p.pad_w = 1;
        const std::size_t wsb = b->conv2d_workspace_bytes(xi.shape(), w.shape(), yo.shape(), p, DType::f32);
        Tensor ws = wsb ? Tensor::empty(a, {static_cast<std::int64_t>(wsb)}, DType::u8, MemCategory::workspace) : Tensor();
        Tensor none;
        b->conv2d_forward(xi, w, none, yo, p, ws);
        b->conv2d_backward_data(yo, w, xi, p, ws);
        b->conv2d_backward_filter(xi, yo, w, none, p, ws);
        (void)b->sum_squares(yo);
        b->synchronize();
        HR_CUDA_CHECK(cudaMemGetInfo(&free1, &total));
        reserved = as_cuda(*b).caching_allocator().stats().reserved;
    }
    const std::size_t dropped = free0 > free1 ? free0 - free1 : 0;
    o.handles_bytes = dropped > reserved ? dropped - reserved : 0;
    o.total_bytes = total;
    o.free_bytes = free1;
    o.note = std::string(o.context_measured ? "context: device memory in use before the context (NVML) against after it"
                                            : "context: not measured (it existed before, or NVML gave no figure)") +
             "; handles: free memory before a backend against after a GEMM, a convolution and a reduction, less "
             "what its allocator holds";
    return o;
}

std::size_t reserved_bytes(Backend& b) { return as_cuda(b).caching_allocator().stats().reserved; }

// The runtime functions core asks for by name (cuda_runtime_functions.h: the asker expands the same list),
// from the runtime linked into this module: one runtime in the process, and none needed on the machine.
void* runtime_function(const char* name) noexcept {
    struct Entry {
        const char* name;
        void* fn;
    };
#define HR_CUDA_RUNTIME_ENTRY(fn) {#fn, reinterpret_cast<void*>(&fn)},
    static const Entry table[] = {HR_CUDA_RUNTIME_FUNCTIONS(HR_CUDA_RUNTIME_ENTRY)};
#undef HR_CUDA_RUNTIME_ENTRY
    if (!name) return nullptr;
    for (const Entry& e : table)
        if (std::string(e.name) == name) return e.fn;
    return nullptr;
}

const CudaModuleApi kApi = [] {
    CudaModuleApi api;
    api.availability = &availability;
    api.device_count = &device_count;
    api.devices = &devices;
    api.properties = &properties;
    api.built_with = &built_with_text;
    api.driver = &driver_text;
    api.archs = &built_archs;
    api.make_backend = &make_backend;
    api.compute_stream = [](Backend& b) -> void* { return as_cuda(b).compute_stream(); };
    api.set_tf32 = [](Backend& b, bool on) { as_cuda(b).set_tf32(on); };
    api.empty_cache = [](Backend& b) -> std::size_t {
        CudaBackend& c = as_cuda(b);
        auto lock = c.op_lock();
        return c.caching_allocator().empty_cache();
    };
    api.reserved_bytes = &reserved_bytes;
    api.measure_overheads = &measure_overheads;
    api.runtime_function = &runtime_function;
    return api;
}();

}  // namespace
}  // namespace cudamod
}  // namespace hr

extern "C" __attribute__((visibility("default"))) const hr::CudaModuleApi* headroom_cuda_module_api() {
    return &hr::cudamod::kApi;
}
