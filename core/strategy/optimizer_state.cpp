#include "strategy/optimizer_state.h"

#include "nn/transformer_spec.h"

namespace hr {

// The optimizer's state over what this rank updates (the whole flat buffer or its shard), on the device
// or offloaded to the host, with its master copy, and the weight decay's segments.
void OptimizerState::build(const OptimizerConfig& optimizer, const ModelSpec& full_spec, const ResolvedStrategy& s,
                           Model& model, const ShardEngine& sh, Backend& device, Allocator& device_alloc, Backend& host,
                           Allocator& host_alloc, bool dry_run) {
    offload_optimizer_ = s.offload_optimizer;
    offload_parameters_ = s.offload_parameters;
    device_ = &device;
    host_ = &host;
    grad_clip_ = optimizer.grad_clip;
    // the optimizer's state covers what this rank updates: the whole flat buffer, or its shard
    const std::int64_t P = sh.state_numel();
    const DType dt = s.compute_dtype;
    const std::vector<Tensor> params = sh.param_pieces();
    if (s.offload_optimizer) {
        // ZeRO-Offload style: the f32 master copy and the optimizer state live on the host, the update
        // runs there; the device keeps only the compute-dtype parameters and gradients.
        master_ = Tensor::empty(host_alloc, {P}, DType::f32, MemCategory::master_weights);
        // (parameter offload: the gradient and parameter shards are on the host already, no copies)
        if (!s.offload_parameters) {
            host_grads_ = Tensor::empty(host_alloc, {P}, dt, MemCategory::communication);
            if (dt != DType::f32) host_params_ = Tensor::empty(host_alloc, {P}, dt, MemCategory::communication);
        }
        optimizer_ = std::make_unique<Optimizer>(optimizer, host, host_alloc, P, DType::f32);
        if (!dry_run && s.offload_parameters) {  // master := the host's parameter shard
            std::vector<Tensor> masters = sh.pieces_of(master_);
            for (std::size_t i = 0; i < params.size(); ++i) host.copy(params[i], masters[i]);
        } else if (!dry_run) {  // master := parameters, through the host gradient buffer (same dtype)
            const std::vector<Tensor> staged = sh.pieces_of(host_grads_);
            for (std::size_t i = 0; i < params.size(); ++i) device.copy_to_host(params[i], staged[i].raw());
            host.copy(host_grads_, master_);
        }
    } else if (s.master_weights) {
        master_ = Tensor::empty(device_alloc, {P}, DType::f32, MemCategory::master_weights);
        optimizer_ = std::make_unique<Optimizer>(optimizer, device, device_alloc, P, DType::f32);
        if (!dry_run) {
            std::vector<Tensor> masters = sh.pieces_of(master_);
            for (std::size_t i = 0; i < params.size(); ++i) device.copy(params[i], masters[i]);
        }
    } else {
        optimizer_ = std::make_unique<Optimizer>(optimizer, device, device_alloc, P, dt);
    }
    // weight decay on the matrices only (nanoGPT's rule), per run of the flat buffer
    const bool matrices = optimizer.decay_scope == "matrices" ||
                          (optimizer.decay_scope == "auto" &&
                           (transformer_layer_count(full_spec) > 0 || is_token_model(full_spec)));
    if (matrices && optimizer.weight_decay > 0) {
        std::vector<Optimizer::Segment> seg;
        for (const auto& p : model.decay_segments()) seg.push_back({p.begin, p.end, p.decay});
        optimizer_->set_decay_segments(std::move(seg));
    }
}

std::vector<StateBuffer> OptimizerState::buffers() const {
    std::vector<StateBuffer> out;
    Backend* holder = offload_optimizer_ ? host_ : device_;
    if (master_.defined()) out.push_back({"master", master_, holder});
    for (auto& [name, t] : optimizer_->state()) out.push_back({"optimizer." + name, t, holder});
    return out;
}

void OptimizerState::sync_master_from_params(const ShardEngine& sh) {
    if (!master_.defined()) return;
    const std::vector<Tensor> params = sh.param_pieces();
    if (offload_parameters_) {
        std::vector<Tensor> masters = sh.pieces_of(master_);
        for (std::size_t i = 0; i < params.size(); ++i) host_->copy(params[i], masters[i]);
    } else if (offload_optimizer_) {
        const std::vector<Tensor> staged = sh.pieces_of(host_grads_);
        for (std::size_t i = 0; i < params.size(); ++i) device_->copy_to_host(params[i], staged[i].raw());
        host_->copy(host_grads_, master_);
    } else {
        std::vector<Tensor> masters = sh.pieces_of(master_);
        for (std::size_t i = 0; i < params.size(); ++i) device_->copy(params[i], masters[i]);
    }
}

void OptimizerState::update(const ShardEngine& sh, const std::vector<Tensor>& grads, double lr, float inv) {
    std::vector<Tensor> params = sh.param_pieces();
    if (offload_parameters_) {  // every piece is on the host: the update writes the parameters there
        std::vector<Tensor> masters = sh.pieces_of(master_);
        optimizer_->step(masters, grads, lr, inv, sh.piece_flat_offsets());
        for (std::size_t i = 0; i < params.size(); ++i) host_->copy(masters[i], params[i]);
    } else if (offload_optimizer_) {
        std::vector<Tensor> host_grads = sh.pieces_of(host_grads_), masters = sh.pieces_of(master_);
        for (std::size_t i = 0; i < grads.size(); ++i) device_->copy_to_host(grads[i], host_grads[i].raw());
        optimizer_->step(masters, host_grads, lr, inv, sh.piece_flat_offsets());
        if (host_params_.defined()) {
            host_->copy(master_, host_params_);
            const std::vector<Tensor> staged = sh.pieces_of(host_params_);
            for (std::size_t i = 0; i < params.size(); ++i) device_->copy_from_host(staged[i].raw(), params[i]);
        } else {
            for (std::size_t i = 0; i < params.size(); ++i) device_->copy_from_host(masters[i].raw(), params[i]);
        }
    } else if (master_.defined()) {
        std::vector<Tensor> masters = sh.pieces_of(master_);
        optimizer_->step(masters, grads, lr, inv, sh.piece_flat_offsets());
        for (std::size_t i = 0; i < params.size(); ++i) device_->copy(masters[i], params[i]);
    } else {
        optimizer_->step(params, grads, lr, inv, sh.piece_flat_offsets());
    }
}

void OptimizerState::update_ctl(Model& model, const Tensor& control) {
    Tensor& grads = model.gradients();
    Tensor& params = model.parameters();
    if (master_.defined()) {
        optimizer_->step_ctl(master_, grads, control);
        device_->copy(master_, params);
    } else {
        optimizer_->step_ctl(params, grads, control);
    }
}

}  // namespace hr
