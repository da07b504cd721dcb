// The NCCL communicator (GPU ranks). Built with the CUDA backend (HEADROOM_WITH_CUDA) when nccl.h was
// found (cmake/Dist.cmake); libnccl.so.2 itself is loaded at run time, so a CUDA build starts on a
// machine without NCCL and says so only when several GPUs are asked for.
//
// Ordering (llm.c's zero.cuh idea): each collective runs on this communicator's own stream, after an
// event recorded on the backend's compute stream (so it sees every op issued before it), and records
// an event the compute stream waits for in CommHandle::wait(): compute and communication overlap and
// the host never blocks for a collective. The communicator is created non-blocking (blocking = 0), every
// call that returns ncclInProgress is polled to completion with ncclCommGetAsyncError under the timeout,
// and any error or timeout aborts it with ncclCommAbort before throwing.
#include "dist/communicator.h"

#include "base/error.h"

#if defined(HEADROOM_WITH_CUDA) && defined(HEADROOM_WITH_NCCL)
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_runtime_functions.h"
#include "dist/comm_common.h"
#include "dist/mpi_runtime.h"
#endif

namespace hr {

bool nccl_built() {
#if defined(HEADROOM_WITH_CUDA) && defined(HEADROOM_WITH_NCCL)
    return true;
#else
    return false;
#endif
}

#if !(defined(HEADROOM_WITH_CUDA) && defined(HEADROOM_WITH_NCCL))

NcclLibraryProbe nccl_library_probe() {
    NcclLibraryProbe p;
    p.error = "this build of Headroom has no NCCL support";
    return p;
}

std::unique_ptr<Communicator> make_nccl_communicator(Backend&, double) {
    throw InputError(HR_MSG("dist.no_nccl_build",
                            "this build of Headroom has no NCCL support (it was built without CUDA or without "
                            "nccl.h); GPU ranks need it: rebuild with the CUDA toolkit and NCCL, or use CPU ranks"));
}

#else

namespace {

// The functions we use, resolved from libnccl with dlsym (one list for the declarations and the lookups).
#define HR_NCCL_FUNCTIONS(X) \
    X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRankConfig) X(ncclCommGetAsyncError) \
    X(ncclCommAbort) X(ncclCommFinalize) X(ncclCommDestroy) X(ncclGetErrorString) \
    X(ncclGetLastError) X(ncclAllReduce) X(ncclReduceScatter) X(ncclAllGather) X(ncclBroadcast) \
    X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd) X(ncclCommUserRank) X(ncclCommCount)
// Newer than the 2.14 we need, used when present: ncclCommSplit (2.18) forms the groups of ranks a pipeline
// with data-parallel replicas, or a tied head's two ends, needs.
#define HR_NCCL_OPTIONAL(X) X(ncclCommSplit)

struct NcclApi {
    void* lib = nullptr;
#define HR_NCCL_DECLARE(name) decltype(&::name) name = nullptr;
    HR_NCCL_FUNCTIONS(HR_NCCL_DECLARE)
    HR_NCCL_OPTIONAL(HR_NCCL_DECLARE)
#undef HR_NCCL_DECLARE
    int version = 0;
};

const NcclApi& nccl_api() {
    static NcclApi* api = [] {
        auto a = std::make_unique<NcclApi>();
        const char* candidates[] = {"libnccl.so.2",
#ifdef HEADROOM_NCCL_LIBRARY
                                    HEADROOM_NCCL_LIBRARY,
#endif
                                    "libnccl.so"};
        std::string why;
        for (const char* c : candidates) {
            if ((a->lib = dlopen(c, RTLD_NOW | RTLD_LOCAL))) break;
            const char* e = dlerror();
            why = e ? e : c;
        }
        if (!a->lib)
            throw InputError(HR_MSG("dist.no_libnccl",
                                    "cannot load NCCL (%1); GPU ranks need it: install NCCL 2.14 or newer (it comes "
                                    "with the CUDA toolkit or as libnccl2), or use CPU ranks"),
                             {why});
        std::string missing;
#define HR_NCCL_RESOLVE(name)                                            \
    a->name = reinterpret_cast<decltype(a->name)>(dlsym(a->lib, #name)); \
    if (!a->name && missing.empty()) missing = #name;
        HR_NCCL_FUNCTIONS(HR_NCCL_RESOLVE)
#undef HR_NCCL_RESOLVE
#define HR_NCCL_RESOLVE_OPTIONAL(name) a->name = reinterpret_cast<decltype(a->name)>(dlsym(a->lib, #name));
        HR_NCCL_OPTIONAL(HR_NCCL_RESOLVE_OPTIONAL)
#undef HR_NCCL_RESOLVE_OPTIONAL
        if (!missing.empty() || a->ncclGetVersion(&a->version) != ncclSuccess || a->version < NCCL_VERSION(2, 14, 0))
            throw InputError(HR_MSG("dist.old_nccl",
                                    "the NCCL found (version code %1) is older than 2.14, which non-blocking "
                                    "communicators need (%2); install a newer NCCL"),
                             {std::to_string(a->version), missing.empty() ? "ncclCommInitRankConfig" : missing});
        return a.release();
    }();
    return *api;
}

std::string version_string(int code) {
    // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9
    return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

// The CUDA runtime functions this file uses, from the runtime linked into the CUDA module
// (libheadroom_cuda.so, cuda_runtime_function): headroom_core links no CUDA library (cmake/Cuda.cmake),
// the module links the runtime statically, and a communicator on a CUDA backend exists only once the
// module is loaded. One runtime in the process: its streams and events are the backend's.
// The list is cuda_runtime_functions.h's, which the module's table expands too.
#define HR_CUDART_FUNCTIONS(X) HR_CUDA_RUNTIME_FUNCTIONS(X)

struct CudartApi {
#define HR_CUDART_DECLARE(name) decltype(&::name) name = nullptr;
    HR_CUDART_FUNCTIONS(HR_CUDART_DECLARE)
#undef HR_CUDART_DECLARE
};

const CudartApi& cuda_rt() {
    static CudartApi* api = [] {
        auto a = std::make_unique<CudartApi>();
#define HR_CUDART_RESOLVE(name)                                                      \
    a->name = reinterpret_cast<decltype(a->name)>(cuda_runtime_function(#name));     \
    if (!a->name) throw Error("internal: the CUDA module does not offer " #name " (is it loaded?)");
        HR_CUDART_FUNCTIONS(HR_CUDART_RESOLVE)
#undef HR_CUDART_RESOLVE
        return a.release();
    }();
    return *api;
}

[[noreturn]] void throw_rt(cudaError_t err, const char* call, const char* file, int line) {
    throw Error(std::string("CUDA error in ") + call + ": " + cuda_rt().cudaGetErrorName(err) + " (" +
                cuda_rt().cudaGetErrorString(err) + ") at " + file + ":" + std::to_string(line));
}

#define HR_RT_CHECK(call)                                                         \
    do {                                                                          \
        cudaError_t hr_err_ = (call);                                             \
        if (hr_err_ != cudaSuccess) throw_rt(hr_err_, #call, __FILE__, __LINE__); \
    } while (0)

ncclDataType_t nccl_type(DType dt) {
    switch (dt) {
        case DType::f32: return ncclFloat32;
        case DType::bf16: return ncclBfloat16;
        case DType::f16: return ncclFloat16;
        default: return ncclUint8;
    }
}

ncclRedOp_t nccl_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum: return ncclSum;
        case ReduceOp::avg: return ncclAvg;
        case ReduceOp::max: return ncclMax;
    }
    return ncclSum;
}

class NcclCommunicator;

struct NcclWork : CommHandle::Impl {
    NcclCommunicator* comm = nullptr;
    cudaEvent_t done = nullptr;
    void wait() override;
    bool test() override;
    ~NcclWork() override {
        if (done) cuda_rt().cudaEventDestroy(done);
    }
};

class NcclCommunicator : public Communicator {
public:
    NcclCommunicator(Backend& backend, double timeout) : backend_(backend), api_(nccl_api()) {
        timeout_seconds_ = timeout;
        if (!backend.device().is_cuda())
            throw InputError(HR_MSG("dist.nccl_cpu", "NCCL ranks need a CUDA device, got %1; use MPI for CPU ranks"),
                             {backend.device().str()});
        const RankEnvironment env = rank_environment();
        make_stream();
        ncclUniqueId id;
        std::memset(&id, 0, sizeof id);
        if (env.launched && env.world_size > 1) {
            // rank 0 makes the id, MPI carries it to the others (the only thing MPI moves for GPU ranks,
            // besides scalar decisions and barriers)
            bootstrap_ = make_mpi_communicator(timeout);
            rank_ = bootstrap_->rank();
            size_ = bootstrap_->world_size();
            if (rank_ == 0) nccl_ok(api_.ncclGetUniqueId(&id), "ncclGetUniqueId");
            MpiRuntime::get().broadcast_bytes(&id, sizeof id, 0, timeout);
        } else {
            nccl_ok(api_.ncclGetUniqueId(&id), "ncclGetUniqueId");
        }
        // NCCL's own device memory (its buffers per channel and peer, its kernels, the proxy's state) is
        // allocated by NCCL, outside the ledger: the device's free memory before the communicator minus
        // after its first collective (NCCL connects and loads lazily, at the first one). The warm-up
        // buffer comes from the caching allocator before the first reading, so it is not counted.
        Tensor warm = warm_up_buffer();
        const std::size_t free_before = device_free();
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        ncclResult_t rc = api_.ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
        if (rc != ncclSuccess && rc != ncclInProgress) fail_call("ncclCommInitRankConfig", rc);
        settle("ncclCommInitRankConfig");
        warm_up(warm);
        const std::size_t free_after = device_free();
        if (free_before > free_after) device_overhead_bytes_ = free_before - free_after;
    }

    // A group made by split(): `comm` from ncclCommSplit (still settling), `bootstrap` the MPI group of the
    // same ranks (scalars, barriers), `parent` the communicator it came from (its figures count the group's).
    NcclCommunicator(NcclCommunicator& parent, ncclComm_t comm, std::unique_ptr<Communicator> bootstrap)
        : backend_(parent.backend_), api_(parent.api_), bootstrap_(std::move(bootstrap)), comm_(comm) {
        timeout_seconds_ = parent.timeout_seconds_;
        make_stream();
        settle("ncclCommSplit");
        nccl_ok(api_.ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
        nccl_ok(api_.ncclCommCount(comm_, &size_), "ncclCommCount");
        if (bootstrap_ && (bootstrap_->rank() != rank_ || bootstrap_->world_size() != size_))
            throw Error("internal: ncclCommSplit and MPI_Comm_split formed different groups (rank " +
                        std::to_string(rank_) + " of " + std::to_string(size_) + " against " + bootstrap_->name() + ")");
        Tensor warm = warm_up_buffer();
        warm_up(warm);
        parent_stats_ = &parent.stats_;  // (after the warm-up: from now on the group's traffic is the run's)
    }

    ~NcclCommunicator() override {
        if (comm_) {
            if (broken_) {
                api_.ncclCommAbort(comm_);
            } else {
                try {
                    synchronize();
                    if (api_.ncclCommFinalize(comm_) == ncclInProgress) settle("ncclCommFinalize");
                    api_.ncclCommDestroy(comm_);
                } catch (...) {
                    api_.ncclCommAbort(comm_);
                }
            }
        }
        if (stream_) cuda_rt().cudaStreamDestroy(stream_);
    }

    int rank() const override { return rank_; }
    int world_size() const override { return size_; }
    Device device() const override { return backend_.device(); }
    std::string name() const override {
        return "nccl " + version_string(api_.version) + " on " + backend_.device().str() + ", rank " +
               std::to_string(rank_) + " of " + std::to_string(size_);
    }

    CommHandle all_reduce(Tensor& buffer, ReduceOp op) override {
        check_collective_buffer("all_reduce", buffer, device(), false);
        count(buffer);
        return run("ncclAllReduce", [&] {
            return api_.ncclAllReduce(buffer.raw(), buffer.raw(), static_cast<std::size_t>(buffer.numel()),
                                      nccl_type(buffer.dtype()), nccl_op(op), comm_, stream_);
        });
    }
    CommHandle reduce_scatter(const Tensor& in, Tensor& out, ReduceOp op) override {
        check_chunked("reduce_scatter", in, out, size_, rank_, device(), true);
        count(in);
        return run("ncclReduceScatter", [&] {
            return api_.ncclReduceScatter(in.raw(), out.raw(), static_cast<std::size_t>(out.numel()),
                                          nccl_type(in.dtype()), nccl_op(op), comm_, stream_);
        });
    }
    CommHandle all_gather(const Tensor& in, Tensor& out) override {
        check_chunked("all_gather", out, in, size_, rank_, device(), false);
        count(out);
        return run("ncclAllGather", [&] {
            return api_.ncclAllGather(in.raw(), out.raw(), static_cast<std::size_t>(in.numel()), nccl_type(in.dtype()),
                                      comm_, stream_);
        });
    }
    // Point-to-point as NCCL groups: ncclSend / ncclRecv between ncclGroupStart and ncclGroupEnd, one group
    // per call, so that the transfers of a group progress together (a rank may also send to itself)
    CommHandle exchange(const std::vector<Transfer>& transfers) override {
        for (const Transfer& t : transfers) {
            check_collective_buffer(t.send ? "send" : "recv", t.buffer, device(), true);
            if (t.peer < 0 || t.peer >= size_)
                throw Error("internal: a transfer with rank " + std::to_string(t.peer) + " from rank " +
                            std::to_string(rank_) + " of " + std::to_string(size_));
            count(t.buffer);
        }
        return run("ncclSend/ncclRecv", [&] {
            ncclResult_t first = api_.ncclGroupStart();
            if (first != ncclSuccess) return first;
            for (const Transfer& t : transfers) {
                void* p = const_cast<void*>(t.buffer.raw());
                const ncclResult_t rc = t.send ? api_.ncclSend(p, t.buffer.nbytes(), ncclUint8, t.peer, comm_, stream_)
                                               : api_.ncclRecv(p, t.buffer.nbytes(), ncclUint8, t.peer, comm_, stream_);
                if (rc != ncclSuccess && rc != ncclInProgress && first == ncclSuccess) first = rc;
            }
            const ncclResult_t end = api_.ncclGroupEnd();  // (always: a group once opened is closed)
            return first != ncclSuccess ? first : end;
        });
    }
    CommHandle send(const Tensor& buffer, int peer) override { return exchange({Transfer{true, buffer, peer}}); }
    CommHandle recv(Tensor& buffer, int peer) override { return exchange({Transfer{false, buffer, peer}}); }

    // ncclCommSplit, with MPI_Comm_split of the bootstrap beside it for the group's scalars and barriers. The
    // group's own buffers count in this communicator's device memory outside the ledger.
    std::unique_ptr<Communicator> split(int color, int key) override {
        live();
        if (!api_.ncclCommSplit)
            throw InputError(HR_MSG("dist.nccl_no_split",
                                    "NCCL %1 cannot form groups of ranks (ncclCommSplit came with NCCL 2.18); pipeline "
                                    "stages with data-parallel replicas, or a GPT's tied head across stages, need "
                                    "them: install NCCL 2.18 or newer"),
                             {version_string(api_.version)});
        synchronize();
        std::unique_ptr<Communicator> boot = bootstrap_ ? bootstrap_->split(color, key) : nullptr;
        const std::size_t free_before = device_free();
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        ncclComm_t out = nullptr;
        const ncclResult_t rc = api_.ncclCommSplit(comm_, color, key, &out, &config);
        if (rc != ncclSuccess && rc != ncclInProgress) fail_call("ncclCommSplit", rc);
        settle("ncclCommSplit");  // (the parent settles too)
        std::unique_ptr<NcclCommunicator> group(new NcclCommunicator(*this, out, std::move(boot)));
        const std::size_t free_after = device_free();
        if (free_before > free_after) {
            group->device_overhead_bytes_ = free_before - free_after;
            device_overhead_bytes_ += free_before - free_after;
        }
        return group;
    }

    CommHandle broadcast(Tensor& buffer, int root) override {
        check_collective_buffer("broadcast", buffer, device(), true);
        count(buffer);
        return run("ncclBroadcast", [&] {
            return api_.ncclBroadcast(buffer.raw(), buffer.raw(), buffer.nbytes(), ncclUint8, root, comm_, stream_);
        });
    }
    void barrier() override {
        synchronize();
        if (bootstrap_) bootstrap_->barrier();
    }
    double all_reduce_value(double value, ReduceOp op) override {
        // scalars are host values: MPI reduces them (world size 1: there is nothing to reduce)
        live();
        if (!bootstrap_) return value;
        return bootstrap_->all_reduce_value(value, op);
    }

    void check() override {
        live();
        ncclResult_t state = ncclSuccess;
        api_.ncclCommGetAsyncError(comm_, &state);
        if (state != ncclSuccess && state != ncclInProgress) fail_call("an earlier collective", state);
    }

    void synchronize() override {
        live();
        cudaEvent_t ev = nullptr;
        HR_RT_CHECK(cuda_rt().cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        HR_RT_CHECK(cuda_rt().cudaEventRecord(ev, stream_));
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0;; ++i) {
            cudaError_t q = cuda_rt().cudaEventQuery(ev);
            if (q == cudaSuccess) break;
            if (q != cudaErrorNotReady) {
                cuda_rt().cudaEventDestroy(ev);
                HR_RT_CHECK(q);
            }
            check();
            if (seconds_between(t0, std::chrono::steady_clock::now()) > timeout_seconds_) {
                cuda_rt().cudaEventDestroy(ev);
                timed_out("the collectives of this step");
            }
            if (i > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        cuda_rt().cudaEventDestroy(ev);
        add_wait(seconds_between(t0, std::chrono::steady_clock::now()));
    }

    void abort_all(const std::string& reason) noexcept override {
        broken_ = true;
        if (comm_) api_.ncclCommAbort(comm_);
        comm_ = nullptr;
        std::fprintf(stderr, "headroom: rank %d ends every rank: %s\n", rank_, reason.c_str());
        if (bootstrap_) bootstrap_->abort_all(reason);
    }

    cudaStream_t compute_stream() const { return compute_; }
    std::size_t device_overhead_bytes() const override { return device_overhead_bytes_; }

private:
    void make_stream() {
        compute_ = static_cast<cudaStream_t>(cuda_compute_stream(backend_));
        HR_RT_CHECK(cuda_rt().cudaSetDevice(backend_.device().index));
        HR_RT_CHECK(cuda_rt().cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    }
    Tensor warm_up_buffer() {
        Tensor warm = Tensor::empty(backend_.allocator(), {64}, DType::f32, MemCategory::communication);
        backend_.fill(warm, 0.0);
        return warm;
    }
    // the first collective (NCCL connects at it), not counted as the run's communication
    void warm_up(Tensor& warm) {
        CommHandle first = all_reduce(warm, ReduceOp::sum);
        first.wait();
        synchronize();
        stats_ = CommStats{};
    }
    std::size_t device_free() {
        std::size_t free = 0, total = 0;
        return cuda_rt().cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
    }

    template <class F>
    CommHandle run(const char* call, F&& enqueue) {
        live();
        cudaEvent_t ready = nullptr;
        auto w = std::make_unique<NcclWork>();
        w->comm = this;
        HR_RT_CHECK(cuda_rt().cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
        HR_RT_CHECK(cuda_rt().cudaEventRecord(ready, compute_));
        HR_RT_CHECK(cuda_rt().cudaStreamWaitEvent(stream_, ready, 0));
        cuda_rt().cudaEventDestroy(ready);  // released once the stream has passed it
        ncclResult_t rc = enqueue();
        if (rc == ncclInProgress) {
            settle(call);
        } else if (rc != ncclSuccess) {
            fail_call(call, rc);
        }
        HR_RT_CHECK(cuda_rt().cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming));
        HR_RT_CHECK(cuda_rt().cudaEventRecord(w->done, stream_));
        return CommHandle(std::move(w));
    }

    // Polls a non-blocking call (init, finalize, an enqueue that returned ncclInProgress) until NCCL
    // says it is done, under the timeout.
    void settle(const char* call) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0;; ++i) {
            ncclResult_t state = ncclSuccess;
            ncclResult_t rc = api_.ncclCommGetAsyncError(comm_, &state);
            if (rc != ncclSuccess) fail_call(call, rc);
            if (state == ncclSuccess) return;
            if (state != ncclInProgress) fail_call(call, state);
            if (seconds_between(t0, std::chrono::steady_clock::now()) > timeout_seconds_) timed_out(call);
            if (i > 1000) std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }

    void nccl_ok(ncclResult_t rc, const char* call) {
        if (rc != ncclSuccess) fail_call(call, rc);
    }
    [[noreturn]] void fail_call(const char* call, ncclResult_t rc) {
        const char* last = api_.ncclGetLastError ? api_.ncclGetLastError(comm_) : "";
        std::string why = api_.ncclGetErrorString(rc);
        if (last && *last) why += std::string(": ") + last;
        broken();
        throw Error(HR_MSG("dist.nccl_failed", "rank %1: %2 failed on %3: %4"),
                    {std::to_string(rank_), call, backend_.device().str(), why});
    }
    [[noreturn]] void timed_out(const std::string& what) {
        broken();
        throw Error(HR_MSG("dist.timeout",
                           "rank %1: %2 did not finish within %3 s: another rank stopped, is stuck or took a "
                           "different path (its messages say which); --rank-timeout sets the limit"),
                    {std::to_string(rank_), what, std::to_string(static_cast<long long>(timeout_seconds_))});
    }
    void broken() {
        broken_ = true;
        if (comm_) api_.ncclCommAbort(comm_);
        comm_ = nullptr;
        if (bootstrap_) MpiRuntime::get().mark_broken();
    }
    void live() {
        if (broken_)
            throw Error(HR_MSG("dist.broken", "rank %1: communication with the other ranks already failed (see the "
                                              "first error); the run cannot continue"),
                        {std::to_string(rank_)});
    }

    Backend& backend_;
    const NcclApi& api_;
    std::unique_ptr<Communicator> bootstrap_;  // MPI, when mpirun started several ranks
    ncclComm_t comm_ = nullptr;
    cudaStream_t stream_ = nullptr, compute_ = nullptr;
    int rank_ = 0, size_ = 1;
    bool broken_ = false;
    std::size_t device_overhead_bytes_ = 0;
};

void NcclWork::wait() {
    if (!done) return;
    // the compute stream waits on the device; the host goes on
    cudaError_t e = cuda_rt().cudaStreamWaitEvent(comm->compute_stream(), done, 0);
    cuda_rt().cudaEventDestroy(done);
    done = nullptr;
    if (e != cudaSuccess) throw Error(std::string("CUDA error in cudaStreamWaitEvent: ") + cuda_rt().cudaGetErrorString(e));
}

bool NcclWork::test() {
    if (!done) return true;
    return cuda_rt().cudaEventQuery(done) == cudaSuccess;
}

}  // namespace

NcclLibraryProbe nccl_library_probe() {
    NcclLibraryProbe p;
    p.built = true;
#ifdef HEADROOM_NCCL_LIBRARY
    p.library_known = true;
#endif
    try {
        const NcclApi& api = nccl_api();  // throws unless every function of HR_NCCL_FUNCTIONS resolved
        p.loaded = true;
        p.version = version_string(api.version);
        p.has_split = api.ncclCommSplit != nullptr;
    } catch (const std::exception& e) {
        p.error = e.what();
    }
    return p;
}

std::unique_ptr<Communicator> make_nccl_communicator(Backend& backend, double timeout_seconds) {
    return std::make_unique<NcclCommunicator>(backend, timeout_seconds);
}

#endif

}  // namespace hr
