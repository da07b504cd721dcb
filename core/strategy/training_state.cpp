#include "strategy/training_state.h"

#include "memory/step_timeline.h"

#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_map>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "nn/backend_ops.h"
#include "memory/counting_allocator.h"
#include "nn/transformer_spec.h"
#include "strategy/model_part.h"

namespace hr {

TrainingState::TrainingState(const ModelSpec& full_spec, const OptimizerConfig& optimizer, const ResolvedStrategy& s,
                             std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host,
                             Allocator& host_alloc, bool dry_run, Communicator* comm)
    : strategy_(s), full_spec_(full_spec), seed_(seed), device_(device), host_(host) {
    build_rank_groups(full_spec, dry_run, comm);
    // this rank's part of the whole model (strategy/model_part.h): its split head's rows or its stage's layers;
    // a split head's input gradient is summed over the head's ranks before the body's backward
    RankPlace place;
    place.head = tp_.slice;
    place.split = pp_.split;
    place.stage = pp_.stage;
    place.head_copy = pp_.head_copy;
    std::function<void(Tensor&)> head_grad_sum;
    if (s.tp_head > 1 && !dry_run)
        head_grad_sum = [this](Tensor& dx) {
            if (recorder_) timeline_head_reduce(*recorder_);
            tp_.heads->all_reduce(dx, ReduceOp::sum).wait();
        };
    const RankModelPart mine = rank_model_part(full_spec, resolved_layout(s), place, std::move(head_grad_sum));
    const ModelSpec& spec = mine.spec;
    const bool last_stage = s.pipeline == 1 || pp_.stage == s.pipeline - 1;
    // (K x T: the last stage's head is split, the earlier stages are whole on each of their T ranks)
    const bool split_head = s.tp_head > 1 && last_stage;
    // what the model, its loss and its optimizer need of the backends, before anything is allocated
    check_backend_needs(training_backend_needs(spec, optimizer, s.compute_dtype, s.master_weights, s.offload_optimizer),
                        device, host);
    ModelOptions mo;
    mo.batch = s.micro_batch;
    mo.dtype = s.compute_dtype;
    mo.seed = seed;
    mo.checkpoint_blocks = s.checkpoint_blocks;
    mo.recompute_attention = s.recompute_attention;
    mo.lora_rank = s.lora_rank;
    mo.lora_alpha = s.lora_alpha;
    mo.lora_targets = s.lora_targets;
    mo.lora_base_bits = s.lora_base_bits;
    mo.allocator = &device_alloc;
    mo.dry_run = dry_run;
    // sharding (strategy/sharding.h): units padded to split evenly; zero2 keeps no flat gradient buffer,
    // zero3 no flat parameter buffer either (the engine binds each unit's views to its buffers)
    mo.unit_pad_multiple = s.sharded() ? s.data_world() : 1;  // (over a layout's replicas: ZeRO-1 in each part)
    mo.allocate_grads = s.shard < ShardStage::zero2;
    mo.allocate_params = s.shard < ShardStage::zero3;
    mo.hooks = s.shard != ShardStage::none && s.pipeline == 1 ? &engine_ : nullptr;  // (pipelines: below)
    mo.part = mine.part;
    if (split_head && dry_run)  // the step's memory timeline: the planner's walk reports the head's reduce
        mo.part.head_input_grad_walk = [this](StepRecorder& r) { timeline_head_reduce(r); };
    model_ = std::make_unique<Model>(spec, device, mo);
    if (s.pipeline > 1) {
        // one model per micro-batch in flight (1F1B: K - s), on the first one's parameters, gradients and buffers
        const int M = pipeline_in_flight(s.pipeline, pp_.stage, static_cast<int>(s.accumulate));
        ModelOptions more = mo;
        more.allocate_params = more.allocate_grads = false;
        more.part = further_model_part(mo.part, *model_);
        for (int i = 1; i < M; ++i) {
            auto inst = std::make_unique<Model>(spec, device, more);
            for (std::size_t u = 0; u < model_->param_units().size(); ++u) {
                const ParamUnit& pu = model_->param_units()[u];
                inst->bind_unit(static_cast<int>(u), model_->parameters().view(pu.offset, {pu.numel}),
                                model_->gradients().view(pu.offset, {pu.numel}));
            }
            inst->share_buffers_with(*model_);
            pp_.extra.push_back(std::move(inst));
        }
        // per model: the stage's input (kept for its backward); after stage 0, the input's gradient sent back,
        // before the last stage, the output's gradient received: one of each (a send has gone before the
        // next action runs, pipeline_exchanges)
        const DType in_dt = model_->takes_tokens() ? DType::i64 : s.compute_dtype;
        for (int i = 0; i < M; ++i)
            pp_.input.push_back(Tensor::empty(device_alloc, with_batch(s.micro_batch, spec.input_shape), in_dt,
                                              MemCategory::activations));
        if (pp_.stage > 0)
            pp_.dx = Tensor::empty(device_alloc, with_batch(s.micro_batch, spec.input_shape), s.compute_dtype,
                                   MemCategory::communication);
        if (!last_stage) {
            const Shape out = pipeline_layer_output(full_spec, pp_.split.first[static_cast<std::size_t>(pp_.stage) + 1] - 1);
            pp_.dy = Tensor::empty(device_alloc, with_batch(s.micro_batch, out), s.compute_dtype, MemCategory::communication);
        }
    }
    // (a pipeline's replicas reduce their stage's gradients in optimizer_step, over their own group: the
    // engine sees no stage; a split head's replicas alike)
    ResolvedStrategy engine_view = s;
    if (s.pipeline > 1 || s.tp_head > 1) engine_view.shard = ShardStage::none;
    engine_.attach(*model_, engine_view, comm, device, device_alloc, dry_run, &host, &host_alloc);
    if (zero_in_layout()) {  // ZeRO-1 over this part's replicas (rank_layout admits zero1 only)
        if (s.shard != ShardStage::zero1) throw Error("internal: only zero1 shards inside a layout across ranks");
        ResolvedStrategy replicas = s;
        replicas.world_size = s.data_world();
        replicas.rank = s.data_rank();
        replicas.tp_head = replicas.pipeline = 1;
        zero_engine_.attach(*model_, replicas, replicas_comm_.get(), device, device_alloc, dry_run, &host, &host_alloc);
    }
    build_optimizer_state(optimizer, full_spec, device_alloc, host_alloc, dry_run);
    build_step_buffers(spec, full_spec, device_alloc, host_alloc, last_stage, dry_run);
}


// The communicator groups of a layout across ranks (strategy/rank_layout.h): a split head's or pipeline
// stages' parts, their replicas' groups and a tied head's pair of ends.
void TrainingState::build_rank_groups(const ModelSpec& full_spec, bool dry_run, Communicator* comm) {
    const ResolvedStrategy& s = strategy_;
    // a layout across ranks times D data-parallel replicas (T x D, K x D): a group of each kind, the ranks of
    // this rank's replica (one a part: a part of the head, a stage) and this part's replicas (replicas_comm_)
    auto replica_groups = [&](int part) {
        std::unique_ptr<Communicator> parts = comm->split(s.data_rank(), part);
        replicas_comm_ = comm->split(part, s.data_rank());
        return parts;
    };
    // K pipeline stages x T split-head ranks (D = 1, rank_layout): the stages of this rank's part of the head
    // (rank = stage, this part's ranks of every stage) pass the activations; the last stage's T ranks split the
    // head and its loss. The earlier stages' T ranks run the same rows on the same parameters: replicas
    // without a reduction (the last stage's ranks all-reduce the head's input gradient, so each sends back
    // the same gradient), as a split head's body is (strategy/tp_head.h)
    if (s.tp_head > 1 && s.pipeline > 1) {
        tp_.slice = tp_head_slice(tp_head_outputs(full_spec, s.tp_head), s.tp_head, s.tp_rank());
        pp_.split.first = s.stage_first;
        pp_.stage = s.stage();
        pp_.head_copy = false;  // (a split head is untied: tp_head_outputs)
        if (dry_run) {
            tp_.heads = pp_.stages = comm;
            return;
        }
        if (!comm || comm->world_size() != s.world_size || s.data_world() != 1)
            throw Error("internal: pipeline stages with a split head need the run's communicator and no replicas");
        pp_.stages_comm = comm->split(s.tp_rank(), pp_.stage);
        pp_.stages = pp_.stages_comm.get();
        tp_.heads_comm = comm->split(pp_.stage, s.tp_rank());
        tp_.heads = tp_.heads_comm.get();
        return;
    }
    // a tensor-parallel head (strategy/tp_head.h): this rank builds the model with its slice of the head
    if (s.tp_head > 1) {
        tp_.slice = tp_head_slice(tp_head_outputs(full_spec, s.tp_head), s.tp_head, s.tp_rank());
        if (!dry_run && (!comm || comm->world_size() != s.world_size))
            throw Error("internal: a tensor-parallel head needs the run's communicator");
        if (!dry_run && s.data_world() > 1) {  // T parts x D replicas
            tp_.heads_comm = replica_groups(s.tp_rank());
            tp_.heads = tp_.heads_comm.get();
        } else {
            tp_.heads = comm;
        }
    }
    // pipeline stages (strategy/pipeline.h): this rank builds its stage's layers
    if (s.pipeline > 1) {
        pp_.split.first = s.stage_first;
        pp_.stage = s.stage();
        if (!dry_run && (!comm || comm->world_size() != s.world_size))
            throw Error("internal: pipeline stages need the run's communicator");
        if (!dry_run && s.data_world() > 1) {  // K stages x D replicas
            pp_.stages_comm = replica_groups(pp_.stage);
            pp_.stages = pp_.stages_comm.get();
        } else {
            pp_.stages = comm;
        }
        // a tied head (every GPT preset): stage 0's embedding and the last stage's copy of it sum their
        // gradients; every rank takes part in the split, the others in groups of one
        if (!dry_run && pipeline_has_tied_head(full_spec)) {
            const bool ends = pp_.stage == 0 || pp_.stage == s.pipeline - 1;
            pp_.tied_comm = comm->split(ends ? s.data_rank() : s.data_world() + s.rank, pp_.stage);
        }
        pp_.head_copy = pipeline_copies_tied_head(full_spec, pp_.split, pp_.stage);
    }
}

// The optimizer's state over what this rank updates (the whole flat buffer or its shard), on the device
// or offloaded to the host, with its master copy, and the weight decay's segments.
void TrainingState::build_optimizer_state(const OptimizerConfig& optimizer, const ModelSpec& full_spec,
                                          Allocator& device_alloc, Allocator& host_alloc, bool dry_run) {
    const ResolvedStrategy& s = strategy_;
    Backend& device = device_;
    Backend& host = host_;
    (void)device;
    (void)host;
    grad_clip_ = optimizer.grad_clip;
    // the optimizer's state covers what this rank updates: the whole flat buffer, or its shard
    const ShardEngine& sh = sharder();
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
        for (const auto& p : model_->decay_segments()) seg.push_back({p.begin, p.end, p.decay});
        optimizer_->set_decay_segments(std::move(seg));
    }
}

// The step's buffers: the batch's rows, the landing buffers of overlapped uploads, a split head's loss
// reductions, the layout map and the device step's control and figures.
void TrainingState::build_step_buffers(const ModelSpec& spec, const ModelSpec& full_spec, Allocator& device_alloc,
                                       Allocator& host_alloc, bool last_stage, bool dry_run) {
    const ResolvedStrategy& s = strategy_;
    Backend& device = device_;
    Backend& host = host_;
    (void)device;
    (void)host;
    const DType dt = s.compute_dtype;
    const std::int64_t m = s.micro_batch;
    const int K = spec.num_classes;
    loss_scale_ = s.loss_scaling ? s.loss_scale_init : 1.0;
    // the batch buffers hold the data's rows (every pipeline stage has them: the first reads the inputs,
    // the last the labels)
    const Shape data_shape = full_spec.input_shape;
    if (is_token_model(full_spec)) {
        // token ids in, next tokens as targets; the gradient of the loss overwrites the logits
        x_staging = Tensor::empty(device_alloc, with_batch(m, data_shape), DType::i64, MemCategory::data);
        x_model = x_staging;
        labels = Tensor::empty(device_alloc, with_batch(m, data_shape), DType::i64, MemCategory::data);
    } else {
        x_staging = Tensor::empty(device_alloc, with_batch(m, data_shape), DType::f32, MemCategory::data);
        x_model = dt == DType::f32 ? x_staging
                                   : Tensor::empty(device_alloc, with_batch(m, data_shape), dt, MemCategory::data);
        labels = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
        if (spec.loss.type == "mse") {
            target_staging = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
            target_model =
                dt == DType::f32 ? target_staging : Tensor::empty(device_alloc, {m, K}, dt, MemCategory::data);
        }
        if (last_stage) dlogits = Tensor::empty(device_alloc, {m, K}, dt, MemCategory::workspace);
    }
    // a landing buffer for uploads that overlap the running step (a device other than the host's
    // memory only; the planner's GPU allocator reports a CUDA device too, so it counts them); token
    // models upload through x_staging / labels directly (the device step is for image batches)
    if (!device_alloc.device().is_cpu() && !model_->takes_tokens() && s.pipeline == 1) {
        landing_x_ = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::f32, MemCategory::data);
        landing_labels_ = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
        if (spec.loss.type == "mse") landing_target_ = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
    }
    if (s.tp_head > 1 && last_stage) {
        // the split loss's reductions (3 floats a row) and, on a GPU, the host copy it works in
        // (a language model's rows are its tokens; K x T: the last stage takes activations, not tokens)
        const std::int64_t rows = m * (is_token_model(full_spec) ? full_spec.input_shape[0] : 1);
        tp_.loss.reduce = Tensor::empty(device_alloc, {3 * rows}, DType::f32, MemCategory::communication);
        if (device_alloc.device().is_cpu()) {
            tp_.loss.host = tp_.loss.reduce;
        } else {
            tp_.loss.host = Tensor::empty(host_alloc, {3 * rows}, DType::f32, MemCategory::communication);
            tp_.loss.staging = Tensor::empty(host_alloc, {rows * tp_.slice.count}, dt, MemCategory::communication);
        }
    }
    if (s.tp_head > 1 || s.pipeline > 1) build_layout(full_spec);
    if (pp_.tied_comm)  // the embedding's (stage 0) or the copy's (last stage) gradients, when they train
        for (const LayoutEntry& e : layout_)
            if (e.run_offset >= 0 && (e.copy || e.embedding)) {
                pp_.tied_offset = e.run_offset;
                pp_.tied_numel = e.numel;
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
           strategy_.pipeline == 1 &&
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
    if (recorder_) recorder_->set_micro(device_micro_++);
    Tensor logits = model_->forward(xm, true, first_sample);
    if (recorder_) recorder_->phase(StepPhaseKind::loss);
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
    if (recorder_) mark_update_phases(*recorder_);
    device_micro_ = 0;
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

void TrainingState::set_step_recorder(StepRecorder* r) {
    recorder_ = r;
    model_->set_step_recorder(r);
    for (auto& m : pp_.extra) m->set_step_recorder(r);  // a pipeline stage's models in flight
    engine_.set_step_recorder(r);                         // zero3's gathers
}

CategoryBytes TrainingState::timeline_base(CategoryBytes live) const {
    at(live, MemCategory::activations) = 0;
    std::size_t& comm = at(live, MemCategory::communication);
    std::size_t idle = timeline_idle_bytes();
    if (tp_.loss.reduce.defined()) idle += tp_.loss.reduce.nbytes();  // in use in the loss (timeline_tp_loss_bytes)
    comm = comm > idle ? comm - idle : 0;
    return live;
}

void TrainingState::mark_update_phases(StepRecorder& r) const {
    // the gradients' collectives of optimizer_step: data-parallel replicas or shards, a tied head's two stages,
    // a split head's LoRA adapter (a pipeline or split head alone reduces nothing else there)
    if (strategy_.data_world() > 1 || strategy_.sharded() || pp_.tied_numel > 0 || tp_.lora_a_numel > 0)
        r.phase(StepPhaseKind::reduce);
    if (strategy_.offload_optimizer || strategy_.offload_parameters) r.phase(StepPhaseKind::offload);
    r.phase(StepPhaseKind::update);
}

void TrainingState::walk_step_timeline(StepRecorder& r) {
    if (pipelined()) {  // pipeline_step's schedule, its recorder calls in the same order
        const auto micro = strategy_.micro_batches();
        const int K = strategy_.pipeline, s = pp_.stage, M = static_cast<int>(pp_.input.size());
        const auto order = pipeline_schedule(K, s, static_cast<int>(micro.size()));
        const auto groups = pipeline_exchanges(K, s, static_cast<int>(micro.size()));
        for (std::size_t t = 0; t < order.size(); ++t) {
            timeline_pipeline_messages(r, groups[t], micro);
            const auto [forward, j] = order[t];
            const std::int64_t n = micro[static_cast<std::size_t>(j)].second;
            Model& mdl = j % M == 0 ? *model_ : *pp_.extra[static_cast<std::size_t>(j % M) - 1];
            r.set_micro(j);
            if (forward) {
                if (s == 0) timeline_pipeline_input(r, n, true);
                mdl.walk_forward_timeline(r, n);
            } else {
                if (s == K - 1) r.phase(StepPhaseKind::loss);
                mdl.walk_backward_timeline(r, n);
                timeline_pipeline_input(r, n, false);
            }
        }
        timeline_pipeline_messages(r, groups.back(), micro);
        mark_update_phases(r);
        return;
    }
    engine_.begin_timeline_walk();
    int j = 0;
    for (auto [r0, n] : strategy_.micro_batches()) {
        (void)r0;
        r.set_micro(j++);
        model_->walk_forward_timeline(r, n);
        r.phase(StepPhaseKind::loss);
        if (tp_head()) {  // tp_loss: its reduction buffer in use
            const std::int64_t b = timeline_tp_loss_bytes(n * (model_->takes_tokens() ? full_spec_.input_shape[0] : 1));
            r.use(MemCategory::communication, -1, b);
            r.use(MemCategory::communication, -1, -b);
        }
        model_->walk_backward_timeline(r, n);
    }
    mark_update_phases(r);
    engine_.walk_after_update(r);  // (optimizer_step's publish_parameters)
}

bool TrainingState::optimizer_step(double lr) {
    if (recorder_) mark_update_phases(*recorder_);
    engine_.finish_gradients();
    // data-parallel replicas of a pipeline or a split head: the part's gradients summed over them (each scaled
    // its loss by its share of the global batch)
    if (replicas_comm_) replicas_comm_->all_reduce(model_->gradients(), ReduceOp::sum).wait();
    // LoRA on a split head: the adapter A's gradient, each rank's part from its columns, summed (over the
    // replica's parts: after the replicas' sum, both are linear)
    if (tp_.lora_a_numel > 0) {
        Tensor g = model_->gradients().view(tp_.lora_a_offset, {tp_.lora_a_numel});
        tp_.heads->all_reduce(g, ReduceOp::sum).wait();
    }
    // a tied head: the embedding's gradient (stage 0) and its copy's (the last stage) summed, the one
    // gradient one process accumulates into the shared weight (after the replicas': both sums are linear)
    if (pp_.tied_numel > 0) {
        Tensor g = model_->gradients().view(pp_.tied_offset, {pp_.tied_numel});
        pp_.tied_comm->all_reduce(g, ReduceOp::sum).wait();
    }
    // the checks below read gradients back on the host: first wait for the gradients' collectives with the
    // rank timeout (NCCL's wait() only orders the device; a stalled peer would block the read forever)
    if (Communicator* c = engine_.communicator(); c && c->world_size() > 1) c->synchronize();
    ShardEngine& sh = sharder();  // (ZeRO inside a layout: this rank's shard of its part's all-reduced gradients)
    const std::vector<Tensor> grads = sh.grad_pieces();
    std::vector<Tensor> params = sh.param_pieces();
    if (strategy_.loss_scaling) {
        bool finite = true;
        for (const Tensor& g : grads) finite = finite && sh.pieces_holder().all_finite(g);
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
        if (zero_in_layout())  // the part's whole gradients (all-reduced over the replicas), as with dp
            sq = device_.sum_squares(model_->gradients());
        else
            for (const Tensor& g : grads) sq += engine_.pieces_holder().sum_squares(g);
        if (strategy_.tp_head > 1 && strategy_.pipeline > 1) {  // K x T: each stage's once, every head slice
            double head = 0;
            for (const LayoutEntry& t : layout_)
                if (t.rows && t.run_offset >= 0)
                    head += device_.sum_squares(model_->gradients().view(t.run_offset, {t.numel}));
            const double own = (strategy_.tp_rank() == 0 ? std::max(0.0, sq - head) : 0.0) + head;
            sq = engine_.communicator()->all_reduce_value(own, ReduceOp::sum);
        } else if (strategy_.tp_head > 1) {  // the body's once (a replica on every rank), every rank's head slice
            double head = 0;
            for (const LayoutEntry& t : layout_)
                if (t.rows && t.run_offset >= 0)
                    head += device_.sum_squares(model_->gradients().view(t.run_offset, {t.numel}));
            sq = std::max(0.0, sq - head) + tp_.heads->all_reduce_value(head, ReduceOp::sum);
        } else if (strategy_.pipeline > 1) {  // every stage's parameters are its own (once per replica)
            if (pp_.head_copy && pp_.tied_numel > 0)  // a tied head's copy: the embedding's gradient, counted there
                sq = std::max(0.0, sq - device_.sum_squares(model_->gradients().view(pp_.tied_offset, {pp_.tied_numel})));
            sq = engine_.communicator()->all_reduce_value(sq, ReduceOp::sum) / strategy_.data_world();
        }
        // sharded gradients: each rank holds a part of the global norm's sum
        if (Communicator* c = engine_.communicator(); c && c->world_size() > 1 && strategy_.sharded() && !zero_in_layout())
            sq = c->all_reduce_value(sq, ReduceOp::sum);
        grad_norm_ = std::sqrt(sq) / loss_scale_;
        const double coef = grad_clip_ / (grad_norm_ + 1e-6);
        if (coef < 1.0) inv = static_cast<float>(coef / loss_scale_);
    }
    if (strategy_.offload_parameters) {  // every piece is on the host: the update writes the parameters there
        std::vector<Tensor> masters = sh.pieces_of(master_);
        optimizer_->step(masters, grads, lr, inv, sh.piece_flat_offsets());
        for (std::size_t i = 0; i < params.size(); ++i) host_.copy(masters[i], params[i]);
    } else if (strategy_.offload_optimizer) {
        std::vector<Tensor> host_grads = sh.pieces_of(host_grads_), masters = sh.pieces_of(master_);
        for (std::size_t i = 0; i < grads.size(); ++i) device_.copy_to_host(grads[i], host_grads[i].raw());
        optimizer_->step(masters, host_grads, lr, inv, sh.piece_flat_offsets());
        if (host_params_.defined()) {
            host_.copy(master_, host_params_);
            const std::vector<Tensor> staged = sh.pieces_of(host_params_);
            for (std::size_t i = 0; i < params.size(); ++i) device_.copy_from_host(staged[i].raw(), params[i]);
        } else {
            for (std::size_t i = 0; i < params.size(); ++i) device_.copy_from_host(masters[i].raw(), params[i]);
        }
    } else if (strategy_.master_weights) {
        std::vector<Tensor> masters = sh.pieces_of(master_);
        optimizer_->step(masters, grads, lr, inv, sh.piece_flat_offsets());
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy(masters[i], params[i]);
    } else {
        optimizer_->step(params, grads, lr, inv, sh.piece_flat_offsets());
    }
    if (strategy_.loss_scaling && ++good_steps_ >= strategy_.loss_scale_growth_interval) {
        loss_scale_ *= 2;
        good_steps_ = 0;
    }
    engine_.publish_parameters();
    if (zero_in_layout()) zero_engine_.publish_parameters();  // the replicas' shards, all-gathered over them
    engine_.broadcast_buffers();
    // a stage's (a split head part's) batch-norm statistics: its first replica's (DDP's broadcast_buffers)
    if (replicas_comm_) {
        std::vector<CommHandle> hs;
        for (NamedTensor& t : model_->state_dict())
            if (t.is_buffer()) hs.push_back(replicas_comm_->broadcast(t.tensor, 0));
        for (auto& h : hs) h.wait();
    }
    return true;
}

std::vector<NamedTensor> TrainingState::consolidated_state_dict(Allocator& alloc) {
    if (spread()) return layout_consolidated_state_dict(alloc);
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
    const std::int64_t canonical = spread() ? canonical_numel_ : make_flat_remap(*model_).canonical_numel;
    std::vector<ResumeTensor> out;
    for (const StateBuffer& b : state_buffers()) out.push_back({b.name, b.tensor.dtype(), {canonical}});
    return out;
}

std::vector<TrainingState::CheckpointTensor> TrainingState::checkpoint_tensors() const {
    std::vector<CheckpointTensor> out;
    if (spread())  // the whole model's tensors, whichever rank holds them
        for (const LayoutEntry& e : layout_) out.push_back({"model." + e.name, e.dtype, e.full_shape, true, e.tied});
    else
        for (const NamedTensor& nt : model_->state_dict())
            out.push_back({"model." + nt.name, nt.tensor.dtype(), nt.tensor.shape(), true, nt.tied});
    for (const ResumeTensor& r : resume_tensors()) out.push_back({r.name, r.dtype, r.shape, false, false});
    return out;
}

std::vector<TrainingState::HostTensor> TrainingState::gather_checkpoint() {
    if (spread()) return layout_gather_checkpoint();
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
    if (spread()) return layout_restore_checkpoint(data);
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
        if (!src && fp32_master(b.name)) {  // (a checkpoint without optimizer offload: the parameters themselves)
            sync_master_from_params();
            continue;
        }
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
    const ShardEngine& sh = sharder();
    const std::vector<Tensor> params = sh.param_pieces();
    if (strategy_.offload_parameters) {
        std::vector<Tensor> masters = sh.pieces_of(master_);
        for (std::size_t i = 0; i < params.size(); ++i) host_.copy(params[i], masters[i]);
    } else if (strategy_.offload_optimizer) {
        const std::vector<Tensor> staged = sh.pieces_of(host_grads_);
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy_to_host(params[i], staged[i].raw());
        host_.copy(host_grads_, master_);
    } else {
        std::vector<Tensor> masters = sh.pieces_of(master_);
        for (std::size_t i = 0; i < params.size(); ++i) device_.copy(params[i], masters[i]);
    }
}

// --- a layout across ranks: a split head, pipeline stages ----------------------------------------------

TrainingState::LoraCounts TrainingState::whole_lora_counts() const {
    LoraCounts c;
    if (!spread()) {
        c.adapters = model_->lora_param_count();
        c.frozen = model_->frozen_param_count();
        c.quantized = model_->quantized_param_count();
        return c;
    }
    for (const LayoutEntry& e : layout_) {
        if (e.tied) continue;  // the token embedding's weight, counted under its own name
        const std::int64_t values = shape_numel(e.quantized_bits ? e.quantized_shape : e.full_shape);
        if (e.trainable && is_lora_adapter(e.name)) c.adapters += values;
        if (e.frozen) c.frozen += values;
        if (e.quantized_bits) c.quantized += values;
    }
    return c;
}

void TrainingState::load_weights(const std::function<void(Model&)>& load) {
    if (!spread()) {
        load(*model_);
        sync_master_from_params();
        return;
    }
    auto host = make_cpu_backend(1, std::make_shared<MemoryLedger>());
    ModelOptions mo;
    mo.batch = 1;
    mo.dtype = strategy_.compute_dtype;
    mo.seed = seed_;
    mo.lora_rank = strategy_.lora_rank;
    mo.lora_alpha = strategy_.lora_alpha;
    mo.lora_targets = strategy_.lora_targets;
    mo.lora_base_bits = strategy_.lora_base_bits;
    Model whole(full_spec_, *host, mo);
    load(whole);
    std::map<std::string, Tensor> from;
    for (const NamedTensor& nt : whole.state_dict()) from[nt.name] = nt.tensor;
    std::map<std::string, const LayoutEntry*> entry;
    for (const LayoutEntry& e : layout_) entry[e.name] = &e;
    for (NamedTensor& nt : model_->state_dict()) {
        if (nt.tied) continue;  // the token embedding's weight, taken under its own name
        const auto w = from.find(nt.name);
        const auto e = entry.find(nt.name);
        if (w == from.end() || e == entry.end()) throw Error("internal: tensor " + nt.name + " is not the whole model's");
        // a split head's rows: this rank's, from its first
        const std::size_t skip = e->second->rows ? static_cast<std::size_t>(tp_.slice.first * e->second->per_row) *
                                                       dtype_size(nt.tensor.dtype())
                                                 : 0;
        if (w->second.dtype() != nt.tensor.dtype() || w->second.nbytes() < skip + nt.tensor.nbytes())
            throw Error("internal: tensor " + nt.name + " differs from the whole model's");
        device_.copy_from_host(static_cast<const std::uint8_t*>(w->second.raw()) + skip, nt.tensor);
    }
    sync_master_from_params();
}

namespace {

// What build_layout needs of one process's model of the whole spec: its flat layout and its tensors' names,
// shapes and kinds. A pure function of the spec and the options below; the planner's search builds hundreds
// of training states of one spec, so the last few are kept per thread (plain values: no tensor outlives the
// counting allocator of the model it came from).
struct WholeModelTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;
    std::int64_t numel = 0;
    bool trainable = false, tied = false, frozen = false;
    int layer = -1;
    int quantized_bits = 0;
    std::int64_t quantized_group = 0;
    Shape quantized_shape;
    bool is_buffer() const { return !trainable && !frozen; }
};
struct WholeModelLayout {
    ModelSpec spec;
    Device device;
    DType dtype = DType::f32;
    int lora_rank = 0, lora_targets = 0, lora_base_bits = 0;
    double lora_alpha = 0;
    FlatRemap full;
    std::vector<WholeModelTensor> all;
};

const WholeModelLayout& whole_model_layout(const ModelSpec& full_spec, Backend& backend, const ResolvedStrategy& s) {
    thread_local std::deque<WholeModelLayout> cache;  // most recent first
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->device == backend.device() && it->dtype == s.compute_dtype && it->lora_rank == s.lora_rank &&
            it->lora_alpha == s.lora_alpha && it->lora_targets == s.lora_targets &&
            it->lora_base_bits == s.lora_base_bits && it->spec == full_spec) {
            if (it != cache.begin()) {
                WholeModelLayout hit = std::move(*it);
                cache.erase(it);
                cache.push_front(std::move(hit));
            }
            return cache.front();
        }
    WholeModelLayout w;
    w.spec = full_spec;
    w.device = backend.device();
    w.dtype = s.compute_dtype;
    w.lora_rank = s.lora_rank;
    w.lora_alpha = s.lora_alpha;
    w.lora_targets = s.lora_targets;
    w.lora_base_bits = s.lora_base_bits;
    {
        // one process's model of the whole spec, counted only (no memory): its flat layout is the canonical one
        CountingAllocator counting(backend.device());
        ModelOptions mo;
        mo.batch = 1;
        mo.dtype = s.compute_dtype;
        mo.allocator = &counting;
        mo.dry_run = true;
        mo.lora_rank = s.lora_rank;  // (LoRA: the adapters are the trained tensors, the rest frozen)
        mo.lora_alpha = s.lora_alpha;
        mo.lora_targets = s.lora_targets;
        mo.lora_base_bits = s.lora_base_bits;
        Model whole(full_spec, backend, mo);
        w.full = make_flat_remap(whole);
        for (const NamedTensor& t : whole.state_dict()) {
            WholeModelTensor x;
            x.name = t.name;
            x.dtype = t.tensor.dtype();
            x.shape = t.tensor.shape();
            x.numel = t.tensor.numel();
            x.trainable = t.trainable;
            x.tied = t.tied;
            x.frozen = t.frozen;
            x.layer = t.layer;
            x.quantized_bits = t.quantized_bits;
            x.quantized_group = t.quantized_group;
            x.quantized_shape = t.quantized_shape;
            w.all.push_back(std::move(x));
        }
    }
    cache.push_front(std::move(w));
    if (cache.size() > 4) cache.pop_back();
    return cache.front();
}

}  // namespace

void TrainingState::build_layout(const ModelSpec& full_spec) {
    const WholeModelLayout& whole = whole_model_layout(full_spec, device_, strategy_);
    const FlatRemap& full = whole.full;
    const FlatRemap mine = make_flat_remap(*model_);
    canonical_numel_ = full.canonical_numel;
    const std::vector<WholeModelTensor>& all = whole.all;
    const std::vector<NamedTensor> here = model_->state_dict();
    // this rank's tensors by name (the last of a name, as a scan would find it): one lookup per tensor, not a
    // scan of them all (quadratic in the layers)
    std::unordered_map<std::string, const NamedTensor*> here_by_name;
    here_by_name.reserve(here.size());
    for (const NamedTensor& h : here) here_by_name[h.name] = &h;
    // where each stage's nodes start (the whole model's depth-first indices)
    std::vector<int> node_first;
    if (pipelined())
        node_first = pipeline_node_offsets(full_spec, pp_.split);
    // a split head is the last layer: its node is the last one depth-first
    const int head_layer = all.empty() ? -1 : all.back().layer;
    std::size_t k_all = 0, k_here = 0;  // indices into the flat remaps' tensor offsets
    const bool tied_head = pipelined() && pipeline_has_tied_head(full_spec);
    std::int64_t embedding_offset = -1;
    layout_.clear();
    for (const WholeModelTensor& t : all) {
        LayoutEntry e;
        e.name = t.name;
        e.dtype = t.dtype;
        e.full_shape = t.shape;
        e.trainable = t.trainable;
        e.tied = t.tied;
        e.frozen = t.frozen;
        e.quantized_bits = t.quantized_bits;
        e.quantized_group = t.quantized_group;
        e.quantized_shape = t.quantized_shape;
        if (pipelined()) {  // the stage's first replica (rank stage x D)
            int k_of = 0;
            for (int k = 0; k < strategy_.pipeline; ++k)
                if (t.layer >= node_first[static_cast<std::size_t>(k)]) k_of = k;
            e.owner = k_of * strategy_.tp_head * strategy_.data_world();  // (K x T: the stage's first rank)
        }
        if (strategy_.tp_head > 1 && t.layer == head_layer && !t.is_buffer() && !is_lora_a(t.name)) {
            // a split head's weight and bias, frozen too (LoRA), and its adapter B: by rows. Its adapter A
            // (R, in) is whole on every rank (its gradient is summed over them, optimizer_step)
            e.rows = true;
            e.per_row = t.numel / tp_.slice.total;
        }
        const auto found = here_by_name.find(t.name);
        const NamedTensor* local = found != here_by_name.end() ? found->second : nullptr;
        if (local) e.numel = local->tensor.numel();
        if ((e.owner < 0 || e.owner == strategy_.rank) && !local)
            throw Error("internal: tensor " + t.name + " is missing from this rank's model");
        // a tied head: its weight is the token embedding's (node 0); a stage's copy of it has flat room of
        // its own, whose state is the embedding's
        e.embedding = tied_head && t.layer == 0 && t.trainable && !t.tied;
        if (e.embedding) embedding_offset = full.tensor_offsets[k_all];
        if (t.trainable && !t.tied) {
            e.canonical_offset = full.tensor_offsets[k_all++];
            if (local) e.run_offset = mine.tensor_offsets[k_here++];
        } else if (t.tied && local && !local->tied) {
            e.copy = true;  // (frozen under LoRA: values only, restored from the embedding's when need be)
            if (local->trainable) {
                e.canonical_offset = embedding_offset;
                e.run_offset = mine.tensor_offsets[k_here++];
            }
        }
        if (!e.rows && local && e.numel != t.numel)
            throw Error("internal: tensor " + t.name + " differs from the whole model's");
        // a split head's adapter A: whole on every rank, each adds its columns' part of the gradient
        if (strategy_.tp_head > 1 && t.layer == head_layer && is_lora_a(t.name) && e.run_offset >= 0) {
            tp_.lora_a_offset = e.run_offset;
            tp_.lora_a_numel = e.numel;
        }
        layout_.push_back(e);
    }
    if (k_here != mine.tensor_offsets.size()) throw Error("internal: this rank's tensors are not the whole model's");
}

std::vector<std::uint8_t> TrainingState::gather_entry(const LayoutEntry& e, const std::uint8_t* mine, std::size_t es,
                                                      bool everywhere) {
    const bool root = strategy_.rank == 0 || everywhere;
    const std::size_t bytes = static_cast<std::size_t>(shape_numel(e.full_shape)) * es;
    std::vector<std::uint8_t> out;
    if (e.rows) {  // every part's rows: part t's from rank (last stage x T + t) x D (its first replica)
        const TpHeadSlice& sl = tp_.slice;
        const int D = strategy_.data_world();
        const int first = (strategy_.pipeline - 1) * strategy_.tp_head * D;  // the last stage's first rank
        const std::size_t per_row = static_cast<std::size_t>(e.per_row) * es;
        if (root) out.assign(bytes, 0);
        std::vector<std::uint8_t> rows;
        for (int r = 0; r < sl.ranks; ++r) {
            const std::size_t n = static_cast<std::size_t>(sl.count_of(r)) * per_row;
            const int holder = first + r * D;
            if (holder == 0 && !everywhere) {  // part 0's rows are on rank 0 already
                if (root) std::memcpy(out.data() + static_cast<std::size_t>(sl.first_of(r)) * per_row, mine, n);
                continue;
            }
            if (holder == strategy_.rank) rows.assign(mine, mine + n);
            else rows.assign(n, 0);
            engine_.broadcast_bytes(rows.data(), n, holder);
            if (root) std::memcpy(out.data() + static_cast<std::size_t>(sl.first_of(r)) * per_row, rows.data(), n);
        }
        return out;
    }
    if (e.owner < 0 || (e.owner == 0 && !everywhere)) {  // a replica (the same everywhere), or rank 0's for rank 0
        if (root) out.assign(mine, mine + bytes);
        return out;
    }
    std::vector<std::uint8_t> buf(bytes, 0);
    if (strategy_.rank == e.owner) std::memcpy(buf.data(), mine, bytes);
    engine_.broadcast_bytes(buf.data(), bytes, e.owner);
    if (root) out = std::move(buf);
    return out;
}

std::vector<TrainingState::HostTensor> TrainingState::layout_gather_checkpoint() {
    const bool root = strategy_.rank == 0;
    std::vector<HostTensor> out;
    std::map<std::string, Tensor> here;
    for (const NamedTensor& nt : model_->state_dict()) here[nt.name] = nt.tensor;
    for (const LayoutEntry& e : layout_) {
        std::vector<std::uint8_t> mine;
        if (auto it = here.find(e.name); it != here.end()) {
            mine.resize(it->second.nbytes());
            device_.copy_to_host(it->second, mine.data());
        }
        std::vector<std::uint8_t> whole = gather_entry(e, mine.empty() ? nullptr : mine.data(), dtype_size(e.dtype));
        if (root) out.push_back({"model." + e.name, e.dtype, e.full_shape, std::move(whole)});
    }
    // master copy and optimizer state: this rank's flat buffer, into one process's layout
    for (const StateBuffer& b : state_buffers()) {
        const std::size_t es = dtype_size(b.tensor.dtype());
        // (ZeRO inside the layout: this part's shards gathered over its replicas into its flat layout first)
        std::vector<std::uint8_t> flat(zero_in_layout() ? static_cast<std::size_t>(model_->flat_numel()) * es
                                                        : b.tensor.nbytes(),
                                       0);
        if (zero_in_layout()) zero_engine_.gather_state(b.tensor, *b.holder, flat.data());
        else b.holder->copy_to_host(b.tensor, flat.data());
        std::vector<std::uint8_t> canonical;
        if (root) canonical.assign(static_cast<std::size_t>(canonical_numel_) * es, 0);
        for (const LayoutEntry& e : layout_) {
            if (e.canonical_offset < 0 || e.copy) continue;  // (a tied head's copy: the embedding's state is written)
            // the entry's elements in the flat buffer, in this buffer's dtype
            const std::uint8_t* src = e.run_offset >= 0 ? flat.data() + static_cast<std::size_t>(e.run_offset) * es : nullptr;
            std::vector<std::uint8_t> whole = gather_entry(e, src, es);
            if (root)
                std::memcpy(canonical.data() + static_cast<std::size_t>(e.canonical_offset) * es, whole.data(), whole.size());
        }
        if (root) out.push_back({b.name, b.tensor.dtype(), {canonical_numel_}, std::move(canonical)});
    }
    return out;
}

void TrainingState::layout_restore_checkpoint(const std::function<const std::uint8_t*(const std::string&)>& data) {
    std::map<std::string, const LayoutEntry*> entry;
    for (const LayoutEntry& e : layout_) entry[e.name] = &e;
    auto first_row = [&](const LayoutEntry& e) -> std::int64_t { return e.rows ? tp_.slice.first * e.per_row : 0; };
    for (NamedTensor& nt : model_->state_dict()) {
        if (nt.tied) continue;  // the token embedding's weight, restored under its own name
        const auto it = entry.find(nt.name);
        const std::uint8_t* src = data("model." + nt.name);
        if (!src && it != entry.end() && it->second->copy)  // a tied head's copy: the embedding's values
            for (const LayoutEntry& e : layout_)
                if (e.embedding) src = data("model." + e.name);
        if (!src || it == entry.end()) throw Error("internal: checkpoint tensor model." + nt.name + " missing after the checks");
        device_.copy_from_host(src + static_cast<std::size_t>(first_row(*it->second)) * dtype_size(nt.tensor.dtype()),
                               nt.tensor);
    }
    for (StateBuffer& b : state_buffers()) {
        const std::uint8_t* src = data(b.name);
        if (!src && fp32_master(b.name)) {
            sync_master_from_params();
            continue;
        }
        if (!src) throw Error("internal: checkpoint tensor " + b.name + " missing after the checks");
        const std::size_t es = dtype_size(b.tensor.dtype());
        std::vector<std::uint8_t> flat(
            zero_in_layout() ? static_cast<std::size_t>(model_->flat_numel()) * es : b.tensor.nbytes(), 0);
        for (const LayoutEntry& e : layout_) {
            if (e.run_offset < 0) continue;
            std::memcpy(flat.data() + static_cast<std::size_t>(e.run_offset) * es,
                        src + static_cast<std::size_t>(e.canonical_offset + first_row(e)) * es,
                        static_cast<std::size_t>(e.numel) * es);
        }
        if (zero_in_layout()) zero_engine_.scatter_state(flat.data(), b.tensor, *b.holder);  // this rank's shard
        else b.holder->copy_from_host(flat.data(), b.tensor);
    }
}

std::vector<NamedTensor> TrainingState::layout_consolidated_state_dict(Allocator& alloc) {
    // every tensor whole on every rank (as zero3's): the others' parts pass through host memory
    std::map<std::string, NamedTensor> here;
    for (const NamedTensor& nt : model_->state_dict()) here[nt.name] = nt;
    std::vector<NamedTensor> out;
    for (const LayoutEntry& e : layout_) {
        const auto it = here.find(e.name);
        if (it != here.end() && !e.rows) {  // this rank's own, whole
            if (e.owner >= 0) {  // a stage's: the others receive it (collective)
                std::vector<std::uint8_t> bytes(it->second.tensor.nbytes());
                device_.copy_to_host(it->second.tensor, bytes.data());
                gather_entry(e, bytes.data(), dtype_size(e.dtype), true);
            }
            out.push_back(it->second);
            out.back().tied = e.tied;  // (a stage's copy of a tied head is the embedding's weight again)
            continue;
        }
        std::vector<std::uint8_t> mine;
        if (it != here.end()) {
            mine.resize(it->second.tensor.nbytes());
            device_.copy_to_host(it->second.tensor, mine.data());
        }
        std::vector<std::uint8_t> whole =
            gather_entry(e, mine.empty() ? nullptr : mine.data(), dtype_size(e.dtype), true);
        NamedTensor nt;
        nt.name = e.name;
        nt.trainable = e.trainable;
        nt.tied = e.tied;
        nt.quantized_bits = e.quantized_bits;
        nt.quantized_group = e.quantized_group;
        nt.quantized_shape = e.quantized_shape;
        nt.tensor = Tensor::empty(alloc, e.full_shape, e.dtype, MemCategory::communication);
        device_.copy_from_host(whole.data(), nt.tensor);
        out.push_back(nt);
    }
    return out;
}

// --- pipeline stages ----------------------------------------------------------------------------------

// A split head: the loss's reductions pass through tp_.loss.reduce, 3 floats a row of logits, in use while
// tp_loss runs; the head's input gradient is all-reduced in place (the model's gradient buffer): a phase.
std::int64_t TrainingState::timeline_tp_loss_bytes(std::int64_t rows) const { return rows * 3 * 4; }

void TrainingState::timeline_head_reduce(StepRecorder& r) const {
    r.phase(StepPhaseKind::reduce, -1, -1, "head input gradient");
}

LossResult TrainingState::tp_loss(const Tensor& logits, const Tensor& labels, Tensor grad, float grad_scale) {
    const std::int64_t b = recorder_ && grad.defined() ? timeline_tp_loss_bytes(logits.numel() / logits.dim(-1)) : 0;
    if (b) recorder_->use(MemCategory::communication, -1, b);
    const LossResult l = tp_cross_entropy(device_, *tp_.heads, tp_.slice, logits, labels, label_smoothing_, grad,
                                          grad_scale, tp_.loss);
    if (b) recorder_->use(MemCategory::communication, -1, -b);
    return l;
}

std::int64_t TrainingState::pipeline_input_bytes(std::int64_t n) const {
    const Tensor& in = pp_.input.front();
    return static_cast<std::int64_t>(in.nbytes()) / in.dim(0) * n;
}

// What a stage's step makes live beyond its models' own tensors: the input of each micro-batch in flight
// (pp_.input, category activations), from its receive (the first stage: its copy) to its backward. The
// gradients on the wire go through pp_.dx and pp_.dy, one buffer each, allocated up front and counted in
// the base (communication): their phases have no events.
void TrainingState::timeline_pipeline_messages(StepRecorder& r, const std::vector<PipelineMessage>& group,
                                               const std::vector<std::pair<std::int64_t, std::int64_t>>& micro) const {
    for (const PipelineMessage& msg : group) {
        r.set_micro(msg.micro);
        r.phase(msg.send ? StepPhaseKind::send : StepPhaseKind::receive, -1, -1,
                msg.activation ? "activations" : "gradient", msg.peer_stage(pp_.stage));
        if (!msg.send && msg.activation)
            r.use(MemCategory::activations, model_->options().part.node_offset,
                  pipeline_input_bytes(micro[static_cast<std::size_t>(msg.micro)].second));
    }
}

void TrainingState::timeline_pipeline_input(StepRecorder& r, std::int64_t n, bool starts) const {
    if (starts) r.phase(StepPhaseKind::receive, -1, -1, "input");
    const std::int64_t b = pipeline_input_bytes(n);
    r.use(MemCategory::activations, model_->options().part.node_offset, starts ? b : -b);
}

void TrainingState::pipeline_step(std::int64_t step, const std::vector<std::pair<std::int64_t, std::int64_t>>& micro,
                                  const std::function<Tensor(int)>& input,
                                  const std::function<LossResult(int, const Tensor&, Tensor&)>& loss) {
    Communicator& c = *pp_.stages;
    const int K = strategy_.pipeline, s = pp_.stage, M = static_cast<int>(pp_.input.size());
    const int m = static_cast<int>(micro.size());
    std::vector<Tensor> out(static_cast<std::size_t>(M));  // each model's output (the last stage's logits)
    auto model_of = [&](int i) -> Model& { return i == 0 ? *model_ : *pp_.extra[static_cast<std::size_t>(i) - 1]; };
    auto rows_of = [&](int j) { return micro[static_cast<std::size_t>(j)].second; };
    // the buffer of a message: a model's input (received activations) or output (sent ones), the output's
    // gradient (received) or a model's input gradient (sent); micro-batch j runs on model j % M
    auto buffer_of = [&](const PipelineMessage& msg) {
        const auto i = static_cast<std::size_t>(msg.micro % M);
        if (msg.activation) return msg.send ? out[i] : pp_.input[i].slice0(0, rows_of(msg.micro));
        return (msg.send ? pp_.dx : pp_.dy).slice0(0, rows_of(msg.micro));
    };
    // each group holds the receive the next action needs and the send the one before made; waited before
    // the action, so a model's buffers are free again when it next runs
    auto exchange = [&](const std::vector<PipelineMessage>& group) {
        if (group.empty()) return;
        std::vector<Communicator::Transfer> transfers;
        for (const PipelineMessage& msg : group) transfers.push_back({msg.send, buffer_of(msg), msg.peer_stage(s)});
        c.exchange(transfers).wait();
        c.synchronize();
    };
    const auto order = pipeline_schedule(K, s, m);
    const auto groups = pipeline_exchanges(K, s, m);
    StepRecorder* rec = recorder_;  // the step's memory timeline (walk_step_timeline: the same calls)
    for (std::size_t t = 0; t < order.size(); ++t) {
        if (rec) timeline_pipeline_messages(*rec, groups[t], micro);
        exchange(groups[t]);
        const auto [forward, j] = order[t];
        const auto i = static_cast<std::size_t>(j % M);
        const auto [r0, n] = micro[static_cast<std::size_t>(j)];
        Model& mdl = model_of(static_cast<int>(i));
        if (rec) rec->set_micro(j);
        if (forward) {
            Tensor x = pp_.input[i].slice0(0, n);
            if (rec && s == 0) timeline_pipeline_input(*rec, n, true);
            if (s == 0) device_.copy(input(j), x);  // kept for the first layer's backward
            out[i] = mdl.forward(x, true, first_sample(step, r0));
        } else {
            Tensor dy;
            if (rec && s == K - 1) rec->phase(StepPhaseKind::loss);
            if (s == K - 1) loss(j, out[i], dy);
            else dy = pp_.dy.slice0(0, n);
            if (s == 0) mdl.backward(dy);
            else {
                Tensor dx = pp_.dx.slice0(0, n);
                mdl.backward_to(dy, dx);
            }
            if (rec) timeline_pipeline_input(*rec, n, false);
        }
    }
    if (rec) timeline_pipeline_messages(*rec, groups.back(), micro);
    exchange(groups.back());
}

Tensor TrainingState::pipeline_eval_forward(const Tensor& x, std::int64_t n) {
    Communicator& c = *pp_.stages;
    const int K = strategy_.pipeline, s = pp_.stage;
    Tensor in = x;
    if (s > 0) {
        in = pp_.input[0].slice0(0, n);
        c.recv(in, s - 1).wait();
        c.synchronize();
    }
    Tensor y = model_->forward(in, false);
    if (s == K - 1) return y;
    c.send(y, s + 1).wait();
    return Tensor();
}

}  // namespace hr
