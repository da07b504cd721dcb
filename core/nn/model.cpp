#include "nn/model.h"

#include "nn/layer_registry.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "base/error.h"
#include "memory/step_timeline.h"
#include "nn/compression.h"
#include "nn/transformer_spec.h"

namespace hr {

struct Model::Seq {
    std::vector<std::unique_ptr<Node>> nodes;
    Tensor gbuf[2];  // activation-gradient ping-pong buffers, each of the largest input in this sequence
};

struct Model::Node {
    int index = -1;
    int unit = -1;  // the ParamUnit of its top-level layer
    std::string path;
    LayerSpec spec;
    std::unique_ptr<Layer> layer;  // null for residual blocks
    std::unique_ptr<Seq> body, shortcut;
    Shape in, out;  // per sample
    Tensor y_full;  // (B, out...) unless the output is a view
    std::vector<Tensor> saved_full;
    std::vector<ParamDecl> param_decls;
    std::vector<std::int64_t> param_offsets;  // element offsets into the flat buffers, ParamDecl order
    std::vector<std::int64_t> frozen_offsets; // LoRA: offsets into the frozen buffer (-1: trainable)
    std::vector<std::size_t> packed_bytes;    // QLoRA: the bytes of a quantised frozen weight (0: not quantised)
    std::vector<Tensor> params, grads, buffers;
    std::vector<std::string> buffer_names;
    Tensor dx_body_full;  // residual: gradient of the input through the body (B, in...)
    Tensor y;             // current-batch view of the output
    // activation checkpointing (nodes of checkpointed blocks): where the node's tensors live, and what
    // a recompute before backward must run (selective recompute: only what backward reads)
    bool output_in_arena = false, saved_in_arena = false;
    bool recompute_run = true;  // the layer's forward (residual: anything inside the block)
    bool recompute_add = true;  // residual: the sum
    bool recompute_output = true;  // a layer run by a recompute must write its output again (LayerIO)
    Node* in_place_of = nullptr;  // an in-place ReLU: the node whose output it overwrites (and shares)
    std::vector<char> saved_arena;  // per saved tensor: in the recompute arena
    KvCacheSlot kv;                 // decoding (Model::forward_cached): a cached attention layer's keys and values
};

namespace {

// A state_dict entry of a buffer (BatchNorm's running statistics): saved, never trained.
NamedTensor buffer_entry(std::string name, const Tensor& t, int layer) {
    NamedTensor b;
    b.name = std::move(name);
    b.tensor = t;
    b.trainable = false;
    b.layer = layer;
    return b;
}

std::uint64_t hash_str(const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}
}  // namespace

namespace {
bool make_layer_is_view(const LayerSpec& s) { return s.type == "flatten"; }

// What a layer's backward reads besides dy and its saved tensors (layers.cpp): its input x, its own
// output y. (ReLU reads y, which also holds after an in-place ReLU; see layers.cpp.)
bool backward_reads_x(const std::string& t) {
    return t == "conv2d" || t == "linear" || t == "batchnorm2d" || t == "leaky_relu" || t == "gelu";
}
bool backward_reads_y(const std::string& t) { return t == "relu" || t == "tanh" || t == "sigmoid"; }
}  // namespace

Model::Model(const ModelSpec& spec, Backend& backend, const ModelOptions& options)
    : spec_(spec), backend_(backend), options_(options) {
    if (options_.part.stage_output) {
        report_ = std::make_shared<const SpecReport>(validate_model_stage(spec_));
    } else {  // (shared with analyze_model_spec's cache: a model of a spec seen before copies no report)
        report_ = analyze_model_spec_shared(spec_);
        if (!report_->ok) throw InputError(report_->error_message);
    }
    if (options_.batch < 1) throw InputError("batch size must be at least 1");
    if (!dtype_is_float(options_.dtype)) throw Error("internal: model dtype must be a float type");
    Allocator& a = options_.allocator ? *options_.allocator : backend_.allocator();
    if (options_.unit_pad_multiple < 1) throw Error("internal: unit_pad_multiple must be at least 1");
    if (options_.lora_base_bits != 0 &&
        (options_.lora_rank <= 0 || !quantized_format_known(options_.lora_base_bits) || options_.lora_base_group < 1))
        throw Error("internal: a quantised LoRA base needs LoRA, int8, int4 or nf4 and a group of at least 1");
    takes_tokens_ = is_token_model(spec_);
    torch_prefix_ = options_.part.name_prefixes.empty() ? state_dict_prefixes(spec_) : options_.part.name_prefixes;
    if (torch_prefix_.size() < spec_.layers.size() + static_cast<std::size_t>(options_.part.layer_offset))
        throw Error("internal: a pipeline stage's names do not cover its layers");
    layer_options_.recompute_attention = options_.recompute_attention;
    layer_options_.transformer_layers =
        options_.part.transformer_layers > 0 ? options_.part.transformer_layers : transformer_layer_count(spec_);
    plan_units();
    // 1) the graph with its activations; parameter offsets are laid out while building
    top_ = std::make_unique<Seq>();
    int next_index = options_.part.node_offset;  // a pipeline stage: the whole model's depth-first indices
    std::size_t offset = 0;
    build_seq(*top_, spec_.layers, "", spec_.input_shape, next_index, offset, true, 0);
    // 2) flat parameter and gradient buffers (every tensor starts on a kParamAlignBytes boundary, every
    //    unit's slice ends on a unit_pad_multiple x kParamAlignBytes one); layers get views into them.
    //    With sharding the owner may allocate neither and bind each unit's views itself (bind_unit).
    const std::size_t align = param_align_elements(options_.dtype);
    const std::int64_t flat = static_cast<std::int64_t>((offset + align - 1) / align * align);
    flat_numel_ = flat;
    // (a pipeline stage may hold no adapter: the whole model is checked, CheckpointMapper::rank_part)
    if (options_.lora_rank > 0 && lora_values_ == 0 && !options_.part.stage_output)
        throw InputError(HR_MSG("model.lora_no_linear",
                                "--lora %1 adds adapters to linear layers and transformer projections, but this model "
                                "has neither; leave --lora out"),
                         {std::to_string(options_.lora_rank)});
    if (options_.allocate_params) params_ = Tensor::empty(a, {flat}, options_.dtype, MemCategory::parameters);
    if (options_.allocate_grads) grads_ = Tensor::empty(a, {flat}, options_.dtype, MemCategory::gradients);
    if (frozen_offset_ > 0) {
        // the frozen base (category parameters), and one scratch for the gradients of frozen tensors whose
        // layer computes them anyway (the largest of those; workspace: nothing reads it)
        if (options_.part.frozen_from) {
            if (options_.part.frozen_from->frozen_offset_ != frozen_offset_)
                throw Error("internal: a shared frozen base of another layout");
            frozen_ = options_.part.frozen_from->frozen_;
        } else {
            frozen_ = Tensor::empty(a, {static_cast<std::int64_t>(frozen_offset_)}, options_.dtype, MemCategory::parameters);
        }
        std::int64_t scratch = 0;
        for (Node* n : nodes_)
            for (const ParamDecl& d : n->param_decls)
                if (d.frozen && !n->layer->skips_frozen_gradients()) scratch = std::max(scratch, shape_numel(d.shape));
        if (scratch > 0) frozen_grad_ = Tensor::empty(a, {scratch}, options_.dtype, MemCategory::workspace);
    }
    const std::int64_t counted = bind_param_views();
    for (auto& d : depth_buffers_) {
        for (auto& g : d.gbuf) g = Tensor::empty(a, {d.gbuf_numel}, options_.dtype, MemCategory::workspace);
        for (Seq* q : d.seqs)
            for (int k = 0; k < 2; ++k) q->gbuf[k] = d.gbuf[k];
        if (d.dx_body_numel > 0) {
            d.dx_body = Tensor::empty(a, {d.dx_body_numel}, options_.dtype, MemCategory::workspace);
            for (Node* r : d.residuals) r->dx_body_full = d.dx_body.view(0, with_batch(options_.batch, r->in));
        }
    }
    if (counted != report_->total_params)
        throw Error("internal: parameter layout (" + std::to_string(counted) + ") disagrees with the spec report (" +
                    std::to_string(report_->total_params) + ")");
    // 2b) the recompute arena shared by the checkpointed blocks
    if (arena_bytes_ > 0) {
        arena_ = Tensor::empty(a, {static_cast<std::int64_t>(arena_bytes_)}, DType::u8, MemCategory::activations);
        for (auto& r : arena_requests_) *r.target = Tensor(arena_.storage(), r.offset, r.shape, r.dtype);
    }
    arena_requests_.clear();
    for (Node* n : in_place_) n->y_full = n->in_place_of->y_full;
    // 2c) selective recompute: what each checkpointed block must run again before its backward
    plan_recompute();
    // 3) one shared workspace of the largest layer need
    std::size_t ws = 0;
    for (Node* n : nodes_)
        if (n->layer) ws = std::max(ws, n->layer->workspace_bytes(backend_, options_.batch, n->in, options_.dtype));
    if (ws > 0) workspace_ = Tensor::empty(a, {static_cast<std::int64_t>(ws)}, DType::u8, MemCategory::workspace);
    if (!options_.dry_run && params_.defined()) init_params(-1);
    // zero3 (no flat parameter buffer) initialises the trainable units one by one (init_unit_parameters);
    // the frozen base (LoRA), in units of no trainable values too, here
    else if (!options_.dry_run && frozen_.defined() && !options_.part.frozen_from) init_params(-1, true);
}

// The units (checkpoint blocks; their slices of the flat buffers are laid out while building) and the blocks
// asked to be checkpointed.
void Model::plan_units() {
    auto blocks = checkpoint_blocks(spec_, *report_);
    unit_of_top_.assign(spec_.layers.size(), 0);
    for (std::size_t u = 0; u < blocks.size(); ++u) {
        units_.push_back({blocks[u].first, blocks[u].last, 0, 0, 0});
        for (int i = blocks[u].first; i <= blocks[u].last; ++i) unit_of_top_[static_cast<std::size_t>(i)] = static_cast<int>(u);
    }
    for (int b : options_.checkpoint_blocks) {
        if (b < 0 || b >= static_cast<int>(blocks.size()))
            throw InputError("checkpoint block " + std::to_string(b) + " does not exist; the model has " +
                             std::to_string(blocks.size()) + " blocks (0.." + std::to_string(blocks.size() - 1) + ")");
        ckpt_ranges_.push_back({blocks[b].first, blocks[b].last});
    }
}

// Every node's parameter and gradient views into the flat buffers (the frozen base's, a tied head's the token
// embedding's); the trainable values counted, as the spec report counts them.
std::int64_t Model::bind_param_views() {
    std::int64_t counted = 0;
    Node* token_embedding = nullptr;
    for (Node* n : nodes_)
        if (!token_embedding && n->layer && n->layer->type() == "token_embedding") token_embedding = n;
    for (Node* n : nodes_)
        for (std::size_t i = 0; i < n->param_decls.size(); ++i) {
            if (n->param_decls[i].tied_to_token_embedding) {
                // the same views as the token embedding's weight: both uses accumulate into one gradient
                if (!token_embedding || token_embedding->param_decls.empty() ||
                    token_embedding->param_decls[0].shape != n->param_decls[i].shape)
                    throw InputError(HR_MSG("model.tied_head",
                                            "layer %1 (lm_head) is tied to the token embedding, but the model has no "
                                            "token_embedding of the same vocabulary and width; set tied to false or "
                                            "match vocab_size and dim"),
                                     {n->path});
                if (n->param_decls[i].frozen) {  // LoRA: the frozen embedding's values; the head takes no gradient
                    n->params.push_back(frozen_.view(token_embedding->frozen_offsets[0], n->param_decls[i].shape));
                    n->grads.push_back(n->layer->skips_frozen_gradients()
                                           ? Tensor()
                                           : frozen_grad_.view(0, n->param_decls[i].shape));
                    continue;
                }
                // Sharded (zero2/zero3: no flat gradient or parameter buffer), the views follow the token
                // embedding's when its unit is bound (bind_unit); the engine keeps that unit whole while the
                // head needs it (strategy/sharding.h, "a tied head").
                n->params.push_back(params_.defined() ? params_.view(token_embedding->param_offsets[0], n->param_decls[i].shape)
                                                      : Tensor());
                n->grads.push_back(grads_.defined() ? grads_.view(token_embedding->param_offsets[0], n->param_decls[i].shape)
                                                    : Tensor());
                token_embedding_ = token_embedding;
                tied_unit_ = token_embedding->unit;
                tied_head_unit_ = std::max(tied_head_unit_, n->unit);
                tied_nodes_.push_back({n, i});
                continue;
            }
            const ParamDecl& d = n->param_decls[i];
            if (d.frozen && n->packed_bytes[i] > 0) {  // QLoRA: the packed bytes (the layer dequantises them)
                n->params.push_back(Tensor(frozen_.storage(),
                                           frozen_.byte_offset() +
                                               static_cast<std::size_t>(n->frozen_offsets[i]) * dtype_size(options_.dtype),
                                           {static_cast<std::int64_t>(n->packed_bytes[i])}, DType::u8));
                n->grads.push_back(Tensor());
                counted += shape_numel(d.shape);
                continue;
            }
            if (d.frozen) {
                n->params.push_back(frozen_.view(n->frozen_offsets[i], d.shape));
                n->grads.push_back(n->layer->skips_frozen_gradients() ? Tensor() : frozen_grad_.view(0, d.shape));
                counted += shape_numel(d.shape);
                continue;
            }
            n->params.push_back(params_.defined() ? params_.view(n->param_offsets[i], d.shape) : Tensor());
            n->grads.push_back(grads_.defined() ? grads_.view(n->param_offsets[i], d.shape) : Tensor());
            if (!d.lora_adapter()) counted += shape_numel(d.shape);  // (the spec's count has no adapters)
            units_[static_cast<std::size_t>(n->unit)].values += shape_numel(d.shape);
        }
    return counted;
}

// Selective recompute: what each checkpointed block must run again before its backward.
void Model::plan_recompute() {
    for (auto [first, last] : ckpt_ranges_) {
        mark_recompute(*top_, static_cast<std::size_t>(first), static_cast<std::size_t>(last), false);
        bool run = false, arena = false;
        std::vector<const Node*> stack;
        for (int i = first; i <= last; ++i) stack.push_back(top_->nodes[i].get());
        while (!stack.empty()) {
            const Node* n = stack.back();
            stack.pop_back();
            run = run || (n->layer ? n->recompute_run : n->recompute_add);
            arena = arena || n->output_in_arena || n->saved_in_arena;
            for (const Seq* q : {n->body.get(), n->shortcut.get()})
                if (q)
                    for (auto& c : q->nodes) stack.push_back(c.get());
        }
        ckpt_recompute_.push_back(run);
        ckpt_uses_arena_.push_back(arena);
    }
}

Model::~Model() = default;

// An activation buffer: its own allocation, or (inside a checkpointed block) a slice of the arena.
Tensor Model::alloc(const Shape& shape, DType dt, MemCategory c, int layer, bool in_arena) {
    if (!in_arena) return Tensor::empty(options_.allocator ? *options_.allocator : backend_.allocator(), shape, dt, c, layer);
    const std::size_t bytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dt);
    arena_requests_.push_back({nullptr, shape, dt, arena_cursor_});
    arena_cursor_ += (bytes + 63) / 64 * 64;
    arena_bytes_ = std::max(arena_bytes_, arena_cursor_);
    return Tensor();  // patched once the arena exists (the request's target is set by the caller)
}

// An activation of a node: its own allocation, or a request patched to point at the node's tensor once the
// arena exists.
void Model::request_activation(Tensor& target, const Shape& shape, DType d, MemCategory c, int layer, bool arena) {
    if (!arena) {
        target = alloc(shape, d, c, layer, false);
    } else {
        alloc(shape, d, c, layer, true);
        arena_requests_.back().target = &target;
    }
}

// A layer's spec with LoRA's attributes where LoRA puts adapters: every linear layer and every transformer projection
// (attention's c_attn and c_proj, the MLP's c_fc and c_proj: its registry entry's lora_target); every other
// parameter is frozen.
LayerSpec Model::with_lora(const LayerSpec& spec) const {
    LayerSpec ls = spec;
    const LayerEntry* entry = layer_entry(ls.type);
    if (options_.lora_rank > 0 && entry && entry->lora_target) {  // (its registry entry)
        ls.attrs["lora_rank"] = options_.lora_rank;
        if (ls.type == "llama_block" && options_.lora_targets != 0) ls.attrs["lora_targets"] = options_.lora_targets;
        ls.attrs["lora_alpha"] = options_.lora_alpha > 0 ? options_.lora_alpha : options_.lora_rank;
        if (options_.lora_dropout > 0) ls.attrs["lora_dropout"] = options_.lora_dropout;
        if (options_.lora_base_bits > 0) {
            ls.attrs["lora_base_bits"] = options_.lora_base_bits;
            ls.attrs["lora_base_group"] = options_.lora_base_group;
        }
    }
    return ls;
}

// A node's parameters: offsets in the flat buffer, or in the frozen base (LoRA; packed for QLoRA), or none (tied).
void Model::lay_out_params(Node& n, std::size_t& param_offset) {
    const DType dt = options_.dtype;
    const std::size_t align = param_align_elements(dt);
    for (auto& p : n.param_decls) {
        const bool adapter = p.lora_adapter();
        if (options_.lora_rank > 0) p.frozen = !adapter;
        if (adapter) lora_values_ += shape_numel(p.shape);
        if (p.packed && (!p.frozen || p.shape.size() != 2))
            throw Error("internal: " + n.path + "." + p.name + " is declared packed but is not a frozen matrix");
        n.packed_bytes.push_back(0);
        if (p.tied_to_token_embedding) {  // no storage of its own (resolved after the flat buffers)
            n.param_offsets.push_back(-1);
            n.frozen_offsets.push_back(-1);
            continue;
        }
        if (p.frozen) {  // in the frozen buffer, aligned the same way
            frozen_offset_ = (frozen_offset_ + align - 1) / align * align;
            n.param_offsets.push_back(-1);
            n.frozen_offsets.push_back(static_cast<std::int64_t>(frozen_offset_));
            std::size_t elements = static_cast<std::size_t>(shape_numel(p.shape));
            if (p.packed) {  // QLoRA: the layer dequantises it (ParamDecl::packed)
                // packed: its bytes, in elements of the buffer's dtype
                n.packed_bytes.back() = quantized_bytes(p.shape[0], p.shape[1], options_.lora_base_bits,
                                                        options_.lora_base_group);
                elements = (n.packed_bytes.back() + dtype_size(dt) - 1) / dtype_size(dt);
                quantized_values_ += shape_numel(p.shape);
            }
            frozen_offset_ += elements;
            frozen_values_ += shape_numel(p.shape);
            continue;
        }
        param_offset = (param_offset + align - 1) / align * align;
        n.param_offsets.push_back(static_cast<std::int64_t>(param_offset));
        n.frozen_offsets.push_back(-1);
        param_offset += static_cast<std::size_t>(shape_numel(p.shape));
    }
}

void Model::build_seq(Seq& seq, const std::vector<LayerSpec>& specs, const std::string& prefix, const Shape& in,
                      int& next_index, std::size_t& param_offset, bool is_top, int depth) {
    if (static_cast<int>(depth_buffers_.size()) <= depth) depth_buffers_.resize(static_cast<std::size_t>(depth) + 1);
    Allocator& a = options_.allocator ? *options_.allocator : backend_.allocator();
    const std::int64_t B = options_.batch;
    const DType dt = options_.dtype;
    Shape cur = in;
    std::int64_t max_in = shape_numel(in);  // the sequence input too (a first BatchNorm needs dx)
    for (std::size_t i = 0; i < specs.size(); ++i) {
        // checkpointing (top level only): is this node inside a checkpointed block, and is it the kept one?
        bool saved_in_arena = building_in_arena_;
        bool output_in_arena = building_in_arena_;
        const bool outer_arena = building_in_arena_;
        if (is_top) {
            for (auto [first, last] : ckpt_ranges_) {
                if (static_cast<int>(i) < first || static_cast<int>(i) > last) continue;
                if (static_cast<int>(i) == first) arena_cursor_ = 0;  // each block reuses the arena from 0
                int kept = last;
                while (kept > first && make_layer_is_view(specs[kept])) --kept;
                // a kept ReLU that runs in place keeps its producer's output (they are one tensor)
                const int kept_producer =
                    specs[kept].type == "relu" && kept > first && relu_in_place_after(specs[kept - 1].type) ? kept - 1
                                                                                                           : -1;
                saved_in_arena = true;
                output_in_arena = static_cast<int>(i) != kept && static_cast<int>(i) != kept_producer;
            }
        }
        if (is_top) {
            building_unit_ = unit_of_top_[i];
            ParamUnit& u = units_[static_cast<std::size_t>(building_unit_)];
            if (static_cast<int>(i) == u.first_layer) u.offset = static_cast<std::int64_t>(param_offset);
        }
        auto node = std::make_unique<Node>();
        Node& n = *node;
        n.index = next_index++;
        n.unit = building_unit_;
        n.path = prefix.empty() ? std::to_string(i + static_cast<std::size_t>(options_.part.layer_offset))
                                : prefix + "." + std::to_string(i);
        n.spec = specs[i];
        n.in = cur;
        nodes_.push_back(&n);
        max_in = std::max(max_in, shape_numel(cur));
        if (specs[i].type == "residual") {
            building_in_arena_ = saved_in_arena;
            n.body = std::make_unique<Seq>();
            build_seq(*n.body, specs[i].body, n.path + ".body", cur, next_index, param_offset, false, depth + 1);
            Shape out = n.body->nodes.back()->out;
            if (!specs[i].shortcut.empty()) {
                n.shortcut = std::make_unique<Seq>();
                build_seq(*n.shortcut, specs[i].shortcut, n.path + ".shortcut", cur, next_index, param_offset, false,
                          depth + 1);
            }
            building_in_arena_ = outer_arena;
            n.out = out;
            n.output_in_arena = output_in_arena;
            request_activation(n.y_full, with_batch(B, out), dt, MemCategory::activations, n.index, output_in_arena);
            DepthBuffers& db = depth_buffers_[static_cast<std::size_t>(depth)];
            db.dx_body_numel = std::max(db.dx_body_numel, B * shape_numel(cur));
            db.residuals.push_back(&n);
        } else {
            const LayerSpec ls = with_lora(specs[i]);
            n.layer = make_layer(ls, layer_options_);
            n.out = n.layer->output_shape(cur);
            n.param_decls = n.layer->params(cur);
            lay_out_params(n, param_offset);
            for (const auto& b : n.layer->buffers(cur)) {
                Tensor t = Tensor::empty(a, b.shape, b.dtype, MemCategory::other, n.index);
                if (!options_.dry_run) backend_.fill(t, b.init);
                n.buffers.push_back(t);
                n.buffer_names.push_back(b.name);
            }
            // ReLU in place over the previous node's output when that node's backward does not read it
            // and both live in the same place (both in the recompute arena, or both kept)
            Node* prev = i > 0 && !seq.nodes.empty() ? seq.nodes.back().get() : nullptr;
            if (specs[i].type == "relu" && prev && relu_in_place_after(specs[i - 1].type) &&
                prev->output_in_arena == output_in_arena) {
                n.output_in_arena = output_in_arena;
                n.in_place_of = prev;
                in_place_.push_back(&n);
            } else if (!n.layer->output_is_view()) {
                n.output_in_arena = output_in_arena;
                request_activation(n.y_full, with_batch(B, n.out), dt, MemCategory::activations, n.index, output_in_arena);
            }
            auto saved = n.layer->saved(B, cur);
            // (told apart at batches 1 and 2: at B = 1 every tensor has its batch-1 size, and a micro-batch of
            // one sample must checkpoint like any other)
            auto saved_one = n.layer->saved(1, cur), saved_two = n.layer->saved(2, cur);
            n.saved_full.resize(saved.size());
            for (std::size_t k = 0; k < saved.size(); ++k) {
                // Saved tensors that do not grow with the batch (BatchNorm's mean and 1/std, a few bytes per
                // channel) stay out of the arena, so a recompute need not run the layer just for them.
                const bool per_batch = shape_numel(saved_two[k].shape) != shape_numel(saved_one[k].shape);
                const bool in_arena = saved_in_arena && per_batch;
                n.saved_in_arena = n.saved_in_arena || in_arena;
                n.saved_arena.push_back(in_arena ? 1 : 0);
                request_activation(n.saved_full[k], saved[k].shape, saved[k].compute_dtype ? dt : saved[k].dtype, MemCategory::activations, n.index, in_arena);
            }
        }
        cur = n.out;
        seq.nodes.push_back(std::move(node));
        if (is_top) {
            // the unit's slice ends on a multiple of unit_pad_multiple x alignment (the shards are equal)
            ParamUnit& u = units_[static_cast<std::size_t>(building_unit_)];
            if (static_cast<int>(i) == u.last_layer) {
                const std::int64_t m = static_cast<std::int64_t>(param_align_elements(dt)) * options_.unit_pad_multiple;
                u.numel = (static_cast<std::int64_t>(param_offset) - u.offset + m - 1) / m * m;
                param_offset = static_cast<std::size_t>(u.offset + u.numel);
            }
        }
    }
    DepthBuffers& db = depth_buffers_[static_cast<std::size_t>(depth)];
    db.gbuf_numel = std::max(db.gbuf_numel, B * max_in);
    db.seqs.push_back(&seq);
}

void Model::init_unit_parameters(int unit) {
    if (unit < 0 || unit >= static_cast<int>(units_.size())) throw Error("internal: no unit " + std::to_string(unit));
    if (!options_.dry_run) init_params(unit);
}

void Model::bind_unit(int unit, const Tensor& params_base, const Tensor& grads_base) {
    if (unit < 0 || unit >= static_cast<int>(units_.size())) throw Error("internal: no unit " + std::to_string(unit));
    const ParamUnit& u = units_[static_cast<std::size_t>(unit)];
    for (const Tensor* b : {&params_base, &grads_base})
        if (b->defined() && (b->numel() < u.numel || b->dtype() != options_.dtype))
            throw Error("internal: unit " + std::to_string(unit) + " needs " + std::to_string(u.numel) + " " +
                        dtype_name(options_.dtype) + " elements to bind, got " + std::to_string(b->numel()) + " " +
                        dtype_name(b->dtype()));
    for (Node* n : nodes_) {
        if (n->unit != unit) continue;
        for (std::size_t i = 0; i < n->param_decls.size(); ++i) {
            if (n->param_decls[i].tied_to_token_embedding) continue;  // follows the token embedding (below)
            if (n->param_decls[i].frozen) continue;                   // in the frozen buffer, bound for good
            const std::int64_t at_ = n->param_offsets[i] - u.offset;
            if (params_base.defined()) n->params[i] = params_base.view(at_, n->param_decls[i].shape);
            if (grads_base.defined()) n->grads[i] = grads_base.view(at_, n->param_decls[i].shape);
        }
    }
    // a tied head (in whichever unit) sees the token embedding's weight and gradient where they are now
    if (unit == tied_unit_)
        for (auto [n, i] : tied_nodes_) {
            if (params_base.defined()) n->params[i] = token_embedding_->params[0];
            if (grads_base.defined()) n->grads[i] = token_embedding_->grads[0];
        }
}

std::vector<NamedTensor> Model::state_dict_in(const Tensor& flat) const {
    if (!flat.defined() || flat.numel() < flat_numel_ || flat.dtype() != options_.dtype)
        throw Error("internal: state_dict_in needs a flat buffer of " + std::to_string(flat_numel_) + " elements");
    std::vector<NamedTensor> out;
    for (Node* n : nodes_) {
        // the names of state_dict() (GPT layouts: nanoGPT's prefixes, so zero3's consolidated file is one process's)
        const std::size_t dot = n->path.find('.');
        const std::size_t top = static_cast<std::size_t>(std::stoul(n->path.substr(0, dot)));
        const std::string path = torch_prefix_[top] + (dot == std::string::npos ? std::string() : n->path.substr(dot));
        for (std::size_t i = 0; i < n->param_decls.size(); ++i) {
            if (n->param_decls[i].frozen) {  // not in the flat layout: the frozen buffer's tensor
                out.push_back(named_param(*n, i, path));
                continue;
            }
            // a tied head is the token embedding's weight again (as in state_dict())
            const bool tied = n->param_decls[i].tied_to_token_embedding;
            const std::int64_t at_ = tied ? token_embedding_->param_offsets[0] : n->param_offsets[i];
            NamedTensor t;
            t.name = path + "." + n->param_decls[i].name;
            t.tensor = flat.view(at_, n->param_decls[i].shape);
            t.layer = n->index;
            t.tied = tied;
            out.push_back(t);
        }
        for (std::size_t i = 0; i < n->buffers.size(); ++i)
            out.push_back(buffer_entry(path + "." + n->buffer_names[i], n->buffers[i], n->index));
    }
    return out;
}

void Model::init_params(int unit, bool frozen_only) {
    // PyTorch's default initialisation (kaiming_uniform(a=sqrt(5)) for weights = U(+-1/sqrt(fan_in)),
    // same bound for biases; BatchNorm weight 1, bias 0) from a seeded, portable generator per tensor.
    std::vector<double> host;
    for (Node* n : nodes_) {
        if (unit >= 0 && n->unit != unit) continue;
        for (std::size_t i = 0; i < n->param_decls.size(); ++i) {
            const ParamDecl& d = n->param_decls[i];
            if (d.tied_to_token_embedding) continue;  // initialised as the token embedding
            if (frozen_only ? !d.frozen : unit >= 0 && d.frozen) continue;
            const std::int64_t cnt = shape_numel(d.shape);
            // a tensor-parallel head's slice: the whole head's values are drawn, its rows kept
            std::int64_t skip = 0, drawn = cnt;
            // (its adapter A, (R, in), is whole: only B's rows are the head's)
            if (options_.part.head_total > 0 && n == top_->nodes.back().get() && !d.shape.empty() && d.shape[0] > 0 &&
                !is_lora_a(d.name)) {
                const std::int64_t per_row = cnt / d.shape[0];
                skip = options_.part.head_first * per_row;
                drawn = options_.part.head_total * per_row;
            }
            host.assign(static_cast<std::size_t>(drawn), 0.0);
            // a pipeline stage's copy of a tied head: the token embedding's values (its key, its init)
            const std::string key = options_.part.head_copies_token_embedding && n->layer && n->layer->type() == "lm_head"
                                        ? std::string("0.weight")
                                        : n->path + "." + d.name;
            if (d.init == ParamDecl::Init::ones) {
                std::fill(host.begin(), host.end(), 1.0);
            } else if (d.init == ParamDecl::Init::normal) {
                // Box-Muller over the generator's raw 64-bit output (portable, unlike std::normal_distribution)
                std::mt19937_64 gen(options_.seed * 0x9E3779B97F4A7C15ull ^ hash_str(key));
                constexpr double two_pi = 6.283185307179586476925286766559;
                for (std::size_t k = 0; k < host.size(); k += 2) {
                    const double u1 = (static_cast<double>(gen() >> 11) + 1.0) * (1.0 / 9007199254740993.0);  // (0, 1]
                    const double u2 = static_cast<double>(gen() >> 11) * (1.0 / 9007199254740992.0);
                    const double r = std::sqrt(-2.0 * std::log(u1)) * d.std;
                    host[k] = r * std::cos(two_pi * u2);
                    if (k + 1 < host.size()) host[k + 1] = r * std::sin(two_pi * u2);
                }
            } else if (d.init == ParamDecl::Init::uniform_fan_in) {
                std::mt19937_64 gen(options_.seed * 0x9E3779B97F4A7C15ull ^ hash_str(key));
                const double bound = 1.0 / std::sqrt(static_cast<double>(d.fan_in));
                for (auto& v : host) {
                    double u = static_cast<double>(gen() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
                    v = (2.0 * u - 1.0) * bound;
                }
            }
            if (drawn != cnt) host = std::vector<double>(host.begin() + skip, host.begin() + skip + cnt);
            // convert to the parameter dtype on the host, then upload (QLoRA: f32, packed)
            if (n->packed_bytes[i] > 0) {
                std::vector<float> f(host.begin(), host.end());
                std::vector<std::uint8_t> packed(n->packed_bytes[i]);
                quantize_pack(f.data(), d.shape[0], d.shape[1], options_.lora_base_bits, options_.lora_base_group,
                              packed.data());
                backend_.copy_from_host(packed.data(), n->params[i]);
            } else if (options_.dtype == DType::f64) {
                backend_.copy_from_host(host.data(), n->params[i]);
            } else {
                std::vector<float> f(host.begin(), host.end());
                if (options_.dtype == DType::f32) {
                    backend_.copy_from_host(f.data(), n->params[i]);
                } else {
                    std::vector<std::uint16_t> h(f.size());
                    for (std::size_t k = 0; k < f.size(); ++k)
                        h[k] = options_.dtype == DType::bf16 ? f32_to_bf16(f[k]) : f32_to_f16(f[k]);
                    backend_.copy_from_host(h.data(), n->params[i]);
                }
            }
        }
    }
}

void Model::zero_grad() {
    if (grads_.defined()) backend_.fill(grads_, 0.0);
}

Tensor Model::forward(const Tensor& x, bool training, std::uint64_t first_sample) {
    const std::int64_t n = x.dim(0);
    if (n < 1 || n > options_.batch)
        throw Error("internal: forward with batch " + std::to_string(n) + " but the model was built for at most " +
                    std::to_string(options_.batch));
    if (takes_tokens_) {
        // token ids (n, t), t up to the sequence length the model was built for
        if (x.ndim() != 2 || x.dtype() != DType::i64 || x.dim(1) < 1 || x.dim(1) > spec_.input_shape[0])
            throw InputError(HR_MSG("model.token_input",
                                    "the model takes token ids (N, T) i64 with 1 <= T <= %1, got %2 %3; shorten the "
                                    "sequence or build the model for a longer one"),
                             {std::to_string(spec_.input_shape[0]), shape_str(x.shape()), dtype_name(x.dtype())});
    } else {
        Shape expect = with_batch(n, spec_.input_shape);
        if (x.shape() != expect)
            throw InputError("input batch has shape " + shape_str(x.shape()) + " but the model expects " +
                             shape_str(expect) + "; check the model's \"input\" against the dataset");
    }
    current_batch_ = n;
    current_first_sample_ = first_sample;
    first_input_ = x;
    Tensor out = forward_seq(*top_, x, training, first_sample);
    // after a forward, the arena holds the tensors of the last checkpointed block that uses it: its
    // backward (the first one to run) needs no recompute
    arena_holds_ = arena_after_forward();
    return out;
}

int Model::arena_after_forward() const {
    int holds = -1;
    for (std::size_t r = 0; r < ckpt_ranges_.size(); ++r)
        if (ckpt_uses_arena_[r]) holds = std::max(holds, ckpt_ranges_[r].first);
    return holds;
}

Tensor Model::forward_seq(Seq& seq, const Tensor& x, bool training, std::uint64_t first_sample) {
    Tensor cur = x;
    UnitHooks* hooks = &seq == top_.get() ? options_.hooks : nullptr;
    for (std::size_t k = 0; k < seq.nodes.size(); ++k) {
        Node& n = *seq.nodes[k];
        const ParamUnit* u = hooks ? &units_[static_cast<std::size_t>(n.unit)] : nullptr;
        if (u && static_cast<int>(k) == u->first_layer) hooks->before_forward(n.unit);
        const bool mark = recorder_ && training && !recomputing_ && &seq == top_.get();
        if (mark) timeline_forward(*recorder_, k, x.dim(0));
        forward_node(n, cur, training, first_sample);
        cur = n.y;
        if (mark) timeline_block_end(*recorder_, k, arena_after_forward());
        if (u && static_cast<int>(k) == u->last_layer) hooks->after_forward(n.unit);
    }
    return cur;
}

void Model::forward_node(Node& n, const Tensor& x, bool training, std::uint64_t first_sample) {
    const std::int64_t b = x.dim(0);
    // a recompute skips what backward does not read (mark_recompute); the node's views stay as they are
    if (recomputing_ && !n.recompute_run) return;
    if (!n.layer) {  // residual: y = body(x) + shortcut(x)
        Tensor bo = forward_seq(*n.body, x, training, first_sample);
        Tensor so = n.shortcut ? forward_seq(*n.shortcut, x, training, first_sample) : x;
        n.y = n.y_full.view(0, bo.shape());
        if (!recomputing_ || n.recompute_add) backend_.add(bo, so, n.y);
        return;
    }
    // shapes of this call (a sequence may be shorter than the one the buffers were sized for)
    const Shape in(x.shape().begin() + 1, x.shape().end());
    const Shape out = in == n.in ? n.out : n.layer->output_shape(in);
    if (n.layer->output_is_view()) {
        n.y = x.reshape(with_batch(b, out));
        return;
    }
    n.y = n.y_full.view(0, with_batch(b, out));
    LayerIO io;
    io.backend = &backend_;
    io.training = training;
    io.x = x;
    io.y = n.y;
    io.params = n.params;
    io.buffers = n.buffers;
    auto decls = n.layer->saved(b, in);
    for (std::size_t i = 0; i < decls.size(); ++i) io.saved.push_back(n.saved_full[i].view(0, decls[i].shape));
    io.workspace = workspace_;
    io.seed = options_.seed ^ (0xD1B54A32D192ED03ull * static_cast<std::uint64_t>(n.index + 1));
    // dropout: element j of sample s draws counter s * numel(out) + j, so a batch split into micro-batches
    // (or over ranks, or resumed) gets the same masks as the whole batch at once
    io.counter = first_sample * static_cast<std::uint64_t>(std::max<std::int64_t>(1, shape_numel(out)));
    io.first_sample = first_sample;
    io.recompute = recomputing_;
    io.recompute_output = !recomputing_ || n.recompute_output;
    io.adapters_off = !training && !adapters_enabled_;
    if (decode_position_ >= 0) {
        io.decoding = true;
        io.position = decode_position_;
        if (n.kv.k.defined()) io.kv = &n.kv;
    }
    n.layer->forward(io);
}

bool Model::can_decode_cached() const {
    if (!takes_tokens_) return false;
    for (const Node* n : nodes_)
        if (n->layer && n->layer->decoding() == Layer::Decoding::none) return false;
    return true;
}

void Model::release_kv_cache() {
    for (Node* n : nodes_) n->kv = KvCacheSlot();
    kv_workspace_ = Tensor();
    kv_positions_ = 0;
}

void Model::allocate_kv_cache(std::int64_t positions) {
    release_kv_cache();
    if (!can_decode_cached())
        throw Error("internal: a key/value cache for model '" + spec_.name + "', whose layers cannot decode with one");
    if (positions < 1 || positions > spec_.input_shape[0])
        throw Error("internal: a key/value cache of " + std::to_string(positions) + " positions for a model of " +
                    std::to_string(spec_.input_shape[0]));
    Allocator& a = options_.allocator ? *options_.allocator : backend_.allocator();
    std::size_t ws = 0;
    for (Node* n : nodes_) {
        if (!n->layer || n->layer->decoding() != Layer::Decoding::cached) continue;
        const Shape s = n->layer->kv_cache_shape(positions);
        n->kv.k = Tensor::empty(a, s, options_.dtype, MemCategory::activations, n->index);
        n->kv.v = Tensor::empty(a, s, options_.dtype, MemCategory::activations, n->index);
        ws = std::max(ws, n->layer->kv_cache_workspace_bytes(backend_, positions, positions, options_.dtype));
    }
    if (ws > 0) kv_workspace_ = Tensor::empty(a, {static_cast<std::int64_t>(ws)}, DType::u8, MemCategory::workspace);
    for (Node* n : nodes_)
        if (n->kv.k.defined()) n->kv.workspace = kv_workspace_;
    kv_positions_ = positions;
}

std::size_t Model::kv_cache_bytes() const {
    std::size_t b = 0;
    for (const Node* n : nodes_)
        if (n->kv.k.defined()) b += n->kv.k.nbytes() + n->kv.v.nbytes();
    return b;
}

Tensor Model::forward_cached(const Tensor& ids, std::int64_t position) {
    if (kv_positions_ == 0) throw Error("internal: forward_cached without a key/value cache (allocate_kv_cache)");
    if (ids.ndim() != 2 || ids.dim(0) != 1 || ids.dtype() != DType::i64 || ids.dim(1) < 1 || position < 0 ||
        position + ids.dim(1) > kv_positions_)
        throw Error("internal: forward_cached of " + shape_str(ids.shape()) + " " + dtype_name(ids.dtype()) +
                    " at position " + std::to_string(position) + " with a cache of " + std::to_string(kv_positions_) +
                    " positions");
    current_batch_ = 0;  // no backward after this
    decode_position_ = position;
    struct Reset {
        std::int64_t& p;
        ~Reset() { p = -1; }
    } reset{decode_position_};
    return forward_seq(*top_, ids, false, 0);
}

void Model::backward_to(const Tensor& dy, Tensor& dx) {
    if (current_batch_ == 0) throw Error("internal: backward before forward");
    if (dy.shape() != top_->nodes.back()->y.shape() || dx.shape() != first_input_.shape() ||
        dx.dtype() != first_input_.dtype())
        throw Error("internal: a stage's backward with dy " + shape_str(dy.shape()) + " and dx " + shape_str(dx.shape()) +
                    " for output " + shape_str(top_->nodes.back()->y.shape()) + " and input " +
                    shape_str(first_input_.shape()));
    backward_seq(*top_, Tensor(), dy, dx);
}

void Model::share_buffers_with(const Model& other) {
    if (other.nodes_.size() != nodes_.size()) throw Error("internal: sharing buffers between different models");
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (other.nodes_[i]->buffers.size() != nodes_[i]->buffers.size())
            throw Error("internal: sharing buffers between different layers");
        for (std::size_t b = 0; b < nodes_[i]->buffers.size(); ++b) nodes_[i]->buffers[b] = other.nodes_[i]->buffers[b];
    }
}

void Model::backward(const Tensor& dlogits) {
    if (current_batch_ == 0) throw Error("internal: backward before forward");
    if (dlogits.shape() != top_->nodes.back()->y.shape())
        throw Error("internal: dlogits " + shape_str(dlogits.shape()) + " does not match the logits " +
                    shape_str(top_->nodes.back()->y.shape()));
    // The model's input gradient is not needed: only parameter gradients.
    backward_seq(*top_, Tensor(), dlogits, Tensor());
}

// x: the sequence input (undefined at the top: then it is recovered as the previous node's output,
// and the first node gets its input from the caller's forward, kept in the first node's LayerIO).
void Model::backward_seq(Seq& seq, const Tensor& x, const Tensor& dy, Tensor dx_out) {
    Tensor cur_dy = dy;
    int cur_slot = -1;  // which gbuf holds cur_dy (-1: neither)
    const bool top = &seq == top_.get();
    UnitHooks* hooks = top ? options_.hooks : nullptr;
    for (std::size_t k = seq.nodes.size(); k-- > 0;) {
        Node& n = *seq.nodes[k];
        const ParamUnit* u = hooks ? &units_[static_cast<std::size_t>(n.unit)] : nullptr;
        if (u && static_cast<int>(k) == u->last_layer) hooks->before_backward(n.unit);
        const bool unit_done = u && static_cast<int>(k) == u->first_layer;
        if (top)
            for (std::size_t r = 0; r < ckpt_ranges_.size(); ++r) {
                const auto [first, last] = ckpt_ranges_[r];
                if (static_cast<int>(k) == last && ckpt_recompute_[r] && arena_holds_ != first) {
                    if (recorder_) timeline_recompute(*recorder_, r, current_batch_);
                    recompute_block(first, last);
                }
            }
        if (top && recorder_) timeline_backward(*recorder_, k);
        Tensor xin = k > 0 ? seq.nodes[k - 1]->y : (x.defined() ? x : first_input_);
        Tensor target;
        int slot = -1;
        const bool need_dx = k > 0 || dx_out.defined() ||
                             (n.layer && (n.layer->type() == "batchnorm2d" || n.layer->backward_needs_dx())) || !n.layer;
        if (k == 0 && dx_out.defined()) {
            target = dx_out;
        } else if (need_dx) {
            slot = cur_slot == 0 ? 1 : 0;
            target = seq.gbuf[slot].view(0, xin.shape());
        }
        if (n.layer && n.layer->output_is_view()) {
            // the gradient passes through unchanged: reuse dy's memory unless the caller wants it elsewhere
            if (k == 0 && dx_out.defined()) {
                Tensor v = cur_dy.reshape(dx_out.shape());
                backend_.copy(v, dx_out);
                cur_dy = dx_out;
            } else {
                cur_dy = cur_dy.reshape(xin.shape());
            }
        } else {
            backward_node(n, xin, cur_dy, target);
            cur_dy = target;
            cur_slot = slot;
            if (top && k + 1 == seq.nodes.size() && options_.part.head_input_grad_hook && target.defined())
                options_.part.head_input_grad_hook(target);
        }
        if (unit_done) hooks->after_backward(n.unit);
    }
}

// Walks the range backwards: a node's output must be valid after the recompute when the next node's
// backward reads it as x, its own backward reads it as y, or the next node runs; a node in the arena
// runs when its output must be valid or it keeps saved tensors there. Kept outputs (the block's last)
// are valid already; BatchNorm's statistics are outside the arena (build_seq), so a BatchNorm whose
// output nobody reads (the last one of a residual body) is not run again.
bool Model::mark_recompute(Seq& seq, std::size_t first, std::size_t last, bool out_valid) {
    bool valid = out_valid;  // must the output of the node being looked at be valid?
    for (std::size_t k = last + 1; k-- > first;) {
        Node& n = *seq.nodes[k];
        bool needs_input;
        if (!n.layer) {
            n.recompute_add = valid && n.output_in_arena;
            const bool body_in = mark_recompute(*n.body, 0, n.body->nodes.size() - 1, n.recompute_add);
            const bool short_in = n.shortcut ? mark_recompute(*n.shortcut, 0, n.shortcut->nodes.size() - 1, n.recompute_add)
                                             : n.recompute_add;
            needs_input = body_in || short_in;
            n.recompute_run = n.recompute_add;
            for (const Seq* q : {n.body.get(), n.shortcut.get()})
                if (q)
                    for (const auto& c : q->nodes) n.recompute_run = n.recompute_run || c->recompute_run || c->recompute_add;
        } else if (n.layer->output_is_view()) {
            n.recompute_run = false;  // its output is its input
            needs_input = valid;
        } else {
            const bool own = valid || backward_reads_y(n.layer->type());
            n.recompute_output = own && n.output_in_arena;
            n.recompute_run = n.recompute_output || n.saved_in_arena;
            needs_input = n.recompute_run || backward_reads_x(n.layer->type());
        }
        valid = needs_input;
    }
    return valid;
}

std::map<int, Model::RecomputeWork> Model::recompute_work() const {
    std::map<int, RecomputeWork> out;
    const int holds = arena_after_forward();  // that block's backward finds its tensors in the arena
    for (std::size_t b = 0; b < ckpt_ranges_.size(); ++b) {
        std::vector<const Node*> stack;
        for (int i = ckpt_ranges_[b].first; i <= ckpt_ranges_[b].second; ++i) stack.push_back(top_->nodes[i].get());
        while (!stack.empty()) {
            const Node* n = stack.back();
            stack.pop_back();
            for (const Seq* q : {n->body.get(), n->shortcut.get()})
                if (q)
                    for (const auto& c : q->nodes) stack.push_back(c.get());
            if (!n->layer) continue;
            RecomputeWork w = RecomputeWork::none;
            if (ckpt_recompute_[b] && ckpt_ranges_[b].first != holds && n->recompute_run)
                w = n->recompute_output ? RecomputeWork::full : RecomputeWork::saved_only;
            out[n->index] = w;
        }
    }
    return out;
}

// Re-runs the forward of top-level nodes [first, last] from the block's kept input, as far as
// mark_recompute() found necessary, so the arena holds what this block's backward reads (BatchNorm
// statistics are not updated twice).
void Model::recompute_block(int first, int last) {
    recomputing_ = true;
    Tensor x = first == 0 ? first_input_ : top_->nodes[first - 1]->y;
    for (int i = first; i <= last; ++i) {
        forward_node(*top_->nodes[i], x, true, current_first_sample_);
        x = top_->nodes[i]->y;
    }
    recomputing_ = false;
    arena_holds_ = first;
}

void Model::backward_node(Node& n, const Tensor& x, const Tensor& dy, Tensor& dx) {
    const std::int64_t b = x.dim(0);
    if (!n.layer) {
        Tensor dxb = n.dx_body_full.view(0, x.shape());
        backward_seq(*n.body, x, dy, dxb);
        if (n.shortcut) {
            backward_seq(*n.shortcut, x, dy, dx);
            if (dx.defined()) backend_.axpy(1.0f, dxb, dx);
        } else if (dx.defined()) {
            backend_.add(dy, dxb, dx);  // identity shortcut: dy + dxb in one pass (it was a copy, then an axpy)
        }
        return;
    }
    LayerIO io;
    io.backend = &backend_;
    io.training = true;
    io.x = x;
    io.y = n.y;
    io.dy = dy;
    io.dx = dx;
    io.params = n.params;
    io.grads = n.grads;
    io.buffers = n.buffers;
    const Shape in(x.shape().begin() + 1, x.shape().end());
    auto decls = n.layer->saved(b, in);
    for (std::size_t i = 0; i < decls.size(); ++i) io.saved.push_back(n.saved_full[i].view(0, decls[i].shape));
    io.workspace = workspace_;
    // the forward's dropout stream: layers that regenerate masks (attention probabilities) need it
    io.seed = options_.seed ^ (0xD1B54A32D192ED03ull * static_cast<std::uint64_t>(n.index + 1));
    io.first_sample = current_first_sample_;
    n.layer->backward(io);
}

// --- the step's memory timeline ------------------------------------------------------------------------

void Model::timeline_bytes(const Node& n, std::int64_t rows, std::size_t& own, std::size_t& arena) const {
    const std::size_t out_bytes = static_cast<std::size_t>(shape_numel(with_batch(rows, n.out))) * dtype_size(options_.dtype);
    if (!n.layer) {
        for (const Seq* q : {n.body.get(), n.shortcut.get()})
            if (q)
                for (const auto& c : q->nodes) timeline_bytes(*c, rows, own, arena);
        (n.output_in_arena ? arena : own) += out_bytes;
        return;
    }
    if (n.layer->output_is_view()) return;
    if (!n.in_place_of) (n.output_in_arena ? arena : own) += out_bytes;
    const auto decls = n.layer->saved(rows, n.in);
    for (std::size_t i = 0; i < decls.size(); ++i) {
        const std::size_t b = static_cast<std::size_t>(shape_numel(decls[i].shape)) *
                              dtype_size(decls[i].compute_dtype ? options_.dtype : decls[i].dtype);
        (i < n.saved_arena.size() && n.saved_arena[i] ? arena : own) += b;
    }
}

void Model::timeline_forward(StepRecorder& r, std::size_t k, std::int64_t rows) {
    const Node& n = *top_->nodes[k];
    timeline_own_.resize(top_->nodes.size(), 0);
    timeline_arena_.resize(top_->nodes.size(), 0);
    std::size_t own = 0, arena = 0;
    timeline_bytes(n, rows, own, arena);
    r.phase(StepPhaseKind::forward, n.index, -1, n.layer ? n.layer->type() : std::string("residual"));
    r.use(MemCategory::activations, n.index, static_cast<std::int64_t>(own + arena));
    timeline_own_[k] += own;
    timeline_arena_[k] += arena;
}

// After the forward of top-level node k: a checkpointed block that ends here keeps only its output; what
// it wrote to the arena is over (unless it is the block the arena still holds for its backward).
void Model::timeline_block_end(StepRecorder& r, std::size_t k, int holds) {
    for (auto [first, last] : ckpt_ranges_) {
        if (static_cast<int>(k) != last || first == holds) continue;
        for (int i = first; i <= last; ++i) {
            const std::size_t u = static_cast<std::size_t>(i);
            if (timeline_arena_[u] == 0) continue;
            r.use(MemCategory::activations, top_->nodes[u]->index, -static_cast<std::int64_t>(timeline_arena_[u]));
            timeline_arena_[u] = 0;
        }
    }
}

void Model::timeline_recompute(StepRecorder& r, std::size_t block, std::int64_t rows) {
    const auto [first, last] = ckpt_ranges_[block];
    r.phase(StepPhaseKind::recompute, -1, static_cast<int>(block));
    timeline_arena_.resize(top_->nodes.size(), 0);
    for (int i = first; i <= last; ++i) {
        const std::size_t u = static_cast<std::size_t>(i);
        std::size_t own = 0, arena = 0;
        timeline_bytes(*top_->nodes[u], rows, own, arena);
        if (arena == 0) continue;
        r.use(MemCategory::activations, top_->nodes[u]->index, static_cast<std::int64_t>(arena));
        timeline_arena_[u] += arena;
    }
}

void Model::timeline_backward(StepRecorder& r, std::size_t k) {
    const Node& n = *top_->nodes[k];
    timeline_own_.resize(top_->nodes.size(), 0);
    timeline_arena_.resize(top_->nodes.size(), 0);
    r.phase(StepPhaseKind::backward, n.index, -1, n.layer ? n.layer->type() : std::string("residual"));
    const std::size_t bytes = timeline_own_[k] + timeline_arena_[k];
    if (bytes > 0) r.use(MemCategory::activations, n.index, -static_cast<std::int64_t>(bytes));
    timeline_own_[k] = timeline_arena_[k] = 0;
}

void Model::walk_forward_timeline(StepRecorder& r, std::int64_t rows) {
    const int holds = arena_after_forward();
    UnitHooks* hooks = options_.hooks;  // where forward_seq calls before_forward
    for (std::size_t k = 0; k < top_->nodes.size(); ++k) {
        const int unit = top_->nodes[k]->unit;
        if (hooks && static_cast<int>(k) == units_[static_cast<std::size_t>(unit)].first_layer)
            hooks->walk_before_forward(r, unit);
        timeline_forward(r, k, rows);
        timeline_block_end(r, k, holds);
    }
}

void Model::walk_backward_timeline(StepRecorder& r, std::int64_t rows) {
    int holds = arena_after_forward();
    UnitHooks* hooks = options_.hooks;  // where backward_seq calls before_backward (before a recompute)
    for (std::size_t k = top_->nodes.size(); k-- > 0;) {
        const int unit = top_->nodes[k]->unit;
        if (hooks && static_cast<int>(k) == units_[static_cast<std::size_t>(unit)].last_layer)
            hooks->walk_before_backward(r, unit);
        for (std::size_t b = 0; b < ckpt_ranges_.size(); ++b) {
            const auto [first, last] = ckpt_ranges_[b];
            if (static_cast<int>(k) == last && ckpt_recompute_[b] && holds != first) {
                timeline_recompute(r, b, rows);
                holds = first;
            }
        }
        timeline_backward(r, k);
        if (k + 1 == top_->nodes.size() && k > 0 && options_.part.head_input_grad_walk) options_.part.head_input_grad_walk(r);
    }
}

NamedTensor Model::named_param(const Node& n, std::size_t i, const std::string& path) const {
    const ParamDecl& d = n.param_decls[i];
    NamedTensor t;
    t.name = path + "." + d.name;
    t.tensor = n.params[i];
    t.trainable = !d.frozen;  // (LoRA's base: saved, never trained)
    t.layer = n.index;
    t.tied = d.tied_to_token_embedding;
    t.frozen = d.frozen;
    if (n.packed_bytes[i] > 0) {
        t.quantized_bits = options_.lora_base_bits;
        t.quantized_group = options_.lora_base_group;
        t.quantized_shape = d.shape;
    }
    return t;
}

Model::StateBytes Model::state_bytes() const {
    StateBytes out;  // state_dict()'s tensors, in its order, without their names
    for (Node* n : nodes_) {
        for (std::size_t i = 0; i < n->params.size(); ++i)
            if (!n->param_decls[i].tied_to_token_embedding) out.layer_param_bytes[n->index] += n->params[i].nbytes();
        for (const Tensor& b : n->buffers) out.buffer_bytes += static_cast<double>(b.nbytes());
    }
    return out;
}

std::vector<NamedTensor> Model::state_dict() const {
    std::vector<NamedTensor> out;
    for (Node* n : nodes_) {
        // the top-level index is replaced by its PyTorch prefix ("3" -> "transformer.h.1" for GPT layouts)
        const std::size_t dot = n->path.find('.');
        const std::size_t top = static_cast<std::size_t>(std::stoul(n->path.substr(0, dot)));
        const std::string path = torch_prefix_[top] + (dot == std::string::npos ? std::string() : n->path.substr(dot));
        for (std::size_t i = 0; i < n->params.size(); ++i) out.push_back(named_param(*n, i, path));
        for (std::size_t i = 0; i < n->buffers.size(); ++i)
            out.push_back(buffer_entry(path + "." + n->buffer_names[i], n->buffers[i], n->index));
    }
    return out;
}

std::vector<ParamSegment> Model::decay_segments() const {
    std::vector<ParamSegment> seg;
    for (Node* n : nodes_)
        for (std::size_t i = 0; i < n->param_decls.size(); ++i) {
            const ParamDecl& d = n->param_decls[i];
            if (d.tied_to_token_embedding || d.frozen) continue;
            const std::int64_t b = n->param_offsets[i], e = b + shape_numel(d.shape);
            const bool decay = d.shape.size() >= 2;
            if (!seg.empty() && seg.back().decay == decay) {
                seg.back().end = e;  // the padding before this tensor joins the run
            } else {
                if (!seg.empty()) seg.back().end = b;
                seg.push_back({seg.empty() ? 0 : b, e, decay});
            }
        }
    if (seg.empty()) seg.push_back({0, params_.numel(), true});
    seg.front().begin = 0;
    seg.back().end = params_.numel();
    return seg;
}

CategoryBytes Model::allocated_bytes() const {
    CategoryBytes b{};
    std::vector<const Storage*> seen;
    auto add = [&](const Tensor& t) {
        if (!t.defined()) return;
        const Storage* s = t.storage().get();
        if (std::find(seen.begin(), seen.end(), s) != seen.end()) return;
        seen.push_back(s);
        at(b, s->category()) += s->bytes();
    };
    add(params_);
    add(grads_);
    add(frozen_);
    add(frozen_grad_);
    add(workspace_);
    add(arena_);
    std::vector<const Seq*> seqs{top_.get()};
    for (Node* n : nodes_) {
        add(n->y_full);
        add(n->dx_body_full);
        for (auto& t : n->saved_full) add(t);
        for (auto& t : n->buffers) add(t);
        if (n->body) seqs.push_back(n->body.get());
        if (n->shortcut) seqs.push_back(n->shortcut.get());
    }
    for (const Seq* s : seqs)
        for (auto& g : s->gbuf) add(g);
    return b;
}

}  // namespace hr
