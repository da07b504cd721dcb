// export_onnx: a run's model as an ONNX graph at opset 17 (onnx_export.h; docs/export.md).
//
// The weights come from a model built on the CPU and loaded from the run's model.safetensors (so a LoRA run's
// adapters are merged, any stored dtype is converted, and a what-if computes as `headroom eval` computes it),
// then each layer of the spec is turned into nodes by its entry in kLayerMappings, in order, residual blocks
// recursively. Activations are (batch, ...) with `batch` dynamic: every reshape copies the batch dimension
// (Reshape's 0) or reads it (Shape), never a number.
#include "exporters/onnx/onnx_export.h"
#include "exporters/onnx/onnx_proto.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numbers>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/table.h"
#include "io/safetensors.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "train/checkpoint.h"
#include "train/device.h"
#include "train/resume.h"

namespace hr {

namespace {

namespace ox = onnx_proto;
namespace fs = std::filesystem;

int attr_int(const LayerSpec& l, const char* name) { return static_cast<int>(std::llround(layer_attr(l, name))); }
bool attr_bool(const LayerSpec& l, const char* name) { return layer_attr(l, name) != 0; }

// ---- the graph being built -----------------------------------------------------------------------
class GraphBuilder {
public:
    GraphBuilder(ox::Graph& g, const SafeTensorsFile& state) : g_(g), state_(state) {}

    // A node `op` on `inputs`; returns its (first) output's name. `hint` names it for a person reading the graph.
    ox::Node& add(const std::string& op, const std::vector<std::string>& inputs, const std::string& hint,
                  int outputs = 1) {
        ox::Node& n = g_.node.emplace_back();
        n.op_type = op;
        n.name = unique(hint + "/" + op);
        n.input = inputs;
        for (int k = 0; k < outputs; ++k) n.output.push_back(unique(hint + "/" + op + (outputs > 1 ? std::to_string(k) : "")));
        return n;
    }
    std::string op(const std::string& op, const std::vector<std::string>& inputs, const std::string& hint) {
        return add(op, inputs, hint).output[0];
    }
    static void set(ox::Node& n, const std::string& name, std::int64_t v) {
        ox::Attribute a;
        a.name = name;
        a.type = ox::kAttrInt;
        a.i = v;
        n.attribute.push_back(a);
    }
    static void set(ox::Node& n, const std::string& name, float v) {
        ox::Attribute a;
        a.name = name;
        a.type = ox::kAttrFloat;
        a.f = v;
        n.attribute.push_back(a);
    }
    static void set(ox::Node& n, const std::string& name, const std::vector<std::int64_t>& v) {
        ox::Attribute a;
        a.name = name;
        a.type = ox::kAttrInts;
        a.ints = v;
        n.attribute.push_back(a);
    }

    // The model's tensor `name` (its state_dict name, f32) as an initializer of the same name.
    std::string weight(const std::string& name) {
        if (used_.count(name)) return name;
        const SafeTensor* t = state_.find(name);
        if (!t) throw Error("internal: ONNX export: the model has no tensor '" + name + "'");
        if (t->dtype != DType::f32) throw Error("internal: ONNX export: tensor '" + name + "' is not f32");
        ox::Tensor& p = g_.initializer.emplace_back();
        p.name = name;
        p.data_type = ox::kFloat;
        p.dims.assign(t->shape.begin(), t->shape.end());
        p.raw_data.assign(reinterpret_cast<const char*>(t->bytes()), t->nbytes());
        used_.insert(name);
        parameters_ += static_cast<std::int64_t>(t->nbytes() / sizeof(float));
        return name;
    }
    bool has(const std::string& name) const { return state_.find(name) != nullptr; }

    std::string floats(const std::string& hint, const Shape& dims, const std::vector<float>& v) {
        ox::Tensor& p = g_.initializer.emplace_back();
        p.name = unique(hint);
        p.data_type = ox::kFloat;
        p.dims.assign(dims.begin(), dims.end());
        p.raw_data.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
        return p.name;
    }
    std::string scalar(const std::string& hint, float v) { return floats(hint, {}, {v}); }
    std::string ints(const std::string& hint, const std::vector<std::int64_t>& v, bool as_scalar = false) {
        ox::Tensor& p = g_.initializer.emplace_back();
        p.name = unique(hint);
        p.data_type = ox::kInt64;
        if (!as_scalar) p.dims.push_back(static_cast<std::int64_t>(v.size()));
        p.raw_data.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(std::int64_t));  // little-endian
        return p.name;
    }

    std::int64_t parameters() const { return parameters_; }

    // The spec's shape inference: each layer's output per sample, by its state_dict path ("3", "4.body.1").
    void set_report(const SpecReport& r) {
        for (const auto& l : r.layers) out_shapes_[l.path] = l.output_shape;
    }
    const Shape& output_shape(const std::string& path) const {
        auto it = out_shapes_.find(path);
        if (it == out_shapes_.end() || it->second.empty())
            throw Error("internal: ONNX export: no output shape for layer " + path);
        return it->second;
    }

private:
    std::string unique(const std::string& base) {
        int& n = names_[base];
        return n++ == 0 ? base : base + "_" + std::to_string(n - 1);
    }
    ox::Graph& g_;
    const SafeTensorsFile& state_;
    std::map<std::string, int> names_;
    std::set<std::string> used_;
    std::int64_t parameters_ = 0;
    std::map<std::string, Shape> out_shapes_;
};

// ---- shared pieces: linear layers, GELU, attention -----------------------------------------------------
// y = x W^T + b over the last dimension; W (out, in) in PyTorch's layout (a Transpose node for MatMul on
// sequences; Gemm with transB on (batch, in)).
std::string linear(GraphBuilder& b, const std::string& x, const std::string& prefix, bool bias, bool sequence) {
    const std::string w = b.weight(prefix + "weight");
    if (!sequence) {
        std::vector<std::string> in{x, w};
        if (bias) in.push_back(b.weight(prefix + "bias"));
        auto& n = b.add("Gemm", in, prefix + "gemm");
        GraphBuilder::set(n, "transB", std::int64_t{1});
        return n.output[0];
    }
    auto& t = b.add("Transpose", {w}, prefix + "weight_t");
    GraphBuilder::set(t, "perm", std::vector<std::int64_t>{1, 0});
    std::string y = b.op("MatMul", {x, t.output[0]}, prefix + "matmul");
    if (bias) y = b.op("Add", {y, b.weight(prefix + "bias")}, prefix + "bias");
    return y;
}

// GELU decomposed (opset 17 has none): x * 0.5 * (1 + erf(x / sqrt 2)), or the tanh form
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
std::string gelu(GraphBuilder& b, const std::string& x, bool tanh_form, const std::string& hint) {
    std::string inner;
    if (tanh_form) {
        std::string x3 = b.op("Mul", {b.op("Mul", {x, x}, hint), x}, hint);
        std::string s = b.op("Add", {x, b.op("Mul", {x3, b.scalar(hint + "/c", 0.044715f)}, hint)}, hint);
        inner = b.op("Tanh", {b.op("Mul", {s, b.scalar(hint + "/k", static_cast<float>(std::sqrt(2.0 / std::numbers::pi)))}, hint)},
                     hint);
    } else {
        inner = b.op("Erf", {b.op("Div", {x, b.scalar(hint + "/sqrt2", static_cast<float>(std::numbers::sqrt2))}, hint)}, hint);
    }
    std::string one_plus = b.op("Add", {inner, b.scalar(hint + "/one", 1.0f)}, hint);
    return b.op("Mul", {b.op("Mul", {x, b.scalar(hint + "/half", 0.5f)}, hint), one_plus}, hint);
}

std::string layer_norm(GraphBuilder& b, const std::string& x, const std::string& prefix, bool bias, float eps) {
    std::vector<std::string> in{x, b.weight(prefix + "weight")};
    if (bias) in.push_back(b.weight(prefix + "bias"));
    auto& n = b.add("LayerNormalization", in, prefix + "ln");
    GraphBuilder::set(n, "axis", std::int64_t{-1});
    GraphBuilder::set(n, "epsilon", eps);
    return n.output[0];
}

// Multi-head self-attention on (batch, T, C): c_attn (3C, C) gives q, k, v; softmax(q k^T / sqrt(D)) v per
// head (D = C / heads), a causal mask when asked; the heads joined and projected by c_proj (C, C).
std::string attention(GraphBuilder& b, const std::string& x, const std::string& prefix, std::int64_t T,
                      std::int64_t C, std::int64_t H, bool causal, bool bias) {
    const std::int64_t D = C / H;
    const std::string qkv = linear(b, x, prefix + "c_attn.", bias, true);  // (B, T, 3C)
    auto& split = b.add("Split", {qkv, b.ints(prefix + "split", {C, C, C})}, prefix + "qkv", 3);
    GraphBuilder::set(split, "axis", std::int64_t{2});
    const std::string heads_shape = b.ints(prefix + "heads_shape", {0, 0, H, D});
    auto heads = [&](int i, std::vector<std::int64_t> perm) {  // (B, T, C) -> (B, T, H, D) -> perm
        auto& t = b.add("Transpose", {b.op("Reshape", {split.output[std::size_t(i)], heads_shape}, prefix + "heads")}, prefix + "heads");
        GraphBuilder::set(t, "perm", perm);
        return t.output[0];
    };
    std::string q = heads(0, {0, 2, 1, 3});  // (B, H, T, D)
    std::string k = heads(1, {0, 2, 3, 1});  // (B, H, D, T)
    std::string v = heads(2, {0, 2, 1, 3});  // (B, H, T, D)
    q = b.op("Mul", {q, b.scalar(prefix + "scale", 1.0f / std::sqrt(static_cast<float>(D)))}, prefix + "q_scaled");
    std::string s = b.op("MatMul", {q, k}, prefix + "scores");  // (B, H, T, T)
    if (causal) {
        std::vector<float> mask(static_cast<std::size_t>(T * T), 0.0f);
        for (std::int64_t i = 0; i < T; ++i)
            for (std::int64_t j = i + 1; j < T; ++j) mask[static_cast<std::size_t>(i * T + j)] = -INFINITY;
        s = b.op("Add", {s, b.floats(prefix + "causal_mask", {T, T}, mask)}, prefix + "masked");
    }
    auto& sm = b.add("Softmax", {s}, prefix + "softmax");
    GraphBuilder::set(sm, "axis", std::int64_t{-1});
    auto& joined = b.add("Transpose", {b.op("MatMul", {sm.output[0], v}, prefix + "att")}, prefix + "join");
    GraphBuilder::set(joined, "perm", std::vector<std::int64_t>{0, 2, 1, 3});  // (B, T, H, D)
    const std::string y = b.op("Reshape", {joined.output[0], b.ints(prefix + "join_shape", {0, 0, C})}, prefix + "join");
    return linear(b, y, prefix + "c_proj.", bias, true);
}

std::string mlp(GraphBuilder& b, const std::string& x, const std::string& prefix, bool bias, bool tanh_form) {
    std::string h = linear(b, x, prefix + "c_fc.", bias, true);
    h = gelu(b, h, tanh_form, prefix + "gelu");
    return linear(b, h, prefix + "c_proj.", bias, true);
}

// ---- one entry per layer type ------------------------------------------------------------------------------
// What a mapping gets: the layer, its state_dict prefix ("3." or "4.body.1."), its input and its input's
// shape per sample (no batch); it returns its output's name.
struct LayerCall {
    GraphBuilder& b;
    const LayerSpec& layer;
    std::string prefix;
    std::string x;
    Shape in;  // per sample
};
std::string emit_sequence(GraphBuilder& b, const std::vector<LayerSpec>& layers, const std::string& prefix,
                          std::string x, Shape& shape);

std::string pool(LayerCall& c, const char* op) {
    const int k = attr_int(c.layer, "kernel_size"), s = attr_int(c.layer, "stride"), p = attr_int(c.layer, "padding");
    auto& n = c.b.add(op, {c.x}, c.prefix + "pool");
    GraphBuilder::set(n, "kernel_shape", std::vector<std::int64_t>{k, k});
    GraphBuilder::set(n, "strides", std::vector<std::int64_t>{s > 0 ? s : k, s > 0 ? s : k});
    GraphBuilder::set(n, "pads", std::vector<std::int64_t>{p, p, p, p});
    if (std::string(op) == "AveragePool") GraphBuilder::set(n, "count_include_pad", std::int64_t{1});  // padding counted
    return n.output[0];
}

using Mapping = std::function<std::string(LayerCall&)>;
// The table: each layer type of the catalog that an image or table model uses, and its nodes at opset 17.
const std::map<std::string, Mapping>& layer_mappings() {
    static const std::map<std::string, Mapping> m = {
        {"conv2d",  // Conv, weight (out, in, k, k)
         [](LayerCall& c) {
             const int k = attr_int(c.layer, "kernel_size"), s = attr_int(c.layer, "stride"),
                       p = attr_int(c.layer, "padding"), d = attr_int(c.layer, "dilation");
             std::vector<std::string> in{c.x, c.b.weight(c.prefix + "weight")};
             if (attr_bool(c.layer, "bias")) in.push_back(c.b.weight(c.prefix + "bias"));
             auto& n = c.b.add("Conv", in, c.prefix + "conv");
             GraphBuilder::set(n, "kernel_shape", std::vector<std::int64_t>{k, k});
             GraphBuilder::set(n, "strides", std::vector<std::int64_t>{s, s});
             GraphBuilder::set(n, "pads", std::vector<std::int64_t>{p, p, p, p});
             GraphBuilder::set(n, "dilations", std::vector<std::int64_t>{d, d});
             return n.output[0];
         }},
        {"maxpool2d", [](LayerCall& c) { return pool(c, "MaxPool"); }},
        {"avgpool2d", [](LayerCall& c) { return pool(c, "AveragePool"); }},
        {"linear",  // Gemm (transB) on (batch, in); MatMul with the transposed weight on sequences
         [](LayerCall& c) { return linear(c.b, c.x, c.prefix, attr_bool(c.layer, "bias"), c.in.size() > 1); }},
        {"relu", [](LayerCall& c) { return c.b.op("Relu", {c.x}, c.prefix + "relu"); }},
        {"leaky_relu",
         [](LayerCall& c) {
             auto& n = c.b.add("LeakyRelu", {c.x}, c.prefix + "leaky_relu");
             GraphBuilder::set(n, "alpha", static_cast<float>(layer_attr(c.layer, "negative_slope")));
             return n.output[0];
         }},
        {"tanh", [](LayerCall& c) { return c.b.op("Tanh", {c.x}, c.prefix + "tanh"); }},
        {"sigmoid", [](LayerCall& c) { return c.b.op("Sigmoid", {c.x}, c.prefix + "sigmoid"); }},
        {"gelu", [](LayerCall& c) { return gelu(c.b, c.x, attr_bool(c.layer, "tanh"), c.prefix + "gelu"); }},
        {"batchnorm2d",  // inference form: running statistics, training_mode 0
         [](LayerCall& c) {
             auto& n = c.b.add("BatchNormalization",
                               {c.x, c.b.weight(c.prefix + "weight"), c.b.weight(c.prefix + "bias"),
                                c.b.weight(c.prefix + "running_mean"), c.b.weight(c.prefix + "running_var")},
                               c.prefix + "bn");
             GraphBuilder::set(n, "epsilon", static_cast<float>(layer_attr(c.layer, "eps")));
             GraphBuilder::set(n, "momentum", static_cast<float>(1.0 - layer_attr(c.layer, "momentum")));
             GraphBuilder::set(n, "training_mode", std::int64_t{0});
             return n.output[0];
         }},
        {"dropout", [](LayerCall& c) { return c.x; }},  // the identity outside training
        {"flatten",
         [](LayerCall& c) {
             auto& n = c.b.add("Flatten", {c.x}, c.prefix + "flatten");
             GraphBuilder::set(n, "axis", std::int64_t{1});
             return n.output[0];
         }},
        {"residual",  // body(x) + shortcut(x), the shortcut the identity when empty
         [](LayerCall& c) {
             Shape body_shape = c.in, sc_shape = c.in;
             std::string y = emit_sequence(c.b, c.layer.body, c.prefix + "body.", c.x, body_shape);
             std::string s = c.layer.shortcut.empty()
                                 ? c.x
                                 : emit_sequence(c.b, c.layer.shortcut, c.prefix + "shortcut.", c.x, sc_shape);
             return c.b.op("Add", {y, s}, c.prefix + "residual");
         }},
        {"patch_embedding",  // Conv with kernel = stride = patch: (B, C, H/p, W/p) -> (B, C, P) -> (B, P, C)
         [](LayerCall& c) {
             const int p = attr_int(c.layer, "patch_size");
             const std::int64_t dim = attr_int(c.layer, "dim");
             auto& conv = c.b.add("Conv", {c.x, c.b.weight(c.prefix + "weight"), c.b.weight(c.prefix + "bias")},
                                  c.prefix + "patches");
             GraphBuilder::set(conv, "kernel_shape", std::vector<std::int64_t>{p, p});
             GraphBuilder::set(conv, "strides", std::vector<std::int64_t>{p, p});
             std::string r = c.b.op("Reshape", {conv.output[0], c.b.ints(c.prefix + "tokens_shape", {0, dim, -1})},
                                    c.prefix + "tokens");
             auto& t = c.b.add("Transpose", {r}, c.prefix + "tokens");
             GraphBuilder::set(t, "perm", std::vector<std::int64_t>{0, 2, 1});
             return t.output[0];
         }},
        {"class_token",  // weight (1, 1, C) expanded to (B, 1, C) (B read from the input), put in front
         [](LayerCall& c) {
             const std::int64_t dim = attr_int(c.layer, "dim");
             auto& shape = c.b.add("Shape", {c.x}, c.prefix + "batch");
             GraphBuilder::set(shape, "start", std::int64_t{0});
             GraphBuilder::set(shape, "end", std::int64_t{1});
             auto& target = c.b.add("Concat", {shape.output[0], c.b.ints(c.prefix + "token_shape", {1, dim})},
                                    c.prefix + "expand_shape");
             GraphBuilder::set(target, "axis", std::int64_t{0});
             std::string cls = c.b.op("Expand", {c.b.weight(c.prefix + "weight"), target.output[0]}, c.prefix + "cls");
             auto& cat = c.b.add("Concat", {cls, c.x}, c.prefix + "with_cls");
             GraphBuilder::set(cat, "axis", std::int64_t{1});
             return cat.output[0];
         }},
        {"position_embedding",  // x + weight[:T] (weight (max_positions, C))
         [](LayerCall& c) {
             const std::int64_t T = c.in[0];
             std::string pe = c.b.op("Slice",
                                     {c.b.weight(c.prefix + "weight"), c.b.ints(c.prefix + "from", {0}),
                                      c.b.ints(c.prefix + "to", {T}), c.b.ints(c.prefix + "axes", {0})},
                                     c.prefix + "positions");
             return c.b.op("Add", {c.x, pe}, c.prefix + "add_positions");
         }},
        {"layernorm",  // LayerNormalization over the last dimension
         [](LayerCall& c) {
             return layer_norm(c.b, c.x, c.prefix, attr_bool(c.layer, "bias"),
                               static_cast<float>(layer_attr(c.layer, "eps")));
         }},
        {"self_attention",
         [](LayerCall& c) {
             return attention(c.b, c.x, c.prefix, c.in[0], attr_int(c.layer, "dim"), attr_int(c.layer, "heads"),
                              attr_bool(c.layer, "causal"), attr_bool(c.layer, "bias"));
         }},
        {"mlp",
         [](LayerCall& c) {
             return mlp(c.b, c.x, c.prefix, attr_bool(c.layer, "bias"), attr_bool(c.layer, "gelu_tanh"));
         }},
        {"transformer_block",  // x + attn(ln_1(x)), then + mlp(ln_2(.)) (nanoGPT's Block)
         [](LayerCall& c) {
             const bool bias = attr_bool(c.layer, "bias");
             const float eps = static_cast<float>(layer_attr(c.layer, "eps"));
             std::string h = layer_norm(c.b, c.x, c.prefix + "ln_1.", bias, eps);
             h = attention(c.b, h, c.prefix + "attn.", c.in[0], attr_int(c.layer, "dim"), attr_int(c.layer, "heads"),
                           attr_bool(c.layer, "causal"), bias);
             const std::string x1 = c.b.op("Add", {c.x, h}, c.prefix + "attn_residual");
             h = layer_norm(c.b, x1, c.prefix + "ln_2.", bias, eps);
             h = mlp(c.b, h, c.prefix + "mlp.", bias, attr_bool(c.layer, "gelu_tanh"));
             return c.b.op("Add", {x1, h}, c.prefix + "mlp_residual");
         }},
        {"class_token_pool",  // (B, T, C) -> (B, C): position 0
         [](LayerCall& c) {
             auto& n = c.b.add("Gather", {c.x, c.b.ints(c.prefix + "first", {0}, true)}, c.prefix + "class_token");
             GraphBuilder::set(n, "axis", std::int64_t{1});
             return n.output[0];
         }},
    };
    return m;
}

// The layer types of language models: refused with one message (their way out is GGUF or a Hugging Face folder).
bool language_model_layer(const std::string& type) {
    return type == "token_embedding" || type == "lm_head" || type == "llama_block" || type == "rmsnorm";
}

std::string emit_sequence(GraphBuilder& b, const std::vector<LayerSpec>& layers, const std::string& prefix,
                          std::string x, Shape& shape) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const LayerSpec& l = layers[i];
        auto it = layer_mappings().find(l.type);
        if (it == layer_mappings().end())
            throw InputError(HR_MSG("onnx.no_mapping", "layer %1 (%2) has no ONNX mapping; ONNX export covers %3"),
                             {prefix + std::to_string(i), l.type, [] {
                                  std::string s;
                                  for (const auto& t : onnx_layer_types()) s += (s.empty() ? "" : ", ") + t;
                                  return s;
                              }()});
        LayerCall call{b, l, prefix + std::to_string(i) + ".", x, shape};
        x = it->second(call);
        shape = b.output_shape(prefix + std::to_string(i));
    }
    return x;
}

void check_exportable(const ModelSpec& spec) {
    std::function<void(const std::vector<LayerSpec>&)> walk = [&](const std::vector<LayerSpec>& ls) {
        for (const auto& l : ls) {
            if (language_model_layer(l.type))
                throw InputError(HR_MSG("onnx.language_model",
                                        "'%1' is a language model: ONNX export covers image and table models; write a "
                                        "language model as a Hugging Face model folder (headroom export RUN --hf DIR) "
                                        "or as a GGUF file for llama.cpp (headroom export RUN --gguf FILE)"),
                                 {spec.name});
            walk(l.body);
            walk(l.shortcut);
        }
    };
    walk(spec.layers);
}

// The run's data, loaded with the run's own options, for the normalisation its samples had.
struct Normalisation {
    bool table = false;
    float mean = 0, std = 1;                        // images
    std::vector<float> column_mean, column_std;     // a table
    std::vector<std::string> class_names, feature_names;
};
Normalisation run_normalisation(const TrainConfig& c, const ModelSpec& spec, const std::string& config_path) {
    DataOptions dopt;
    dopt.train_limit = c.train_limit;
    dopt.test_limit = 1;  // the test split is not used
    dopt.target = c.target;
    DatasetPair data;
    TableSummary table;
    try {
        data = is_table_data(c.data) ? load_table(c.data, c.target, &table) : load_dataset(c.data, dopt);
    } catch (const InputError& e) {
        throw InputError(HR_MSG("onnx.data", "the graph takes the normalisation of the run's data '%1' (%2), which "
                                             "does not load: %3"),
                         {c.data, config_path, e.what()});
    }
    if (data.train.sample_shape != spec.input_shape)
        throw InputError(HR_MSG("onnx.data_shape", "the run's data '%1' has samples of shape %2 but the model takes %3"),
                         {c.data, shape_str(data.train.sample_shape), shape_str(spec.input_shape)});
    Normalisation n;
    n.table = is_table_data(c.data);
    n.mean = data.train.norm_mean;
    n.std = data.train.norm_std;
    for (double v : table.feature_mean) n.column_mean.push_back(static_cast<float>(v));
    for (double v : table.feature_std) n.column_std.push_back(static_cast<float>(v));
    if (n.table && n.column_mean.size() != static_cast<std::size_t>(shape_numel(spec.input_shape)))
        throw Error("internal: ONNX export: the table's column statistics do not cover its features");
    n.class_names = data.train.class_names;
    n.feature_names = data.train.feature_names;
    return n;
}

ox::ValueInfo value_info(const std::string& name, const Shape& per_sample, const std::string& doc) {
    ox::ValueInfo v;
    v.name = name;
    v.doc_string = doc;
    v.shape.push_back({0, "batch"});
    for (auto d : per_sample) v.shape.push_back({d, ""});
    return v;
}

std::string number(double v) {
    std::ostringstream s;
    s.precision(9);
    s << v;
    return s.str();
}

// FILE as a person types it: an ONNX file name in an existing folder; never a folder, never another file (the
// run's weights) by a slip of the name. An existing .onnx file is replaced (atomically, once the new one is whole).
void check_destination(const std::string& file) {
    std::error_code ec;
    if (file.empty()) throw InputError(HR_MSG("onnx.no_file", "give the ONNX file to write (--onnx FILE)"), {});
    if (fs::is_directory(file, ec))
        throw InputError(HR_MSG("onnx.file_is_folder", "%1 is a folder; give a file name in it, such as %2"),
                         {file, (fs::path(file) / "model.onnx").string()});
    std::string ext = fs::path(file).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext != ".onnx")
        throw InputError(HR_MSG("onnx.extension", "%1 does not end in .onnx; give an ONNX file name (FILE.onnx), so "
                                                  "that no other file is replaced by mistake"),
                         {file});
    const fs::path folder = fs::path(file).parent_path();
    if (!folder.empty() && fs::exists(folder, ec) && !fs::is_directory(folder, ec))
        throw InputError(HR_MSG("onnx.folder_is_file", "%1 is a file, not a folder; give the ONNX file in a folder"),
                         {folder.string()});
    if (!folder.empty() && !fs::is_directory(folder, ec))
        throw InputError(HR_MSG("onnx.no_folder", "the folder %1 does not exist; create it or give a file in another "
                                                  "folder"),
                         {folder.string()});
}

}  // namespace

std::vector<std::string> onnx_layer_types() {
    std::vector<std::string> v;
    for (const auto& [type, _] : layer_mappings()) v.push_back(type);
    return v;
}

OnnxExportResult export_onnx(const std::string& run, const std::string& file, const CompressionOptions& what_if) {
    check_destination(file);
    // the run folder and its weights
    std::error_code ec;
    if (!fs::exists(run, ec))
        throw InputError(HR_MSG("onnx.no_run", "%1 does not exist; give a run folder or the model.safetensors inside "
                                               "one"),
                         {run});
    const bool is_dir = fs::is_directory(run, ec);
    const std::string weights = is_dir ? (fs::path(run) / "model.safetensors").string() : run;
    const std::string dir = is_dir ? run : fs::path(run).parent_path().string();
    if (!fs::is_regular_file(weights, ec))
        throw InputError(HR_MSG("onnx.no_weights", "%1 holds no model.safetensors; give a finished run's folder"),
                         {run});
    const std::string config_path = run_config_path(dir.empty() ? "." : dir);
    if (!fs::is_regular_file(config_path, ec))
        throw InputError(HR_MSG("onnx.no_config", "%1 is not in a run folder (no config.json beside it): ONNX export "
                                                  "needs the run's data for the input's normalisation"),
                         {weights});
    validate_compression(what_if);
    // the temporary file now, beside FILE: a folder that cannot be written to is found before the work; on any
    // error below it is removed and FILE is untouched
    AtomicFile out(file);
    SafeTensorsFile file_state = merge_lora_adapters(read_safetensors(weights), weights);
    const ModelSpec spec = model_spec_of(file_state, weights);
    check_exportable(spec);
    const TrainConfig config = read_run_config(dir.empty() ? "." : dir);
    const Normalisation norm = run_normalisation(config, spec, config_path);

    // the weights as the model computes with them: f32, a what-if applied
    auto ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be = make_backend("cpu", 1, ledger, false, nullptr);
    ModelOptions mo;
    mo.batch = 1;
    Model model(spec, *be, mo);
    load_model_state(model, file_state, weights);
    OnnxExportResult res;
    if (what_if.active()) {
        res.compression = compress_model_weights(model, what_if);
        res.compressed = true;
    }
    const SafeTensorsFile state = model_state_file(model);

    // the graph
    ox::Model m;
    m.ir_version = 8;  // ONNX 1.12's
    m.producer_name = "Headroom";
    m.producer_version = HEADROOM_VERSION;
    m.doc_string = spec.name + " trained by Headroom (docs/export.md)";
    m.opset = kOnnxOpset;
    ox::Graph& g = m.graph;
    g.name = spec.name;
    GraphBuilder b(g, state);
    b.set_report(validate_model_spec(spec));
    const std::string input_doc = norm.table
                                      ? "float32 (batch, features): the table's raw feature values in its column order"
                                      : "float32 (batch, C, H, W): pixel values on the [0, 1] scale (u8 / 255)";
    g.input.push_back(value_info("input", spec.input_shape, input_doc));
    // the normalisation, baked in: (input - mean) / std, as the run's loader computes it in float32
    std::string x;
    if (norm.table) {
        const Shape f{static_cast<std::int64_t>(norm.column_mean.size())};
        x = b.op("Sub", {"input", b.floats("normalisation.mean", f, norm.column_mean)}, "normalise");
        x = b.op("Div", {x, b.floats("normalisation.std", f, norm.column_std)}, "normalise");
    } else {
        x = b.op("Sub", {"input", b.scalar("normalisation.mean", norm.mean)}, "normalise");
        x = b.op("Div", {x, b.scalar("normalisation.std", norm.std)}, "normalise");
    }
    Shape shape = spec.input_shape;
    x = emit_sequence(b, spec.layers, "", x, shape);
    if (shape != Shape{spec.num_classes})
        throw Error("internal: ONNX export: the graph ends in " + shape_str(shape) + ", not the classes");
    b.add("Identity", {x}, "logits").output[0] = "logits";
    g.output.push_back(value_info("logits", {spec.num_classes}, "float32 (batch, classes): scores before softmax"));

    // metadata: what the input is, its normalisation, the classes
    auto meta = [&](const std::string& k, const std::string& v) { m.metadata_props.emplace_back(k, v); };
    meta("headroom.model", spec.name);
    meta("headroom.input", input_doc);
    if (norm.table) {
        meta("headroom.normalisation",
             "baked into the graph: each feature (x - mean) / std with the training rows' statistics "
             "(initializers normalisation.mean and normalisation.std)");
        meta("headroom.features", nlohmann::json(norm.feature_names).dump());
    } else {
        meta("headroom.normalisation", "baked into the graph: (input - " + number(norm.mean) + ") / " + number(norm.std));
    }
    meta("headroom.classes", nlohmann::json(norm.class_names).dump());
    if (res.compressed)
        meta("headroom.what_if", nlohmann::json{{"prune", what_if.prune}, {"quantize", quantize_name(what_if.bits)},
                                                {"group", what_if.group}}.dump());

    const std::string bytes = ox::serialize(m);
    if (bytes.size() > (std::size_t{1} << 31) - 1)
        throw InputError(HR_MSG("onnx.too_large", "'%1' is too large for one ONNX file (2 GiB: protobuf's limit)"),
                         {spec.name});
    out.write(bytes);
    out.commit();

    res.model = spec.name;
    res.bytes = bytes.size();
    res.nodes = static_cast<std::int64_t>(g.node.size());
    res.parameters = b.parameters();
    res.input_shape = spec.input_shape;
    res.classes = spec.num_classes;
    res.norm_mean = norm.mean;
    res.norm_std = norm.std;
    res.table = norm.table;
    return res;
}

}  // namespace hr
