#pragma once
// TrainingState: everything a run allocates on the device (model, optimizer, master weights, batch
// buffers, sharding buffers) and on the host (offloaded optimizer), built from a ResolvedStrategy. The
// trainer builds it on real allocators; the planner builds the very same thing on counting allocators
// (dry run), once per rank, so its prediction equals each rank's ledger.
//
// A step, the same on every rank (one process is a world of one; with ranks, rank r of N trains on rows
// [strategy().sample_offset, + strategy().rank_batch) of the global batch):
//
//     state.begin_step();                                   // zero the gradients (full or shard)
//     for (auto [r0, n] : state.strategy().micro_batches()) {   // the same count on every rank
//         Tensor x = ... rows [r0, r0 + n) of this rank's share, uploaded into state.x_staging / x_model
//         Tensor logits = state.model().forward(x, true, state.first_sample(step, r0));
//         loss(logits, labels, dlogits, state.loss_grad_scale(n));   // n / global batch x loss scale
//         state.model().backward(dlogits);                   // unit hooks reduce gradients as they finish
//     }
//     bool applied = state.optimizer_step(lr);   // waits for the reductions, updates this rank's shard,
//                                                // all-gathers, broadcasts rank 0's batch-norm statistics
//
// Evaluation is model().forward(x, false) on every rank (zero3 gathers each unit as in training).
// Saving: consolidated_state_dict() on every rank (collective under zero3), rank 0 writes it.
// Metrics are the trainer's to reduce (communicator()->all_reduce_value), weighted by samples.
// Every rank must take the same path: the same number of micro-batches, forwards and optimizer steps.
#include <memory>

#include "backend/backend.h"
#include "dist/communicator.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "strategy/sharding.h"
#include "strategy/strategy.h"

namespace hr {

class TrainingState {
public:
    // comm: the run's communicator when strategy.world_size > 1 (its rank and size must match the
    // strategy's); may be null for one process (a single-rank communicator is made for a sharded stage)
    // and in a dry run.
    TrainingState(const ModelSpec& spec, const OptimizerConfig& optimizer, const ResolvedStrategy& strategy,
                  std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host, Allocator& host_alloc,
                  bool dry_run = false, Communicator* comm = nullptr);

    Model& model() { return *model_; }
    const ResolvedStrategy& strategy() const { return strategy_; }
    const ShardLayout& shard_layout() const { return engine_.layout(); }
    Communicator* communicator() const { return engine_.communicator(); }

    // Per micro-batch buffers. x_staging/target_staging are f32 (what the data loader gives);
    // x_model/target_model are in the compute dtype (the same tensors when that is f32).
    Tensor x_staging, x_model, labels, dlogits, target_staging, target_model;

    // Factor the loss gradient is multiplied by (the fp16 loss scale, else 1).
    float loss_scale() const { return static_cast<float>(loss_scale_); }
    // The loss-gradient factor of a micro-batch of n samples: n / global batch x loss scale, so the
    // summed gradients of all micro-batches of all ranks are the gradient of the mean loss of the batch.
    float loss_grad_scale(std::int64_t n) const;
    // The run-wide index of the first sample of the micro-batch starting at row r0 of this rank's share
    // (Model::forward's third argument; dropout masks are keyed on it).
    std::uint64_t first_sample(std::int64_t step, std::int64_t r0) const;

    void begin_step();
    // Applies the optimizer for the accumulated gradients: the reductions, loss-scale check (fp16;
    // decided alike on every rank), master weights, offload, the parameters' all-gather and the
    // batch-norm broadcast. Returns false when the step was skipped for inf/NaN gradients (fp16).
    bool optimizer_step(double lr);
    std::int64_t skipped_steps() const { return skipped_; }

    // The full trained weights with state_dict names (nn/model.h). Collective under zero3: every rank
    // calls it; the gathered buffer comes from `alloc` (category communication). Parameters are in the
    // compute dtype (the master copy, when there is one, is the f32 truth; bf16 runs save these).
    std::vector<NamedTensor> consolidated_state_dict(Allocator& alloc);

private:
    ResolvedStrategy strategy_;
    Backend& device_;
    Backend& host_;
    ShardEngine engine_;  // before model_: the model's unit hooks point at it
    std::unique_ptr<Model> model_;
    std::unique_ptr<Optimizer> optimizer_;
    Tensor master_;        // f32 copy the optimizer updates (device, or host when offloaded); P or S elements
    Tensor host_grads_;    // offload: gradients copied to the host (compute dtype)
    Tensor host_params_;   // offload + low precision: master cast to the compute dtype before upload
    double loss_scale_ = 1.0;
    std::int64_t good_steps_ = 0;
    std::int64_t skipped_ = 0;
};

}  // namespace hr
