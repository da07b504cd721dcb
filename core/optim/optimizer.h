#pragma once
// Optimizers over flat buffers (DESIGN.md decision 2): one backend update per buffer and step.
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

    // params -= update(grads * grad_scale) with learning rate lr. step_count() advances.
    void step(Tensor& params, const Tensor& grads, double lr, float grad_scale = 1.0f);
    // The same update over pieces (a rank's shards of each unit, strategy/sharding.h): piece i of params
    // and grads pairs with the next params[i].numel() state elements, in order. One step: the step
    // count advances once. The pieces' sizes add up to the state's size.
    void step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, double lr,
              float grad_scale = 1.0f);
    // The same with the step's scalars on the device (backend.h sgd_update_ctl / adam_update_ctl): the
    // learning rate, Adam's step count and 1/loss scale come from `control` (a StepControl tensor), and
    // nothing changes when control says the gradients are not finite. step_count() does not advance
    // (the count is control[kCtlOptStep]); nothing here reads a value back to the host.
    void step_ctl(Tensor& params, const Tensor& grads, const Tensor& control, float grad_scale = 1.0f);
    std::int64_t step_count() const { return steps_; }
    const OptimizerConfig& config() const { return config_; }
    std::vector<std::pair<std::string, Tensor>> state() const;  // "momentum_buffer" / "exp_avg", "exp_avg_sq"

private:
    void update(Tensor& params, const Tensor& grads, Tensor& m, Tensor& v, double lr, float grad_scale);

    OptimizerConfig config_;
    Backend& backend_;
    Tensor m_, v_;
    std::int64_t steps_ = 0;
};

}  // namespace hr
