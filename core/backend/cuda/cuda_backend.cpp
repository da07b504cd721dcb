// CudaBackend: devices, construction and data movement. The host side of the other ops (validation as the
// CPU backend, then cuBLAS or a launcher from cuda_kernels.h) is in cuda_backend_ops.cpp (elementwise,
// GEMM, pooling, activations, dropout) and cuda_backend_train.cpp (batch norm, losses, reductions, step
// control, optimizers). Convolution (cuDNN) lives in cuda_conv.cpp; fences, asynchronous copies and
// capture in cuda_async.cpp.
//
// Streams: every op runs on one compute stream. copy_from_host stages through a ring of pinned host
// memory (regions guarded by events: the host waits only when it laps a copy still queued, so it runs
// ahead of the device) and copies on a second stream, fenced by events: the copy starts after the
// compute work queued before it (a buffer a running kernel still reads is not overwritten), and
// compute queued after it waits for the copy. Uploads of at most cuda_sizes::kSmallUploadBytes go on
// the compute stream itself: the same order, without a wait between streams. Ops returning host values
// (losses, reductions, copy_to_host) synchronise the compute stream; the *_into ops do not.
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_backend_detail.h"
#include "backend/cuda/cuda_nvml.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "backend/cuda_compat.h"
#include "backend/checked_ops.h"
#include "backend/op_checks.h"  // the argument checks every backend shares

// HEADROOM_CUDA_ARCHS_TEXT: the architectures built, as an explicit list where CMake's form could be
// resolved ("80-real;86-real;89-real;90"), written by cmake/Cuda.cmake into the build tree
#if __has_include("headroom_cuda_archs.h")
#include "headroom_cuda_archs.h"
#else
#define HEADROOM_CUDA_ARCHS_TEXT "unknown"
#endif

namespace hr {

using ops::desc;
using ops::fail;
using ops::ncs;
using ops::bn_dims;
using ops::require_dtype;
using ops::require_float;
using ops::require_same_dtype;
using ops::require_same_shape;
using namespace cuda_detail;

namespace {

std::string cuda_error_text(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::string built_with() {
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = CUDART_VERSION;
    const std::size_t dnn = cudnnGetVersion();
    int cb[3] = {0, 0, 0};
    cublasGetProperty(MAJOR_VERSION, &cb[0]);
    cublasGetProperty(MINOR_VERSION, &cb[1]);
    cublasGetProperty(PATCH_LEVEL, &cb[2]);
    return "CUDA runtime " + cuda_version_text(rt) + ", cuDNN " + std::to_string(dnn / 10000) + "." +
           std::to_string((dnn % 10000) / 100) + "." + std::to_string(dnn % 100) + ", cuBLAS " + std::to_string(cb[0]) +
           "." + std::to_string(cb[1]) + "." + std::to_string(cb[2]) +
           ", GPU code for " HEADROOM_CUDA_ARCHS_TEXT;
}


std::uint64_t fill_pattern_of(DType dt, double value) {
    std::uint64_t bits = 0;
    switch (dt) {
        case DType::f32: {
            const float f = static_cast<float>(value);
            std::uint32_t u;
            std::memcpy(&u, &f, 4);
            bits = u;
            break;
        }
        case DType::f64: std::memcpy(&bits, &value, 8); break;
        case DType::bf16: bits = f32_to_bf16(static_cast<float>(value)); break;
        case DType::f16: bits = f32_to_f16(static_cast<float>(value)); break;
        case DType::i32: bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(value)); break;
        case DType::i64: bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(value)); break;
        case DType::u8: bits = static_cast<std::uint8_t>(value); break;
    }
    return bits;
}

}  // namespace

// --- devices (the module's side of cuda_backend.h: cuda_module_entry.cpp exports these) ---------

namespace cudamod {

void check_kernel_image(int device);

int availability(std::string& reason) noexcept {
    try {
        int n = 0;
        const cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            if (e == cudaErrorNoDevice) {
                reason = "no CUDA device found (cudaGetDeviceCount: " + cuda_error_text(e) + ")";
                return 2;
            }
            // A driver older than the runtime (CUDA 13 on r535-r570, common on H100/H200 hosts) is not "no
            // driver": cudaDriverGetVersion answers without a context, and says which CUDA it supports.
            int drv = 0, rt = CUDART_VERSION;
            if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
            if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = CUDART_VERSION;
            (void)cudaGetLastError();
            if (const auto m = cuda_driver_mismatch(drv, rt)) {
                reason = m->english();
                return 3;
            }
            reason = "no usable NVIDIA driver (cudaGetDeviceCount: " + cuda_error_text(e) + ")";
            return 1;
        }
        if (n == 0) {
            reason = "no CUDA device found";
            return 2;
        }
        reason.clear();
        return 0;
    } catch (...) {
        reason = "CUDA could not be queried";
        return 1;
    }
}

int device_count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

bool properties(int device, CudaDeviceInfo& out) noexcept;

void devices(std::vector<CudaDeviceInfo>& out) noexcept {
    out.clear();
    try {
        const int n = device_count();
        for (int i = 0; i < n; ++i) {
            CudaDeviceInfo d;
            if (!properties(i, d)) continue;
            // free memory from NVML by bus id: no context on the GPU (a rank or the planner asking about every
            // GPU would otherwise leave one on each). Without NVML: the runtime, which creates the context.
            cuda::NvmlMemory m;
            if (cuda::nvml_memory(d.pci_bus_id, m)) {
                d.free_bytes = static_cast<std::size_t>(m.free);
                d.total_bytes = static_cast<std::size_t>(m.total);
            } else {
                int previous = 0;
                if (cudaGetDevice(&previous) != cudaSuccess) previous = 0;
                std::size_t free_b = 0, total_b = 0;
                if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
                    d.free_bytes = free_b;
                    d.total_bytes = total_b;
                } else {
                    (void)cudaGetLastError();
                }
                (void)cudaSetDevice(previous);
            }
            out.push_back(std::move(d));
        }
    } catch (...) {
    }
}

bool properties(int device, CudaDeviceInfo& out) noexcept {
    cudaDeviceProp prop{};
    if (device < 0 || device >= device_count() || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    out = CudaDeviceInfo{};
    out.index = device;
    out.name = prop.name;
    out.total_bytes = prop.totalGlobalMem;
    out.cc_major = prop.major;
    out.cc_minor = prop.minor;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) out.pci_bus_id = bus;
    else (void)cudaGetLastError();
    return true;
}

void built_with_text(std::string& out) noexcept {
    try {
        out = built_with();
    } catch (...) {
        out = "CUDA (versions unknown)";
    }
}

void driver_text(std::string& out) noexcept {
    int drv = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess) {
        (void)cudaGetLastError();
        out = "driver version unknown";
        return;
    }
    out = "driver supports CUDA " + cuda_version_text(drv);
}

void built_archs(std::string& out) noexcept {
    try {
        out = HEADROOM_CUDA_ARCHS_TEXT;
    } catch (...) {
    }
}

Backend* make_backend(int device, std::shared_ptr<MemoryLedger> ledger, const CudaBackendOptions& options) {
    std::string why;
    if (availability(why) != 0) throw InputError(why + "; use --device cpu");
    const int n = device_count();
    if (device < 0 || device >= n)
        throw InputError("cuda:" + std::to_string(device) + " does not exist: this machine has " + std::to_string(n) +
                         (n == 1 ? " CUDA device (cuda:0)" : " CUDA devices (cuda:0 .. cuda:" + std::to_string(n - 1) + ")") +
                         "; pick one of those or use --device cpu");
    check_kernel_image(device);
    return new CudaBackend(device, ledger ? std::move(ledger) : std::make_shared<MemoryLedger>(), options);
}

// Refuses a GPU the module has no code for, naming its compute capability and the built architectures,
// before anything else runs on it (a kernel launch would fail later with "no kernel image").
void check_kernel_image(int device) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return;  // the constructor reports it
    }
    const std::string archs = HEADROOM_CUDA_ARCHS_TEXT;
    bool missing = !cuda_archs_cover(archs, prop.major, prop.minor);
    if (!missing && cudaSetDevice(device) == cudaSuccess) {
        const cudaError_t e = cuda::kernel_image_status();
        missing = e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction;
    } else {
        (void)cudaGetLastError();
    }
    if (missing) throw InputError(cuda_arch_missing(prop.name, prop.major, prop.minor, archs));
}

CudaBackend& as_cuda(Backend& b) {
    auto* c = dynamic_cast<CudaBackend*>(&b);
    if (!c) throw Error("internal: " + b.name() + " is not a CUDA backend");
    return *c;
}

}  // namespace cudamod

// --- allocator -----------------------------------------------------------------------------------

namespace {
DeviceHeap cuda_heap(int device, cudaStream_t stream, const std::atomic<bool>* capturing) {
    DeviceHeap h;
    h.raw_alloc = [device, capturing](std::size_t bytes) -> void* {
        if (capturing && capturing->load())
            throw Error("internal: a device allocation during a captured step (every buffer must exist before "
                        "the first step)");
        HR_CUDA_CHECK(cudaSetDevice(device));
        void* p = nullptr;
        const cudaError_t e = cudaMalloc(&p, bytes);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();  // not sticky; clear it so later checks do not report it
            return nullptr;
        }
        HR_CUDA_CHECK(e);
        return p;
    };
    h.raw_free = [device, stream](void* p) {
        HR_CUDA_CHECK(cudaSetDevice(device));
        HR_CUDA_CHECK(cudaStreamSynchronize(stream));  // queued work may still use the segment
        HR_CUDA_CHECK(cudaFree(p));
    };
    h.mem_info = [device](std::size_t& free_b, std::size_t& total_b) {
        if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        return true;
    };
    h.zero = [stream, capturing](void* p, std::size_t bytes) {
        if (capturing && capturing->load())
            throw Error("internal: a device allocation during a captured step (every buffer must exist before "
                        "the first step)");
        HR_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream));
    };
    return h;
}
}  // namespace

CudaCachingAllocator::CudaCachingAllocator(int device, std::shared_ptr<MemoryLedger> ledger, cudaStream_t stream,
                                           const std::atomic<bool>* capturing)
    : CachingAllocator(Device::cuda(device), std::move(ledger), cuda_heap(device, stream, capturing)) {}

// A caller of any op on this backend gets Backend's, checked above the backends (op_dispatch.cpp).
#define HR_CUDA_CHECKED_ABOVE(op) HR_ASSERT_CHECKED_ABOVE_ONE(CudaBackend, op)
HR_BACKEND_CHECKED_OPS(HR_CUDA_CHECKED_ABOVE)
#undef HR_CUDA_CHECKED_ABOVE

// --- construction --------------------------------------------------------------------------------

CudaBackend::CudaBackend(int device, std::shared_ptr<MemoryLedger> ledger, const CudaBackendOptions& options)
    : device_(device), rules_(std::make_unique<cuda_detail::GpuRules>(*this)), options_(options) {
    try {
        HR_CUDA_CHECK(cudaSetDevice(device_));
        cudaDeviceProp prop{};
        HR_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
        cc_major_ = prop.major;
        cc_minor_ = prop.minor;
        device_name_ = std::string(prop.name) + ", cc " + std::to_string(prop.major) + "." +
                       std::to_string(prop.minor) + ", " + format_bytes(prop.totalGlobalMem);
        HR_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
        HR_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
        HR_CUDA_CHECK(cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming));
        HR_CUDA_CHECK(cudaEventCreateWithFlags(&copy_done_, cudaEventDisableTiming));
        HR_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&staging_), cuda_sizes::kStagingBytes, cudaHostAllocDefault));
        HR_CUBLAS_CHECK(cublasCreate(&cublas_));
        HR_CUBLAS_CHECK(cublasSetStream(cublas_, compute_));
        HR_CUDNN_CHECK(cudnnCreate(&cudnn_));
        HR_CUDNN_CHECK(cudnnSetStream(cudnn_, compute_));
        HR_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_result_), sizeof(cuda::ReduceResult),
                                    cudaHostAllocDefault));
        allocator_ = std::make_unique<CudaCachingAllocator>(device_, std::move(ledger), compute_, &capturing_);
        // Everything the backend itself needs on the device, now (cuda_sizes.h): no op allocates later.
        const std::size_t ws = options_.cublas_workspace_bytes
                                   ? options_.cublas_workspace_bytes
                                   : cuda_sizes::cublas_workspace_bytes_for(cc_major_, cc_minor_);
        options_.cublas_workspace_bytes = ws;
        // cuBLAS would otherwise cudaMalloc its own workspace, outside the ledger.
        cublas_workspace_ = Tensor::empty(*allocator_, {static_cast<std::int64_t>(ws)}, DType::u8, MemCategory::workspace);
        HR_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.raw(), ws));
        scratch_ = Tensor::empty(*allocator_, {static_cast<std::int64_t>(cuda_sizes::kOpScratchBytes)}, DType::u8,
                                 MemCategory::workspace);
        HR_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
    } catch (const Error& e) {
        release();  // what was created so far (each handle is null-checked)
        throw Error("cuda:" + std::to_string(device) + " could not be initialised: " + e.what());
    } catch (...) {
        release();
        throw;
    }
}

CudaBackend::~CudaBackend() { release(); }

void CudaBackend::release() noexcept {
    // Nothing here may throw: errors are ignored (the driver may already be shutting down).
    if (compute_) (void)cudaSetDevice(device_);
    if (compute_) (void)cudaStreamSynchronize(compute_);
    if (copy_) (void)cudaStreamSynchronize(copy_);
    conv_plans_.clear();
    cublas_workspace_ = Tensor();
    scratch_ = Tensor();
    allocator_.reset();
    if (cublas_) (void)cublasDestroy(cublas_);
    if (cudnn_) (void)cudnnDestroy(cudnn_);
    if (staging_) (void)cudaFreeHost(staging_);
    staging_ = nullptr;
    for (auto& r : staging_inflight_) (void)cudaEventDestroy(r.done);
    staging_inflight_.clear();
    for (cudaEvent_t e : staging_events_) (void)cudaEventDestroy(e);
    staging_events_.clear();
    if (host_result_) (void)cudaFreeHost(host_result_);
    if (compute_done_) (void)cudaEventDestroy(compute_done_);
    if (copy_done_) (void)cudaEventDestroy(copy_done_);
    if (compute_) (void)cudaStreamDestroy(compute_);
    if (copy_) (void)cudaStreamDestroy(copy_);
    cublas_ = nullptr;
    cudnn_ = nullptr;
    host_result_ = nullptr;
    compute_done_ = copy_done_ = nullptr;
    compute_ = copy_ = nullptr;
    (void)cudaGetLastError();
}

std::string CudaBackend::name() const {
    std::string v;
    try {
        v = built_with();
    } catch (...) {
    }
    return "cuda:" + std::to_string(device_) + " (" + device_name_ + "; " + v + (options_.tf32 ? "; tf32 on)" : ")");
}

void CudaBackend::set_tf32(bool on) {
    auto lock = op_lock();
    options_.tf32 = on;
}

std::unique_lock<std::recursive_mutex> CudaBackend::op_lock() const {
    std::unique_lock<std::recursive_mutex> lock(mutex_);
    int cur = -1;
    HR_CUDA_CHECK(cudaGetDevice(&cur));
    if (cur != device_) HR_CUDA_CHECK(cudaSetDevice(device_));
    return lock;
}

const ops::TensorRules& CudaBackend::tensor_rules() const { return *rules_; }

void CudaBackend::require_here(const char* op, const char* name, const Tensor& t) const {
    if (!t.defined()) fail(op, std::string(name) + " is undefined");
    if (t.device() != Device::cuda(device_))
        fail(op, std::string(name) + " " + desc(t) + " is on " + t.device().str() + ", expected cuda:" +
                     std::to_string(device_));
}

void CudaBackend::require_not_capturing(const char* what) const {
    if (capturing_.load())
        throw Error(std::string("internal: ") + what +
                    " during a capture (captured work may not wait for the device or upload; use the *_into ops "
                    "and upload before replaying)");
}

void CudaBackend::synchronize() {
    auto lock = op_lock();
    require_not_capturing("synchronize");
    HR_CUDA_CHECK(cudaStreamSynchronize(copy_));
    HR_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

cuda::ReduceResult CudaBackend::fetch_result() {
    require_not_capturing("an op returning a host value");
    HR_CUDA_CHECK(cudaMemcpyAsync(host_result_, scratch().result(), sizeof(cuda::ReduceResult), cudaMemcpyDeviceToHost,
                                  compute_));
    HR_CUDA_CHECK(cudaStreamSynchronize(compute_));
    return *host_result_;
}

// --- data movement -------------------------------------------------------------------------------

void CudaBackend::do_fill(Tensor& t, double value) {
    auto lock = op_lock();
    const std::uint64_t bits = fill_pattern_of(t.dtype(), value);
    if (t.nbytes() == 0) return;
    if (bits == 0)
        HR_CUDA_CHECK(cudaMemsetAsync(t.raw(), 0, t.nbytes(), compute_));
    else
        cuda::fill_pattern(t.raw(), t.numel(), static_cast<int>(dtype_size(t.dtype())), bits, compute_);
}

void CudaBackend::do_copy(const Tensor& src, Tensor& dst) {
    const char* op = "copy";
    auto lock = op_lock();
    if (src.nbytes() == 0) return;
    if (src.dtype() == dst.dtype()) {
        if (src.raw() == dst.raw()) return;
        const char* s = static_cast<const char*>(src.raw());
        char* d = static_cast<char*>(dst.raw());
        const std::size_t n = src.nbytes();
        const bool overlap = s < d + n && d < s + n;
        if (overlap) {
            // memmove semantics through the fixed bounce buffer, chunk by chunk in the order that never
            // overwrites source bytes not yet copied (front to back when moving down, else back to front)
            void* bounce = scratch().bounce();
            const std::size_t chunk = cuda_sizes::kBounceBytes;
            const std::size_t chunks = (n + chunk - 1) / chunk;
            for (std::size_t k = 0; k < chunks; ++k) {
                const std::size_t i = d < s ? k : chunks - 1 - k;
                const std::size_t off = i * chunk, len = std::min(chunk, n - off);
                HR_CUDA_CHECK(cudaMemcpyAsync(bounce, s + off, len, cudaMemcpyDeviceToDevice, compute_));
                HR_CUDA_CHECK(cudaMemcpyAsync(d + off, bounce, len, cudaMemcpyDeviceToDevice, compute_));
            }
        } else {
            HR_CUDA_CHECK(cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, compute_));
        }
        return;
    }
    if (!dtype_is_float(src.dtype()) || !dtype_is_float(dst.dtype()))
        fail(op, "converting " + desc(src) + " to " + desc(dst) +
                     " is not supported on the GPU (float dtypes convert; integer tensors copy as they are)");
    cuda::cast(src.raw(), src.dtype(), dst.raw(), dst.dtype(), src.numel(), compute_);
}

std::size_t CudaBackend::staging_region(std::size_t n) {
    n = (n + 255) / 256 * 256;
    while (!staging_inflight_.empty() && cudaEventQuery(staging_inflight_.front().done) == cudaSuccess) {
        staging_events_.push_back(staging_inflight_.front().done);  // finished: forget it
        staging_inflight_.pop_front();
    }
    (void)cudaGetLastError();  // cudaErrorNotReady is not an error here
    if (staging_head_ + n > cuda_sizes::kStagingBytes) staging_head_ = 0;  // wrap; the tail waits a round
    const std::size_t b = staging_head_, e = b + n;
    // Regions in flight are the oldest first, and the ones this region can overlap are at the front.
    while (!staging_inflight_.empty()) {
        const StagingRegion& r = staging_inflight_.front();
        if (r.end <= b || r.begin >= e) break;
        HR_CUDA_CHECK(cudaEventSynchronize(r.done));  // that copy has not finished: wait for it
        staging_events_.push_back(r.done);
        staging_inflight_.pop_front();
    }
    staging_head_ = e;
    return b;
}

void CudaBackend::staged_upload(const void* src, Tensor& dst, cudaStream_t stream) {
    const std::size_t total = dst.nbytes();
    const char* s = static_cast<const char*>(src);
    char* d = static_cast<char*>(dst.raw());
    for (std::size_t off = 0; off < total; off += cuda_sizes::kStagingChunk) {
        const std::size_t n = std::min(cuda_sizes::kStagingChunk, total - off);
        // The host fills one region while the copy engine drains earlier ones; it waits only when it
        // laps a region whose copy is still queued.
        const std::size_t at = staging_region(n);
        std::memcpy(staging_ + at, s + off, n);
        HR_CUDA_CHECK(cudaMemcpyAsync(d + off, staging_ + at, n, cudaMemcpyHostToDevice, stream));
        cudaEvent_t done = nullptr;
        if (!staging_events_.empty()) {
            done = staging_events_.back();
            staging_events_.pop_back();
        } else {
            HR_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        }
        HR_CUDA_CHECK(cudaEventRecord(done, stream));
        staging_inflight_.push_back({at, at + ((n + 255) / 256 * 256), done});
    }
    if (stream == copy_) HR_CUDA_CHECK(cudaEventRecord(copy_done_, copy_));
}

void CudaBackend::do_copy_from_host(const void* src, Tensor& dst) {
    const std::size_t total = dst.nbytes();
    if (!total) return;
    auto lock = op_lock();
    require_not_capturing("copy_from_host");
    if (total <= cuda_sizes::kSmallUploadBytes) {
        // Small (a learning rate, a batch's labels): on the compute stream itself, which orders it after
        // the work that reads dst and before the work queued later, with no wait between streams.
        staged_upload(src, dst, compute_);
        return;
    }
    // The fence: the copy starts after the compute work queued so far, which may still read dst.
    HR_CUDA_CHECK(cudaEventRecord(compute_done_, compute_));
    HR_CUDA_CHECK(cudaStreamWaitEvent(copy_, compute_done_, 0));
    staged_upload(src, dst, copy_);
    // Compute queued from now on waits for the data.
    HR_CUDA_CHECK(cudaStreamWaitEvent(compute_, copy_done_, 0));
}

void CudaBackend::do_copy_to_host(const Tensor& src, void* dst) {
    if (!src.nbytes()) return;
    auto lock = op_lock();
    require_not_capturing("copy_to_host");
    HR_CUDA_CHECK(cudaMemcpyAsync(dst, src.raw(), src.nbytes(), cudaMemcpyDeviceToHost, compute_));
    HR_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

}  // namespace hr
