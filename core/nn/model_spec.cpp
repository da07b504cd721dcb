#include "nn/model_spec.h"

#include "base/atomic_file.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
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
        c.push_back({"conv2d", "Conv2d", "convolution", "2-D convolution over (N, C, H, W) (groups = 1)",
                     {{"in_channels", AK::integer, 1, 1, 1e6, true, "input channels C"},
                      {"out_channels", AK::integer, 8, 1, 1e6, true, "output channels (filters)"},
                      {"kernel_size", AK::integer, 3, 1, 1024, true, "square kernel size"},
                      {"stride", AK::integer, 1, 1, 1024, false, "step between windows"},
                      {"padding", AK::integer, 0, 0, 1024, false, "zero padding on each side"},
                      {"dilation", AK::integer, 1, 1, 1024, false, "spacing between kernel taps"},
                      {"bias", AK::boolean, 1, 0, 1, false, "learn an additive bias per output channel"}}});
        c.push_back({"maxpool2d", "MaxPool2d", "pooling", "maximum over square windows",
                     {{"kernel_size", AK::integer, 2, 1, 1024, true, "window size"},
                      {"stride", AK::integer, 0, 0, 1024, false, "step between windows (0: kernel_size)"},
                      {"padding", AK::integer, 0, 0, 512, false, "implicit -inf padding on each side"}}});
        c.push_back({"avgpool2d", "AvgPool2d", "pooling", "mean over square windows (padding counted)",
                     {{"kernel_size", AK::integer, 2, 1, 1024, true, "window size"},
                      {"stride", AK::integer, 0, 0, 1024, false, "step between windows (0: kernel_size)"},
                      {"padding", AK::integer, 0, 0, 512, false, "zero padding on each side"}}});
        c.push_back({"linear", "Linear", "linear", "fully connected layer y = x W^T + b",
                     {{"in_features", AK::integer, 64, 1, 1e8, true, "input features"},
                      {"out_features", AK::integer, 10, 1, 1e8, true, "output features"},
                      {"bias", AK::boolean, 1, 0, 1, false, "learn an additive bias"}}});
        c.push_back({"relu", "ReLU", "activation", "max(x, 0)", {}});
        c.push_back({"leaky_relu", "LeakyReLU", "activation", "x if x > 0 else slope * x",
                     {{"negative_slope", AK::real, 0.01, 0, 1, false, "slope for x < 0"}}});
        c.push_back({"tanh", "Tanh", "activation", "hyperbolic tangent", {}});
        c.push_back({"sigmoid", "Sigmoid", "activation", "1 / (1 + exp(-x))", {}});
        c.push_back({"gelu", "GELU", "activation", "x * Phi(x) (exact erf form, or its tanh approximation)",
                     {{"tanh", AK::boolean, 0, 0, 1, false, "tanh approximation, as GPT-2 (nn.GELU(approximate='tanh'))"}}});
        c.push_back({"batchnorm2d", "BatchNorm2d", "normalisation",
                     "normalises each channel over (N, H, W) with batch statistics",
                     {{"num_features", AK::integer, 8, 1, 1e6, true, "channels C"},
                      {"eps", AK::real, 1e-5, 0, 1, false, "added to the variance"},
                      {"momentum", AK::real, 0.1, 0, 1, false, "running statistics update rate"}}});
        c.push_back({"dropout", "Dropout", "regularisation", "zeroes elements with probability p while training",
                     {{"p", AK::real, 0.5, 0, 0.99, false, "drop probability"}}});
        c.push_back({"flatten", "Flatten", "structure", "(N, C, H, W) -> (N, C*H*W)", {}});
        c.push_back({"residual", "Residual block", "structure",
                     "output = body(x) + shortcut(x); shortcut is the identity when empty", {}});
        // transformers (nn/transformer_layers.h)
        c.push_back({"token_embedding", "Token embedding", "embedding",
                     "looks up a learned vector for each token id: (N, T) -> (N, T, dim); must come first",
                     {{"vocab_size", AK::integer, 256, 2, 1e7, true, "vocabulary size V (token ids 0 .. V-1)"},
                      {"dim", AK::integer, 64, 1, 1e6, true, "embedding width"}}});
        c.push_back({"position_embedding", "Position embedding", "embedding",
                     "adds a learned vector for each position of the sequence",
                     {{"max_positions", AK::integer, 256, 1, 1e6, true, "longest sequence it has positions for"},
                      {"dim", AK::integer, 64, 1, 1e6, true, "embedding width"}}});
        c.push_back({"layernorm", "LayerNorm", "normalisation", "normalises each token over its features",
                     {{"dim", AK::integer, 64, 1, 1e6, true, "features (the last dimension)"},
                      {"eps", AK::real, 1e-5, 0, 1, false, "added to the variance"},
                      {"bias", AK::boolean, 1, 0, 1, false, "learn an additive bias"}}});
        c.push_back({"self_attention", "Self-attention", "transformer",
                     "multi-head self-attention: fused q, k, v projection, scaled dot product, output projection",
                     {{"dim", AK::integer, 64, 1, 1e6, true, "model width (a multiple of heads)"},
                      {"heads", AK::integer, 4, 1, 4096, true, "attention heads"},
                      {"causal", AK::boolean, 1, 0, 1, false, "each token sees only earlier ones (language models)"},
                      {"dropout", AK::real, 0, 0, 0.99, false, "drop probability of attention weights and output"},
                      {"bias", AK::boolean, 1, 0, 1, false, "learn biases in the projections"}}});
        c.push_back({"mlp", "MLP", "transformer", "linear, GELU, linear: the feed-forward half of a transformer block",
                     {{"dim", AK::integer, 64, 1, 1e6, true, "model width"},
                      {"hidden", AK::integer, 0, 0, 1e8, false, "hidden width (0: 4 x dim)"},
                      {"dropout", AK::real, 0, 0, 0.99, false, "drop probability of the output"},
                      {"bias", AK::boolean, 1, 0, 1, false, "learn biases"},
                      {"gelu_tanh", AK::boolean, 1, 0, 1, false, "GELU in its tanh form (GPT-2); off: exact (ViT)"}}});
        c.push_back({"transformer_block", "Transformer block", "transformer",
                     "x + attention(LayerNorm(x)), then + MLP(LayerNorm(.)): one GPT or ViT block",
                     {{"dim", AK::integer, 64, 1, 1e6, true, "model width (a multiple of heads)"},
                      {"heads", AK::integer, 4, 1, 4096, true, "attention heads"},
                      {"hidden", AK::integer, 0, 0, 1e8, false, "MLP hidden width (0: 4 x dim)"},
                      {"causal", AK::boolean, 1, 0, 1, false, "each token sees only earlier ones (GPT); off for ViT"},
                      {"dropout", AK::real, 0, 0, 0.99, false, "drop probability (attention weights and both outputs)"},
                      {"bias", AK::boolean, 1, 0, 1, false, "learn biases in projections and LayerNorms"},
                      {"gelu_tanh", AK::boolean, 1, 0, 1, false, "GELU in its tanh form (GPT-2); off: exact (ViT)"},
                      {"eps", AK::real, 1e-5, 0, 1, false, "LayerNorm epsilon"}}});
        c.push_back({"lm_head", "Language-model head", "linear",
                     "scores every vocabulary token at each position: (N, T, dim) -> (N, T, V)",
                     {{"dim", AK::integer, 64, 1, 1e6, true, "model width"},
                      {"vocab_size", AK::integer, 256, 2, 1e7, true, "vocabulary size V"},
                      {"tied", AK::boolean, 1, 0, 1, false, "share the token embedding's weight (no parameters of its own)"}}});
        c.push_back({"patch_embedding", "Patch embedding", "embedding",
                     "cuts images into square patches and projects each to a token: (N, C, H, W) -> (N, P, dim)",
                     {{"in_channels", AK::integer, 1, 1, 1e6, true, "image channels C"},
                      {"dim", AK::integer, 64, 1, 1e6, true, "token width"},
                      {"patch_size", AK::integer, 4, 1, 1024, true, "patch side in pixels (divides H and W)"}}});
        c.push_back({"class_token", "Class token", "embedding", "puts a learned token in front of the sequence",
                     {{"dim", AK::integer, 64, 1, 1e6, true, "token width"}}});
        c.push_back({"class_token_pool", "Class-token pooling", "structure",
                     "takes the first token's features for a classifier: (N, T, C) -> (N, C)", {}});
        c.push_back({"cross_entropy", "Softmax cross-entropy", "loss", "softmax + negative log-likelihood",
                     {{"label_smoothing", AK::real, 0, 0, 0.99, false, "mix of the uniform distribution into targets"}}});
        c.push_back({"mse", "MSE", "loss", "mean squared error against one-hot targets", {}});
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
        throw InputError("unknown layer type '" + type + "'; use one of " + known_types());
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

static std::vector<LayerSpec> layers_from_json(const json& arr, const std::string& where);

static LayerSpec layer_from_json(const json& j, const std::string& where) {
    if (!j.is_object()) throw InputError(where + ": each layer must be a JSON object like {\"type\": \"relu\"}");
    if (!j.contains("type") || !j["type"].is_string())
        throw InputError(where + ": missing \"type\"; use one of " + known_types());
    std::string type = j["type"].get<std::string>();
    LayerSpec l = default_layer(type);  // throws for unknown types
    const std::string at = where + " (" + type + ")";
    const LayerTypeInfo* info = find_layer_type(type);
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        if (key == "type") continue;
        if (key == "name") {
            if (!it->is_string()) throw InputError(at + ": \"name\" must be a string");
            l.name = it->get<std::string>();
            continue;
        }
        if (type == "residual" && (key == "body" || key == "shortcut")) {
            auto seq = layers_from_json(*it, where + "." + key);
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
            throw InputError(at + ": unknown attribute '" + key + "'" +
                             (known.empty() ? "; this layer takes no attributes" : "; known: " + known));
        }
        double v = 0;
        if (a->kind == AK::boolean) {
            if (!it->is_boolean()) throw InputError(at + ": attribute '" + key + "' must be true or false");
            v = it->get<bool>() ? 1 : 0;
        } else if (a->kind == AK::integer) {
            if (!it->is_number_integer())
                throw InputError(at + ": attribute '" + key + "' must be an integer, got " + it->dump());
            v = static_cast<double>(it->get<std::int64_t>());
        } else {
            if (!it->is_number()) throw InputError(at + ": attribute '" + key + "' must be a number, got " + it->dump());
            v = it->get<double>();
        }
        if (!(v >= a->min && v <= a->max)) {
            char buf[160];
            std::snprintf(buf, sizeof buf, ": attribute '%s' must be between %g and %g, got %s", key.c_str(), a->min,
                          a->max, it->dump().c_str());
            throw InputError(at + buf);
        }
        l.attrs[key] = attr_json(*a, v);
    }
    if (type == "residual" && l.body.empty())
        throw InputError(at + ": a residual block needs a non-empty \"body\" list of layers");
    return l;
}

static std::vector<LayerSpec> layers_from_json(const json& arr, const std::string& where) {
    if (!arr.is_array()) throw InputError(where + ": must be a list of layers");
    std::vector<LayerSpec> out;
    for (std::size_t i = 0; i < arr.size(); ++i)
        out.push_back(layer_from_json(arr[i], where + "[" + std::to_string(i) + "]"));
    return out;
}

ModelSpec model_spec_from_json(const json& j) {
    if (!j.is_object()) throw InputError("model spec: the top level must be a JSON object with \"layers\"");
    ModelSpec s;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k == "format" || k == "version" || k == "description") continue;
        if (k == "name") {
            if (!it->is_string()) throw InputError("model spec: \"name\" must be a string");
            s.name = it->get<std::string>();
        } else if (k == "input") {
            if (!it->is_array() || it->empty() || it->size() > 3)
                throw InputError("model spec: \"input\" must be the per-sample shape, e.g. [1, 28, 28] or [784]");
            s.input_shape.clear();
            for (const auto& d : *it) {
                if (!d.is_number_integer() || d.get<std::int64_t>() < 1)
                    throw InputError("model spec: \"input\" dimensions must be positive integers, got " + it->dump());
                s.input_shape.push_back(d.get<std::int64_t>());
            }
        } else if (k == "num_classes") {
            if (!it->is_number_integer() || it->get<std::int64_t>() < 2)
                throw InputError("model spec: \"num_classes\" must be an integer >= 2");
            s.num_classes = it->get<int>();
        } else if (k == "layers") {
            s.layers = layers_from_json(*it, "layers");
        } else if (k == "loss") {
            if (!it->is_object() || !it->contains("type") || !(*it)["type"].is_string())
                throw InputError("model spec: \"loss\" must be {\"type\": \"cross_entropy\"} or {\"type\": \"mse\"}");
            s.loss.type = (*it)["type"].get<std::string>();
            if (s.loss.type != "cross_entropy" && s.loss.type != "mse")
                throw InputError("model spec: unknown loss '" + s.loss.type + "'; use cross_entropy or mse");
            if (it->contains("label_smoothing")) {
                const auto& v = (*it)["label_smoothing"];
                if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1)
                    throw InputError("model spec: loss \"label_smoothing\" must be a number in [0, 1)");
                s.loss.label_smoothing = v.get<double>();
            }
        } else {
            throw InputError("model spec: unknown key '" + k +
                             "'; expected name, input, num_classes, layers, loss (see docs/model-spec.md)");
        }
    }
    if (!j.contains("layers")) throw InputError("model spec: missing \"layers\" (see docs/model-spec.md)");
    return s;
}

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
    if (!in) throw InputError("cannot read model spec '" + path + "': no such file or not readable");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        throw InputError("model spec '" + path + "' is not valid JSON: " + e.what());
    }
    try {
        return model_spec_from_json(j);
    } catch (const InputError& e) {
        throw InputError(path + ": " + e.what());
    }
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
    const ModelSpec* spec = nullptr;

    void fail(LayerReport& r, const std::string& msg) {
        r.error = msg;
        if (!failed) {
            failed = true;
            rep.error = "layer " + r.path + " (" + r.type + "): " + msg;
            rep.error_layer = static_cast<int>(&r - rep.layers.data());
        }
    }

    static std::int64_t pool_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d) {
        return (in + 2 * p - d * (k - 1) - 1) / s + 1;
    }

    // Returns the output shape, or empty on error (inference stops).
    Shape run_seq(const std::vector<LayerSpec>& seq, const std::string& prefix, Shape in, int depth) {
        for (std::size_t i = 0; i < seq.size(); ++i) {
            std::string path = prefix.empty() ? std::to_string(i) : prefix + "." + std::to_string(i);
            in = run_layer(seq[i], path, in, depth);
            if (in.empty()) return {};
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
        Shape out;
        std::int64_t params = 0;
        std::int64_t extra_bytes = 0;  // saved besides the output (per sample)
        bool output_is_view = false;
        const std::string& t = l.type;
        char label[128];
        std::snprintf(label, sizeof label, "%s", t.c_str());
        if (t == "conv2d") {
            std::int64_t ci = A("in_channels"), co = A("out_channels"), k = A("kernel_size"), s = A("stride"),
                         p = A("padding"), d = A("dilation");
            std::snprintf(label, sizeof label, "conv2d(%lld→%lld, k%lld%s%s)", (long long)ci, (long long)co,
                          (long long)k, s != 1 ? (", s" + std::to_string(s)).c_str() : "",
                          p != 0 ? (", p" + std::to_string(p)).c_str() : "");
            if (in.size() != 3) {
                fail(R(), "expects input (N, " + std::to_string(ci) + ", H, W), got " + batch_shape(in) +
                              "; conv2d needs image-shaped input: remove the Flatten before it or use Linear");
                R().label = label;
                return {};
            }
            if (in[0] != ci) {
                fail(R(), "expects input (N, " + std::to_string(ci) + ", H, W), got " + batch_shape(in) +
                              "; set in_channels to " + std::to_string(in[0]));
                R().label = label;
                return {};
            }
            std::int64_t ho = pool_out(in[1], k, s, p, d), wo = pool_out(in[2], k, s, p, d);
            if (ho < 1 || wo < 1) {
                fail(R(), "kernel " + std::to_string(k) + " (dilation " + std::to_string(d) + ") does not fit input " +
                              batch_shape(in) + "; use a smaller kernel, more padding, or fewer pooling layers before it");
                R().label = label;
                return {};
            }
            out = {co, ho, wo};
            params = co * ci * k * k + (layer_attr(l, "bias") != 0 ? co : 0);
        } else if (t == "maxpool2d" || t == "avgpool2d") {
            std::int64_t k = A("kernel_size"), s = A("stride"), p = A("padding");
            if (s == 0) s = k;
            std::snprintf(label, sizeof label, "%s(k%lld)", t.c_str(), (long long)k);
            if (in.size() != 3) {
                fail(R(), "expects input (N, C, H, W), got " + batch_shape(in) + "; pooling needs image-shaped input");
                R().label = label;
                return {};
            }
            if (2 * p > k) {
                fail(R(), "padding " + std::to_string(p) + " must be at most half the kernel size " + std::to_string(k));
                R().label = label;
                return {};
            }
            std::int64_t ho = pool_out(in[1], k, s, p, 1), wo = pool_out(in[2], k, s, p, 1);
            if (ho < 1 || wo < 1) {
                fail(R(), "window " + std::to_string(k) + " is larger than the input " + batch_shape(in) +
                              "; use a smaller kernel_size or remove a pooling layer before it");
                R().label = label;
                return {};
            }
            out = {in[0], ho, wo};
            if (t == "maxpool2d") extra_bytes = shape_numel(out) * 4;  // i32 indices
        } else if (t == "linear") {
            std::int64_t fi = A("in_features"), fo = A("out_features");
            std::snprintf(label, sizeof label, "linear(%lld→%lld)", (long long)fi, (long long)fo);
            if (in.size() == 2) {  // a sequence (T, F): the same weights for every token
                if (in[1] != fi) {
                    fail(R(), "expects input (N, T, " + std::to_string(fi) + "), got " + batch_shape(in) +
                                  "; set in_features to " + std::to_string(in[1]));
                    R().label = label;
                    return {};
                }
                out = {in[0], fo};
                params = fo * fi + (layer_attr(l, "bias") != 0 ? fo : 0);
            } else if (in.size() != 1) {
                fail(R(), "expects input (N, " + std::to_string(fi) + "), got " + batch_shape(in) +
                              "; insert a Flatten before it (it would give (N, " + std::to_string(shape_numel(in)) + "))");
                R().label = label;
                return {};
            }
            if (in.size() == 1 && in[0] != fi) {
                fail(R(), "expects input (N, " + std::to_string(fi) + "), got " + batch_shape(in) +
                              "; set in_features to " + std::to_string(in[0]));
                R().label = label;
                return {};
            }
            if (in.size() == 1) {
                out = {fo};
                params = fo * fi + (layer_attr(l, "bias") != 0 ? fo : 0);
            }
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
                fail(R(), "expects input (N, " + std::to_string(c) + ", H, W), got " + batch_shape(in) +
                              (in.size() == 3 ? "; set num_features to " + std::to_string(in[0])
                                              : std::string("; BatchNorm2d needs image-shaped input")));
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
                fail(rep.layers[pos], "body gives " + batch_shape(b) + " but the " +
                                          std::string(l.shortcut.empty() ? "identity shortcut" : "shortcut") + " gives " +
                                          batch_shape(s) +
                                          "; they must match to be added: keep channels and size equal in the body or "
                                          "add a shortcut projection (1x1 conv2d)");
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
            fail(R(), "unknown layer type; use one of " + known_types());
            return {};
        }
        LayerReport& r = rep.layers[pos];
        r.label = label;
        r.output_shape = out;
        r.params = params;
        r.activation_bytes_per_sample = (output_is_view ? 0 : shape_numel(out) * 4) + extra_bytes;
        return out;
    }
};

}  // namespace

SpecReport analyze_model_spec(const ModelSpec& spec) {
    Analyzer a;
    a.spec = &spec;
    if (spec.layers.empty()) {
        a.rep.error = "the model has no layers; add some (or start from a preset)";
        return a.rep;
    }
    Shape out = a.run_seq(spec.layers, "", spec.input_shape, 0);
    const bool tokens = is_token_model(spec);
    if (!a.failed && tokens) {
        // a language model: logits (T, V) per sample, a cross-entropy per token
        if (out.size() != 2 || out[0] != spec.input_shape[0]) {
            a.rep.error = "the model ends with shape " + batch_shape(out) + " but a language model must end with (N, T, " +
                          std::to_string(spec.num_classes) + ") logits; end with an lm_head";
        } else if (out[1] != spec.num_classes) {
            a.rep.error = "the model ends with " + std::to_string(out[1]) + " scores per token but \"num_classes\" (the "
                          "vocabulary) is " + std::to_string(spec.num_classes) + "; set num_classes to " +
                          std::to_string(out[1]);
        } else if (spec.loss.type != "cross_entropy" || spec.loss.label_smoothing != 0) {
            a.rep.error = "a language model trains with a plain per-token cross-entropy; set the loss to cross_entropy "
                          "with label_smoothing 0";
        } else {
            a.rep.ok = true;
            a.rep.output_shape = out;
        }
        if (!a.rep.ok) {
            a.rep.error_layer = static_cast<int>(a.rep.layers.size()) - 1;
            a.rep.layers.back().error = a.rep.error;
        }
    } else if (!a.failed) {
        if (out.size() != 1) {
            a.rep.error = "the model ends with shape " + batch_shape(out) +
                          " but the loss needs (N, " + std::to_string(spec.num_classes) +
                          "); end with Flatten and Linear(…, " + std::to_string(spec.num_classes) + ")";
            a.rep.error_layer = static_cast<int>(a.rep.layers.size()) - 1;
            a.rep.layers.back().error = a.rep.error;
        } else if (out[0] != spec.num_classes) {
            a.rep.error = "the model ends with " + std::to_string(out[0]) + " outputs but the data has " +
                          std::to_string(spec.num_classes) + " classes; set the last layer's out_features to " +
                          std::to_string(spec.num_classes);
            a.rep.error_layer = static_cast<int>(a.rep.layers.size()) - 1;
            a.rep.layers.back().error = a.rep.error;
        } else {
            a.rep.ok = true;
            a.rep.output_shape = out;
        }
    }
    for (const auto& r : a.rep.layers) {
        if (r.type == "residual") continue;  // its children are counted
        a.rep.total_params += r.params;
    }
    for (const auto& r : a.rep.layers) a.rep.activation_bytes_per_sample += r.activation_bytes_per_sample;
    return a.rep;
}

SpecReport validate_model_spec(const ModelSpec& spec) {
    SpecReport r = analyze_model_spec(spec);
    if (!r.ok) throw InputError(spec.name.empty() ? r.error : "model '" + spec.name + "': " + r.error);
    return r;
}

// ---------------------------------------------------------------------------------------------------
// checkpoint blocks

std::vector<CheckpointBlock> checkpoint_blocks(const ModelSpec& spec) {
    std::vector<CheckpointBlock> blocks;
    SpecReport rep = analyze_model_spec(spec);
    auto top_label = [&](int i) {
        for (const auto& r : rep.layers)
            if (r.path == std::to_string(i)) return r.label.empty() ? spec.layers[i].type : r.label;
        return spec.layers[i].type;
    };
    const int n = static_cast<int>(spec.layers.size());
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
