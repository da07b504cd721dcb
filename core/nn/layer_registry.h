#pragma once
// The layer registry (DESIGN 13, issue 59): one entry per layer type, holding everything the rest of the
// program asks about the type, so that adding a layer is one entry, its kernels and its tests:
// - `info`: its name, palette group, translated description and attributes with their ranges and
//   defaults (the builder's palette and the parser read them: layer_catalog()),
// - `shape`: its shape rules and checks, its parameter count and the bytes it keeps for backward per
//   sample (analyze_model_spec reads them; the planner multiplies them by the batch),
// - `cost`: its FLOPs (layer_cost, nn/layer_cost.h: the planner's step timeline and the pipeline balancer),
// - `make`: the layer that trains it (Model builds its graph with it),
// - `lora_target`: whether LoRA puts adapters on it (nn/model.h).
// Checkpoint names are the layer's own ParamDecl names under the model's prefixes (state_dict_prefixes,
// transformer_spec.h, which gives the GPT and LLaMA layouts nanoGPT's and Hugging Face's names).
// A residual block is the one structural type: its entry describes it, the walkers (analysis, Model)
// recurse into its body themselves.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/message.h"
#include "nn/layer_cost.h"
#include "nn/model_spec.h"

namespace hr {

class Layer;
struct LayerOptions;

// What a type's shape rule is given: the layer, its per-sample input, its path ("3", "4.body.1") and the
// whole spec (a tied head looks at the token embedding).
struct LayerShapeInput {
    const LayerSpec& layer;
    const Shape& in;
    const std::string& path;
    const ModelSpec& spec;
    std::int64_t attr(const char* name) const;  // an integer attribute with its catalog default
};

// A type's shape rule's answer. On a misfit `failed`, with the message: a template whose %1 and %2 are the
// layer's path and type (the analysis fills them in front of `args`), or plain English after "layer P (type): ".
struct LayerShape {
    Shape out;                       // per sample
    std::int64_t params = 0;         // trainable parameters
    std::int64_t saved_bytes = 0;    // kept for backward per sample (f32) besides the output
    bool output_is_view = false;     // its output is a view of its input (flatten): no bytes of its own
    bool saves_indices = false;      // keeps one i32 index per output element (maxpool2d)
    bool params_over_limit = false;  // more than kMaxParams parameters
    std::string label;               // "conv2d(1→10, k5)"
    bool failed = false;
    MessageText error_text;          // the template (error_plain empty)
    std::vector<std::string> error_args;
    std::string error_plain;

    LayerShape& fail(MessageText t, std::vector<std::string> args = {}) {
        failed = true;
        error_text = t;
        error_args = std::move(args);
        return *this;
    }
    LayerShape& fail(std::string plain) {
        failed = true;
        error_plain = std::move(plain);
        return *this;
    }
};

using LayerShapeRule = LayerShape (*)(const LayerShapeInput&);
// FLOPs per sample: fills forward, backward and, where the type has them, attention_core and recompute_kept
// (left 0: a recompute is a forward). `layer` may be null (a report without its spec).
using LayerCostRule = void (*)(const LayerReport& r, const LayerSpec* layer, LayerCost& c);
using LayerMaker = std::unique_ptr<Layer> (*)(const LayerSpec& spec, const LayerOptions& options);

struct LayerEntry {
    LayerTypeInfo info;
    LayerShapeRule shape = nullptr;  // null: residual (the walker's) and the losses
    LayerCostRule cost = nullptr;    // null: a few operations per output element, backward as forward
    LayerMaker make = nullptr;       // null: residual and the losses
    bool lora_target = false;
};

// Every entry, in the palette's order (layer types, then the losses); the entry of `type` or nullptr.
const std::vector<LayerEntry>& layer_registry();
const LayerEntry* layer_entry(const std::string& type);

// The entries each file defines, in order (layer_registry.cpp joins them).
std::vector<LayerEntry> image_layer_entries();        // nn/layers.cpp's types, residual, the losses' neighbours
std::vector<LayerEntry> transformer_layer_entries();  // nn/transformer_layers.cpp's types
std::vector<LayerEntry> loss_entries();

}  // namespace hr
