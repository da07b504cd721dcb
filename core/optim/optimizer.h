#pragma once
// Optimizers over flat buffers (docs/design.md decision 2): one backend update per buffer and step.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace hr {

struct OptimizerConfig {
    std::string kind = "sgd";  // sgd | adam | adamw
    double lr = 0.01;
    double momentum = 0.0;     // sgd
    double dampening = 0.0;    // sgd
    bool nesterov = false;     // sgd
    double weight_decay = 0.0;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam, adamw
    // Which parameters weight decay applies to: "all"; "matrices" (nanoGPT: tensors of two or more
    // dimensions, i.e. weights and embeddings, not biases or normalisation weights); "auto": matrices
    // for models with transformer layers, all for the others.
    std::string decay_scope = "auto";
    double grad_clip = 0.0;    // > 0: clip the gradients' global L2 norm to this (torch.nn.utils.clip_grad_norm_)
};

void validate_optimizer(const OptimizerConfig& c);  // InputError naming the field
// Optimizer state tensors per parameter: SGD 0 (no momentum) or 1, Adam/AdamW 2.
int optimizer_states_per_param(const OptimizerConfig& c);

class Optimizer {
public:
    // State buffers (momentum, or Adam's m and v) are allocated from `state_alloc` (the device, or
    // pinned host memory when offloaded) as f32 (f64 when the parameters are f64), category optimizer_state.
    Optimizer(const OptimizerConfig& config, Backend& backend, std::int64_t param_count, DType dtype);
    // The same with the state allocated from `state_alloc` (e.g. a host allocator for offload).
    Optimizer(const OptimizerConfig& config, Backend& backend, Allocator& state_alloc, std::int64_t param_count,
              DType dtype);

    // Runs of the flat buffer [begin, end) and whether weight decay applies to each; they must cover
    // the buffer in order. Without segments, decay applies everywhere.
    struct Segment {
        std::int64_t begin = 0, end = 0;
        bool decay = true;
    };
    void set_decay_segments(std::vector<Segment> segments) { segments_ = std::move(segments); }
    bool has_decay_segments() const { return config_.weight_decay > 0 && segments_.size() > 1; }

    // params -= update(grads * grad_scale) with learning rate lr. step_count() advances.
    void step(Tensor& params, const Tensor& grads, double lr, float grad_scale = 1.0f);
    // The same update over pieces (a rank's shards of each unit, strategy/sharding.h): piece i of params
    // and grads pairs with the next params[i].numel() state elements, in order. One step: the step
    // count advances once. The pieces' sizes add up to the state's size. flat_offsets: where each piece
    // starts in the flat parameter buffer (for the decay segments; empty: the pieces are the buffer in order).
    void step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, double lr,
              float grad_scale = 1.0f, const std::vector<std::int64_t>& flat_offsets = {});
    // The same with the step's scalars on the device (backend.h sgd_update_ctl / adam_update_ctl): the
    // learning rate, Adam's step count and 1/loss scale come from `control` (a StepControl tensor), and
    // nothing changes when control says the gradients are not finite. step_count() does not advance
    // (the count is control[kCtlOptStep]); nothing here reads a value back to the host.
    void step_ctl(Tensor& params, const Tensor& grads, const Tensor& control, float grad_scale = 1.0f);
    std::int64_t step_count() const { return steps_; }
    void set_step_count(std::int64_t steps) { steps_ = steps; }  // resume: Adam's bias correction goes on
    const OptimizerConfig& config() const { return config_; }
    std::vector<std::pair<std::string, Tensor>> state() const;  // "momentum_buffer" / "exp_avg", "exp_avg_sq"

private:
    void update(Tensor& params, const Tensor& grads, Tensor& m, Tensor& v, double lr, float grad_scale);
    // One piece at state offset state_at and flat offset flat_at, split by the decay segments.
    void update_piece(Tensor& p, const Tensor& g, std::int64_t state_at, std::int64_t flat_at, double lr,
                      float grad_scale);

    OptimizerConfig config_;
    Backend& backend_;
    Tensor m_, v_;
    std::int64_t steps_ = 0;
    std::vector<Segment> segments_;
};

}  // namespace hr
