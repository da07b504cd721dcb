#pragma once
// Hugging Face model configurations (a model folder's config.json) as Headroom model specs, and back.
//
// Three architectures are read, all of them LLaMA's decoder (the layout in docs/model-spec.md, "LLaMA
// family": token_embedding, llama_block x L, rmsnorm, lm_head): LlamaForCausalLM, MistralForCausalLM
// (Llama with its own sizes; its sliding window is not modelled, every token attends to all before it)
// and Qwen2ForCausalLM (biases on q/k/v). The architecture comes from "architectures" (its first entry),
// else from "model_type" ("llama", "mistral", "qwen2").
//
// Fields read (HF's names; absent ones take the value transformers' config class gives them):
//   vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads (required);
//   num_key_value_heads (default: num_attention_heads), head_dim (default hidden_size / heads),
//   rms_norm_eps (1e-6), rope_theta (10000), rope_scaling (null, or Llama 3's {"rope_type": "llama3",
//   "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}),
//   attention_bias (Llama: false; true is refused, it puts a bias on o_proj too), mlp_bias (false),
//   hidden_act ("silu"), tie_word_embeddings (false), max_position_embeddings (2048; Mistral 32768,
//   Qwen2 32768), torch_dtype ("float32", "bfloat16" or "float16": the dtype its weights are stored in).
// Every size is checked against limits a real model stays far below (kHf* below), so that a small file
// can never describe a model whose sizes overflow or whose allocation is absurd; each refusal is one
// InputError naming the file, the field, the value and what to do.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "nn/model_spec.h"

namespace hr {

// Limits on a config.json's sizes (the largest published models are far inside them).
constexpr std::int64_t kHfMaxHidden = 1 << 16;         // hidden_size (Llama 3.1 405B: 16384)
constexpr std::int64_t kHfMaxIntermediate = 1 << 18;   // intermediate_size (405B: 53248)
constexpr std::int64_t kHfMaxLayers = 1024;            // num_hidden_layers (405B: 126)
constexpr std::int64_t kHfMaxHeads = 1024;             // num_attention_heads (405B: 128)
constexpr std::int64_t kHfMaxHeadDim = 1024;           // head_dim
constexpr std::int64_t kHfMaxVocab = 1 << 24;          // vocab_size (the model spec's class limit)
constexpr std::int64_t kHfMaxPositions = 1 << 24;      // max_position_embeddings (Llama 3.1: 131072)
constexpr std::uintmax_t kHfMaxConfigBytes = 1u << 20; // a config.json file (1 MiB; real ones are ~1 KiB)
// The sequence a spec from a config is built for when none is asked (max_position_embeddings if smaller).
constexpr std::int64_t kHfDefaultSequence = 2048;

struct HfRopeScaling {  // Llama 3's frequency scaling of RoPE
    double factor = 8.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    std::int64_t original_max_position_embeddings = 8192;
    bool operator==(const HfRopeScaling&) const = default;
};

struct HfConfig {
    std::string architecture;  // "LlamaForCausalLM", "MistralForCausalLM" or "Qwen2ForCausalLM"
    std::string model_type;    // "llama", "mistral", "qwen2"
    std::string name;          // _name_or_path when given, else the folder's name
    std::int64_t vocab_size = 0;
    std::int64_t hidden_size = 0;
    std::int64_t intermediate_size = 0;
    std::int64_t num_hidden_layers = 0;
    std::int64_t num_attention_heads = 0;
    std::int64_t num_key_value_heads = 0;
    std::int64_t head_dim = 0;  // always filled (hidden_size / heads when the file has none)
    std::int64_t max_position_embeddings = 0;
    double rms_norm_eps = 1e-6;
    double rope_theta = 10000.0;
    std::optional<HfRopeScaling> rope_scaling;
    bool qkv_bias = false;     // Qwen2 (always), or nothing else
    bool tie_word_embeddings = false;
    std::string torch_dtype = "float32";  // "float32", "bfloat16", "float16"
    std::int64_t sliding_window = 0;      // Mistral's, when set (not modelled: noted by the front ends)

    bool operator==(const HfConfig&) const = default;
};

// Reads a config.json's object; `what` names it in messages ("llama/config.json").
HfConfig parse_hf_config(const nlohmann::json& j, const std::string& what);
// Reads the file, or FOLDER/config.json when `path` is a folder. InputError when it cannot be read or parsed.
HfConfig load_hf_config(const std::string& path);
// The model spec of a config, built for sequences of `seq` tokens (0: kHfDefaultSequence, or
// max_position_embeddings when smaller). As JSON (the model-spec format) and parsed.
nlohmann::json hf_model_spec_json(const HfConfig& c, std::int64_t seq = 0);
ModelSpec hf_model_spec(const HfConfig& c, std::int64_t seq = 0);

// The other way, for exporting a trained model: the config of a spec in the LLaMA layout (InputError for
// another model, naming what is not LLaMA's). The architecture is Qwen2ForCausalLM when the blocks have q/k/v
// biases, else LlamaForCausalLM (Mistral's weights are Llama's). torch_dtype is given by the caller.
HfConfig hf_config_of_spec(const ModelSpec& spec, const std::string& torch_dtype = "float32");
// A config.json as transformers writes it (the fields above, plus bos/eos left out: no tokenizer is implied).
nlohmann::json hf_config_json(const HfConfig& c);

}  // namespace hr
