#include "strategy/training_state.h"

#include <cmath>

#include "base/error.h"
#include "nn/transformer_spec.h"

namespace hr {

TrainingState::TrainingState(const ModelSpec& spec, const OptimizerConfig& optimizer, const ResolvedStrategy& s,
                             std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host,
                             Allocator& host_alloc, bool dry_run)
    : strategy_(s), device_(device), host_(host) {
    ModelOptions mo;
    mo.batch = s.micro_batch;
    mo.dtype = s.compute_dtype;
    mo.seed = seed;
    mo.checkpoint_blocks = s.checkpoint_blocks;
    mo.recompute_attention = s.recompute_attention;
    mo.allocator = &device_alloc;
    mo.dry_run = dry_run;
    model_ = std::make_unique<Model>(spec, device, mo);
    grad_clip_ = optimizer.grad_clip;
    const std::int64_t P = model_->flat_param_numel();
    const DType dt = s.compute_dtype;
    if (s.offload_optimizer) {
        // ZeRO-Offload style: the f32 master copy and the optimizer state live on the host, the update
        // runs there; the device keeps only the compute-dtype parameters and gradients.
        master_ = Tensor::empty(host_alloc, {P}, DType::f32, MemCategory::master_weights);
        host_grads_ = Tensor::empty(host_alloc, {P}, dt, MemCategory::communication);
        if (dt != DType::f32) host_params_ = Tensor::empty(host_alloc, {P}, dt, MemCategory::communication);
        optimizer_ = std::make_unique<Optimizer>(optimizer, host, host_alloc, P, DType::f32);
        if (!dry_run) {  // master := parameters, through the host gradient buffer (same dtype)
            device.copy_to_host(model_->parameters(), host_grads_.raw());
            host.copy(host_grads_, master_);
        }
    } else if (s.master_weights) {
        master_ = Tensor::empty(device_alloc, {P}, DType::f32, MemCategory::master_weights);
        optimizer_ = std::make_unique<Optimizer>(optimizer, device, device_alloc, P, DType::f32);
        if (!dry_run) device.copy(model_->parameters(), master_);
    } else {
        optimizer_ = std::make_unique<Optimizer>(optimizer, device, device_alloc, P, dt);
    }
    // weight decay on the matrices only (nanoGPT's rule), per run of the flat buffer
    const bool matrices = optimizer.decay_scope == "matrices" ||
                          (optimizer.decay_scope == "auto" &&
                           (transformer_layer_count(spec) > 0 || is_token_model(spec)));
    if (matrices && optimizer.weight_decay > 0) {
        std::vector<Optimizer::Segment> seg;
        for (const auto& p : model_->decay_segments()) seg.push_back({p.begin, p.end, p.decay});
        optimizer_->set_decay_segments(std::move(seg));
    }
    const std::int64_t m = s.micro_batch;
    const int K = spec.num_classes;
    loss_scale_ = s.loss_scaling ? s.loss_scale_init : 1.0;
    if (model_->takes_tokens()) {
        // token ids in, next tokens as targets; the gradient of the loss overwrites the logits
        x_staging = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::i64, MemCategory::data);
        x_model = x_staging;
        labels = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::i64, MemCategory::data);
        return;
    }
    x_staging = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::f32, MemCategory::data);
    x_model = dt == DType::f32 ? x_staging
                               : Tensor::empty(device_alloc, with_batch(m, spec.input_shape), dt, MemCategory::data);
    labels = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
    if (spec.loss.type == "mse") {
        target_staging = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
        target_model = dt == DType::f32 ? target_staging : Tensor::empty(device_alloc, {m, K}, dt, MemCategory::data);
    }
    dlogits = Tensor::empty(device_alloc, {m, K}, dt, MemCategory::workspace);
    loss_scale_ = s.loss_scaling ? s.loss_scale_init : 1.0;
}

bool TrainingState::optimizer_step(double lr) {
    Tensor& grads = model_->gradients();
    Tensor& params = model_->parameters();
    if (strategy_.loss_scaling && !device_.all_finite(grads)) {
        ++skipped_;
        good_steps_ = 0;
        loss_scale_ = std::max(1.0, loss_scale_ / 2);
        return false;
    }
    float inv = static_cast<float>(1.0 / loss_scale_);
    if (grad_clip_ > 0) {
        // torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1
        grad_norm_ = std::sqrt(device_.sum_squares(grads)) / loss_scale_;
        const double coef = grad_clip_ / (grad_norm_ + 1e-6);
        if (coef < 1.0) inv = static_cast<float>(coef / loss_scale_);
    }
    if (strategy_.offload_optimizer) {
        device_.copy_to_host(grads, host_grads_.raw());
        optimizer_->step(master_, host_grads_, lr, inv);
        if (host_params_.defined()) {
            host_.copy(master_, host_params_);
            device_.copy_from_host(host_params_.raw(), params);
        } else {
            device_.copy_from_host(master_.raw(), params);
        }
    } else if (strategy_.master_weights) {
        optimizer_->step(master_, grads, lr, inv);
        device_.copy(master_, params);
    } else {
        optimizer_->step(params, grads, lr, inv);
    }
    if (strategy_.loss_scaling && ++good_steps_ >= strategy_.loss_scale_growth_interval) {
        loss_scale_ *= 2;
        good_steps_ = 0;
    }
    return true;
}

}  // namespace hr
