#pragma once
// Communicator: collectives over flat buffers between the ranks of one run (docs/design.md decision 8).
// Ranks are processes; the engines are real ones: MPI (Open MPI) for CPU ranks and for launching and
// bootstrapping, NCCL for GPU ranks. Nothing else carries training data between ranks.
//
// Conventions every call obeys
// - Collective: every rank makes the same calls in the same order, with the same dtype and element
//   counts (addresses may differ). A rank that skips one leaves the others waiting until the timeout.
// - Buffers are contiguous Tensors on the communicator's device(): host memory for MPI, the rank's GPU
//   for NCCL. Dtypes f32, bf16 and f16; broadcast moves any dtype (as bytes).
// - Counts and chunks: reduce_scatter(in, out) needs in.numel() == world_size() * out.numel(); rank r
//   receives the reduction of chunk r. all_gather(in, out) needs out.numel() == world_size() * in.numel();
//   chunk r of out is rank r's in. Callers pad (strategy/sharding.h), the communicator never does.
// - In place: all_reduce and broadcast always work in place. reduce_scatter may be given out == chunk
//   `rank()` of in, all_gather may be given in == chunk `rank()` of out (NCCL's in-place forms; the MPI
//   implementation maps them to MPI_IN_PLACE). Any other overlap of in and out is an error.
// - Reductions: sum, avg (sum / world_size) and max, elementwise. f32 is reduced in f32. bf16 and f16 are
//   reduced as the engines do: each pairwise combine adds in f32 and rounds once to the dtype (NCCL does
//   this per ring hop; for MPI a user-defined operation does it), so a sum over N ranks is rounded N-1
//   times. Every rank gets the same bits (both engines reduce each element along one path and copy the
//   result; tests/dist/test_collectives.cpp checks it), so replicated weights stay replicas. avg divides
//   the final sum (in f32, rounded once more for bf16/f16).
// - Asynchrony: every collective returns a CommHandle at once. The collective sees all work issued
//   before it on the backend (NCCL: an event on the compute stream orders it; MPI: the CPU backend is
//   synchronous). Until wait() returns, the caller must not write `in` nor read or write `out`. wait()
//   orders later work after the collective: MPI blocks until the data is there (polling, so the
//   timeout applies); NCCL makes the compute stream wait for the communication stream and returns
//   without blocking the host. Handles may be waited in any order; a handle destroyed unwaited is waited
//   by its destructor. MPI advances non-blocking collectives only inside MPI calls: progress() is one
//   (cheap), and the sharding hooks call it at every unit boundary so communication overlaps compute.
// - Errors: an engine error, a peer that died, or a wait longer than timeout_seconds() throws hr::Error
//   naming this rank, the call and the cause; the communicator is then broken (every later call
//   throws). abort_all(reason) ends communication for every rank at once (MPI_Abort ends the whole job;
//   NCCL's communicator is aborted with ncclCommAbort and then MPI_Abort, when MPI bootstrapped it).
//   A rank that catches a communication error writes what it must, then calls abort_all.
// - Threads: one thread at a time uses a communicator (MPI is initialised MPI_THREAD_SERIALIZED).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "tensor/tensor.h"

namespace hr {

enum class ReduceOp { sum, avg, max };
const char* reduce_op_name(ReduceOp op);

// Where this process stands in the run: from the launcher's environment (Open MPI's mpirun sets
// OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE, _LOCAL_SIZE), or one process when there is no launcher.
struct RankEnvironment {
    int rank = 0;
    int local_rank = 0;        // index among the ranks on this machine (picks cuda:LOCAL_RANK)
    int world_size = 1;
    int local_size = 1;
    bool launched = false;     // started by mpirun (the variables above came from it)
    std::string describe() const;  // "rank 1 of 3 (local 1 of 3, mpirun)" / "1 process (no launcher)"
};
RankEnvironment rank_environment();

// What a communicator did, for the benchmark and run records (per communicator, since creation).
struct CommStats {
    std::int64_t collectives = 0;  // collective calls issued
    double bytes = 0;              // payload bytes: each call's buffer (in for reduce_scatter, out for all_gather)
    double wait_seconds = 0;       // host time blocked in wait(), barrier() and scalar reductions
};

// A collective in flight. Movable, not copyable.
class CommHandle {
public:
    struct Impl {
        virtual ~Impl() = default;
        virtual void wait() = 0;   // see the conventions above; throws hr::Error
        virtual bool test() = 0;   // true when finished (then wait() does not block)
    };
    CommHandle() = default;
    explicit CommHandle(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
    CommHandle(CommHandle&&) noexcept = default;
    CommHandle& operator=(CommHandle&& other) noexcept;
    ~CommHandle();

    void wait();               // idempotent; a default-made handle is complete
    bool test();
    bool pending() const { return impl_ != nullptr; }

private:
    std::unique_ptr<Impl> impl_;
};

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int world_size() const = 0;
    virtual Device device() const = 0;
    virtual std::string name() const = 0;  // "mpi (Open MPI v4.1.4), rank 0 of 2"

    virtual CommHandle all_reduce(Tensor& buffer, ReduceOp op) = 0;
    virtual CommHandle reduce_scatter(const Tensor& in, Tensor& out, ReduceOp op) = 0;
    virtual CommHandle all_gather(const Tensor& in, Tensor& out) = 0;
    virtual CommHandle broadcast(Tensor& buffer, int root) = 0;
    virtual void barrier() = 0;
    // Point-to-point (pipeline stages, strategy/pipeline.h): `buffer` to rank `peer`, or from it. Not
    // collective: only the two ranks take part, and each send pairs with the peer's receive of the same
    // dtype and element count, in the order both issued them. Asynchronous like a collective (wait()
    // with the timeout; the buffer is the engine's until then). Counted in stats() as collectives are.
    virtual CommHandle send(const Tensor& buffer, int peer);
    virtual CommHandle recv(Tensor& buffer, int peer);
    // Several sends and receives as one group: they progress together and the handle finishes when all
    // have (NCCL: one ncclGroupStart/ncclGroupEnd; MPI: an MPI_Isend/MPI_Irecv each, waited together).
    // Pairing as for send/recv, in the order of the list. A pipeline issues a step's send with the next
    // step's receive this way (Megatron-LM's send_forward_recv_backward): on NCCL a send finishes only once
    // its receive is posted, and one stream runs a rank's calls in turn, so the same transfers issued one
    // by one in the 1F1B order would wait for each other (strategy/pipeline.h, pipeline_exchanges).
    struct Transfer {
        bool send = true;
        Tensor buffer;  // a view (the engine's until the handle is waited)
        int peer = 0;
    };
    virtual CommHandle exchange(const std::vector<Transfer>& transfers);
    // The ranks that give the same `color`, ordered by `key`, as a communicator of their own (MPI_Comm_split:
    // pipeline stages x data-parallel replicas). Collective over this communicator, at set-up. The new one
    // keeps this one's timeout. Throws for an engine that cannot (NCCL here).
    virtual std::unique_ptr<Communicator> split(int color, int key);
    // One value from every rank, reduced; blocking. For decisions every rank must take alike (skip a
    // step, stop early) and for metrics.
    virtual double all_reduce_value(double value, ReduceOp op) = 0;

    virtual void progress() {}
    // Throws when the engine reported an asynchronous error (NCCL) or the communicator is broken.
    virtual void check() {}
    // Blocks the host until every collective issued so far has finished, polling for errors, with the
    // timeout (NCCL; on MPI nothing is left once the handles are waited). Call it before the host waits
    // for the device in a way no timeout covers (reading the loss back), once per step.
    virtual void synchronize() {}
    // Ends communication for every rank now (see the conventions). Never throws, never returns for MPI.
    virtual void abort_all(const std::string& reason) noexcept = 0;

    // Device memory the engine itself holds, outside the ledger (issue 20 item 7): NCCL's buffers,
    // kernels and proxy state, measured as the device's free memory before the communicator was made
    // minus after its first collective. 0 for MPI (host memory: the process's resident figure holds it).
    virtual std::size_t device_overhead_bytes() const { return 0; }

    double timeout_seconds() const { return timeout_seconds_; }
    void set_timeout_seconds(double s) { timeout_seconds_ = s; }
    const CommStats& stats() const { return stats_; }

protected:
    void count(const Tensor& payload) {
        for (CommStats* s : {&stats_, parent_stats_}) {
            if (!s) continue;
            ++s->collectives;
            s->bytes += static_cast<double>(payload.nbytes());
        }
    }
    void add_wait(double seconds) {
        stats_.wait_seconds += seconds;
        if (parent_stats_) parent_stats_->wait_seconds += seconds;
    }
    CommStats stats_;
    CommStats* parent_stats_ = nullptr;  // a group made by split(): its traffic counts in its parent's too
    double timeout_seconds_ = 300.0;  // --rank-timeout's default
};

// Every rank's `ok`, and-ed: every rank gets the same answer (DeepSpeed's allclose_on_all_ranks idea: ranks
// agree on a verdict, then fail together instead of one failing and the others hanging).
bool all_ranks_agree(Communicator& comm, bool ok);

// A world of one rank on `backend`'s device: all_reduce and broadcast leave the data as it is,
// reduce_scatter and all_gather copy. It carries nothing between processes (there is no other); the
// sharding code runs unchanged at world size 1 with it, without an MPI runtime.
std::unique_ptr<Communicator> make_single_rank_communicator(Backend& backend);

// CPU ranks over MPI. Needs the process to have been started by mpirun (RankEnvironment::launched):
// MPI is initialised then (once per process, finalised at exit). Throws InputError when Open MPI is
// not installed or the process was not launched by mpirun; says which.
std::unique_ptr<Communicator> make_mpi_communicator(double timeout_seconds = 300.0);

// GPU ranks over NCCL, on `backend` (a CUDA backend: its compute stream orders the collectives). With
// mpirun, rank 0 makes the ncclUniqueId and MPI broadcasts it; a single process (world size 1, no
// launcher) makes its own and needs no MPI. The communicator is created non-blocking, its asynchronous
// errors are polled, and it is aborted on failure. Throws InputError when this build has no CUDA or the
// machine has no NCCL (libnccl.so.2).
std::unique_ptr<Communicator> make_nccl_communicator(Backend& backend, double timeout_seconds = 300.0);

// True when this build can make each kind (MPI headers were found at build time / CUDA + NCCL headers).
bool mpi_built();
bool nccl_built();

// What loading NCCL says, without a GPU: the library the run would use, its version, and every function
// Headroom asks it for by name resolved (the seam test in tests/unit/test_seams.cpp). `library_known` is
// true when the build found libnccl (the loader then must find it). Never throws.
struct NcclLibraryProbe {
    bool built = false;          // nccl_built()
    bool library_known = false;  // the build found a libnccl to fall back on
    bool loaded = false;         // every required function resolved and the version is 2.14+
    std::string version;         // "2.28.3" when loaded
    bool has_split = false;      // ncclCommSplit (2.18+)
    std::string error;           // why not, for a person
};
NcclLibraryProbe nccl_library_probe();

// The communicator a run of several ranks uses (the trainer asks for it once per run): NCCL on a GPU
// backend, MPI on the CPU. A test may put another in its place (a communicator whose collectives never
// finish, as a GPU's would when a peer stalls); an empty function restores the engines.
using RunCommunicatorFactory = std::function<std::shared_ptr<Communicator>(Backend& backend, double timeout_seconds)>;
void set_run_communicator_factory(RunCommunicatorFactory factory);
std::shared_ptr<Communicator> make_run_communicator(Backend& backend, double timeout_seconds);

}  // namespace hr
