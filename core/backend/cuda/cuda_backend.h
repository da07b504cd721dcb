#pragma once
// The CUDA backend: every op of backend.h on an NVIDIA GPU, through cuBLAS (GEMM), cuDNN
// (convolution) and our own kernels (everything else), on one compute stream (uploads on a second,
// fenced by events), with device memory from a caching allocator that reports to the memory ledger
// (caching_allocator.h).
//
// A module loaded at run time. The kernels live in libheadroom_cuda.so (built by cmake/Cuda.cmake,
// linked with libcudart, cuBLAS and cuDNN); headroom_core links none of them. The functions below are
// part of headroom_core in every build: on first use they load the module (cuda_module.cpp) from
//     $HEADROOM_CUDA_MODULE (a file), else next to the program, else <program>/../lib/headroom/
// and forward to it. Without the module, its libraries, a driver or a device they behave as
// "no CUDA here": cuda_device_count() is 0, cuda_devices() is empty, cuda_status() says why, and
// make_cuda_backend throws hr::InputError telling the person to use --device cpu.
//
// Threads: ops may come from any thread. Each backend serialises its ops with one lock (an op's
// launches and its host-side scratch are never interleaved with another thread's op) and makes its
// device current on the calling thread. Work from two threads still shares the one compute stream, so
// it runs in the order the ops were called; tensors two threads both write are the callers' business.
// A capture (Backend::capture) holds the lock until it ends, so another thread's ops wait instead of
// landing in the graph.
//
// Dtypes on the GPU: f32, bf16 and f16 (computed in f32); f64 is not supported there (the op
// throws hr::Error saying so). Integer tensors: i32 (pool indices), i64 (labels), u8 (masks).
//
// Memory: everything a backend allocates itself is allocated when it is made (cuBLAS workspace,
// op scratch: cuda_sizes.h), in its ledger under `workspace`; no op allocates device memory.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "memory/ledger.h"

namespace hr {

struct CudaDeviceInfo {
    int index = 0;
    std::string name;            // "NVIDIA H200"
    std::size_t total_bytes = 0;
    std::size_t free_bytes = 0;
    int cc_major = 0, cc_minor = 0;
    std::string pci_bus_id;      // "0000:65:00.0" (cudaDeviceGetPCIBusId): the device among NVML's
};

struct CudaBackendOptions {
    bool tf32 = false;  // f32 GEMM and convolution on TF32 tensor cores (faster; ~1e-3 relative error)
    std::size_t conv_workspace_limit = std::size_t(256) << 20;  // per convolution call, bytes
    // Handed to cuBLAS (category workspace); 0: what NVIDIA recommends for the device's compute
    // capability (cuda_sizes.h: 32 MiB on Hopper and later, 4 MiB before).
    std::size_t cublas_workspace_bytes = 0;
    bool deterministic = true;  // prefer deterministic cuDNN algorithms when one fits the limit
};

// Why CUDA can or cannot be used in this process (`headroom devices` prints it).
struct CudaStatus {
    enum class State {
        available,          // the module loaded and cuda:0 exists
        module_missing,     // libheadroom_cuda.so is in none of the places searched
        libraries_missing,  // it is there but does not load (libcudart/cuBLAS/cuDNN missing: dlerror)
        module_mismatch,    // it is from another Headroom version or build
        no_driver,          // the CUDA runtime finds no usable NVIDIA driver
        driver_too_old,     // there is a driver, but for an older CUDA than the module's (cuda_compat.h)
        no_device,          // the driver is there but sees no GPU
    };
    State state = State::module_missing;
    std::string reason;                 // for a person; "" when available
    std::string module_path;            // the module that loaded (or failed to), "" when none found
    std::vector<std::string> searched;  // the places looked at, in order
};
CudaStatus cuda_status() noexcept;
const char* cuda_state_name(CudaStatus::State s);  // "available", "module missing", ...

// Number of CUDA devices; 0 when there is no module, driver or device. Never throws.
int cuda_device_count() noexcept;
// Name, memory and compute capability of every device; empty without a driver. Never throws.
// (Free memory comes from NVML by PCI bus id, which creates no context; only without NVML from the
// runtime, which creates the device's primary context.) cuda:N are in PCI bus id order (the loader sets
// CUDA_DEVICE_ORDER=PCI_BUS_ID unless the user chose an order), as nvidia-smi numbers them.
std::vector<CudaDeviceInfo> cuda_devices() noexcept;
// Name, total memory and compute capability of cuda:`device` without creating its context (free_bytes
// is 0); false when there is no such device. Never throws.
bool cuda_device_properties(int device, CudaDeviceInfo& out) noexcept;
// "CUDA runtime 13.0 (driver 13.0), cuDNN 9.19.0, cuBLAS 13.0.2", or "not available: <why>"
// (with the versions the module was built with when it loaded). Never throws.
std::string cuda_versions() noexcept;
// The GPU architectures the module holds code for ("80-real;86-real;89-real;90"; cuda_compat.h reads
// them), "" without a module. Never throws.
std::string cuda_built_archs() noexcept;
// A function of the module's CUDA runtime by name ("cudaEventRecord"), for core code that drives streams
// itself (the NCCL communicator); null without a module or for a name it does not offer. Never throws.
void* cuda_runtime_function(const char* name) noexcept;
// Why CUDA cannot be used, or "" when cuda:0 exists: cuda_status().reason. Never throws.
std::string cuda_unavailable_reason() noexcept;

// A backend on cuda:`device`. Throws hr::InputError when CUDA is not available (no module, libraries,
// driver or such device: "...; use --device cpu"), hr::Error when the device is there but cannot be
// initialised (cuBLAS/cuDNN handle creation, out of memory).
std::unique_ptr<Backend> make_cuda_backend(int device, std::shared_ptr<MemoryLedger> ledger,
                                           const CudaBackendOptions& options = {});

// Accessors for a backend made by make_cuda_backend (hr::Error for any other backend).
void* cuda_compute_stream(Backend& backend);  // the cudaStream_t every op runs on
void cuda_set_tf32(Backend& backend, bool on);
// Returns the caching allocator's unused segments to the device; returns the bytes released.
std::size_t cuda_empty_cache(Backend& backend);
// Bytes the backend's caching allocator holds on the device (segments), and the peak of that.
std::size_t cuda_reserved_bytes(Backend& backend);

// What one process costs on a device beyond what it allocates (plan/device_description.h).
struct CudaOverheads {
    bool context_measured = false;  // false: the context existed before (its size is unknown here)
    std::size_t context_bytes = 0;  // the CUDA context (free memory before it minus after it)
    std::size_t handles_bytes = 0;  // cuBLAS + cuDNN handles, streams, events and lazily loaded kernels
    std::size_t total_bytes = 0;
    std::size_t free_bytes = 0;     // after the measurement
    std::string note;               // how it was measured
};
// Measures cuda:`device`'s overheads: creates a backend, runs a GEMM and a convolution (kernels load
// lazily), and compares free memory. The context is measured when this process has none on the
// device yet: against the device memory in use before it, `used_before` bytes, or (-1) what NVML
// says. Throws like make_cuda_backend.
CudaOverheads cuda_measure_overheads(int device, long long used_before);

}  // namespace hr
