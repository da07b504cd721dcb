#include "strategy/training_state.h"

#include "memory/step_timeline.h"

#include <cmath>
#include <cstring>
#include <map>

#include "backend/cpu/cpu_backend.h"
#include "backend/update_rules.h"
#include "base/error.h"
#include "nn/backend_ops.h"
#include "strategy/model_part.h"

namespace hr {

// The constructor's rooms, in order: this rank's place and groups (RankGroups), its part of the model (and a
// pipeline stage's models in flight), the engines, the optimizer's state (OptimizerState), the step's buffers
// (StepBuffers) and the checkpoint mapper (CheckpointMapper). Each allocation where it always was: the ledger's
// figures, and the planner's, are the same.
TrainingState::TrainingState(const ModelSpec& full_spec, const OptimizerConfig& optimizer, const ResolvedStrategy& s,
                             std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host,
                             Allocator& host_alloc, bool dry_run, Communicator* comm)
    : x_staging(buffers_.x_staging), x_model(buffers_.x_model), labels(buffers_.labels), dlogits(buffers_.dlogits),
      target_staging(buffers_.target_staging), target_model(buffers_.target_model), control(buffers_.control),
      stats(buffers_.stats), strategy_(s), groups_(s, full_spec, dry_run, comm), full_spec_(full_spec), seed_(seed),
      device_(device), host_(host) {
    // this rank's part of the whole model (strategy/model_part.h): its split head's rows or its stage's layers;
    // a split head's input gradient is summed over the head's ranks before the body's backward
    RankPlace place;
    place.head = groups_.slice;
    place.split = groups_.split;
    place.stage = groups_.stage;
    place.head_copy = groups_.head_copy;
    std::function<void(Tensor&)> head_grad_sum;
    if (s.tp_head > 1 && !dry_run)
        head_grad_sum = [this](Tensor& dx) {
            if (recorder_) timeline_head_reduce(*recorder_);
            groups_.heads->all_reduce(dx, ReduceOp::sum).wait();
        };
    const RankModelPart mine = rank_model_part(full_spec, resolved_layout(s), place, std::move(head_grad_sum));
    const ModelSpec& spec = mine.spec;
    const bool last_stage = s.pipeline == 1 || groups_.stage == s.pipeline - 1;
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
    mo.lora_dropout = s.lora_dropout;
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
    if (s.pipeline > 1) build_pipeline_models(spec, full_spec, mo, device_alloc);
    attach_engines(comm, device_alloc, host_alloc, dry_run);
    optim_.build(optimizer, full_spec, s, *model_, sharder(), device, device_alloc, host, host_alloc, dry_run);
    loss_scale_ = s.loss_scaling ? s.loss_scale_init : 1.0;
    buffers_.build(spec, full_spec, s, model_->takes_tokens(), device, device_alloc, host_alloc, last_stage,
                   split_head ? &groups_.slice : nullptr);
    build_checkpoint_mapper();
    mse_ = spec.loss.type == "mse";
    label_smoothing_ = static_cast<float>(spec.loss.label_smoothing);
    // (LoRA dropout's masks are keyed on the run-wide sample as well: a captured graph would replay one step's)
    has_dropout_ = spec_has_layer(spec.layers, "dropout") || (strategy_.lora_rank > 0 && strategy_.lora_dropout > 0);
    if (!dry_run) {
        double c[kStepControlFields] = {};
        c[kCtlLossScale] = loss_scale_;
        device.copy_from_host(c, control);
    }
}

// A pipeline stage: one model per micro-batch in flight (1F1B: K - s), on the first one's parameters,
// gradients and buffers, and the buffers of the stage's messages.
void TrainingState::build_pipeline_models(const ModelSpec& spec, const ModelSpec& full_spec, const ModelOptions& mo,
                                          Allocator& device_alloc) {
    const ResolvedStrategy& s = strategy_;
    const bool last_stage = groups_.stage == s.pipeline - 1;
    const int M = pipeline_in_flight(s.pipeline, groups_.stage, static_cast<int>(s.accumulate));
    ModelOptions more = mo;
    more.allocate_params = more.allocate_grads = false;
    more.part = further_model_part(mo.part, *model_);
    for (int i = 1; i < M; ++i) {
        auto inst = std::make_unique<Model>(spec, device_, more);
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
    if (groups_.stage > 0)
        pp_.dx = Tensor::empty(device_alloc, with_batch(s.micro_batch, spec.input_shape), s.compute_dtype,
                               MemCategory::communication);
    if (!last_stage) {
        const Shape out =
            pipeline_layer_output(full_spec, groups_.split.first[static_cast<std::size_t>(groups_.stage) + 1] - 1);
        pp_.dy = Tensor::empty(device_alloc, with_batch(s.micro_batch, out), s.compute_dtype, MemCategory::communication);
    }
}

// The run's engine over the model, and ZeRO-1's over this part's replicas inside a layout across ranks.
void TrainingState::attach_engines(Communicator* comm, Allocator& device_alloc, Allocator& host_alloc, bool dry_run) {
    const ResolvedStrategy& s = strategy_;
    // (a pipeline's replicas reduce their stage's gradients in optimizer_step, over their own group: the
    // engine sees no stage; a split head's replicas alike)
    ResolvedStrategy engine_view = s;
    if (s.pipeline > 1 || s.tp_head > 1) engine_view.shard = ShardStage::none;
    engine_.attach(*model_, engine_view, comm, device_, device_alloc, dry_run, &host_, &host_alloc);
    if (zero_in_layout()) {  // ZeRO-1 over this part's replicas (rank_layout admits zero1 only)
        if (s.shard != ShardStage::zero1) throw Error("internal: only zero1 shards inside a layout across ranks");
        ResolvedStrategy replicas = s;
        replicas.world_size = s.data_world();
        replicas.rank = s.data_rank();
        replicas.tp_head = replicas.pipeline = 1;
        zero_engine_.attach(*model_, replicas, groups_.replicas.get(), device_, device_alloc, dry_run, &host_,
                            &host_alloc);
    }
}

// Where each tensor of the whole model lies on this rank: the trivial placement for one process and
// data-parallel ranks, the layout's otherwise; and from it, the flat places of the gradients a step sums
// over a group (a tied head's two ends, a split head's adapter A).
void TrainingState::build_checkpoint_mapper() {
    mapper_ = spread() ? CheckpointMapper::rank_part(*model_, full_spec_, device_, strategy_, groups_.slice, groups_.split)
                       : CheckpointMapper::whole_model(*model_, strategy_);
    for (const TensorPlace& e : mapper_.places()) {
        // the embedding's (stage 0) or the copy's (last stage) gradients, when they train
        if (groups_.tied && e.run_offset >= 0 && (e.copy || e.embedding)) {
            pp_.tied_offset = e.run_offset;
            pp_.tied_numel = e.numel;
        }
        // a split head's adapter A: whole on every rank, each adds its columns' part of the gradient
        if (e.head && is_lora_a(e.name) && e.run_offset >= 0) {
            tp_.lora_a_offset = e.run_offset;
            tp_.lora_a_numel = e.numel;
        }
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
           optim_.grad_clip() == 0 &&
           !optim_.optimizer().has_decay_segments() && !model_->takes_tokens();
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
    buffers_.upload_next(x, y, target, n);
}

void TrainingState::take_upload(std::int64_t n) { buffers_.take_upload(n); }

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
    if (strategy_.loss_scaling) device_.all_finite_into(model_->gradients(), control);
    optim_.update_ctl(*model_, control);
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
    if (buffers_.head_loss.reduce.defined()) idle += buffers_.head_loss.reduce.nbytes();  // in use in the loss (timeline_tp_loss_bytes)
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
        const int K = strategy_.pipeline, s = groups_.stage, M = static_cast<int>(pp_.input.size());
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
    if (groups_.replicas) groups_.replicas->all_reduce(model_->gradients(), ReduceOp::sum).wait();
    // LoRA on a split head: the adapter A's gradient, each rank's part from its columns, summed (over the
    // replica's parts: after the replicas' sum, both are linear)
    if (tp_.lora_a_numel > 0) {
        Tensor g = model_->gradients().view(tp_.lora_a_offset, {tp_.lora_a_numel});
        groups_.heads->all_reduce(g, ReduceOp::sum).wait();
    }
    // a tied head: the embedding's gradient (stage 0) and its copy's (the last stage) summed, the one
    // gradient one process accumulates into the shared weight (after the replicas': both sums are linear)
    if (pp_.tied_numel > 0) {
        Tensor g = model_->gradients().view(pp_.tied_offset, {pp_.tied_numel});
        groups_.tied->all_reduce(g, ReduceOp::sum).wait();
    }
    // the checks below read gradients back on the host: first wait for the gradients' collectives with the
    // rank timeout (NCCL's wait() only orders the device; a stalled peer would block the read forever)
    if (Communicator* c = engine_.communicator(); c && c->world_size() > 1) c->synchronize();
    ShardEngine& sh = sharder();  // (ZeRO inside a layout: this rank's shard of its part's all-reduced gradients)
    const std::vector<Tensor> grads = sh.grad_pieces();
    if (strategy_.loss_scaling) {
        bool finite = true;
        for (const Tensor& g : grads) finite = finite && sh.pieces_holder().all_finite(g);
        // every rank skips, or none does (each sees only its shard of the gradients)
        if (Communicator* c = engine_.communicator(); c && c->world_size() > 1) finite = all_ranks_agree(*c, finite);
        if (!finite) {
            ++skipped_;
            update_loss_scale(true, loss_scale_, good_steps_, strategy_.loss_scale_growth_interval);
            engine_.broadcast_buffers();
            return false;
        }
    }
    float inv = static_cast<float>(1.0 / loss_scale_);
    if (optim_.grad_clip() > 0) {
        // torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1
        grad_norm_ = std::sqrt(clip_norm_squares(grads)) / loss_scale_;
        const double coef = optim_.grad_clip() / (grad_norm_ + 1e-6);
        if (coef < 1.0) inv = static_cast<float>(coef / loss_scale_);
    }
    optim_.update(sh, grads, lr, inv);
    if (strategy_.loss_scaling) update_loss_scale(false, loss_scale_, good_steps_, strategy_.loss_scale_growth_interval);
    engine_.publish_parameters();
    if (zero_in_layout()) zero_engine_.publish_parameters();  // the replicas' shards, all-gathered over them
    engine_.broadcast_buffers();
    // a stage's (a split head part's) batch-norm statistics: its first replica's (DDP's broadcast_buffers)
    if (groups_.replicas) {
        std::vector<CommHandle> hs;
        for (NamedTensor& t : model_->state_dict())
            if (t.is_buffer()) hs.push_back(groups_.replicas->broadcast(t.tensor, 0));
        for (auto& h : hs) h.wait();
    }
    return true;
}

// The global gradient norm's sum of squares (of the scaled gradients), every tensor of the whole model once.
double TrainingState::clip_norm_squares(const std::vector<Tensor>& grads) {
    double sq = 0;
    if (zero_in_layout())  // the part's whole gradients (all-reduced over the replicas), as with dp
        sq = device_.sum_squares(model_->gradients());
    else
        for (const Tensor& g : grads) sq += engine_.pieces_holder().sum_squares(g);
    // a split head's rows (this rank's slice of the head)
    auto head_squares = [&] {
        double head = 0;
        for (const TensorPlace& t : mapper_.places())
            if (t.held.rows && t.run_offset >= 0)
                head += device_.sum_squares(model_->gradients().view(t.run_offset, {t.numel}));
        return head;
    };
    if (strategy_.tp_head > 1 && strategy_.pipeline > 1) {  // K x T: each stage's once, every head slice
        const double head = head_squares();
        const double own = (strategy_.tp_rank() == 0 ? std::max(0.0, sq - head) : 0.0) + head;
        sq = engine_.communicator()->all_reduce_value(own, ReduceOp::sum);
    } else if (strategy_.tp_head > 1) {  // the body's once (a replica on every rank), every rank's head slice
        const double head = head_squares();
        sq = std::max(0.0, sq - head) + groups_.heads->all_reduce_value(head, ReduceOp::sum);
    } else if (strategy_.pipeline > 1) {  // every stage's parameters are its own (once per replica)
        if (groups_.head_copy && pp_.tied_numel > 0)  // a tied head's copy: the embedding's gradient, counted there
            sq = std::max(0.0, sq - device_.sum_squares(model_->gradients().view(pp_.tied_offset, {pp_.tied_numel})));
        sq = engine_.communicator()->all_reduce_value(sq, ReduceOp::sum) / strategy_.data_world();
    }
    // sharded gradients: each rank holds a part of the global norm's sum
    if (Communicator* c = engine_.communicator(); c && c->world_size() > 1 && strategy_.sharded() && !zero_in_layout())
        sq = c->all_reduce_value(sq, ReduceOp::sum);
    return sq;
}

// --- checkpoints and the consolidated weights: the mapper's one walk, whatever the layout ------------------

CheckpointIo TrainingState::checkpoint_io() { return {*model_, device_, engine_, sharder(), optim_.buffers()}; }

std::vector<NamedTensor> TrainingState::consolidated_state_dict(Allocator& alloc) {
    CheckpointIo io = checkpoint_io();
    return mapper_.consolidate(io, alloc);
}

std::vector<TrainingState::ResumeTensor> TrainingState::resume_tensors() const {
    return mapper_.resume_tensors(optim_.buffers());
}

std::vector<TrainingState::CheckpointTensor> TrainingState::checkpoint_tensors() const {
    return mapper_.tensors(optim_.buffers());
}

std::vector<TrainingState::HostTensor> TrainingState::gather_checkpoint() {
    CheckpointIo io = checkpoint_io();
    return mapper_.gather(io);
}

void TrainingState::gather_checkpoint(const CheckpointMapper::Sink& sink) {
    CheckpointIo io = checkpoint_io();
    mapper_.gather(io, sink);
}

void TrainingState::restore_checkpoint(const std::function<const std::uint8_t*(const std::string&)>& data) {
    CheckpointIo io = checkpoint_io();
    // (an f32 master copy the checkpoint lacks, written without optimizer offload: the parameters themselves)
    mapper_.restore(io, data, [this](const StateBuffer& b) {
        if (!fp32_master(b.name)) return false;
        sync_master_from_params();
        return true;
    });
}

TrainingState::ResumeScalars TrainingState::resume_scalars() const {
    return {loss_scale_, good_steps_, skipped_, optim_.optimizer().step_count()};
}

void TrainingState::restore_scalars(const ResumeScalars& s) {
    loss_scale_ = s.loss_scale;
    good_steps_ = s.good_steps;
    skipped_ = s.skipped;
    optim_.optimizer().set_step_count(s.optimizer_steps);
}

void TrainingState::sync_master_from_params() { optim_.sync_master_from_params(sharder()); }

// --- a layout across ranks: a split head, pipeline stages ----------------------------------------------

TrainingState::LoraCounts TrainingState::whole_lora_counts() const {
    LoraCounts c;
    if (mapper_.trivial()) {
        c.adapters = model_->lora_param_count();
        c.frozen = model_->frozen_param_count();
        c.quantized = model_->quantized_param_count();
        return c;
    }
    for (const TensorPlace& e : mapper_.places()) {
        if (e.tied) continue;  // the token embedding's weight, counted under its own name
        const std::int64_t values = shape_numel(e.quantized_bits ? e.quantized_shape : e.full_shape);
        if (e.trainable && is_lora_adapter(e.name)) c.adapters += values;
        if (e.frozen) c.frozen += values;
        if (e.quantized_bits) c.quantized += values;
    }
    return c;
}

void TrainingState::load_weights(const std::function<void(Model&)>& load) {
    if (mapper_.trivial()) {
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
    std::vector<NamedTensor> here = model_->state_dict();
    for (const TensorPlace& e : mapper_.places()) {
        if (e.local < 0) continue;
        NamedTensor& nt = here[static_cast<std::size_t>(e.local)];
        if (nt.tied) continue;  // the token embedding's weight, taken under its own name
        const auto w = from.find(nt.name);
        if (w == from.end()) throw Error("internal: tensor " + nt.name + " is not the whole model's");
        // a split head's rows: this rank's, from its first
        const std::size_t skip = e.held.rows ? static_cast<std::size_t>(mapper_.head_slice().first * e.held.per_row) *
                                                   dtype_size(nt.tensor.dtype())
                                             : 0;
        if (w->second.dtype() != nt.tensor.dtype() || w->second.nbytes() < skip + nt.tensor.nbytes())
            throw Error("internal: tensor " + nt.name + " differs from the whole model's");
        device_.copy_from_host(static_cast<const std::uint8_t*>(w->second.raw()) + skip, nt.tensor);
    }
    sync_master_from_params();
}

// --- pipeline stages ----------------------------------------------------------------------------------

// A split head: the loss's reductions pass through buffers_.head_loss.reduce, 3 floats a row of logits, in use while
// tp_loss runs; the head's input gradient is all-reduced in place (the model's gradient buffer): a phase.
std::int64_t TrainingState::timeline_tp_loss_bytes(std::int64_t rows) const { return rows * 3 * 4; }

void TrainingState::timeline_head_reduce(StepRecorder& r) const {
    r.phase(StepPhaseKind::reduce, -1, -1, "head input gradient");
}

LossResult TrainingState::tp_loss(const Tensor& logits, const Tensor& labels, Tensor grad, float grad_scale) {
    const std::int64_t b = recorder_ && grad.defined() ? timeline_tp_loss_bytes(logits.numel() / logits.dim(-1)) : 0;
    if (b) recorder_->use(MemCategory::communication, -1, b);
    const LossResult l = tp_cross_entropy(device_, *groups_.heads, groups_.slice, logits, labels, label_smoothing_, grad,
                                          grad_scale, buffers_.head_loss);
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
                msg.activation ? "activations" : "gradient", msg.peer_stage(groups_.stage));
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
    Communicator& c = *groups_.stages;
    const int K = strategy_.pipeline, s = groups_.stage, M = static_cast<int>(pp_.input.size());
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
    Communicator& c = *groups_.stages;
    const int K = strategy_.pipeline, s = groups_.stage;
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
