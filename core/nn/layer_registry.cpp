#include "nn/layer_registry.h"

#include <cmath>
#include <unordered_map>

namespace hr {

std::int64_t LayerShapeInput::attr(const char* name) const { return std::llround(layer_attr(layer, name)); }

std::vector<LayerEntry> loss_entries() {
    using AK = AttrInfo::Kind;
    std::vector<LayerEntry> c;
    c.push_back({{"cross_entropy", "Softmax cross-entropy", "loss", HR_MSG("layer.cross_entropy", "softmax + negative log-likelihood"),
                  {{"label_smoothing", AK::real, 0, 0, 0.99, false, HR_MSG("layer.cross_entropy.label_smoothing", "mix of the uniform distribution into targets")}}}});
    c.push_back({{"mse", "MSE", "loss", HR_MSG("layer.mse", "mean squared error against one-hot targets"), {}}});
    return c;
}

const std::vector<LayerEntry>& layer_registry() {
    static const std::vector<LayerEntry> all = [] {
        std::vector<LayerEntry> r;
        for (auto part : {image_layer_entries, transformer_layer_entries, loss_entries})
            for (LayerEntry& e : part()) r.push_back(std::move(e));
        return r;
    }();
    return all;
}

const LayerEntry* layer_entry(const std::string& type) {
    static const std::unordered_map<std::string, const LayerEntry*> by_type = [] {
        std::unordered_map<std::string, const LayerEntry*> m;
        for (const LayerEntry& e : layer_registry()) m.emplace(e.info.type, &e);
        return m;
    }();
    const auto it = by_type.find(type);
    return it == by_type.end() ? nullptr : it->second;
}

}  // namespace hr
