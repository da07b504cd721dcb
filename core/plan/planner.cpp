#include "plan/planner.h"

#include "strategy/pipeline.h"
#include "strategy/rank_layout.h"
#include "strategy/tp_head.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "base/error.h"
#include "data/text_data.h"
#include "memory/counting_allocator.h"
#include "plan/device_calibration.h"
#include "plan/device_description.h"
#include "nn/layer_cost.h"
#include "nn/transformer_spec.h"
#include "strategy/training_state.h"

namespace hr {

namespace {

bool is_gpu_device(const std::string& device) {
    return device.rfind("cuda", 0) == 0 || is_gpu_model_name(device);
}

std::size_t loader_bytes(std::int64_t batch, std::int64_t samples, std::int64_t per_sample) {
    const std::int64_t steps = samples > 0 ? (samples + batch - 1) / batch : 1 << 20;
    const std::int64_t depth = std::max<std::int64_t>(1, std::min<std::int64_t>(3, steps));
    return static_cast<std::size_t>(depth * (batch * per_sample * 4 + batch * 8));
}

// Each rank: its whole training state on counting allocators (the same code that allocates for real),
// plus what the backend itself holds (the cuBLAS workspace on a GPU) and its data loaders (host memory:
// the device's for the CPU). Ranks with the same batch allocate the same: built once per batch.
struct PlannedRank {
    RankPlan rp;
    LedgerSnapshot snap;
    std::size_t arena = 0;
    std::size_t reserved = 0;  // the caching allocator's segments (GPU)
    ShardLayout layout;
    std::map<int, Model::RecomputeWork> recompute;  // what checkpointing repeats of each layer
    double buffer_bytes = 0;  // the model's buffers (batch-norm statistics): broadcast after each update
    // the bytes of each layer's parameters as this rank's model stores them (adapters included, a QLoRA
    // base packed, a split head's rows), by ledger layer id
    std::map<int, std::size_t> layer_param_bytes;
    StepTimeline timeline;  // the step's phases from a zero base (rebased on rp.device below)
    std::size_t timeline_idle = 0;  // what the base leaves out (TrainingState::timeline_idle_bytes)
};

PlannedRank plan_rank_state(const PlanRequest& req, const DeviceDescription& desc, Backend& sizing,
                            const MemoryLedger& sizing_ledger, int N, int r) {
    const bool gpu = desc.gpu();
    const std::int64_t per = shape_numel(req.spec.input_shape);
    const ResolvedStrategy rs = resolve_strategy(req.strategy, req.spec, req.batch, N, r);
    auto device_ledger = std::make_shared<MemoryLedger>();
    auto host_ledger = std::make_shared<MemoryLedger>();
    // for a GPU, through the caching allocator's bookkeeping too
    std::unique_ptr<Allocator> dev_alloc_ptr = make_planning_allocator(desc, device_ledger);
    Allocator& dev_alloc = *dev_alloc_ptr;
    CountingAllocator host_alloc(Device::cpu(), host_ledger);
    PlannedRank b;
    {
        // what a CUDA backend allocates when it is made, first and in this order (backend/cuda/cuda_sizes.h)
        std::vector<Tensor> backend_fixed;
        if (gpu)
            for (std::size_t bytes : {desc.cublas_workspace_bytes, desc.backend_scratch_bytes})
                backend_fixed.push_back(Tensor::empty(dev_alloc, {static_cast<std::int64_t>(bytes)}, DType::u8,
                                                      MemCategory::workspace));
        TrainingState st(req.spec, req.optimizer, rs, 1, sizing, dev_alloc, sizing, host_alloc, true);
        b.arena = st.model().recompute_arena_bytes();
        b.recompute = st.model().recompute_work();
        b.layout = st.shard_layout();
        Model::StateBytes sb = st.model().state_bytes();  // (state_dict's tensors, without names)
        b.buffer_bytes = sb.buffer_bytes;
        b.layer_param_bytes = std::move(sb.layer_param_bytes);
        StepRecorder walk(CategoryBytes{}, -1, r);
        st.walk_step_timeline(walk);
        b.timeline = walk.finish();
        b.timeline_idle = st.timeline_idle_bytes();  // (after the walk: the state a step starts in)
        b.snap = device_ledger->snapshot();
        b.reserved = b.snap.live_total + (gpu ? b.snap.reserved_free : 0);
        b.rp.device = b.snap.live;
        b.rp.host = host_ledger->snapshot().live;
    }
    // what the CPU backend itself holds (a GPU's fixed buffers are counted above)
    if (!gpu)
        for (MemCategory cat : all_categories()) at(b.rp.device, cat) += sizing_ledger.live_bytes(cat);
    const std::size_t loaders =
        is_token_model(req.spec)
            ? text_batch_bytes(rs.rank_batch, per) + text_batch_bytes(rs.micro_batch, per)  // data/text_data.h
            : loader_bytes(rs.rank_batch, req.train_samples, per) +
                  loader_bytes(rs.eval_micro_batch * rs.data_world(), req.test_samples, per);  // trainer.cpp
    at(gpu ? b.rp.host : b.rp.device, MemCategory::data) += loaders;
    b.rp.batch = rs.rank_batch;
    b.rp.micro_batch = rs.micro_batch;
    b.rp.device_total = total(b.rp.device);
    b.rp.host_total = total(b.rp.host);
    return b;
}

// The step's timeline on the rank's bytes: TrainingState::timeline_base's rule, activations at zero, zero3's idle
// gather buffers left out.
StepTimeline rank_timeline(const PlannedRank& chosen, int rank) {
    CategoryBytes base = chosen.rp.device;
    at(base, MemCategory::activations) = 0;
    std::size_t& comm = at(base, MemCategory::communication);
    comm = comm > chosen.timeline_idle ? comm - chosen.timeline_idle : 0;
    StepTimeline t = step_timeline_with_base(chosen.timeline, base);
    t.rank = rank;
    return t;
}

// A split head's traffic (strategy/tp_head.h): per micro-batch the head's input gradient is all-reduced and the
// loss's three reductions carry 5 floats a row; the head's columns this rank holds (its share of the work).
TpHeadSlice add_tp_head_figures(MemoryPlan& plan, const PlanRequest& req, const PlannedRank& chosen) {
    const int T = plan.strategy.tp_head;
    const TpHeadSlice tp = tp_head_slice(tp_head_outputs(req.spec, T), T, plan.strategy.tp_rank());  // (resolved for primary)
    const std::int64_t tp_rows = plan.strategy.micro_batch * (is_token_model(req.spec) ? req.spec.input_shape[0] : 1);
    const LayerSpec& head = req.spec.layers.back();
    const std::int64_t in = head.attrs.value(head.type == "linear" ? "in_features" : "dim", std::int64_t{0});
    plan.communication_bytes = static_cast<double>(plan.strategy.accumulate) *
                               (static_cast<double>(tp_rows * in) * dtype_size(plan.strategy.compute_dtype) +
                                static_cast<double>(5 * tp_rows) * 4.0);
    if (plan.strategy.data_world() > 1)  // T x D: the replicas' all-reduce of the rank's gradients, then the
        plan.communication_bytes +=        // first replica's buffers (zero1: and the parameters' all-gather)
            static_cast<double>(chosen.layout.flat_numel) * dtype_size(plan.strategy.compute_dtype) *
                (plan.strategy.sharded() ? 2.0 : 1.0) +
            chosen.buffer_bytes;
    return tp;
}

// A pipeline stage's traffic (per micro-batch the stage sends its output and receives its gradient, receives its
// input and sends its gradient), the bubble and the two balanced splits.
void add_pipeline_figures(MemoryPlan& plan, const PlanRequest& req, const PlannedRank& chosen) {
    const int K = plan.strategy.pipeline, s = plan.strategy.stage();
    const auto& first = plan.strategy.stage_first;
    for (int k = 0; k < K; ++k) plan.stage_layers.push_back(first[static_cast<std::size_t>(k) + 1] - first[static_cast<std::size_t>(k)]);
    auto out_numel = [&](int layer) { return shape_numel(pipeline_layer_output(req.spec, layer)); };
    const double es = static_cast<double>(dtype_size(plan.strategy.compute_dtype));
    double per_sample = 0;
    if (s > 0) per_sample += 2.0 * static_cast<double>(out_numel(first[static_cast<std::size_t>(s)] - 1));
    if (s < K - 1) per_sample += 2.0 * static_cast<double>(out_numel(first[static_cast<std::size_t>(s) + 1] - 1));
    // (K x T: the last stage's ranks add the split head's traffic, computed above; the earlier ones none)
    const double head_bytes = plan.strategy.tp_head > 1 && s == K - 1 ? plan.communication_bytes : 0.0;
    plan.communication_bytes = head_bytes + per_sample * es * static_cast<double>(plan.strategy.rank_batch);
    // a tied head: stage 0 and the last stage all-reduce the shared weight's gradient (V x C) once a step
    if (pipeline_has_tied_head(req.spec) && (s == 0 || s == K - 1))
        for (const LayerSpec& l : req.spec.layers)
            if (l.type == "token_embedding")
                plan.communication_bytes += static_cast<double>(l.attrs.value("vocab_size", std::int64_t{0}) *
                                                                l.attrs.value("dim", std::int64_t{0})) * es;
    if (plan.strategy.data_world() > 1)  // the replicas' all-reduce of the stage's gradients, then the
        plan.communication_bytes +=        // first replica's buffers (zero1: and the parameters' all-gather)
            static_cast<double>(chosen.layout.flat_numel) * es * (plan.strategy.sharded() ? 2.0 : 1.0) +
            chosen.buffer_bytes;
    plan.pipeline_bubble = pipeline_bubble(K, static_cast<int>(plan.strategy.accumulate));
    plan.split_by_time = pipeline_balanced_split(req.spec, K, true).text();
    plan.split_by_memory = pipeline_balanced_split(req.spec, K, false, plan.strategy.micro_batch).text();
}

// The per-layer figures: bytes from the ledger (activations are tagged with their layer), FLOPs from the cost
// model (nn/layer_cost.h) for a micro-batch, this rank's share of a split head.
void add_layer_plans(MemoryPlan& plan, const PlanRequest& req, const SpecReport& rep, const PlannedRank& chosen,
                     const TpHeadSlice& tp) {
    const std::string head_path = std::to_string(req.spec.layers.size() - 1);
    for (const auto& r : rep.layers) {
        LayerPlan lp;
        lp.index = r.index;
        lp.path = r.path;
        lp.type = r.type;
        lp.label = r.label;
        auto it = chosen.snap.layers.find(r.index);
        if (it != chosen.snap.layers.end()) lp.activation_bytes = it->second.live;
        // the model's own bytes; a layer another pipeline stage holds: its values in the compute dtype
        const auto held = chosen.layer_param_bytes.find(r.index);
        lp.parameter_bytes = held != chosen.layer_param_bytes.end()
                                 ? held->second
                                 : static_cast<std::size_t>(r.params) * dtype_size(plan.strategy.compute_dtype);
        const LayerSpec* ls = layer_spec_at(req.spec.layers, r.path);
        const double mb = static_cast<double>(plan.strategy.micro_batch);
        const LayerCost cost = layer_cost(r, ls);  // the pipeline balancer's count too
        lp.forward_flops = cost.forward * mb;
        lp.backward_flops = cost.backward * mb;
        lp.selective_flops = cost.attention_core * mb;
        double share = 1.0;
        if (tp.total > 0 && r.path == head_path) {  // this rank's columns of a split head
            share = static_cast<double>(tp.count) / static_cast<double>(tp.total);
            lp.forward_flops *= share;
            lp.backward_flops *= share;
            if (held == chosen.layer_param_bytes.end())
                lp.parameter_bytes = static_cast<std::size_t>(static_cast<double>(lp.parameter_bytes) * share);
        }
        // activation checkpointing repeats what the model's recompute runs of the layer (nn/model.h)
        const auto rw = chosen.recompute.find(r.index);
        if (rw != chosen.recompute.end() && rw->second == Model::RecomputeWork::full) {
            lp.recompute_flops = lp.forward_flops;
        } else if (rw != chosen.recompute.end() && rw->second == Model::RecomputeWork::saved_only) {
            lp.recompute_flops = cost.recompute_kept * mb * share;
            if (r.type == "self_attention" && plan.strategy.recompute_attention)
                lp.recompute_flops -= lp.selective_flops;  // its core waits for the backward (selective_flops)
        }
        plan.layers.push_back(lp);
    }
}

// Each layer's checkpoint block, and whether the plan checkpoints it.
void mark_checkpoint_blocks(MemoryPlan& plan, const ModelSpec& spec, const SpecReport& rep) {
    auto blocks = checkpoint_blocks(spec, rep);
    std::vector<bool> ck(blocks.size(), false);
    for (int b : plan.strategy.checkpoint_blocks) ck[static_cast<std::size_t>(b)] = true;
    for (auto& lp : plan.layers) {
        int top = std::stoi(lp.path.substr(0, lp.path.find('.')));
        for (std::size_t b = 0; b < blocks.size(); ++b)
            if (top >= blocks[b].first && top <= blocks[b].last) {
                lp.block = static_cast<int>(b);
                lp.checkpointed = ck[b];
            }
    }
}

// A pipeline's step against the whole model's work in one place: the slowest stage's work for m + K - 1
// micro-batch slots (1F1B's bubble: the first stage starts alone, the last ends alone); 1 without stages.
double pipeline_time_factor(const MemoryPlan& plan) {
    if (plan.strategy.pipeline <= 1) return 1.0;
    const int K = plan.strategy.pipeline;
    std::vector<double> stage(static_cast<std::size_t>(K), 0.0);
    double total = 0;
    for (const auto& lp : plan.layers) {
        if (lp.type == "residual") continue;
        const int top = std::stoi(lp.path.substr(0, lp.path.find('.')));
        int k = 0;
        while (k + 1 < K && top >= plan.strategy.stage_first[static_cast<std::size_t>(k) + 1]) ++k;
        stage[static_cast<std::size_t>(k)] += lp.forward_flops + lp.backward_flops;
        total += lp.forward_flops + lp.backward_flops;
    }
    const double slowest = *std::max_element(stage.begin(), stage.end());
    const double m = static_cast<double>(plan.strategy.accumulate);
    return total > 0 ? slowest / total * (m + K - 1) / m : 1.0;
}

}  // namespace

MemoryPlan predict_memory(const PlanRequest& request) {
    PlanRequest req = request;
    apply_sequence_length(req.spec, req.seq);  // language models: the run's sequence length
    req.seq = 0;
    MemoryPlan plan;
    plan.dataset_bytes = req.dataset_bytes;
    const int N = req.world_size;
    if (N < 1) throw InputError(HR_MSG("plan.bad_ranks", "the number of ranks must be at least 1 (--ranks)"));
    if (req.rank >= N)
        throw InputError(HR_MSG("plan.bad_rank", "rank %1 does not exist with %2 ranks (0..%3)"),
                         {std::to_string(req.rank), std::to_string(N), std::to_string(N - 1)});
    plan.strategy = resolve_strategy(req.strategy, req.spec, req.batch, N, std::max(0, req.rank));
    const std::shared_ptr<const SpecReport> shared_rep = analyze_model_spec_shared(req.spec);  // (no copy)
    if (!shared_rep->ok) throw InputError(shared_rep->error_message);
    const SpecReport& rep = *shared_rep;
    if (req.strategy.checkpoint == "auto") {
        // auto: the cheapest set of blocks (by recompute FLOPs per byte saved) that fits the device
        PlanRequest fixed = req;
        fixed.strategy.checkpoint = "none";
        const std::size_t free = req.budget ? req.budget : device_free_bytes(req.device);
        MemoryPlan p = predict_memory(fixed);
        if (plan_fit_bytes(p) > free) {
            for (int k : {4, 2, 1}) {
                fixed.strategy.checkpoint = k == 1 ? "all" : "every:" + std::to_string(k);
                p = predict_memory(fixed);
                if (plan_fit_bytes(p) <= free) break;
            }
        }
        return p;
    }
    // The device's description (cached per process: issue 9); conv workspace sizes for the device
    // (cuDNN's choice per shape on a present GPU, asked once)
    const DeviceDescription desc = describe_device(req.device, req.threads);
    const bool gpu = desc.gpu();
    auto sizing_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> sizing = make_planning_backend(desc, req.threads, sizing_ledger, plan.strategy.tf32);
    // (keyed on the rank's batch and, with a split head, its columns: an uneven split differs by rank)
    // (pipeline stages: keyed on the stage, r / D of D data-parallel replicas: a stage's replicas hold the same)
    auto key_of = [&](int r) -> std::pair<std::int64_t, std::int64_t> {
        const int T = plan.strategy.tp_head;
        const std::int64_t cols = plan.strategy.pipeline > 1 ? r / (N / plan.strategy.pipeline)
                                  : T > 1 ? tp_head_slice(tp_head_outputs(req.spec, T), T, r / plan.strategy.data_world()).count
                                          : 0;
        return {plan.strategy.rank_batches[static_cast<std::size_t>(r)], cols};
    };
    std::map<std::pair<std::int64_t, std::int64_t>, PlannedRank> by_batch;
    int primary = std::max(0, req.rank);
    for (int r = 0; r < N; ++r) {
        if (req.rank >= 0 && r != req.rank) continue;
        const auto key = key_of(r);
        auto it = by_batch.find(key);
        if (it == by_batch.end()) it = by_batch.emplace(key, plan_rank_state(req, desc, *sizing, *sizing_ledger, N, r)).first;
        RankPlan rp = it->second.rp;
        rp.rank = r;
        plan.ranks.push_back(rp);
        if (req.rank < 0 && rp.device_total > plan.ranks[static_cast<std::size_t>(primary)].device_total) primary = r;
    }
    if (primary != plan.strategy.rank) plan.strategy = resolve_strategy(req.strategy, req.spec, req.batch, N, primary);
    const PlannedRank& chosen = by_batch.at(key_of(primary));
    plan.world_size = N;
    plan.rank = primary;
    plan.device = chosen.rp.device;
    plan.host = chosen.rp.host;
    plan.recompute_arena = chosen.arena;
    if (!chosen.timeline.empty()) plan.timeline = rank_timeline(chosen, primary);
    plan.device_reserved = chosen.reserved;
    plan.flat_elements = chosen.layout.flat_numel;
    plan.shard_elements = chosen.layout.shard_numel;
    plan.padding_elements = chosen.layout.padding_elements();
    plan.communication_bytes =
        N > 1 || plan.strategy.shard != ShardStage::none
            ? step_payload_bytes(chosen.layout, plan.strategy.accumulate, dtype_size(plan.strategy.compute_dtype))
            : 0.0;
    // after the update, data-parallel and ZeRO ranks take rank 0's buffers (DDP's broadcast_buffers)
    if (N > 1 && plan.strategy.shard != ShardStage::none && plan.strategy.pipeline == 1)
        plan.communication_bytes += chosen.buffer_bytes;
    // a split head (strategy/tp_head.h): per micro-batch, the head's input gradient is all-reduced and the
    // loss's three reductions carry 5 floats a row; the head's columns are this rank's share of its work
    const TpHeadSlice tp = plan.strategy.tp_head > 1 ? add_tp_head_figures(plan, req, chosen) : TpHeadSlice{};
    if (plan.strategy.pipeline > 1) add_pipeline_figures(plan, req, chosen);
    add_layer_plans(plan, req, rep, chosen, tp);
    plan.device_total = total(plan.device);
    plan.host_total = total(plan.host);
    if (!gpu) plan.device_reserved = plan.device_total;
    plan.device_overhead = gpu ? desc.overhead_bytes() : 0;
    if (gpu && plan.world_size > 1) {  // GPU ranks talk through NCCL, whose buffers are outside the ledger
        const CommunicationOverhead co = communication_overhead(desc, plan.world_size);
        plan.communication_overhead = co.bytes;
        plan.communication_overhead_measured = co.measured;
        plan.communication_overhead_source = co.source;
        plan.device_overhead += co.bytes;
    }
    plan.process_total = plan.device_reserved + plan.device_overhead;
    plan.device_name = desc.name;
    plan.device_defaults = desc.defaults;
    plan.device_note = desc.defaults ? desc.source
                                     : Message(HR_MSG("plan.device_here", "%1 on this machine (%2)"), {desc.name, desc.device});
    plan.peak_phase = "setup: every buffer is allocated before the first step, so the peak holds from step 1";

    mark_checkpoint_blocks(plan, req.spec, rep);
    // cost model
    double fwd = 0, bwd = 0, rec = 0;
    for (const auto& lp : plan.layers) {
        if (lp.type == "residual") continue;
        fwd += lp.forward_flops;
        bwd += lp.backward_flops;
        rec += lp.recompute_flops;
        if (plan.strategy.recompute_attention) rec += lp.selective_flops;
    }
    const double pipe_time = pipeline_time_factor(plan);  // a pipeline's step against the whole model's work in one place
    const double mb = static_cast<double>(plan.strategy.accumulate);
    plan.forward_flops = fwd * mb;
    plan.backward_flops = bwd * mb;
    plan.recompute_flops = rec * mb;
    const std::int64_t P = rep.total_params;
    if (plan.strategy.offload_parameters)  // every gather's shard up, each micro-batch's reduced gradients down
        plan.offload_bytes = offload_step_bytes(chosen.layout, plan.strategy.accumulate, dtype_size(plan.strategy.compute_dtype));
    else if (plan.strategy.offload_optimizer)  // gradients down, parameters up: this rank's shard when sharded
        plan.offload_bytes = static_cast<double>(plan.strategy.sharded() ? plan.shard_elements : P) * 2.0 *
                             static_cast<double>(dtype_size(plan.strategy.compute_dtype));
    const DeviceRates rt = req.rates ? *req.rates : desc.rates;
    plan.rates_source = rt.source;
    plan.host_link = rt.host_link;
    plan.offload_seconds = rt.host_link > 0 ? plan.offload_bytes / rt.host_link : 0.0;
    const double prec = plan.strategy.compute_dtype == DType::f32 ? 1.0 : rt.lowp_factor;
    const double per_micro_overhead = rt.per_layer_seconds * static_cast<double>(plan.layers.size());
    auto seconds = [&](double f, double r, double off, double accum, double pf) {
        return (f + r) * pf / rt.flops + off / rt.host_link + per_micro_overhead * accum;
    };
    plan.predicted_step_seconds = seconds((plan.forward_flops + plan.backward_flops) * pipe_time, plan.recompute_flops,
                                          plan.offload_bytes, mb, prec);
    if (N > 1) {
        // ring algorithms move (N - 1) / N of each reduce-scatter / all-gather payload, twice that for an
        // all-reduce; counted without overlap (an upper bound: dp and zero1-2 overlap it with the backward)
        const double wire = (plan.strategy.shard == ShardStage::dp || tp.total > 0 ? 2.0 : 1.0) * (N - 1) / N;
        const double link = rt.comm_link > 0 ? rt.comm_link : (gpu ? 50e9 : 5e9);  // nominal without a measurement
        plan.communication_seconds = plan.communication_bytes * wire / link;
        plan.predicted_step_seconds += plan.communication_seconds;
    }
    const double base = seconds(plan.forward_flops + plan.backward_flops, 0, 0, 1, 1.0);
    plan.relative_step_time = base > 0 ? plan.predicted_step_seconds / base : 1.0;
    return plan;
}

// Whether candidate b adds nothing to a: the same prediction reached another way (every:2 and all
// can pick the same blocks), or optimizer offload that moves nothing off the device (a stateless
// optimizer: the device bytes are those without offload, the host copy only costs time).
static bool adds_nothing(const MemoryPlan& a, const MemoryPlan& b) {
    const bool same_layout = a.strategy.shard == b.strategy.shard && a.strategy.tp_head == b.strategy.tp_head &&
                             a.strategy.pipeline == b.strategy.pipeline &&
                             a.strategy.precision == b.strategy.precision &&
                             a.strategy.micro_batch == b.strategy.micro_batch &&
                             a.strategy.accumulate == b.strategy.accumulate &&
                             a.strategy.checkpoint_blocks == b.strategy.checkpoint_blocks;
    if (!same_layout || a.device != b.device) return false;
    if (b.strategy.offload_optimizer && !a.strategy.offload_optimizer) return true;
    return a.host == b.host && a.recompute_arena == b.recompute_arena &&
           a.predicted_step_seconds == b.predicted_step_seconds && a.offload_bytes == b.offload_bytes &&
           a.strategy.offload_optimizer == b.strategy.offload_optimizer &&
           a.strategy.offload_parameters == b.strategy.offload_parameters;
}

namespace {

// (stage, ranks of a split head): several ranks try every stage and, when the head can be split, the
// head split over all of them with the body whole on every rank (strategy/tp_head.h)
// (stage, ranks of a split head, pipeline stages): several ranks try every stage, the head split over all
// of them when it can be, and the layers in as many pipeline stages (balanced by time) when they can be
// (one process: also zero3 on its own rank, tried only with the parameters offloaded: ZeRO-Infinity's
// answer to a model whose weights do not fit)
struct SearchLayout {
    std::string shard;
    int tp = 1, pp = 1;
    bool params_only = false;  // try only with parameter offload
};

std::vector<SearchLayout> search_layouts(const PlanRequest& base) {
    std::vector<SearchLayout> stages = {{base.strategy.shard, base.strategy.tp_head, base.strategy.pipeline}};
    if (base.world_size == 1 && base.strategy.shard != "zero3") stages.push_back({"zero3", 1, 1, true});
    if (base.world_size > 1) {
        stages = {{"dp"}, {"zero1"}, {"zero2"}, {"zero3"}};
        // a split head over T ranks and pipelines of K stages, for every T, K that divides the ranks: alone on
        // all of them, or D = ranks / T (or / K) data-parallel replicas of it (T x D, K x D), where the
        // layout admits the combination (strategy/rank_layout.h)
        for (int parts = 2; parts <= base.world_size; ++parts) {
            if (base.world_size % parts != 0) continue;
            // (the replicas all-reduce (dp) or shard the optimizer state over them too (zero1))
            const std::vector<std::string> shards = parts == base.world_size ? std::vector<std::string>{"none"}
                                                                             : std::vector<std::string>{"dp", "zero1"};
            for (const std::string& shard : shards)
                for (const bool head : {true, false}) {
                    StrategyConfig s;
                    s.shard = shard;
                    (head ? s.tp_head : s.pipeline) = parts;
                    try {
                        (void)rank_layout(s, base.world_size);
                        if (head) tp_head_outputs(base.spec, parts);  // a head that cannot be split: not a candidate
                        else if (static_cast<int>(base.spec.layers.size()) < parts) continue;
                    } catch (const InputError&) {
                        continue;
                    }
                    stages.push_back({shard, head ? parts : 1, head ? 1 : parts});
                }
        }
    }
    return stages;
}

// The candidates in order, the Pareto front and the best, and each one's reason.
void rank_candidates(PlanSearch& out) {
    // Fitting ones first, fastest first, then smaller; the rejected ones smallest first. Ties keep
    // the order of generation (stable), so the ranking is deterministic.
    std::stable_sort(out.candidates.begin(), out.candidates.end(), [](const PlanCandidate& a, const PlanCandidate& b) {
        if (a.fits != b.fits) return a.fits;
        if (a.fits) {
            if (a.plan.predicted_step_seconds != b.plan.predicted_step_seconds)
                return a.plan.predicted_step_seconds < b.plan.predicted_step_seconds;
            return a.plan.device_total < b.plan.device_total;
        }
        return a.plan.device_total < b.plan.device_total;
    });
    // The Pareto front of the fitting ones: walking fastest first, a candidate is on it when it needs
    // less device memory than every faster (or equally fast, earlier) one. The first of the others
    // that is no larger and no slower is the one that dominates it.
    std::size_t smallest_so_far = 0;
    int smallest_index = -1;
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
        auto& c = out.candidates[i];
        if (!c.fits) break;
        if (smallest_index < 0 || c.plan.device_total < smallest_so_far) {
            c.pareto = true;
            smallest_so_far = c.plan.device_total;
            smallest_index = static_cast<int>(i);
        } else {
            for (std::size_t k = 0; k < i; ++k)
                if (out.candidates[k].plan.device_total <= c.plan.device_total) {
                    c.dominated_by = static_cast<int>(k);
                    break;
                }
        }
    }
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
        auto& c = out.candidates[i];
        if (!c.fits) continue;
        if (out.best < 0) {
            out.best = static_cast<int>(i);
            c.reason = "fits with the best predicted step time";
            continue;
        }
        const auto& best = out.candidates[static_cast<std::size_t>(out.best)];
        const double slower = 100.0 * (c.plan.predicted_step_seconds / best.plan.predicted_step_seconds - 1.0);
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.0f%%", slower);
        if (c.pareto) {
            c.reason = std::string("fits in less memory than the faster ones, predicted ") + pct + " slower than the best";
        } else {
            const std::string flags =
                strategy_flags(out.candidates[static_cast<std::size_t>(c.dominated_by)].strategy);
            c.reason = std::string("fits, predicted ") + pct + " slower than the best; '" +
                       (flags.empty() ? std::string("no strategies") : flags) + "' needs no more memory and is no slower";
        }
    }
}

// What-if, when nothing fits: on how many ranks would the leanest configuration fit? (zero3 divides the state
// by N)
void find_ranks_needed(PlanSearch& out, const PlanRequest& base, std::size_t budget) {
    PlanRequest r = base;
    r.rank = -1;
    r.strategy.shard = "zero3";
    r.strategy.precision = "bf16";
    r.strategy.checkpoint = "all";
    r.strategy.micro_batch = 0;
    r.strategy.accumulate = 1;
    r.strategy.offload_optimizer = true;
    r.strategy.rank_batch.clear();
    // the fewest ranks; on them the largest micro-batch that fits (the rank batch, /2, /4, /8, as the
    // search above splits one process's batch)
    for (int n = std::max(2, base.world_size * 2); n <= 64 && n <= base.batch && out.ranks_needed == 0; n *= 2) {
        r.world_size = n;
        std::int64_t rank_batch = 0;
        try {
            StrategyConfig even = r.strategy;
            even.shard = "dp";
            for (std::int64_t b : resolve_strategy(even, base.spec, base.batch, n, 0).rank_batches)
                rank_batch = std::max(rank_batch, b);
        } catch (const InputError&) {
            break;
        }
        for (std::int64_t d : {1, 2, 4, 8}) {
            if (rank_batch % d != 0) continue;
            r.strategy.micro_batch = d == 1 ? 0 : rank_batch / d;
            MemoryPlan p;
            try {
                p = predict_memory(r);
            } catch (const InputError&) {
                continue;
            }
            if (plan_fit_bytes(p) > budget) continue;  // the candidates' own test
            out.ranks_needed = n;
            const bool gpu = base.device.rfind("cuda", 0) == 0;
            out.ranks_reason = Message(
                gpu ? HR_MSG("plan.needs_gpus", "needs %1 GPUs: with --ranks %1 %2, each GPU needs %3 (budget %4)")
                    : HR_MSG("plan.needs_ranks", "needs %1 ranks: with --ranks %1 %2, each rank needs %3 (budget %4)"),
                {std::to_string(n), strategy_flags(r.strategy), format_bytes(plan_fit_bytes(p)), format_bytes(budget)});
            break;
        }
    }
}

}  // namespace

PlanSearch search_plans(const PlanRequest& base, std::size_t budget, const std::function<bool(const StrategyConfig&)>& only) {
    PlanSearch out;
    out.budget = budget;
    std::vector<std::string> precisions = {"fp32", "bf16"};
    std::vector<std::string> checkpoints = {"none", "every:2", "all"};
    std::vector<std::int64_t> micro;
    for (std::int64_t d : {1, 2, 4, 8})
        if (base.batch % d == 0 && base.batch / d >= 1) micro.push_back(base.batch / d);
    const std::vector<SearchLayout> stages = search_layouts(base);
    std::vector<std::int64_t> whole_micro = micro;  // a split head's ranks each take the whole batch
    // micro-batches are split per rank with several ranks: the divisors apply to the largest rank batch
    std::int64_t largest = base.batch;
    if (base.world_size > 1) {
        largest = 0;
        StrategyConfig even = base.strategy;
        even.shard = "dp";
        even.tp_head = 1;
        even.pipeline = 1;
        even.pipeline_split.clear();
        even.checkpoint = "none";
        for (std::int64_t b : resolve_strategy(even, base.spec, base.batch, base.world_size, 0).rank_batches)
            largest = std::max(largest, b);
        micro.clear();
        for (std::int64_t d : {1, 2, 4, 8})
            if (largest % d == 0) micro.push_back(largest / d);
    }
    for (const SearchLayout& lay : stages)
        for (const auto& prec : precisions)
            for (const auto& ckpt : checkpoints)
                for (std::int64_t m : lay.tp > 1 || lay.pp > 1 ? whole_micro : micro)
                    for (int off : {0, 1, 2}) {  // offload: none, the optimizer's, the parameters too (zero3)
                        if (lay.pp > 1 && ckpt != "none") continue;  // not inside pipeline stages
                        if ((lay.params_only && off != 2) || (off == 2 && lay.shard != "zero3")) continue;
                        const std::int64_t whole = lay.tp > 1 || lay.pp > 1 ? base.batch : largest;
                        PlanRequest r = base;
                        r.rank = -1;  // every rank must fit
                        r.strategy.shard = lay.shard;
                        r.strategy.tp_head = lay.tp;
                        r.strategy.pipeline = lay.pp;
                        if (lay.pp != base.strategy.pipeline) r.strategy.pipeline_split.clear();
                        r.strategy.precision = prec;
                        r.strategy.checkpoint = ckpt;
                        r.strategy.micro_batch = m == whole ? 0 : m;
                        r.strategy.accumulate = 1;
                        r.strategy.offload_optimizer = off >= 1;
                        r.strategy.offload_parameters = off == 2;
                        if (only && !only(r.strategy)) continue;
                        PlanCandidate c;
                        c.strategy = r.strategy;
                        try {
                            c.plan = predict_memory(r);
                        } catch (const InputError& e) {  // a split the rank batches do not allow
                            continue;
                        }
                        // keep the first, simpler spelling of a plan (offload comes after its twin without)
                        const bool duplicate =
                            std::any_of(out.candidates.begin(), out.candidates.end(),
                                        [&](const PlanCandidate& o) { return adds_nothing(o.plan, c.plan); });
                        if (duplicate) {
                            ++out.duplicates;
                            continue;
                        }
                        c.fits = plan_fit_bytes(c.plan) <= budget;
                        if (!c.fits)
                            c.reason = "needs " + format_bytes(plan_fit_bytes(c.plan)) +
                                       (base.world_size > 1 ? " on rank " + std::to_string(c.plan.rank) : "") +
                                       " > budget " + format_bytes(budget);
                        out.candidates.push_back(std::move(c));
                    }
    rank_candidates(out);
    if (out.best < 0) find_ranks_needed(out, base, budget);
    return out;
}

std::size_t plan_fit_bytes(const MemoryPlan& p) {
    if (p.device_overhead == 0 && p.device_reserved == p.device_total) return p.device_total;  // the CPU
    return static_cast<std::size_t>(std::ceil(static_cast<double>(p.process_total) * (1.0 + kGpuFitMargin)));
}

nlohmann::json plan_to_json(const MemoryPlan& p) {
    nlohmann::json j;
    nlohmann::json dev = nlohmann::json::object(), host = nlohmann::json::object();
    for (MemCategory c : all_categories()) {
        dev[category_name(c)] = at(p.device, c);
        host[category_name(c)] = at(p.host, c);
    }
    j["strategy"] = p.strategy.describe();
    j["micro_batch"] = p.strategy.micro_batch;
    j["accumulate"] = p.strategy.accumulate;
    j["checkpoint_blocks"] = p.strategy.checkpoint_blocks;
    j["device"] = dev;
    j["device_total"] = p.device_total;
    j["host"] = host;
    j["host_total"] = p.host_total;
    j["offload_bytes_per_step"] = p.offload_bytes;
    j["offload_seconds_per_step"] = p.offload_seconds;
    j["host_link_bytes_per_second"] = p.host_link;
    j["recompute_arena"] = p.recompute_arena;
    j["peak_phase"] = p.peak_phase;
    j["predicted_step_seconds"] = p.predicted_step_seconds;
    j["relative_step_time"] = p.relative_step_time;
    j["step_time_estimated"] = true;
    j["rates_source"] = p.rates_source;
    j["device_reserved"] = p.device_reserved;
    j["device_overhead"] = p.device_overhead;
    j["communication_overhead"] = p.communication_overhead;
    j["communication_overhead_measured"] = p.communication_overhead_measured;
    j["communication_overhead_source"] = p.communication_overhead_source;
    j["process_total"] = p.process_total;
    j["fit_bytes"] = plan_fit_bytes(p);
    j["device_name"] = p.device_name;
    j["device_defaults"] = p.device_defaults;
    j["device_note"] = p.device_note.english();
    j["dataset_bytes"] = p.dataset_bytes;
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : p.layers)
        layers.push_back({{"index", l.index},
                          {"path", l.path},
                          {"type", l.type},
                          {"label", l.label},
                          {"block", l.block},
                          {"checkpointed", l.checkpointed},
                          {"activation_bytes", l.activation_bytes},
                          {"parameter_bytes", l.parameter_bytes},
                          {"forward_flops", l.forward_flops}});
    j["layers"] = layers;
    // ranks (docs/distributed.md)
    j["world_size"] = p.world_size;
    j["shard"] = shard_stage_name(p.strategy.shard);
    j["rank"] = p.rank;
    j["flat_elements"] = p.flat_elements;
    j["shard_elements"] = p.shard_elements;
    j["padding_elements"] = p.padding_elements;
    j["communication_bytes_per_step"] = p.communication_bytes;
    if (!p.stage_layers.empty())
        j["pipeline"] = {{"stage_layers", p.stage_layers},
                         {"bubble", p.pipeline_bubble},
                         {"split_by_time", p.split_by_time},
                         {"split_by_memory", p.split_by_memory}};
    j["communication_seconds_per_step"] = p.communication_seconds;
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& r : p.ranks) {
        nlohmann::json d = nlohmann::json::object(), h = nlohmann::json::object();
        for (MemCategory c : all_categories()) {
            d[category_name(c)] = at(r.device, c);
            h[category_name(c)] = at(r.host, c);
        }
        ranks.push_back({{"rank", r.rank},
                         {"batch", r.batch},
                         {"micro_batch", r.micro_batch},
                         {"device", d},
                         {"device_total", r.device_total},
                         {"host", h},
                         {"host_total", r.host_total}});
    }
    j["ranks"] = ranks;
    return j;
}


static std::size_t meminfo(const char* key) {
    std::ifstream f("/proc/meminfo");
    std::string k;
    std::size_t v = 0;
    std::string unit;
    while (f >> k >> v >> unit)
        if (k == key) return v * 1024;
    return 0;
}

std::size_t device_free_bytes(const std::string& device) {
    if (is_gpu_device(device)) {
        const DeviceDescription d = describe_device(device);  // first: it measures before contexts exist
        if (!d.present) return d.capacity_bytes;
        for (const auto& g : cuda_devices())
            if (g.index == d.index) return g.free_bytes;
        return d.capacity_bytes;
    }
    std::size_t v = meminfo("MemAvailable:");
    return v ? v : device_total_bytes(device);
}

std::size_t device_total_bytes(const std::string& device) {
    if (device.rfind("cuda", 0) == 0) {  // a present GPU: its capacity only (no description, no measuring)
        CudaDeviceInfo info;
        const std::string d = device == "cuda" ? "cuda:0" : device;
        try {
            if (cuda_device_properties(std::stoi(d.substr(5)), info)) return info.total_bytes;
        } catch (const std::exception&) {
        }
    }
    if (is_gpu_device(device)) return describe_device(device).capacity_bytes;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::size_t parse_bytes(const std::string& text) {
    // number: from_chars reads the C locale's digits whatever LC_NUMERIC says (std::stod does not)
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    while (begin < end && *begin == ' ') ++begin;
    double v = 0;
    const auto [after, ec] = std::from_chars(begin, end, v);
    std::string unit(ec == std::errc() ? after : begin, end);
    unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char ch) { return std::tolower(ch); });
    static const std::map<std::string, double> units = {
        {"", 1},       {"b", 1},         {"k", 1024},  {"kib", 1024},       {"kb", 1e3},  {"m", 1048576},
        {"mib", 1048576}, {"mb", 1e6},   {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
        {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12}};
    auto it = units.find(unit);
    if (ec != std::errc() || it == units.end() || !std::isfinite(v) || !(v > 0))
        throw InputError(HR_MSG("plan.size_unreadable",
                                "cannot read the size '%1'; write it like 4GiB, 512MiB, 1.5GB or 4096 (bytes)"),
                         {text});
    // 2^60 bytes (1 EiB) is far beyond any device and keeps sums of sizes inside 64 bits
    constexpr double kMax = 1152921504606846976.0;
    const double bytes = std::floor(v * it->second);
    if (bytes > kMax)
        throw InputError(HR_MSG("plan.size_too_large", "the size '%1' is larger than 1 EiB; write a size such as 4GiB"),
                         {text});
    if (bytes < 1)
        throw InputError(HR_MSG("plan.size_too_small", "the size '%1' is less than one byte; write a size such as 512MiB"),
                         {text});
    return static_cast<std::size_t>(bytes);
}

}  // namespace hr
