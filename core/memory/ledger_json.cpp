#include "memory/ledger_json.h"

#include "base/json_fields.h"

namespace hr {

using json = nlohmann::json;

json category_bytes_to_json(const CategoryBytes& b) {
    json o = json::object();
    for (MemCategory c : all_categories()) o[category_name(c)] = at(b, c);
    return o;
}

CategoryBytes category_bytes_from_json(const json& j) {
    CategoryBytes b{};
    if (!j.is_object()) return b;
    for (auto it = j.begin(); it != j.end(); ++it) json_field::read_value(it.value(), "bytes", at(b, category_from_name(it.key())));
    return b;
}

void to_json(json& j, const LedgerSnapshot& s) {
    json layers = json::array(), split = json::array(), unattributed = nullptr;
    for (const auto& [layer, b] : s.layers)
        if (layer >= 0) layers.push_back({{"layer", layer}, {"live", b.live}, {"peak", b.peak}});
        else unattributed = {{"live", b.live}, {"peak", b.peak}};
    for (const auto& [layer, b] : s.layer_peak_split)
        if (layer >= 0) split.push_back({{"layer", layer}, {"bytes", category_bytes_to_json(b)}});
        else {
            unattributed["at_peak"] = category_bytes_to_json(b);
        }
    j = {{"live", category_bytes_to_json(s.live)},
         {"peak", category_bytes_to_json(s.peak)},
         {"at_peak", category_bytes_to_json(s.at_peak)},
         {"live_total", s.live_total},
         {"peak_total", s.peak_total},
         {"reserved_free", s.reserved_free},
         {"peak_reserved", s.peak_reserved},
         {"peak_phase", s.peak_phase},
         {"peak_step", s.peak_step},
         {"layers", layers},
         {"layer_peak_split", split},
         {"unattributed", unattributed}};
}

void from_json(const json& j, LedgerSnapshot& s) {
    s = LedgerSnapshot{};
    if (!j.is_object()) return;
    s.live = category_bytes_from_json(j.value("live", json::object()));
    s.peak = category_bytes_from_json(j.value("peak", json::object()));
    s.at_peak = category_bytes_from_json(j.value("at_peak", json::object()));
    json_field::read(j, "live_total", s.live_total);
    json_field::read(j, "peak_total", s.peak_total);
    json_field::read(j, "reserved_free", s.reserved_free);
    json_field::read(j, "peak_reserved", s.peak_reserved);
    json_field::read(j, "peak_phase", s.peak_phase);
    json_field::read(j, "peak_step", s.peak_step);
    auto layer_bytes = [](const json& l) {
        LayerBytes b;
        json_field::read(l, "live", b.live);
        json_field::read(l, "peak", b.peak);
        return b;
    };
    for (const json& l : j.value("layers", json::array())) {
        int layer = -1;
        json_field::read(l, "layer", layer);
        s.layers[layer] = layer_bytes(l);
    }
    for (const json& l : j.value("layer_peak_split", json::array())) {
        int layer = -1;
        json_field::read(l, "layer", layer);
        s.layer_peak_split[layer] = category_bytes_from_json(l.value("bytes", json::object()));
    }
    if (const auto it = j.find("unattributed"); it != j.end() && it->is_object()) {
        if (it->contains("peak")) s.layers[-1] = layer_bytes(*it);
        if (it->contains("at_peak")) s.layer_peak_split[-1] = category_bytes_from_json(it->at("at_peak"));
    }
}

}  // namespace hr
