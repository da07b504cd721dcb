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
// tokenizer's family (llama3, chatml) is written as tokenizer.chat_template.
// With `ollama`, an Ollama Modelfile is written beside the file (FILE's folder, "Modelfile"): FROM ./FILE, the
// chat template in Ollama's Go template syntax over .Messages (llama3, chatml; plain: the contents one after
// the other) ending with the assistant's header, and PARAMETER stop for the token that ends a turn.
// Refused, with nothing written: a model that is not in the LLaMA layout (a GPT with learned positions, a
// custom spec), a char, bpe:N or SentencePiece tokenizer.
#include <cstdint>
#include <string>

#include "io/gguf.h"

namespace hr {

struct GgufExportResult {
    std::string architecture;  // "llama" or "qwen2"
    std::string tokenizer;     // "gpt2 (256 bytes)", "gpt2 (llama-bpe)", ...
    std::string chat_template; // the named template written, "" for none
    std::string modelfile;     // the Modelfile's path, "" when none was asked
    std::int64_t tensors = 0;
    std::uint64_t file_bytes = 0;
};

// "f32", "f16", "bf16", "q8_0"; InputError otherwise.
GgufTensorType parse_gguf_type(const std::string& name);

// Reads a model.safetensors written by Headroom (or the run folder holding one) and writes `path`.
// Everything is checked before the file is begun; InputError naming what cannot be expressed.
GgufExportResult export_gguf(const std::string& weights, const std::string& path, GgufTensorType type,
                             bool ollama = false);

// The Modelfile's text for a GGUF file named `gguf_name` whose chat template is `chat_template` ("llama3",
// "chatml" or "" for plain).
std::string ollama_modelfile(const std::string& gguf_name, const std::string& chat_template);

}  // namespace hr
