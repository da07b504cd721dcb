// Model specs as JSON: parsing with located errors and limits, writing, files.
#include "nn/model_spec.h"

#include "base/atomic_file.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/json_limits.h"
#include "nn/model_spec_detail.h"
#include "nn/transformer_spec.h"

namespace hr {

using json = nlohmann::json;
using AK = AttrInfo::Kind;

// ---------------------------------------------------------------------------------------------------
// JSON

// Parse errors name where they are: "%1" is the location ("m.json: layers[3] (conv2d)", or
// "model spec" for the top level), so the message template stays one translatable string.
// `depth` counts the residual blocks around `where`; `count` the layers read so far (both limited).
static std::vector<LayerSpec> layers_from_json(const json& arr, const std::string& where, int depth,
                                               std::int64_t& count);

// A llama_block's "rope_scaling" (config.json's): null, or {"type" (or "rope_type"): "llama3", "factor",
// "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}, into the flat attributes
// rope_factor, rope_low_freq_factor, rope_high_freq_factor, rope_original_max_positions.
static void llama_rope_scaling_from_json(const json& v, const std::string& at, LayerSpec& l) {
    if (v.is_null()) {
        l.attrs["rope_factor"] = 0.0;
        return;
    }
    auto bad = [&](const std::string& what) {
        return InputError(HR_MSG("spec.rope_scaling", "%1: \"rope_scaling\" %2; write {\"type\": \"llama3\", \"factor\": 32.0, "
                                                      "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
                                                      "\"original_max_position_embeddings\": 8192} or null"),
                          {at, what});
    };
    if (!v.is_object()) throw bad("must be an object, got " + json_brief(v));
    std::string kind;
    for (const char* k : {"type", "rope_type"})
        if (v.contains(k)) {
            if (!v[k].is_string()) throw bad(std::string("has a non-text \"") + k + "\"");
            kind = v[k].get<std::string>();
        }
    if (kind != "llama3") throw bad("of type '" + kind + "' is not supported (only llama3's frequency scaling is)");
    const std::pair<const char*, const char*> fields[] = {{"factor", "rope_factor"},
                                                          {"low_freq_factor", "rope_low_freq_factor"},
                                                          {"high_freq_factor", "rope_high_freq_factor"},
                                                          {"original_max_position_embeddings", "rope_original_max_positions"}};
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.key() == "type" || it.key() == "rope_type") continue;
        bool known = false;
        for (const auto& [src, dst] : fields)
            if (it.key() == src) {
                known = true;
                if (!it->is_number() || !(it->get<double>() > 0) || !(it->get<double>() < 1e9))
                    throw bad(std::string("field '") + src + "' must be a positive number, got " + json_brief(*it));
                const AttrInfo* a = nullptr;
                for (const auto& cand : find_layer_type("llama_block")->attrs)
                    if (cand.name == dst) a = &cand;
                l.attrs[dst] = layer_attr_json(*a, it->get<double>());
            }
        if (!known) throw bad("has an unknown field '" + it.key() + "'");
    }
    for (const auto& [src, dst] : fields)
        if (!v.contains(src)) throw bad(std::string("lacks '") + src + "'");
    if (!(layer_attr(l, "rope_high_freq_factor") > layer_attr(l, "rope_low_freq_factor")))
        throw bad("needs high_freq_factor above low_freq_factor");
}

static LayerSpec layer_from_json(const json& j, const std::string& where, int depth, std::int64_t& count) {
    if (!j.is_object())
        throw InputError(HR_MSG("spec.layer_not_object", "%1: each layer must be a JSON object like {\"type\": \"relu\"}"),
                         {where});
    if (!j.contains("type") || !j["type"].is_string())
        throw InputError(HR_MSG("spec.layer_no_type", "%1: missing \"type\"; use one of %2"), {where, known_layer_types()});
    std::string type = j["type"].get<std::string>();
    const LayerTypeInfo* info = find_layer_type(type);
    if (!info || info->group == "loss")
        throw InputError(HR_MSG("spec.unknown_layer", "%1: unknown layer type '%2'; use one of %3"),
                         {where, type, known_layer_types()});
    LayerSpec l = default_layer(type);
    const std::string at = where + " (" + type + ")";
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        if (key == "type") continue;
        if (key == "name") {
            if (!it->is_string()) throw InputError(HR_MSG("spec.name_not_string", "%1: \"name\" must be a string"), {at});
            l.name = it->get<std::string>();
            continue;
        }
        if (type == "residual" && (key == "body" || key == "shortcut")) {
            if (depth >= kMaxResidualDepth)
                throw InputError(HR_MSG("spec.too_deep", "%1: residual blocks nest more than %2 levels deep; "
                                                         "flatten the structure (see docs/model-spec.md, Limits)"),
                                 {at, std::to_string(kMaxResidualDepth)});
            auto seq = layers_from_json(*it, where + "." + key, depth + 1, count);
            (key == "body" ? l.body : l.shortcut) = std::move(seq);
            continue;
        }
        if (type == "llama_block" && key == "rope_scaling") {  // Hugging Face's form, kept flat inside
            llama_rope_scaling_from_json(*it, at, l);
            continue;
        }
        const AttrInfo* a = nullptr;
        for (const auto& cand : info->attrs)
            if (cand.name == key) a = &cand;
        if (!a) {
            std::string known;
            for (const auto& cand : info->attrs) known += (known.empty() ? "" : ", ") + cand.name;
            if (type == "residual") known = "body, shortcut";
            if (known.empty())
                throw InputError(HR_MSG("spec.attr_none", "%1: unknown attribute '%2'; this layer takes no attributes"),
                                 {at, key});
            throw InputError(HR_MSG("spec.attr_unknown", "%1: unknown attribute '%2'; known: %3"), {at, key, known});
        }
        double v = 0;
        if (a->kind == AK::boolean) {
            if (!it->is_boolean())
                throw InputError(HR_MSG("spec.attr_not_bool", "%1: attribute '%2' must be true or false, got %3"),
                                 {at, key, json_brief(*it)});
            v = it->get<bool>() ? 1 : 0;
        } else if (a->kind == AK::integer) {
            if (!it->is_number_integer())
                throw InputError(HR_MSG("spec.attr_not_integer", "%1: attribute '%2' must be an integer, got %3"),
                                 {at, key, json_brief(*it)});
            // An unsigned value past INT64_MAX is out of every range; read it without wrapping.
            v = it->is_number_unsigned() ? static_cast<double>(it->get<std::uint64_t>())
                                         : static_cast<double>(it->get<std::int64_t>());
        } else {
            if (!it->is_number())
                throw InputError(HR_MSG("spec.attr_not_number", "%1: attribute '%2' must be a number, got %3"),
                                 {at, key, json_brief(*it)});
            v = it->get<double>();
        }
        if (!(v >= a->min && v <= a->max)) {
            char lo[32], hi[32];
            std::snprintf(lo, sizeof lo, "%g", a->min);
            std::snprintf(hi, sizeof hi, "%g", a->max);
            throw InputError(HR_MSG("spec.attr_range", "%1: attribute '%2' must be between %3 and %4, got %5"),
                             {at, key, lo, hi, json_brief(*it)});
        }
        l.attrs[key] = layer_attr_json(*a, v);
    }
    if (type == "residual" && l.body.empty())
        throw InputError(HR_MSG("spec.residual_empty", "%1: a residual block needs a non-empty \"body\" list of layers"),
                         {at});
    return l;
}

static std::vector<LayerSpec> layers_from_json(const json& arr, const std::string& where, int depth,
                                               std::int64_t& count) {
    if (!arr.is_array()) throw InputError(HR_MSG("spec.layers_not_list", "%1: must be a list of layers"), {where});
    std::vector<LayerSpec> out;
    for (std::size_t i = 0; i < arr.size(); ++i) {
        // Counted while reading, so a file cannot make the reader build millions of layers first.
        if (++count > kMaxLayers)
            throw InputError(HR_MSG("spec.too_many_layers", "%1: the model has more than %2 layers (residual blocks "
                                                            "and their contents included; see docs/model-spec.md, "
                                                            "Limits)"),
                             {where + "[" + std::to_string(i) + "]", std::to_string(kMaxLayers)});
        out.push_back(layer_from_json(arr[i], where + "[" + std::to_string(i) + "]", depth, count));
    }
    return out;
}

// True when v is an integer in [lo, hi] (out = its value); an unsigned value past INT64_MAX is read
// without wrapping negative.
static bool json_integer_in(const json& v, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    if (!v.is_number_integer()) return false;
    if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
        out = static_cast<std::int64_t>(u);
    } else {
        out = v.get<std::int64_t>();
    }
    return out >= lo && out <= hi;
}

static ModelSpec model_spec_from_json_at(const json& j, const std::string& source) {
    const std::string top = source.empty() ? std::string("model spec") : source;
    const std::string loc = source.empty() ? std::string() : source + ": ";
    if (!j.is_object())
        throw InputError(HR_MSG("spec.not_object", "%1: the top level must be a JSON object with \"layers\""), {top});
    ModelSpec s;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k == "format" || k == "version" || k == "description") continue;
        if (k == "name") {
            if (!it->is_string()) throw InputError(HR_MSG("spec.name_not_string", "%1: \"name\" must be a string"), {top});
            s.name = it->get<std::string>();
        } else if (k == "input") {
            if (!it->is_array() || it->empty() || it->size() > 3)
                throw InputError(HR_MSG("spec.input_shape", "%1: \"input\" must be the per-sample shape, e.g. [1, 28, "
                                                            "28] or [784], got %2"),
                                 {top, json_brief(*it)});
            s.input_shape.clear();
            std::int64_t elements = 1;
            for (const auto& d : *it) {
                std::int64_t v = 0;
                if (!json_integer_in(d, 1, INT64_MAX, v))
                    throw InputError(HR_MSG("spec.input_positive",
                                            "%1: \"input\" dimensions must be positive integers, got %2"),
                                     {top, json_brief(*it)});
                // Every per-sample tensor is bounded (docs/model-spec.md, Limits); the input is the first.
                if (v > kMaxSampleElements || !checked_mul(elements, v, elements) || elements > kMaxSampleElements)
                    throw InputError(HR_MSG("spec.input_too_large",
                                            "%1: \"input\" %2 has more than %3 elements per sample (see "
                                            "docs/model-spec.md, Limits)"),
                                     {top, json_brief(*it), std::to_string(kMaxSampleElements)});
                s.input_shape.push_back(v);
            }
        } else if (k == "num_classes") {
            // Read as a checked 64-bit integer: get<int>() narrowed 4294967297 to 1.
            std::int64_t v = 0;
            if (!json_integer_in(*it, 2, kMaxClasses, v))
                throw InputError(HR_MSG("spec.num_classes", "%1: \"num_classes\" must be an integer from 2 to %2, got %3"),
                                 {top, std::to_string(kMaxClasses), json_brief(*it)});
            s.num_classes = static_cast<int>(v);
        } else if (k == "layers") {
            std::int64_t count = 0;
            s.layers = layers_from_json(*it, loc + "layers", 0, count);
        } else if (k == "loss") {
            if (!it->is_object() || !it->contains("type") || !(*it)["type"].is_string())
                throw InputError(HR_MSG("spec.loss_shape",
                                        "%1: \"loss\" must be {\"type\": \"cross_entropy\"} or {\"type\": \"mse\"}"),
                                 {top});
            s.loss.type = (*it)["type"].get<std::string>();
            if (s.loss.type != "cross_entropy" && s.loss.type != "mse")
                throw InputError(HR_MSG("spec.loss_unknown", "%1: unknown loss '%2'; use cross_entropy or mse"),
                                 {top, s.loss.type});
            if (it->contains("label_smoothing")) {
                const auto& v = (*it)["label_smoothing"];
                if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() < 1))
                    throw InputError(HR_MSG("spec.label_smoothing",
                                            "%1: loss \"label_smoothing\" must be a number in [0, 1), got %2"),
                                     {top, json_brief(v)});
                s.loss.label_smoothing = v.get<double>();
                if (s.loss.type != "cross_entropy" && s.loss.label_smoothing != 0)
                    throw InputError(HR_MSG("spec.label_smoothing_mse", "%1: loss \"label_smoothing\" applies to "
                                                                        "cross_entropy only; remove it for %2"),
                                     {top, s.loss.type});
            }
        } else {
            throw InputError(HR_MSG("spec.unknown_key", "%1: unknown key '%2'; expected name, input, num_classes, "
                                                        "layers, loss (see docs/model-spec.md)"),
                             {top, k});
        }
    }
    if (!j.contains("layers"))
        throw InputError(HR_MSG("spec.no_layers", "%1: missing \"layers\" (see docs/model-spec.md)"), {top});
    return s;
}

ModelSpec model_spec_from_json(const json& j) { return model_spec_from_json_at(j, ""); }

static json layers_to_json(const std::vector<LayerSpec>& layers) {
    json arr = json::array();
    for (const auto& l : layers) {
        nlohmann::ordered_json o;
        json obj = json::object();
        obj["type"] = l.type;
        if (!l.name.empty()) obj["name"] = l.name;
        for (auto it = l.attrs.begin(); it != l.attrs.end(); ++it) obj[it.key()] = *it;
        if (l.type == "llama_block") {  // the rope scaling as config.json writes it
            const bool scaled = layer_attr(l, "rope_factor") > 0;
            if (scaled)
                obj["rope_scaling"] = {{"type", "llama3"},
                                       {"factor", layer_attr(l, "rope_factor")},
                                       {"low_freq_factor", layer_attr(l, "rope_low_freq_factor")},
                                       {"high_freq_factor", layer_attr(l, "rope_high_freq_factor")},
                                       {"original_max_position_embeddings",
                                        std::llround(layer_attr(l, "rope_original_max_positions"))}};
            for (const char* k : {"rope_factor", "rope_low_freq_factor", "rope_high_freq_factor", "rope_original_max_positions"})
                obj.erase(k);
        }
        if (l.type == "residual") {
            obj["body"] = layers_to_json(l.body);
            if (!l.shortcut.empty()) obj["shortcut"] = layers_to_json(l.shortcut);
        }
        arr.push_back(obj);
    }
    return arr;
}

json model_spec_to_json(const ModelSpec& s) {
    json j;
    j["format"] = "headroom-model";
    j["version"] = 1;
    j["name"] = s.name;
    j["input"] = s.input_shape;
    j["num_classes"] = s.num_classes;
    j["layers"] = layers_to_json(s.layers);
    j["loss"] = {{"type", s.loss.type}};
    if (s.loss.type == "cross_entropy") j["loss"]["label_smoothing"] = s.loss.label_smoothing;
    return j;
}

ModelSpec load_model_spec(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(HR_MSG("spec.unreadable", "cannot read model spec '%1': no such file or not readable"), {path});
    // Model specs are small; a file past the limit is not one (and is not read into memory).
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxSpecFileBytes)
        throw InputError(HR_MSG("spec.file_too_large", "model spec '%1' is %2 bytes, more than the limit of %3; is it "
                                                       "a model spec?"),
                         {path, std::to_string(size), std::to_string(kMaxSpecFileBytes)});
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const json j = parse_json_limited(text, "model spec '" + path + "'");
    return model_spec_from_json_at(j, path);
}

void save_model_spec(const ModelSpec& spec, const std::string& path) {
    write_file_atomic(path, model_spec_to_json(spec).dump(2) + "\n");
}

}  // namespace hr
