#pragma once
// Layers (docs/design.md decision 1): each declares its parameters, the tensors it keeps for backward and
// its workspace, and implements forward/backward. The public non-virtual forward()/backward() validate
// shapes, then call the virtual *_impl. Backward ACCUMULATES parameter gradients (+=) and WRITES the
// input gradient (=) when dx is defined.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/model_spec.h"
#include "tensor/tensor.h"

namespace hr {

// A LoRA adapter's name: its last component is "lora_A" or "lora_B" ("lora_A", "attn.c_attn.lora_B", or a
// state_dict's "3.lora_A", "transformer.h.0.mlp.c_fc.lora_B")
inline std::string last_name_component(const std::string& name) {
    const std::size_t dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}
inline bool is_lora_adapter(const std::string& name) {
    const std::string last = last_name_component(name);
    return last == "lora_A" || last == "lora_B";
}
// Adapter A (R, in): the one a split head keeps whole on every rank (strategy/training_state.h)
inline bool is_lora_a(const std::string& name) { return last_name_component(name) == "lora_A"; }

struct ParamDecl {
    // uniform_fan_in: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch's defaults; normal: N(0, std^2), as
    // nanoGPT / GPT-2 initialise transformer weights
    enum class Init { uniform_fan_in, ones, zeros, normal };
    std::string name;  // "weight", "bias"
    Shape shape;
    Init init = Init::uniform_fan_in;
    std::int64_t fan_in = 1;
    double std = 0.02;     // Init::normal
    // Not a parameter of its own: the same tensor as the weight of the model's token embedding (a tied
    // language-model head). The model hands the layer that view, so both uses accumulate into one gradient.
    bool tied_to_token_embedding = false;
    // Not trained (LoRA's frozen base, ModelOptions::lora_rank): stored outside the flat trainable buffers,
    // no optimizer state; its gradient goes to a scratch buffer, or nowhere for a layer that
    // skips_frozen_gradients().
    bool frozen = false;
    // A LoRA adapter: trained while the rest is frozen
    bool lora_adapter() const { return is_lora_adapter(name); }
    // QLoRA (ModelOptions::lora_base_bits): a frozen weight (out, in) this layer takes packed
    // (tensor/quantized_format.h, u8) and dequantises itself at each use; the model stores exactly these packed
    bool packed = false;
};

// Non-trainable state saved with the weights (BatchNorm running statistics).
struct BufferDecl {
    std::string name;  // "running_mean", "running_var", "num_batches_tracked"
    Shape shape;
    DType dtype = DType::f32;
    double init = 0.0;
};

// Tensors besides the output that forward keeps for backward (with the batch dimension).
struct SavedDecl {
    std::string what;  // "indices", "mask", "mean", "invstd"
    Shape shape;
    DType dtype = DType::f32;
    bool compute_dtype = false;  // stored in the model's activation dtype (then `dtype` is ignored)
};

// Decoding with a key/value cache (Model::forward_cached, generation): an attention layer's keys and values
// of one sequence's earlier positions, where the input's own go, and the attention's scratch.
struct KvCacheSlot {
    Tensor k, v;       // (KV heads, positions, head size) each, in the model's dtype (Layer::kv_cache_shape)
    Tensor workspace;  // attention_cached's scratch, shared by every layer
};

struct LayerIO {
    Backend* backend = nullptr;
    bool training = true;
    Tensor x;                     // forward input (N, ...)
    Tensor y;                     // forward output (N, ...)
    Tensor dy;                    // backward: gradient of the output
    Tensor dx;                    // backward: gradient of the input, written when defined
    std::vector<Tensor> params;   // ParamDecl order
    std::vector<Tensor> grads;    // ParamDecl order, accumulated
    std::vector<Tensor> buffers;  // BufferDecl order
    std::vector<Tensor> saved;    // SavedDecl order
    Tensor workspace;             // workspace_bytes() bytes (u8), may be undefined when 0
    std::uint64_t seed = 0;       // dropout: counter-based RNG stream of this layer and step
    std::uint64_t counter = 0;
    bool recompute = false;       // forward again for activation checkpointing: same outputs, but no
                                  // state updates (BatchNorm running statistics)
    bool recompute_output = true; // in a recompute: y must be written again. false: y is a kept output that
                                  // still holds the forward's values, and only the saved tensors are needed
                                  // (a layer may skip the work that only feeds y)
    std::uint64_t first_sample = 0;  // run-wide index of x's first sample (layers that key several
                                     // dropout sites on it; `counter` is first_sample * numel(out))
    // Decoding with a key/value cache (Model::forward_cached; one sequence, not training): x holds the
    // tokens at positions position .. position + T - 1; a layer with a cache (Layer::decoding() cached)
    // attends over its earlier positions in *kv and appends this input's keys and values there.
    bool decoding = false;
    std::int64_t position = 0;
    const KvCacheSlot* kv = nullptr;
    // LoRA's adapters switched off (Model::set_adapters_enabled(false); forward without training only): a
    // projection computes its base alone, x W^T + b (QLoRA's base still dequantised), as the model before
    // its adapters trained
    bool adapters_off = false;
};

// Build-time choices the model passes to the layers it makes.
struct LayerOptions {
    bool recompute_attention = false;  // selective recompute: attention layers keep neither their core's
                                       // output nor its log-sum-exp, and recompute both in backward
    int transformer_layers = 0;        // blocks in the model (GPT-2's n_layer: scales the init of the
                                       // projections that feed the residual stream by 1/sqrt(2 n_layer))
};

class Layer {
public:
    explicit Layer(LayerSpec spec) : spec_(std::move(spec)) {}
    virtual ~Layer() = default;

    const LayerSpec& spec() const { return spec_; }
    const std::string& type() const { return spec_.type; }

    // Per-sample output shape for a per-sample input shape (validated by analyze_model_spec already).
    virtual Shape output_shape(const Shape& in) const = 0;
    virtual std::vector<ParamDecl> params(const Shape& in) const { return {}; }
    virtual std::vector<BufferDecl> buffers(const Shape& in) const { return {}; }
    virtual std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const { return {}; }
    virtual std::size_t workspace_bytes(const Backend& b, std::int64_t batch, const Shape& in, DType dtype) const {
        return 0;
    }
    // The output is a view of the input (Flatten): no activation memory of its own.
    virtual bool output_is_view() const { return false; }
    // backward() needs a dx tensor even where the model does not want the input gradient.
    virtual bool backward_needs_dx() const { return false; }
    // Decoding with a key/value cache (Model::forward_cached): per_position, the layer's forward is right
    // for any run of positions given LayerIO::position (it treats each position on its own, or reads the
    // position: a position embedding); cached, it attends causally over earlier positions and keeps their
    // keys and values (kv_cache_shape); none, it cannot decode so (the model then re-runs whole windows).
    enum class Decoding { none, per_position, cached };
    virtual Decoding decoding() const { return Decoding::none; }
    // cached: the shape of each of its key and value caches for `positions` positions (KV, positions, D),
    // and the scratch attention_cached needs for up to n new tokens at once
    virtual Shape kv_cache_shape(std::int64_t positions) const {
        (void)positions;
        return {};
    }
    virtual std::size_t kv_cache_workspace_bytes(const Backend& b, std::int64_t n, std::int64_t positions,
                                                 DType dtype) const {
        (void)b, (void)n, (void)positions, (void)dtype;
        return 0;
    }
    // backward() leaves a frozen parameter's gradient alone when LayerIO::grads holds no tensor for it
    // (else the model hands it a scratch buffer).
    virtual bool skips_frozen_gradients() const { return false; }

    void forward(LayerIO& io) const;
    void backward(LayerIO& io) const;

protected:
    virtual void forward_impl(LayerIO& io) const = 0;
    virtual void backward_impl(LayerIO& io) const = 0;

private:
    LayerSpec spec_;
};

// Builds the layer for a spec entry (not "residual": that is a graph node, see nn/model.h).
std::unique_ptr<Layer> make_layer(const LayerSpec& spec, const LayerOptions& options = {});

}  // namespace hr
