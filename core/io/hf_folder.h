#pragma once
// Hugging Face model folders and peft adapter folders: the files around the weights (docs/transformers.md,
// "Hugging Face models").
//
//   model folder    config.json (nn/hf_config.h) and either model.safetensors, or shards
//                   model-00001-of-0000N.safetensors ... with model.safetensors.index.json:
//                   {"metadata": {"total_size": BYTES}, "weight_map": {"TENSOR": "SHARD FILE", ...}};
//                   optionally tokenizer.json / tokenizer.model beside them.
//   adapter folder  adapter_config.json ({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r", "lora_alpha",
//                   "lora_dropout", "target_modules": [...], "base_model_name_or_path", ...}) and
//                   adapter_model.safetensors with names "base_model.model.<layer>.lora_A.weight" (R, in)
//                   and "...lora_B.weight" (out, R).
//
// Readers check what they are handed as the safetensors reader does: an index.json is size- and
// depth-limited, its shard names are plain file names inside the folder (no paths), every shard it names
// exists, every tensor lies in the shard the index says and in no other; a refusal is one InputError naming
// the file and what to do. Weights are memory-mapped (io/safetensors.h, SafetensorsRead::mapped).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/safetensors.h"

namespace hr {

constexpr const char* kHfIndexFile = "model.safetensors.index.json";
constexpr std::uintmax_t kHfMaxIndexBytes = 64u << 20;  // an index.json (a 405B model's is ~100 KiB)
constexpr std::size_t kHfMaxShards = 4096;               // shard files one index may name
// Exports split the weights into shards of at most this many bytes (transformers' default is 5 GB).
constexpr std::uint64_t kHfDefaultShardBytes = 5'000'000'000ULL;

// A folder with config.json and model.safetensors or model.safetensors.index.json, the config not
// Headroom's own (a run folder: is_headroom_run_folder).
bool is_hf_model_folder(const std::string& dir);
// A folder whose config.json is a Headroom run's (train/config.h: it has "model_source" and "strategy").
// A LoRA run's folder is also a peft adapter folder (its adapter files beside the weights).
bool is_headroom_run_folder(const std::string& dir);
// A folder with adapter_config.json (a peft adapter).
bool is_peft_adapter_folder(const std::string& dir);

// The shards an index names, in order of first appearance, and which tensor is where.
struct HfIndex {
    std::vector<std::string> shards;                           // file names inside the folder
    std::vector<std::pair<std::string, std::string>> weight_map;  // tensor -> shard, in the file's order
    std::uint64_t total_size = 0;                               // metadata.total_size (0 when absent)
};
// Parses an index.json's text; `what` names it in messages.
HfIndex parse_hf_index(const std::string& text, const std::string& what);

// The weights of a model folder, every shard's tensors in one file description (memory-mapped).
// on_file, when given, is called before each weights file is read (its index from 0, how many there are,
// its path): a progress report, which may throw (Cancelled) to stop.
using HfFileProgress = std::function<void(std::size_t index, std::size_t count, const std::string& path)>;
SafeTensorsFile read_hf_weights(const std::string& dir, const HfFileProgress& on_file = {});

// Writes `file`'s tensors into `dir` as model.safetensors, or, when they exceed shard_bytes, as shards
// model-0000K-of-0000N.safetensors plus model.safetensors.index.json (each written atomically). Returns the
// files written (names inside dir).
std::vector<std::string> write_hf_weights(const std::string& dir, const SafeTensorsFile& file,
                                          std::uint64_t shard_bytes = kHfDefaultShardBytes);

// ---- peft ---------------------------------------------------------------------------------------------
struct PeftAdapterConfig {
    int r = 0;
    double lora_alpha = 0;
    double lora_dropout = 0;
    std::vector<std::string> target_modules;  // "q_proj", "v_proj", ...
    std::string base_model_name_or_path;
};
// peft's names <-> Headroom's: "base_model.model.X.lora_A.weight" <-> "X.lora_A" (nn/layer.h is_lora_adapter).
std::string peft_name_of(const std::string& headroom_name);
std::string headroom_name_of_peft(const std::string& peft_name);  // "" when not an adapter name
PeftAdapterConfig parse_peft_config(const std::string& text, const std::string& what);
nlohmann::json peft_config_json(const PeftAdapterConfig& c);
// Writes adapter_config.json and adapter_model.safetensors (the file's tensors renamed to peft's; the
// tensors must be LoRA adapters, Headroom's names) into dir.
void write_peft_adapter(const std::string& dir, const PeftAdapterConfig& c, const SafeTensorsFile& adapters);
struct PeftAdapter {
    PeftAdapterConfig config;
    SafeTensorsFile tensors;  // Headroom's names ("X.lora_A"), metadata lora_scale = lora_alpha / r
    std::string base_dir;     // base_model_name_or_path resolved: absolute, or relative to the adapter folder
};
PeftAdapter read_peft_adapter(const std::string& dir);

}  // namespace hr
