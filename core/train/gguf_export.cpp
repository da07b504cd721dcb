// A trained LLaMA-family model as a GGUF file (train/gguf_export.h).
#include "train/gguf_export.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <functional>
#include <sstream>
#include <string_view>

#include <sentencepiece_processor.h>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "base/atomic_file.h"
#include "base/dtype.h"
#include "base/error.h"
#include "nn/hf_config.h"
#include "nn/transformer_spec.h"
#include "train/checkpoint.h"

namespace hr {

namespace {
namespace fs = std::filesystem;

// llama.cpp's token types (llama_token_type)
constexpr std::int32_t kGgufNormal = 1, kGgufControl = 3, kGgufUserDefined = 4, kGgufUnused = 5;

// The pre-tokenizer patterns llama.cpp knows by name (its llama-vocab.cpp), as Hugging Face writes them.
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Jinja chat templates of the families (what the families' tokenizer_config.json carry, Llama 3.0's and
// Qwen2's without the default system text), the same text data/chat_template.h renders.
const char* const kLlama3Template =
    "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
const char* const kChatmlTemplate =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// Mistral's [INST] format as data/chat_template.h renders it (system messages go before the next user
// message, after a blank line; llama.cpp adds <s> itself when add_bos_token is on, the template writes bos_token)
const char* const kMistralTemplate =
    "{{ bos_token }}{% set ns = namespace(system='') %}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{% if ns.system %}{% set ns.system = ns.system + '\n\n' + message['content'] %}"
    "{% else %}{% set ns.system = message['content'] %}{% endif %}"
    "{% elif message['role'] == 'user' %}{{ '[INST] ' + (ns.system + '\n\n' if ns.system else '') + message['content'] + "
    "' [/INST]' }}{% set ns.system = '' %}"
    "{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}";

// GPT-2's bytes_to_unicode: the character a byte-level BPE writes for byte b, as UTF-8.
std::string gguf_byte_char(int b) {
    int cp = b;
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    if (!printable) {
        int n = 0;
        for (int k = 0; k < b; ++k)
            if (!((k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || (k >= 0xAE && k <= 0xFF))) ++n;
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return s;
}

struct GgufVocab {
    std::string description;
    std::string chat_template_name;
    std::vector<GgufKv> kvs;
};

[[noreturn]] void refuse_tokenizer(const std::string& weights, const std::string& kind, const std::string& why) {
    throw InputError(HR_MSG("gguf.tokenizer", "%1: the run's tokenizer (%2) cannot go into the GGUF file: %3. "
                                              "GGUF export takes the byte tokenizer, a Hugging Face byte-level "
                                              "BPE tokenizer.json (GPT-2, Llama 3, Qwen2) or a SentencePiece BPE "
                                              "model (tokenizer.model, bpe:N); train with one of them"),
                     {weights, kind, why});
}

// ---- a SentencePiece model's ModelProto, read for what llama.cpp's "llama" tokenizer needs ----------------
// (sentencepiece_model.proto: ModelProto 1 pieces {1 piece, 2 score, 3 type}, 2 trainer_spec {3 model_type,
// 35 byte_fallback}, 3 normalizer_spec {1 name, 2 precompiled_charsmap, 3 add_dummy_prefix,
// 4 remove_extra_whitespaces, 5 escape_whitespaces}; proto2 defaults where a field is absent.)

// Calls f(field, wire type, varint value, bytes) for each field of a message; false when it is malformed.
bool proto_fields(std::string_view m, const std::function<void(int, int, std::uint64_t, std::string_view)>& f) {
    std::size_t i = 0;
    auto varint = [&](std::uint64_t& v) {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (i >= m.size()) return false;
            const auto b = static_cast<std::uint8_t>(m[i++]);
            v |= std::uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    };
    while (i < m.size()) {
        std::uint64_t key = 0, v = 0;
        if (!varint(key)) return false;
        const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
        std::string_view bytes;
        if (wire == 0) {
            if (!varint(v)) return false;
        } else if (wire == 1 || wire == 5) {
            const std::size_t n = wire == 1 ? 8 : 4;
            if (m.size() - i < n) return false;
            bytes = m.substr(i, n);
            i += n;
        } else if (wire == 2) {
            if (!varint(v) || v > m.size() - i) return false;
            bytes = m.substr(i, static_cast<std::size_t>(v));
            i += static_cast<std::size_t>(v);
        } else {
            return false;
        }
        f(field, wire, v, bytes);
    }
    return true;
}

}  // namespace

GgufSentencePiece gguf_sentencepiece(const std::string& model, const std::string& where) {
    auto bad = [&](const std::string& why) {
        throw InputError(HR_MSG("gguf.spm", "%1: the SentencePiece model cannot go into the GGUF file: %2"), {where, why});
    };
    GgufSentencePiece r;
    int model_type = 1;  // UNIGRAM unless said
    bool remove_extra_whitespaces = true, escape_whitespaces = true;
    std::string normalizer = "nmt_nfkc", charsmap;
    bool ok = true;  // set before the walk: the nested walks below fold their results into it
    ok = proto_fields(model, [&](int field, int wire, std::uint64_t, std::string_view bytes) {
        if (field == 1 && wire == 2) {
            std::string piece;
            float score = 0;
            int type = 1;  // NORMAL
            ok = proto_fields(bytes, [&](int f, int w, std::uint64_t v, std::string_view b) {
                if (f == 1 && w == 2) piece = std::string(b);
                if (f == 2 && w == 5) std::memcpy(&score, b.data(), 4);
                if (f == 3 && w == 0) type = static_cast<int>(v);
            }) && ok;
            r.pieces.push_back(std::move(piece));
            r.scores.push_back(score);
            r.types.push_back(type);
        } else if (field == 2 && wire == 2) {
            ok = proto_fields(bytes, [&](int f, int w, std::uint64_t v, std::string_view) {
                if (f == 3 && w == 0) model_type = static_cast<int>(v);
            }) && ok;
        } else if (field == 3 && wire == 2) {
            ok = proto_fields(bytes, [&](int f, int w, std::uint64_t v, std::string_view b) {
                if (f == 1 && w == 2) normalizer = std::string(b);
                if (f == 2 && w == 2) charsmap = std::string(b);
                if (f == 3 && w == 0) r.add_space_prefix = v != 0;
                if (f == 4 && w == 0) remove_extra_whitespaces = v != 0;
                if (f == 5 && w == 0) escape_whitespaces = v != 0;
            }) && ok;
        }
    }) && ok;
    // checked before libsentencepiece sees the model: its trie builder aborts the process on an empty piece
    if (!ok || r.pieces.empty()) bad("its pieces could not be read");
    for (const std::string& piece : r.pieces)
        if (piece.empty()) bad("it has an empty piece");
    sentencepiece::SentencePieceProcessor sp;
    if (const auto st = sp.LoadFromSerializedProto(model); !st.ok()) bad("it is not a SentencePiece model (" + st.ToString() + ")");
    if (static_cast<int>(r.pieces.size()) != sp.GetPieceSize()) bad("its pieces could not be read");
    for (int& t : r.types)
        if (t < 1 || t > 6) bad("a piece has the unknown type " + std::to_string(t));
    if (model_type != 2)
        bad(model_type == 1 ? "it is a unigram model; llama.cpp's llama tokenizer merges pieces by score, which gives "
                              "a BPE model's ids and a unigram model's only sometimes"
                            : "it is neither a BPE nor a unigram model");
    if (!charsmap.empty())
        bad("its normalizer (" + normalizer + ") rewrites the text before tokenizing, which llama.cpp does not; "
            "train the tokenizer with --normalization_rule_name=identity");
    if (remove_extra_whitespaces)
        bad("it removes repeated spaces, which llama.cpp keeps; train it with --remove_extra_whitespaces=false");
    if (!escape_whitespaces) bad("it keeps spaces as they are instead of as \xe2\x96\x81, which llama.cpp expects");
    r.bos = sp.bos_id();
    r.eos = sp.eos_id();
    r.unk = sp.unk_id();
    r.pad = sp.pad_id();
    return r;
}

namespace {

// The tokenizer.ggml.* entries for `vocab` model rows.
GgufVocab gguf_tokenizer(const SafeTensorsFile& raw, const std::string& weights, std::int64_t vocab) {
    const auto meta = [&](const char* k) {
        const auto it = raw.metadata.find(k);
        return it == raw.metadata.end() ? std::string() : it->second;
    };
    const std::string kind = meta("tokenizer").empty() ? "byte" : meta("tokenizer");
    GgufVocab t;
    std::vector<std::string> tokens(static_cast<std::size_t>(vocab));
    std::vector<std::int32_t> types(static_cast<std::size_t>(vocab), kGgufUnused);
    std::vector<std::string> merges;
    std::string pre;
    std::int64_t bos = -1, eos = -1;
    bool add_bos = false;
    auto put = [&](std::int64_t id, const std::string& text, std::int32_t type) {
        if (id < 0 || id >= vocab)
            refuse_tokenizer(weights, kind, "its token " + std::to_string(id) + " is past the model's " +
                                                std::to_string(vocab) + " rows");
        tokens[static_cast<std::size_t>(id)] = text;
        types[static_cast<std::size_t>(id)] = type;
    };
    if (kind == "byte") {
        if (vocab < 256) refuse_tokenizer(weights, kind, "the model has fewer than 256 token rows");
        for (int b = 0; b < 256; ++b) put(b, gguf_byte_char(b), kGgufNormal);
        pre = "gpt-2";  // any pattern: with no merges every byte stays its own token
        bos = eos = 0;  // NUL, never added (add_bos/add_eos false): llama.cpp needs ids, the model has none
        t.description = "gpt2 (256 bytes, no merges)";
    } else if (kind == "hf-bpe") {
        const fs::path file = fs::path(weights).parent_path() / fs::path(meta("tokenizer_file")).filename();
        std::ifstream in(file, std::ios::binary);
        if (!in) refuse_tokenizer(weights, kind, "its file " + file.string() + " is not beside the weights");
        std::stringstream ss;
        ss << in.rdbuf();
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(ss.str());
        } catch (const std::exception& e) {
            refuse_tokenizer(weights, kind, file.string() + " is not JSON (" + e.what() + ")");
        }
        const nlohmann::json& p = j["pre_tokenizer"];
        auto byte_level_ok = [](const nlohmann::json& b) {
            return b.is_object() && b.value("type", "") == "ByteLevel" && !b.value("add_prefix_space", false);
        };
        if (byte_level_ok(p) && p.value("use_regex", true)) {
            pre = "gpt-2";
        } else if (p.is_object() && p.value("type", "") == "Sequence" && p["pretokenizers"].is_array() &&
                   p["pretokenizers"].size() == 2 && byte_level_ok(p["pretokenizers"][1]) &&
                   !p["pretokenizers"][1].value("use_regex", true) &&
                   p["pretokenizers"][0].value("type", "") == "Split") {
            const std::string pattern = p["pretokenizers"][0]["pattern"].value("Regex", "");
            if (pattern == kLlama3Pattern) pre = "llama-bpe";
            else if (pattern == kQwen2Pattern) pre = "qwen2";
            else
                refuse_tokenizer(weights, kind, "llama.cpp knows no pre-tokenizer with the pattern " + pattern);
        } else {
            refuse_tokenizer(weights, kind, "its pre_tokenizer is not GPT-2's, Llama 3's or Qwen2's");
        }
        const nlohmann::json& m = j["model"];
        if (!m.is_object() || !m["vocab"].is_object() || !m["merges"].is_array())
            refuse_tokenizer(weights, kind, "it has no model.vocab and model.merges");
        for (const auto& [text, id] : m["vocab"].items()) put(id.get<std::int64_t>(), text, kGgufNormal);
        for (const auto& mg : m["merges"]) {
            if (mg.is_string()) merges.push_back(mg.get<std::string>());
            else if (mg.is_array() && mg.size() == 2) merges.push_back(mg[0].get<std::string>() + " " + mg[1].get<std::string>());
            else refuse_tokenizer(weights, kind, "a merge is neither \"a b\" nor [\"a\", \"b\"]");
        }
        std::map<std::string, std::int64_t> added;
        if (j["added_tokens"].is_array())
            for (const auto& a : j["added_tokens"]) {
                const std::string text = a.value("content", "");
                const std::int64_t id = a.value("id", std::int64_t{-1});
                put(id, text, a.value("special", false) ? kGgufControl : kGgufUserDefined);
                added[text] = id;
            }
        auto id_of = [&](const char* s) { return added.count(s) ? added[s] : std::int64_t{-1}; };
        if (pre == "llama-bpe") {
            bos = id_of("<|begin_of_text|>");
            eos = id_of("<|eot_id|>") >= 0 ? id_of("<|eot_id|>") : id_of("<|end_of_text|>");
            add_bos = bos >= 0;  // Llama 3's post-processor puts <|begin_of_text|> first
            if (bos >= 0 && eos >= 0) t.chat_template_name = "llama3";
        } else if (pre == "qwen2") {
            eos = id_of("<|im_end|>") >= 0 ? id_of("<|im_end|>") : id_of("<|endoftext|>");
            bos = id_of("<|endoftext|>") >= 0 ? id_of("<|endoftext|>") : eos;
            if (id_of("<|im_start|>") >= 0 && id_of("<|im_end|>") >= 0) t.chat_template_name = "chatml";
        } else {
            bos = eos = id_of("<|endoftext|>");
        }
        if (bos < 0) bos = eos;
        if (eos < 0) eos = bos;
        if (bos < 0) bos = eos = 0;
        t.description = "gpt2 (" + pre + ", " + std::to_string(merges.size()) + " merges)";
    } else if (kind == "sentencepiece" || kind.rfind("bpe:", 0) == 0) {
        const std::string name = meta("tokenizer_file").empty() ? "tokenizer.model" : meta("tokenizer_file");
        const fs::path file = fs::path(weights).parent_path() / fs::path(name).filename();
        std::ifstream in(file, std::ios::binary);
        if (!in) refuse_tokenizer(weights, kind, "its file " + file.string() + " is not beside the weights");
        std::stringstream ss;
        ss << in.rdbuf();
        GgufSentencePiece sp = gguf_sentencepiece(ss.str(), file.string());
        std::vector<float> scores(static_cast<std::size_t>(vocab), -1000.0f);
        for (std::size_t i = 0; i < sp.pieces.size(); ++i) {
            put(static_cast<std::int64_t>(i), sp.pieces[i], sp.types[i]);
            scores[i] = sp.scores[i];
        }
        for (std::size_t i = 0; i < tokens.size(); ++i)
            if (types[i] == kGgufUnused && i >= sp.pieces.size()) tokens[i] = "[PAD" + std::to_string(i) + "]";
        // LLaMA 2: <s> added at the start when the model has one, never </s>
        const std::int64_t bos_id = sp.bos >= 0 ? sp.bos : sp.unk, eos_id = sp.eos >= 0 ? sp.eos : sp.unk;
        t.kvs = {{"tokenizer.ggml.model", std::string("llama")},
                 {"tokenizer.ggml.tokens", std::move(tokens)},
                 {"tokenizer.ggml.scores", std::move(scores)},
                 {"tokenizer.ggml.token_type", std::move(types)},
                 {"tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(std::max<std::int64_t>(0, bos_id))},
                 {"tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(std::max<std::int64_t>(0, eos_id))},
                 {"tokenizer.ggml.add_bos_token", sp.bos >= 0},
                 {"tokenizer.ggml.add_eos_token", false},
                 {"tokenizer.ggml.add_space_prefix", sp.add_space_prefix}};
        if (sp.unk >= 0) t.kvs.push_back({"tokenizer.ggml.unknown_token_id", static_cast<std::uint32_t>(sp.unk)});
        if (sp.pad >= 0) t.kvs.push_back({"tokenizer.ggml.padding_token_id", static_cast<std::uint32_t>(sp.pad)});
        t.description = "llama (SentencePiece BPE, " + std::to_string(sp.pieces.size()) + " pieces)";
        // data/chat_template.h's auto: a SentencePiece model with <s> and </s> is Mistral's family
        if (sp.bos >= 0 && sp.eos >= 0 && sp.pieces[static_cast<std::size_t>(sp.bos)] == "<s>" &&
            sp.pieces[static_cast<std::size_t>(sp.eos)] == "</s>")
            t.chat_template_name = "mistral";
        return t;
    } else {
        refuse_tokenizer(weights, kind, "llama.cpp has no vocabulary that maps characters to ids in first-seen order without merges or byte fallback (docs/export.md)");
    }
    for (std::size_t i = 0; i < tokens.size(); ++i)
        if (types[i] == kGgufUnused) tokens[i] = "[PAD" + std::to_string(i) + "]";
    t.kvs.push_back({"tokenizer.ggml.model", std::string("gpt2")});
    t.kvs.push_back({"tokenizer.ggml.pre", pre});
    t.kvs.push_back({"tokenizer.ggml.tokens", std::move(tokens)});
    t.kvs.push_back({"tokenizer.ggml.token_type", std::move(types)});
    t.kvs.push_back({"tokenizer.ggml.merges", std::move(merges)});
    t.kvs.push_back({"tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(bos)});
    t.kvs.push_back({"tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(eos)});
    t.kvs.push_back({"tokenizer.ggml.add_bos_token", add_bos});
    t.kvs.push_back({"tokenizer.ggml.add_eos_token", false});
    return t;
}

// GGUF's name of a Hugging Face LLaMA-layout tensor ("" for none).
std::string gguf_name(const std::string& hf) {
    static const std::map<std::string, std::string> top = {
        {"model.embed_tokens.weight", "token_embd.weight"}, {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"}};
    static const std::map<std::string, std::string> block = {
        {"input_layernorm.weight", "attn_norm.weight"},  {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.k_proj.weight", "attn_k.weight"},     {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.q_proj.bias", "attn_q.bias"},         {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.bias", "attn_v.bias"},         {"self_attn.o_proj.weight", "attn_output.weight"},
        {"post_attention_layernorm.weight", "ffn_norm.weight"}, {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},          {"mlp.down_proj.weight", "ffn_down.weight"}};
    if (const auto it = top.find(hf); it != top.end()) return it->second;
    const std::string pfx = "model.layers.";
    if (hf.rfind(pfx, 0) != 0) return "";
    const std::size_t dot = hf.find('.', pfx.size());
    if (dot == std::string::npos) return "";
    const std::string n = hf.substr(pfx.size(), dot - pfx.size());
    if (n.empty() || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; })) return "";
    const auto it = block.find(hf.substr(dot + 1));
    return it == block.end() ? "" : "blk." + n + "." + it->second;
}

// Values [k, k + n) of a tensor's bytes as f32, into `out`.
void gguf_values(const SafeTensor& t, std::size_t k, std::size_t n, float* out) {
    const std::uint8_t* p = t.bytes();
    switch (t.dtype) {
        case DType::f32: std::memcpy(out, p + 4 * k, 4 * n); return;
        case DType::f64:
            for (std::size_t i = 0; i < n; ++i) {
                double v;
                std::memcpy(&v, p + 8 * (k + i), 8);
                out[i] = static_cast<float>(v);
            }
            return;
        case DType::bf16:
        case DType::f16:
            for (std::size_t i = 0; i < n; ++i) {
                std::uint16_t h;
                std::memcpy(&h, p + 2 * (k + i), 2);
                out[i] = t.dtype == DType::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
            }
            return;
        default: std::fill(out, out + n, 0.0f);
    }
}

struct GgufPlanned {
    const SafeTensor* src = nullptr;  // null: rope_freqs
    GgufTensorInfo info;
    std::int64_t permute_heads = 0;   // > 0: rows permuted by this many heads (llama's Q/K)
};

}  // namespace

GgufTensorType parse_gguf_type(const std::string& name) {
    if (name == "f32") return GgufTensorType::f32;
    if (name == "f16") return GgufTensorType::f16;
    if (name == "bf16") return GgufTensorType::bf16;
    if (name == "q8_0") return GgufTensorType::q8_0;
    throw InputError(HR_MSG("gguf.type", "unknown GGUF type '%1'; pick f32, f16, bf16 or q8_0"), {name});
}

GgufTensorType gguf_stored_type(GgufTensorType requested, const std::vector<std::int64_t>& shape) {
    if (shape.size() != 2) return GgufTensorType::f32;
    if (requested == GgufTensorType::q8_0 && shape.back() % 32 != 0) return GgufTensorType::f16;
    return requested;
}

void round_as_gguf(SafeTensorsFile& f, GgufTensorType type, const std::string& path) {
    merge_lora_adapters_in_place(f, path);
    std::vector<float> row;
    for (SafeTensor& t : f.tensors) {
        if (t.shape.size() != 2) continue;
        if (t.dtype != DType::f32 && t.dtype != DType::f64 && t.dtype != DType::bf16 && t.dtype != DType::f16) continue;
        const GgufTensorType tt = gguf_stored_type(type, t.shape);
        if (tt == GgufTensorType::f32 && t.dtype != DType::f64) continue;  // f16 / bf16 widen exactly
        const std::size_t cols = static_cast<std::size_t>(t.shape[1]), rows = static_cast<std::size_t>(t.shape[0]);
        std::vector<std::uint8_t> out(4 * rows * cols);
        row.resize(cols);
        for (std::size_t r = 0; r < rows; ++r) {
            gguf_values(t, r * cols, cols, row.data());
            gguf_round_trip(tt, row.data(), cols);
            std::memcpy(out.data() + 4 * r * cols, row.data(), 4 * cols);
        }
        t.data = std::move(out);
        t.dtype = DType::f32;
        t.mapping.reset();
        t.mapped = nullptr;
        t.mapped_size = 0;
    }
}

std::string ollama_modelfile(const std::string& gguf_name, const std::string& chat_template) {
    // Ollama's Go templates: llama.cpp adds <|begin_of_text|> itself (add_bos_token), so the template does not
    std::string tmpl = "{{ range .Messages }}{{ .Content }}{{ end }}", stop;
    if (chat_template == "llama3") {
        tmpl = "{{ range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>\n\n{{ .Content }}<|eot_id|>{{ end }}"
               "<|start_header_id|>assistant<|end_header_id|>\n\n";
        stop = "<|eot_id|>";
    } else if (chat_template == "chatml") {
        tmpl = "{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n";
        stop = "<|im_end|>";
    } else if (chat_template == "mistral") {  // system messages before the next user message; <s> is llama.cpp's
        tmpl = "{{ $system := \"\" }}{{ range .Messages }}{{ if eq .Role \"system\" }}{{ if $system }}"
               "{{ $system = printf \"%s\\n\\n%s\" $system .Content }}{{ else }}{{ $system = .Content }}{{ end }}"
               "{{ else if eq .Role \"user\" }}[INST] {{ if $system }}{{ $system }}\n\n{{ end }}{{ .Content }} [/INST]"
               "{{ $system = \"\" }}{{ else }}{{ .Content }}</s>{{ end }}{{ end }}";
        stop = "</s>";
    }
    std::string m = "FROM ./" + gguf_name + "\nTEMPLATE \"\"\"" + tmpl + "\"\"\"\n";
    if (!stop.empty()) m += "PARAMETER stop \"" + stop + "\"\n";
    return m;
}

GgufExportResult export_gguf(const std::string& weights_in, const std::string& path, GgufTensorType type, bool ollama) {
    std::error_code ec;
    std::string weights = weights_in;
    if (fs::is_directory(weights, ec)) weights = (fs::path(weights) / "model.safetensors").string();
    const SafeTensorsFile raw = read_safetensors(weights, SafetensorsRead::mapped);
    const ModelSpec spec = model_spec_of(raw, weights);
    if (!is_llama_layout(spec))
        throw InputError(HR_MSG("gguf.layout", "%1: the model '%2' is not in the LLaMA layout (token_embedding, "
                                               "llama_block..., rmsnorm, lm_head), the one llama.cpp's llama and "
                                               "qwen2 architectures read; a GPT with learned positions or a custom "
                                               "spec has no GGUF form here. Export a LLaMA-family run"),
                         {weights, spec.name});
    const HfConfig c = hf_config_of_spec(spec);
    const SafeTensorsFile merged = merge_lora_adapters(raw, weights);
    const GgufVocab tok = gguf_tokenizer(raw, weights, c.vocab_size);

    GgufExportResult r;
    r.architecture = c.qkv_bias ? "qwen2" : "llama";
    r.tokenizer = tok.description;
    r.chat_template = tok.chat_template_name;
    const std::string a = r.architecture;
    const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    std::uint32_t file_type = 0;
    switch (type) {
        case GgufTensorType::f32: file_type = 0; break;
        case GgufTensorType::f16: file_type = 1; break;
        case GgufTensorType::q8_0: file_type = 7; break;
        case GgufTensorType::bf16: file_type = 32; break;
    }
    std::vector<GgufKv> kvs = {
        {"general.architecture", a},
        {"general.name", spec.name.empty() ? std::string("headroom") : spec.name},
        {"general.file_type", file_type},
        {"general.quantization_version", std::uint32_t{2}},
        {a + ".vocab_size", u32(c.vocab_size)},
        {a + ".context_length", u32(c.max_position_embeddings)},
        {a + ".embedding_length", u32(c.hidden_size)},
        {a + ".block_count", u32(c.num_hidden_layers)},
        {a + ".feed_forward_length", u32(c.intermediate_size)},
        {a + ".attention.head_count", u32(c.num_attention_heads)},
        {a + ".attention.head_count_kv", u32(c.num_key_value_heads)},
        {a + ".attention.key_length", u32(c.head_dim)},
        {a + ".attention.value_length", u32(c.head_dim)},
        {a + ".attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps)},
        {a + ".rope.freq_base", static_cast<float>(c.rope_theta)},
        {a + ".rope.dimension_count", u32(c.head_dim)},
    };
    for (const auto& kv : tok.kvs) kvs.push_back(kv);
    {  // the chat template: the folder's tokenizer_config.json's own, else the named one the run used
        const fs::path dir = fs::path(weights).parent_path();
        auto read_json = [&](const fs::path& f) {
            std::ifstream in(f, std::ios::binary);
            std::stringstream ss;
            ss << in.rdbuf();
            try {
                return nlohmann::json::parse(ss.str());
            } catch (const std::exception& e) {
                throw InputError(HR_MSG("gguf.json", "%1 is not JSON (%2); repair or remove it and export again"),
                                 {f.string(), e.what()});
            }
        };
        if (fs::is_regular_file(dir / "run.json", ec)) {  // instruction data: the template it was trained with
            const nlohmann::json run = read_json(dir / "run.json");
            const auto d = run.find("data");
            if (d != run.end() && d->is_object() && d->contains("chat_template") && (*d)["chat_template"].is_string() &&
                !(*d)["chat_template"].get<std::string>().empty()) {
                r.chat_template = (*d)["chat_template"].get<std::string>();
                if (r.chat_template == "plain") r.chat_template.clear();
            }
        }
        std::string jinja;
        if (fs::is_regular_file(dir / "tokenizer_config.json", ec)) {
            const nlohmann::json tc = read_json(dir / "tokenizer_config.json");
            const auto ct = tc.is_object() ? tc.find("chat_template") : tc.end();
            if (tc.is_object() && ct != tc.end()) {
                if (ct->is_string()) jinja = ct->get<std::string>();
                else if (ct->is_array())  // [{name, template}, ...]: the default one
                    for (const auto& e : *ct)
                        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string())
                            jinja = e["template"].get<std::string>();
            }
            if (!jinja.empty()) r.chat_template_source = (dir / "tokenizer_config.json").string();
        }
        if (jinja.empty()) {
            if (r.chat_template == "llama3") jinja = kLlama3Template;
            if (r.chat_template == "chatml") jinja = kChatmlTemplate;
            if (r.chat_template == "mistral") jinja = kMistralTemplate;
        }
        if (!jinja.empty()) kvs.push_back({"tokenizer.chat_template", jinja});
    }

    // the tensors: names, shapes, types; Q/K rows permuted for llama
    std::vector<GgufPlanned> plan;
    std::vector<float> rope_freqs;
    if (c.rope_scaling) {  // ggml divides each frequency by rope_freqs[i]: base / scaled
        if (a != "llama")
            throw InputError(HR_MSG("gguf.rope", "%1: Llama 3 rope scaling on a qwen2 model has no GGUF form; "
                                                 "export a model without rope_scaling"),
                             {weights});
        RopeParams base{c.rope_theta};
        RopeParams scaled{c.rope_theta, c.rope_scaling->factor, c.rope_scaling->low_freq_factor,
                          c.rope_scaling->high_freq_factor,
                          static_cast<double>(c.rope_scaling->original_max_position_embeddings)};
        const auto f0 = rope_frequencies(base, c.head_dim), f1 = rope_frequencies(scaled, c.head_dim);
        for (std::size_t i = 0; i < f0.size(); ++i) rope_freqs.push_back(static_cast<float>(double(f0[i]) / f1[i]));
        GgufPlanned p;
        p.info = {"rope_freqs.weight", {static_cast<std::int64_t>(rope_freqs.size())}, GgufTensorType::f32};
        plan.push_back(p);
    }
    for (const auto& t : merged.tensors) {
        if (c.tie_word_embeddings && t.name == "lm_head.weight") continue;  // llama.cpp uses token_embd
        const std::string name = gguf_name(t.name);
        if (name.empty())
            throw InputError(HR_MSG("gguf.tensor", "%1: the tensor '%2' has no place in llama.cpp's %3 "
                                                   "architecture; export a model in the plain LLaMA layout"),
                             {weights, t.name, a});
        if (t.dtype != DType::f32 && t.dtype != DType::f64 && t.dtype != DType::bf16 && t.dtype != DType::f16)
            throw InputError(HR_MSG("gguf.dtype", "%1: the tensor '%2' is stored as %3, not a float type"),
                             {weights, t.name, dtype_name(t.dtype)});
        GgufPlanned p;
        p.src = &t;
        p.info.name = name;
        p.info.shape = t.shape;
        p.info.type = gguf_stored_type(type, p.info.shape);
        if (a == "llama") {
            if (t.name.find(".q_proj.") != std::string::npos) p.permute_heads = c.num_attention_heads;
            if (t.name.find(".k_proj.") != std::string::npos) p.permute_heads = c.num_key_value_heads;
        }
        plan.push_back(p);
    }
    // every tensor llama.cpp asks for, with its shape (a file missing one would only fail in llama.cpp)
    {
        const std::int64_t C = c.hidden_size, F = c.intermediate_size, q = c.num_attention_heads * c.head_dim,
                           kv = c.num_key_value_heads * c.head_dim;
        std::map<std::string, std::vector<std::int64_t>> want = {
            {"token_embd.weight", {c.vocab_size, C}}, {"output_norm.weight", {C}}};
        if (!c.tie_word_embeddings) want["output.weight"] = {c.vocab_size, C};
        for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
            const std::string b = "blk." + std::to_string(i) + ".";
            want[b + "attn_norm.weight"] = {C};
            want[b + "attn_q.weight"] = {q, C};
            want[b + "attn_k.weight"] = {kv, C};
            want[b + "attn_v.weight"] = {kv, C};
            want[b + "attn_output.weight"] = {C, q};
            want[b + "ffn_norm.weight"] = {C};
            want[b + "ffn_gate.weight"] = {F, C};
            want[b + "ffn_up.weight"] = {F, C};
            want[b + "ffn_down.weight"] = {C, F};
            if (c.qkv_bias) want[b + "attn_q.bias"] = {q}, want[b + "attn_k.bias"] = {kv}, want[b + "attn_v.bias"] = {kv};
        }
        for (const auto& p : plan) {
            if (!p.src) continue;
            const auto it = want.find(p.info.name);
            if (it == want.end() || it->second != p.info.shape)
                throw InputError(HR_MSG("gguf.shape_of", "%1: the tensor '%2' does not have the shape the model's "
                                                         "configuration gives it; the file is damaged"),
                                 {weights, p.src->name});
            want.erase(it);
        }
        if (!want.empty())
            throw InputError(HR_MSG("gguf.missing", "%1: the tensor llama.cpp reads as '%2' is missing; export the "
                                                    "model.safetensors a run wrote"),
                             {weights, want.begin()->first});
    }
    std::vector<GgufTensorInfo> infos;
    for (const auto& p : plan) infos.push_back(p.info);
    r.tensors = static_cast<std::int64_t>(infos.size());

    // checked: now the file, tensor by tensor, a few MiB of rows at a time
    GgufWriter w(path, kvs, infos);
    std::vector<float> rows;
    for (const auto& p : plan) {
        if (!p.src) {
            w.append_rows(rope_freqs.data(), rope_freqs.size());
            continue;
        }
        const bool matrix = p.info.shape.size() == 2;
        const std::int64_t row_len = p.info.shape.back();           // values per row
        const std::int64_t nrows = matrix ? p.info.shape[0] : 1;
        const std::int64_t hd = p.permute_heads > 0 ? nrows / p.permute_heads : 0;
        // source row of output row o: Hugging Face's rotate-half halves -> interleaved pairs within a head
        auto src_row = [&](std::int64_t o) {
            if (hd == 0) return o;
            const std::int64_t h = o / hd, k = o % hd;
            return h * hd + (k % 2) * (hd / 2) + k / 2;
        };
        const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{1} << 22) / row_len);
        for (std::int64_t r0 = 0; r0 < nrows; r0 += chunk) {
            const std::int64_t rn = std::min(chunk, nrows - r0);
            rows.resize(static_cast<std::size_t>(rn * row_len));
            for (std::int64_t i = 0; i < rn; ++i) {
                gguf_values(*p.src, static_cast<std::size_t>(src_row(r0 + i) * row_len), static_cast<std::size_t>(row_len),
                            rows.data() + i * row_len);
            }
            w.append_rows(rows.data(), rows.size());
        }
    }
    r.file_bytes = w.file_bytes();
    w.commit();
    if (ollama) {
        const fs::path p(path);
        r.modelfile = (p.parent_path() / "Modelfile").string();
        write_file_atomic(r.modelfile, ollama_modelfile(p.filename().string(), r.chat_template));
    }
    return r;
}

}  // namespace hr
