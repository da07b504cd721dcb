#include "plan/transformer_cost.h"

#include <cmath>

namespace hr {

namespace {
double cost_attr(const LayerSpec& l, const char* n) { return layer_attr(l, n); }

// attention on (T, C): the q/k/v and output projections, and the core (scores and weighted sum)
void attention(double T, double C, bool causal, TransformerLayerCost& c) {
    const double proj = 2 * T * C * 3 * C + 2 * T * C * C;
    const double core = (causal ? 0.5 : 1.0) * 4 * T * T * C;  // q k^T and p v
    c.forward += proj + core;
    // the backward recomputes the scores and forms dP, dQ, dK, dV: 5 products against 2 in forward
    c.backward += 2 * proj + 2.5 * core;
    c.attention_core += core;
}
void mlp(double T, double C, double F, TransformerLayerCost& c) {
    const double mm = 4 * T * C * F;
    c.forward += mm + 10 * T * F;
    c.backward += 2 * mm + 20 * T * F;  // and the GELU recomputed from its input
}
}  // namespace

namespace {
TransformerLayerCost layer_cost(const LayerReport& r, const LayerSpec& l) {
    TransformerLayerCost c;
    const std::string& t = r.type;
    if (r.output_shape.empty()) return c;
    const double out = static_cast<double>(shape_numel(r.output_shape));
    const double T = r.input_shape.empty() ? 1.0 : static_cast<double>(r.input_shape[0]);
    if (t == "token_embedding" || t == "position_embedding" || t == "class_token" || t == "class_token_pool") {
        c.handled = true;
        c.forward = out;
        c.backward = out;
    } else if (t == "layernorm") {
        c.handled = true;
        c.forward = 8 * out;
        c.backward = 16 * out;
    } else if (t == "self_attention") {
        c.handled = true;
        const double C = cost_attr(l, "dim");
        attention(T, C, cost_attr(l, "causal") != 0, c);
        // kept output: the q/k/v projection and the core (none of the core with selective recompute,
        // counted by the planner as attention_core); the output projection is skipped
        c.recompute_kept = c.forward - 2 * T * C * C;
    } else if (t == "mlp") {
        c.handled = true;
        const double C = cost_attr(l, "dim"), F = cost_attr(l, "hidden") == 0 ? 4 * C : cost_attr(l, "hidden");
        const double rows = out / C;
        mlp(rows, C, F, c);
        c.recompute_kept = 2 * rows * C * F;  // the first projection only (its output is what backward reads)
    } else if (t == "transformer_block") {
        c.handled = true;
        const double C = cost_attr(l, "dim"), F = cost_attr(l, "hidden") == 0 ? 4 * C : cost_attr(l, "hidden");
        attention(T, C, cost_attr(l, "causal") != 0, c);
        mlp(T, C, F, c);
        c.forward += 2 * 8 * T * C + 2 * T * C;  // two LayerNorms, two residual additions
        c.backward += 2 * 16 * T * C + 2 * T * C;
        // kept output: everything up to the MLP's first projection; its GELU, output projection and the
        // second residual sum only feed the output (transformer_layers.cpp)
        c.recompute_kept = c.forward - (2 * T * F * C + 10 * T * F + T * C);
    } else if (t == "rmsnorm") {
        c.handled = true;
        c.forward = 4 * out;
        c.backward = 8 * out;
    } else if (t == "llama_block") {
        c.handled = true;
        const double C = cost_attr(l, "dim"), H = cost_attr(l, "heads"), KV = cost_attr(l, "kv_heads") == 0 ? H : cost_attr(l, "kv_heads");
        const double D = cost_attr(l, "head_dim") == 0 ? C / H : cost_attr(l, "head_dim"), F = cost_attr(l, "hidden");
        const double Q = H * D, K = KV * D;
        const double proj = 2 * T * C * (Q + 2 * K) + 2 * T * Q * C;
        const double core = 0.5 * 4 * T * T * Q;  // causal: q k^T and p v
        const double mm = 2 * T * C * F * 3;      // gate, up, down
        c.forward = proj + core + mm + 8 * T * F + 2 * 4 * T * C + 2 * T * C + 6 * T * (Q + K);  // SwiGLU, norms, sums, rope
        c.backward = 2 * proj + 2.5 * core + 2 * mm + 16 * T * F + 2 * 8 * T * C + 2 * T * C + 6 * T * (Q + K);
        c.attention_core += core;
        // kept output: everything up to gate and up; the SwiGLU, down_proj and the second sum only feed y
        c.recompute_kept = c.forward - (2 * T * F * C + 8 * T * F + T * C);
    } else if (t == "lm_head") {
        c.handled = true;
        c.forward = 2 * out * cost_attr(l, "dim");
        c.backward = 2 * c.forward;
    } else if (t == "patch_embedding") {
        c.handled = true;
        const double p = cost_attr(l, "patch_size");
        c.forward = 2 * out * cost_attr(l, "in_channels") * p * p;
        c.backward = 2 * c.forward;
    }
    return c;
}

}  // namespace

TransformerLayerCost transformer_layer_cost(const LayerReport& r, const LayerSpec& l) {
    TransformerLayerCost c = layer_cost(r, l);
    if (c.handled && c.recompute_kept == 0) c.recompute_kept = c.forward;  // nothing skipped: a forward
    return c;
}

}  // namespace hr
