#pragma once
// The CUDA runtime functions that core asks the CUDA module for by name (cuda_runtime_function), in one
// list that both sides expand: the asker (core/dist/nccl_communicator.cpp declares and resolves each) and
// the module's table (cuda_module_entry.cpp offers each from the runtime linked into it). A name asked for
// is therefore a name offered; tests/unit/test_cuda_logic.cpp resolves every one through the built module
// on a machine without a GPU. Adding a function: add it here, nowhere else.
#define HR_CUDA_RUNTIME_FUNCTIONS(X)                                                                    \
    X(cudaSetDevice) X(cudaStreamCreateWithFlags) X(cudaStreamDestroy) X(cudaEventCreateWithFlags)      \
    X(cudaEventRecord) X(cudaEventQuery) X(cudaEventDestroy) X(cudaStreamWaitEvent) X(cudaGetErrorString) \
    X(cudaGetErrorName) X(cudaMemGetInfo)

namespace hr {
// The same names as text (no CUDA header needed), for tests and messages.
#define HR_CUDA_RUNTIME_FUNCTION_NAME(name) #name,
inline constexpr const char* kCudaRuntimeFunctionNames[] = {HR_CUDA_RUNTIME_FUNCTIONS(HR_CUDA_RUNTIME_FUNCTION_NAME)};
#undef HR_CUDA_RUNTIME_FUNCTION_NAME
}  // namespace hr
