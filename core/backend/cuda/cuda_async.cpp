// CudaBackend: fences, asynchronous copies and capture (backend.h "ordering, asynchronous copies and
// captured work"), CudaGraph (cuda_graph.h), and the overhead measurement of cuda_backend.h.
#include <cstring>

#include "backend/op_checks.h"
#include "backend/cuda/cuda_graph.h"

namespace hr {

using ops::desc;
using ops::fail;

namespace {

struct CudaFence : Backend::Fence {
    cudaEvent_t event = nullptr;
    CudaFence() { HR_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming)); }
    ~CudaFence() override {
        if (event) (void)cudaEventDestroy(event);
    }
};

cudaEvent_t event_of(const Backend::Fence* f) {
    if (!f) return nullptr;
    auto* c = dynamic_cast<const CudaFence*>(f);
    if (!c) throw Error("internal: a fence from another backend");
    return c->event;
}

}  // namespace

std::shared_ptr<Backend::Fence> CudaBackend::record_fence() {
    auto lock = op_lock();
    auto f = std::make_shared<CudaFence>();
    HR_CUDA_CHECK(cudaEventRecord(f->event, compute_));
    return f;
}

void CudaBackend::wait_fence(const Fence* f) {
    if (!f) return;
    auto lock = op_lock();
    HR_CUDA_CHECK(cudaStreamWaitEvent(compute_, event_of(f), 0));
}

bool CudaBackend::fence_done(const Fence* f) {
    if (!f) return true;
    auto lock = op_lock();
    const cudaError_t e = cudaEventQuery(event_of(f));
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return false;
    }
    HR_CUDA_CHECK(e);
    return true;
}

void CudaBackend::fence_sync(const Fence* f) {
    if (!f) return;
    cudaEvent_t ev = nullptr;
    {
        auto lock = op_lock();
        require_not_capturing("fence_sync");
        ev = event_of(f);
    }
    HR_CUDA_CHECK(cudaEventSynchronize(ev));  // without the lock: other threads' ops may go on
}

std::shared_ptr<Backend::Fence> CudaBackend::do_upload_async(const void* src, Tensor& dst, const Fence* reads_done) {
    auto lock = op_lock();
    require_not_capturing("upload_async");
    // The fence: only the work that still reads dst (or, not told, everything queued so far).
    if (reads_done) {
        HR_CUDA_CHECK(cudaStreamWaitEvent(copy_, event_of(reads_done), 0));
    } else {
        HR_CUDA_CHECK(cudaEventRecord(compute_done_, compute_));
        HR_CUDA_CHECK(cudaStreamWaitEvent(copy_, compute_done_, 0));
    }
    auto f = std::make_shared<CudaFence>();
    if (dst.nbytes()) staged_upload(src, dst, copy_);
    HR_CUDA_CHECK(cudaEventRecord(f->event, copy_));
    return f;
}

std::shared_ptr<void> CudaBackend::host_buffer(std::size_t bytes) {
    auto lock = op_lock();
    void* p = nullptr;
    HR_CUDA_CHECK(cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocDefault));
    std::memset(p, 0, bytes ? bytes : 1);
    return std::shared_ptr<void>(p, [](void* q) { (void)cudaFreeHost(q); });
}

std::shared_ptr<Backend::Fence> CudaBackend::do_copy_to_host_async(const Tensor& src, void* dst) {
    auto lock = op_lock();
    require_not_capturing("copy_to_host_async");
    auto f = std::make_shared<CudaFence>();
    if (src.nbytes())
        HR_CUDA_CHECK(cudaMemcpyAsync(dst, src.raw(), src.nbytes(), cudaMemcpyDeviceToHost, compute_));
    HR_CUDA_CHECK(cudaEventRecord(f->event, compute_));
    return f;
}

std::unique_ptr<Backend::CapturedWork> CudaBackend::capture(const std::function<void()>& work) {
    return std::make_unique<CudaGraph>(*this, work);
}

// --- CudaGraph -----------------------------------------------------------------------------------

CudaGraph::CudaGraph(CudaBackend& backend, const std::function<void()>& work) : backend_(backend) {
    auto lock = backend_.op_lock();  // held for the whole capture: other threads' ops wait
    if (backend_.capturing()) throw Error("internal: a capture inside a capture");
    cudaStream_t s = backend_.compute_stream();
    HR_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    backend_.set_capturing(true);
    cudaGraph_t graph = nullptr;
    try {
        work();
    } catch (...) {
        backend_.set_capturing(false);
        (void)cudaStreamEndCapture(s, &graph);  // ends (and discards) the capture
        if (graph) (void)cudaGraphDestroy(graph);
        (void)cudaGetLastError();
        throw;
    }
    backend_.set_capturing(false);
    const cudaError_t e = cudaStreamEndCapture(s, &graph);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        throw Error(std::string("the captured step could not be recorded: ") + cudaGetErrorName(e) + " (" +
                    cudaGetErrorString(e) +
                    "); something in it is not capturable (a synchronisation, an allocation, a host copy)");
    }
    graph_ = graph;
    HR_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &nodes_));
    try {
        HR_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
        HR_CUDA_CHECK(cudaGraphUpload(exec_, s));
    } catch (...) {
        (void)cudaGraphDestroy(graph_);
        graph_ = nullptr;
        throw;
    }
}

CudaGraph::~CudaGraph() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
}

void CudaGraph::replay() {
    auto lock = backend_.op_lock();
    backend_.require_not_capturing("a graph replay");
    HR_CUDA_CHECK(cudaGraphLaunch(exec_, backend_.compute_stream()));
}

}  // namespace hr
