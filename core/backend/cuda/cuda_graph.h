#pragma once
// CudaGraph: a callable's device work captured once on a CudaBackend's compute stream and replayed
// as one CUDA graph (Backend::capture, backend.h). Internal to the CUDA module.
//
// Capture runs the callable with the stream in capture mode (thread-local: another thread's CUDA
// calls are not affected, and the backend's lock keeps its ops out), so nothing executes then: the
// callable's ops are recorded with their arguments, device pointers and by-value scalars, and every
// replay runs exactly that work again, in stream order after whatever was queued before it.
// Requirements on the callable (checked where the backend can): no op that waits for the device or
// returns a host value, no upload, no allocation (every buffer exists before: issue 11, defect 13);
// what changes between replays must be in device memory (StepControl, uploaded tensors).
// Capture a step only after running it once normally (cuDNN plans and lazily loaded kernels exist).
#include <cuda_runtime_api.h>

#include <functional>

#include "backend/cuda/cuda_backend_impl.h"

namespace hr {

class CudaGraph : public Backend::CapturedWork {
public:
    CudaGraph(CudaBackend& backend, const std::function<void()>& work);  // captures; throws hr::Error
    ~CudaGraph() override;
    CudaGraph(const CudaGraph&) = delete;
    CudaGraph& operator=(const CudaGraph&) = delete;
    void replay() override;
    std::size_t nodes() const { return nodes_; }

private:
    CudaBackend& backend_;
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
    std::size_t nodes_ = 0;
};

}  // namespace hr
