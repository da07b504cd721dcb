// Model specs: shape inference, parameter and activation counts, the checks of validate_model_spec, and
// the blocks activation checkpointing may recompute.
#include "nn/model_spec.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <sstream>
#include <utility>

#include "base/checked_math.h"
#include "base/window_size.h"
#include "base/error.h"
#include "nn/model_spec_detail.h"
#include "nn/layer_registry.h"
#include "nn/transformer_spec.h"

namespace hr {

using json = nlohmann::json;
using AK = AttrInfo::Kind;

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

    // The attributes against the ranges of the type's registry entry
    bool attrs_in_range(const LayerSpec& l, const LayerTypeInfo& info, LayerReport& r) {
        for (const auto& a : info.attrs) {
            const double v = layer_attr(l, a.name);
            if (v >= a.min && v <= a.max) continue;
            char lo[32], hi[32], got[32];
            std::snprintf(lo, sizeof lo, "%g", a.min);
            std::snprintf(hi, sizeof hi, "%g", a.max);
            std::snprintf(got, sizeof got, "%g", v);
            fail(r, HR_MSG("spec.attr_out_of_range", "layer %1 (%2): attribute '%3' must be between %4 and %5, got %6"),
                 {a.name, lo, hi, got});
            return false;
        }
        return true;
    }

    // A residual block: its body and shortcut walked (their rows after its own), their outputs matched.
    // Failures are reported where they happen; the answer is then failed with no message of its own.
    LayerShape residual(const LayerSpec& l, const std::string& path, const Shape& in, int depth, std::size_t pos) {
        LayerShape s;
        char label[128];
        std::snprintf(label, sizeof label, "residual(%zu layers%s)", l.body.size(), l.shortcut.empty() ? "" : ", projection");
        s.label = label;
        rep.layers[pos].label = label;
        s.failed = true;
        Shape b = run_seq(l.body, path + ".body", in, depth + 1);
        if (b.empty()) return s;
        Shape sc = in;
        if (!l.shortcut.empty()) {
            sc = run_seq(l.shortcut, path + ".shortcut", in, depth + 1);
            if (sc.empty()) return s;
        }
        if (b != sc) {
            if (l.shortcut.empty())
                return s.fail(HR_MSG("spec.residual_identity", "layer %1 (%2): body gives %3 but the identity shortcut "
                                                               "gives %4; they must match to be added: keep channels and "
                                                               "size equal in the body or add a shortcut projection (1x1 "
                                                               "conv2d)"),
                              {batch_shape(b), batch_shape(sc)});
            return s.fail(HR_MSG("spec.residual_shortcut", "layer %1 (%2): body gives %3 but the shortcut gives %4; "
                                                           "they must match to be added: keep channels and size equal "
                                                           "in the body and the shortcut"),
                          {batch_shape(b), batch_shape(sc)});
        }
        s.failed = false;
        s.out = b;
        return s;
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
        const LayerEntry* entry = layer_entry(t);
        if (!entry || (!entry->shape && t != "residual")) {  // (a loss is no layer)
            fail(R(), HR_MSG("spec.layer_unknown", "layer %1 (%2): unknown layer type; use one of %3"), {known_layer_types()});
            return {};
        }
        if (!attrs_in_range(l, entry->info, R())) return {};
        // the type's shape rules, parameters and saved bytes (its registry entry); a residual block's are the walk's
        LayerShape s = t == "residual" ? residual(l, path, in, depth, pos) : entry->shape({l, in, path, *spec});
        if (s.failed || s.params_over_limit) {
            if (s.params_over_limit)
                fail(R(), HR_MSG("spec.layer_params_limit", "layer %1 (%2): has more than %3 parameters (see "
                                                            "docs/model-spec.md, Limits); make it smaller"),
                     {std::to_string(kMaxParams)});
            else if (!s.error_plain.empty())
                fail(R(), s.error_plain);
            else if (s.error_text.text[0])
                fail(R(), s.error_text, s.error_args);
            R().label = s.label;
            return {};
        }
        const Shape& out = s.out;
        std::int64_t extra_bytes = s.saved_bytes;  // saved besides the output (per sample)
        const std::string& label = s.label;
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
        if (s.saves_indices) extra_bytes = elements * 4;  // i32 indices, one per output element
        r.output_shape = out;
        r.params = s.params;
        r.activation_bytes_per_sample = (s.output_is_view ? 0 : elements * 4) + extra_bytes;
        if (t != "residual") params_so_far += s.params;  // its children are counted
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

namespace {

SpecReport analyze_model_spec_uncached(const ModelSpec& spec);

// The last few specs analysed on this thread and their reports. The planner's search builds hundreds of
// training states of one spec (each model, its strategy and its checkpoint blocks ask for the report), and the
// analysis is a pure function of the spec: a spec equal to one analysed before gets the same report, shared
// (analyze_model_spec_shared) or copied (analyze_model_spec).
struct SpecReportCache {
    static constexpr std::size_t kEntries = 8;
    std::deque<std::pair<ModelSpec, std::shared_ptr<const SpecReport>>> entries;  // most recent first

    std::shared_ptr<const SpecReport> get(const ModelSpec& spec) {
        for (auto it = entries.begin(); it != entries.end(); ++it)
            if (it->first == spec) {
                if (it != entries.begin()) {
                    auto hit = std::move(*it);
                    entries.erase(it);
                    entries.push_front(std::move(hit));
                }
                return entries.front().second;
            }
        auto r = std::make_shared<const SpecReport>(analyze_model_spec_uncached(spec));
        entries.emplace_front(spec, r);
        if (entries.size() > kEntries) entries.pop_back();
        return r;
    }
};

}  // namespace

std::shared_ptr<const SpecReport> analyze_model_spec_shared(const ModelSpec& spec) {
    thread_local SpecReportCache cache;
    return cache.get(spec);
}

SpecReport analyze_model_spec(const ModelSpec& spec) { return *analyze_model_spec_shared(spec); }

namespace {

SpecReport analyze_model_spec_uncached(const ModelSpec& spec) {
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

}  // namespace

SpecReport validate_model_spec(const ModelSpec& spec) {
    SpecReport r = analyze_model_spec(spec);
    if (!r.ok) throw InputError(r.error_message);
    return r;
}

SpecReport validate_model_stage(const ModelSpec& spec) {
    SpecReport r = analyze_model_spec(spec);
    const std::string& id = r.error_message.id;
    const bool end_only = id == "spec.end_shape" || id == "spec.end_classes" || id == "spec.lm_end_shape" ||
                          id == "spec.lm_end_vocab";
    if (!r.ok && end_only && r.error_layer == static_cast<int>(r.layers.size()) - 1) {
        r.ok = true;
        r.error.clear();
        r.error_message = Message();
        r.error_layer = -1;
        r.layers.back().error.clear();
        r.layers.back().message = Message();
    }
    if (!r.ok) throw InputError(r.error_message);
    return r;
}

// ---------------------------------------------------------------------------------------------------
// checkpoint blocks

bool relu_in_place_after(const std::string& t) {
    return t == "conv2d" || t == "linear" || t == "batchnorm2d" || t == "maxpool2d" || t == "avgpool2d" ||
           t == "dropout" || t == "residual";
}

namespace {
// A layer that starts a checkpoint block (the layers after it up to the next such join its block).
bool starts_checkpoint_block(const std::string& t) {
    return t == "conv2d" || t == "linear" || t == "residual" || t == "transformer_block" || t == "llama_block" ||
           t == "token_embedding" || t == "patch_embedding" || t == "self_attention" || t == "mlp" || t == "lm_head";
}
}  // namespace

int checkpoint_block_count(const ModelSpec& spec) {
    int n = 0;
    for (const LayerSpec& l : spec.layers)
        if (n == 0 || starts_checkpoint_block(l.type)) ++n;
    return n;
}

std::vector<CheckpointBlock> checkpoint_blocks(const ModelSpec& spec) {
    return checkpoint_blocks(spec, *analyze_model_spec_shared(spec));
}

std::vector<CheckpointBlock> checkpoint_blocks(const ModelSpec& spec, const SpecReport& rep) {
    std::vector<CheckpointBlock> blocks;
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
        if (blocks.empty() || starts_checkpoint_block(spec.layers[i].type)) {
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

}  // namespace hr
