#pragma once
// `headroom export RUN --peft DIR` and the Runs tab's "peft adapter…": a LoRA run's adapters as peft's adapter
// folder (adapter_config.json, adapter_model.safetensors; io/hf_folder.h), the same files the run wrote beside
// its weights, written where the person asks. peft's PeftModel.from_pretrained(base, DIR) loads them on the
// base model (base_model_name_or_path: the --init-from model folder the run started from, when it did).
#include <cstdint>
#include <string>
#include <vector>

namespace hr {

struct PeftExportResult {
    std::vector<std::string> files;          // written into the folder: adapter_config.json, adapter_model.safetensors
    int rank = 0;
    double alpha = 0;
    std::vector<std::string> target_modules; // peft's names ("q_proj", "v_proj")
    std::uint64_t adapter_bytes = 0;         // the adapters' tensors
};

// RUN: a run folder or the model.safetensors inside one (its config.json, when there, gives the dropout and the
// base). InputError, nothing written, for a run without adapters (not a LoRA run: export --hf DIR writes its
// whole model), a model not in the LLaMA layout (peft's names are the family's), or a damaged file.
PeftExportResult export_peft_adapter(const std::string& run, const std::string& dir);

}  // namespace hr
