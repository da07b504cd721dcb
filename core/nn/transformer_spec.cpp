#include "nn/transformer_spec.h"

#include <cmath>
#include <cstdio>

#include "base/error.h"

namespace hr {

namespace {

std::int64_t A(const LayerSpec& l, const char* n) { return std::llround(layer_attr(l, n)); }
bool B(const LayerSpec& l, const char* n) { return layer_attr(l, n) != 0; }

std::string batch(const Shape& s) {
    std::string r = "(N";
    for (auto d : s) r += ", " + std::to_string(d);
    return r + ")";
}

std::string fmt(const char* f, long long a, long long b = 0, long long c = 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

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

TransformerLayerShape analyze_transformer_layer(const LayerSpec& l, const Shape& in, const std::string& path,
                                                const ModelSpec& spec) {
    TransformerLayerShape r;
    const std::string& t = l.type;
    auto need_seq = [&](std::int64_t C, const char* what) -> bool {
        if (in.size() != 2) {
            r.error = "expects a sequence (N, T, " + std::to_string(C) + "), got " + batch(in) + "; " + what;
            return false;
        }
        if (in[1] != C) {
            r.error = "expects (N, T, " + std::to_string(C) + "), got " + batch(in) + "; set dim to " + std::to_string(in[1]);
            return false;
        }
        return true;
    };
    if (t == "token_embedding") {
        r.handled = true;
        const std::int64_t V = A(l, "vocab_size"), C = A(l, "dim");
        r.label = fmt("token_embedding(%lld→%lld)", V, C);
        if (path != "0") {
            r.error = "takes token ids from the data, so it must be the model's first layer";
            return r;
        }
        if (in.size() != 1) {
            r.error = "takes token ids (N, T), got " + batch(in) + "; set the model's \"input\" to [T], the sequence length";
            return r;
        }
        r.out = {in[0], C};
        r.params = V * C;
        return r;
    }
    if (t == "position_embedding") {
        r.handled = true;
        const std::int64_t P = A(l, "max_positions"), C = A(l, "dim");
        r.label = fmt("position_embedding(%lld×%lld)", P, C);
        if (!need_seq(C, "put it after an embedding")) return r;
        if (in[0] > P) {
            r.error = "the sequence has " + std::to_string(in[0]) + " tokens but only " + std::to_string(P) +
                      " positions are learned; raise max_positions to " + std::to_string(in[0]) + " or use a shorter sequence";
            return r;
        }
        r.out = in;
        r.params = P * C;
        return r;
    }
    if (t == "layernorm") {
        r.handled = true;
        const std::int64_t C = A(l, "dim");
        r.label = fmt("layernorm(%lld)", C);
        if (in.empty() || in.back() != C) {
            r.error = "normalises the last dimension of size " + std::to_string(C) + ", got " + batch(in) +
                      (in.empty() ? std::string() : "; set dim to " + std::to_string(in.back()));
            return r;
        }
        r.out = in;
        r.params = C * (B(l, "bias") ? 2 : 1);
        r.saved_bytes = 8 * (shape_numel(in) / C);  // mean and rstd, f32 per row
        return r;
    }
    if (t == "self_attention" || t == "transformer_block") {
        r.handled = true;
        const std::int64_t C = A(l, "dim"), H = A(l, "heads"), p_bias = B(l, "bias");
        const bool drop = layer_attr(l, "dropout") > 0;
        const std::int64_t F = t == "self_attention" ? 0 : (A(l, "hidden") == 0 ? 4 * C : A(l, "hidden"));
        r.label = t == "self_attention" ? fmt("self_attention(%lld, %lld heads)", C, H)
                                        : fmt("transformer_block(%lld, %lld heads, mlp %lld)", C, H, F);
        if (!need_seq(C, "attention works on token sequences")) return r;
        if (C % H != 0) {
            r.error = "dim " + std::to_string(C) + " is not divisible by " + std::to_string(H) +
                      " heads; pick a head count that divides it";
            return r;
        }
        const std::int64_t T = in[0];
        r.out = in;
        const std::int64_t attn_params = 3 * C * C + C * C + (p_bias ? 4 * C : 0);
        // qkv + att (f32) + lse (f32 per head and token) + mask (u8)
        const std::int64_t attn_saved = 4 * (3 * T * C + T * C) + 4 * H * T + (drop ? T * C : 0);
        if (t == "self_attention") {
            r.params = attn_params;
            r.saved_bytes = attn_saved;
        } else {
            r.params = attn_params + 2 * C * F + (p_bias ? F + C : 0) + 2 * C * (p_bias ? 2 : 1);
            // h1, x1, h2 + two LayerNorms' statistics + fc + mlp mask
            r.saved_bytes = attn_saved + 4 * 3 * T * C + 16 * T + 4 * T * F + (drop ? T * C : 0);
        }
        return r;
    }
    if (t == "rmsnorm") {
        r.handled = true;
        const std::int64_t C = A(l, "dim");
        r.label = fmt("rmsnorm(%lld)", C);
        if (in.empty() || in.back() != C) {
            r.error = "normalises the last dimension of size " + std::to_string(C) + ", got " + batch(in) +
                      (in.empty() ? std::string() : "; set dim to " + std::to_string(in.back()));
            return r;
        }
        r.out = in;
        r.params = C;
        r.saved_bytes = 4 * (shape_numel(in) / C);  // rstd, f32 per row
        return r;
    }
    if (t == "llama_block") {
        r.handled = true;
        const std::int64_t C = A(l, "dim"), H = A(l, "heads"), KV = A(l, "kv_heads") == 0 ? H : A(l, "kv_heads");
        const std::int64_t D = A(l, "head_dim") == 0 ? (H > 0 ? C / H : 0) : A(l, "head_dim"), F = A(l, "hidden");
        const bool qkv_bias = B(l, "qkv_bias");
        r.label = KV == H ? fmt("llama_block(%lld, %lld heads, mlp %lld)", C, H, F)
                          : fmt("llama_block(%lld, %lld heads / %lld kv, mlp ", C, H, KV) + std::to_string(F) + ")";
        if (!need_seq(C, "attention works on token sequences")) return r;
        if (A(l, "head_dim") == 0 && C % H != 0) {
            r.error = "dim " + std::to_string(C) + " is not divisible by " + std::to_string(H) +
                      " heads; pick a head count that divides it or set head_dim";
            return r;
        }
        if (H % KV != 0) {
            r.error = std::to_string(H) + " query heads cannot share " + std::to_string(KV) +
                      " key/value heads; pick a kv_heads that divides heads";
            return r;
        }
        if (D % 2 != 0) {
            r.error = "head size " + std::to_string(D) + " is odd; rotary embeddings pair dimensions, so pick an even head_dim";
            return r;
        }
        const std::int64_t T = in[0], P = A(l, "max_positions");
        if (T > P) {
            r.error = "the sequence has " + std::to_string(T) + " tokens but the block is built for " + std::to_string(P) +
                      "; raise max_positions to " + std::to_string(T) + " or use a shorter sequence";
            return r;
        }
        r.out = in;
        const std::int64_t Q = H * D, K = KV * D;
        r.params = 2 * C + C * (Q + 2 * K) + (qkv_bias ? Q + 2 * K : 0) + Q * C + 3 * C * F;
        // n1, qkv, att, h, n2 (f32), gate and up, lse (f32 per head and token), two rstd rows
        r.saved_bytes = 4 * (T * C + T * (Q + 2 * K) + T * Q + 2 * T * C + 2 * T * F) + 4 * H * T + 8 * T;
        return r;
    }
    if (t == "mlp") {
        r.handled = true;
        const std::int64_t C = A(l, "dim"), F = A(l, "hidden") == 0 ? 4 * C : A(l, "hidden");
        r.label = fmt("mlp(%lld→%lld→%lld)", C, F, C);
        if (in.empty() || in.size() > 2 || in.back() != C) {
            r.error = "expects (N, T, " + std::to_string(C) + ") or (N, " + std::to_string(C) + "), got " + batch(in) +
                      (in.empty() ? std::string() : "; set dim to " + std::to_string(in.back()));
            return r;
        }
        r.out = in;
        r.params = 2 * C * F + (B(l, "bias") ? F + C : 0);
        const std::int64_t rows = shape_numel(in) / C;
        r.saved_bytes = 4 * rows * F + (layer_attr(l, "dropout") > 0 ? rows * C : 0);
        return r;
    }
    if (t == "lm_head") {
        r.handled = true;
        const std::int64_t C = A(l, "dim"), V = A(l, "vocab_size");
        const bool tied = B(l, "tied");
        r.label = fmt(tied ? "lm_head(%lld→%lld, tied)" : "lm_head(%lld→%lld)", C, V);
        if (in.size() != 2 || in[1] != C) {
            r.error = "expects (N, T, " + std::to_string(C) + "), got " + batch(in) +
                      (in.size() == 2 ? "; set dim to " + std::to_string(in[1]) : std::string());
            return r;
        }
        if (tied) {
            const LayerSpec* e = spec.layers.empty() || spec.layers.front().type != "token_embedding"
                                     ? nullptr
                                     : &spec.layers.front();
            if (!e || A(*e, "vocab_size") != V || A(*e, "dim") != C) {
                r.error = "is tied to the token embedding, which must be the first layer with vocab_size " +
                          std::to_string(V) + " and dim " + std::to_string(C) + "; match them or set tied to false";
                return r;
            }
        }
        r.out = {in[0], V};
        r.params = tied ? 0 : V * C;
        return r;
    }
    if (t == "patch_embedding") {
        r.handled = true;
        const std::int64_t Ci = A(l, "in_channels"), C = A(l, "dim"), p = A(l, "patch_size");
        r.label = fmt("patch_embedding(%lld→%lld, %lldpx)", Ci, C, p);
        if (in.size() != 3 || in[0] != Ci) {
            r.error = "expects images (N, " + std::to_string(Ci) + ", H, W), got " + batch(in) +
                      (in.size() == 3 ? "; set in_channels to " + std::to_string(in[0]) : std::string());
            return r;
        }
        if (in[1] % p != 0 || in[2] % p != 0) {
            r.error = "patches of " + std::to_string(p) + " pixels do not tile " + std::to_string(in[1]) + "x" +
                      std::to_string(in[2]) + " images; pick a patch_size that divides both";
            return r;
        }
        r.out = {(in[1] / p) * (in[2] / p), C};
        r.params = C * Ci * p * p + C;
        return r;
    }
    if (t == "class_token") {
        r.handled = true;
        const std::int64_t C = A(l, "dim");
        r.label = fmt("class_token(%lld)", C);
        if (!need_seq(C, "put it after a patch_embedding")) return r;
        r.out = {in[0] + 1, C};
        r.params = C;
        return r;
    }
    if (t == "class_token_pool") {
        r.handled = true;
        r.label = "class_token_pool";
        if (in.size() != 2) {
            r.error = "expects a sequence (N, T, C), got " + batch(in) + "; put it after the transformer blocks";
            return r;
        }
        r.out = {in[1]};
        return r;
    }
    return r;
}

}  // namespace hr
