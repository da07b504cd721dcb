#include "dist/communicator.h"

#include <cstdlib>
#include <string>

#include "base/error.h"
#include "dist/comm_common.h"

namespace hr {

const char* reduce_op_name(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum: return "sum";
        case ReduceOp::avg: return "avg";
        case ReduceOp::max: return "max";
    }
    return "?";
}

namespace {
int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || x < 0 || x > 1 << 24) return fallback;
    return static_cast<int>(x);
}
}  // namespace

RankEnvironment rank_environment() {
    RankEnvironment e;
    const int size = env_int("OMPI_COMM_WORLD_SIZE", -1);
    const int rank = env_int("OMPI_COMM_WORLD_RANK", -1);
    if (size < 1 || rank < 0 || rank >= size) return e;
    e.launched = true;
    e.world_size = size;
    e.rank = rank;
    e.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", rank);
    e.local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", size);
    return e;
}

std::string RankEnvironment::describe() const {
    if (!launched) return "1 process (no launcher)";
    return "rank " + std::to_string(rank) + " of " + std::to_string(world_size) + " (local " +
           std::to_string(local_rank) + " of " + std::to_string(local_size) + ", mpirun)";
}

CommHandle& CommHandle::operator=(CommHandle&& other) noexcept {
    if (this != &other) {
        if (impl_) {
            try {
                impl_->wait();
            } catch (...) {
            }
        }
        impl_ = std::move(other.impl_);
    }
    return *this;
}

CommHandle::~CommHandle() {
    if (!impl_) return;
    try {
        impl_->wait();
    } catch (...) {
        // the communicator is broken now; its next call throws the error for the caller to see
    }
}

void CommHandle::wait() {
    if (!impl_) return;
    std::unique_ptr<Impl> impl = std::move(impl_);
    impl->wait();
}

bool CommHandle::test() {
    if (!impl_) return true;
    return impl_->test();
}

bool all_ranks_agree(Communicator& comm, bool ok) {
    // the number of ranks that disagree, summed: exact in a double for any world size
    return comm.all_reduce_value(ok ? 0.0 : 1.0, ReduceOp::sum) == 0.0;
}

// ---- single rank ---------------------------------------------------------------------------------------

namespace {

class SingleRankCommunicator : public Communicator {
public:
    explicit SingleRankCommunicator(Backend& b) : backend_(b) {}
    int rank() const override { return 0; }
    int world_size() const override { return 1; }
    Device device() const override { return backend_.device(); }
    std::string name() const override { return "single rank (" + backend_.device().str() + ")"; }

    CommHandle all_reduce(Tensor& buffer, ReduceOp op) override {
        check_collective_buffer("all_reduce", buffer, device(), false);
        count(buffer);
        return {};
    }
    CommHandle reduce_scatter(const Tensor& in, Tensor& out, ReduceOp op) override {
        check_chunked("reduce_scatter", in, out, 1, 0, device(), /*out_is_chunk=*/true);
        count(in);
        if (!same_memory(in, out)) backend_.copy(in, out);
        return {};
    }
    CommHandle all_gather(const Tensor& in, Tensor& out) override {
        check_chunked("all_gather", out, in, 1, 0, device(), /*out_is_chunk=*/false);
        count(out);
        if (!same_memory(in, out)) backend_.copy(in, out);
        return {};
    }
    CommHandle broadcast(Tensor& buffer, int root) override {
        check_collective_buffer("broadcast", buffer, device(), true);
        if (root != 0) throw Error("internal: broadcast from rank " + std::to_string(root) + " in a world of 1");
        count(buffer);
        return {};
    }
    void barrier() override {}
    std::unique_ptr<Communicator> split(int, int) override { return std::make_unique<SingleRankCommunicator>(backend_); }
    double all_reduce_value(double value, ReduceOp) override { return value; }
    void abort_all(const std::string&) noexcept override {}

private:
    Backend& backend_;
};

}  // namespace

std::unique_ptr<Communicator> make_single_rank_communicator(Backend& backend) {
    return std::make_unique<SingleRankCommunicator>(backend);
}

// ---- shared checks (comm_common.h) ---------------------------------------------------------------------

bool same_memory(const Tensor& a, const Tensor& b) {
    return a.defined() && b.defined() && a.raw() == b.raw() && a.nbytes() == b.nbytes();
}

static bool overlaps(const Tensor& a, const Tensor& b) {
    const char* a0 = static_cast<const char*>(a.raw());
    const char* b0 = static_cast<const char*>(b.raw());
    return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

void check_collective_buffer(const char* call, const Tensor& t, Device device, bool any_dtype) {
    if (!t.defined()) throw Error(std::string("internal: ") + call + " of an undefined tensor");
    if (t.device() != device)
        throw Error(std::string("internal: ") + call + " of a tensor on " + t.device().str() +
                    " through a communicator on " + device.str());
    if (!any_dtype && t.dtype() != DType::f32 && t.dtype() != DType::bf16 && t.dtype() != DType::f16)
        throw Error(std::string("internal: ") + call + " of " + dtype_name(t.dtype()) +
                    " (the communicator reduces f32, bf16 and f16)");
}

bool check_chunked(const char* call, const Tensor& whole, const Tensor& chunk, int world, int rank, Device device,
                   bool out_is_chunk) {
    check_collective_buffer(call, whole, device, false);
    check_collective_buffer(call, chunk, device, false);
    if (whole.dtype() != chunk.dtype())
        throw Error(std::string("internal: ") + call + " between " + dtype_name(whole.dtype()) + " and " +
                    dtype_name(chunk.dtype()));
    if (whole.numel() != chunk.numel() * world)
        throw Error(std::string("internal: ") + call + " of " + std::to_string(whole.numel()) + " elements into " +
                    std::to_string(world) + " chunks of " + std::to_string(chunk.numel()) +
                    " (the caller pads to a multiple of the world size)");
    if (!overlaps(whole, chunk)) return false;
    const bool in_place = whole.storage() == chunk.storage() &&
                          chunk.byte_offset() == whole.byte_offset() + static_cast<std::size_t>(rank) * chunk.nbytes();
    if (!in_place)
        throw Error(std::string("internal: ") + call + (out_is_chunk ? ": out" : ": in") +
                    " overlaps the other buffer but is not this rank's chunk of it");
    return true;
}

namespace {
RunCommunicatorFactory& run_factory() {
    static RunCommunicatorFactory f;
    return f;
}
}  // namespace

void set_run_communicator_factory(RunCommunicatorFactory factory) { run_factory() = std::move(factory); }

std::shared_ptr<Communicator> make_run_communicator(Backend& backend, double timeout_seconds) {
    if (const auto& f = run_factory()) return f(backend, timeout_seconds);
    // GPU ranks: NCCL on the backend's compute stream (rank 0's ncclUniqueId travels over MPI); CPU ranks: MPI
    if (!backend.device().is_cpu()) return make_nccl_communicator(backend, timeout_seconds);
    return make_mpi_communicator(timeout_seconds);
}

namespace {
// A group of transfers on an engine that issues each on its own (MPI): finished when every part has.
struct TransferGroup : CommHandle::Impl {
    std::vector<CommHandle> parts;
    void wait() override {
        for (CommHandle& h : parts) h.wait();
    }
    bool test() override {
        for (CommHandle& h : parts)
            if (!h.test()) return false;
        return true;
    }
};
}  // namespace

CommHandle Communicator::exchange(const std::vector<Transfer>& transfers) {
    auto group = std::make_unique<TransferGroup>();
    for (const Transfer& t : transfers) {
        Tensor b = t.buffer;
        group->parts.push_back(t.send ? send(b, t.peer) : recv(b, t.peer));
    }
    return CommHandle(std::move(group));
}

CommHandle Communicator::send(const Tensor&, int peer) {
    throw Error("internal: " + name() + " has no point-to-point send (to rank " + std::to_string(peer) + ")");
}
std::unique_ptr<Communicator> Communicator::split(int, int) {
    throw InputError(HR_MSG("dist.no_split", "%1 cannot form groups of ranks (pipeline stages with data-parallel "
                                             "replicas); use CPU ranks, or as many stages as ranks"),
                     {name()});
}
CommHandle Communicator::recv(Tensor&, int peer) {
    throw Error("internal: " + name() + " has no point-to-point receive (from rank " + std::to_string(peer) + ")");
}

}  // namespace hr
