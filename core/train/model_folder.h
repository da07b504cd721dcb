#pragma once
// What a model folder holds, read before a run starts from it (the window's File > Open model folder…,
// `headroom plan --model-config DIR`'s weights line): the model its config.json builds, its weights' headers
// (every tensor's name, dtype and shape, checked against that model as --init-from will load them), its
// tokenizer and the chat template its tokenizer_config.json carries. Nothing is converted or copied: the
// weights are memory-mapped (io/hf_folder.h read_hf_weights), so a folder of many GiB opens in the time its
// headers take. A run then starts from it with TrainConfig::init_from = init_from (and init_base), the path
// --init-from takes: the same loader (train/run_folder.cpp), the same record.
//
// What can be opened:
//   model folder   config.json + model.safetensors or shards with model.safetensors.index.json
//   .safetensors   one weights file with a config.json beside it (or `config` given)
//   adapter folder adapter_config.json + adapter_model.safetensors on a base model folder: the one its
//                  base_model_name_or_path names, or `base` when given (a hub name is not a folder here)
// Refusals are one InputError naming the file and what to do; nothing is changed by opening.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "nn/model_spec.h"

namespace hr {

struct ModelFolder {
    enum class Kind { hf_folder, safetensors_file, peft_adapter };
    Kind kind = Kind::hf_folder;
    std::string path;         // what was opened
    std::string init_from;    // TrainConfig::init_from for a run from it
    std::string init_base;    // TrainConfig::init_base (an adapter's base folder given in place of its own)
    std::string config_file;  // the config.json the model was built from
    std::string base_dir;     // an adapter's base model folder ("" otherwise)
    std::string architecture; // "LlamaForCausalLM", ...
    std::string torch_dtype;  // config.json's torch_dtype
    ModelSpec model;          // hf_model_spec(config)
    std::vector<std::string> weight_files;  // the files whose headers were read, in order
    std::int64_t tensors = 0;               // tensors in them
    std::int64_t stored_params = 0;         // values in them (the base's and the adapter's)
    std::uint64_t stored_bytes = 0;         // their bytes
    std::vector<std::pair<std::string, std::int64_t>> dtypes;  // stored dtype -> values, most first
    std::string tokenizer;         // tokenizer.json / tokenizer.model beside the weights (or the base's), or ""
    std::int64_t tokenizer_vocab = 0;
    std::string tokenizer_template;  // the chat template the tokenizer's special tokens name (auto), or "plain"
    std::string config_template;     // tokenizer_config.json's chat_template recognised: llama3, chatml,
                                     // mistral; "other" for one Headroom does not write; "" for none
    // an adapter's LoRA settings (kind peft_adapter): the run trains them on (--lora R, its alpha, dropout, targets)
    int lora_rank = 0;
    double lora_alpha = 0, lora_dropout = 0;
    int lora_targets = 0;

    // "bf16" or "bf16 + f32" (the dtypes stored, most values first)
    std::string dtype_text() const;
};

// An adapter folder whose base model is not a folder here (a hub name, usually): the caller may ask for the
// base folder and open again with `base`.
class PeftBaseMissing : public InputError {
public:
    PeftBaseMissing(const std::string& adapter, const std::string& base_name);
    std::string adapter_dir, base_model_name;
};

// Progress: called with a step done so far out of total and what is being read; it may throw (Cancelled) to stop.
using ModelFolderProgress = std::function<void(int done, int total, const std::string& what)>;

// Opens `path` (a folder or a .safetensors file). config: the config.json of a lone .safetensors file when
// there is none beside it; base: an adapter's base model folder. InputError when it cannot be used.
ModelFolder open_model_folder(const std::string& path, const std::string& config = "", const std::string& base = "",
                              const ModelFolderProgress& progress = {});

// What a chat template text (tokenizer_config.json's chat_template) is: llama3, chatml, mistral or other.
std::string recognise_chat_template(const std::string& jinja);

}  // namespace hr
