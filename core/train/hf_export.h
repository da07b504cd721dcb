#pragma once
// A trained model as a Hugging Face model folder, and a LoRA run's adapters as peft's adapter folder
// (docs/transformers.md, "Hugging Face models"). The weights are the run's model.safetensors: LoRA's
// adapters merged into their weights for the model folder (PEFT's merge_and_unload), written on their own
// for the adapter folder; names are Hugging Face's already (the LLaMA layout's state_dict, nn/hf_config.h).
#include <cstdint>
#include <string>
#include <vector>

#include "io/hf_folder.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"

namespace hr {

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
