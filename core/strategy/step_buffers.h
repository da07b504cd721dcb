#pragma once
// StepBuffers: the buffers a step reads and writes beside the model's own: a micro-batch's rows (as the data
// loader gives them and in the compute dtype), the loss gradient over the logits, the landing buffers of
// uploads that overlap the running step (a GPU), a split head's loss reductions, and the device step's
// control and figures (backend.h StepControl / StepStats). TrainingState owns them (its public batch tensors
// are these); allocated up front in this order, so the planner counts them as the run allocates them.
#include <cstdint>
#include <memory>

#include "backend/backend.h"
#include "nn/model_spec.h"
#include "strategy/strategy.h"
#include "strategy/tp_head.h"

namespace hr {

class StepBuffers {
public:
    // spec: this rank's part of the model; full_spec: the whole (the data's shape); takes_tokens: a language
    // model; last_stage: the logits are this rank's (the loss gradient buffer); head: a split head's slice
    // (null: no split head on this rank).
    void build(const ModelSpec& spec, const ModelSpec& full_spec, const ResolvedStrategy& s, bool takes_tokens,
               Backend& device, Allocator& device_alloc, Allocator& host_alloc, bool last_stage,
               const TpHeadSlice* head);

    Tensor x_staging, x_model, labels, dlogits, target_staging, target_model;
    Tensor control, stats;
    TpLossBuffers head_loss;  // a split head's loss reductions (undefined elsewhere)

    // Input without waiting: upload_next queues the next micro-batch's upload into a landing buffer (a GPU;
    // the CPU copies into the batch buffers at once); take_upload makes the device wait for it and moves it
    // into the batch buffers (TrainingState::upload_next, take_upload).
    void upload_next(const float* x, const std::int64_t* labels, const float* target, std::int64_t n);
    void take_upload(std::int64_t n);

private:
    Backend* device_ = nullptr;
    Tensor landing_x_, landing_labels_, landing_target_;  // GPU: where upload_next writes
    std::shared_ptr<Backend::Fence> landing_free_, landing_full_;
};

}  // namespace hr
