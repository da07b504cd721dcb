#include "train/peft_export.h"

#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "io/hf_folder.h"
#include "io/safetensors.h"
#include "nn/layer.h"
#include "nn/transformer_spec.h"
#include "train/checkpoint.h"
#include "train/hf_model.h"
#include "train/resume.h"

namespace hr {

namespace fs = std::filesystem;

PeftExportResult export_peft_adapter(const std::string& run, const std::string& dir) {
    std::error_code ec;
    const bool folder = fs::is_directory(run, ec);
    const std::string weights = folder ? (fs::path(run) / "model.safetensors").string() : run;
    const std::string run_dir = fs::path(weights).parent_path().string();
    if (!fs::is_regular_file(weights, ec))
        throw InputError(HR_MSG("peft_export.no_weights",
                                "%1 holds no model.safetensors; pass the folder of a finished run (headroom train --out DIR)"),
                         {run});
    const SafeTensorsFile file = read_safetensors(weights, SafetensorsRead::mapped);
    const ModelSpec spec = model_spec_of(file, weights);
    PeftExportResult r;
    for (const SafeTensor& t : file.tensors)
        if (is_lora_a(t.name) && t.shape.size() == 2 && r.rank == 0) r.rank = static_cast<int>(t.shape[0]);
    const auto scale = file.metadata.find("lora_scale");
    if (r.rank == 0 || scale == file.metadata.end())
        throw InputError(HR_MSG("peft_export.not_lora",
                                "%1 is not a LoRA run: it has no adapters to write as a peft adapter; export its whole "
                                "model as a Hugging Face folder instead (export --hf DIR)"),
                         {run});
    if (!is_llama_layout(spec))
        throw InputError(HR_MSG("peft_export.not_llama",
                                "%1 holds model '%2', which is not in the LLaMA layout; peft's adapter names are the "
                                "LLaMA family's (q_proj, v_proj, ...), so only those models' adapters can be written"),
                         {run, spec.name});
    r.alpha = std::strtod(scale->second.c_str(), nullptr) * r.rank;
    // the dropout and the base from the run's configuration, when the folder has one (as the trainer writes them)
    double dropout = 0;
    std::string base;
    if (fs::is_regular_file(run_config_path(run_dir.empty() ? "." : run_dir), ec)) {
        const TrainConfig c = read_run_config(run_dir.empty() ? "." : run_dir);
        dropout = c.strategy.lora_dropout;
        if (is_hf_model_folder(c.init_from)) base = fs::absolute(c.init_from).string();
        else if (is_peft_adapter_folder(c.init_from)) base = read_peft_adapter(c.init_from).base_dir;
    }
    fs::create_directories(dir, ec);
    if (ec)
        throw InputError(HR_MSG("peft_export.folder", "cannot create the folder %1 (%2); choose a folder you can write to"),
                         {dir, ec.message()});
    write_run_peft_adapter(dir, file, spec, r.rank, r.alpha, dropout, base);
    r.files = {"adapter_config.json", "adapter_model.safetensors"};
    for (const SafeTensor& t : file.tensors)
        if (is_lora_adapter(t.name)) {
            r.adapter_bytes += t.nbytes();
            const std::string stem = t.name.substr(0, t.name.rfind('.'));
            const std::string proj = stem.substr(stem.rfind('.') + 1);
            bool seen = false;
            for (const auto& n : r.target_modules) seen = seen || n == proj;
            if (!seen) r.target_modules.push_back(proj);
        }
    return r;
}

}  // namespace hr
