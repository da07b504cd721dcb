#include "nn/model_spec.h"

#include "base/atomic_file.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/json_limits.h"
#include "nn/transformer_spec.h"

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

static std::string known_types() {
    std::string s;
    for (const auto& t : layer_catalog()) {
        if (t.group == "loss") continue;
        if (!s.empty()) s += ", ";
        s += t.type;
    }
    return s;
}

static json attr_json(const AttrInfo& a, double v) {
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
                         {type, known_types()});
    LayerSpec l;
    l.type = type;
    for (const auto& a : info->attrs) l.attrs[a.name] = attr_json(a, a.default_value);
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

// ---------------------------------------------------------------------------------------------------
// JSON

// Parse errors name where they are: "%1" is the location ("m.json: layers[3] (conv2d)", or
// "model spec" for the top level), so the message template stays one translatable string.
// `depth` counts the residual blocks around `where`; `count` the layers read so far (both limited).
static std::vector<LayerSpec> layers_from_json(const json& arr, const std::string& where, int depth,
                                               std::int64_t& count);

static LayerSpec layer_from_json(const json& j, const std::string& where, int depth, std::int64_t& count) {
    if (!j.is_object())
        throw InputError(HR_MSG("spec.layer_not_object", "%1: each layer must be a JSON object like {\"type\": \"relu\"}"),
                         {where});
    if (!j.contains("type") || !j["type"].is_string())
        throw InputError(HR_MSG("spec.layer_no_type", "%1: missing \"type\"; use one of %2"), {where, known_types()});
    std::string type = j["type"].get<std::string>();
    const LayerTypeInfo* info = find_layer_type(type);
    if (!info || info->group == "loss")
        throw InputError(HR_MSG("spec.unknown_layer", "%1: unknown layer type '%2'; use one of %3"),
                         {where, type, known_types()});
    LayerSpec l = default_layer(type);
    const std::string at = where + " (" + type + ")";
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        if (key == "type") continue;
        if (key == "name") {
            if (!it->is_string()) throw InputError(HR_MSG("spec.name_not_string", "%1: \"name\" must be a string"), {at});
            l.name = it->get<std::string>();
            continue;
        }
        if (type == "residual" && (key == "body" || key == "shortcut")) {
            if (depth >= kMaxResidualDepth)
                throw InputError(HR_MSG("spec.too_deep", "%1: residual blocks nest more than %2 levels deep; "
                                                         "flatten the structure (see docs/model-spec.md, Limits)"),
                                 {at, std::to_string(kMaxResidualDepth)});
            auto seq = layers_from_json(*it, where + "." + key, depth + 1, count);
            (key == "body" ? l.body : l.shortcut) = std::move(seq);
            continue;
        }
        const AttrInfo* a = nullptr;
        for (const auto& cand : info->attrs)
            if (cand.name == key) a = &cand;
        if (!a) {
            std::string known;
            for (const auto& cand : info->attrs) known += (known.empty() ? "" : ", ") + cand.name;
            if (type == "residual") known = "body, shortcut";
            if (known.empty())
                throw InputError(HR_MSG("spec.attr_none", "%1: unknown attribute '%2'; this layer takes no attributes"),
                                 {at, key});
            throw InputError(HR_MSG("spec.attr_unknown", "%1: unknown attribute '%2'; known: %3"), {at, key, known});
        }
        double v = 0;
        if (a->kind == AK::boolean) {
            if (!it->is_boolean())
                throw InputError(HR_MSG("spec.attr_not_bool", "%1: attribute '%2' must be true or false, got %3"),
                                 {at, key, json_brief(*it)});
            v = it->get<bool>() ? 1 : 0;
        } else if (a->kind == AK::integer) {
            if (!it->is_number_integer())
                throw InputError(HR_MSG("spec.attr_not_integer", "%1: attribute '%2' must be an integer, got %3"),
                                 {at, key, json_brief(*it)});
            // An unsigned value past INT64_MAX is out of every range; read it without wrapping.
            v = it->is_number_unsigned() ? static_cast<double>(it->get<std::uint64_t>())
                                         : static_cast<double>(it->get<std::int64_t>());
        } else {
            if (!it->is_number())
                throw InputError(HR_MSG("spec.attr_not_number", "%1: attribute '%2' must be a number, got %3"),
                                 {at, key, json_brief(*it)});
            v = it->get<double>();
        }
        if (!(v >= a->min && v <= a->max)) {
            char lo[32], hi[32];
            std::snprintf(lo, sizeof lo, "%g", a->min);
            std::snprintf(hi, sizeof hi, "%g", a->max);
            throw InputError(HR_MSG("spec.attr_range", "%1: attribute '%2' must be between %3 and %4, got %5"),
                             {at, key, lo, hi, json_brief(*it)});
        }
        l.attrs[key] = attr_json(*a, v);
    }
    if (type == "residual" && l.body.empty())
        throw InputError(HR_MSG("spec.residual_empty", "%1: a residual block needs a non-empty \"body\" list of layers"),
                         {at});
    return l;
}

static std::vector<LayerSpec> layers_from_json(const json& arr, const std::string& where, int depth,
                                               std::int64_t& count) {
    if (!arr.is_array()) throw InputError(HR_MSG("spec.layers_not_list", "%1: must be a list of layers"), {where});
    std::vector<LayerSpec> out;
    for (std::size_t i = 0; i < arr.size(); ++i) {
        // Counted while reading, so a file cannot make the reader build millions of layers first.
        if (++count > kMaxLayers)
            throw InputError(HR_MSG("spec.too_many_layers", "%1: the model has more than %2 layers (residual blocks "
                                                            "and their contents included; see docs/model-spec.md, "
                                                            "Limits)"),
                             {where + "[" + std::to_string(i) + "]", std::to_string(kMaxLayers)});
        out.push_back(layer_from_json(arr[i], where + "[" + std::to_string(i) + "]", depth, count));
    }
    return out;
}

// True when v is an integer in [lo, hi] (out = its value); an unsigned value past INT64_MAX is read
// without wrapping negative.
static bool json_integer_in(const json& v, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    if (!v.is_number_integer()) return false;
    if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
        out = static_cast<std::int64_t>(u);
    } else {
        out = v.get<std::int64_t>();
    }
    return out >= lo && out <= hi;
}

static ModelSpec model_spec_from_json_at(const json& j, const std::string& source) {
    const std::string top = source.empty() ? std::string("model spec") : source;
    const std::string loc = source.empty() ? std::string() : source + ": ";
    if (!j.is_object())
        throw InputError(HR_MSG("spec.not_object", "%1: the top level must be a JSON object with \"layers\""), {top});
    ModelSpec s;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k == "format" || k == "version" || k == "description") continue;
        if (k == "name") {
            if (!it->is_string()) throw InputError(HR_MSG("spec.name_not_string", "%1: \"name\" must be a string"), {top});
            s.name = it->get<std::string>();
        } else if (k == "input") {
            if (!it->is_array() || it->empty() || it->size() > 3)
                throw InputError(HR_MSG("spec.input_shape", "%1: \"input\" must be the per-sample shape, e.g. [1, 28, "
                                                            "28] or [784], got %2"),
                                 {top, json_brief(*it)});
            s.input_shape.clear();
            std::int64_t elements = 1;
            for (const auto& d : *it) {
                std::int64_t v = 0;
                if (!json_integer_in(d, 1, INT64_MAX, v))
                    throw InputError(HR_MSG("spec.input_positive",
                                            "%1: \"input\" dimensions must be positive integers, got %2"),
                                     {top, json_brief(*it)});
                // Every per-sample tensor is bounded (docs/model-spec.md, Limits); the input is the first.
                if (v > kMaxSampleElements || !checked_mul(elements, v, elements) || elements > kMaxSampleElements)
                    throw InputError(HR_MSG("spec.input_too_large",
                                            "%1: \"input\" %2 has more than %3 elements per sample (see "
                                            "docs/model-spec.md, Limits)"),
                                     {top, json_brief(*it), std::to_string(kMaxSampleElements)});
                s.input_shape.push_back(v);
            }
        } else if (k == "num_classes") {
            // Read as a checked 64-bit integer: get<int>() narrowed 4294967297 to 1.
            std::int64_t v = 0;
            if (!json_integer_in(*it, 2, kMaxClasses, v))
                throw InputError(HR_MSG("spec.num_classes", "%1: \"num_classes\" must be an integer from 2 to %2, got %3"),
                                 {top, std::to_string(kMaxClasses), json_brief(*it)});
            s.num_classes = static_cast<int>(v);
        } else if (k == "layers") {
            std::int64_t count = 0;
            s.layers = layers_from_json(*it, loc + "layers", 0, count);
        } else if (k == "loss") {
            if (!it->is_object() || !it->contains("type") || !(*it)["type"].is_string())
                throw InputError(HR_MSG("spec.loss_shape",
                                        "%1: \"loss\" must be {\"type\": \"cross_entropy\"} or {\"type\": \"mse\"}"),
                                 {top});
            s.loss.type = (*it)["type"].get<std::string>();
            if (s.loss.type != "cross_entropy" && s.loss.type != "mse")
                throw InputError(HR_MSG("spec.loss_unknown", "%1: unknown loss '%2'; use cross_entropy or mse"),
                                 {top, s.loss.type});
            if (it->contains("label_smoothing")) {
                const auto& v = (*it)["label_smoothing"];
                if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() < 1))
                    throw InputError(HR_MSG("spec.label_smoothing",
                                            "%1: loss \"label_smoothing\" must be a number in [0, 1), got %2"),
                                     {top, json_brief(v)});
                s.loss.label_smoothing = v.get<double>();
                if (s.loss.type != "cross_entropy" && s.loss.label_smoothing != 0)
                    throw InputError(HR_MSG("spec.label_smoothing_mse", "%1: loss \"label_smoothing\" applies to "
                                                                        "cross_entropy only; remove it for %2"),
                                     {top, s.loss.type});
            }
        } else {
            throw InputError(HR_MSG("spec.unknown_key", "%1: unknown key '%2'; expected name, input, num_classes, "
                                                        "layers, loss (see docs/model-spec.md)"),
                             {top, k});
        }
    }
    if (!j.contains("layers"))
        throw InputError(HR_MSG("spec.no_layers", "%1: missing \"layers\" (see docs/model-spec.md)"), {top});
    return s;
}

ModelSpec model_spec_from_json(const json& j) { return model_spec_from_json_at(j, ""); }

static json layers_to_json(const std::vector<LayerSpec>& layers) {
    json arr = json::array();
    for (const auto& l : layers) {
        nlohmann::ordered_json o;
        json obj = json::object();
        obj["type"] = l.type;
        if (!l.name.empty()) obj["name"] = l.name;
        for (auto it = l.attrs.begin(); it != l.attrs.end(); ++it) obj[it.key()] = *it;
        if (l.type == "residual") {
            obj["body"] = layers_to_json(l.body);
            if (!l.shortcut.empty()) obj["shortcut"] = layers_to_json(l.shortcut);
        }
        arr.push_back(obj);
    }
    return arr;
}

json model_spec_to_json(const ModelSpec& s) {
    json j;
    j["format"] = "headroom-model";
    j["version"] = 1;
    j["name"] = s.name;
    j["input"] = s.input_shape;
    j["num_classes"] = s.num_classes;
    j["layers"] = layers_to_json(s.layers);
    j["loss"] = {{"type", s.loss.type}};
    if (s.loss.type == "cross_entropy") j["loss"]["label_smoothing"] = s.loss.label_smoothing;
    return j;
}

ModelSpec load_model_spec(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(HR_MSG("spec.unreadable", "cannot read model spec '%1': no such file or not readable"), {path});
    // Model specs are small; a file past the limit is not one (and is not read into memory).
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxSpecFileBytes)
        throw InputError(HR_MSG("spec.file_too_large", "model spec '%1' is %2 bytes, more than the limit of %3; is it "
                                                       "a model spec?"),
                         {path, std::to_string(size), std::to_string(kMaxSpecFileBytes)});
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const json j = parse_json_limited(text, "model spec '" + path + "'");
    return model_spec_from_json_at(j, path);
}

void save_model_spec(const ModelSpec& spec, const std::string& path) {
    write_file_atomic(path, model_spec_to_json(spec).dump(2) + "\n");
}

// ---------------------------------------------------------------------------------------------------
// shape inference

namespace {

std::string batch_shape(const Shape& s) {
    std::string out = "(N";
    for (auto d : s) out += ", " + std::to_string(d);
    return out + ")";
}

struct Analyzer {
    SpecReport rep;
    int next_index = 0;
    bool failed = false;
    std::int64_t params_so_far = 0;       // layers analysed so far (residual rows excluded)
    std::int64_t activation_so_far = 0;   // bytes per sample
    const ModelSpec* spec = nullptr;

    // The first failure becomes the report's error. The message templates start "layer %1 (%2): ",
    // filled with the layer's path and type, so the whole sentence is one translatable string.
    void fail(LayerReport& r, MessageText text, std::vector<std::string> args) {
        args.insert(args.begin(), {r.path, r.type});
        Message m(text, std::move(args));
        r.error = m.english();
        r.message = m;
        if (!failed) {
            failed = true;
            rep.error = r.error;
            rep.error_message = std::move(m);
            rep.error_layer = static_cast<int>(&r - rep.layers.data());
        }
    }
    // Plain English (the layer's row gets `msg`, the report "layer P (type): msg").
    void fail(LayerReport& r, const std::string& msg) {
        r.error = msg;
        r.message = Message::plain(msg);
        if (!failed) {
            failed = true;
            rep.error = "layer " + r.path + " (" + r.type + "): " + msg;
            rep.error_message = Message::plain(rep.error);
            rep.error_layer = static_cast<int>(&r - rep.layers.data());
        }
    }

    // Output size of a window; the operands are bounded (per-sample limit, catalog ranges), so this
    // cannot overflow.
    static std::int64_t pool_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d) {
        return (in + 2 * p - d * (k - 1) - 1) / s + 1;
    }

    // Returns the output shape, or empty on error (inference stops).
    Shape run_seq(const std::vector<LayerSpec>& seq, const std::string& prefix, Shape in, int depth) {
        for (std::size_t i = 0; i < seq.size(); ++i) {
            std::string path = prefix.empty() ? std::to_string(i) : prefix + "." + std::to_string(i);
            in = run_layer(seq[i], path, in, depth);
            if (in.empty()) return {};
            // an in-place ReLU keeps nothing of its own (relu_in_place_after)
            if (i > 0 && seq[i].type == "relu" && relu_in_place_after(seq[i - 1].type))
                rep.layers.back().activation_bytes_per_sample = 0;
        }
        return in;
    }

    Shape run_layer(const LayerSpec& l, const std::string& path, const Shape& in, int depth) {
        std::size_t pos = rep.layers.size();
        rep.layers.push_back({});
        {
            LayerReport& r = rep.layers[pos];
            r.index = next_index++;
            r.depth = depth;
            r.path = path;
            r.type = l.type;
            r.input_shape = in;
        }
        auto A = [&](const char* n) { return static_cast<std::int64_t>(std::llround(layer_attr(l, n))); };
        auto R = [&]() -> LayerReport& { return rep.layers[pos]; };
        const std::string& t = l.type;
        // Limits for specs built in code (the builder, presets) as well as parsed ones: the nesting
        // and layer count bound the recursion here and in every walk over the spec.
        if (depth > kMaxResidualDepth) {
            fail(R(), HR_MSG("spec.depth_limit", "layer %1 (%2): residual blocks nest more than %3 levels deep; "
                                                 "flatten the structure (see docs/model-spec.md, Limits)"),
                 {std::to_string(kMaxResidualDepth)});
            return {};
        }
        if (rep.layers.size() > static_cast<std::size_t>(kMaxLayers)) {
            fail(R(), HR_MSG("spec.layer_limit", "layer %1 (%2): the model has more than %3 layers (see "
                                                 "docs/model-spec.md, Limits)"),
                 {std::to_string(kMaxLayers)});
            return {};
        }
        if (const LayerTypeInfo* info = find_layer_type(t))
            for (const auto& a : info->attrs) {
                const double v = layer_attr(l, a.name);
                if (!(v >= a.min && v <= a.max)) {
                    char lo[32], hi[32], got[32];
                    std::snprintf(lo, sizeof lo, "%g", a.min);
                    std::snprintf(hi, sizeof hi, "%g", a.max);
                    std::snprintf(got, sizeof got, "%g", v);
                    fail(R(), HR_MSG("spec.attr_out_of_range", "layer %1 (%2): attribute '%3' must be between %4 and "
                                                               "%5, got %6"),
                         {a.name, lo, hi, got});
                    return {};
                }
            }
        Shape out;
        std::int64_t params = 0;
        std::int64_t extra_bytes = 0;  // saved besides the output (per sample)
        bool output_is_view = false;
        bool saves_indices = false;  // maxpool2d
        char label[128];
        std::snprintf(label, sizeof label, "%s", t.c_str());
        auto too_many_params = [&] {
            fail(R(), HR_MSG("spec.layer_params_limit", "layer %1 (%2): has more than %3 parameters (see "
                                                        "docs/model-spec.md, Limits); make it smaller"),
                 {std::to_string(kMaxParams)});
            R().label = label;
            return Shape{};
        };
        if (t == "conv2d") {
            std::int64_t ci = A("in_channels"), co = A("out_channels"), k = A("kernel_size"), s = A("stride"),
                         p = A("padding"), d = A("dilation");
            std::snprintf(label, sizeof label, "conv2d(%lld→%lld, k%lld%s%s)", (long long)ci, (long long)co,
                          (long long)k, s != 1 ? (", s" + std::to_string(s)).c_str() : "",
                          p != 0 ? (", p" + std::to_string(p)).c_str() : "");
            if (in.size() != 3) {
                fail(R(), HR_MSG("spec.conv_needs_image", "layer %1 (%2): expects input (N, %3, H, W), got %4; conv2d "
                                                          "needs image-shaped input: remove the Flatten before it or "
                                                          "use Linear"),
                     {std::to_string(ci), batch_shape(in)});
                R().label = label;
                return {};
            }
            if (in[0] != ci) {
                fail(R(), HR_MSG("spec.conv_channels", "layer %1 (%2): expects input (N, %3, H, W), got %4; set "
                                                       "in_channels to %5"),
                     {std::to_string(ci), batch_shape(in), std::to_string(in[0])});
                R().label = label;
                return {};
            }
            std::int64_t ho = pool_out(in[1], k, s, p, d), wo = pool_out(in[2], k, s, p, d);
            if (ho < 1 || wo < 1) {
                fail(R(), HR_MSG("spec.conv_kernel_fit", "layer %1 (%2): kernel %3 (dilation %4) does not fit input "
                                                         "%5; use a smaller kernel, more padding, or fewer pooling "
                                                         "layers before it"),
                     {std::to_string(k), std::to_string(d), batch_shape(in)});
                R().label = label;
                return {};
            }
            out = {co, ho, wo};
            std::int64_t w = 0, unfolded = 0, positions = 0;
            if (!checked_mul(co * ci, k * k, w) || !checked_add(w, layer_attr(l, "bias") != 0 ? co : 0, params) ||
                params > kMaxParams)
                return too_many_params();
            // The im2col matrix of one sample (in_channels * k * k rows, one column per output
            // position) is the largest buffer a convolution needs; it is bounded like any tensor.
            if (!checked_mul(ho, wo, positions) || !checked_mul(ci * k * k, positions, unfolded) ||
                unfolded > kMaxSampleElements) {
                fail(R(), HR_MSG("spec.conv_unfold_limit", "layer %1 (%2): unfolding its input takes in_channels x "
                                                           "kernel x kernel x output positions = more than %3 elements "
                                                           "per sample (see docs/model-spec.md, Limits); use a stride, "
                                                           "fewer channels or a smaller input"),
                     {std::to_string(kMaxSampleElements)});
                R().label = label;
                return {};
            }
        } else if (t == "maxpool2d" || t == "avgpool2d") {
            std::int64_t k = A("kernel_size"), s = A("stride"), p = A("padding");
            if (s == 0) s = k;
            std::snprintf(label, sizeof label, "%s(k%lld)", t.c_str(), (long long)k);
            if (in.size() != 3) {
                fail(R(), HR_MSG("spec.pool_needs_image", "layer %1 (%2): expects input (N, C, H, W), got %3; pooling "
                                                          "needs image-shaped input"),
                     {batch_shape(in)});
                R().label = label;
                return {};
            }
            if (2 * p > k) {
                fail(R(), HR_MSG("spec.pool_padding", "layer %1 (%2): padding %3 must be at most half the kernel size %4"),
                     {std::to_string(p), std::to_string(k)});
                R().label = label;
                return {};
            }
            std::int64_t ho = pool_out(in[1], k, s, p, 1), wo = pool_out(in[2], k, s, p, 1);
            if (ho < 1 || wo < 1) {
                fail(R(), HR_MSG("spec.pool_window_fit", "layer %1 (%2): window %3 is larger than the input %4; use a "
                                                         "smaller kernel_size or remove a pooling layer before it"),
                     {std::to_string(k), batch_shape(in)});
                R().label = label;
                return {};
            }
            out = {in[0], ho, wo};
            saves_indices = t == "maxpool2d";
        } else if (t == "linear") {
            std::int64_t fi = A("in_features"), fo = A("out_features");
            std::snprintf(label, sizeof label, "linear(%lld→%lld)", (long long)fi, (long long)fo);
            if (in.size() == 2) {  // a sequence (T, F): the same weights for every token
                if (in[1] != fi) {
                    fail(R(), HR_MSG("spec.linear_seq_features", "layer %1 (%2): expects input (N, T, %3), got %4; set "
                                                                 "in_features to %5"),
                         {std::to_string(fi), batch_shape(in), std::to_string(in[1])});
                    R().label = label;
                    return {};
                }
                out = {in[0], fo};
            } else if (in.size() != 1) {
                fail(R(), HR_MSG("spec.linear_needs_flat", "layer %1 (%2): expects input (N, %3), got %4; insert a "
                                                           "Flatten before it (it would give (N, %5))"),
                     {std::to_string(fi), batch_shape(in), std::to_string(shape_numel(in))});
                R().label = label;
                return {};
            } else if (in[0] != fi) {
                fail(R(), HR_MSG("spec.linear_features", "layer %1 (%2): expects input (N, %3), got %4; set "
                                                         "in_features to %5"),
                     {std::to_string(fi), batch_shape(in), std::to_string(in[0])});
                R().label = label;
                return {};
            } else {
                out = {fo};
            }
            std::int64_t w = 0;
            if (!checked_mul(fo, fi, w) || !checked_add(w, layer_attr(l, "bias") != 0 ? fo : 0, params) ||
                params > kMaxParams)
                return too_many_params();
        } else if (t == "relu" || t == "tanh" || t == "sigmoid" || t == "gelu" || t == "leaky_relu") {
            out = in;
        } else if (t == "dropout") {
            std::snprintf(label, sizeof label, "dropout(p=%.2g)", layer_attr(l, "p"));
            out = in;
            extra_bytes = shape_numel(out);  // u8 mask
        } else if (t == "flatten") {
            out = {shape_numel(in)};
            output_is_view = true;
        } else if (t == "batchnorm2d") {
            std::int64_t c = A("num_features");
            std::snprintf(label, sizeof label, "batchnorm2d(%lld)", (long long)c);
            if (in.size() != 3 || in[0] != c) {
                if (in.size() == 3)
                    fail(R(), HR_MSG("spec.bn_channels", "layer %1 (%2): expects input (N, %3, H, W), got %4; set "
                                                         "num_features to %5"),
                         {std::to_string(c), batch_shape(in), std::to_string(in[0])});
                else
                    fail(R(), HR_MSG("spec.bn_needs_image", "layer %1 (%2): expects input (N, %3, H, W), got %4; "
                                                            "BatchNorm2d needs image-shaped input"),
                         {std::to_string(c), batch_shape(in)});
                R().label = label;
                return {};
            }
            out = in;
            params = 2 * c;
        } else if (t == "residual") {
            std::snprintf(label, sizeof label, "residual(%zu layers%s)", l.body.size(),
                          l.shortcut.empty() ? "" : ", projection");
            R().label = label;
            Shape b = run_seq(l.body, path + ".body", in, depth + 1);
            if (b.empty()) return {};
            Shape s = in;
            if (!l.shortcut.empty()) {
                s = run_seq(l.shortcut, path + ".shortcut", in, depth + 1);
                if (s.empty()) return {};
            }
            if (b != s) {
                if (l.shortcut.empty())
                    fail(rep.layers[pos],
                         HR_MSG("spec.residual_identity", "layer %1 (%2): body gives %3 but the identity shortcut "
                                                          "gives %4; they must match to be added: keep channels and "
                                                          "size equal in the body or add a shortcut projection (1x1 "
                                                          "conv2d)"),
                         {batch_shape(b), batch_shape(s)});
                else
                    fail(rep.layers[pos],
                         HR_MSG("spec.residual_shortcut", "layer %1 (%2): body gives %3 but the shortcut gives %4; "
                                                          "they must match to be added: keep channels and size equal "
                                                          "in the body and the shortcut"),
                         {batch_shape(b), batch_shape(s)});
                return {};
            }
            out = b;
        } else if (TransformerLayerShape tr = analyze_transformer_layer(l, in, path, *spec); tr.handled) {
            std::snprintf(label, sizeof label, "%s", tr.label.c_str());
            if (!tr.error.empty()) {
                fail(R(), tr.error);
                R().label = label;
                return {};
            }
            out = tr.out;
            params = tr.params;
            extra_bytes = tr.saved_bytes;
        } else {
            fail(R(), HR_MSG("spec.layer_unknown", "layer %1 (%2): unknown layer type; use one of %3"), {known_types()});
            return {};
        }
        LayerReport& r = rep.layers[pos];
        r.label = label;
        // Every layer's output, whatever its type, is bounded per sample, and so are the totals: the
        // planner multiplies these by the batch (docs/model-spec.md, Limits).
        std::int64_t elements = 0;
        if (!shape_numel_checked(out, elements) || elements > kMaxSampleElements) {
            fail(r, HR_MSG("spec.output_limit", "layer %1 (%2): its output %3 has more than %4 elements per sample "
                                                "(see docs/model-spec.md, Limits); make it smaller"),
                 {batch_shape(out), std::to_string(kMaxSampleElements)});
            return {};
        }
        if (saves_indices) extra_bytes = elements * 4;  // i32 indices, one per output element
        r.output_shape = out;
        r.params = params;
        r.activation_bytes_per_sample = (output_is_view ? 0 : elements * 4) + extra_bytes;
        if (t != "residual") params_so_far += params;  // its children are counted
        activation_so_far += r.activation_bytes_per_sample;
        if (params_so_far > kMaxParams) {
            fail(r, HR_MSG("spec.total_params_limit", "layer %1 (%2): with it the model has more than %3 parameters "
                                                      "(see docs/model-spec.md, Limits)"),
                 {std::to_string(kMaxParams)});
            return {};
        }
        if (activation_so_far > kMaxActivationBytesPerSample) {
            fail(r, HR_MSG("spec.activation_limit", "layer %1 (%2): with it the model keeps more than %3 bytes of "
                                                    "activations per sample (see docs/model-spec.md, Limits)"),
                 {std::to_string(kMaxActivationBytesPerSample)});
            return {};
        }
        return out;
    }
};

}  // namespace

SpecReport analyze_model_spec(const ModelSpec& spec) {
    Analyzer a;
    a.spec = &spec;
    auto model_error = [&](Message m) {
        a.rep.error = m.english();
        a.rep.error_message = std::move(m);
        return a.rep;
    };
    if (spec.layers.empty())
        return model_error(HR_MSG("spec.no_layers_analysis", "the model has no layers; add some (or start from a preset)"));
    // The input and the class count are checked here too: specs built in code skip the parser.
    std::int64_t in_elements = 0;
    bool input_ok = !spec.input_shape.empty() && spec.input_shape.size() <= 3 &&
                    shape_numel_checked(spec.input_shape, in_elements) && in_elements <= kMaxSampleElements;
    for (auto d : spec.input_shape) input_ok = input_ok && d >= 1;
    if (!input_ok)
        return model_error(Message(HR_MSG("spec.input_invalid", "the model's input %1 must have 1 to 3 positive "
                                                                "dimensions and at most %2 elements per sample"),
                                   {shape_str(spec.input_shape), std::to_string(kMaxSampleElements)}));
    if (spec.num_classes < 2 || spec.num_classes > kMaxClasses)
        return model_error(Message(HR_MSG("spec.classes_invalid", "the model has %1 classes; it needs 2 to %2"),
                                   {std::to_string(spec.num_classes), std::to_string(kMaxClasses)}));
    Shape out = a.run_seq(spec.layers, "", spec.input_shape, 0);
    const bool tokens = is_token_model(spec);
    auto last_layer_error = [&](Message m) {
        a.rep.error = m.english();
        a.rep.error_message = std::move(m);
        a.rep.error_layer = static_cast<int>(a.rep.layers.size()) - 1;
        a.rep.layers.back().error = a.rep.error;
        a.rep.layers.back().message = a.rep.error_message;
    };
    const std::string k = std::to_string(spec.num_classes);
    if (!a.failed && tokens) {
        // a language model: logits (T, V) per sample, a cross-entropy per token
        if (out.size() != 2 || out[0] != spec.input_shape[0]) {
            last_layer_error(Message(HR_MSG("spec.lm_end_shape", "the model ends with shape %1 but a language model "
                                                                 "must end with (N, T, %2) logits; end with an lm_head"),
                                     {batch_shape(out), k}));
        } else if (out[1] != spec.num_classes) {
            last_layer_error(Message(HR_MSG("spec.lm_end_vocab", "the model ends with %1 scores per token but "
                                                                 "\"num_classes\" (the vocabulary) is %2; set "
                                                                 "num_classes to %1"),
                                     {std::to_string(out[1]), k}));
        } else if (spec.loss.type != "cross_entropy" || spec.loss.label_smoothing != 0) {
            last_layer_error(Message(HR_MSG("spec.lm_loss", "a language model trains with a plain per-token "
                                                            "cross-entropy; set the loss to cross_entropy with "
                                                            "label_smoothing 0")));
        } else {
            a.rep.ok = true;
            a.rep.output_shape = out;
        }
    } else if (!a.failed) {
        if (out.size() != 1) {
            last_layer_error(Message(HR_MSG("spec.end_shape", "the model ends with shape %1 but the loss needs (N, "
                                                              "%2); end with Flatten and Linear(…, %2)"),
                                     {batch_shape(out), k}));
        } else if (out[0] != spec.num_classes) {
            last_layer_error(Message(HR_MSG("spec.end_classes", "the model ends with %1 outputs but the data has %2 "
                                                                "classes; set the last layer's out_features to %2"),
                                     {std::to_string(out[0]), k}));
        } else {
            a.rep.ok = true;
            a.rep.output_shape = out;
        }
    }
    // Bounded by the limits checked per layer, so these sums cannot overflow.
    for (const auto& r : a.rep.layers) {
        if (r.type == "residual") continue;  // its children are counted
        a.rep.total_params += r.params;
    }
    for (const auto& r : a.rep.layers) a.rep.activation_bytes_per_sample += r.activation_bytes_per_sample;
    return a.rep;
}

SpecReport validate_model_spec(const ModelSpec& spec) {
    SpecReport r = analyze_model_spec(spec);
    if (!r.ok) throw InputError(r.error_message);
    return r;
}

// ---------------------------------------------------------------------------------------------------
// checkpoint blocks

bool relu_in_place_after(const std::string& t) {
    return t == "conv2d" || t == "linear" || t == "batchnorm2d" || t == "maxpool2d" || t == "avgpool2d" ||
           t == "dropout" || t == "residual";
}

std::vector<CheckpointBlock> checkpoint_blocks(const ModelSpec& spec) {
    std::vector<CheckpointBlock> blocks;
    SpecReport rep = analyze_model_spec(spec);
    const int n = static_cast<int>(spec.layers.size());
    // Labels of the top-level layers, found in one pass (a search per block was quadratic).
    std::vector<std::string> top_labels(spec.layers.size());
    for (const auto& r : rep.layers)
        if (r.depth == 0 && !r.label.empty() && r.path.find('.') == std::string::npos) {
            const std::size_t i = std::stoul(r.path);
            if (i < top_labels.size()) top_labels[i] = r.label;
        }
    auto top_label = [&](int i) { return top_labels[i].empty() ? spec.layers[i].type : top_labels[i]; };
    for (int i = 0; i < n; ++i) {
        const std::string& t = spec.layers[i].type;
        const bool starts = t == "conv2d" || t == "linear" || t == "residual" || t == "transformer_block" ||
                            t == "token_embedding" || t == "patch_embedding" || t == "self_attention" || t == "mlp" ||
                            t == "lm_head";
        if (blocks.empty() || starts) {
            blocks.push_back({i, i, ""});
        } else {
            blocks.back().last = i;
        }
    }
    for (auto& b : blocks) {
        b.label = b.first == b.last ? std::to_string(b.first) : std::to_string(b.first) + "-" + std::to_string(b.last);
        b.label += " " + top_label(b.first);
        if (b.last > b.first) b.label += " …";
    }
    return blocks;
}

// ---------------------------------------------------------------------------------------------------
// presets

namespace {
LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, json>> attrs = {}) {
    LayerSpec l = default_layer(type);
    for (auto& [k, v] : attrs) l.attrs[k] = v;
    return l;
}
LayerSpec conv(int ci, int co, int k, int s = 1, int p = 0, bool bias = true) {
    return L("conv2d", {{"in_channels", ci}, {"out_channels", co}, {"kernel_size", k}, {"stride", s}, {"padding", p},
                        {"bias", bias}});
}
LayerSpec linear(int fi, int fo) { return L("linear", {{"in_features", fi}, {"out_features", fo}}); }
LayerSpec bn(int c) { return L("batchnorm2d", {{"num_features", c}}); }
LayerSpec pool(const char* t, int k, int s = 0) { return L(t, {{"kernel_size", k}, {"stride", s}}); }
LayerSpec residual(std::vector<LayerSpec> body, std::vector<LayerSpec> shortcut = {}) {
    LayerSpec l = default_layer("residual");
    l.body = std::move(body);
    l.shortcut = std::move(shortcut);
    return l;
}
}  // namespace

std::vector<std::string> preset_names() { return {"seed-cnn", "mlp", "lenet5", "resnet-mini", "vit-tiny"}; }

std::vector<std::string> language_model_preset_names() {
    return {"gpt-tiny", "gpt-char", "gpt2-124m", "gpt2-350m", "gpt2-774m", "gpt2-1.5b"};
}

namespace {
// nanoGPT's GPT: wte, wpe, dropout (when p > 0), n_layer blocks, ln_f, a head tied to wte
ModelSpec gpt_spec(const std::string& name, int layers, int heads, int dim, int seq, int vocab, double dropout) {
    ModelSpec s;
    s.name = name;
    s.input_shape = {seq};
    s.num_classes = vocab;
    s.layers.push_back(L("token_embedding", {{"vocab_size", vocab}, {"dim", dim}}));
    s.layers.push_back(L("position_embedding", {{"max_positions", seq}, {"dim", dim}}));
    if (dropout > 0) s.layers.push_back(L("dropout", {{"p", dropout}}));  // nanoGPT's drop (a copy when p = 0)
    for (int i = 0; i < layers; ++i)
        s.layers.push_back(L("transformer_block", {{"dim", dim}, {"heads", heads}, {"dropout", dropout}}));
    s.layers.push_back(L("layernorm", {{"dim", dim}}));
    s.layers.push_back(L("lm_head", {{"dim", dim}, {"vocab_size", vocab}, {"tied", true}}));
    return s;
}
}  // namespace

std::string preset_description(const std::string& name) {
    if (name == "seed-cnn") return "two conv layers and two linear layers (PyTorch's MNIST example), 21,840 parameters";
    if (name == "mlp") return "multilayer perceptron 784-256-128-10";
    if (name == "lenet5") return "LeNet-5: conv 6@5x5 (pad 2), avgpool, conv 16@5x5, avgpool, 120-84-10 with tanh";
    if (name == "resnet-mini") return "three residual stages with BatchNorm (16, 32, 64 channels), global average pooling";
    if (name == "vit-tiny") return "vision transformer: 4x4 patches, class token, 4 blocks of width 64 with 4 heads";
    if (name == "gpt-tiny") return "GPT with 2 blocks of width 128, 4 heads, 128 tokens of context, byte vocabulary";
    if (name == "gpt-char") return "nanoGPT's character model: 6 blocks of width 384, 6 heads, 256 tokens of context";
    if (name == "gpt2-124m") return "GPT-2 small: 12 blocks of width 768, 12 heads, 1024 tokens, vocabulary 50304";
    if (name == "gpt2-350m") return "GPT-2 medium: 24 blocks of width 1024, 16 heads, 1024 tokens, vocabulary 50304";
    if (name == "gpt2-774m") return "GPT-2 large: 36 blocks of width 1280, 20 heads, 1024 tokens, vocabulary 50304";
    if (name == "gpt2-1.5b") return "GPT-2 XL: 48 blocks of width 1600, 25 heads, 1024 tokens, vocabulary 50304";
    return "";
}

ModelSpec preset_model(const std::string& name, const Shape& input_shape, int num_classes) {
    // language models: their own input (a sequence) and classes (the vocabulary)
    if (name == "gpt-tiny") return gpt_spec(name, 2, 4, 128, 128, 256, 0.0);
    if (name == "gpt-char") return gpt_spec(name, 6, 6, 384, 256, 256, 0.2);
    if (name == "gpt2-124m") return gpt_spec(name, 12, 12, 768, 1024, 50304, 0.0);
    if (name == "gpt2-350m") return gpt_spec(name, 24, 16, 1024, 1024, 50304, 0.0);
    if (name == "gpt2-774m") return gpt_spec(name, 36, 20, 1280, 1024, 50304, 0.0);
    if (name == "gpt2-1.5b") return gpt_spec(name, 48, 25, 1600, 1024, 50304, 0.0);
    ModelSpec s;
    s.name = name;
    s.input_shape = input_shape;
    s.num_classes = num_classes;
    if (input_shape.size() != 3)
        throw InputError("preset '" + name + "' needs image input (C, H, W), got " + shape_str(input_shape));
    const int c = static_cast<int>(input_shape[0]);
    const int h = static_cast<int>(input_shape[1]);
    const int w = static_cast<int>(input_shape[2]);
    if (name == "seed-cnn") {
        // Conv2d(1,10,5) -> MaxPool2d(2) -> ReLU -> Conv2d(10,20,5) -> MaxPool2d(2) -> ReLU -> Flatten ->
        // Linear(320,50) -> ReLU -> Linear(50,10)   (for 28x28 input; 320 = 20*4*4)
        int h2 = ((h - 4) / 2 - 4) / 2, w2 = ((w - 4) / 2 - 4) / 2;
        s.layers = {conv(c, 10, 5), pool("maxpool2d", 2), L("relu"), conv(10, 20, 5), pool("maxpool2d", 2), L("relu"),
                    L("flatten"), linear(20 * h2 * w2, 50), L("relu"), linear(50, num_classes)};
    } else if (name == "mlp") {
        int f = c * h * w;
        s.layers = {L("flatten"), linear(f, 256), L("relu"), linear(256, 128), L("relu"), linear(128, num_classes)};
    } else if (name == "lenet5") {
        // 28x28: pad 2 keeps 28 -> pool 14 -> conv 10 -> pool 5 -> 16*5*5 = 400
        int pad = h == 28 ? 2 : 0;
        int h1 = (h + 2 * pad - 4) / 2, w1 = (w + 2 * pad - 4) / 2;
        int h2 = (h1 - 4) / 2, w2 = (w1 - 4) / 2;
        s.layers = {conv(c, 6, 5, 1, pad), L("tanh"), pool("avgpool2d", 2), conv(6, 16, 5), L("tanh"),
                    pool("avgpool2d", 2), L("flatten"), linear(16 * h2 * w2, 120), L("tanh"), linear(120, 84),
                    L("tanh"), linear(84, num_classes)};
    } else if (name == "resnet-mini") {
        // stem conv3x3(16) + BN + ReLU; stage 1: block(16); stage 2: block(32, stride 2, 1x1 projection);
        // stage 3: block(64, stride 2, projection); global average pooling; Linear(64, classes).
        auto block = [](int ci, int co, int stride) {
            std::vector<LayerSpec> body = {conv(ci, co, 3, stride, 1, false), bn(co), L("relu"),
                                           conv(co, co, 3, 1, 1, false), bn(co)};
            std::vector<LayerSpec> sc;
            if (stride != 1 || ci != co) sc = {conv(ci, co, 1, stride, 0, false), bn(co)};
            return residual(std::move(body), std::move(sc));
        };
        int hs = h, ws = w;
        for (int i = 0; i < 2; ++i) {
            hs = (hs + 2 - 3) / 2 + 1;
            ws = (ws + 2 - 3) / 2 + 1;
        }
        if (hs != ws) throw InputError("preset 'resnet-mini' needs square input, got " + shape_str(input_shape));
        s.layers = {conv(c, 16, 3, 1, 1, false), bn(16), L("relu"),
                    block(16, 16, 1), L("relu"),
                    block(16, 32, 2), L("relu"),
                    block(32, 64, 2), L("relu"),
                    pool("avgpool2d", hs, hs), L("flatten"), linear(64, num_classes)};
    } else if (name == "vit-tiny") {
        // ViT (Dosovitskiy et al.) at Fashion-MNIST scale: 4x4 patches of 28x28 give 49 tokens + the class token
        const int p = 4, dim = 64;
        if (h % p != 0 || w % p != 0)
            throw InputError("preset 'vit-tiny' needs image sides divisible by 4, got " + shape_str(input_shape));
        const int tokens = (h / p) * (w / p) + 1;
        s.layers = {L("patch_embedding", {{"in_channels", c}, {"dim", dim}, {"patch_size", p}}),
                    L("class_token", {{"dim", dim}}),
                    L("position_embedding", {{"max_positions", tokens}, {"dim", dim}})};
        for (int i = 0; i < 4; ++i)
            s.layers.push_back(L("transformer_block", {{"dim", dim}, {"heads", 4}, {"hidden", 2 * dim}, {"causal", false},
                                                       {"gelu_tanh", false}}));
        s.layers.push_back(L("layernorm", {{"dim", dim}}));
        s.layers.push_back(L("class_token_pool"));
        s.layers.push_back(linear(dim, num_classes));
    } else {
        std::string names;
        for (auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
        for (auto& n : language_model_preset_names()) names += ", " + n;
        throw InputError("unknown preset '" + name + "'; use one of " + names);
    }
    return s;
}

}  // namespace hr
