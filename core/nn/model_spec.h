#pragma once
// The model spec: a JSON description of a graph of layers (docs/model-spec.md), its shape inference
// and the presets. Everything here is cheap and never touches a backend, so the GUI calls it on
// every edit.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/message.h"
#include "base/shape.h"

namespace hr {

// ---- limits (docs/model-spec.md, "Limits") -----------------------------------------------------------
// What a spec may describe, so that every size derived from it (and the planner's products with a
// batch of up to 2^24 samples) fits in 64 bits. Parsing and analysis both enforce them.
constexpr int kMaxResidualDepth = 64;                            // residual blocks inside residual blocks
constexpr std::int64_t kMaxLayers = 10'000;                      // all layers, nested ones included
constexpr std::int64_t kMaxSampleElements = std::int64_t{1} << 31;  // any tensor of one sample (8 GiB f32)
// trainable parameters, per layer and in all (~1.1 trillion: Llama 3.1 405B plans with room to spare). Planning
// counts bytes on counting allocators and never allocates per parameter; a run that asks for more memory than
// the machine has fails at its allocation with the out-of-memory report.
constexpr std::int64_t kMaxParams = std::int64_t{1} << 40;
constexpr std::int64_t kMaxActivationBytesPerSample = std::int64_t{1} << 38;  // saved for backward (256 GiB)
constexpr int kMaxClasses = 1 << 24;                             // num_classes
constexpr std::uintmax_t kMaxSpecFileBytes = 64u << 20;          // a model spec file (64 MiB)

struct LayerSpec {
    std::string type;                 // "conv2d", "linear", "relu", ..., "residual"
    std::string name;                 // optional label shown in tools; not used for state_dict names
    nlohmann::json attrs = nlohmann::json::object();  // type-specific attributes (see layer_catalog())
    std::vector<LayerSpec> body;      // residual only: the branch whose output is added to the input
    std::vector<LayerSpec> shortcut;  // residual only, optional: projection applied to the input first

    bool operator==(const LayerSpec& o) const;
};

struct LossSpec {
    std::string type = "cross_entropy";  // "cross_entropy" or "mse"
    double label_smoothing = 0.0;         // cross_entropy only
    bool operator==(const LossSpec& o) const {
        return type == o.type && label_smoothing == o.label_smoothing;
    }
};

struct ModelSpec {
    std::string name = "model";
    Shape input_shape{1, 28, 28};  // per sample: (C, H, W)
    int num_classes = 10;
    std::vector<LayerSpec> layers;
    LossSpec loss;
    bool operator==(const ModelSpec& o) const;
};

// JSON <-> spec. Parsing checks structure and attribute types and throws InputError naming the
// layer ("layers[3] (conv2d): attribute 'kernel_size' must be a positive integer, got -1").
ModelSpec model_spec_from_json(const nlohmann::json& j);
nlohmann::json model_spec_to_json(const ModelSpec& spec);
ModelSpec load_model_spec(const std::string& path);        // InputError on unreadable / invalid file
void save_model_spec(const ModelSpec& spec, const std::string& path);  // atomic (temp file + rename)

// ---- shape inference ------------------------------------------------------------------------------
struct LayerReport {
    int index = -1;             // depth-first index of the layer in the graph (ledger layer id)
    int depth = 0;              // 0 top level, 1 inside a residual block, ...
    std::string path;           // PyTorch state_dict prefix: "3", "4.body.1", "4.shortcut.0"
    std::string type;
    std::string label;          // "conv2d(1→10, k5)"-style summary
    Shape input_shape;          // per sample
    Shape output_shape;         // per sample; empty when inference stopped before this layer
    std::int64_t params = 0;    // trainable parameters
    std::int64_t activation_bytes_per_sample = 0;  // bytes this layer keeps for backward per sample (f32)
    std::string error;          // non-empty on the offending layer
    Message message;            // the same error as a translatable message (widgets/text/CoreText.h)
};

struct SpecReport {
    bool ok = false;
    std::string error;          // the first error, with the layer named, and a hint
    Message error_message;      // the same, translatable (id + template + arguments; base/message.h)
    int error_layer = -1;       // index into layers of the offending layer, -1 for model-level errors
    std::vector<LayerReport> layers;  // every layer, residual blocks included (their own row)
    std::int64_t total_params = 0;
    std::int64_t activation_bytes_per_sample = 0;
    Shape output_shape;
};

// Never throws for model errors: they land in the report (for the GUI).
SpecReport analyze_model_spec(const ModelSpec& spec);
// The same report, shared with the per-thread cache of the last few specs (no copy; never null).
std::shared_ptr<const SpecReport> analyze_model_spec_shared(const ModelSpec& spec);
// Throws InputError with report.error when the spec is invalid.
SpecReport validate_model_spec(const ModelSpec& spec);
// The same for a pipeline stage whose output goes to the next stage: its end is not checked against the
// loss (the classes); every layer is.
SpecReport validate_model_stage(const ModelSpec& spec);

// ---- checkpoint blocks ------------------------------------------------------------------------------
// The units of activation checkpointing: blocks start at a top-level residual block or a layer with
// weights (conv2d, linear) and take the weight-free layers after it (BatchNorm, activation, pooling,
// dropout, flatten). A checkpointed block
// keeps only its input and its output; backward recomputes everything inside it.
struct CheckpointBlock {
    int first = 0;      // top-level layer index (spec.layers[first])
    int last = 0;       // inclusive
    std::string label;  // "0-2 conv2d(1→10, k5) …" / "3 residual(5 layers)"
};
// A ReLU directly after a layer of this type (in the same sequence) runs in place: it overwrites the
// layer's output, which that layer's backward does not read (conv2d, linear, batchnorm2d, pooling,
// dropout, a residual block's sum), so it keeps no activation of its own. The model (nn/model.cpp)
// and the spec report's activation bytes follow this rule.
bool relu_in_place_after(const std::string& producer_type);

std::vector<CheckpointBlock> checkpoint_blocks(const ModelSpec& spec);
// The same from the spec's report (analyze_model_spec(spec)'s, or a stage's), without asking for it again.
std::vector<CheckpointBlock> checkpoint_blocks(const ModelSpec& spec, const SpecReport& report);
// checkpoint_blocks(spec).size(), from the layers' types alone (no report, no labels)
int checkpoint_block_count(const ModelSpec& spec);

// ---- presets ----------------------------------------------------------------------------------------
// image models (seed-cnn, mlp, lenet5, resnet-mini, vit-tiny, resnet20) and tabular-mlp for tables
std::vector<std::string> preset_names();
// The input a preset is drawn for when no data says otherwise: resnet20 CIFAR-10's (3, 32, 32), the others
// Fashion-MNIST's (1, 28, 28). The front ends build a preset for the data's own sample shape and classes.
Shape preset_input_shape(const std::string& name);
// Language models (token inputs, text data): gpt-tiny, gpt-char, gpt2-124m, gpt2-350m, gpt2-774m, gpt2-1.5b.
std::vector<std::string> language_model_preset_names();
// input_shape: the data's sample shape ((1, 28, 28) for MNIST-like data, (3, 32, 32) for CIFAR-10, (F) for a
// table with tabular-mlp); empty: preset_input_shape(name). The language-model presets ignore input_shape and
// num_classes (their input is [T], their classes the vocabulary; see apply_sequence_length /
// resize_vocabulary in nn/transformer_spec.h).
ModelSpec preset_model(const std::string& name, const Shape& input_shape = {}, int num_classes = 10);
std::string preset_description(const std::string& name);

// ---- the layer catalog (for builders and docs) ------------------------------------------------------
struct AttrInfo {
    enum class Kind { integer, real, boolean };
    std::string name;
    Kind kind = Kind::integer;
    double default_value = 0;
    double min = 0;
    double max = 1e9;
    bool required = false;   // must be given (no sensible default), e.g. out_channels
    TableText help;          // HR_MSG("layer.<type>.<attr>", ...): translated by app/
};

struct LayerTypeInfo {
    std::string type;          // "conv2d"
    std::string display_name;  // "Conv2d"
    std::string group;         // convolution, pooling, linear, activation, normalisation, regularisation, structure, loss
    TableText help;            // one line; HR_MSG("layer.<type>", ...): translated by app/
    std::vector<AttrInfo> attrs;
};

const std::vector<LayerTypeInfo>& layer_catalog();
const LayerTypeInfo* find_layer_type(const std::string& type);  // nullptr when unknown
// A LayerSpec of `type` with its default attributes filled in (InputError for an unknown type).
LayerSpec default_layer(const std::string& type);
// Reads an attribute with its catalog default.
double layer_attr(const LayerSpec& layer, const std::string& name);

}  // namespace hr
