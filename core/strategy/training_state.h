#pragma once
// TrainingState: everything a run allocates on the device (model, optimizer, master weights, batch
// buffers, sharding buffers) and on the host (offloaded optimizer), built from a ResolvedStrategy. The
// trainer builds it on real allocators; the planner builds the very same thing on counting allocators
// (dry run), once per rank, so its prediction equals each rank's ledger.
//
// A step, the same on every rank (one process is a world of one; with ranks, rank r of N trains on rows
// [strategy().sample_offset, + strategy().rank_batch) of the global batch):
//
//     state.begin_step();                                   // zero the gradients (full or shard)
//     for (auto [r0, n] : state.strategy().micro_batches()) {   // the same count on every rank
//         Tensor x = ... rows [r0, r0 + n) of this rank's share, uploaded into state.x_staging / x_model
//         Tensor logits = state.model().forward(x, true, state.first_sample(step, r0));
//         loss(logits, labels, dlogits, state.loss_grad_scale(n));   // n / global batch x loss scale
//         state.model().backward(dlogits);                   // unit hooks reduce gradients as they finish
//     }
//     bool applied = state.optimizer_step(lr);   // waits for the reductions, updates this rank's shard,
//                                                // all-gathers, broadcasts rank 0's batch-norm statistics
//
// Evaluation is model().forward(x, false) on every rank (zero3 gathers each unit as in training).
// Saving: consolidated_state_dict() on every rank (collective under zero3), rank 0 writes it; checkpoints:
// gather_checkpoint() on every rank (collective when sharded), rank 0 writes them.
// Metrics are the trainer's to reduce (communicator()->all_reduce_value), weighted by samples.
// Every rank must take the same path: the same number of micro-batches, forwards and optimizer steps.
#include <functional>
#include <memory>

#include "backend/backend.h"
#include "dist/communicator.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "strategy/checkpoint_mapper.h"
#include "strategy/optimizer_state.h"
#include "strategy/rank_groups.h"
#include "strategy/sharding.h"
#include "strategy/step_buffers.h"
#include "strategy/strategy.h"
#include "strategy/pipeline.h"
#include "strategy/tp_head.h"

namespace hr {

class TrainingState {
    // its rooms (each a type of its own): the step's buffers first, which the public batch tensors below are
    StepBuffers buffers_;

public:
    // comm: the run's communicator when strategy.world_size > 1 (its rank and size must match the
    // strategy's); may be null for one process (a single-rank communicator is made for a sharded stage)
    // and in a dry run.
    TrainingState(const ModelSpec& spec, const OptimizerConfig& optimizer, const ResolvedStrategy& strategy,
                  std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host, Allocator& host_alloc,
                  bool dry_run = false, Communicator* comm = nullptr);
    TrainingState(const TrainingState&) = delete;
    TrainingState& operator=(const TrainingState&) = delete;

    Model& model() { return *model_; }
    const ResolvedStrategy& strategy() const { return strategy_; }
    const ShardLayout& shard_layout() const { return sharder().layout(); }
    // parameter offload: host<->device bytes copied so far, both ways (ShardEngine's count; 0 otherwise)
    double offload_bytes() const { return engine_.offload_to_device_bytes() + engine_.offload_to_host_bytes(); }
    Communicator* communicator() const { return engine_.communicator(); }

    // Per micro-batch buffers. x_staging/target_staging are f32 (what the data loader gives);
    // x_model/target_model are in the compute dtype (the same tensors when that is f32).
    // Language models (Model::takes_tokens): x_staging = x_model are the token ids (M, T) i64 and labels
    // the next tokens (M, T) i64; there is no dlogits: the fused loss writes the gradient over the logits.
    // (StepBuffers' own tensors)
    Tensor &x_staging, &x_model, &labels, &dlogits, &target_staging, &target_model;

    // Factor the loss gradient is multiplied by (the fp16 loss scale, else 1).
    float loss_scale() const { return static_cast<float>(loss_scale_); }
    // The loss-gradient factor of a micro-batch of n samples: n / global batch x loss scale, so the
    // summed gradients of all micro-batches of all ranks are the gradient of the mean loss of the batch.
    float loss_grad_scale(std::int64_t n) const;
    // The run-wide index of the first sample of the micro-batch starting at row r0 of this rank's share
    // (Model::forward's third argument; dropout masks are keyed on it).
    std::uint64_t first_sample(std::int64_t step, std::int64_t r0) const;

    void begin_step();
    // Applies the optimizer for the accumulated gradients: the reductions, loss-scale check (fp16;
    // decided alike on every rank), master weights, offload, the parameters' all-gather and the
    // batch-norm broadcast. Returns false when the step was skipped for inf/NaN gradients (fp16).
    bool optimizer_step(double lr);
    std::int64_t skipped_steps() const { return skipped_; }
    // The global L2 norm of the last step's gradients (of the mean loss, unscaled), when gradient
    // clipping computed it; else 0.
    double last_grad_norm() const { return grad_norm_; }

    // The full trained weights with state_dict names (nn/model.h). Collective under zero3: every rank
    // calls it; the gathered buffer comes from `alloc` (category communication). Parameters are in the
    // compute dtype (the master copy, when there is one, is the f32 truth; bf16 runs save these).
    std::vector<NamedTensor> consolidated_state_dict(Allocator& alloc);

    // --- the step without host synchronisation (backend.h; issue 11) ----------------------------
    // Instead of optimizer_step and a loss returning to the host: the step's changing scalars live in
    // `control` (StepControl: learning rate, loss scale, finite flag, counters) and its figures in
    // `stats` (StepStats: loss, correct rows, bad labels), both on the device and allocated with the
    // rest (the planner counts them). A step is
    //     begin_device_step(lr); for each micro-batch: take_upload(n) (after upload_next, or upload
    //     into x_staging/labels directly); device_micro_step(...); then device_optimizer_step();
    //     then StepFigureRing::push(step, stats, control)
    // and nothing in it waits for the device. device_micro_step + device_optimizer_step of a full
    // batch is what a CUDA graph captures (Backend::capture) when graph_capturable(); the partial last
    // batch of an epoch runs op by op (the graph's shapes are fixed).
    Tensor &control, &stats;
    // Zeroes the gradients and the figures, clears found_inf and writes the learning rate (an upload).
    void begin_device_step(double lr);
    // One micro-batch of n rows already uploaded to x_staging and labels (target_staging for MSE):
    // cast to the compute dtype, forward, loss into `stats` (the gradient scaled by share times the
    // device's loss scale; weight share), backward. first_sample as Model::forward.
    void device_micro_step(std::int64_t n, float share, std::uint64_t first_sample);
    // The optimizer on the accumulated gradients: fp16's finite check and loss-scale update on the
    // device, master weights as optimizer_step. Throws for optimizer offload (host update).
    void device_optimizer_step();
    bool device_step_supported() const;
    // Input without waiting (defect 8): upload_next queues the next micro-batch's upload into a landing
    // buffer and returns at once, so on a GPU the copy runs while the current step computes; it waits
    // only for the step that last read the landing buffer. take_upload (at the start of that batch's
    // micro-step, before device_micro_step or a replay) makes the device wait for the upload and moves
    // it into x_staging / labels / target_staging. On the CPU upload_next copies into those at once and
    // take_upload does nothing. target (MSE: one-hot rows) may be null for cross-entropy.
    void upload_next(const float* x, const std::int64_t* labels, const float* target, std::int64_t n);
    void take_upload(std::int64_t n);
    // A captured step replays the same by-value arguments: true when none changes per step (no
    // dropout, whose masks are keyed on the run-wide sample index) and the device step is supported.
    bool graph_capturable() const;
    // Reads `control` back (a wait) into loss_scale() and skipped_steps(), e.g. at the end of a run.
    void sync_control_to_host();

    // --- the step's memory timeline (memory/step_timeline.h; issue 47) --------------------------------
    // set_step_recorder: the next steps report their phases to r (null: stop); the host step runner marks
    // the micro-batches and the loss, the model its layers, optimizer_step the reduction, offload and
    // update. walk_step_timeline reports one whole step's phases as this state takes them, running nothing
    // (the planner's prediction, on a dry-run state). A pipeline stage (pipeline_step) reports its 1F1B
    // schedule: per action the messages of its group (send/receive phases; a received micro-batch's
    // activations live until its backward, the first stage's copy of the input alike), then the forward
    // or the loss and backward of micro-batch j on its model.
    void set_step_recorder(StepRecorder* r);
    StepRecorder* step_recorder() const { return recorder_; }
    void walk_step_timeline(StepRecorder& r);
    // The timeline's base from the ledger's live bytes (measured) or the plan's (predicted, after the walk):
    // activations at zero (nothing saved yet), and zero3's gather buffers only with the units they hold
    // (ShardEngine::timeline_idle_bytes; a gather is an event).
    CategoryBytes timeline_base(CategoryBytes live) const;
    std::size_t timeline_idle_bytes() const { return engine_.timeline_idle_bytes(); }

    // --- checkpoints and resume (train/resume.h): the same on any number of ranks --------------------
    // A checkpoint holds the model's state_dict ("model.<name>": parameters in the compute dtype, rank 0's
    // buffers), the master copy ("master") and the optimizer's state ("optimizer.momentum_buffer",
    // "optimizer.exp_avg", "optimizer.exp_avg_sq"), the last ones as whole flat buffers in one process's
    // layout (strategy/sharding.h FlatRemap: shape {P of one process}), so a checkpoint written on N ranks
    // resumes on M. Names, dtypes and shapes of what this run's checkpoint holds, in order:
    // (strategy/checkpoint_mapper.h: one mapper of the whole model's tensors onto this rank, for every layout)
    using CheckpointTensor = ::hr::CheckpointTensor;
    using ResumeTensor = ::hr::CheckpointResumeTensor;
    using HostTensor = ::hr::CheckpointHostTensor;
    std::vector<CheckpointTensor> checkpoint_tensors() const;
    // The non-model part of it (master, optimizer state).
    std::vector<ResumeTensor> resume_tensors() const;
    // Between steps. Collective on several ranks (every rank calls it): the checkpoint's tensors with
    // their data, gathered from the shards, on rank 0; an empty list on the other ranks. Allocates nothing
    // on the device (strategy/sharding.h gather_state).
    std::vector<HostTensor> gather_checkpoint();
    // The same, each tensor handed to `sink` on rank 0 as it is gathered (CheckpointMapper::gather).
    void gather_checkpoint(const CheckpointMapper::Sink& sink);
    // Puts a checkpoint's tensors into this rank's state (its shards, under zero1-3); data(name) gives the
    // bytes of each checkpoint_tensors() entry (checked by the caller: present, same dtype and shape; null
    // only for a tied one). No communication: every rank has the whole tensors.
    void restore_checkpoint(const std::function<const std::uint8_t*(const std::string&)>& data);
    // Bytes from rank 0 to every rank, of a size every rank knows (several ranks; nothing otherwise).
    void broadcast_bytes(std::uint8_t* data, std::size_t bytes) { engine_.broadcast_bytes(data, bytes); }

    // --- a tensor-parallel head (strategy/tp_head.h; strategy().tp_head > 1) -------------------------
    // Checkpoints and consolidated_state_dict hold the whole head (one process's shapes and flat layout),
    // so a run with a split head resumes on one process and the other way round; so do pipeline stages'.
    bool tp_head() const { return strategy_.tp_head > 1; }
    // The split cross-entropy over this rank's logits columns (collective; tp_cross_entropy).
    LossResult tp_loss(const Tensor& logits, const Tensor& labels, Tensor grad, float grad_scale);

    // --- pipeline stages (strategy/pipeline.h; strategy().pipeline > 1) ----------------------------
    bool pipelined() const { return strategy_.pipeline > 1; }
    int stage() const { return groups_.stage; }
    bool first_stage() const { return groups_.stage == 0; }
    bool last_stage() const { return !pipelined() || groups_.stage == strategy_.pipeline - 1; }
    // LoRA's counts of the whole model (run.json final.lora): the adapters' values, the frozen base's, and of
    // those the ones stored quantised. A layout across ranks counts every tensor once from its layout (a
    // stage's copy of a tied head is the embedding's, a split head's rows are the whole head's); else the model's.
    struct LoraCounts {
        std::int64_t adapters = 0, frozen = 0, quantized = 0;
    };
    LoraCounts whole_lora_counts() const;
    const PipelineSplit& pipeline_split() const { return groups_.split; }
    // where each tensor of the whole model lies on this rank (the checkpoints' and consolidation's walk)
    const CheckpointMapper& checkpoint_mapper() const { return mapper_; }
    // One step's micro-batches through this stage in the 1F1B order, between begin_step and
    // optimizer_step. input(j): stage 0's micro-batch j in the buffers (the model's input); loss(j, logits,
    // grad): the last stage's loss of micro-batch j, its gradient in `grad` (scaled as loss_grad_scale).
    // Collective over the stages (every rank calls it with the same micro-batches).
    void pipeline_step(std::int64_t step, const std::vector<std::pair<std::int64_t, std::int64_t>>& micro,
                       const std::function<Tensor(int)>& input,
                       const std::function<LossResult(int, const Tensor&, Tensor&)>& loss);
    // Evaluation: x (stage 0's rows; undefined elsewhere) forward through every stage; the last stage gets
    // the logits, the others an undefined tensor. Collective.
    Tensor pipeline_eval_forward(const Tensor& x, std::int64_t n);
    struct ResumeScalars {
        double loss_scale = 1.0;
        std::int64_t good_steps = 0, skipped = 0, optimizer_steps = 0;
    };
    ResumeScalars resume_scalars() const;
    void restore_scalars(const ResumeScalars& s);
    // After the parameters were loaded from a file (--init-from): master copy := parameters.
    void sync_master_from_params();
    // --init-from: `load` reads a file into a model of the whole spec. One process (and sharded stages,
    // whose model is the whole one): into this rank's model. A layout across ranks (a split head, pipeline
    // stages): into a model of the whole spec on the host, built as this run builds it (dtype, LoRA, seed;
    // its own ledger: a moment's host memory before training), whose tensors this rank then takes its
    // part of (its stage's, its head rows). Then the master copy from the parameters.
    void load_weights(const std::function<void(Model&)>& load);
    // An f32 master copy (optimizer offload in fp32) equals the f32 parameters after every step, so a
    // checkpoint may lack it (written without offload; it is made from the parameters) or hold one this
    // run does not keep (written with offload; ignored): optimizer and parameter offload are layouts.
    bool fp32_master(const std::string& name) const {
        return name == "master" && strategy_.compute_dtype == DType::f32;
    }

private:
    bool spread() const { return strategy_.tp_head > 1 || strategy_.pipeline > 1; }
    // the constructor's rooms, in its order (each allocation where it always was: the ledger's figures)
    void build_model(const ModelSpec& spec, const ModelSpec& full_spec, Allocator& device_alloc, bool dry_run);
    void build_pipeline_models(const ModelSpec& spec, const ModelSpec& full_spec, const ModelOptions& mo,
                               Allocator& device_alloc);
    void attach_engines(Communicator* comm, Allocator& device_alloc, Allocator& host_alloc, bool dry_run);
    void build_checkpoint_mapper();
    CheckpointIo checkpoint_io();
    double clip_norm_squares(const std::vector<Tensor>& grads);  // the global norm's sum over this rank's part
    struct TpState {
        std::int64_t lora_a_offset = 0, lora_a_numel = 0;  // LoRA: the head's adapter A in the flat gradients
    } tp_;
    struct PipeState {
        std::vector<std::unique_ptr<Model>> extra;  // models 1.. of the micro-batches in flight
        std::vector<Tensor> input;                  // per model: the stage's input
        Tensor dx, dy;  // the input's gradient to the stage before (stage > 0), the output's from the next
        // a head tied to the token embedding: where its gradient lies in this rank's flat gradients (numel 0:
        // this stage holds neither, or they are frozen), summed over groups_.tied
        std::int64_t tied_offset = 0, tied_numel = 0;
    } pp_;
    ResolvedStrategy strategy_;
    RankGroups groups_;       // this rank's place and communicator groups (strategy/rank_groups.h)
    ModelSpec full_spec_;     // the whole model (a layout across ranks builds a part of it)
    std::uint64_t seed_ = 0;
    Backend& device_;
    Backend& host_;
    ShardEngine engine_;  // before model_: the model's unit hooks point at it
    // ZeRO-1 inside a layout across ranks (K x D or T x D with --shard zero1; PyTorch's ZeroRedundancyOptimizer):
    // the replicas all-reduce the part's gradients as with dp, each updates its shard of the part's flat buffer
    // (its optimizer state and master copy are that shard) and the replicas all-gather the parameters. An
    // engine over the part's replicas (groups_.replicas: world D, rank data_rank), without unit hooks.
    ShardEngine zero_engine_;
    bool zero_in_layout() const { return spread() && strategy_.sharded(); }
    // the engine whose pieces the update works on: the replicas' under ZeRO inside a layout, else the run's
    const ShardEngine& sharder() const { return zero_in_layout() ? zero_engine_ : engine_; }
    ShardEngine& sharder() { return zero_in_layout() ? zero_engine_ : engine_; }
    std::unique_ptr<Model> model_;
    OptimizerState optim_;     // the optimizer, its state and master copy (strategy/optimizer_state.h)
    CheckpointMapper mapper_;  // the whole model's tensors on this rank (strategy/checkpoint_mapper.h)
    static bool spec_has_layer(const std::vector<LayerSpec>& layers, const std::string& type);
    StepRecorder* recorder_ = nullptr;
    int device_micro_ = 0;  // the device step's micro-batch, for the recorder
    void mark_update_phases(StepRecorder& r) const;  // the reduction, offload and update phases of a step
    // pipeline stages: a group's messages as send/receive phases (a received micro-batch's input becomes
    // live); micro-batch j's input at the first stage (starts) or after its backward (ends)
    void timeline_pipeline_messages(StepRecorder& r, const std::vector<PipelineMessage>& group,
                                    const std::vector<std::pair<std::int64_t, std::int64_t>>& micro) const;
    void timeline_pipeline_input(StepRecorder& r, std::int64_t n, bool starts) const;
    std::int64_t pipeline_input_bytes(std::int64_t n) const;
    // a split head: the loss buffer's bytes for `rows` rows of logits, and the input gradient's all-reduce
    std::int64_t timeline_tp_loss_bytes(std::int64_t rows) const;
    void timeline_head_reduce(StepRecorder& r) const;
    bool mse_ = false;
    float label_smoothing_ = 0.0f;
    bool has_dropout_ = false;
    double loss_scale_ = 1.0;
    double grad_norm_ = 0.0;
    std::int64_t good_steps_ = 0;
    std::int64_t skipped_ = 0;
};

}  // namespace hr
