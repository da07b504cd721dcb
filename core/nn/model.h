#pragma once
// Model: the runtime graph built from a ModelSpec on a Backend. All memory is allocated up front for
// the maximum batch (llm.c style): parameters and gradients as flat buffers with per-layer views,
// one output (and any saved tensors) per layer, two activation-gradient buffers per sequence, one
// shared workspace. So every byte is known before the first step, and the planner predicts it exactly.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/layer.h"
#include "nn/model_spec.h"

namespace hr {

// Parameter and gradient tensors start on 256-byte boundaries in the flat buffers (what cuBLAS, cuDNN
// and vector loads want; a bf16 tensor at a 2-byte boundary is slow or refused).
constexpr std::size_t kParamAlignBytes = 256;
inline std::size_t param_align_elements(DType dt) { return kParamAlignBytes / dtype_size(dt); }

// The model's units (docs/design.md decision 8): its checkpoint blocks (checkpoint_blocks(spec)), each a
// contiguous slice of the flat parameter and gradient buffers. Sharding (strategy/sharding.h) works per
// unit: it places each unit's views (full buffers, shards, gather buffers) and is called at unit
// boundaries through these hooks.
struct ParamUnit {
    int first_layer = 0, last_layer = 0;  // top-level layer range (spec.layers indices, inclusive)
    std::int64_t offset = 0;              // element offset of the unit's slice in the flat buffers
    std::int64_t numel = 0;               // slice length with alignment gaps and the unit's tail padding
    std::int64_t values = 0;              // trainable values in it (numel minus padding)
};

class StepRecorder;

class UnitHooks {
public:
    virtual ~UnitHooks() = default;
    // Around each unit's forward (training and evaluation) and backward (before its recompute, when
    // checkpointed; after its first layer's backward). Units run 0, 1, ... forward and back down in backward.
    virtual void before_forward(int unit) {}
    virtual void after_forward(int unit) {}
    virtual void before_backward(int unit) {}
    virtual void after_backward(int unit) {}
    // The step's memory timeline (memory/step_timeline.h): what before_forward and before_backward make live
    // (ZeRO-3's gathers), reported without running anything, at the same places of the planner's walk.
    virtual void walk_before_forward(StepRecorder& r, int unit) {}
    virtual void walk_before_backward(StepRecorder& r, int unit) {}
};

class Model;

// The part of a whole model one process builds, where its spec's layers sit in the whole model: the
// strategy makes it once from the rank's place in the layout (strategy/model_part.h, rank_model_part);
// the model reads nothing else of the layout. Default: the whole model.
struct ModelPart {
    // A pipeline stage (strategy/pipeline.h): the spec holds top-level layers [layer_offset, ...) of a whole
    // model. Its nodes take the whole model's paths and depth-first indices (node_offset), and its
    // state_dict the whole model's prefixes (name_prefixes), so initial weights, dropout masks, names and
    // ledger layer ids are the whole model's; transformer_layers (> 0) is the whole model's block count
    // (GPT-2's init scale). stage_output: the last layer's output goes to the next stage, not to a loss
    // (the spec's end is not checked against the classes).
    int layer_offset = 0, node_offset = 0, transformer_layers = 0;
    std::vector<std::string> name_prefixes;
    bool stage_output = false;
    // A pipeline stage's copy of a head tied to the token embedding (strategy/pipeline.h): the spec's lm_head
    // is untied, and its weight is initialised as the whole model's token embedding (layer "0").
    bool head_copies_token_embedding = false;
    // A split head (strategy/tp_head.h): the last layer holds rows [head_first, + its outputs) of a head of
    // head_total outputs, initialised as those rows of the whole head (head_total 0: whole).
    // head_input_grad_hook, when set, gets the last layer's input gradient in backward before the layers
    // below read it (the sum over the head's ranks, in place).
    std::int64_t head_first = 0, head_total = 0;
    std::function<void(Tensor&)> head_input_grad_hook;
    // the step's memory timeline: the planner's walk reports that hook's place (a dry run sets no hook)
    std::function<void(StepRecorder&)> head_input_grad_walk;
    // A pipeline stage's further models (one per micro-batch in flight, strategy/training_state.h): the
    // frozen base (LoRA) is `frozen_from`'s, a model of the same spec and options, not a copy of its own.
    const Model* frozen_from = nullptr;
};

struct ModelOptions {
    std::int64_t batch = 64;     // largest batch forward() will see
    DType dtype = DType::f32;    // parameters, activations and gradients (f64 for gradient checks)
    std::uint64_t seed = 1;      // parameter initialisation
    // Activation checkpointing: indices into checkpoint_blocks(spec). A checkpointed block keeps only
    // its input and output; its inner outputs and saved tensors live in one shared recompute arena,
    // and backward recomputes the block's forward first.
    std::vector<int> checkpoint_blocks;
    Allocator* allocator = nullptr;  // where the model's memory comes from (default: the backend's)
    bool dry_run = false;            // allocate (for the ledger) but never touch memory: the planner
    // Sharding (strategy/sharding.h). Each unit's slice is padded to a multiple of
    // unit_pad_multiple x kParamAlignBytes (the world size, so it splits into aligned, equal shards).
    int unit_pad_multiple = 1;
    bool allocate_params = true;     // false: no flat parameter buffer; the owner binds each unit's views
    bool allocate_grads = true;      // false: no flat gradient buffer (bind_unit, as above)
    UnitHooks* hooks = nullptr;      // called at unit boundaries in forward and backward
    // Selective recompute (--checkpoint attention): attention layers keep neither the attention core's
    // output nor its log-sum-exp; backward recomputes them from the kept qkv (nn/transformer_layers.h).
    bool recompute_attention = false;
    // Which part of the whole model this is (the whole one by default): a pipeline stage's layers, a split
    // head's rows. Built by the strategy from the rank's place in the layout (strategy/model_part.h).
    ModelPart part;
    // LoRA (--lora R, Hu et al. 2021, PEFT's defaults): every `linear` layer and every transformer projection
    // (attention's c_attn and c_proj, the MLP's c_fc and c_proj) gets low-rank adapters
    // y = x W^T + b + (alpha / R) (x A^T) B^T, A (R, in) uniform as PyTorch's default, B (out, R) zero; every
    // other parameter of the model is frozen (ParamDecl::frozen): only the adapters are trained.
    int lora_rank = 0;
    double lora_alpha = 0;  // 0: the rank (scale 1)
    // peft's lora_dropout, in [0, 1): while training, each adapter's input is dropout(x) (inverted scaling,
    // one mask per projection and forward, the base path undropped); the mask is drawn from the layer's seed
    // and the run-wide row, so backward, a recompute, micro-batches and ranks draw it again identically
    // (nn/transformer_layers.cpp, Lora). It is not kept: the layer's workspace holds the dropped input and
    // its mask while a projection uses them.
    double lora_dropout = 0;
    // The projections of each llama_block that get adapters, a bit mask over peft's names in the order
    // q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj (nn/lora_targets.h); 0: peft's default for
    // the family (q_proj and v_proj). GPT layers always adapt all four of their projections.
    int lora_targets = 0;
    // QLoRA (Dettmers et al. 2023; --quantize-base int8|int4, with lora_rank): the frozen weight of every
    // projection of the base (a LLaMA block's seven, adapted or not; GPT blocks' four and linear layers,
    // which all carry adapters) is stored quantised (tensor/quantized_format.h: int8 a scale a row,
    // int4 a scale per lora_base_group values) and dequantised into the layer's workspace at each use; the
    // other frozen tensors (embeddings, lm_head, convolutions, norms, biases) stay in the model's dtype.
    int lora_base_bits = 0;
    std::int64_t lora_base_group = 64;
};

struct NamedTensor {
    // PyTorch state_dict name: "0.weight", "3.body.1.running_mean"; for GPT-shaped models nanoGPT's
    // ("transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", ..., "lm_head.weight")
    std::string name;
    Tensor tensor;
    bool trainable = true;
    int layer = -1;
    bool tied = false;  // the same tensor as an earlier entry (a tied head): written, optional on reading
    bool frozen = false;  // a frozen parameter (LoRA's base): trainable is false, but it is not a buffer
    // QLoRA's quantised base weight (ModelOptions::lora_base_bits): `tensor` is its packed bytes (u8,
    // tensor/quantized_format.h) of a `quantized_shape` (rows, cols) matrix; bits 0: not quantised
    int quantized_bits = 0;
    std::int64_t quantized_group = 0;
    Shape quantized_shape;
    bool quantized() const { return quantized_bits != 0; }
    // the shape of its values: quantized_shape for a quantised weight, the tensor's otherwise
    const Shape& value_shape() const { return quantized() ? quantized_shape : tensor.shape(); }
    // a buffer (batch-norm statistics): what data-parallel ranks and pipeline replicas take from their first
    // rank after each update, and what the planner counts for it
    bool is_buffer() const { return !trainable && !frozen; }
};

// A run of the flat parameter buffer [begin, end) (elements) that gets weight decay or not. nanoGPT's
// rule: tensors with two or more dimensions (matrices, embeddings, convolution kernels) decay; biases and
// normalisation weights do not. The segments cover the buffer in order (padding joins a neighbour).
struct ParamSegment {
    std::int64_t begin = 0, end = 0;
    bool decay = true;
};

class Model {
public:
    Model(const ModelSpec& spec, Backend& backend, const ModelOptions& options);
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    // x (n, C, H, W) with n <= batch, on the backend's device. Returns the logits (n, K) (a view owned by
    // the model, valid until the next forward). Token models (first layer token_embedding) take ids
    // (n, t) i64 with t <= the spec's sequence length, and return (n, t, V). first_sample: the run-wide index of x's first sample
    // (step * batch + offset within the batch); dropout masks depend on it, so micro-batches, ranks and
    // a resumed run draw exactly the masks of one whole batch.
    Tensor forward(const Tensor& x, bool training, std::uint64_t first_sample = 0);
    // dlogits (n, K) from the loss; accumulates into gradients(). Call after forward(training = true).
    void backward(const Tensor& dlogits);
    // A pipeline stage's backward: dy is the gradient of forward()'s output; dx (the input's shape and
    // dtype) receives the gradient of the input, for the stage before.
    void backward_to(const Tensor& dy, Tensor& dx);
    // Pipeline stages keep one model per micro-batch in flight, all on the same parameters, gradients and
    // buffers: this model's buffers (batch-norm statistics) become `other`'s (its own are released).
    void share_buffers_with(const Model& other);

    // Flat buffers (P_flat): every tensor starts on a kParamAlignBytes boundary; the gaps and the tail
    // up to the next boundary are zero and stay zero (their gradients are zero).
    Tensor& parameters() { return params_; }
    Tensor& gradients() { return grads_; }
    void zero_grad();
    std::int64_t param_count() const { return report_->total_params; }  // the spec's values, no padding
    // LoRA: the adapters' values (what is trained) and the frozen base's; 0 and 0 without LoRA
    std::int64_t lora_param_count() const { return lora_values_; }
    std::int64_t frozen_param_count() const { return frozen_values_; }
    // LoRA: switches the adapters off (false) or on again, no copy of anything: a forward without training
    // (forward(x, false), forward_cached) then computes every projection from its base weight alone, which is
    // the model before its adapters trained (the base model a LoRA run started from: "before" in the Sample
    // tab's comparison). A training forward always uses them. Nothing without LoRA.
    void set_adapters_enabled(bool on) { adapters_enabled_ = on; }
    bool adapters_enabled() const { return adapters_enabled_; }
    // QLoRA: of the frozen values, those stored quantised (ModelOptions::lora_base_bits)
    std::int64_t quantized_param_count() const { return quantized_values_; }
    std::int64_t flat_param_numel() const { return params_.numel(); }  // with padding
    std::vector<NamedTensor> state_dict() const;
    // Of state_dict()'s tensors: each layer's parameter bytes as stored (a tied head's left out: they are the
    // token embedding's) and all buffers' bytes, without building the names (the planner asks for every rank)
    struct StateBytes {
        std::map<int, std::size_t> layer_param_bytes;
        double buffer_bytes = 0;
    };
    StateBytes state_bytes() const;
    // Weight-decay segments of the flat buffer (see ParamSegment).
    std::vector<ParamSegment> decay_segments() const;
    // True when the model takes token ids (its first layer is a token embedding).
    bool takes_tokens() const { return takes_tokens_; }

    const ModelSpec& spec() const { return spec_; }
    const SpecReport& report() const { return *report_; }
    const ModelOptions& options() const { return options_; }
    Backend& backend() { return backend_; }

    // Bytes the model allocates, by category (what the ledger will see from this model).
    CategoryBytes allocated_bytes() const;

    // --- decoding with a key/value cache (generation: train/generate.h) -------------------------------
    // Whether forward_cached can run this model: a token model whose every layer decodes per position or
    // keeps a key/value cache (Layer::decoding: GPT's and the LLaMA family's causal attention), built for
    // batch 1 or more.
    bool can_decode_cached() const;
    // Allocates the cache of one sequence of up to `positions` tokens (at most the spec's sequence length):
    // each attention layer's keys and values, 2 x positions x (KV heads x head size) values of the model's
    // dtype (category activations, on the layer's index), and attention_cached's scratch for up to
    // `positions` new tokens at once (workspace). Again: the old cache is freed first.
    void allocate_kv_cache(std::int64_t positions);
    void release_kv_cache();
    std::int64_t kv_cache_positions() const { return kv_positions_; }
    // The cache's bytes: its keys and values, and its scratch
    std::size_t kv_cache_bytes() const;
    std::size_t kv_cache_workspace_bytes() const { return kv_workspace_.defined() ? kv_workspace_.nbytes() : 0; }
    // ids (1, n) i64: the tokens at positions position .. position + n - 1 of the sequence whose positions
    // 0 .. position - 1 went through forward_cached before (their keys and values are in the cache; later
    // ones are overwritten). Returns the logits (1, n, V) that forward() over the whole sequence gives for
    // those positions (up to rounding), a view valid until the next forward.
    Tensor forward_cached(const Tensor& ids, std::int64_t position);

    // --- units (sharding) -------------------------------------------------------------------------
    const std::vector<ParamUnit>& param_units() const { return units_; }
    // Flat buffer length of the layout (also when the model allocates no flat buffer).
    std::int64_t flat_numel() const { return flat_numel_; }
    // Points unit u's parameter (and/or gradient) views into `params_base` / `grads_base` (an
    // undefined tensor leaves that side as it is): the tensor at flat offset o lands at o - offset of the
    // unit. The bases hold at least param_units()[u].numel elements of the model's dtype.
    void bind_unit(int unit, const Tensor& params_base, const Tensor& grads_base);
    // PyTorch's initialisation of unit u's parameters, into wherever its views point now.
    void init_unit_parameters(int unit);
    // state_dict() with the trainable tensors as views into `flat` (laid out like the flat buffers).
    std::vector<NamedTensor> state_dict_in(const Tensor& flat) const;
    // A head tied to the token embedding (lm_head tied: true): the unit holding the token embedding's
    // weight, and the highest unit whose layer reads it again (the first to run backward); -1 without a
    // tie. The tied views have no storage of their own: binding the embedding's unit moves them too.
    int tied_unit() const { return tied_unit_; }
    int tied_head_unit() const { return tied_head_unit_; }

private:
    struct Node;
    struct Seq;
    void build_seq(Seq& seq, const std::vector<LayerSpec>& specs, const std::string& prefix, const Shape& in,
                   int& next_index, std::size_t& param_offset, bool is_top, int depth);
    void plan_units();
    std::int64_t bind_param_views();
    void plan_recompute();
    void request_activation(Tensor& target, const Shape& shape, DType d, MemCategory c, int layer, bool arena);
    LayerSpec with_lora(const LayerSpec& spec) const;
    void lay_out_params(Node& n, std::size_t& param_offset);
    Tensor forward_seq(Seq& seq, const Tensor& x, bool training, std::uint64_t first_sample);
    void backward_seq(Seq& seq, const Tensor& x, const Tensor& dy, Tensor dx_out);
    void forward_node(Node& n, const Tensor& x, bool training, std::uint64_t first_sample);
    void backward_node(Node& n, const Tensor& x, const Tensor& dy, Tensor& dx);
    // -1: every unit. A unit's (zero3, unit >= 0) leaves the frozen base alone: frozen_only initialises it,
    // once, when the model is built without a flat parameter buffer.
    void init_params(int unit, bool frozen_only = false);
    Tensor alloc(const Shape& shape, DType dt, MemCategory c, int layer, bool in_arena);
    // state_dict()'s entry for node n's parameter i, under the node's state_dict path
    NamedTensor named_param(const Node& n, std::size_t i, const std::string& path) const;
    void recompute_block(int first, int last);
    // Selective recompute: marks which nodes of seq.nodes[first..last] a recompute must run so that
    // every tensor their backward reads is valid again (out_valid: the range's output must be).
    // Returns whether the range's input must be valid.
    bool mark_recompute(Seq& seq, std::size_t first, std::size_t last, bool out_valid);

    ModelSpec spec_;
    std::shared_ptr<const SpecReport> report_;  // never null once built
    Backend& backend_;
    ModelOptions options_;
    LayerOptions layer_options_;
    bool takes_tokens_ = false;
    std::vector<std::string> torch_prefix_;  // per top-level layer: its state_dict prefix (GPT names)
    Tensor params_, grads_;
    Tensor frozen_, frozen_grad_;  // LoRA: the frozen base's values, and one scratch its gradients go to
    std::size_t frozen_offset_ = 0;
    std::int64_t lora_values_ = 0, frozen_values_ = 0;
    std::int64_t quantized_values_ = 0;  // QLoRA: values of the frozen base stored quantised
    bool adapters_enabled_ = true;       // set_adapters_enabled
    Tensor workspace_;
    std::unique_ptr<Seq> top_;
    std::vector<Node*> nodes_;  // depth-first
    std::vector<ParamUnit> units_;
    std::vector<int> unit_of_top_;  // top-level layer index -> unit
    Node* token_embedding_ = nullptr;  // set when a head is tied to it
    int tied_unit_ = -1, tied_head_unit_ = -1;
    std::vector<std::pair<Node*, std::size_t>> tied_nodes_;  // (node, param index) of each tied view
    std::int64_t flat_numel_ = 0;
    std::int64_t current_batch_ = 0;
    Tensor first_input_;  // the last forward's input batch (the first layer's backward needs it)
    std::uint64_t current_first_sample_ = 0;
    bool recomputing_ = false;
    int arena_holds_ = -1;  // first top-level index of the checkpointed block whose tensors the arena holds
    // recompute arena: requests collected while building, then one allocation and views into it
    struct ArenaRequest {
        Tensor* target;
        Shape shape;
        DType dtype;
        std::size_t offset;
    };
    std::vector<ArenaRequest> arena_requests_;
    std::size_t arena_cursor_ = 0, arena_bytes_ = 0;
    bool building_in_arena_ = false;
    int building_unit_ = 0;
    Tensor arena_;
    std::vector<std::pair<int, int>> ckpt_ranges_;  // checkpointed top-level [first, last]
    std::vector<char> ckpt_recompute_;               // per range: a recompute has something to run
    int arena_after_forward() const;                 // the first layer of the block the arena holds then
    std::vector<char> ckpt_uses_arena_;              // per range: its forward writes the arena
    std::vector<Node*> in_place_;                    // in-place ReLUs (nn/model_spec.h relu_in_place_after)
    // Backward buffers are shared by nesting depth: sequences (and residual blocks) at one depth never
    // run backward at the same time, so one pair of activation-gradient buffers (and one buffer for a
    // residual body's input gradient) per depth is enough.
    struct DepthBuffers {
        std::int64_t gbuf_numel = 0, dx_body_numel = 0;
        Tensor gbuf[2], dx_body;
        std::vector<Seq*> seqs;
        std::vector<Node*> residuals;
    };
    std::vector<DepthBuffers> depth_buffers_;

public:
    std::size_t recompute_arena_bytes() const { return arena_bytes_; }
    // What the recompute before a checkpointed block's backward runs of each of its layers (by layer
    // index; layers outside checkpointed blocks are absent): nothing, the layer without its output (a
    // kept output: LayerIO::recompute_output false, only what its backward reads), or its whole forward.
    // The planner's step-time model counts exactly this work.
    enum class RecomputeWork { none, saved_only, full };
    std::map<int, RecomputeWork> recompute_work() const;

    // --- the step's memory timeline (memory/step_timeline.h) -----------------------------------------
    // While a recorder is set, a training forward and backward report each top-level layer's phase and
    // the activation bytes it makes live or ends (measured: from the running step). The walks report the
    // same for one micro-batch of `rows` rows without running anything (predicted: the planner calls them
    // on a dry-run model). Both count bytes with timeline_bytes, so they differ only if the order does.
    void set_step_recorder(StepRecorder* r) { recorder_ = r; }
    StepRecorder* step_recorder() const { return recorder_; }
    void walk_forward_timeline(StepRecorder& r, std::int64_t rows);
    void walk_backward_timeline(StepRecorder& r, std::int64_t rows);

private:
    // the bytes of node n's output and saved tensors for `rows` rows (residual: its children's too): kept
    // in their own buffers (own) and in the recompute arena (arena)
    void timeline_bytes(const Node& n, std::int64_t rows, std::size_t& own, std::size_t& arena) const;
    void timeline_forward(StepRecorder& r, std::size_t k, std::int64_t rows);
    void timeline_block_end(StepRecorder& r, std::size_t k, int holds);
    void timeline_recompute(StepRecorder& r, std::size_t block, std::int64_t rows);
    void timeline_backward(StepRecorder& r, std::size_t k);
    StepRecorder* recorder_ = nullptr;
    // decoding with a key/value cache: -1 outside forward_cached, else the first new token's position
    std::int64_t decode_position_ = -1;
    std::int64_t kv_positions_ = 0;
    Tensor kv_workspace_;
    std::vector<std::size_t> timeline_own_, timeline_arena_;  // per top-level node: bytes live now
};

}  // namespace hr
