#pragma once
// The CUDA backend: every op of backend.h on an NVIDIA GPU, through cuBLAS (GEMM), cuDNN
// (convolution) and our own kernels (everything else), on one compute stream, with device memory
// from a caching allocator that reports to the memory ledger (caching_allocator.h).
//
// This folder is compiled only when HEADROOM_WITH_CUDA is defined; callers guard with
//     #ifdef HEADROOM_WITH_CUDA
// Nothing here needs a GPU to link or to run: without a driver, cuda_device_count() is 0,
// cuda_devices() is empty, cuda_versions() says "not available: ..." and make_cuda_backend throws
// hr::InputError telling the person to use --device cpu.
//
// Dtypes on the GPU: f32, bf16 and f16 (computed in f32); f64 is not supported there (the op
// throws hr::Error saying so). Integer tensors: i32 (pool indices), i64 (labels), u8 (masks).
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
};

struct CudaBackendOptions {
    bool tf32 = false;  // f32 GEMM and convolution on TF32 tensor cores (faster; ~1e-3 relative error)
    std::size_t conv_workspace_limit = std::size_t(256) << 20;   // per convolution call, bytes
    std::size_t cublas_workspace_bytes = std::size_t(4) << 20;   // handed to cuBLAS (category workspace)
    bool deterministic = true;  // prefer deterministic cuDNN algorithms when one fits the limit
};

// Number of CUDA devices; 0 when there is no driver or no device. Never throws.
int cuda_device_count() noexcept;
// Name, memory and compute capability of every device; empty without a driver. Never throws.
// (Queries free memory, which creates the device's primary context.)
std::vector<CudaDeviceInfo> cuda_devices() noexcept;
// "CUDA runtime 13.0 (driver 13.0), cuDNN 9.19.0, cuBLAS 13.0.2", or "not available: <why> (built
// with CUDA 13.0, cuDNN 9.19.0)" without a usable driver. Never throws.
std::string cuda_versions() noexcept;
// Why CUDA cannot be used, or "" when cuda:0 exists. Never throws. For --device auto:
//     if (cuda_unavailable_reason().empty()) use cuda:0 else use cpu (and say why).
std::string cuda_unavailable_reason() noexcept;

// A backend on cuda:`device`. Throws hr::InputError when there is no usable driver or no such
// device ("no usable NVIDIA driver (cudaGetDeviceCount: ...); use --device cpu"), hr::Error when
// the device is there but cannot be initialised (cuBLAS/cuDNN handle creation, out of memory).
std::unique_ptr<Backend> make_cuda_backend(int device, std::shared_ptr<MemoryLedger> ledger,
                                           const CudaBackendOptions& options = {});

// Accessors for a backend made by make_cuda_backend (hr::Error for any other backend).
void* cuda_compute_stream(Backend& backend);  // the cudaStream_t every op runs on (for CUDA graphs)
void cuda_set_tf32(Backend& backend, bool on);
// Returns the caching allocator's unused segments to the device; returns the bytes released.
std::size_t cuda_empty_cache(Backend& backend);

}  // namespace hr
