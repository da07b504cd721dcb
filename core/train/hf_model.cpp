// Hugging Face model and adapter folders into a model and out of a run (train/hf_model.h).
#include "train/hf_model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "nn/hf_config.h"
#include "nn/transformer_spec.h"
#include "nn/layer.h"
#include "nn/model.h"
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
    HfConfig config = hf_config_of_spec(spec, "float32");  // refuses a model of another layout
    SafeTensorsFile merged = merge_lora_adapters(raw, weights);
    SafeTensorsFile out;
    out.metadata["format"] = "pt";  // what transformers' save_pretrained writes
    bool all_bf16 = true;
    for (auto& t : merged.tensors) {
        if (config.tie_word_embeddings && t.name == "lm_head.weight") continue;  // transformers ties it on loading
        if (t.dtype == DType::f64) {  // a model trained in f64 (tests): written as float32, transformers' widest
            std::vector<std::uint8_t> f(t.nbytes() / 2);
            for (std::size_t k = 0; k < t.nbytes() / 8; ++k) {
                double d;
                std::memcpy(&d, t.bytes() + 8 * k, 8);
                const float v = static_cast<float>(d);
                std::memcpy(f.data() + 4 * k, &v, 4);
            }
            t.materialize();
            t.data = std::move(f);
            t.dtype = DType::f32;
        }
        all_bf16 = all_bf16 && t.dtype == DType::bf16;
        out.tensors.push_back(std::move(t));
    }
    if (all_bf16 && !out.tensors.empty()) config.torch_dtype = "bfloat16";
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

void load_hf_folder_weights(Model& model, const std::string& path, const std::string& base_dir) {
    if (is_peft_adapter_folder(path)) {
        PeftAdapter a = read_peft_adapter(path);
        if (!base_dir.empty()) a.base_dir = base_dir;
        if (a.base_dir.empty() || !is_hf_model_folder(a.base_dir))
            throw InputError(HR_MSG("weights.peft_base", "%1: the adapter's base model '%2' (base_model_name_or_path "
                                                         "in adapter_config.json) is not a Hugging Face model folder "
                                                         "here; put the base model's folder there or correct the path"),
                             {path, a.config.base_model_name_or_path});
        SafeTensorsFile file = read_hf_weights(a.base_dir);
        for (auto& t : a.tensors.tensors) file.tensors.push_back(std::move(t));
        file.metadata["lora_scale"] = a.tensors.metadata.at("lora_scale");
        bool model_adapters = false;
        for (const auto& nt : model.state_dict()) model_adapters = model_adapters || is_lora_adapter(nt.name);
        if (!model_adapters)  // merged in f32 (train/checkpoint.h): bf16/f16 weights and adapters widened first
            for (auto& t : file.tensors)
                if (t.dtype == DType::bf16 || t.dtype == DType::f16) {
                    std::vector<std::uint8_t> f(t.nbytes() * 2);
                    for (std::size_t k = 0; k < t.nbytes() / 2; ++k) {
                        std::uint16_t h;
                        std::memcpy(&h, t.bytes() + 2 * k, 2);
                        const float v = t.dtype == DType::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
                        std::memcpy(f.data() + 4 * k, &v, 4);
                    }
                    t.materialize();
                    t.data = std::move(f);
                    t.dtype = DType::f32;
                }
        load_model_state(model, file, path);
        return;
    }
    load_model_state(model, read_hf_weights(path), path);
}

bool write_run_peft_adapter(const std::string& dir, const SafeTensorsFile& state, const ModelSpec& spec, int rank,
                            double alpha, double dropout, const std::string& base_model) {
    if (rank <= 0 || !is_llama_layout(spec)) return false;
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
