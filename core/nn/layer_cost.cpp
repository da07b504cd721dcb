#include "nn/layer_cost.h"

#include <sstream>

namespace hr {

namespace {

double attr(const LayerSpec* l, const char* n) { return l ? layer_attr(*l, n) : 0.0; }

// attention on (T, C): the q/k/v and output projections, and the core (scores and weighted sum)
void attention(double T, double C, bool causal, LayerCost& c) {
    const double proj = 2 * T * C * 3 * C + 2 * T * C * C;
    const double core = (causal ? 0.5 : 1.0) * 4 * T * T * C;  // q k^T and p v
    c.forward += proj + core;
    // the backward recomputes the scores and forms dP, dQ, dK, dV: 5 products against 2 in forward
    c.backward += 2 * proj + 2.5 * core;
    c.attention_core += core;
}
void mlp(double T, double C, double F, LayerCost& c) {
    const double mm = 4 * T * C * F;
    c.forward += mm + 10 * T * F;
    c.backward += 2 * mm + 20 * T * F;  // and the GELU recomputed from its input
}
double hidden_or_4c(const LayerSpec* l, double C) { return attr(l, "hidden") == 0 ? 4 * C : attr(l, "hidden"); }

// LLaMA's block (transformer_layers.cpp): RMSNorm, grouped-query attention with RoPE, RMSNorm, SwiGLU
void llama_block(double T, const LayerSpec* l, LayerCost& c) {
    const double C = attr(l, "dim"), H = attr(l, "heads"), KV = attr(l, "kv_heads") == 0 ? H : attr(l, "kv_heads");
    const double D = attr(l, "head_dim") == 0 ? C / H : attr(l, "head_dim"), F = attr(l, "hidden");
    const double Q = H * D, K = KV * D;
    const double proj = 2 * T * C * (Q + 2 * K) + 2 * T * Q * C;
    const double core = 0.5 * 4 * T * T * Q;  // causal: q k^T and p v
    const double mm = 2 * T * C * F * 3;      // gate, up, down
    c.forward = proj + core + mm + 8 * T * F + 2 * 4 * T * C + 2 * T * C + 6 * T * (Q + K);  // SwiGLU, norms, sums, rope
    c.backward = 2 * proj + 2.5 * core + 2 * mm + 16 * T * F + 2 * 8 * T * C + 2 * T * C + 6 * T * (Q + K);
    c.attention_core += core;
    // kept output: everything up to gate and up; the SwiGLU, down_proj and the second sum only feed y
    c.recompute_kept = c.forward - (2 * T * F * C + 8 * T * F + T * C);
}

// the layers a transformer is built of; false for the others
bool transformer_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const std::string& t = r.type;
    const double out = static_cast<double>(shape_numel(r.output_shape));
    const double T = r.input_shape.empty() ? 1.0 : static_cast<double>(r.input_shape[0]);
    if (t == "token_embedding" || t == "position_embedding" || t == "class_token" || t == "class_token_pool") {
        c.forward = c.backward = out;
    } else if (t == "layernorm") {
        c.forward = 8 * out;
        c.backward = 16 * out;
    } else if (t == "rmsnorm") {
        c.forward = 4 * out;
        c.backward = 8 * out;
    } else if (t == "self_attention") {
        const double C = attr(l, "dim");
        attention(T, C, attr(l, "causal") != 0, c);
        // kept output: the q/k/v projection and the core (none of the core with selective recompute,
        // counted by the planner as attention_core); the output projection is skipped
        c.recompute_kept = c.forward - 2 * T * C * C;
    } else if (t == "mlp") {
        const double C = attr(l, "dim"), F = hidden_or_4c(l, C), rows = out / C;
        mlp(rows, C, F, c);
        c.recompute_kept = 2 * rows * C * F;  // the first projection only (its output is what backward reads)
    } else if (t == "transformer_block") {
        const double C = attr(l, "dim"), F = hidden_or_4c(l, C);
        attention(T, C, attr(l, "causal") != 0, c);
        mlp(T, C, F, c);
        c.forward += 2 * 8 * T * C + 2 * T * C;  // two LayerNorms, two residual additions
        c.backward += 2 * 16 * T * C + 2 * T * C;
        // kept output: everything up to the MLP's first projection; its GELU, output projection and the
        // second residual sum only feed the output (transformer_layers.cpp)
        c.recompute_kept = c.forward - (2 * T * F * C + 10 * T * F + T * C);
    } else if (t == "llama_block") {
        llama_block(T, l, c);
    } else if (t == "lm_head") {  // tied or not, it multiplies by the V x C weight
        c.forward = 2 * out * attr(l, "dim");
        c.backward = 2 * c.forward;
    } else if (t == "patch_embedding") {
        const double p = attr(l, "patch_size");
        c.forward = 2 * out * attr(l, "in_channels") * p * p;
        c.backward = 2 * c.forward;
    } else {
        return false;
    }
    return true;
}

// the other layers: a product per output element for convolutions and linear layers (backward: the weight's
// and the input's gradient), a few operations per element for the rest (backward as forward)
void plain_cost(const LayerReport& r, const LayerSpec* l, LayerCost& c) {
    const std::string& t = r.type;
    const double out = static_cast<double>(shape_numel(r.output_shape));
    double f = out;
    if (t == "conv2d" && l) {
        const double k = attr(l, "kernel_size");
        f = 2.0 * out * attr(l, "in_channels") * k * k;
    } else if (t == "linear" && l) {
        f = 2.0 * out * attr(l, "in_features");
    } else if (t == "batchnorm2d") {
        f = 8.0 * out;
    } else if (t == "gelu" || t == "tanh" || t == "sigmoid") {
        f = 10.0 * out;
    } else if (t == "maxpool2d" || t == "avgpool2d") {
        f = 4.0 * out;
    } else if (t == "flatten") {
        f = 0.0;
    }
    c.forward = f;
    c.backward = (t == "conv2d" || t == "linear") ? 2 * f : f;
}

}  // namespace

LayerCost layer_cost(const LayerReport& r, const LayerSpec* l) {
    LayerCost c;
    if (r.output_shape.empty() || !l || !transformer_cost(r, l, c)) plain_cost(r, l, c);
    if (c.recompute_kept == 0) c.recompute_kept = c.forward;  // nothing skipped: a forward
    return c;
}

const LayerSpec* layer_spec_at(const std::vector<LayerSpec>& layers, const std::string& path) {
    std::stringstream ss(path);
    std::string part;
    const std::vector<LayerSpec>* cur = &layers;
    const LayerSpec* found = nullptr;
    while (std::getline(ss, part, '.')) {
        if (part == "body" && found) {
            cur = &found->body;
            continue;
        }
        if (part == "shortcut" && found) {
            cur = &found->shortcut;
            continue;
        }
        std::size_t i = 0;
        try {
            i = std::stoul(part);
        } catch (const std::exception&) {
            return nullptr;
        }
        if (i >= cur->size()) return nullptr;
        found = &(*cur)[i];
    }
    return found;
}

}  // namespace hr
