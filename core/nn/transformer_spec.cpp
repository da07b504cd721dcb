#include "nn/transformer_spec.h"

#include <cmath>

#include "base/error.h"

namespace hr {

namespace {

std::int64_t A(const LayerSpec& l, const char* n) { return std::llround(layer_attr(l, n)); }
const LayerSpec* first_of(const ModelSpec& s, const char* type) {
    for (const auto& l : s.layers)
        if (l.type == type) return &l;
    return nullptr;
}

}  // namespace

bool is_token_model(const ModelSpec& spec) {
    return !spec.layers.empty() && spec.layers.front().type == "token_embedding";
}

int transformer_layer_count(const ModelSpec& spec) {
    int blocks = 0, attn = 0;
    for (const auto& l : spec.layers) {
        blocks += l.type == "transformer_block" || l.type == "llama_block";
        attn += l.type == "self_attention";
    }
    return blocks > 0 ? blocks : attn;
}

bool is_gpt_layout(const ModelSpec& spec) {
    const auto& L = spec.layers;
    std::size_t i = 0;
    if (i >= L.size() || L[i].type != "token_embedding") return false;
    ++i;
    if (i < L.size() && L[i].type == "position_embedding") ++i;
    if (i < L.size() && L[i].type == "dropout") ++i;
    while (i < L.size() && L[i].type == "transformer_block") ++i;
    if (i >= L.size() || L[i].type != "layernorm") return false;
    ++i;
    if (i >= L.size() || L[i].type != "lm_head") return false;
    return i + 1 == L.size();
}

bool is_llama_layout(const ModelSpec& spec) {
    const auto& L = spec.layers;
    std::size_t i = 0;
    if (i >= L.size() || L[i].type != "token_embedding") return false;
    ++i;
    while (i < L.size() && L[i].type == "llama_block") ++i;
    if (i >= L.size() || L[i].type != "rmsnorm") return false;
    ++i;
    if (i >= L.size() || L[i].type != "lm_head") return false;
    return i + 1 == L.size();
}

std::vector<std::string> state_dict_prefixes(const ModelSpec& spec) {
    std::vector<std::string> p;
    if (is_llama_layout(spec)) {  // Hugging Face's LlamaForCausalLM
        int layer = 0;
        for (const auto& l : spec.layers) {
            if (l.type == "token_embedding")
                p.push_back("model.embed_tokens");
            else if (l.type == "llama_block")
                p.push_back("model.layers." + std::to_string(layer++));
            else if (l.type == "rmsnorm")
                p.push_back("model.norm");
            else
                p.push_back("lm_head");
        }
        return p;
    }
    const bool gpt = is_gpt_layout(spec);
    int block = 0;
    for (std::size_t i = 0; i < spec.layers.size(); ++i) {
        const std::string& t = spec.layers[i].type;
        if (!gpt)
            p.push_back(std::to_string(i));
        else if (t == "token_embedding")
            p.push_back("transformer.wte");
        else if (t == "position_embedding")
            p.push_back("transformer.wpe");
        else if (t == "transformer_block")
            p.push_back("transformer.h." + std::to_string(block++));
        else if (t == "layernorm")
            p.push_back("transformer.ln_f");
        else if (t == "lm_head")
            p.push_back("lm_head");
        else
            p.push_back("transformer.drop");  // dropout: no tensors
    }
    return p;
}

std::int64_t model_sequence_length(const ModelSpec& spec) {
    return is_token_model(spec) && spec.input_shape.size() == 1 ? spec.input_shape[0] : 0;
}

std::int64_t model_max_positions(const ModelSpec& spec) {
    const LayerSpec* p = first_of(spec, "position_embedding");
    if (!p) p = first_of(spec, "llama_block");  // rotary positions: the length it is built for
    return p ? A(*p, "max_positions") : 0;
}

void apply_sequence_length(ModelSpec& spec, std::int64_t seq) {
    if (seq == 0) return;
    if (!is_token_model(spec))
        throw InputError(HR_MSG("spec.seq_not_language_model",
                                "a sequence length (--seq %1) applies to language models only; model '%2' does not "
                                "start with a token_embedding"),
                         {std::to_string(seq), spec.name});
    const std::int64_t maxp = model_max_positions(spec);
    if (seq < 1 || (maxp > 0 && seq > maxp))
        throw InputError(HR_MSG("spec.seq_range",
                                "sequence length %1 is out of range: model '%2' has learned positions for 1 to %3 "
                                "tokens; pick a --seq in that range or raise the position embedding's max_positions"),
                         {std::to_string(seq), spec.name, std::to_string(maxp)});
    spec.input_shape = {seq};
}

std::int64_t model_vocabulary(const ModelSpec& spec) {
    return is_token_model(spec) ? A(spec.layers.front(), "vocab_size") : 0;
}

void resize_vocabulary(ModelSpec& spec, std::int64_t vocab) {
    if (!is_token_model(spec))
        throw InputError(HR_MSG("spec.vocab_not_language_model",
                                "model '%1' takes no tokens, so it has no vocabulary to resize"),
                         {spec.name});
    if (vocab < 2 || vocab > 10000000)
        throw InputError(HR_MSG("spec.vocab_range", "a vocabulary of %1 tokens is out of range (2 to 10000000)"),
                         {std::to_string(vocab)});
    spec.layers.front().attrs["vocab_size"] = vocab;
    for (auto& l : spec.layers)
        if (l.type == "lm_head") l.attrs["vocab_size"] = vocab;
    spec.num_classes = static_cast<int>(vocab);
}

}  // namespace hr
