#pragma once
// CheckpointMapper: where each tensor of the whole model lives on this rank, built once with the training
// state, and the one gather, restore and consolidation that walk it (TrainingState's checkpoints and
// consolidated_state_dict; train/resume.h).
//
// A checkpoint and the consolidated weights are the whole model's: its state_dict in one process's names,
// dtypes and shapes, and the master copy and optimizer moments as whole flat buffers in one process's flat
// layout (strategy/sharding.h FlatRemap), so a checkpoint written on N ranks resumes on M. The mapper says,
// for every state_dict entry of the whole model (a parameter, a LoRA adapter, a frozen or quantised base, a
// buffer), which rank holds it (every rank, one stage's first replica, or by rows over a split head's ranks),
// where it lies in this rank's model and flat buffers and where in one process's; and for the flat state,
// which stretches of this rank's flat buffer go to which stretch of one process's.
//
// One process and data-parallel ranks (ZeRO 0-3) have the trivial placement: every tensor whole on every
// rank, its flat stretches the model's units (FlatRemap's runs); the shards are the engines' to gather
// (ShardEngine::gather_state, zero3's gather_parameters). A layout across ranks (a split head, pipeline
// stages, with replicas and ZeRO-1 inside them) places each tensor on its owner or by rows; the walks are
// the same.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/model.h"
#include "strategy/pipeline.h"
#include "strategy/strategy.h"
#include "strategy/tp_head.h"

namespace hr {

class ShardEngine;

// One checkpoint tensor: names, dtypes and shapes of what a run's checkpoint holds, in order.
struct CheckpointTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;
    bool model = false;  // "model.<name>"
    bool tied = false;   // a tied head (the token embedding's weight again): optional on reading
};
// A checkpoint's non-model tensor (master copy, optimizer state): a whole flat buffer of one process.
struct CheckpointResumeTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;
};
// A checkpoint tensor with its bytes (rank 0's gather).
struct CheckpointHostTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;
    std::vector<std::uint8_t> data;
};
// Master copy and optimizer state: this rank's part (its shard under ZeRO), and whose memory holds it.
struct StateBuffer {
    std::string name;
    Tensor tensor;
    Backend* holder = nullptr;
};

// Which ranks hold a tensor or a stretch of the flat state.
struct Holding {
    int owner = -1;              // the rank holding it whole (-1: every rank, whole or by rows)
    bool rows = false;           // split by rows over a split head's ranks
    std::int64_t per_row = 1;    // elements per row (rows)
    std::int64_t whole_numel = 0;  // elements of the whole tensor (or stretch)
};

// One state_dict entry of the whole model, in its order.
struct TensorPlace {
    std::string name;
    DType dtype = DType::f32;
    Shape full_shape;
    bool trainable = false, tied = false, frozen = false;
    Holding held;
    int local = -1;                       // its index in this rank's Model::state_dict() (-1: not held here)
    std::int64_t numel = 0;               // elements held here (rows: this rank's)
    std::int64_t canonical_offset = -1;   // trainable, untied: in one process's flat layout
    std::int64_t run_offset = -1;         // trainable, untied, held here: in this rank's flat buffers
    std::int64_t param_offset = -1;       // where its values lie in this rank's flat parameters (a tied
                                          // head: the embedding's; zero3 reads them there)
    bool embedding = false;               // the token embedding's weight, to which a head is tied
    bool copy = false;                    // a pipeline stage's copy of a tied head: restored from the token
                                          // embedding's values and state, never written (the embedding is)
    bool head = false;                    // a split head's weight, bias or adapter (rows or, adapter A, whole)
    int quantized_bits = 0;               // QLoRA's base weight: packed bytes (NamedTensor::quantized)
    std::int64_t quantized_group = 0;
    Shape quantized_shape;
};

// A stretch of a flat state buffer (master copy, an optimizer moment): elements [run_offset, + numel) of this
// rank's flat layout are [canonical_offset, + numel) of one process's (a split head's rows: from this rank's
// first row on).
struct FlatStretch {
    Holding held;
    std::int64_t run_offset = -1;  // -1: not held here
    std::int64_t canonical_offset = 0;
    std::int64_t numel = 0;        // held here
    std::int64_t here_offset = 0;  // this rank's elements from canonical_offset + here_offset (rows)
    bool written = true;           // false: a tied head's copy (the embedding's stretch is written)
};

// What the walks read and write: this rank's model, its device, the run's engine (broadcasts between the
// ranks, zero3's parameter shards) and the engine whose pieces hold the flat state (ZeRO-1 inside a layout:
// the part's replicas'; else the run's), and the state buffers.
struct CheckpointIo {
    Model& model;
    Backend& device;
    ShardEngine& run;
    ShardEngine& state;
    std::vector<StateBuffer> buffers;
};

class CheckpointMapper {
public:
    CheckpointMapper() = default;
    // One process or data-parallel ranks: the trivial placement over this rank's whole model.
    static CheckpointMapper whole_model(const Model& model, const ResolvedStrategy& s);
    // A layout across ranks (split head, pipeline stages, their replicas): this rank's part `model` of the
    // whole spec (slice: a split head's rows; split and stage: the pipeline's). `backend` counts one process's
    // model of the whole spec (nothing allocated) for the whole layout.
    static CheckpointMapper rank_part(const Model& model, const ModelSpec& full_spec, Backend& backend,
                                      const ResolvedStrategy& s, const TpHeadSlice& slice, const PipelineSplit& split);

    const std::vector<TensorPlace>& places() const { return places_; }
    const std::vector<FlatStretch>& stretches() const { return stretches_; }
    std::int64_t canonical_numel() const { return canonical_numel_; }
    // every tensor whole on every rank (one process, data-parallel ranks)
    bool trivial() const { return trivial_; }
    const TpHeadSlice& head_slice() const { return slice_; }

    // The checkpoint's tensors, in order: the model's, then each state buffer's as one process's flat buffer.
    std::vector<CheckpointTensor> tensors(const std::vector<StateBuffer>& buffers) const;
    std::vector<CheckpointResumeTensor> resume_tensors(const std::vector<StateBuffer>& buffers) const;
    // Collective: the checkpoint on rank 0 (empty elsewhere). Allocates nothing on the device.
    std::vector<CheckpointHostTensor> gather(CheckpointIo& io) const;
    // The same walk, each tensor handed to `sink` on rank 0 as it is gathered, in tensors()' order (a state
    // buffer in pieces, each following the last, when its stretches tile it), so that rank 0 holds one
    // tensor, or one state buffer's flat copy, at a time rather than the whole checkpoint.
    using Sink = std::function<void(const std::string& name, DType dtype, const Shape& shape, const std::uint8_t* bytes,
                                    std::size_t n)>;
    void gather(CheckpointIo& io, const Sink& sink) const;
    // Every rank from the whole tensors (data(name): null only for a tied one, or for a state buffer that
    // `missing` makes itself, returning true). No communication but zero3's own.
    void restore(CheckpointIo& io, const std::function<const std::uint8_t*(const std::string&)>& data,
                 const std::function<bool(const StateBuffer&)>& missing) const;
    // Collective: every tensor whole on every rank (a stage's and a split head's parts through host memory;
    // zero3's through a flat buffer from `alloc`, category communication).
    std::vector<NamedTensor> consolidate(CheckpointIo& io, Allocator& alloc) const;

private:
    // Elements of `held` whole on rank 0 (everywhere: on every rank) from this rank's part at `mine` (es
    // bytes an element; null where this rank holds none). Collective where it is not every rank's.
    std::vector<std::uint8_t> gather_held(ShardEngine& run, const Holding& held, const std::uint8_t* mine,
                                          std::size_t es, bool everywhere) const;
    std::vector<TensorPlace> places_;
    std::vector<FlatStretch> stretches_;
    std::int64_t canonical_numel_ = 0;
    bool trivial_ = true;
    bool params_sharded_ = false;  // zero3: the parameters live in the run engine's shards
    int rank_ = 0;
    TpHeadSlice slice_;
    std::vector<int> row_holders_;  // a split head's part r: held by rank row_holders_[r] (its first replica)
};

}  // namespace hr
