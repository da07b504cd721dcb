#pragma once
// The cost model: FLOPs of one layer per sample (multiply-adds count 2), the one count the planner's step
// timeline and the pipeline balancer (--pipeline K, strategy/pipeline.h) both read, so a stage split and
// the time the plan shows for it agree. Causal attention counts the work the kernels do: the scores below
// the diagonal. A layer's own work only: a residual block's row is its sum (its layers have their rows).
// Each type's count is its registry entry's (nn/layer_registry.h).
#include <string>
#include <vector>

#include "nn/model_spec.h"

namespace hr {

struct LayerCost {
    double forward = 0;         // one forward
    double backward = 0;        // one backward (weight and input gradients)
    double attention_core = 0;  // the part selective recompute (--checkpoint attention) repeats in backward
    // A recompute of the layer when its output is kept (the last layer of a checkpointed block:
    // LayerIO::recompute_output false) stops at what its backward reads, so it costs at most `forward`.
    double recompute_kept = 0;
};

// `r` gives the layer's per-sample input and output shapes (analyze_model_spec); `layer` its attributes
// (nullptr: the counts that need none).
LayerCost layer_cost(const LayerReport& r, const LayerSpec* layer);

// The spec of the layer at a report's path ("3", "4.body.1", "4.shortcut.0"); nullptr when there is none.
const LayerSpec* layer_spec_at(const std::vector<LayerSpec>& layers, const std::string& path);

}  // namespace hr
