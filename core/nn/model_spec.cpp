// Model specs: equality and the layer catalog (types, attributes, defaults: the registry's, nn/layer_registry.h). The JSON form is in
// model_spec_json.cpp, shape inference and checks in model_spec_analysis.cpp, the presets in
// model_spec_presets.cpp; model_spec_detail.h holds what they share.
#include "nn/model_spec.h"

#include <cmath>
#include <cstdint>

#include "base/error.h"
#include "nn/layer_registry.h"
#include "nn/model_spec_detail.h"

namespace hr {

using json = nlohmann::json;
using AK = AttrInfo::Kind;

bool LayerSpec::operator==(const LayerSpec& o) const {
    return type == o.type && name == o.name && attrs == o.attrs && body == o.body && shortcut == o.shortcut;
}

bool ModelSpec::operator==(const ModelSpec& o) const {
    return name == o.name && input_shape == o.input_shape && num_classes == o.num_classes && layers == o.layers &&
           loss == o.loss;
}

// ---------------------------------------------------------------------------------------------------
// catalog

const std::vector<LayerTypeInfo>& layer_catalog() {
    static const std::vector<LayerTypeInfo> catalog = [] {  // the registry's order: the palette's
        std::vector<LayerTypeInfo> c;
        for (const LayerEntry& e : layer_registry()) c.push_back(e.info);
        return c;
    }();
    return catalog;
}

const LayerTypeInfo* find_layer_type(const std::string& type) {
    const LayerEntry* e = layer_entry(type);
    return e ? &e->info : nullptr;
}

std::string known_layer_types() {
    std::string s;
    for (const auto& t : layer_catalog()) {
        if (t.group == "loss") continue;
        if (!s.empty()) s += ", ";
        s += t.type;
    }
    return s;
}

nlohmann::json layer_attr_json(const AttrInfo& a, double v) {
    switch (a.kind) {
        case AK::integer: return json(static_cast<std::int64_t>(std::llround(v)));
        case AK::boolean: return json(v != 0);
        case AK::real: return json(v);
    }
    return json(v);
}

LayerSpec default_layer(const std::string& type) {
    const LayerTypeInfo* info = find_layer_type(type);
    if (!info || info->group == "loss")
        throw InputError(HR_MSG("spec.unknown_layer_type", "unknown layer type '%1'; use one of %2"),
                         {type, known_layer_types()});
    LayerSpec l;
    l.type = type;
    for (const auto& a : info->attrs) l.attrs[a.name] = layer_attr_json(a, a.default_value);
    return l;
}

double layer_attr(const LayerSpec& layer, const std::string& name) {
    auto it = layer.attrs.find(name);
    if (it != layer.attrs.end()) {
        if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
        if (it->is_number()) return it->get<double>();
    }
    if (const LayerTypeInfo* info = find_layer_type(layer.type))
        for (const auto& a : info->attrs)
            if (a.name == name) return a.default_value;
    return 0.0;
}

}  // namespace hr
