// The MPI communicator (CPU ranks) and the Open MPI runtime it loads (mpi_runtime.h says why it is
// loaded at run time, not linked).
#include "dist/communicator.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "dist/comm_common.h"
#include "dist/mpi_runtime.h"
#include "dist/rank_progress.h"

#ifdef HEADROOM_WITH_MPI
#define OMPI_SKIP_MPICXX 1
#include <dlfcn.h>
#include <unistd.h>

#include <csignal>
#include <mpi.h>
#endif

namespace hr {

bool mpi_built() {
#ifdef HEADROOM_WITH_MPI
    return true;
#else
    return false;
#endif
}

#ifndef HEADROOM_WITH_MPI

MpiRuntime& MpiRuntime::get() {
    throw InputError(HR_MSG("dist.no_mpi_build",
                            "this build of Headroom has no MPI support (Open MPI's headers were not found when it "
                            "was built); install libopenmpi-dev and rebuild, or train on one process"));
}
void MpiRuntime::broadcast_bytes(void*, std::size_t, int, double) {}
void MpiRuntime::abort_job(int) noexcept { std::_Exit(1); }
std::unique_ptr<Communicator> make_mpi_communicator(double) { MpiRuntime::get(); return nullptr; }

#else

// The functions we use, resolved from libmpi with dlsym (one list for the declarations and the lookups).
#define HR_MPI_FUNCTIONS(X) \
    X(MPI_Initialized) X(MPI_Finalized) X(MPI_Init_thread) X(MPI_Finalize) X(MPI_Abort) \
    X(MPI_Comm_rank) X(MPI_Comm_size) X(MPI_Comm_dup) X(MPI_Comm_free) X(MPI_Comm_set_errhandler) \
    X(MPI_Get_library_version) X(MPI_Error_string) X(MPI_Op_create) X(MPI_Iallreduce) \
    X(MPI_Ireduce_scatter_block) X(MPI_Iallgather) X(MPI_Ibcast) X(MPI_Ibarrier) X(MPI_Test) \
    X(MPI_Iprobe) X(MPI_Isend) X(MPI_Irecv) X(MPI_Comm_split)

// The functions and predefined handles we use, resolved from libmpi with dlsym.
struct MpiRuntime::Api {
    void* lib = nullptr;
#define HR_MPI_DECLARE(name) decltype(&::name) name = nullptr;
    HR_MPI_FUNCTIONS(HR_MPI_DECLARE)
#undef HR_MPI_DECLARE
    MPI_Comm comm_world = nullptr;
    MPI_Datatype t_float = nullptr, t_double = nullptr, t_uint16 = nullptr, t_byte = nullptr;
    MPI_Op op_sum = nullptr, op_max = nullptr;
    MPI_Errhandler errors_return = nullptr;
    // user-defined reductions of bf16 / f16 (stored as MPI_UINT16_T): add (or max) in f32, round once
    MPI_Op op_bf16_sum = nullptr, op_bf16_max = nullptr, op_f16_sum = nullptr, op_f16_max = nullptr;
};

namespace {

template <float (*to_f32)(std::uint16_t), std::uint16_t (*from_f32)(float), bool is_max>
void lowp_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const std::uint16_t*>(in);
    auto* b = static_cast<std::uint16_t*>(inout);
    for (int i = 0; i < *len; ++i) {
        const float x = to_f32(a[i]), y = to_f32(b[i]);
        b[i] = from_f32(is_max ? (x > y ? x : y) : x + y);
    }
}

std::string mpi_error(const MpiRuntime::Api& api, int code) {
    char buf[512];
    int len = 0;
    if (api.MPI_Error_string && api.MPI_Error_string(code, buf, &len) == 0)
        return std::string(buf, static_cast<std::size_t>(len));
    return "MPI error " + std::to_string(code);
}

void* open_libmpi(std::string& why) {
    const char* candidates[] = {"libmpi.so.40",
#ifdef HEADROOM_MPI_LIBRARY
                                HEADROOM_MPI_LIBRARY,
#endif
                                "libmpi.so"};
    for (const char* c : candidates) {
        if (void* h = dlopen(c, RTLD_NOW | RTLD_GLOBAL)) return h;
        const char* e = dlerror();
        why = e ? e : c;
    }
    return nullptr;
}

}  // namespace

MpiRuntime::MpiRuntime() {
    const RankEnvironment env = rank_environment();
    if (!env.launched)
        throw InputError(HR_MSG("dist.not_launched",
                                "CPU ranks talk through MPI, and this process was not started by mpirun; launch "
                                "the ranks with mpirun -np N headroom ... (or train on one process)"));
    auto api = std::make_unique<Api>();
    std::string why;
    api->lib = open_libmpi(why);
    if (!api->lib)
        throw InputError(HR_MSG("dist.no_libmpi",
                                "cannot load Open MPI (%1); install Open MPI (Debian: openmpi-bin libopenmpi3) "
                                "or train on one process"),
                         {why});
    bool missing = false;
    std::string missing_name;
    auto sym = [&](const char* name) -> void* {
        void* p = dlsym(api->lib, name);
        if (!p && !missing) {
            missing = true;
            missing_name = name;
        }
        return p;
    };
#define HR_MPI_RESOLVE(name) api->name = reinterpret_cast<decltype(api->name)>(sym(#name));
    HR_MPI_FUNCTIONS(HR_MPI_RESOLVE)
#undef HR_MPI_RESOLVE
    api->comm_world = static_cast<MPI_Comm>(sym("ompi_mpi_comm_world"));
    api->t_float = static_cast<MPI_Datatype>(sym("ompi_mpi_float"));
    api->t_double = static_cast<MPI_Datatype>(sym("ompi_mpi_double"));
    api->t_uint16 = static_cast<MPI_Datatype>(sym("ompi_mpi_uint16_t"));
    api->t_byte = static_cast<MPI_Datatype>(sym("ompi_mpi_byte"));
    api->op_sum = static_cast<MPI_Op>(sym("ompi_mpi_op_sum"));
    api->op_max = static_cast<MPI_Op>(sym("ompi_mpi_op_max"));
    api->errors_return = static_cast<MPI_Errhandler>(sym("ompi_mpi_errors_return"));
    if (missing)
        throw InputError(HR_MSG("dist.not_openmpi",
                                "the MPI library found is not Open MPI 4 or newer (it lacks %1); Headroom's CPU "
                                "ranks need Open MPI (Debian: openmpi-bin libopenmpi3)"),
                         {missing_name});
    int initialized = 0;
    api->MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        int rc = api->MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS)
            throw Error(HR_MSG("dist.mpi_init", "MPI could not start (%1); see mpirun's messages above"),
                        {mpi_error(*api, rc)});
        if (provided < MPI_THREAD_SERIALIZED)
            throw Error(HR_MSG("dist.mpi_threads",
                               "this Open MPI gives thread level %1, Headroom needs MPI_THREAD_SERIALIZED (2); "
                               "use an Open MPI built with thread support"),
                        {std::to_string(provided)});
        std::atexit([] {
            MpiRuntime& rt = MpiRuntime::get();
            int fin = 0;
            rt.api().MPI_Finalized(&fin);
            if (fin) return;
            if (rt.broken()) rt.api().MPI_Abort(rt.api().comm_world, 1);
            rt.api().MPI_Finalize();
        });
    }
    api->MPI_Comm_set_errhandler(api->comm_world, api->errors_return);
    api->MPI_Comm_rank(api->comm_world, &rank_);
    api->MPI_Comm_size(api->comm_world, &size_);
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    api->MPI_Get_library_version(ver, &len);
    version_ = std::string(ver, static_cast<std::size_t>(len));
    if (auto comma = version_.find(','); comma != std::string::npos) version_.resize(comma);
    while (!version_.empty() && (version_.back() == '\n' || version_.back() == ' ')) version_.pop_back();
    api->MPI_Op_create(&lowp_reduce<bf16_to_f32, f32_to_bf16, false>, 1, &api->op_bf16_sum);
    api->MPI_Op_create(&lowp_reduce<bf16_to_f32, f32_to_bf16, true>, 1, &api->op_bf16_max);
    api->MPI_Op_create(&lowp_reduce<f16_to_f32, f32_to_f16, false>, 1, &api->op_f16_sum);
    api->MPI_Op_create(&lowp_reduce<f16_to_f32, f32_to_f16, true>, 1, &api->op_f16_max);
    if (rank_ != env.rank || size_ != env.world_size)
        throw Error(HR_MSG("dist.env_mismatch",
                           "MPI says rank %1 of %2 but mpirun's environment says rank %3 of %4; start the ranks "
                           "with one mpirun"),
                    {std::to_string(rank_), std::to_string(size_), std::to_string(env.rank),
                     std::to_string(env.world_size)});
    api_ = api.release();
}

MpiRuntime& MpiRuntime::get() {
    static MpiRuntime* rt = new MpiRuntime();  // never destroyed: the atexit handler uses it
    return *rt;
}

namespace {
// Polls a request until it completes or the timeout passes. Spins briefly, then sleeps between tests
// (ranks often share cores).
void poll_request(const MpiRuntime::Api& api, MPI_Request& req, double timeout, const std::function<void()>& on_timeout,
                  const std::function<void(int)>& on_error) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0;; ++i) {
        int flag = 0;
        int rc = api.MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) on_error(rc);
        if (flag) return;
        if (i > 2000) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            if ((i & 63) == 0 && seconds_between(t0, std::chrono::steady_clock::now()) > timeout) on_timeout();
        }
    }
}
}  // namespace

void MpiRuntime::broadcast_bytes(void* data, std::size_t bytes, int root, double timeout) {
    if (bytes > static_cast<std::size_t>(INT_MAX)) throw Error("internal: MPI broadcast of more than 2 GiB");
    MPI_Request req;
    int rc = api_->MPI_Ibcast(data, static_cast<int>(bytes), api_->t_byte, root, api_->comm_world, &req);
    auto fail = [&](const std::string& why) {
        mark_broken();
        throw Error(HR_MSG("dist.bootstrap", "rank %1: the start-up broadcast from rank %2 failed: %3"),
                    {std::to_string(rank_), std::to_string(root), why});
    };
    if (rc != MPI_SUCCESS) fail(mpi_error(*api_, rc));
    poll_request(
        *api_, req, timeout, [&] { fail("no answer within " + std::to_string(static_cast<int>(timeout)) + " s"); },
        [&](int code) { fail(mpi_error(*api_, code)); });
}

void MpiRuntime::abort_job(int code) noexcept {
    broken_ = true;
    // MPI_Abort asks mpirun to end every rank; should it not return (mpirun unreachable), SIGALRM ends this
    // process in 10 s, and mpirun ends the job for a rank that died
    std::signal(SIGALRM, SIG_DFL);
    ::alarm(10);
    api_->MPI_Abort(api_->comm_world, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
}

// ---- the communicator ---------------------------------------------------------------------------------

namespace {

class MpiCommunicator;

struct MpiWork : CommHandle::Impl {
    MpiCommunicator* comm = nullptr;
    MPI_Request req{};
    std::string what;               // "all_reduce of 1.2 MiB (bf16)"
    std::function<void()> finish;   // after completion: move an in-place reduce-scatter chunk, divide for avg
    bool finished = false;
    void wait() override;
    bool test() override;
};

class MpiCommunicator : public Communicator {
public:
    // A duplicate of MPI_COMM_WORLD, or (split) a communicator MPI made, now this one's to free.
    MpiCommunicator(MpiRuntime& rt, double timeout, MPI_Comm own = nullptr) : rt_(rt), api_(rt.api()) {
        timeout_seconds_ = timeout;
        if (own) {
            comm_ = own;
        } else {
            int rc = api_.MPI_Comm_dup(api_.comm_world, &comm_);
            if (rc != MPI_SUCCESS) throw Error("MPI_Comm_dup failed: " + mpi_error(api_, rc));
        }
        api_.MPI_Comm_set_errhandler(comm_, api_.errors_return);
        api_.MPI_Comm_rank(comm_, &rank_);
        api_.MPI_Comm_size(comm_, &size_);
    }
    ~MpiCommunicator() override {
        int fin = 0;
        api_.MPI_Finalized(&fin);
        if (!fin && !broken_) api_.MPI_Comm_free(&comm_);
    }

    int rank() const override { return rank_; }
    int world_size() const override { return size_; }
    Device device() const override { return Device::cpu(); }
    std::string name() const override {
        return "mpi (" + rt_.version() + "), rank " + std::to_string(rank_) + " of " + std::to_string(size_);
    }

    CommHandle all_reduce(Tensor& buffer, ReduceOp op) override {
        check_collective_buffer("all_reduce", buffer, device(), false);
        live();
        count(buffer);
        auto w = work("all_reduce", buffer);
        int rc = api_.MPI_Iallreduce(MPI_IN_PLACE, buffer.raw(), int_count(buffer.numel()), type(buffer.dtype()),
                                     mpi_op(buffer.dtype(), op), comm_, &w->req);
        started(rc, *w);
        if (op == ReduceOp::avg) w->finish = [this, buffer]() mutable { divide(buffer); };
        return CommHandle(std::move(w));
    }

    CommHandle reduce_scatter(const Tensor& in, Tensor& out, ReduceOp op) override {
        const bool in_place = check_chunked("reduce_scatter", in, out, size_, rank_, device(), true);
        live();
        count(in);
        auto w = work("reduce_scatter", in);
        const int n = int_count(out.numel());
        int rc;
        if (in_place) {
            // MPI_IN_PLACE leaves the result at the start of the buffer; it moves to chunk `rank` after
            rc = api_.MPI_Ireduce_scatter_block(MPI_IN_PLACE, in.raw(), n, type(in.dtype()), mpi_op(in.dtype(), op),
                                                comm_, &w->req);
            Tensor whole = in, chunk = out;
            w->finish = [this, whole, chunk, op]() mutable {
                if (rank_ != 0) std::memmove(chunk.raw(), whole.raw(), chunk.nbytes());
                if (op == ReduceOp::avg) divide(chunk);
            };
        } else {
            rc = api_.MPI_Ireduce_scatter_block(in.raw(), out.raw(), n, type(in.dtype()), mpi_op(in.dtype(), op), comm_,
                                                &w->req);
            if (op == ReduceOp::avg) w->finish = [this, out]() mutable { divide(out); };
        }
        started(rc, *w);
        return CommHandle(std::move(w));
    }

    CommHandle all_gather(const Tensor& in, Tensor& out) override {
        const bool in_place = check_chunked("all_gather", out, in, size_, rank_, device(), false);
        live();
        count(out);
        auto w = work("all_gather", out);
        const int n = int_count(in.numel());
        const MPI_Datatype t = type(in.dtype());
        int rc = api_.MPI_Iallgather(in_place ? MPI_IN_PLACE : in.raw(), n, t, out.raw(), n, t, comm_, &w->req);
        started(rc, *w);
        return CommHandle(std::move(w));
    }

    CommHandle broadcast(Tensor& buffer, int root) override {
        check_collective_buffer("broadcast", buffer, device(), true);
        if (root < 0 || root >= size_) throw Error("internal: broadcast from rank " + std::to_string(root));
        live();
        count(buffer);
        auto w = work("broadcast", buffer);
        int rc = api_.MPI_Ibcast(buffer.raw(), int_count(static_cast<std::int64_t>(buffer.nbytes())), api_.t_byte, root,
                                 comm_, &w->req);
        started(rc, *w);
        return CommHandle(std::move(w));
    }

    std::unique_ptr<Communicator> split(int color, int key) override {
        live();
        MPI_Comm out = nullptr;
        const int rc = api_.MPI_Comm_split(comm_, color, key, &out);
        if (rc != MPI_SUCCESS) throw Error("MPI_Comm_split failed: " + mpi_error(api_, rc));
        auto group = std::make_unique<MpiCommunicator>(rt_, timeout_seconds_, out);
        group->parent_stats_ = &stats_;  // (the run's figures per step count every group's traffic)
        return group;
    }

    CommHandle send(const Tensor& buffer, int peer) override {
        return point_to_point("send", const_cast<Tensor&>(buffer), peer, true);
    }
    CommHandle recv(Tensor& buffer, int peer) override { return point_to_point("recv", buffer, peer, false); }

    void barrier() override {
        live();
        MpiWork w;
        w.comm = this;
        w.what = "barrier";
        started(api_.MPI_Ibarrier(comm_, &w.req), w);
        w.wait();
    }

    double all_reduce_value(double value, ReduceOp op) override {
        live();
        double v = value;
        MpiWork w;
        w.comm = this;
        w.what = std::string("all_reduce of one value (") + reduce_op_name(op) + ")";
        int rc = api_.MPI_Iallreduce(MPI_IN_PLACE, &v, 1, api_.t_double, op == ReduceOp::max ? api_.op_max : api_.op_sum,
                                     comm_, &w.req);
        started(rc, w);
        w.wait();
        return op == ReduceOp::avg ? v / size_ : v;
    }

    void progress() override {
        if (broken_) return;
        int flag = 0;
        api_.MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
    }

    void check() override { live(); }

    void abort_all(const std::string& reason) noexcept override {
        std::fprintf(stderr, "headroom: rank %d ends every rank: %s\n", rank_, reason.c_str());
        std::fflush(stderr);
        rt_.abort_job(1);
    }

    // MpiWork's wait, with the timeout
    void wait(MpiWork& w) {
        // A communicator of this process already failed (a timeout, a lost peer): no rank finishes this
        // operation now, so it is not waited for. Without this, every handle still held (a sharding engine's
        // prefetch, destroyed as the trainer unwinds) waited a whole timeout more before the job could end.
        if (rt_.broken()) broken_ = true;
        live();
        const auto t0 = std::chrono::steady_clock::now();
        struct WaitNote {  // the launcher's heartbeats: this rank waits for the others (dist/rank_progress.h)
            explicit WaitNote(const std::string& what) { note_wait_begins(what); }
            ~WaitNote() { note_wait_ends(); }
        } noted(w.what);
        poll_request(
            api_, w.req, timeout_seconds_,
            [&] {
                fail(w, HR_MSG("dist.timeout",
                               "rank %1: %2 did not finish within %3 s: another rank stopped, is stuck or took a "
                               "different path (its messages say which); --rank-timeout sets the limit"),
                     {std::to_string(rank_), w.what, std::to_string(static_cast<long long>(timeout_seconds_))});
            },
            [&](int code) { fail_code(w, code); });
        add_wait(seconds_between(t0, std::chrono::steady_clock::now()));
    }
    bool test(MpiWork& w) {
        int flag = 0;
        int rc = api_.MPI_Test(&w.req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) fail_code(w, rc);
        return flag != 0;
    }

private:
    // MPI_Isend / MPI_Irecv as bytes, tag 0 on this communicator (MPI keeps the order of messages between
    // two ranks on one communicator and tag, which is the pairing the convention promises)
    CommHandle point_to_point(const char* op, Tensor& buffer, int peer, bool sending) {
        check_collective_buffer(op, buffer, device(), true);
        if (peer < 0 || peer >= size_ || peer == rank_)
            throw Error("internal: " + std::string(op) + " with rank " + std::to_string(peer) + " from rank " +
                        std::to_string(rank_) + " of " + std::to_string(size_));
        live();
        count(buffer);
        auto w = work(op, buffer);
        w->what += sending ? " to rank " + std::to_string(peer) : " from rank " + std::to_string(peer);
        const int n = int_count(static_cast<std::int64_t>(buffer.nbytes()));
        int rc = sending ? api_.MPI_Isend(buffer.raw(), n, api_.t_byte, peer, 0, comm_, &w->req)
                         : api_.MPI_Irecv(buffer.raw(), n, api_.t_byte, peer, 0, comm_, &w->req);
        started(rc, *w);
        return CommHandle(std::move(w));
    }
    std::unique_ptr<MpiWork> work(const char* call, const Tensor& t) {
        auto w = std::make_unique<MpiWork>();
        w->comm = this;
        w->what = std::string(call) + " of " + format_bytes(t.nbytes()) + " (" + dtype_name(t.dtype()) + ")";
        return w;
    }
    void started(int rc, MpiWork& w) {
        if (rc != MPI_SUCCESS) fail_code(w, rc);
    }
    [[noreturn]] void fail_code(MpiWork& w, int code) {
        fail(w, HR_MSG("dist.mpi_failed", "rank %1: %2 failed: %3"), {std::to_string(rank_), w.what, mpi_error(api_, code)});
    }
    [[noreturn]] void fail(MpiWork&, MessageText text, std::vector<std::string> args) {
        broken_ = true;
        rt_.mark_broken();
        throw Error(text, std::move(args));
    }
    void live() {
        if (broken_)
            throw Error(HR_MSG("dist.broken", "rank %1: communication with the other ranks already failed (see the "
                                              "first error); the run cannot continue"),
                        {std::to_string(rank_)});
    }
    static int int_count(std::int64_t n) {
        if (n > INT_MAX) throw Error("internal: an MPI collective of more than 2^31 elements; split it");
        return static_cast<int>(n);
    }
    MPI_Datatype type(DType dt) const { return dt == DType::f32 ? api_.t_float : api_.t_uint16; }
    MPI_Op mpi_op(DType dt, ReduceOp op) const {
        const bool mx = op == ReduceOp::max;
        if (dt == DType::f32) return mx ? api_.op_max : api_.op_sum;
        if (dt == DType::bf16) return mx ? api_.op_bf16_max : api_.op_bf16_sum;
        return mx ? api_.op_f16_max : api_.op_f16_sum;
    }
    void divide(Tensor& t) const {
        const float inv = 1.0f / static_cast<float>(size_);
        const std::int64_t n = t.numel();
        if (t.dtype() == DType::f32) {
            float* p = t.data<float>();
            for (std::int64_t i = 0; i < n; ++i) p[i] *= inv;
        } else {
            auto* p = t.data<std::uint16_t>();
            const bool bf = t.dtype() == DType::bf16;
            for (std::int64_t i = 0; i < n; ++i)
                p[i] = bf ? f32_to_bf16(bf16_to_f32(p[i]) * inv) : f32_to_f16(f16_to_f32(p[i]) * inv);
        }
    }

    MpiRuntime& rt_;
    const MpiRuntime::Api& api_;
    MPI_Comm comm_ = nullptr;
    int rank_ = 0, size_ = 1;
    bool broken_ = false;
};

void MpiWork::wait() {
    if (!finished) {
        comm->wait(*this);
        finished = true;
        if (finish) finish();
    }
}

bool MpiWork::test() {
    if (finished) return true;
    if (!comm->test(*this)) return false;
    finished = true;
    if (finish) finish();
    return true;
}

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(double timeout_seconds) {
    return std::make_unique<MpiCommunicator>(MpiRuntime::get(), timeout_seconds);
}

#endif  // HEADROOM_WITH_MPI

}  // namespace hr
