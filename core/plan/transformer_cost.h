#pragma once
// FLOPs of the transformer layer types per sample, for the planner's step-time estimate (multiply-adds
// count 2). Causal attention counts the work the kernels do: the scores below the diagonal.
#include "nn/model_spec.h"

namespace hr {

struct TransformerLayerCost {
    bool handled = false;
    double forward = 0;         // one forward
    double backward = 0;        // one backward (weight and input gradients)
    double attention_core = 0;  // the part selective recompute (--checkpoint attention) repeats in backward
    // A recompute of the layer when its output is kept (the last layer of a checkpointed block:
    // LayerIO::recompute_output false) stops at what its backward reads, so it costs less than `forward`.
    double recompute_kept = 0;
};

// `r` gives the layer's per-sample input and output shapes (analyze_model_spec).
TransformerLayerCost transformer_layer_cost(const LayerReport& r, const LayerSpec& layer);

}  // namespace hr
