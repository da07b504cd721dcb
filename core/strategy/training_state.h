#pragma once
// TrainingState: everything a run allocates on the device (model, optimizer, master weights, batch
// buffers) and on the host (offloaded optimizer), built from a ResolvedStrategy. The trainer builds it
// on real allocators; the planner builds the very same thing on counting allocators (dry run).
#include <memory>

#include "backend/backend.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "strategy/strategy.h"

namespace hr {

class TrainingState {
public:
    TrainingState(const ModelSpec& spec, const OptimizerConfig& optimizer, const ResolvedStrategy& strategy,
                  std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host, Allocator& host_alloc,
                  bool dry_run = false);

    Model& model() { return *model_; }
    const ResolvedStrategy& strategy() const { return strategy_; }

    // Per micro-batch buffers. x_staging/target_staging are f32 (what the data loader gives);
    // x_model/target_model are in the compute dtype (the same tensors when that is f32).
    // Language models (Model::takes_tokens): x_staging = x_model are the token ids (M, T) i64 and labels
    // the next tokens (M, T) i64; there is no dlogits: the fused loss writes the gradient over the logits.
    Tensor x_staging, x_model, labels, dlogits, target_staging, target_model;

    // Factor the loss gradient is multiplied by (the fp16 loss scale, else 1).
    float loss_scale() const { return static_cast<float>(loss_scale_); }
    // Applies the optimizer for the accumulated gradients: loss-scale check (fp16), master weights,
    // offload. Returns false when the step was skipped for inf/NaN gradients (fp16).
    bool optimizer_step(double lr);
    std::int64_t skipped_steps() const { return skipped_; }
    // The global L2 norm of the last step's gradients (of the mean loss, unscaled), when gradient
    // clipping computed it; else 0.
    double last_grad_norm() const { return grad_norm_; }

private:
    ResolvedStrategy strategy_;
    Backend& device_;
    Backend& host_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Optimizer> optimizer_;
    Tensor master_;        // f32 copy the optimizer updates (device, or host when offloaded)
    Tensor host_grads_;    // offload: gradients copied to the host (compute dtype)
    Tensor host_params_;   // offload + low precision: master cast to the compute dtype before upload
    double loss_scale_ = 1.0;
    double grad_clip_ = 0.0;
    double grad_norm_ = 0.0;
    std::int64_t good_steps_ = 0;
    std::int64_t skipped_ = 0;
};

}  // namespace hr
