#pragma once
// OptimizerState: the optimizer and the state it updates over what this rank updates (the whole flat buffer,
// or its shard under ZeRO): the f32 master copy, the optimizer's moments, on the device or offloaded to the
// host (ZeRO-Offload: with the host copies of the gradients and parameters), and the weight decay's
// segments. TrainingState owns it; the update of a step (after the reductions, the loss-scale check and the
// clip, which are TrainingState's) and the master copy's refresh are its own.
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "strategy/checkpoint_mapper.h"
#include "strategy/sharding.h"
#include "strategy/strategy.h"

namespace hr {

class OptimizerState {
public:
    OptimizerState() = default;
    // Allocates the master copy, the host copies and the optimizer's state over sh's pieces (state_numel
    // elements) and fills the master copy from the parameters (not in a dry run).
    void build(const OptimizerConfig& optimizer, const ModelSpec& full_spec, const ResolvedStrategy& s, Model& model,
               const ShardEngine& sh, Backend& device, Allocator& device_alloc, Backend& host, Allocator& host_alloc,
               bool dry_run);

    Optimizer& optimizer() { return *optimizer_; }
    const Optimizer& optimizer() const { return *optimizer_; }
    double grad_clip() const { return grad_clip_; }
    const Tensor& master() const { return master_; }
    // master and optimizer state: this rank's part, and whose memory holds it (the checkpoint's state buffers)
    std::vector<StateBuffer> buffers() const;
    // master copy := parameters (this rank's pieces)
    void sync_master_from_params(const ShardEngine& sh);
    // The update of this rank's pieces from its (reduced) gradient pieces, scaled by inv: on the host
    // (offload; the parameters copied back) or the device, on the master copy or the parameters.
    void update(const ShardEngine& sh, const std::vector<Tensor>& grads, double lr, float inv);
    // The device step's update (backend.h step_ctl): scalars from control, on the master copy or the parameters.
    void update_ctl(Model& model, const Tensor& control);

private:
    bool offload_optimizer_ = false, offload_parameters_ = false;
    double grad_clip_ = 0.0;
    Backend* device_ = nullptr;
    Backend* host_ = nullptr;
    std::unique_ptr<Optimizer> optimizer_;
    Tensor master_;        // f32 copy the optimizer updates (device, or host when offloaded); P or S elements
    Tensor host_grads_;    // offload: gradients copied to the host (compute dtype)
    Tensor host_params_;   // offload + low precision: master cast to the compute dtype before upload
};

}  // namespace hr
