#include "strategy/pipeline.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "base/error.h"
#include "nn/layer_cost.h"

namespace hr {

namespace {

int top_of(const std::string& path) { return std::stoi(path.substr(0, path.find('.'))); }

// The spec's report, shared with analyze_model_spec's cache (no copy); InputError when the spec is invalid.
std::shared_ptr<const SpecReport> valid_report(const ModelSpec& spec) {
    std::shared_ptr<const SpecReport> rep = analyze_model_spec_shared(spec);
    if (!rep->ok) throw InputError(rep->error_message);
    return rep;
}

}  // namespace

std::string PipelineSplit::text() const {
    std::string t;
    for (int s = 0; s < stages(); ++s) t += (s ? "," : "") + std::to_string(layers(s));
    return t;
}

std::vector<double> pipeline_layer_costs(const ModelSpec& spec, bool by_time, std::int64_t batch) {
    const std::shared_ptr<const SpecReport> shared = valid_report(spec);
    const SpecReport& rep = *shared;
    std::vector<double> cost(spec.layers.size(), 0.0);
    for (const LayerReport& r : rep.layers) {
        if (r.type == "residual") continue;  // its layers are counted (as in the planner's step time)
        const std::size_t top = static_cast<std::size_t>(top_of(r.path));
        if (by_time) {
            // forward and backward FLOPs per sample: the planner's count (nn/layer_cost.h), attention's T^2
            // included in every layer that has it (self_attention, transformer_block, llama_block)
            const LayerCost c = layer_cost(r, layer_spec_at(spec.layers, r.path));
            cost[top] += c.forward + c.backward;
            continue;
        }
        // a head tied to the token embedding has no parameters of its own, but in any stage but the
        // embedding's it holds a copy of the V x C weight (pipeline_copies_tied_head): it weighs what an
        // untied head weighs
        std::int64_t params = r.params;
        if (r.type == "lm_head" && r.depth == 0 && top > 0 && spec.layers[top].attrs.value("tied", true) &&
            !r.input_shape.empty() && !r.output_shape.empty())
            params = r.input_shape.back() * r.output_shape.back();
        // bytes: parameters, gradients and Adam's two moments in f32, and the activations of the batch
        cost[top] += 16.0 * static_cast<double>(params) +
                     static_cast<double>(r.activation_bytes_per_sample) * static_cast<double>(batch);
    }
    return cost;
}

PipelineSplit pipeline_balanced_split(const ModelSpec& spec, int stages, bool by_time, std::int64_t batch) {
    const std::vector<double> c = pipeline_layer_costs(spec, by_time, batch);
    const int L = static_cast<int>(c.size());
    if (stages < 1 || stages > L)
        throw InputError(HR_MSG("pipeline.too_many_stages",
                                "--pipeline %1: the model has %2 top-level layers, fewer than the stages; use at most "
                                "%2 stages"),
                         {std::to_string(stages), std::to_string(L)});
    std::vector<double> prefix(static_cast<std::size_t>(L) + 1, 0.0);
    for (int i = 0; i < L; ++i) prefix[static_cast<std::size_t>(i) + 1] = prefix[static_cast<std::size_t>(i)] + c[static_cast<std::size_t>(i)];
    auto span = [&](int a, int b) { return prefix[static_cast<std::size_t>(b)] - prefix[static_cast<std::size_t>(a)]; };
    // best[k][i]: the smallest largest stage cost of the first i layers in k stages; from[k][i] its last cut
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::vector<double>> best(static_cast<std::size_t>(stages) + 1, std::vector<double>(static_cast<std::size_t>(L) + 1, inf));
    std::vector<std::vector<int>> from(static_cast<std::size_t>(stages) + 1, std::vector<int>(static_cast<std::size_t>(L) + 1, 0));
    best[0][0] = 0;
    for (int k = 1; k <= stages; ++k)
        for (int i = k; i <= L; ++i)
            for (int j = k - 1; j < i; ++j) {
                const double v = std::max(best[static_cast<std::size_t>(k) - 1][static_cast<std::size_t>(j)], span(j, i));
                // ties: the earlier cut (later stages get the layers, as Megatron's even split does)
                if (v < best[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)]) {
                    best[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] = v;
                    from[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] = j;
                }
            }
    PipelineSplit sp;
    sp.first.assign(static_cast<std::size_t>(stages) + 1, 0);
    sp.first[static_cast<std::size_t>(stages)] = L;
    for (int k = stages, i = L; k > 0; --k) {
        i = from[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
        sp.first[static_cast<std::size_t>(k) - 1] = i;
    }
    return sp;
}

PipelineSplit pipeline_split(const ModelSpec& spec, int stages, const std::vector<int>& counts) {
    if (counts.empty()) return pipeline_balanced_split(spec, stages, true);
    const int L = static_cast<int>(spec.layers.size());
    if (static_cast<int>(counts.size()) != stages)
        throw InputError(HR_MSG("pipeline.split_count", "--pipeline-split lists %1 stages but --pipeline is %2; give "
                                                        "one layer count per stage"),
                         {std::to_string(counts.size()), std::to_string(stages)});
    PipelineSplit sp;
    sp.first.push_back(0);
    for (int n : counts) {
        if (n < 1)
            throw InputError(HR_MSG("pipeline.split_empty", "--pipeline-split: every stage needs at least one layer"));
        sp.first.push_back(sp.first.back() + n);
    }
    if (sp.first.back() != L)
        throw InputError(HR_MSG("pipeline.split_sum", "--pipeline-split adds up to %1 layers but the model has %2 "
                                                      "top-level layers; make them agree"),
                         {std::to_string(sp.first.back()), std::to_string(L)});
    return sp;
}

ModelSpec pipeline_stage_spec(const ModelSpec& spec, const PipelineSplit& split, int stage) {
    const int a = split.first[static_cast<std::size_t>(stage)], b = split.first[static_cast<std::size_t>(stage) + 1];
    ModelSpec s;  // the spec's fields with the stage's layers only (a copy of every layer was most of its cost)
    s.name = spec.name + " (stage " + std::to_string(stage) + ")";
    s.input_shape = spec.input_shape;
    s.num_classes = spec.num_classes;
    s.loss = spec.loss;
    s.layers.assign(spec.layers.begin() + a, spec.layers.begin() + b);
    // a head tied to the token embedding, in a later stage than the embedding's: that stage holds a copy
    // of the weight (its own parameter; the two stages sum their gradients, pipeline_copies_tied_head)
    if (pipeline_copies_tied_head(spec, split, stage))
        for (LayerSpec& l : s.layers)
            if (l.type == "lm_head") l.attrs["tied"] = false;
    if (stage > 0) s.input_shape = pipeline_layer_output(spec, a - 1);
    return s;
}

bool pipeline_copies_tied_head(const ModelSpec& spec, const PipelineSplit& split, int stage) {
    if (stage <= 0 || split.stages() < 2) return false;  // stage 0 holds the token embedding itself
    const int a = split.first[static_cast<std::size_t>(stage)], b = split.first[static_cast<std::size_t>(stage) + 1];
    for (int i = a; i < b; ++i) {
        const LayerSpec& l = spec.layers[static_cast<std::size_t>(i)];
        if (l.type == "lm_head" && l.attrs.value("tied", true)) return true;
    }
    return false;
}

bool pipeline_has_tied_head(const ModelSpec& spec) {
    for (const LayerSpec& l : spec.layers)
        if (l.type == "lm_head" && l.attrs.value("tied", true)) return true;
    return false;
}

Shape pipeline_layer_output(const ModelSpec& spec, int layer) {
    const std::shared_ptr<const SpecReport> rep = valid_report(spec);
    const std::string path = std::to_string(layer);
    for (const LayerReport& r : rep->layers)
        if (r.path == path) return r.output_shape;
    throw Error("internal: the model has no top-level layer " + std::to_string(layer));
}

int pipeline_node_offset(const ModelSpec& spec, const PipelineSplit& split, int stage) {
    return pipeline_node_offsets(spec, split)[static_cast<std::size_t>(stage)];
}

std::vector<int> pipeline_node_offsets(const ModelSpec& spec, const PipelineSplit& split) {
    const std::shared_ptr<const SpecReport> rep = valid_report(spec);  // (one report for every stage)
    std::vector<int> offsets(static_cast<std::size_t>(split.stages()), 0);
    for (const LayerReport& r : rep->layers) {
        const int top = top_of(r.path);
        for (int k = 0; k < split.stages(); ++k)
            if (top < split.first[static_cast<std::size_t>(k)]) ++offsets[static_cast<std::size_t>(k)];
    }
    return offsets;
}

std::vector<std::pair<bool, int>> pipeline_schedule(int stages, int stage, int m) {
    std::vector<std::pair<bool, int>> order;
    const int warm = std::min(stages - 1 - stage, m);
    int f = 0, b = 0;
    for (; f < warm; ++f) order.push_back({true, f});
    while (f < m) {
        order.push_back({true, f++});
        order.push_back({false, b++});
    }
    while (b < m) order.push_back({false, b++});
    return order;
}

std::vector<std::vector<PipelineMessage>> pipeline_exchanges(int stages, int stage, int m) {
    const auto order = pipeline_schedule(stages, stage, m);
    std::vector<std::vector<PipelineMessage>> groups(order.size() + 1);
    for (std::size_t t = 0; t < order.size(); ++t) {
        const auto [forward, j] = order[t];
        // what action t receives first (in its group), then what it sends (in the next one)
        if (forward ? stage > 0 : stage < stages - 1) groups[t].push_back({false, forward, j});
        if (forward ? stage < stages - 1 : stage > 0) groups[t + 1].push_back({true, forward, j});
    }
    return groups;
}

int pipeline_in_flight(int stages, int stage, int m) { return std::max(1, std::min(stages - stage, m)); }

double pipeline_bubble(int stages, int m) {
    return m > 0 ? static_cast<double>(stages - 1) / static_cast<double>(m + stages - 1) : 0.0;
}

}  // namespace hr
