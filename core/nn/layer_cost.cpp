#include "nn/layer_cost.h"

#include <sstream>

#include "nn/layer_registry.h"

namespace hr {

LayerCost layer_cost(const LayerReport& r, const LayerSpec* l) {
    LayerCost c;
    const LayerEntry* e = layer_entry(r.type);
    if (!r.output_shape.empty() && l && e && e->cost) {
        e->cost(r, l, c);  // the type's count (its registry entry)
    } else {               // a few operations per output element
        c.forward = c.backward = static_cast<double>(shape_numel(r.output_shape));
    }
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
