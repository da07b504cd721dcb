#pragma once
// Sharding over ranks (docs/design.md decision 8, docs/distributed.md): data parallel and ZeRO stages 1-3
// as offset arithmetic over the model's flat buffers (llm.c's zero.cuh), per unit (the model's
// checkpoint blocks, FSDP style). TrainingState owns one ShardEngine; the trainer never sees it.
//
// Layout. Unit u's slice of the flat buffers, [offset_u, offset_u + numel_u), is padded (zero1-3:
// ModelOptions::unit_pad_multiple = N) to a multiple of N x kParamAlignBytes, so it splits into N equal
// shards of numel_u / N elements that each start on a 256-byte boundary: every unit's reduce-scatter
// and all-gather is balanced. Rank r owns [offset_u + r * numel_u / N, + numel_u / N) of every unit. Its
// shard space is the concatenation of its shards of all units (S = sum of numel_u / N); the shard-sized
// buffers (optimizer state, master weights, sharded gradients and parameters) are laid out in it, unit
// u's piece at shard_offset_u. Padding is zero and stays zero (its gradient is zero, so neither SGD nor
// Adam moves it); it is counted (padding_elements()).
//
// What each rank holds (P: flat elements, S: shard elements, U: the largest unit's numel; dtype = the
// compute dtype; master weights and optimizer state are f32):
//   stage   parameters  gradients  communication                      master + optimizer state
//   none    P           P          -                                   P
//   dp      P           P          -                                   P
//   zero1   P           P          -                                   S
//   zero2   P           S          2 U (gradient buckets)              S
//   zero3   S           S          2 U buckets + 2 U gather buffers    S
// A head tied to the token embedding (every GPT preset; Model::tied_unit, unit T = 0): unit T has a
// bucket (zero2/3) and a gather buffer (zero3) of its own, U_T elements each, and U in the table is the
// largest *other* unit (U'): zero2 2 U' + U_T, zero3 2 U' + U_T buckets + 2 U' + U_T gather buffers.
// Offload moves the master and optimizer state (S or P) to the host, with a host copy of the gradient
// pieces (and of the parameters in bf16/f16), category communication.
// Parameter offload (zero3 only, ZeRO-Infinity style; it implies optimizer offload): the parameter shard
// and the gradient shard live on the host too, so the device keeps only the two buckets and the gather
// buffers (and the activations). Before a unit's forward or backward its shard is copied from the host
// into its slice of the gather buffer and all-gathered there (in place), on the same schedule as zero3's,
// so the next unit is brought over while this one computes; after each reduce-scatter the reduced slice
// is copied to the host (a staging buffer of the largest unit's shard, category communication) and
// added into the host gradient shard. The update runs on the host and writes the parameter shard there.
//
// When the collectives run (unit hooks, nn/model.h; the last micro-batch is the strategy's accumulate-th
// backward of the step):
//   dp     after each unit's backward in the last micro-batch: all-reduce (sum) of its gradients, in place,
//          asynchronous, so the units still to come overlap it; waited in finish_gradients().
//   zero1  the same with reduce-scatter into this rank's chunk (in place); after the update, each unit's
//          parameters are all-gathered in place.
//   zero2  every micro-batch: unit u's gradients go to bucket u % 2; after its backward they are
//          reduce-scattered (in place) and, once that is done (before bucket u % 2 is needed again, by unit
//          u - 2, or at the end), added into the gradient shard. Parameters as zero1.
//   zero3  zero2's gradients; parameters live in the shard: before each unit's forward and backward it
//          is all-gathered into gather buffer u % 2, the next unit (u + 1 forward, u - 1 backward)
//          prefetched into the other one; a buffer is reused ("freed") once its unit is done. The two
//          units the forward ends with are still there for the backward; after the update units 0 and 1
//          are prefetched for the next step.
//   tied   (a head tied to the token embedding; FSDP keeps such a weight in its root unit) unit T uses
//          buffer 2 (ShardLayout::buffer_of), which no other unit touches. zero3: T is gathered before
//          its forward and stays gathered until the update (so the head, in unit H >= T, reads the weight
//          from there in forward and backward, and T's backward finds it: T is gathered once a step).
//          zero2/3: T's bucket is cleared before H's backward (the head adds dW into it first), not at
//          T's own; T's backward adds the embedding's share; after it T is reduce-scattered and added into
//          the gradient shard like any unit. Every other unit behaves as without a tie.
//   all    batch-norm running statistics (every model buffer) are broadcast from rank 0 after the update
//          (DDP's broadcast_buffers): they are rank 0's.
// Gradients are sums: each rank scales its loss gradient by its samples / the global batch
// (TrainingState::loss_grad_scale), so uneven per-rank batches give the one-big-batch gradient.
#include <cstdint>
#include <memory>
#include <vector>

#include "dist/communicator.h"
#include "nn/model.h"
#include "strategy/strategy.h"

namespace hr {

// One unit's place in the flat buffers and in this rank's shard space (elements).
struct UnitShard {
    int unit = 0;
    std::int64_t offset = 0;        // in the flat buffers
    std::int64_t numel = 0;         // padded slice length (a multiple of world_size x alignment when sharded)
    std::int64_t values = 0;        // trainable values in it
    std::int64_t shard_numel = 0;   // numel / world_size (sharded stages), else numel
    std::int64_t shard_offset = 0;  // this unit's piece in the shard space
    std::int64_t own_offset = 0;    // flat offset of this rank's shard: offset + rank * shard_numel
};

// The arithmetic alone (no memory): what the planner, the docs' formulas and the tests reason with.
struct ShardLayout {
    ShardStage stage = ShardStage::none;
    int world_size = 1, rank = 0;
    std::int64_t flat_numel = 0;     // P
    std::int64_t shard_numel = 0;    // S (P when not sharded)
    std::int64_t max_unit_numel = 0; // U
    std::int64_t values = 0;         // trainable values (no padding)
    std::vector<UnitShard> units;
    // A head tied to the token embedding (Model::tied_unit / tied_head_unit; -1: none). The tied unit T
    // gets a bucket (zero2/3) and a gather buffer (zero3) of its own, T's numel each, so it stays whole
    // from the head's use to its own backward; the two rotating ones are sized for the other units.
    int tied_unit = -1, tied_head_unit = -1;
    std::int64_t rotating_numel = 0;  // the largest unit that uses the rotating pair (U' = U without a tie)
    // Which bucket / gather buffer unit u uses: 2 for the tied unit, else u % 2.
    int buffer_of(int u) const { return u == tied_unit ? 2 : u % 2; }
    // Elements of the padded flat layout (P = S x world_size when sharded) that hold no trainable value:
    // the alignment gaps between tensors and each unit's tail. Zero, and counted in every figure.
    std::int64_t padding_elements() const { return flat_numel - values; }
};
ShardLayout make_shard_layout(const std::vector<ParamUnit>& units, std::int64_t flat_numel, ShardStage stage,
                              int world_size, int rank, int tied_unit = -1, int tied_head_unit = -1);

// zero3's gather schedule: which unit each gather buffer holds (unit u uses buffer layout.buffer_of(u):
// u % 2, or 2 for a tied unit), and which units to start gathering at each event. The engine issues
// exactly these gathers; the planner replays the schedule to count a step's traffic.
class GatherSchedule {
public:
    GatherSchedule() = default;
    explicit GatherSchedule(const ShardLayout& layout);
    // Units whose gathers start now, in order: unit u itself unless its buffer holds it already, then
    // the next unit the pass will need (u + 1 forward, u - 1 backward), prefetched into the other buffer;
    // at a tied head's unit, the tied unit too (held since its forward: normally nothing to gather).
    std::vector<int> before_forward(int u) { return need(u, u + 1); }
    std::vector<int> before_backward(int u) { return need(u, u - 1); }
    // After the optimizer step every gathered copy is stale: units 0 and 1 are gathered for the next step.
    std::vector<int> after_update();
    // The buffers hold these units (after initialisation: the last units initialised in them).
    void set_holds(int buffer, int unit) { holds_[buffer] = unit; }
    int holds(int buffer) const { return holds_[buffer]; }

private:
    std::vector<int> need(int now, int next);
    int buffer_of(int u) const { return u == tied_unit_ ? 2 : u % 2; }
    std::vector<std::int64_t> numel_;
    int tied_unit_ = -1, tied_head_unit_ = -1;
    int holds_[3] = {-1, -1, -1};
};

// Payload bytes a rank hands its communicator in one optimizer step, in steady state (what CommStats
// counts: reduce-scatter's input, all-gather's output, all-reduce's buffer), batch-norm broadcasts
// excluded. `accumulate` micro-batches, `dtype_bytes` per element.
double step_payload_bytes(const ShardLayout& layout, std::int64_t accumulate, std::size_t dtype_bytes);
// Parameter offload: bytes between the host and the device in one steady-state step, both ways (this
// rank's shard of every gather the schedule issues, up; its reduced gradient slice of each unit after
// each micro-batch, down). What the engine counts (offload_to_device_bytes + offload_to_host_bytes).
double offload_step_bytes(const ShardLayout& layout, std::int64_t accumulate, std::size_t dtype_bytes);

// Checkpoints (train/resume.h) keep every flat buffer in one process's layout (units padded to the
// alignment only, unit_pad_multiple 1), so a run written on N ranks resumes on M. Unit u's content (its
// tensors and the alignment gaps between them) is the same in every layout; only the unit's tail padding
// and so its place differ. FlatRemap says where each unit's content lies in both.
struct FlatRemap {
    struct Run {
        std::int64_t run_offset = 0;        // in this run's flat layout
        std::int64_t canonical_offset = 0;  // in one process's
        std::int64_t numel = 0;             // the unit's content (padding excluded)
    };
    std::vector<Run> runs;                    // units with parameters, in order
    std::int64_t canonical_numel = 0;         // P of one process
    std::int64_t run_numel = 0;               // P of this run
    std::vector<std::int64_t> tensor_offsets; // this run's flat offset of each trainable, untied state_dict entry
};
// From the model's units and its state_dict (the trainable tensors lie in state_dict order in the flat
// buffers, each on an alignment boundary); checks itself against the units (internal Error otherwise).
FlatRemap make_flat_remap(const Model& model);
// A flat buffer's bytes (`es` per element) from this run's layout into one process's, and back (the
// padding of the result is zero).
std::vector<std::uint8_t> flat_to_canonical(const FlatRemap& m, const std::uint8_t* run_flat, std::size_t es);
std::vector<std::uint8_t> canonical_to_flat(const FlatRemap& m, const std::uint8_t* canonical, std::size_t es);

class ShardEngine : public UnitHooks {
public:
    ShardEngine() = default;
    // Allocates this rank's shard buffers, buckets and gather buffers (categories as in the table), binds
    // the model's unit views to them and, for zero3, fills the parameter shard with this rank's part of
    // the model's initial weights. `comm` may be null in a dry run (the planner), or at world size 1 (a
    // single-rank communicator is made).
    // Parameter offload needs the host backend and its allocator (`host`, `host_alloc`; unused otherwise).
    void attach(Model& model, const ResolvedStrategy& strategy, Communicator* comm, Backend& device,
                Allocator& alloc, bool dry_run, Backend* host = nullptr, Allocator* host_alloc = nullptr);

    const ShardLayout& layout() const { return layout_; }
    Communicator* communicator() const { return comm_; }

    // Elements of the optimizer's state: S when sharded, else P.
    std::int64_t state_numel() const { return layout_.shard_numel; }
    // This rank's pieces, unit by unit (units without parameters skipped); one piece (the whole buffer)
    // when not sharded: the gradients the update uses (reduced, after finish_gradients), the parameters it
    // writes, and the matching pieces of a buffer laid out in the shard space (master, host copies).
    std::vector<Tensor> grad_pieces() const;
    std::vector<Tensor> param_pieces() const;
    std::vector<Tensor> pieces_of(const Tensor& state_buffer) const;
    // Where each piece starts in the flat parameter layout (the optimizer's decay segments are in it).
    std::vector<std::int64_t> piece_flat_offsets() const;
    // Where grad_pieces() and param_pieces() live: the host with parameter offload, else the device.
    Backend& pieces_holder() const { return offload_ ? *host_ : *device_; }
    // Parameter offload: bytes copied between the host and the device since the run began, each way.
    double offload_to_device_bytes() const { return to_device_bytes_; }
    double offload_to_host_bytes() const { return to_host_bytes_; }

    void begin_step();            // zero the gradients the backward accumulates into; count micro-batches anew
    void finish_gradients();      // every gradient reduction of the step issued and waited
    void publish_parameters();    // after the update: all-gather (zero1/2) or re-gather on demand (zero3)
    void broadcast_buffers();     // rank 0's batch-norm statistics to every rank
    // The full weights in state_dict order (names, PyTorch layouts). Collective for zero3 (gathers every
    // unit into a flat buffer from `alloc`, category communication); the model's own tensors otherwise.
    std::vector<NamedTensor> consolidated_state_dict(Allocator& alloc);

    // --- checkpoints (train/resume.h), between steps ----------------------------------------------
    // `buffer` (laid out in this rank's shard space, or the whole flat buffer when not sharded), held in
    // `holder`'s memory (the device's, or the host's when offloaded), gathered over the ranks into `flat`
    // (this run's flat layout, P elements of buffer's dtype, zero-filled by the caller; may be null on a
    // rank that keeps nothing). Collective when sharded over several ranks. The data passes through the
    // gradient memory, idle between steps, in pieces, so nothing is allocated (the ledger is unchanged).
    void gather_state(const Tensor& buffer, Backend& holder, std::uint8_t* flat);
    // The other way, without communication: this rank's part of a whole flat buffer every rank has.
    void scatter_state(const std::uint8_t* flat, Tensor& buffer, Backend& holder) const;
    // zero3: the parameter shards (gather_state on them), and loading them from a whole flat buffer (the
    // gathered copies are forgotten: the next forward gathers afresh).
    void gather_parameters(std::uint8_t* flat);
    void load_parameters(const std::uint8_t* flat);
    // Bytes from rank `root` to every rank (a size every rank knows), through the same idle memory.
    void broadcast_bytes(std::uint8_t* data, std::size_t bytes, int root = 0);

    void before_forward(int unit) override;
    void after_forward(int unit) override;
    void before_backward(int unit) override;
    void after_backward(int unit) override;

    // --- the step's memory timeline (memory/step_timeline.h) -----------------------------------------
    // zero3: each gather is a phase (block: the unit) in which the unit's bytes become live in its gather
    // buffer (category communication) and those of the unit it overwrites end; after the update every
    // gathered copy ends and units 0 and 1 are gathered for the next step. The recorder (measured) sees the
    // schedule the engine runs; the walk (planner, dry run) replays it from the steady state a step starts
    // in (begin_timeline_walk: after an update), the same places in the same order.
    void set_step_recorder(StepRecorder* r) { recorder_ = r; }
    void begin_timeline_walk();
    void walk_before_forward(StepRecorder& r, int unit) override;
    void walk_before_backward(StepRecorder& r, int unit) override;
    void walk_after_update(StepRecorder& r);
    // Bytes of the gather buffers holding no unit now (or more than their unit): not live at the step's
    // start in the timeline's terms (TrainingState::timeline_base takes them out of the base).
    std::size_t timeline_idle_bytes() const;

private:
    const UnitShard& unit(int u) const { return layout_.units[static_cast<std::size_t>(u)]; }
    void launch_unit_reduction(int u);
    void finish_bucket(int b);
    void start_gathers(const std::vector<int>& units);
    void wait_gathered(int u);
    Tensor scratch(DType dt) const;  // idle gradient memory seen as dt (checkpoints)
    Tensor idle_memory() const;      // the largest buffer idle between steps (undefined: none)

    Model* model_ = nullptr;
    Backend* device_ = nullptr;
    Backend* host_ = nullptr;     // parameter offload: where the shards live
    bool offload_ = false;        // parameter offload
    Tensor host_stage_;           // parameter offload: a reduced gradient slice on its way to the host
    double to_device_bytes_ = 0, to_host_bytes_ = 0;
    Allocator* alloc_ = nullptr;
    // A rank of several with under 4 KiB idle between steps (a pipeline stage of few parameters): 1 MiB of
    // its own for moving checkpoints through, allocated in attach() so that the planner counts it
    Tensor small_scratch_;
    Communicator* comm_ = nullptr;
    std::unique_ptr<Communicator> own_comm_;  // world size 1 without a communicator given
    ShardLayout layout_;
    ShardStage stage_ = ShardStage::none;
    std::int64_t accumulate_ = 1;
    bool dry_run_ = false;
    Tensor grad_shard_, param_shard_;
    Tensor bucket_[3], gather_[3];  // [0], [1]: the rotating pair; [2]: the tied unit's own (layout.buffer_of)
    struct Pending {
        CommHandle handle;
        int unit = -1;
    };
    Pending bucket_pending_[3], gather_pending_[3];
    GatherSchedule schedule_;
    StepRecorder* recorder_ = nullptr;
    std::size_t unit_bytes(int u) const;
    // gathers `units` as phases, the buffers holding `held` before them (updated)
    void record_gathers(StepRecorder& r, int held[3], const std::vector<int>& units) const;
    void record_after_update(StepRecorder& r, const std::vector<int>& units) const;
    std::vector<CommHandle> unit_reduction_;  // dp, zero1: one per unit, issued in the last micro-batch
    std::vector<bool> unit_reduced_;
    std::int64_t backwards_done_ = 0;         // backward passes finished in this step
};

}  // namespace hr
