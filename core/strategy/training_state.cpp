#include "strategy/training_state.h"

#include "base/error.h"

namespace hr {

TrainingState::TrainingState(const ModelSpec& spec, const OptimizerConfig& optimizer, const ResolvedStrategy& s,
                             std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host,
                             Allocator& host_alloc, bool dry_run, Communicator* comm)
    : strategy_(s), device_(device), host_(host) {
    ModelOptions mo;
    mo.batch = s.micro_batch;
    mo.dtype = s.compute_dtype;
    mo.seed = seed;
    mo.checkpoint_blocks = s.checkpoint_blocks;
    mo.allocator = &device_alloc;
    mo.dry_run = dry_run;
    // sharding (strategy/sharding.h): units padded to split evenly; zero2 keeps no flat gradient buffer,
    // zero3 no flat parameter buffer either (the engine binds each unit's views to its buffers)
    mo.unit_pad_multiple = s.sharded() ? s.world_size : 1;
    mo.allocate_grads = s.shard < ShardStage::zero2;
    mo.allocate_params = s.shard < ShardStage::zero3;
    mo.hooks = s.shard != ShardStage::none ? &engine_ : nullptr;
    model_ = std::make_unique<Model>(spec, device, mo);
    engine_.attach(*model_, s, comm, device, device_alloc, dry_run);
    // the optimizer's state covers what this rank updates: the whole flat buffer, or its shard
    const std::int64_t P = engine_.state_numel();
    const DType dt = s.compute_dtype;
    const std::vector<Tensor> params = engine_.param_pieces();
    if (s.offload_optimizer) {
        // ZeRO-Offload style: the f32 master copy and the optimizer state live on the host, the update
        // runs there; the device keeps only the compute-dtype parameters and gradients.
        master_ = Tensor::empty(host_alloc, {P}, DType::f32, MemCategory::master_weights);
        host_grads_ = Tensor::empty(host_alloc, {P}, dt, MemCategory::communication);
        if (dt != DType::f32) host_params_ = Tensor::empty(host_alloc, {P}, dt, MemCategory::communication);
        optimizer_ = std::make_unique<Optimizer>(optimizer, host, host_alloc, P, DType::f32);
        if (!dry_run) {  // master := parameters, through the host gradient buffer (same dtype)
            const std::vector<Tensor> staged = engine_.pieces_of(host_grads_);
            for (std::size_t i = 0; i < params.size(); ++i) device.copy_to_host(params[i], staged[i].raw());
            host.copy(host_grads_, master_);
        }
    } else if (s.master_weights) {
        master_ = Tensor::empty(device_alloc, {P}, DType::f32, MemCategory::master_weights);
        optimizer_ = std::make_unique<Optimizer>(optimizer, device, device_alloc, P, DType::f32);
        if (!dry_run) {
            std::vector<Tensor> masters = engine_.pieces_of(master_);
            for (std::size_t i = 0; i < params.size(); ++i) device.copy(params[i], masters[i]);
        }
    } else {
        optimizer_ = std::make_unique<Optimizer>(optimizer, device, device_alloc, P, dt);
    }
    const std::int64_t m = s.micro_batch;
    const int K = spec.num_classes;
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

float TrainingState::loss_grad_scale(std::int64_t n) const {
    return static_cast<float>(static_cast<double>(n) / static_cast<double>(strategy_.batch) * loss_scale_);
}

std::uint64_t TrainingState::first_sample(std::int64_t step, std::int64_t r0) const {
    return static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(strategy_.batch) +
           static_cast<std::uint64_t>(strategy_.sample_offset + r0);
}

void TrainingState::begin_step() { engine_.begin_step(); }

bool TrainingState::optimizer_step(double lr) {
    engine_.finish_gradients();
    const std::vector<Tensor> grads = engine_.grad_pieces();
    std::vector<Tensor> params = engine_.param_pieces();
    if (strategy_.loss_scaling) {
        bool finite = true;
        for (const Tensor& g : grads) finite = finite && device_.all_finite(g);
        // every rank skips, or none does (each sees only its shard of the gradients)
        if (Communicator* c = engine_.communicator(); c && c->world_size() > 1) finite = all_ranks_agree(*c, finite);
        if (!finite) {
            ++skipped_;
            good_steps_ = 0;
            loss_scale_ = std::max(1.0, loss_scale_ / 2);
            engine_.broadcast_buffers();
            return false;
        }
    }
    const float inv = static_cast<float>(1.0 / loss_scale_);
    if (strategy_.offload_optimizer) {
        std::vector<Tensor> host_grads = engine_.pieces_of(host_grads_), masters = engine_.pieces_of(master_);
        for (std::size_t i = 0; i < grads.size(); ++i) device_.copy_to_host(grads[i], host_grads[i].raw());
        optimizer_->step(masters, host_grads, lr, inv);
        if (host_params_.defined()) {
            host_.copy(master_, host_params_);
            const std::vector<Tensor> staged = engine_.pieces_of(host_params_);
            for (std::size_t i = 0; i < params.size(); ++i) device_.copy_from_host(staged[i].raw(), params[i]);
        } else {
            for (std::size_t i = 0; i < params.size(); ++i) device_.copy_from_host(masters[i].raw(), params[i]);
        }
    } else if (strategy_.master_weights) {
        std::vector<Tensor> masters = engine_.pieces_of(master_);
        optimizer_->step(masters, grads, lr, inv);
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy(masters[i], params[i]);
    } else {
        optimizer_->step(params, grads, lr, inv);
    }
    if (strategy_.loss_scaling && ++good_steps_ >= strategy_.loss_scale_growth_interval) {
        loss_scale_ *= 2;
        good_steps_ = 0;
    }
    engine_.publish_parameters();
    engine_.broadcast_buffers();
    return true;
}

std::vector<NamedTensor> TrainingState::consolidated_state_dict(Allocator& alloc) {
    return engine_.consolidated_state_dict(alloc);
}

}  // namespace hr
