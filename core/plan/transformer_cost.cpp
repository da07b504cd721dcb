#include "plan/transformer_cost.h"

#include <cmath>

namespace hr {

namespace {
double A(const LayerSpec& l, const char* n) { return layer_attr(l, n); }

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

TransformerLayerCost transformer_layer_cost(const LayerReport& r, const LayerSpec& l) {
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
        attention(T, A(l, "dim"), A(l, "causal") != 0, c);
    } else if (t == "mlp") {
        c.handled = true;
        const double C = A(l, "dim"), F = A(l, "hidden") == 0 ? 4 * C : A(l, "hidden");
        mlp(out / C, C, F, c);
    } else if (t == "transformer_block") {
        c.handled = true;
        const double C = A(l, "dim"), F = A(l, "hidden") == 0 ? 4 * C : A(l, "hidden");
        attention(T, C, A(l, "causal") != 0, c);
        mlp(T, C, F, c);
        c.forward += 2 * 8 * T * C + 2 * T * C;  // two LayerNorms, two residual additions
        c.backward += 2 * 16 * T * C + 2 * T * C;
    } else if (t == "lm_head") {
        c.handled = true;
        c.forward = 2 * out * A(l, "dim");
        c.backward = 2 * c.forward;
    } else if (t == "patch_embedding") {
        c.handled = true;
        const double p = A(l, "patch_size");
        c.forward = 2 * out * A(l, "in_channels") * p * p;
        c.backward = 2 * c.forward;
    }
    return c;
}

}  // namespace hr
