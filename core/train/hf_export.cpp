// Export to Hugging Face's folders (train/hf_export.h).
#include "train/hf_export.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "nn/hf_config.h"
#include "nn/layer.h"
#include "train/checkpoint.h"

namespace hr {

namespace {
namespace fs = std::filesystem;
}  // namespace

HfExportResult export_hf_folder(const std::string& weights_in, const std::string& dir, std::uint64_t shard_bytes) {
    std::error_code ec;
    std::string weights = weights_in;
    if (fs::is_directory(weights, ec)) weights = (fs::path(weights) / "model.safetensors").string();
    const SafeTensorsFile raw = read_safetensors(weights, SafetensorsRead::mapped);
    const ModelSpec spec = model_spec_of(raw, weights);
    const HfConfig config = hf_config_of_spec(spec, "float32");  // refuses a model of another layout
    SafeTensorsFile merged = merge_lora_adapters(raw, weights);
    SafeTensorsFile out;
    out.metadata["format"] = "pt";  // what transformers' save_pretrained writes
    for (auto& t : merged.tensors) {
        if (config.tie_word_embeddings && t.name == "lm_head.weight") continue;  // transformers ties it on loading
        out.tensors.push_back(std::move(t));
    }
    // the tokenizer beside the weights, when the run had one
    fs::path tokenizer;
    if (const auto it = raw.metadata.find("tokenizer_file"); it != raw.metadata.end() && !it->second.empty()) {
        tokenizer = fs::path(weights).parent_path() / fs::path(it->second).filename();
        if (!fs::is_regular_file(tokenizer, ec))
            throw InputError(HR_MSG("hf_export.tokenizer", "%1 names the tokenizer file %2, which is not beside it; "
                                                           "export from the run folder the weights were written in"),
                             {weights, tokenizer.string()});
    }
    // checked: now the folder
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir, ec))
        throw InputError(HR_MSG("hf_export.folder", "cannot create the folder %1 (%2); pick a folder you can write to"),
                         {dir, ec.message()});
    HfExportResult r;
    write_file_atomic((fs::path(dir) / "config.json").string(), hf_config_json(config).dump(2) + "\n");
    r.files.push_back("config.json");
    for (const auto& t : out.tensors) r.weight_bytes += t.nbytes();
    for (auto& f : write_hf_weights(dir, out, shard_bytes)) r.files.push_back(f);
    if (!tokenizer.empty()) {
        const fs::path to = fs::path(dir) / tokenizer.filename();
        if (fs::absolute(to, ec) != fs::absolute(tokenizer, ec)) {
            fs::copy_file(tokenizer, to, fs::copy_options::overwrite_existing, ec);
            if (ec)
                throw Error(HR_MSG("hf_export.copy", "cannot copy the tokenizer %1 to %2 (%3)"),
                            {tokenizer.string(), to.string(), ec.message()});
        }
        r.files.push_back(tokenizer.filename().string());
    }
    return r;
}

bool write_run_peft_adapter(const std::string& dir, const SafeTensorsFile& state, const ModelSpec& spec, int rank,
                            double alpha, double dropout, const std::string& base_model) {
    if (rank <= 0 || !is_llama_spec(spec)) return false;
    SafeTensorsFile adapters;
    std::set<std::string> targets;
    for (const auto& t : state.tensors) {
        if (!is_lora_adapter(t.name)) continue;
        adapters.tensors.push_back(t);
        // "model.layers.0.self_attn.q_proj.lora_A": the module is the component before lora_A
        const std::string stem = t.name.substr(0, t.name.rfind('.'));
        targets.insert(stem.substr(stem.rfind('.') + 1));
    }
    if (adapters.tensors.empty()) return false;
    PeftAdapterConfig c;
    c.r = rank;
    c.lora_alpha = alpha;
    c.lora_dropout = dropout;
    c.target_modules.assign(targets.begin(), targets.end());
    c.base_model_name_or_path = base_model;
    write_peft_adapter(dir, c, adapters);
    return true;
}

}  // namespace hr
