#pragma once
// A trained LLaMA-family model as one GGUF file for llama.cpp, Ollama and LM Studio (docs/export.md).
//
// What llama.cpp's own converter (convert_hf_to_gguf.py) writes for these architectures:
//   general.architecture "llama" (Llama, Mistral: Q and K rows permuted from Hugging Face's rotate-half
//   layout to the interleaved pairs llama.cpp's rotary embedding uses, by heads for Q and by key/value heads
//   for K) or "qwen2" (q/k/v biases; its rotary embedding is rotate-half, nothing permuted); the
//   hyper-parameters under ARCH.*; rope_freqs (f32, head_dim / 2 divisors of the frequencies) for Llama 3's
//   rope scaling; the head as output.weight unless tied to token_embd; names token_embd, blk.N.attn_norm,
//   attn_q/k/v/output, ffn_norm, ffn_gate/up/down, output_norm.
//   Types: f32 everywhere, or f16 / bf16 / q8_0 for the matrices with 1-D tensors in f32 (q8_0: a matrix
//   whose rows are not a multiple of 32 values stays f16). A LoRA run's adapters are merged in f32 first.
// The tokenizer goes with it: Headroom's byte tokenizer as a "gpt2" vocabulary of the 256 byte tokens and no
// merges (nothing added at the start or end); a Hugging Face byte-level BPE tokenizer.json with its merges,
// its added tokens (special ones as control tokens) and the tokenizer.ggml.pre name llama.cpp knows for its
// pre-tokenizer pattern (gpt-2, llama-bpe, qwen2; any other pattern is refused). A chat template for the
// tokenizer's family (llama3, chatml, mistral), or the one the run's instruction data used (run.json's
// data.chat_template), is written as tokenizer.chat_template, unless the weights' folder holds a
// tokenizer_config.json with a chat_template: that one is carried over as it is. A SentencePiece BPE model (a
// model folder's tokenizer.model, or bpe:N) as a "llama" vocabulary: pieces, scores, token types (control
// tokens marked), <s> added at the start when the model has one (LLaMA 2), the dummy prefix as
// add_space_prefix.
// With `ollama`, an Ollama Modelfile is written beside the file (FILE's folder, "Modelfile"): FROM ./FILE, the
// chat template in Ollama's Go template syntax over .Messages (llama3, chatml, mistral; plain: the contents
// one after the other) ending with the assistant's header, and PARAMETER stop for the token that ends a turn.
// Refused, with nothing written: a model that is not in the LLaMA layout (a GPT with learned positions, a
// custom spec), a char tokenizer (llama.cpp has no vocabulary type that maps characters to ids without merges
// or scores), a SentencePiece model llama.cpp would read differently (gguf_sentencepiece).
#include <cstdint>
#include <string>
#include <vector>

#include "io/gguf.h"
#include "io/safetensors.h"

namespace hr {

struct GgufExportResult {
    std::string architecture;  // "llama" or "qwen2"
    std::string tokenizer;     // "gpt2 (256 bytes)", "gpt2 (llama-bpe)", ...
    std::string chat_template; // the named template (llama3, chatml, mistral; the Modelfile's), "" for none
    std::string chat_template_source;  // the tokenizer_config.json whose template was written, "" for the named one
    std::string modelfile;     // the Modelfile's path, "" when none was asked
    std::int64_t tensors = 0;
    std::uint64_t file_bytes = 0;
};

// A SentencePiece model (a tokenizer.model's bytes) as llama.cpp's "llama" (SPM) vocabulary: its pieces,
// scores and types as the ModelProto holds them (types are llama.cpp's: 1 normal, 2 unknown, 3 control,
// 4 user-defined, 5 unused, 6 byte), the special ids (-1: none) and whether a space goes first
// (add_dummy_prefix). InputError, naming `where`, for what llama.cpp's tokenizer would read differently: a
// unigram model (it merges by score, a BPE's way), a normalizer that rewrites text (only identity), one that
// removes repeated spaces or keeps spaces unescaped.
struct GgufSentencePiece {
    std::vector<std::string> pieces;
    std::vector<float> scores;
    std::vector<std::int32_t> types;
    bool add_space_prefix = true;
    std::int64_t bos = -1, eos = -1, unk = -1, pad = -1;
};
GgufSentencePiece gguf_sentencepiece(const std::string& model, const std::string& where);

// "f32", "f16", "bf16", "q8_0"; InputError otherwise.
GgufTensorType parse_gguf_type(const std::string& name);

// The type a matrix of `shape` is stored as when `requested` is asked: q8_0 falls back to f16 for rows whose
// length is not a multiple of 32; 1-D tensors are always f32.
GgufTensorType gguf_stored_type(GgufTensorType requested, const std::vector<std::int64_t>& shape);

// The weights the GGUF file of `type` holds, in place, for a model computed on them (`headroom generate
// --as-exported TYPE`): LoRA adapters merged (f32), then every matrix rounded as export_gguf stores it
// (f16 / bf16 rounding, q8_0 blocks quantized and dequantized) and held as f32; nothing copied whole, a
// tensor converted at a time. 1-D tensors are exact in the file's f32 and stay as they are.
void round_as_gguf(SafeTensorsFile& weights, GgufTensorType type, const std::string& path);

// Reads a model.safetensors written by Headroom (or the run folder holding one) and writes `path`.
// Everything is checked before the file is begun; InputError naming what cannot be expressed.
GgufExportResult export_gguf(const std::string& weights, const std::string& path, GgufTensorType type,
                             bool ollama = false);

// The Modelfile's text for a GGUF file named `gguf_name` whose chat template is `chat_template` ("llama3",
// "chatml" or "" for plain).
std::string ollama_modelfile(const std::string& gguf_name, const std::string& chat_template);

}  // namespace hr
