// CudaBackend: devices, construction, data movement, GEMM (cuBLAS), and the host side of every op
// that runs as our own kernel (validation as the CPU backend, then a launcher from cuda_kernels.h),
// including the step-control ops. Convolution (cuDNN) lives in cuda_conv.cpp; fences, asynchronous
// copies and capture in cuda_async.cpp.
//
// Streams: every op runs on one compute stream. copy_from_host stages through a ring of pinned host
// memory (regions guarded by events: the host waits only when it laps a copy still queued, so it runs
// ahead of the device) and copies on a second stream, fenced by events: the copy starts after the
// compute work queued before it (a buffer a running kernel still reads is not overwritten), and
// compute queued after it waits for the copy. Uploads of at most cuda_sizes::kSmallUploadBytes go on
// the compute stream itself: the same order, without a wait between streams. Ops returning host values
// (losses, reductions, copy_to_host) synchronise the compute stream; the *_into ops do not.
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_nvml.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "backend/cuda_compat.h"
#include "backend/cpu/cpu_common.h"  // validation helpers and messages shared with the CPU backend

#ifndef HEADROOM_CUDA_ARCHS_TEXT
#define HEADROOM_CUDA_ARCHS_TEXT "unknown"  // cmake/Cuda.cmake sets it to HEADROOM_CUDA_ARCHS
#endif

namespace hr {

using cpu::desc;
using cpu::fail;
using cpu::ncs;
using cpu::bn_dims;
using cpu::require_dtype;
using cpu::require_float;
using cpu::require_same_dtype;
using cpu::require_same_shape;

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

bool gpu_float(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

void require_gpu_float(const char* op, const char* name, const Tensor& t) {
    if (t.dtype() == DType::f64)
        fail(op, std::string(name) + " " + desc(t) + ": f64 is not supported on the GPU; use f32 (or bf16/f16)");
    if (!gpu_float(t.dtype())) fail(op, std::string(name) + " " + desc(t) + " must be a float tensor (f32, bf16, f16)");
}

cuda::VecArg vec(const Tensor& t) {
    cuda::VecArg v;
    if (t.defined()) {
        v.p = t.raw();
        v.dtype = t.dtype();
    }
    return v;
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

// --- construction --------------------------------------------------------------------------------

CudaBackend::CudaBackend(int device, std::shared_ptr<MemoryLedger> ledger, const CudaBackendOptions& options)
    : device_(device), options_(options) {
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

void CudaBackend::fill(Tensor& t, double value) {
    require_here("fill", "tensor", t);
    auto lock = op_lock();
    const std::uint64_t bits = fill_pattern_of(t.dtype(), value);
    if (t.nbytes() == 0) return;
    if (bits == 0)
        HR_CUDA_CHECK(cudaMemsetAsync(t.raw(), 0, t.nbytes(), compute_));
    else
        cuda::fill_pattern(t.raw(), t.numel(), static_cast<int>(dtype_size(t.dtype())), bits, compute_);
}

void CudaBackend::copy(const Tensor& src, Tensor& dst) {
    const char* op = "copy";
    require_here(op, "src", src);
    require_here(op, "dst", dst);
    if (src.numel() != dst.numel())
        fail(op, "src " + desc(src) + " and dst " + desc(dst) + " must have the same number of elements");
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

void CudaBackend::copy_from_host(const void* src, Tensor& dst) {
    require_here("copy_from_host", "dst", dst);
    const std::size_t total = dst.nbytes();
    if (total && !src) fail("copy_from_host", "source pointer is null for dst " + desc(dst));
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

void CudaBackend::copy_to_host(const Tensor& src, void* dst) {
    require_here("copy_to_host", "src", src);
    if (src.nbytes() && !dst) fail("copy_to_host", "destination pointer is null for src " + desc(src));
    if (!src.nbytes()) return;
    auto lock = op_lock();
    require_not_capturing("copy_to_host");
    HR_CUDA_CHECK(cudaMemcpyAsync(dst, src.raw(), src.nbytes(), cudaMemcpyDeviceToHost, compute_));
    HR_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

// --- elementwise ---------------------------------------------------------------------------------

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& out) {
    const char* op = "add";
    require_here(op, "a", a);
    require_here(op, "b", b);
    require_here(op, "out", out);
    require_same_shape(op, "a", a, "b", b);
    require_same_shape(op, "a", a, "out", out);
    require_same_dtype(op, "a", a, "b", b);
    require_same_dtype(op, "a", a, "out", out);
    require_gpu_float(op, "a", a);
    auto lock = op_lock();
    cuda::add(a.raw(), b.raw(), out.raw(), a.dtype(), a.numel(), compute_);
}

void CudaBackend::axpy(float alpha, const Tensor& x, Tensor& y) {
    const char* op = "axpy";
    require_here(op, "x", x);
    require_here(op, "y", y);
    if (x.numel() != y.numel()) fail(op, "x " + desc(x) + " and y " + desc(y) + " must have the same number of elements");
    require_gpu_float(op, "x", x);
    require_gpu_float(op, "y", y);
    auto lock = op_lock();
    cuda::axpy(alpha, x.raw(), x.dtype(), y.raw(), y.dtype(), x.numel(), compute_);
}

void CudaBackend::scale(Tensor& x, float alpha) {
    require_here("scale", "x", x);
    require_gpu_float("scale", "x", x);
    auto lock = op_lock();
    cuda::scale(x.raw(), x.dtype(), x.numel(), alpha, compute_);
}

// --- linear algebra ------------------------------------------------------------------------------

void CudaBackend::gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
                       Tensor& c) {
    const char* op = "gemm";
    require_here(op, "a", a);
    require_here(op, "b", b);
    require_here(op, "c", c);
    if (a.ndim() != 2 || b.ndim() != 2 || c.ndim() != 2)
        fail(op, "expects 2-D a, b, c; got a " + desc(a) + ", b " + desc(b) + ", c " + desc(c));
    require_same_dtype(op, "a", a, "b", b);
    require_same_dtype(op, "a", a, "c", c);
    require_gpu_float(op, "a", a);
    const std::int64_t M = trans_a ? a.dim(1) : a.dim(0);
    const std::int64_t K = trans_a ? a.dim(0) : a.dim(1);
    const std::int64_t Kb = trans_b ? b.dim(1) : b.dim(0);
    const std::int64_t N = trans_b ? b.dim(0) : b.dim(1);
    if (K != Kb || c.dim(0) != M || c.dim(1) != N)
        fail(op, std::string("shapes do not match: op(a) ") + shape_str({M, K}) + " @ op(b) " + shape_str({Kb, N}) +
                     " -> c " + shape_str(c.shape()) + " (a " + desc(a) + (trans_a ? " transposed" : "") + ", b " +
                     desc(b) + (trans_b ? " transposed" : "") + ")");
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || a.dim(1) > INT_MAX || b.dim(1) > INT_MAX)
        fail(op, "dimensions beyond 2^31 are not supported by cuBLAS: a " + desc(a) + ", b " + desc(b));
    auto lock = op_lock();
    if (M == 0 || N == 0) return;
    if (K == 0) {  // C = beta * C, explicitly (as the CPU backend)
        if (beta == 0.0f)
            HR_CUDA_CHECK(cudaMemsetAsync(c.raw(), 0, c.nbytes(), compute_));
        else
            cuda::scale(c.raw(), c.dtype(), c.numel(), beta, compute_);
        return;
    }
    // Row-major C (M, N) is column-major C^T (N, M) = op(B)^T (N, K) @ op(A)^T (K, M): pass B first.
    // A row-major matrix read column-major is its transpose, so op(B)^T is B's buffer with
    // CUBLAS_OP_N when trans_b is false (and CUBLAS_OP_T when true); the same for A.
    const cublasOperation_t opb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opa = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = static_cast<int>(std::max<std::int64_t>(1, a.dim(1)));
    const int ldb = static_cast<int>(std::max<std::int64_t>(1, b.dim(1)));
    const int ldc = static_cast<int>(std::max<std::int64_t>(1, c.dim(1)));
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = options_.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (a.dtype() == DType::bf16) {
        type = CUDA_R_16BF;
        compute = CUBLAS_COMPUTE_32F;
    } else if (a.dtype() == DType::f16) {
        type = CUDA_R_16F;
        compute = CUBLAS_COMPUTE_32F;
    }
    HR_CUBLAS_CHECK(cublasGemmEx(cublas_, opb, opa, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K),
                                 &alpha, b.raw(), type, ldb, a.raw(), type, lda, &beta, c.raw(), type, ldc, compute,
                                 CUBLAS_GEMM_DEFAULT));
}

void CudaBackend::add_bias(Tensor& y, const Tensor& bias) {
    const char* op = "add_bias";
    require_here(op, "y", y);
    require_here(op, "bias", bias);
    std::int64_t N, C, S;
    ncs(op, y, bias, "bias", N, C, S);
    require_gpu_float(op, "y", y);
    require_gpu_float(op, "bias", bias);
    auto lock = op_lock();
    cuda::add_bias(y.raw(), y.dtype(), bias.raw(), bias.dtype(), N, C, S, compute_);
}

void CudaBackend::bias_grad(const Tensor& dy, Tensor& dbias) {
    const char* op = "bias_grad";
    require_here(op, "dy", dy);
    require_here(op, "dbias", dbias);
    std::int64_t N, C, S;
    ncs(op, dy, dbias, "dbias", N, C, S);
    require_gpu_float(op, "dy", dy);
    require_gpu_float(op, "dbias", dbias);
    auto lock = op_lock();
    cuda::bias_grad(dy.raw(), dy.dtype(), dbias.raw(), dbias.dtype(), N, C, S, scratch(), compute_);
}

// --- pooling -------------------------------------------------------------------------------------

namespace {

// The shared checks (cpu_common.h), plus the GPU's 32-bit plane limit.
void check_pool(const char* op, const Tensor& x, const Tensor& y, const Pool2dParams& p) {
    cpu::check_pool(op, x, y, p);
    if (x.dim(2) * x.dim(3) > INT_MAX) fail(op, "planes beyond 2^31 elements are not supported: x " + desc(x));
}

}  // namespace

void CudaBackend::maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) {
    const char* op = "maxpool2d_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_here(op, "indices", indices);
    check_pool(op, x, y, p);
    require_dtype(op, "indices", indices, DType::i32);
    require_same_shape(op, "y", y, "indices", indices);
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::maxpool_forward(x.raw(), y.raw(), indices.data<std::int32_t>(), x.dtype(), x.dim(0) * x.dim(1),
                          int(x.dim(2)), int(x.dim(3)), int(y.dim(2)), int(y.dim(3)), p, compute_);
}

namespace {
void check_maxpool_backward(const char* op, const CudaBackend& be, const Tensor& dy, const Tensor& indices,
                            const Tensor& dx) {
    be.require_here(op, "dy", dy);
    be.require_here(op, "indices", indices);
    be.require_here(op, "dx", dx);
    require_dtype(op, "indices", indices, DType::i32);
    require_same_shape(op, "dy", dy, "indices", indices);
    require_same_dtype(op, "dy", dy, "dx", dx);
    if (dy.ndim() != 4 || dx.ndim() != 4 || dy.dim(0) != dx.dim(0) || dy.dim(1) != dx.dim(1))
        fail(op, "expects dy (N, C, Ho, Wo) and dx (N, C, H, W), got dy " + desc(dy) + ", dx " + desc(dx));
    if (dx.dim(2) * dx.dim(3) > INT_MAX || dy.dim(2) * dy.dim(3) > INT_MAX)
        fail(op, "planes beyond 2^31 elements are not supported: dx " + desc(dx));
    require_gpu_float(op, "dy", dy);
}
}  // namespace

// Indices are not range-checked here (that would need a device round trip); out-of-plane indices are
// skipped by the kernels.
void CudaBackend::maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) {
    const char* op = "maxpool2d_backward";
    check_maxpool_backward(op, *this, dy, indices, dx);
    auto lock = op_lock();
    cuda::maxpool_backward(dy.raw(), indices.data<std::int32_t>(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1),
                           int(dx.dim(2)), int(dx.dim(3)), int(dy.dim(2)), int(dy.dim(3)), nullptr, compute_);
}

void CudaBackend::maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx,
                                             const Pool2dParams& p) {
    const char* op = "maxpool2d_backward";
    check_maxpool_backward(op, *this, dy, indices, dx);
    check_pool(op, dx, dy, p);  // dy's shape is the forward's output for dx's shape and p
    auto lock = op_lock();
    cuda::maxpool_backward(dy.raw(), indices.data<std::int32_t>(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1),
                           int(dx.dim(2)), int(dx.dim(3)), int(dy.dim(2)), int(dy.dim(3)), &p, compute_);
}

void CudaBackend::avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) {
    const char* op = "avgpool2d_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    check_pool(op, x, y, p);
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::avgpool_forward(x.raw(), y.raw(), x.dtype(), x.dim(0) * x.dim(1), int(x.dim(2)), int(x.dim(3)),
                          int(y.dim(2)), int(y.dim(3)), p, compute_);
}

void CudaBackend::avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) {
    const char* op = "avgpool2d_backward";
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    check_pool(op, dx, dy, p);
    require_gpu_float(op, "dx", dx);
    auto lock = op_lock();
    cuda::avgpool_backward(dy.raw(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1), int(dx.dim(2)), int(dx.dim(3)),
                           int(dy.dim(2)), int(dy.dim(3)), p, compute_);
}

// --- activations ---------------------------------------------------------------------------------

void CudaBackend::activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
    const char* op = "activation_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::activation_forward(kind, alpha, x.raw(), y.raw(), x.dtype(), x.numel(), compute_);
}

void CudaBackend::activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                                      const Tensor& dy, Tensor& dx) {
    const char* op = "activation_backward";
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    require_same_shape(op, "dy", dy, "dx", dx);
    require_same_dtype(op, "dy", dy, "dx", dx);
    require_gpu_float(op, "dy", dy);
    const bool need_x = kind == ActivationKind::gelu || kind == ActivationKind::leaky_relu;
    const bool have_x = x.defined(), have_y = y.defined();
    if (need_x && !have_x) fail(op, "this activation's backward needs the forward input x");
    if (!have_x && !have_y) fail(op, "needs the forward input x or output y; both are undefined");
    if (have_x) {
        require_here(op, "x", x);
        require_same_shape(op, "x", x, "dy", dy);
        require_same_dtype(op, "x", x, "dy", dy);
    }
    if (have_y) {
        require_here(op, "y", y);
        require_same_shape(op, "y", y, "dy", dy);
        require_same_dtype(op, "y", y, "dy", dy);
    }
    auto lock = op_lock();
    cuda::activation_backward(kind, alpha, have_x ? x.raw() : nullptr, have_y ? y.raw() : nullptr, dy.raw(),
                              dx.raw(), dy.dtype(), dy.numel(), compute_);
}

// --- dropout -------------------------------------------------------------------------------------

void CudaBackend::dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                                  std::uint64_t offset) {
    const char* op = "dropout_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_here(op, "mask", mask);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_dtype(op, "mask", mask, DType::u8);
    if (mask.numel() != x.numel()) fail(op, "mask " + desc(mask) + " must have as many elements as x " + desc(x));
    if (!(p >= 0.0f && p <= 1.0f)) fail(op, "probability p = " + std::to_string(p) + " must be in [0, 1]");
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    const float s = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;  // as the CPU, in f32
    cuda::dropout_forward(x.raw(), y.raw(), mask.data<std::uint8_t>(), x.dtype(), x.numel(), p, s, seed, offset,
                          compute_);
}

void CudaBackend::dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) {
    const char* op = "dropout_backward";
    require_here(op, "dy", dy);
    require_here(op, "mask", mask);
    require_here(op, "dx", dx);
    require_same_shape(op, "dy", dy, "dx", dx);
    require_same_dtype(op, "dy", dy, "dx", dx);
    require_dtype(op, "mask", mask, DType::u8);
    if (mask.numel() != dy.numel()) fail(op, "mask " + desc(mask) + " must have as many elements as dy " + desc(dy));
    require_gpu_float(op, "dy", dy);
    auto lock = op_lock();
    const float s = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    cuda::dropout_backward(dy.raw(), mask.data<std::uint8_t>(), dx.raw(), dy.dtype(), dy.numel(), s, compute_);
}

// --- batch norm ----------------------------------------------------------------------------------


void CudaBackend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                          Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                          Tensor& running_var, float momentum, float eps) {
    const char* op = "batchnorm_forward_train";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float(op, "x", x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    if (N * S <= 1) fail(op, "needs more than one value per channel, got x " + desc(x));
    auto check_vec = [&](const char* name, const Tensor& t, bool required) {
        if (!t.defined()) {
            if (required) fail(op, std::string(name) + " is undefined");
            return;
        }
        require_here(op, name, t);
        require_gpu_float(op, name, t);
        if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
    };
    check_vec("save_mean", save_mean, true);
    check_vec("save_invstd", save_invstd, true);
    check_vec("running_mean", running_mean, false);
    check_vec("running_var", running_var, false);
    check_vec("gamma", gamma, false);
    check_vec("beta", beta, false);
    auto lock = op_lock();
    cuda::batchnorm_forward_train(x.raw(), y.raw(), x.dtype(), N, C, S, vec(gamma), vec(beta), vec(save_mean),
                                  vec(save_invstd), vec(running_mean), vec(running_var), momentum, eps, scratch(), compute_);
}

void CudaBackend::batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          const Tensor& running_mean, const Tensor& running_var, float eps,
                                          Tensor& y) {
    const char* op = "batchnorm_forward_infer";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float(op, "x", x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    auto check_vec = [&](const char* name, const Tensor& t, bool required) {
        if (!t.defined()) {
            if (required) fail(op, std::string(name) + " is undefined");
            return;
        }
        require_here(op, name, t);
        require_gpu_float(op, name, t);
        if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
    };
    check_vec("running_mean", running_mean, true);
    check_vec("running_var", running_var, true);
    check_vec("gamma", gamma, false);
    check_vec("beta", beta, false);
    auto lock = op_lock();
    cuda::batchnorm_forward_infer(x.raw(), y.raw(), x.dtype(), N, C, S, vec(gamma), vec(beta), vec(running_mean),
                                  vec(running_var), eps, scratch(), compute_);
}

void CudaBackend::batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& save_mean,
                                     const Tensor& save_invstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const char* op = "batchnorm_backward";
    require_here(op, "x", x);
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    require_same_shape(op, "x", x, "dy", dy);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dx", dx);
    require_gpu_float(op, "x", x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    auto check_vec = [&](const char* name, const Tensor& t, bool required) {
        if (!t.defined()) {
            if (required) fail(op, std::string(name) + " is undefined");
            return;
        }
        require_here(op, name, t);
        require_gpu_float(op, name, t);
        if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
    };
    check_vec("save_mean", save_mean, true);
    check_vec("save_invstd", save_invstd, true);
    check_vec("gamma", gamma, false);
    check_vec("dgamma", dgamma, false);
    check_vec("dbeta", dbeta, false);
    auto lock = op_lock();
    cuda::batchnorm_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), N, C, S, vec(gamma), vec(save_mean),
                             vec(save_invstd), vec(dgamma), vec(dbeta), scratch(), compute_);
}

// --- losses --------------------------------------------------------------------------------------

namespace {

void check_xent(const char* op, const CudaBackend& be, const Tensor& logits, const Tensor& labels,
                float label_smoothing, const Tensor& dlogits) {
    be.require_here(op, "logits", logits);
    be.require_here(op, "labels", labels);
    if (logits.ndim() != 2) fail(op, "expects logits (N, K), got " + desc(logits));
    require_dtype(op, "labels", labels, DType::i64);
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    if (labels.numel() != N)
        fail(op, "labels " + desc(labels) + " must have shape (" + std::to_string(N) + ") for logits " + desc(logits));
    if (K <= 0) fail(op, "logits " + desc(logits) + " has no classes");
    if (dlogits.defined()) {
        be.require_here(op, "dlogits", dlogits);
        require_same_shape(op, "logits", logits, "dlogits", dlogits);
        require_same_dtype(op, "logits", logits, "dlogits", dlogits);
    }
    if (!(label_smoothing >= 0.0f && label_smoothing <= 1.0f))
        fail(op, "label_smoothing " + std::to_string(label_smoothing) + " must be in [0, 1]");
    require_gpu_float(op, "logits", logits);
}

void check_mse(const char* op, const CudaBackend& be, const Tensor& pred, const Tensor& target, const Tensor& dpred) {
    be.require_here(op, "pred", pred);
    be.require_here(op, "target", target);
    require_same_shape(op, "pred", pred, "target", target);
    require_same_dtype(op, "pred", pred, "target", target);
    if (dpred.defined()) {
        be.require_here(op, "dpred", dpred);
        require_same_shape(op, "pred", pred, "dpred", dpred);
        require_same_dtype(op, "pred", pred, "dpred", dpred);
    }
    require_gpu_float(op, "pred", pred);
}

void check_fields(const char* op, const CudaBackend& be, const char* name, const Tensor& t, int fields) {
    be.require_here(op, name, t);
    if (t.dtype() != DType::f64 || t.numel() < fields)
        fail(op, std::string(name) + " " + desc(t) + " must be f64 with at least " + std::to_string(fields) +
                     " elements");
}

void mse_dims(const Tensor& pred, std::int64_t& rows, std::int64_t& cols) {
    const std::int64_t n = pred.numel();
    rows = pred.ndim() >= 1 ? pred.dim(0) : 1;
    cols = rows ? n / rows : 0;
}

}  // namespace

LossResult CudaBackend::softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                              Tensor& dlogits, float grad_scale) {
    const char* op = "softmax_cross_entropy";
    check_xent(op, *this, logits, labels, label_smoothing, dlogits);
    auto lock = op_lock();
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), labels.data<std::int64_t>(), N, K, label_smoothing,
                                dlogits.defined() ? dlogits.raw() : nullptr, grad_scale, {}, scratch(), compute_);
    const cuda::ReduceResult r = fetch_result();
    if (r.bad_count != 0)  // checked before dlogits was written (as the CPU): nothing was
        fail(op, "label " + std::to_string(r.bad_label) + " in row " + std::to_string(r.first_bad) + " is outside [0, " +
                     std::to_string(K) + ") for logits " + desc(logits));
    LossResult res;
    res.loss = N ? r.sum / double(N) : 0.0;
    res.correct = r.count;
    return res;
}

LossResult CudaBackend::mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) {
    check_mse("mse_loss", *this, pred, target, dpred);
    auto lock = op_lock();
    std::int64_t rows, cols;
    mse_dims(pred, rows, cols);
    cuda::mse_loss(pred.raw(), target.raw(), pred.dtype(), rows, cols, dpred.defined() ? dpred.raw() : nullptr,
                   grad_scale, {}, scratch(), compute_);
    const cuda::ReduceResult r = fetch_result();
    const std::int64_t n = pred.numel();
    LossResult res;
    res.loss = n ? r.sum / double(n) : 0.0;
    res.correct = r.count;
    return res;
}

void CudaBackend::softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                             Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                             double weight) {
    const char* op = "softmax_cross_entropy_into";
    check_xent(op, *this, logits, labels, label_smoothing, dlogits);
    check_fields(op, *this, "stats", stats, kStepStatsFields);
    if (control.defined()) check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::LossOut out{stats.data<double>(), control.defined() ? control.data<double>() : nullptr, weight};
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), labels.data<std::int64_t>(), logits.dim(0),
                                logits.dim(1), label_smoothing, dlogits.defined() ? dlogits.raw() : nullptr,
                                grad_scale, out, scratch(), compute_);
}

void CudaBackend::mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                                const Tensor& control, Tensor& stats, double weight) {
    const char* op = "mse_loss_into";
    check_mse(op, *this, pred, target, dpred);
    check_fields(op, *this, "stats", stats, kStepStatsFields);
    if (control.defined()) check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    std::int64_t rows, cols;
    mse_dims(pred, rows, cols);
    cuda::LossOut out{stats.data<double>(), control.defined() ? control.data<double>() : nullptr, weight};
    cuda::mse_loss(pred.raw(), target.raw(), pred.dtype(), rows, cols, dpred.defined() ? dpred.raw() : nullptr,
                   grad_scale, out, scratch(), compute_);
}

// --- reductions ----------------------------------------------------------------------------------

double CudaBackend::sum_squares(const Tensor& x) {
    require_here("sum_squares", "x", x);
    require_gpu_float("sum_squares", "x", x);
    auto lock = op_lock();
    cuda::sum_squares(x.raw(), x.dtype(), x.numel(), scratch(), compute_);
    return fetch_result().sum;
}

bool CudaBackend::all_finite(const Tensor& x) {
    require_here("all_finite", "x", x);
    if (!dtype_is_float(x.dtype())) return true;
    require_gpu_float("all_finite", "x", x);
    auto lock = op_lock();
    cuda::all_finite(x.raw(), x.dtype(), x.numel(), scratch().result(), nullptr, compute_);
    return fetch_result().flag == 0;
}

void CudaBackend::all_finite_into(const Tensor& x, Tensor& control) {
    const char* op = "all_finite_into";
    require_here(op, "x", x);
    check_fields(op, *this, "control", control, kStepControlFields);
    if (!dtype_is_float(x.dtype())) return;
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::all_finite(x.raw(), x.dtype(), x.numel(), nullptr, control.data<double>(), compute_);
}

// --- counters and step control -------------------------------------------------------------------

void CudaBackend::increment(Tensor& counter, std::int64_t by) {
    require_here("increment", "counter", counter);
    if (counter.dtype() != DType::i64 || counter.numel() != 1)
        fail("increment", "counter " + desc(counter) + " must be one i64 element");
    auto lock = op_lock();
    cuda::increment_i64(counter.data<std::int64_t>(), by, compute_);
}

void CudaBackend::step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) {
    check_fields("step_control_end", *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::step_control_end(control.data<double>(), dynamic_loss_scale, growth_interval, compute_);
}

// --- optimizers ----------------------------------------------------------------------------------

namespace {

void check_param(const char* op, const Tensor& param, const Tensor& grad) {
    if (param.dtype() != DType::f32)
        fail(op, "param " + desc(param) + " must be f32 on the GPU (keep f32 master weights for low precision)");
    require_gpu_float(op, "grad", grad);
    if (grad.numel() != param.numel())
        fail(op, "grad " + desc(grad) + " must have as many elements as param " + desc(param));
}

void check_state(const char* op, const char* name, const Tensor& s, const Tensor& param) {
    if (s.numel() != param.numel())
        fail(op, std::string(name) + " " + desc(s) + " must have as many elements as param " + desc(param));
    if (s.dtype() != DType::f32) fail(op, std::string(name) + " " + desc(s) + " must be f32 on the GPU");
}

void check_sgd(const char* op, const CudaBackend& be, const Tensor& param, const Tensor& grad,
               const Tensor& momentum_buf, const SgdArgs& a) {
    be.require_here(op, "param", param);
    be.require_here(op, "grad", grad);
    check_param(op, param, grad);
    if (a.momentum != 0.0f) {
        be.require_here(op, "momentum_buf", momentum_buf);
        check_state(op, "momentum_buf", momentum_buf, param);
    }
    if (a.nesterov && (a.momentum <= 0.0f || a.dampening != 0.0f))
        fail(op, "nesterov momentum requires momentum > 0 and dampening = 0");
}

void check_adam(const char* op, const CudaBackend& be, const Tensor& param, const Tensor& grad, const Tensor& m,
                const Tensor& v) {
    be.require_here(op, "param", param);
    be.require_here(op, "grad", grad);
    be.require_here(op, "m", m);
    be.require_here(op, "v", v);
    check_param(op, param, grad);
    check_state(op, "m", m, param);
    check_state(op, "v", v, param);
}

}  // namespace

void CudaBackend::sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) {
    check_sgd("sgd_update", *this, param, grad, momentum_buf, a);
    auto lock = op_lock();
    cuda::sgd_update(param.data<float>(), grad.raw(), grad.dtype(),
                     a.momentum != 0.0f ? momentum_buf.data<float>() : nullptr, param.numel(), a, nullptr, compute_);
}

void CudaBackend::sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                                 const Tensor& control) {
    const char* op = "sgd_update_ctl";
    check_sgd(op, *this, param, grad, momentum_buf, a);
    check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::sgd_update(param.data<float>(), grad.raw(), grad.dtype(),
                     a.momentum != 0.0f ? momentum_buf.data<float>() : nullptr, param.numel(), a,
                     control.data<double>(), compute_);
}

void CudaBackend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) {
    const char* op = "adam_update";
    check_adam(op, *this, param, grad, m, v);
    if (a.step < 1) fail(op, "step " + std::to_string(a.step) + " must be >= 1 (it is 1-based)");
    auto lock = op_lock();
    // As torch.optim.Adam (single-tensor path): bias corrections in double, then per element.
    const double bc1 = 1.0 - std::pow(double(a.beta1), double(a.step));
    const double bc2 = 1.0 - std::pow(double(a.beta2), double(a.step));
    cuda::adam_update(param.data<float>(), grad.raw(), grad.dtype(), m.data<float>(), v.data<float>(), param.numel(),
                      a, double(a.lr) / bc1, std::sqrt(bc2), nullptr, compute_);
}

void CudaBackend::adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                                  const Tensor& control) {
    const char* op = "adam_update_ctl";
    check_adam(op, *this, param, grad, m, v);
    check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::adam_update(param.data<float>(), grad.raw(), grad.dtype(), m.data<float>(), v.data<float>(), param.numel(),
                      a, 0.0, 1.0, control.data<double>(), compute_);
}

}  // namespace hr
