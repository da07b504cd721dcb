// Hugging Face config.json <-> the LLaMA layout of the model spec (nn/hf_config.h).
#include "nn/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/json_limits.h"
#include "nn/transformer_spec.h"

namespace hr {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string hfc_num(double v) {
    std::ostringstream s;
    s.precision(10);
    s << v;
    return s.str();
}

// The config's fields, read with their checks; every refusal names the file and the field.
struct HfFields {
    const json& j;
    const std::string& what;

    bool has(const char* k) const { return j.contains(k) && !j.at(k).is_null(); }

    std::int64_t integer(const char* k, std::int64_t lo, std::int64_t hi, std::optional<std::int64_t> def) const {
        if (!has(k)) {
            if (def) return *def;
            throw InputError(HR_MSG("hf_config.missing", "%1: \"%2\" is missing; every config.json of this architecture "
                                                         "has it: use the model's own config.json"),
                             {what, k});
        }
        const json& v = j.at(k);
        bool ok = v.is_number_integer();
        std::int64_t x = 0;
        if (ok && v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) ok = false;
        if (ok) x = v.get<std::int64_t>();
        if (!ok || x < lo || x > hi)
            throw InputError(HR_MSG("hf_config.int_range", "%1: \"%2\" must be an integer from %3 to %4, got %5; correct "
                                                           "it or use the model's own config.json"),
                             {what, k, std::to_string(lo), std::to_string(hi), json_brief(v)});
        return x;
    }

    // A number in (lo, hi), both excluded.
    double real(const json& v, const std::string& k, double lo, double hi) const {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= lo || v.get<double>() >= hi)
            throw InputError(HR_MSG("hf_config.real_range", "%1: \"%2\" must be a number greater than %3 and less than "
                                                            "%4, got %5; correct it or use the model's own config.json"),
                             {what, k, hfc_num(lo), hfc_num(hi), json_brief(v)});
        return v.get<double>();
    }
    double real(const char* k, double lo, double hi, double def) const { return has(k) ? real(j.at(k), k, lo, hi) : def; }

    bool boolean(const char* k, bool def) const {
        if (!has(k)) return def;
        if (!j.at(k).is_boolean())
            throw InputError(HR_MSG("hf_config.bool", "%1: \"%2\" must be true or false, got %3"), {what, k, json_brief(j.at(k))});
        return j.at(k).get<bool>();
    }

    std::string string(const char* k, const std::string& def) const {
        if (!has(k)) return def;
        if (!j.at(k).is_string())
            throw InputError(HR_MSG("hf_config.string", "%1: \"%2\" must be a string, got %3"), {what, k, json_brief(j.at(k))});
        return j.at(k).get<std::string>();
    }
};

struct HfArch {
    const char* architecture;
    const char* model_type;
    std::int64_t default_max_positions;
    bool qkv_bias;
};
constexpr HfArch kHfArchs[] = {{"LlamaForCausalLM", "llama", 2048, false},
                               {"MistralForCausalLM", "mistral", 32768, false},
                               {"Qwen2ForCausalLM", "qwen2", 32768, true}};

}  // namespace

HfConfig parse_hf_config(const json& j, const std::string& what) {
    if (!j.is_object())
        throw InputError(HR_MSG("hf_config.not_object", "%1: a config.json is one JSON object (\"architectures\", "
                                                        "\"hidden_size\", ...), got %2; point to a model's config.json"),
                         {what, json_brief(j)});
    const HfFields f{j, what};
    HfConfig c;
    // which model: "architectures"[0], else "model_type"
    const HfArch* arch = nullptr;
    std::string named;
    if (f.has("architectures")) {
        const json& a = j.at("architectures");
        if (!a.is_array() || a.empty() || !a.front().is_string())
            throw InputError(HR_MSG("hf_config.architectures", "%1: \"architectures\" must be a list of names such as "
                                                               "[\"LlamaForCausalLM\"], got %2"),
                             {what, json_brief(a)});
        named = a.front().get<std::string>();
        for (const auto& h : kHfArchs)
            if (named == h.architecture) arch = &h;
    } else if (f.has("model_type")) {
        named = f.string("model_type", "");
        for (const auto& h : kHfArchs)
            if (named == h.model_type) arch = &h;
    } else {
        throw InputError(HR_MSG("hf_config.no_architecture", "%1: neither \"architectures\" nor \"model_type\" says "
                                                             "which model this is; is it a Hugging Face config.json?"),
                         {what});
    }
    if (!arch)
        throw InputError(HR_MSG("hf_config.architecture", "%1: '%2' is not an architecture Headroom builds; it reads "
                                                          "LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM "
                                                          "(model_type llama, mistral, qwen2)"),
                         {what, named});
    c.architecture = arch->architecture;
    c.model_type = arch->model_type;
    c.name = f.string("_name_or_path", "");

    c.vocab_size = f.integer("vocab_size", 2, kHfMaxVocab, std::nullopt);
    c.hidden_size = f.integer("hidden_size", 2, kHfMaxHidden, std::nullopt);
    c.intermediate_size = f.integer("intermediate_size", 1, kHfMaxIntermediate, std::nullopt);
    c.num_hidden_layers = f.integer("num_hidden_layers", 1, kHfMaxLayers, std::nullopt);
    c.num_attention_heads = f.integer("num_attention_heads", 1, kHfMaxHeads, std::nullopt);
    c.num_key_value_heads = f.integer("num_key_value_heads", 1, c.num_attention_heads, c.num_attention_heads);
    if (c.num_attention_heads % c.num_key_value_heads != 0)
        throw InputError(HR_MSG("hf_config.kv_heads", "%1: num_attention_heads %2 is not a multiple of "
                                                      "num_key_value_heads %3; each key/value head serves a whole group "
                                                      "of query heads: correct one of them"),
                         {what, std::to_string(c.num_attention_heads), std::to_string(c.num_key_value_heads)});
    if (f.has("head_dim")) {
        c.head_dim = f.integer("head_dim", 2, kHfMaxHeadDim, std::nullopt);
    } else {
        if (c.hidden_size % c.num_attention_heads != 0)
            throw InputError(HR_MSG("hf_config.head_split", "%1: hidden_size %2 is not a multiple of "
                                                            "num_attention_heads %3 and no head_dim is given; give "
                                                            "\"head_dim\" or correct the sizes"),
                             {what, std::to_string(c.hidden_size), std::to_string(c.num_attention_heads)});
        c.head_dim = c.hidden_size / c.num_attention_heads;
    }
    if (c.head_dim % 2 != 0 || c.head_dim > kHfMaxHeadDim)
        throw InputError(HR_MSG("hf_config.head_dim", "%1: the head size %2 must be even and at most %3 (rotary "
                                                      "embeddings pair a head's dimensions); correct hidden_size, "
                                                      "num_attention_heads or head_dim"),
                         {what, std::to_string(c.head_dim), std::to_string(kHfMaxHeadDim)});
    c.max_position_embeddings = f.integer("max_position_embeddings", 1, kHfMaxPositions, arch->default_max_positions);
    c.rms_norm_eps = f.real("rms_norm_eps", 0.0, 1.0, 1e-6);
    c.rope_theta = f.real("rope_theta", 0.0, 1e12, 10000.0);
    if (f.has("rope_scaling")) {
        const json& r = j.at("rope_scaling");
        if (!r.is_object())
            throw InputError(HR_MSG("hf_config.rope_scaling", "%1: \"rope_scaling\" must be null or an object such "
                                                              "as Llama 3's {\"rope_type\": \"llama3\", \"factor\": 8.0, "
                                                              "...}, got %2"),
                             {what, json_brief(r)});
        const HfFields rf{r, what};
        const std::string type = rf.has("rope_type") ? rf.string("rope_type", "") : rf.string("type", "");
        if (type != "llama3")
            throw InputError(HR_MSG("hf_config.rope_type", "%1: rope_scaling of type '%2' is not supported; Headroom "
                                                           "builds plain RoPE (rope_scaling null) and Llama 3's "
                                                           "(\"rope_type\": \"llama3\")"),
                             {what, type});
        HfRopeScaling s;
        s.factor = rf.real(r.contains("factor") ? r.at("factor") : json(), "rope_scaling.factor", 0.0, 1e6);
        s.low_freq_factor = rf.real(r.contains("low_freq_factor") ? r.at("low_freq_factor") : json(),
                                    "rope_scaling.low_freq_factor", 0.0, 1e6);
        s.high_freq_factor = rf.real(r.contains("high_freq_factor") ? r.at("high_freq_factor") : json(),
                                     "rope_scaling.high_freq_factor", s.low_freq_factor, 1e6);
        s.original_max_position_embeddings = rf.integer("original_max_position_embeddings", 1, kHfMaxPositions, std::nullopt);
        c.rope_scaling = s;
    }
    // what the block has: Llama's attention_bias puts a bias on o_proj as well, which the LLaMA block has not
    if (arch->qkv_bias) {
        c.qkv_bias = true;
    } else if (f.boolean("attention_bias", false)) {
        throw InputError(HR_MSG("hf_config.attention_bias", "%1: \"attention_bias\": true (biases on q, k, v and o "
                                                            "projections) is not supported; Headroom's LLaMA block has "
                                                            "biases on q, k and v only (Qwen2)"),
                         {what});
    }
    if (f.boolean("mlp_bias", false))
        throw InputError(HR_MSG("hf_config.mlp_bias", "%1: \"mlp_bias\": true is not supported; the LLaMA block's MLP "
                                                      "has no biases"),
                         {what});
    const std::string act = f.string("hidden_act", "silu");
    if (act != "silu")
        throw InputError(HR_MSG("hf_config.hidden_act", "%1: \"hidden_act\" '%2' is not supported; the LLaMA block's "
                                                        "MLP is SwiGLU (\"silu\")"),
                         {what, act});
    c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
    c.torch_dtype = f.string("torch_dtype", "float32");
    if (c.torch_dtype != "float32" && c.torch_dtype != "bfloat16" && c.torch_dtype != "float16")
        throw InputError(HR_MSG("hf_config.torch_dtype", "%1: \"torch_dtype\" '%2' is not one Headroom reads; it reads "
                                                         "float32, bfloat16 and float16"),
                         {what, c.torch_dtype});
    if (c.model_type == "mistral" || (c.model_type == "qwen2" && f.boolean("use_sliding_window", false)))
        c.sliding_window = f.has("sliding_window") && j.at("sliding_window").is_number_integer()
                               ? std::max<std::int64_t>(0, j.at("sliding_window").get<std::int64_t>())
                               : 0;
    return c;
}

HfConfig load_hf_config(const std::string& path_in) {
    std::error_code ec;
    fs::path path(path_in);
    if (fs::is_directory(path, ec)) path /= "config.json";
    const std::string what = path.string();
    if (!fs::exists(path, ec))
        throw InputError(HR_MSG("hf_config.not_found", "%1: file not found; give a model's config.json or the folder "
                                                       "that holds it"),
                         {what});
    if (!fs::is_regular_file(path, ec))
        throw InputError(HR_MSG("hf_config.not_file", "%1: is not a regular file; give a model's config.json"), {what});
    const auto size = fs::file_size(path, ec);
    if (ec || size > kHfMaxConfigBytes)
        throw InputError(HR_MSG("hf_config.too_large", "%1: %2 bytes is larger than a config.json can be (%3 bytes); "
                                                       "is it the right file?"),
                         {what, std::to_string(size), std::to_string(kHfMaxConfigBytes)});
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(HR_MSG("hf_config.unreadable", "%1: cannot be read; check its permissions"), {what});
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    HfConfig c = parse_hf_config(parse_json_limited(text, what), what);
    if (c.name.empty()) c.name = fs::absolute(path, ec).parent_path().filename().string();
    return c;
}

json hf_model_spec_json(const HfConfig& c, std::int64_t seq) {
    if (seq <= 0) seq = std::min(kHfDefaultSequence, c.max_position_embeddings);
    json block = {{"type", "llama_block"},
                  {"dim", c.hidden_size},
                  {"heads", c.num_attention_heads},
                  {"kv_heads", c.num_key_value_heads},
                  {"hidden", c.intermediate_size},
                  {"norm_eps", c.rms_norm_eps},
                  {"rope_theta", c.rope_theta},
                  {"qkv_bias", c.qkv_bias},
                  {"max_positions", c.max_position_embeddings}};
    if (c.head_dim * c.num_attention_heads != c.hidden_size) block["head_dim"] = c.head_dim;
    if (c.rope_scaling)
        block["rope_scaling"] = {{"type", "llama3"},
                                 {"factor", c.rope_scaling->factor},
                                 {"low_freq_factor", c.rope_scaling->low_freq_factor},
                                 {"high_freq_factor", c.rope_scaling->high_freq_factor},
                                 {"original_max_position_embeddings", c.rope_scaling->original_max_position_embeddings}};
    json layers = json::array();
    layers.push_back({{"type", "token_embedding"}, {"vocab_size", c.vocab_size}, {"dim", c.hidden_size}});
    for (std::int64_t k = 0; k < c.num_hidden_layers; ++k) layers.push_back(block);
    layers.push_back({{"type", "rmsnorm"}, {"dim", c.hidden_size}, {"eps", c.rms_norm_eps}});
    layers.push_back({{"type", "lm_head"}, {"dim", c.hidden_size}, {"vocab_size", c.vocab_size}, {"tied", c.tie_word_embeddings}});
    std::string name = c.name.empty() ? c.model_type : c.name;
    return {{"name", name}, {"input", json::array({seq})}, {"num_classes", c.vocab_size}, {"layers", layers},
            {"loss", {{"type", "cross_entropy"}}}};
}

ModelSpec hf_model_spec(const HfConfig& c, std::int64_t seq) { return model_spec_from_json(hf_model_spec_json(c, seq)); }

HfConfig hf_config_of_spec(const ModelSpec& spec, const std::string& torch_dtype) {
    if (!is_llama_layout(spec) || spec.layers.size() < 4)
        throw InputError(HR_MSG("hf_config.not_llama", "model '%1' is not in the LLaMA layout (token_embedding, "
                                                       "llama_block..., rmsnorm, lm_head), so it has no Hugging Face "
                                                       "config; export its model.safetensors instead"),
                         {spec.name});
    const auto& L = spec.layers;
    const LayerSpec& b = L[1];  // every block alike (a config.json has one of each size)
    auto integer = [](const LayerSpec& l, const char* k) { return static_cast<std::int64_t>(layer_attr(l, k)); };
    HfConfig c;
    c.hidden_size = integer(b, "dim");
    c.num_attention_heads = integer(b, "heads");
    c.num_key_value_heads = integer(b, "kv_heads") > 0 ? integer(b, "kv_heads") : c.num_attention_heads;
    c.head_dim = integer(b, "head_dim") > 0 ? integer(b, "head_dim") : c.hidden_size / std::max<std::int64_t>(1, c.num_attention_heads);
    c.intermediate_size = integer(b, "hidden");
    c.rms_norm_eps = layer_attr(b, "norm_eps");
    c.rope_theta = layer_attr(b, "rope_theta");
    c.qkv_bias = layer_attr(b, "qkv_bias") != 0;
    c.max_position_embeddings = integer(b, "max_positions");
    if (layer_attr(b, "rope_factor") > 0) {
        HfRopeScaling s;
        s.factor = layer_attr(b, "rope_factor");
        s.low_freq_factor = layer_attr(b, "rope_low_freq_factor");
        s.high_freq_factor = layer_attr(b, "rope_high_freq_factor");
        s.original_max_position_embeddings = integer(b, "rope_original_max_positions");
        c.rope_scaling = s;
    }
    c.num_hidden_layers = static_cast<std::int64_t>(L.size()) - 3;
    c.vocab_size = integer(L.front(), "vocab_size");
    c.tie_word_embeddings = layer_attr(L.back(), "tied") != 0;
    c.architecture = c.qkv_bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
    c.model_type = c.qkv_bias ? "qwen2" : "llama";
    c.name = spec.name;
    c.torch_dtype = torch_dtype;
    return c;
}

json hf_config_json(const HfConfig& c) {
    nlohmann::ordered_json o;
    o["architectures"] = {c.architecture};
    o["model_type"] = c.model_type;
    o["vocab_size"] = c.vocab_size;
    o["hidden_size"] = c.hidden_size;
    o["intermediate_size"] = c.intermediate_size;
    o["num_hidden_layers"] = c.num_hidden_layers;
    o["num_attention_heads"] = c.num_attention_heads;
    o["num_key_value_heads"] = c.num_key_value_heads;
    o["head_dim"] = c.head_dim;
    o["hidden_act"] = "silu";
    o["max_position_embeddings"] = c.max_position_embeddings;
    o["rms_norm_eps"] = c.rms_norm_eps;
    o["rope_theta"] = c.rope_theta;
    if (c.rope_scaling)
        o["rope_scaling"] = {{"rope_type", "llama3"},
                             {"factor", c.rope_scaling->factor},
                             {"low_freq_factor", c.rope_scaling->low_freq_factor},
                             {"high_freq_factor", c.rope_scaling->high_freq_factor},
                             {"original_max_position_embeddings", c.rope_scaling->original_max_position_embeddings}};
    else
        o["rope_scaling"] = nullptr;
    if (c.model_type == "llama") {
        o["attention_bias"] = false;
        o["mlp_bias"] = false;
    }
    o["tie_word_embeddings"] = c.tie_word_embeddings;
    o["torch_dtype"] = c.torch_dtype;
    if (!c.name.empty()) o["_name_or_path"] = c.name;
    return json::parse(o.dump());  // keeps transformers' order when dumped as ordered text by the caller
}

}  // namespace hr
