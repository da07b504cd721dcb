// Model specs: equality and the layer catalog (types, attributes, defaults). The JSON form is in
// model_spec_json.cpp, shape inference and checks in model_spec_analysis.cpp, the presets in
// model_spec_presets.cpp; model_spec_detail.h holds what they share.
#include "nn/model_spec.h"

#include <cmath>
#include <cstdint>

#include "base/error.h"
#include "nn/model_spec_detail.h"

namespace hr {

using json = nlohmann::json;
using AK = AttrInfo::Kind;

bool LayerSpec::operator==(const LayerSpec& o) const {
    return type == o.type && name == o.name && attrs == o.attrs && body == o.body && shortcut == o.shortcut;
}

bool ModelSpec::operator==(const ModelSpec& o) const {
    return name == o.name && input_shape == o.input_shape && num_classes == o.num_classes && layers == o.layers &&
           loss == o.loss;
}

// ---------------------------------------------------------------------------------------------------
// catalog

const std::vector<LayerTypeInfo>& layer_catalog() {
    static const std::vector<LayerTypeInfo> catalog = [] {
        std::vector<LayerTypeInfo> c;
        c.push_back({"conv2d", "Conv2d", "convolution", HR_MSG("layer.conv2d", "2-D convolution over (N, C, H, W) (groups = 1)"),
                     {{"in_channels", AK::integer, 1, 1, 1e6, true, HR_MSG("layer.conv2d.in_channels", "input channels C")},
                      {"out_channels", AK::integer, 8, 1, 1e6, true, HR_MSG("layer.conv2d.out_channels", "output channels (filters)")},
                      {"kernel_size", AK::integer, 3, 1, 1024, true, HR_MSG("layer.conv2d.kernel_size", "square kernel size")},
                      {"stride", AK::integer, 1, 1, 1024, false, HR_MSG("layer.conv2d.stride", "step between windows")},
                      {"padding", AK::integer, 0, 0, 1024, false, HR_MSG("layer.conv2d.padding", "zero padding on each side")},
                      {"dilation", AK::integer, 1, 1, 1024, false, HR_MSG("layer.conv2d.dilation", "spacing between kernel taps")},
                      {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.conv2d.bias", "learn an additive bias per output channel")}}});
        c.push_back({"maxpool2d", "MaxPool2d", "pooling", HR_MSG("layer.maxpool2d", "maximum over square windows"),
                     {{"kernel_size", AK::integer, 2, 1, 1024, true, HR_MSG("layer.maxpool2d.kernel_size", "window size")},
                      {"stride", AK::integer, 0, 0, 1024, false, HR_MSG("layer.maxpool2d.stride", "step between windows (0: kernel_size)")},
                      {"padding", AK::integer, 0, 0, 512, false, HR_MSG("layer.maxpool2d.padding", "implicit -inf padding on each side")}}});
        c.push_back({"avgpool2d", "AvgPool2d", "pooling", HR_MSG("layer.avgpool2d", "mean over square windows (padding counted)"),
                     {{"kernel_size", AK::integer, 2, 1, 1024, true, HR_MSG("layer.avgpool2d.kernel_size", "window size")},
                      {"stride", AK::integer, 0, 0, 1024, false, HR_MSG("layer.avgpool2d.stride", "step between windows (0: kernel_size)")},
                      {"padding", AK::integer, 0, 0, 512, false, HR_MSG("layer.avgpool2d.padding", "zero padding on each side")}}});
        c.push_back({"linear", "Linear", "linear", HR_MSG("layer.linear", "fully connected layer y = x W^T + b"),
                     {{"in_features", AK::integer, 64, 1, 1e8, true, HR_MSG("layer.linear.in_features", "input features")},
                      {"out_features", AK::integer, 10, 1, 1e8, true, HR_MSG("layer.linear.out_features", "output features")},
                      {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.linear.bias", "learn an additive bias")}}});
        c.push_back({"relu", "ReLU", "activation", HR_MSG("layer.relu", "max(x, 0)"), {}});
        c.push_back({"leaky_relu", "LeakyReLU", "activation", HR_MSG("layer.leaky_relu", "x if x > 0 else slope * x"),
                     {{"negative_slope", AK::real, 0.01, 0, 1, false, HR_MSG("layer.leaky_relu.negative_slope", "slope for x < 0")}}});
        c.push_back({"tanh", "Tanh", "activation", HR_MSG("layer.tanh", "hyperbolic tangent"), {}});
        c.push_back({"sigmoid", "Sigmoid", "activation", HR_MSG("layer.sigmoid", "1 / (1 + exp(-x))"), {}});
        c.push_back({"gelu", "GELU", "activation", HR_MSG("layer.gelu", "x * Phi(x) (exact erf form, or its tanh approximation)"),
                     {{"tanh", AK::boolean, 0, 0, 1, false, HR_MSG("layer.gelu.tanh", "tanh approximation, as GPT-2 (nn.GELU(approximate='tanh'))")}}});
        c.push_back({"batchnorm2d", "BatchNorm2d", "normalisation",
                     HR_MSG("layer.batchnorm2d", "normalises each channel over (N, H, W) with batch statistics"),
                     {{"num_features", AK::integer, 8, 1, 1e6, true, HR_MSG("layer.batchnorm2d.num_features", "channels C")},
                      {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.batchnorm2d.eps", "added to the variance")},
                      {"momentum", AK::real, 0.1, 0, 1, false, HR_MSG("layer.batchnorm2d.momentum", "running statistics update rate")}}});
        c.push_back({"dropout", "Dropout", "regularisation", HR_MSG("layer.dropout", "zeroes elements with probability p while training"),
                     {{"p", AK::real, 0.5, 0, 0.99, false, HR_MSG("layer.dropout.p", "drop probability")}}});
        c.push_back({"flatten", "Flatten", "structure", HR_MSG("layer.flatten", "(N, C, H, W) -> (N, C*H*W)"), {}});
        c.push_back({"residual", "Residual block", "structure",
                     HR_MSG("layer.residual", "output = body(x) + shortcut(x); shortcut is the identity when empty"), {}});
        // transformers (nn/transformer_layers.h)
        c.push_back({"token_embedding", "Token embedding", "embedding",
                      HR_MSG("layer.token_embedding", "looks up a learned vector for each token id: (N, T) -> (N, T, dim); must come first"),
                     {{"vocab_size", AK::integer, 256, 2, 1e7, true, HR_MSG("layer.token_embedding.vocab_size", "vocabulary size V (token ids 0 .. V-1)")},
                      {"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.token_embedding.dim", "embedding width")}}});
        c.push_back({"position_embedding", "Position embedding", "embedding",
                      HR_MSG("layer.position_embedding", "adds a learned vector for each position of the sequence"),
                     {{"max_positions", AK::integer, 256, 1, 1e6, true, HR_MSG("layer.position_embedding.max_positions", "longest sequence it has positions for")},
                      {"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.position_embedding.dim", "embedding width")}}});
        c.push_back({"layernorm", "LayerNorm", "normalisation",  HR_MSG("layer.layernorm", "normalises each token over its features"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.layernorm.dim", "features (the last dimension)")},
                      {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.layernorm.eps", "added to the variance")},
                      {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.layernorm.bias", "learn an additive bias")}}});
        c.push_back({"self_attention", "Self-attention", "transformer",
                      HR_MSG("layer.self_attention", "multi-head self-attention: fused q, k, v projection, scaled dot product, output projection"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.self_attention.dim", "model width (a multiple of heads)")},
                      {"heads", AK::integer, 4, 1, 4096, true, HR_MSG("layer.self_attention.heads", "attention heads")},
                      {"causal", AK::boolean, 1, 0, 1, false, HR_MSG("layer.self_attention.causal", "each token sees only earlier ones (language models)")},
                      {"dropout", AK::real, 0, 0, 0.99, false, HR_MSG("layer.self_attention.dropout", "drop probability of attention weights and output")},
                      {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.self_attention.bias", "learn biases in the projections")}}});
        c.push_back({"mlp", "MLP", "transformer",  HR_MSG("layer.mlp", "linear, GELU, linear: the feed-forward half of a transformer block"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.mlp.dim", "model width")},
                      {"hidden", AK::integer, 0, 0, 1e8, false, HR_MSG("layer.mlp.hidden", "hidden width (0: 4 x dim)")},
                      {"dropout", AK::real, 0, 0, 0.99, false, HR_MSG("layer.mlp.dropout", "drop probability of the output")},
                      {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.mlp.bias", "learn biases")},
                      {"gelu_tanh", AK::boolean, 1, 0, 1, false, HR_MSG("layer.mlp.gelu_tanh", "GELU in its tanh form (GPT-2); off: exact (ViT)")}}});
        c.push_back({"transformer_block", "Transformer block", "transformer",
                      HR_MSG("layer.transformer_block", "x + attention(LayerNorm(x)), then + MLP(LayerNorm(.)): one GPT or ViT block"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.transformer_block.dim", "model width (a multiple of heads)")},
                      {"heads", AK::integer, 4, 1, 4096, true, HR_MSG("layer.transformer_block.heads", "attention heads")},
                      {"hidden", AK::integer, 0, 0, 1e8, false, HR_MSG("layer.transformer_block.hidden", "MLP hidden width (0: 4 x dim)")},
                      {"causal", AK::boolean, 1, 0, 1, false, HR_MSG("layer.transformer_block.causal", "each token sees only earlier ones (GPT); off for ViT")},
                      {"dropout", AK::real, 0, 0, 0.99, false, HR_MSG("layer.transformer_block.dropout", "drop probability (attention weights and both outputs)")},
                      {"bias", AK::boolean, 1, 0, 1, false, HR_MSG("layer.transformer_block.bias", "learn biases in projections and LayerNorms")},
                      {"gelu_tanh", AK::boolean, 1, 0, 1, false, HR_MSG("layer.transformer_block.gelu_tanh", "GELU in its tanh form (GPT-2); off: exact (ViT)")},
                      {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.transformer_block.eps", "LayerNorm epsilon")}}});
        c.push_back({"lm_head", "Language-model head", "linear",
                      HR_MSG("layer.lm_head", "scores every vocabulary token at each position: (N, T, dim) -> (N, T, V)"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.lm_head.dim", "model width")},
                      {"vocab_size", AK::integer, 256, 2, 1e7, true, HR_MSG("layer.lm_head.vocab_size", "vocabulary size V")},
                      {"tied", AK::boolean, 1, 0, 1, false, HR_MSG("layer.lm_head.tied", "share the token embedding's weight (no parameters of its own)")}}});
        // the LLaMA family (Llama, Mistral, Qwen2; docs/transformers.md)
        c.push_back({"rmsnorm", "RMSNorm", "normalisation", HR_MSG("layer.rmsnorm", "scales each token by the reciprocal of its root mean square (LLaMA's norm)"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.rmsnorm.dim", "features (the last dimension)")},
                      {"eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.rmsnorm.eps", "added to the mean square")}}});
        c.push_back({"llama_block", "LLaMA block", "transformer",
                      HR_MSG("layer.llama_block", "x + attention(RMSNorm(x)) with rotary positions and grouped-query heads, then + SwiGLU MLP(RMSNorm(.)): one Llama, Mistral or Qwen2 decoder layer"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.llama_block.dim", "model width")},
                      {"heads", AK::integer, 4, 1, 4096, true, HR_MSG("layer.llama_block.heads", "query heads")},
                      {"kv_heads", AK::integer, 0, 0, 4096, false, HR_MSG("layer.llama_block.kv_heads", "key/value heads, dividing heads (0: as many as heads)")},
                      {"head_dim", AK::integer, 0, 0, 65536, false, HR_MSG("layer.llama_block.head_dim", "head size, even (0: dim / heads)")},
                      {"hidden", AK::integer, 176, 1, 1e8, true, HR_MSG("layer.llama_block.hidden", "SwiGLU MLP hidden width")},
                      {"norm_eps", AK::real, 1e-5, 0, 1, false, HR_MSG("layer.llama_block.norm_eps", "RMSNorm epsilon")},
                      {"rope_theta", AK::real, 10000, 1.0001, 1e12, false, HR_MSG("layer.llama_block.rope_theta", "rotary base: frequencies theta^(-2i/D)")},
                      {"rope_factor", AK::real, 0, 0, 1e6, false, HR_MSG("layer.llama_block.rope_factor", "Llama 3 frequency scaling factor (0: none; \"rope_scaling\" in JSON)")},
                      {"rope_low_freq_factor", AK::real, 1, 1e-6, 1e6, false, HR_MSG("layer.llama_block.rope_low_freq_factor", "Llama 3 scaling: low_freq_factor")},
                      {"rope_high_freq_factor", AK::real, 4, 1e-6, 1e6, false, HR_MSG("layer.llama_block.rope_high_freq_factor", "Llama 3 scaling: high_freq_factor")},
                      {"rope_original_max_positions", AK::integer, 8192, 1, 1e9, false, HR_MSG("layer.llama_block.rope_original_max_positions", "Llama 3 scaling: original_max_position_embeddings")},
                      {"qkv_bias", AK::boolean, 0, 0, 1, false, HR_MSG("layer.llama_block.qkv_bias", "learn biases in the q, k and v projections (Qwen2)")},
                      {"max_positions", AK::integer, 4096, 1, 1e8, false, HR_MSG("layer.llama_block.max_positions", "longest sequence it is built for")}}});
        c.push_back({"patch_embedding", "Patch embedding", "embedding",
                      HR_MSG("layer.patch_embedding", "cuts images into square patches and projects each to a token: (N, C, H, W) -> (N, P, dim)"),
                     {{"in_channels", AK::integer, 1, 1, 1e6, true, HR_MSG("layer.patch_embedding.in_channels", "image channels C")},
                      {"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.patch_embedding.dim", "token width")},
                      {"patch_size", AK::integer, 4, 1, 1024, true, HR_MSG("layer.patch_embedding.patch_size", "patch side in pixels (divides H and W)")}}});
        c.push_back({"class_token", "Class token", "embedding",  HR_MSG("layer.class_token", "puts a learned token in front of the sequence"),
                     {{"dim", AK::integer, 64, 1, 1e6, true, HR_MSG("layer.class_token.dim", "token width")}}});
        c.push_back({"class_token_pool", "Class-token pooling", "structure",
                      HR_MSG("layer.class_token_pool", "takes the first token's features for a classifier: (N, T, C) -> (N, C)"), {}});
        c.push_back({"cross_entropy", "Softmax cross-entropy", "loss", HR_MSG("layer.cross_entropy", "softmax + negative log-likelihood"),
                     {{"label_smoothing", AK::real, 0, 0, 0.99, false, HR_MSG("layer.cross_entropy.label_smoothing", "mix of the uniform distribution into targets")}}});
        c.push_back({"mse", "MSE", "loss", HR_MSG("layer.mse", "mean squared error against one-hot targets"), {}});
        return c;
    }();
    return catalog;
}

const LayerTypeInfo* find_layer_type(const std::string& type) {
    for (const auto& t : layer_catalog())
        if (t.type == type) return &t;
    return nullptr;
}

std::string known_layer_types() {
    std::string s;
    for (const auto& t : layer_catalog()) {
        if (t.group == "loss") continue;
        if (!s.empty()) s += ", ";
        s += t.type;
    }
    return s;
}

nlohmann::json layer_attr_json(const AttrInfo& a, double v) {
    switch (a.kind) {
        case AK::integer: return json(static_cast<std::int64_t>(std::llround(v)));
        case AK::boolean: return json(v != 0);
        case AK::real: return json(v);
    }
    return json(v);
}

LayerSpec default_layer(const std::string& type) {
    const LayerTypeInfo* info = find_layer_type(type);
    if (!info || info->group == "loss")
        throw InputError(HR_MSG("spec.unknown_layer_type", "unknown layer type '%1'; use one of %2"),
                         {type, known_layer_types()});
    LayerSpec l;
    l.type = type;
    for (const auto& a : info->attrs) l.attrs[a.name] = layer_attr_json(a, a.default_value);
    return l;
}

double layer_attr(const LayerSpec& layer, const std::string& name) {
    auto it = layer.attrs.find(name);
    if (it != layer.attrs.end()) {
        if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
        if (it->is_number()) return it->get<double>();
    }
    if (const LayerTypeInfo* info = find_layer_type(layer.type))
        for (const auto& a : info->attrs)
            if (a.name == name) return a.default_value;
    return 0.0;
}

}  // namespace hr
