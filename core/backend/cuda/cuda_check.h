#pragma once
// Checked calls for the CUDA backend (docs/design.md house rules): every CUDA runtime, cuBLAS and cuDNN
// call goes through one of these macros, which throw hr::Error naming the call, its status and
// file:line. Every kernel launcher ends with HR_CUDA_CHECK_LAUNCH.
#include <cuda_runtime_api.h>

#include <string>

#include "base/error.h"

namespace hr::cuda {

[[noreturn]] inline void throw_cuda(cudaError_t err, const char* call, const char* file, int line) {
    throw Error(std::string("CUDA error in ") + call + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                ") at " + file + ":" + std::to_string(line));
}

[[noreturn]] inline void throw_status(const char* lib, int status, const char* status_name, const char* call,
                                      const char* file, int line) {
    throw Error(std::string(lib) + " error in " + call + ": " + status_name + " (status " + std::to_string(status) +
                ") at " + file + ":" + std::to_string(line));
}

}  // namespace hr::cuda

#define HR_CUDA_CHECK(call)                                                              \
    do {                                                                                 \
        cudaError_t hr_err_ = (call);                                                    \
        if (hr_err_ != cudaSuccess) ::hr::cuda::throw_cuda(hr_err_, #call, __FILE__, __LINE__); \
    } while (0)

// After a kernel launch: a bad launch configuration surfaces here, naming the kernel.
#define HR_CUDA_CHECK_LAUNCH(kernel_name)                                                        \
    do {                                                                                         \
        cudaError_t hr_err_ = cudaGetLastError();                                                \
        if (hr_err_ != cudaSuccess)                                                              \
            ::hr::cuda::throw_cuda(hr_err_, "launch of kernel " kernel_name, __FILE__, __LINE__); \
    } while (0)
