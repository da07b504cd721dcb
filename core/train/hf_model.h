#pragma once
// Hugging Face model folders into a model (--init-from DIR), a trained model out as one, and a LoRA run's
// adapters as peft's adapter folder (docs/transformers.md, "Hugging Face models"). The weights are the run's model.safetensors: LoRA's
// adapters merged into their weights for the model folder (PEFT's merge_and_unload), written on their own
// for the adapter folder; names are Hugging Face's already (the LLaMA layout's state_dict, nn/hf_config.h).
#include <cstdint>
#include <string>
#include <vector>

#include "io/hf_folder.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"

namespace hr {

class Model;

// Loads a Hugging Face model folder (config.json + model.safetensors, or shards with their index;
// memory-mapped, bf16/f16 converted) into `model`, or a peft adapter folder: its base folder's weights
// (base_model_name_or_path) with the adapters, loaded as the model's adapters when it has them (--lora R, R
// the adapter's r), merged into the weights when it has none. Hugging Face's names, checked strictly
// (train/checkpoint.h load_model_state): InputError naming the file and tensor, the model unchanged.
// base_dir, when not empty, is the adapter's base model folder in place of its base_model_name_or_path
// (--init-base: the base named by a hub name, downloaded elsewhere).
void load_hf_folder_weights(Model& model, const std::string& path, const std::string& base_dir = "");

struct HfExportResult {
    std::vector<std::string> files;  // written into the folder, in order (config.json first)
    std::uint64_t weight_bytes = 0;  // the tensors' bytes
};

// Reads a model.safetensors written by Headroom (or the run folder holding one) and writes `dir`:
// config.json, model.safetensors (sharded above shard_bytes, with model.safetensors.index.json) and the
// tokenizer file the weights name, if any. Everything is checked before the first file is written: a model
// that is not in the LLaMA layout or a damaged file is an InputError and `dir` is left as it was.
HfExportResult export_hf_folder(const std::string& weights, const std::string& dir,
                                std::uint64_t shard_bytes = kHfDefaultShardBytes);

// The adapters of a LoRA run's state (Headroom's names, "X.lora_A"/"X.lora_B") as peft's adapter folder in
// `dir` (adapter_config.json, adapter_model.safetensors). Nothing when the model is not in the LLaMA layout
// or has no adapters; returns whether it wrote.
bool write_run_peft_adapter(const std::string& dir, const SafeTensorsFile& state, const ModelSpec& spec, int rank,
                            double alpha, double dropout, const std::string& base_model);

}  // namespace hr
