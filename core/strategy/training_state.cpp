#include "strategy/training_state.h"

#include <cmath>
#include <cstring>

#include "base/error.h"
#include "nn/backend_ops.h"
#include "memory/counting_allocator.h"
#include "nn/transformer_spec.h"

namespace hr {

TrainingState::TrainingState(const ModelSpec& full_spec, const OptimizerConfig& optimizer, const ResolvedStrategy& s,
                             std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host,
                             Allocator& host_alloc, bool dry_run, Communicator* comm)
    : strategy_(s), device_(device), host_(host) {
    // a tensor-parallel head (strategy/tp_head.h): this rank builds the model with its slice of the head
    if (s.tp_head > 1) {
        tp_.slice = tp_head_slice(tp_head_outputs(full_spec, s.tp_head), s.world_size, s.rank);
        tp_.full_spec = full_spec;
        if (!dry_run && (!comm || comm->world_size() != s.world_size))
            throw Error("internal: a tensor-parallel head needs the run's communicator");
    }
    const ModelSpec spec = s.tp_head > 1 ? tp_head_spec(full_spec, tp_.slice) : full_spec;
    // what the model, its loss and its optimizer need of the backends, before anything is allocated
    check_backend_needs(training_backend_needs(spec, optimizer, s.compute_dtype, s.master_weights, s.offload_optimizer),
                        device, host);
    ModelOptions mo;
    mo.batch = s.micro_batch;
    mo.dtype = s.compute_dtype;
    mo.seed = seed;
    mo.checkpoint_blocks = s.checkpoint_blocks;
    mo.recompute_attention = s.recompute_attention;
    mo.allocator = &device_alloc;
    mo.dry_run = dry_run;
    // sharding (strategy/sharding.h): units padded to split evenly; zero2 keeps no flat gradient buffer,
    // zero3 no flat parameter buffer either (the engine binds each unit's views to its buffers)
    mo.unit_pad_multiple = s.sharded() ? s.world_size : 1;
    mo.allocate_grads = s.shard < ShardStage::zero2;
    mo.allocate_params = s.shard < ShardStage::zero3;
    mo.hooks = s.shard != ShardStage::none ? &engine_ : nullptr;
    if (s.tp_head > 1) {
        mo.head_first = tp_.slice.first;
        mo.head_total = tp_.slice.total;
        // the head's input gradient is a sum over every rank's columns: all-reduced before the body's backward
        if (!dry_run)
            mo.head_input_grad_hook = [comm](Tensor& dx) {
                comm->all_reduce(dx, ReduceOp::sum).wait();
            };
    }
    model_ = std::make_unique<Model>(spec, device, mo);
    engine_.attach(*model_, s, comm, device, device_alloc, dry_run);
    grad_clip_ = optimizer.grad_clip;
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
    } else {
        x_staging = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::f32, MemCategory::data);
        x_model = dt == DType::f32 ? x_staging
                                   : Tensor::empty(device_alloc, with_batch(m, spec.input_shape), dt, MemCategory::data);
        labels = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
        if (spec.loss.type == "mse") {
            target_staging = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
            target_model =
                dt == DType::f32 ? target_staging : Tensor::empty(device_alloc, {m, K}, dt, MemCategory::data);
        }
        dlogits = Tensor::empty(device_alloc, {m, K}, dt, MemCategory::workspace);
    }
    // a landing buffer for uploads that overlap the running step (a device other than the host's
    // memory only; the planner's GPU allocator reports a CUDA device too, so it counts them); token
    // models upload through x_staging / labels directly (the device step is for image batches)
    if (!device_alloc.device().is_cpu() && !model_->takes_tokens()) {
        landing_x_ = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::f32, MemCategory::data);
        landing_labels_ = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
        if (spec.loss.type == "mse") landing_target_ = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
    }
    if (s.tp_head > 1) {
        // the split loss's reductions (3 floats a row) and, on a GPU, the host copy it works in
        const std::int64_t rows = m * (model_->takes_tokens() ? spec.input_shape[0] : 1);
        tp_.loss.reduce = Tensor::empty(device_alloc, {3 * rows}, DType::f32, MemCategory::communication);
        if (device_alloc.device().is_cpu()) {
            tp_.loss.host = tp_.loss.reduce;
        } else {
            tp_.loss.host = Tensor::empty(host_alloc, {3 * rows}, DType::f32, MemCategory::communication);
            tp_.loss.staging = Tensor::empty(host_alloc, {rows * tp_.slice.count}, dt, MemCategory::communication);
        }
        tp_layout(dry_run);
    }
    // the device step's scalars and figures (a few bytes each; the planner sees them like the rest)
    control = Tensor::empty(device_alloc, {kStepControlFields}, DType::f64, MemCategory::other);
    stats = Tensor::empty(device_alloc, {kStepStatsFields}, DType::f64, MemCategory::other);
    mse_ = spec.loss.type == "mse";
    label_smoothing_ = static_cast<float>(spec.loss.label_smoothing);
    has_dropout_ = spec_has_layer(spec.layers, "dropout");
    if (!dry_run) {
        double c[kStepControlFields] = {};
        c[kCtlLossScale] = loss_scale_;
        device.copy_from_host(c, control);
    }
}

bool TrainingState::spec_has_layer(const std::vector<LayerSpec>& layers, const std::string& type) {
    for (const auto& l : layers)
        if (l.type == type || spec_has_layer(l.body, type) || spec_has_layer(l.shortcut, type)) return true;
    return false;
}

bool TrainingState::device_step_supported() const {
    // the host update (offload), the rank collectives, the global-norm clip and per-run weight decay
    // are host-driven steps
    return !strategy_.offload_optimizer && strategy_.shard == ShardStage::none && strategy_.tp_head == 1 &&
           grad_clip_ == 0 &&
           !optimizer_->has_decay_segments() && !model_->takes_tokens();
}

bool TrainingState::graph_capturable() const { return device_step_supported() && !has_dropout_; }

void TrainingState::begin_device_step(double lr) {
    model_->zero_grad();
    device_.fill(stats, 0.0);
    Tensor found = control.view(kCtlFoundInf, {1});
    device_.fill(found, 0.0);
    Tensor lr_slot = control.view(kCtlLr, {1});
    device_.copy_from_host(&lr, lr_slot);
}

void TrainingState::upload_next(const float* x, const std::int64_t* y, const float* target, std::int64_t n) {
    if (!landing_x_.defined()) {  // the CPU: nothing to overlap
        Tensor xs = x_staging.slice0(0, n), yb = labels.slice0(0, n);
        device_.copy_from_host(x, xs);
        device_.copy_from_host(y, yb);
        if (target && target_staging.defined()) {
            Tensor ts = target_staging.slice0(0, n);
            device_.copy_from_host(target, ts);
        }
        return;
    }
    Tensor lx = landing_x_.slice0(0, n), ly = landing_labels_.slice0(0, n);
    device_.upload_async(x, lx, landing_free_.get());
    landing_full_ = device_.upload_async(y, ly, landing_free_.get());
    if (target && landing_target_.defined()) {
        Tensor lt = landing_target_.slice0(0, n);
        landing_full_ = device_.upload_async(target, lt, landing_free_.get());  // in order: the last is enough
    }
}

void TrainingState::take_upload(std::int64_t n) {
    if (!landing_x_.defined()) return;
    device_.wait_fence(landing_full_.get());
    Tensor xs = x_staging.slice0(0, n), yb = labels.slice0(0, n);
    device_.copy(landing_x_.slice0(0, n), xs);
    device_.copy(landing_labels_.slice0(0, n), yb);
    if (landing_target_.defined()) {
        Tensor ts = target_staging.slice0(0, n);
        device_.copy(landing_target_.slice0(0, n), ts);
    }
    landing_free_ = device_.record_fence();  // the next upload may overwrite the landing buffer after this
}

void TrainingState::device_micro_step(std::int64_t n, float share, std::uint64_t first_sample) {
    const bool lowp = strategy_.compute_dtype != DType::f32;
    Tensor xs = x_staging.slice0(0, n);
    Tensor xm = lowp ? x_model.slice0(0, n) : xs;
    if (lowp) device_.copy(xs, xm);
    Tensor logits = model_->forward(xm, true, first_sample);
    Tensor g = dlogits.slice0(0, n);
    if (mse_) {
        Tensor ts = target_staging.slice0(0, n);
        Tensor tm = lowp ? target_model.slice0(0, n) : ts;
        if (lowp) device_.copy(ts, tm);
        device_.mse_loss_into(logits, tm, g, share, control, stats, share);
    } else {
        Tensor yb = labels.slice0(0, n);
        device_.softmax_cross_entropy_into(logits, yb, label_smoothing_, g, share, control, stats, share);
    }
    model_->backward(g);
}

void TrainingState::device_optimizer_step() {
    if (!device_step_supported())
        throw Error("internal: the device step does not support optimizer offload (the update runs on the host)");
    Tensor& grads = model_->gradients();
    Tensor& params = model_->parameters();
    if (strategy_.loss_scaling) device_.all_finite_into(grads, control);
    if (strategy_.master_weights) {
        optimizer_->step_ctl(master_, grads, control);
        device_.copy(master_, params);
    } else {
        optimizer_->step_ctl(params, grads, control);
    }
    device_.step_control_end(control, strategy_.loss_scaling, strategy_.loss_scale_growth_interval);
}

void TrainingState::sync_control_to_host() {
    double c[kStepControlFields];
    device_.copy_to_host(control, c);
    loss_scale_ = c[kCtlLossScale];
    good_steps_ = static_cast<std::int64_t>(c[kCtlGoodSteps]);
    skipped_ = static_cast<std::int64_t>(c[kCtlSkipped]);
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
    // the checks below read gradients back on the host: first wait for the gradients' collectives with the
    // rank timeout (NCCL's wait() only orders the device; a stalled peer would block the read forever)
    if (Communicator* c = engine_.communicator(); c && c->world_size() > 1) c->synchronize();
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
    float inv = static_cast<float>(1.0 / loss_scale_);
    if (grad_clip_ > 0) {
        // torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1
        double sq = 0;
        for (const Tensor& g : grads) sq += device_.sum_squares(g);
        if (strategy_.tp_head > 1) {  // the body's once (a replica on every rank), every rank's head slice
            double head = 0;
            for (const TpTensor& t : tp_.tensors)
                if (t.head) head += device_.sum_squares(model_->gradients().view(t.run_offset, {t.numel}));
            sq = std::max(0.0, sq - head) + engine_.communicator()->all_reduce_value(head, ReduceOp::sum);
        }
        // sharded gradients: each rank holds a part of the global norm's sum
        if (Communicator* c = engine_.communicator(); c && c->world_size() > 1 && strategy_.sharded())
            sq = c->all_reduce_value(sq, ReduceOp::sum);
        grad_norm_ = std::sqrt(sq) / loss_scale_;
        const double coef = grad_clip_ / (grad_norm_ + 1e-6);
        if (coef < 1.0) inv = static_cast<float>(coef / loss_scale_);
    }
    if (strategy_.offload_optimizer) {
        std::vector<Tensor> host_grads = engine_.pieces_of(host_grads_), masters = engine_.pieces_of(master_);
        for (std::size_t i = 0; i < grads.size(); ++i) device_.copy_to_host(grads[i], host_grads[i].raw());
        optimizer_->step(masters, host_grads, lr, inv, engine_.piece_flat_offsets());
        if (host_params_.defined()) {
            host_.copy(master_, host_params_);
            const std::vector<Tensor> staged = engine_.pieces_of(host_params_);
            for (std::size_t i = 0; i < params.size(); ++i) device_.copy_from_host(staged[i].raw(), params[i]);
        } else {
            for (std::size_t i = 0; i < params.size(); ++i) device_.copy_from_host(masters[i].raw(), params[i]);
        }
    } else if (strategy_.master_weights) {
        std::vector<Tensor> masters = engine_.pieces_of(master_);
        optimizer_->step(masters, grads, lr, inv, engine_.piece_flat_offsets());
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy(masters[i], params[i]);
    } else {
        optimizer_->step(params, grads, lr, inv, engine_.piece_flat_offsets());
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
    if (tp_head()) return tp_consolidated_state_dict(alloc);
    return engine_.consolidated_state_dict(alloc);
}

}  // namespace hr

namespace hr {

std::vector<TrainingState::StateBuffer> TrainingState::state_buffers() const {
    std::vector<StateBuffer> out;
    Backend* holder = strategy_.offload_optimizer ? &host_ : &device_;
    if (master_.defined()) out.push_back({"master", master_, holder});
    for (auto& [name, t] : optimizer_->state()) out.push_back({"optimizer." + name, t, holder});
    return out;
}

std::vector<TrainingState::ResumeTensor> TrainingState::resume_tensors() const {
    const std::int64_t canonical = tp_head() ? tp_.canonical_numel : make_flat_remap(*model_).canonical_numel;
    std::vector<ResumeTensor> out;
    for (const StateBuffer& b : state_buffers()) out.push_back({b.name, b.tensor.dtype(), {canonical}});
    return out;
}

std::vector<TrainingState::CheckpointTensor> TrainingState::checkpoint_tensors() const {
    std::vector<CheckpointTensor> out;
    for (const NamedTensor& nt : model_->state_dict()) {
        Shape shape = nt.tensor.shape();
        for (const TpTensor& t : tp_.tensors)  // a split head's tensors are saved whole
            if (t.head && t.name == nt.name) shape = t.full_shape;
        out.push_back({"model." + nt.name, nt.tensor.dtype(), shape, true, nt.tied});
    }
    for (const ResumeTensor& r : resume_tensors()) out.push_back({r.name, r.dtype, r.shape, false, false});
    return out;
}

std::vector<TrainingState::HostTensor> TrainingState::gather_checkpoint() {
    if (tp_head()) return tp_gather_checkpoint();
    const bool root = strategy_.rank == 0;
    const bool zero3 = strategy_.shard == ShardStage::zero3;
    const FlatRemap m = make_flat_remap(*model_);
    const std::size_t pes = dtype_size(strategy_.compute_dtype);
    std::vector<HostTensor> out;
    // the model: rank 0's tensors (every rank's parameters are the same between steps), zero3's gathered
    std::vector<std::uint8_t> params;
    if (zero3) {
        if (root) params.assign(static_cast<std::size_t>(m.run_numel) * pes, 0);
        engine_.gather_parameters(root ? params.data() : nullptr);
    }
    std::size_t k = 0;
    std::vector<std::pair<const void*, std::int64_t>> placed;  // (view, flat offset) of each untied tensor
    for (const NamedTensor& nt : model_->state_dict()) {
        std::int64_t at = nt.trainable && !nt.tied ? m.tensor_offsets[k++] : -1;
        if (nt.trainable && !nt.tied) placed.push_back({nt.tensor.raw(), at});
        if (nt.tied)  // a tied head: the token embedding's weight (the same view), from its place
            for (const auto& [view, off] : placed)
                if (view == nt.tensor.raw()) at = off;
        if (zero3 && nt.trainable && at < 0) throw Error("internal: no flat place for checkpoint tensor " + nt.name);
        if (!root) continue;
        HostTensor h{"model." + nt.name, nt.tensor.dtype(), nt.tensor.shape(), {}};
        h.data.resize(nt.tensor.nbytes());
        if (zero3 && nt.trainable)
            std::memcpy(h.data.data(), params.data() + static_cast<std::size_t>(at) * pes, h.data.size());
        else
            device_.copy_to_host(nt.tensor, h.data.data());
        out.push_back(std::move(h));
    }
    params.clear();
    params.shrink_to_fit();
    // master copy and optimizer state: gathered into the run's flat layout, then one process's
    for (const StateBuffer& b : state_buffers()) {
        const std::size_t es = dtype_size(b.tensor.dtype());
        std::vector<std::uint8_t> flat;
        if (root) flat.assign(static_cast<std::size_t>(m.run_numel) * es, 0);
        engine_.gather_state(b.tensor, *b.holder, root ? flat.data() : nullptr);
        if (root) out.push_back({b.name, b.tensor.dtype(), {m.canonical_numel}, flat_to_canonical(m, flat.data(), es)});
    }
    return out;
}

void TrainingState::restore_checkpoint(const std::function<const std::uint8_t*(const std::string&)>& data) {
    if (tp_head()) return tp_restore_checkpoint(data);
    const bool zero3 = strategy_.shard == ShardStage::zero3;
    const FlatRemap m = make_flat_remap(*model_);
    const std::size_t pes = dtype_size(strategy_.compute_dtype);
    std::vector<std::uint8_t> params;
    if (zero3) params.assign(static_cast<std::size_t>(m.run_numel) * pes, 0);
    std::size_t k = 0;
    for (NamedTensor& nt : model_->state_dict()) {
        const std::int64_t at = nt.trainable && !nt.tied ? m.tensor_offsets[k++] : -1;
        if (nt.tied) continue;  // the token embedding's weight, restored under its own name
        const std::uint8_t* src = data("model." + nt.name);
        if (!src) throw Error("internal: checkpoint tensor model." + nt.name + " missing after the checks");
        if (zero3 && nt.trainable)
            std::memcpy(params.data() + static_cast<std::size_t>(at) * pes, src, nt.tensor.nbytes());
        else
            device_.copy_from_host(src, nt.tensor);
    }
    if (zero3) engine_.load_parameters(params.data());
    for (StateBuffer& b : state_buffers()) {
        const std::uint8_t* src = data(b.name);
        if (!src) throw Error("internal: checkpoint tensor " + b.name + " missing after the checks");
        const std::vector<std::uint8_t> flat = canonical_to_flat(m, src, dtype_size(b.tensor.dtype()));
        engine_.scatter_state(flat.data(), b.tensor, *b.holder);
    }
}

TrainingState::ResumeScalars TrainingState::resume_scalars() const {
    return {loss_scale_, good_steps_, skipped_, optimizer_->step_count()};
}

void TrainingState::restore_scalars(const ResumeScalars& s) {
    loss_scale_ = s.loss_scale;
    good_steps_ = s.good_steps;
    skipped_ = s.skipped;
    optimizer_->set_step_count(s.optimizer_steps);
}

void TrainingState::sync_master_from_params() {
    if (!master_.defined()) return;
    const std::vector<Tensor> params = engine_.param_pieces();
    if (strategy_.offload_optimizer) {
        const std::vector<Tensor> staged = engine_.pieces_of(host_grads_);
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy_to_host(params[i], staged[i].raw());
        host_.copy(host_grads_, master_);
    } else {
        std::vector<Tensor> masters = engine_.pieces_of(master_);
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy(params[i], masters[i]);
    }
}

// --- a tensor-parallel head -------------------------------------------------------------------------

void TrainingState::tp_layout(bool dry_run) {
    // one process's model of the whole spec, counted only (no memory): its flat layout is the canonical one
    CountingAllocator counting(device_.device());
    ModelOptions mo;
    mo.batch = 1;
    mo.dtype = strategy_.compute_dtype;
    mo.allocator = &counting;
    mo.dry_run = true;
    Model whole(tp_.full_spec, device_, mo);
    const FlatRemap full = make_flat_remap(whole), mine = make_flat_remap(*model_);
    tp_.canonical_numel = full.canonical_numel;
    const std::vector<NamedTensor> a = model_->state_dict(), b = whole.state_dict();
    if (a.size() != b.size()) throw Error("internal: a split head changed the model's tensors");
    // the head is the last layer: its node is the last one depth-first, its tensors the state_dict's last
    const int head_layer = a.empty() ? -1 : a.back().layer;
    std::size_t k = 0;
    tp_.tensors.clear();
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!a[i].trainable || a[i].tied) continue;
        TpTensor t;
        t.name = a[i].name;
        t.run_offset = mine.tensor_offsets[k];
        t.canonical_offset = full.tensor_offsets[k];
        ++k;
        t.numel = a[i].tensor.numel();
        t.full_numel = b[i].tensor.numel();
        t.full_shape = b[i].tensor.shape();
        t.head = a[i].layer == head_layer;
        if (t.head) {
            if (t.full_shape.empty() || t.full_shape[0] != tp_.slice.total)
                throw Error("internal: head tensor " + t.name + " is not split by rows");
            t.per_row = t.full_numel / tp_.slice.total;
        } else if (t.numel != t.full_numel) {
            throw Error("internal: tensor " + t.name + " differs outside the split head");
        }
        tp_.tensors.push_back(t);
    }
    (void)dry_run;
}

std::vector<std::uint8_t> TrainingState::tp_gather_rows(const std::uint8_t* mine, std::size_t per_row_bytes) {
    const TpHeadSlice& sl = tp_.slice;
    const bool root = strategy_.rank == 0;
    std::vector<std::uint8_t> out;
    if (root) {
        out.assign(static_cast<std::size_t>(sl.total) * per_row_bytes, 0);
        std::memcpy(out.data() + static_cast<std::size_t>(sl.first) * per_row_bytes, mine,
                    static_cast<std::size_t>(sl.count) * per_row_bytes);
    }
    std::vector<std::uint8_t> rows;
    for (int r = 1; r < sl.ranks; ++r) {
        const std::size_t bytes = static_cast<std::size_t>(sl.count_of(r)) * per_row_bytes;
        if (r == strategy_.rank) rows.assign(mine, mine + bytes);
        else rows.assign(bytes, 0);
        engine_.broadcast_bytes(rows.data(), bytes, r);
        if (root) std::memcpy(out.data() + static_cast<std::size_t>(sl.first_of(r)) * per_row_bytes, rows.data(), bytes);
    }
    return out;
}

std::vector<TrainingState::HostTensor> TrainingState::tp_gather_checkpoint() {
    const bool root = strategy_.rank == 0;
    std::vector<HostTensor> out;
    for (const NamedTensor& nt : model_->state_dict()) {
        std::vector<std::uint8_t> mine(nt.tensor.nbytes());
        device_.copy_to_host(nt.tensor, mine.data());
        const TpTensor* head = nullptr;
        for (const TpTensor& t : tp_.tensors)
            if (t.head && t.name == nt.name) head = &t;
        if (head) {
            const std::size_t per_row = static_cast<std::size_t>(head->per_row) * dtype_size(nt.tensor.dtype());
            std::vector<std::uint8_t> whole = tp_gather_rows(mine.data(), per_row);
            if (root) out.push_back({"model." + nt.name, nt.tensor.dtype(), head->full_shape, std::move(whole)});
        } else if (root) {
            out.push_back({"model." + nt.name, nt.tensor.dtype(), nt.tensor.shape(), std::move(mine)});
        }
    }
    // master copy and optimizer state: this rank's flat buffer, into one process's layout with the whole head
    for (const StateBuffer& b : state_buffers()) {
        const std::size_t es = dtype_size(b.tensor.dtype());
        std::vector<std::uint8_t> flat(b.tensor.nbytes());
        b.holder->copy_to_host(b.tensor, flat.data());
        std::vector<std::uint8_t> canonical;
        if (root) canonical.assign(static_cast<std::size_t>(tp_.canonical_numel) * es, 0);
        for (const TpTensor& t : tp_.tensors) {
            const std::uint8_t* src = flat.data() + static_cast<std::size_t>(t.run_offset) * es;
            if (t.head) {
                std::vector<std::uint8_t> whole = tp_gather_rows(src, static_cast<std::size_t>(t.per_row) * es);
                if (root) std::memcpy(canonical.data() + static_cast<std::size_t>(t.canonical_offset) * es, whole.data(),
                                      whole.size());
            } else if (root) {
                std::memcpy(canonical.data() + static_cast<std::size_t>(t.canonical_offset) * es, src,
                            static_cast<std::size_t>(t.numel) * es);
            }
        }
        if (root) out.push_back({b.name, b.tensor.dtype(), {tp_.canonical_numel}, std::move(canonical)});
    }
    return out;
}

void TrainingState::tp_restore_checkpoint(const std::function<const std::uint8_t*(const std::string&)>& data) {
    const TpHeadSlice& sl = tp_.slice;
    for (NamedTensor& nt : model_->state_dict()) {
        if (nt.tied) continue;
        const std::uint8_t* src = data("model." + nt.name);
        if (!src) throw Error("internal: checkpoint tensor model." + nt.name + " missing after the checks");
        for (const TpTensor& t : tp_.tensors)  // this rank's rows of a whole head tensor
            if (t.head && t.name == nt.name)
                src += static_cast<std::size_t>(sl.first * t.per_row) * dtype_size(nt.tensor.dtype());
        device_.copy_from_host(src, nt.tensor);
    }
    for (StateBuffer& b : state_buffers()) {
        const std::uint8_t* src = data(b.name);
        if (!src) throw Error("internal: checkpoint tensor " + b.name + " missing after the checks");
        const std::size_t es = dtype_size(b.tensor.dtype());
        std::vector<std::uint8_t> flat(b.tensor.nbytes(), 0);
        for (const TpTensor& t : tp_.tensors) {
            const std::int64_t from = t.canonical_offset + (t.head ? sl.first * t.per_row : 0);
            std::memcpy(flat.data() + static_cast<std::size_t>(t.run_offset) * es,
                        src + static_cast<std::size_t>(from) * es, static_cast<std::size_t>(t.numel) * es);
        }
        b.holder->copy_from_host(flat.data(), b.tensor);
    }
}

std::vector<NamedTensor> TrainingState::tp_consolidated_state_dict(Allocator& alloc) {
    // the head's tensors whole on every rank: each rank's rows broadcast from it into one buffer
    std::vector<NamedTensor> out = model_->state_dict();
    Communicator& comm = *engine_.communicator();
    const TpHeadSlice& sl = tp_.slice;
    for (NamedTensor& nt : out) {
        const TpTensor* head = nullptr;
        for (const TpTensor& t : tp_.tensors)
            if (t.head && t.name == nt.name) head = &t;
        if (!head) continue;
        Tensor whole = Tensor::empty(alloc, head->full_shape, nt.tensor.dtype(), MemCategory::communication);
        std::vector<CommHandle> hs;
        for (int r = 0; r < sl.ranks; ++r) {
            Tensor rows = whole.view(sl.first_of(r) * head->per_row, {sl.count_of(r) * head->per_row});
            if (r == sl.rank) device_.copy(nt.tensor.reshape({nt.tensor.numel()}), rows);
            hs.push_back(comm.broadcast(rows, r));
        }
        for (auto& h : hs) h.wait();
        comm.synchronize();
        nt.tensor = whole;
    }
    return out;
}

}  // namespace hr
