#include "train/model_folder.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "base/json_limits.h"
#include "data/chat_template.h"
#include "data/tokenizer.h"
#include "io/hf_folder.h"
#include "io/safetensors.h"
#include "memory/counting_allocator.h"
#include "nn/hf_config.h"
#include "nn/layer.h"
#include "nn/lora_targets.h"
#include "nn/model.h"

namespace hr {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxTokenizerConfigBytes = 16u << 20;  // a tokenizer_config.json (Llama 3's: 50 KiB)

std::string mf_read_text(const fs::path& p, std::uintmax_t limit) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p, ec);
    if (ec || size > limit)
        throw InputError(HR_MSG("model_folder.big_file", "%1 is larger than %2 bytes or cannot be read; it is not the "
                                                         "file a model folder holds: download it again"),
                         {p.string(), std::to_string(limit)});
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The model's tensors (names and shapes, counted only: no memory) against the file's, as --init-from loads
// them (train/checkpoint.h load_model_state): every tensor of the model there with its shape, nothing else.
void check_against_model(const ModelFolder& f, const SafeTensorsFile& file, const std::string& what) {
    auto ledger = std::make_shared<MemoryLedger>();
    CountingAllocator alloc(Device::cpu(), ledger);
    CpuBackend be(1, ledger);
    ModelOptions mo;
    mo.batch = 1;
    mo.dry_run = true;  // shapes only: nothing is touched
    mo.allocator = &alloc;
    mo.lora_rank = f.lora_rank;
    mo.lora_alpha = f.lora_alpha;
    mo.lora_targets = f.lora_targets;
    Model model(f.model, be, mo);
    std::map<std::string, const SafeTensor*> by_name;
    for (const SafeTensor& t : file.tensors) by_name[t.name] = &t;
    std::set<std::string> known;
    for (const NamedTensor& nt : model.state_dict()) {
        known.insert(nt.name);
        const auto it = by_name.find(nt.name);
        if (it == by_name.end()) {
            if (nt.tied) continue;  // a tied head: the token embedding's weight
            throw InputError(HR_MSG("model_folder.missing_tensor",
                                    "%1 has no tensor '%2', which the model of %3 needs; the weights and the "
                                    "config.json do not belong together: use the config.json that came with them"),
                             {what, nt.name, f.config_file});
        }
        const SafeTensor& t = *it->second;
        if (t.shape != nt.value_shape())
            throw InputError(HR_MSG("model_folder.shape",
                                    "%1: tensor '%2' has shape %3 but the model of %4 needs %5; the weights and the "
                                    "config.json do not belong together: use the config.json that came with them"),
                             {what, nt.name, shape_str(t.shape), f.config_file, shape_str(nt.value_shape())});
        if (!dtype_is_float(t.dtype))
            throw InputError(HR_MSG("model_folder.dtype", "%1: tensor '%2' is stored as %3, not as floating-point "
                                                          "numbers; a model's weights are f32, bf16 or f16"),
                             {what, nt.name, dtype_name(t.dtype)});
    }
    for (const SafeTensor& t : file.tensors)
        if (!known.count(t.name))
            throw InputError(HR_MSG("model_folder.unexpected_tensor",
                                    "%1 holds tensor '%2', which the model of %3 does not have; the weights and the "
                                    "config.json do not belong together: use the config.json that came with them"),
                             {what, t.name, f.config_file});
}

void count_weights(ModelFolder& f, const SafeTensorsFile& file) {
    std::map<std::string, std::int64_t> by_dtype;
    for (const SafeTensor& t : file.tensors) {
        const std::int64_t n = static_cast<std::int64_t>(t.nbytes() / dtype_size(t.dtype));
        ++f.tensors;
        f.stored_params += n;
        f.stored_bytes += t.nbytes();
        by_dtype[dtype_name(t.dtype)] += n;
    }
    f.dtypes.assign(by_dtype.begin(), by_dtype.end());
    std::stable_sort(f.dtypes.begin(), f.dtypes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
}

// The tokenizer file in the first of `dirs` that has one, its size and the template its specials name; the
// chat template of that folder's tokenizer_config.json.
void read_tokenizer(ModelFolder& f, const std::vector<std::string>& dirs) {
    std::error_code ec;
    for (const std::string& d : dirs) {
        const std::string file = tokenizer_spec_file(d);
        if (file.empty() || !fs::is_directory(d, ec)) continue;
        const std::unique_ptr<Tokenizer> tok = load_tokenizer_file(file);
        f.tokenizer = file;
        f.tokenizer_vocab = tok->vocab_size();
        f.tokenizer_template = resolve_chat_template("auto", *tok);
        const fs::path cfg = fs::path(d) / "tokenizer_config.json";
        if (fs::is_regular_file(cfg, ec)) {
            const nlohmann::json j = parse_json_limited(mf_read_text(cfg, kMaxTokenizerConfigBytes), cfg.string());
            std::string jinja;
            if (j.is_object() && j.contains("chat_template")) {
                const nlohmann::json& t = j["chat_template"];
                if (t.is_string()) jinja = t.get<std::string>();
                else if (t.is_array())  // [{"name": "default", "template": "..."}, ...]
                    for (const auto& e : t)
                        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") &&
                            e["template"].is_string())
                            jinja = e["template"].get<std::string>();
            }
            if (!jinja.empty()) f.config_template = recognise_chat_template(jinja);
        }
        return;
    }
}

bool ends_with_ci(const std::string& s, const std::string& tail) {
    if (s.size() < tail.size()) return false;
    for (std::size_t i = 0; i < tail.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[s.size() - tail.size() + i])) != tail[i]) return false;
    return true;
}

}  // namespace

std::string ModelFolder::dtype_text() const {
    std::string s;
    for (const auto& [name, n] : dtypes) s += (s.empty() ? "" : " + ") + name;
    return s;
}

std::string recognise_chat_template(const std::string& jinja) {
    if (jinja.find("<|start_header_id|>") != std::string::npos) return "llama3";
    if (jinja.find("<|im_start|>") != std::string::npos) return "chatml";
    if (jinja.find("[INST]") != std::string::npos) return "mistral";
    return "other";
}

ModelFolder open_model_folder(const std::string& path, const std::string& config, const std::string& base,
                              const ModelFolderProgress& progress) {
    std::error_code ec;
    ModelFolder f;
    f.path = path;
    const fs::path p(path);
    auto step = [&](int done, int total, const std::string& what) {
        if (progress) progress(done, total, what);
    };
    if (fs::is_regular_file(p, ec)) {
        if (!ends_with_ci(path, ".safetensors"))
            throw InputError(HR_MSG("model_folder.not_weights", "%1 is not a .safetensors file or a model folder; open "
                                                                "a Hugging Face model folder (config.json and its "
                                                                "weights), a .safetensors file or a peft adapter folder"),
                             {path});
        f.kind = ModelFolder::Kind::safetensors_file;
        f.config_file = config.empty() ? (p.parent_path() / "config.json").string() : config;
        if (fs::is_directory(f.config_file, ec)) f.config_file = (fs::path(f.config_file) / "config.json").string();
        if (!fs::is_regular_file(f.config_file, ec))
            throw InputError(HR_MSG("model_folder.file_no_config", "%1 has no config.json beside it; the weights alone "
                                                                   "do not say the model: give the config.json the "
                                                                   "model came with"),
                             {path});
        f.init_from = path;
    } else if (fs::is_directory(p, ec)) {
        if (is_peft_adapter_folder(path)) {
            f.kind = ModelFolder::Kind::peft_adapter;
        } else if (is_headroom_run_folder(path)) {
            throw InputError(HR_MSG("model_folder.run_folder", "%1 is a Headroom run folder; start from its weights "
                                                               "with Fine-tune from this run in the Runs tab"),
                             {path});
        } else if (!fs::is_regular_file(p / "config.json", ec)) {
            throw InputError(HR_MSG("model_folder.no_config", "%1 has no config.json; a Hugging Face model folder holds "
                                                              "config.json beside its weights: open the folder the "
                                                              "model was downloaded or saved into"),
                             {path});
        } else if (!is_hf_model_folder(path)) {
            throw InputError(HR_MSG("model_folder.no_weights", "%1 has a config.json but no weights (model.safetensors, "
                                                               "or shards with model.safetensors.index.json); to plan "
                                                               "the model without weights use Model > From a Hugging "
                                                               "Face config"),
                             {path});
        }
        f.init_from = path;
        f.config_file = (p / "config.json").string();
    } else {
        throw InputError(HR_MSG("model_folder.missing", "%1 does not exist; open a model folder or a .safetensors file"),
                         {path});
    }

    SafeTensorsFile adapter;
    std::vector<std::string> tokenizer_dirs;
    if (f.kind == ModelFolder::Kind::peft_adapter) {
        step(0, 1, (p / "adapter_config.json").string());
        PeftAdapter a = read_peft_adapter(path);
        f.base_dir = base.empty() ? a.base_dir : base;
        f.init_base = base;
        if (f.base_dir.empty() || !is_hf_model_folder(f.base_dir))
            throw PeftBaseMissing(path, a.config.base_model_name_or_path);
        f.config_file = (fs::path(f.base_dir) / "config.json").string();
        f.lora_rank = a.config.r;
        f.lora_alpha = a.config.lora_alpha;
        f.lora_dropout = a.config.lora_dropout;
        std::string targets;
        for (const std::string& t : a.config.target_modules) targets += (targets.empty() ? "" : ",") + t;
        f.lora_targets = parse_lora_targets(targets);
        adapter = std::move(a.tensors);
        tokenizer_dirs = {path, f.base_dir};
    } else {
        tokenizer_dirs = {f.kind == ModelFolder::Kind::safetensors_file ? p.parent_path().string() : path};
    }

    const HfConfig cfg = load_hf_config(f.config_file);
    f.architecture = cfg.architecture;
    f.torch_dtype = cfg.torch_dtype;
    f.model = hf_model_spec(cfg);

    // the weights' headers (memory-mapped: nothing is read but the headers until a run loads them)
    const std::string weights_dir = f.kind == ModelFolder::Kind::peft_adapter ? f.base_dir : path;
    int total = 2;
    SafeTensorsFile weights;
    if (f.kind == ModelFolder::Kind::safetensors_file) {
        step(0, total, path);
        weights = read_safetensors(path, SafetensorsRead::mapped);
        f.weight_files.push_back(path);
    } else {
        weights = read_hf_weights(weights_dir, [&](std::size_t k, std::size_t n, const std::string& file) {
            total = static_cast<int>(n) + 1;
            step(static_cast<int>(k), total, file);
            f.weight_files.push_back(file);
        });
    }
    if (f.kind == ModelFolder::Kind::peft_adapter) {
        f.weight_files.push_back((p / "adapter_model.safetensors").string());
        for (SafeTensor& t : adapter.tensors) weights.tensors.push_back(std::move(t));
    }
    check_against_model(f, weights, f.kind == ModelFolder::Kind::hf_folder ? path : f.weight_files.front());
    count_weights(f, weights);
    step(total - 1, total, tokenizer_dirs.front());
    read_tokenizer(f, tokenizer_dirs);
    step(total, total, "");
    return f;
}

PeftBaseMissing::PeftBaseMissing(const std::string& adapter, const std::string& base_name)
    : InputError(HR_MSG("model_folder.peft_base",
                        "the adapter in %1 was trained on '%2' (base_model_name_or_path), which is not a model folder "
                        "here; choose the base model's folder (--init-base DIR)"),
                 {adapter, base_name}),
      adapter_dir(adapter),
      base_model_name(base_name) {}

}  // namespace hr
