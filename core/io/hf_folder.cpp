// Hugging Face model folders and peft adapter folders (io/hf_folder.h).
#include "io/hf_folder.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_limits.h"

namespace hr {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kPeftPrefix = "base_model.model.";

// A small text file read whole, refused past `limit` bytes (so a huge file is never read in).
std::string hff_read_text(const fs::path& p, std::uintmax_t limit) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
        throw InputError(HR_MSG("hf_folder.missing_file", "%1: file not found; a Hugging Face folder needs it"), {p.string()});
    const auto size = fs::file_size(p, ec);
    if (ec || size > limit)
        throw InputError(HR_MSG("hf_folder.too_large", "%1: %2 bytes is more than such a file can be (%3 bytes); the "
                                                       "folder is damaged or the file is not what its name says"),
                         {p.string(), std::to_string(size), std::to_string(limit)});
    std::ifstream in(p, std::ios::binary);
    if (!in) throw InputError(HR_MSG("hf_folder.unreadable", "%1: cannot be read; check its permissions"), {p.string()});
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A shard's name: a plain file name in the folder, never a path out of it.
bool hff_plain_name(const std::string& s) {
    return !s.empty() && s.size() <= 255 && s != "." && s != ".." && s.find('/') == std::string::npos &&
           s.find('\\') == std::string::npos && s.find('\0') == std::string::npos;
}

}  // namespace

bool is_headroom_run_folder(const std::string& dir) {
    // Headroom's config.json (train/config.h) names its model source and strategy, which a Hugging Face
    // config never does; a config that cannot be read is left to the reader that needs it to say why
    try {
        const json j = parse_json_limited(hff_read_text(fs::path(dir) / "config.json", 64u << 20), dir + "/config.json");
        return j.is_object() && j.contains("model_source") && j.contains("strategy");
    } catch (const std::exception&) {
        return false;
    }
}

bool is_hf_model_folder(const std::string& dir) {
    std::error_code ec;
    const fs::path d(dir);
    return fs::is_directory(d, ec) && fs::exists(d / "config.json", ec) &&
           (fs::exists(d / "model.safetensors", ec) || fs::exists(d / kHfIndexFile, ec)) && !is_headroom_run_folder(dir);
}

bool is_peft_adapter_folder(const std::string& dir) {
    std::error_code ec;
    const fs::path d(dir);
    return fs::is_directory(d, ec) && fs::exists(d / "adapter_config.json", ec);
}

HfIndex parse_hf_index(const std::string& text, const std::string& what) {
    const json j = parse_json_limited(text, what);
    auto bad = [&](const std::string& detail) {
        return InputError(HR_MSG("hf_folder.index", "%1: %2; the index is damaged: write it again with the model's "
                                                    "weights (save_pretrained) or download it again"),
                          {what, detail});
    };
    if (!j.is_object() || !j.contains("weight_map") || !j.at("weight_map").is_object())
        throw bad("it must be an object with a \"weight_map\" object");
    HfIndex idx;
    if (j.contains("metadata") && j.at("metadata").is_object() && j.at("metadata").contains("total_size")) {
        const json& t = j.at("metadata").at("total_size");
        if (t.is_number_unsigned()) idx.total_size = t.get<std::uint64_t>();
        else if (t.is_number_float() && t.get<double>() >= 0 && t.get<double>() < 1.8e19) idx.total_size = static_cast<std::uint64_t>(t.get<double>());
        else throw bad("\"metadata.total_size\" must be a non-negative number of bytes, got " + json_brief(t));
    }
    std::set<std::string> seen;
    for (auto it = j.at("weight_map").begin(); it != j.at("weight_map").end(); ++it) {
        if (!it.value().is_string())
            throw bad("tensor '" + it.key().substr(0, 200) + "' maps to " + json_brief(it.value()) + ", not a file name");
        const std::string shard = it.value().get<std::string>();
        if (!hff_plain_name(shard))
            throw bad("tensor '" + it.key().substr(0, 200) + "' maps to '" + shard.substr(0, 200) +
                      "', which is not a file name inside the folder");
        if (seen.insert(shard).second) {
            idx.shards.push_back(shard);
            if (idx.shards.size() > kHfMaxShards) throw bad("it names more than " + std::to_string(kHfMaxShards) + " shards");
        }
        idx.weight_map.emplace_back(it.key(), shard);
    }
    if (idx.weight_map.empty()) throw bad("its \"weight_map\" is empty");
    return idx;
}

SafeTensorsFile read_hf_weights(const std::string& dir, const HfFileProgress& on_file) {
    const fs::path d(dir);
    std::error_code ec;
    if (!fs::exists(d / kHfIndexFile, ec)) {
        if (on_file) on_file(0, 1, (d / "model.safetensors").string());
        SafeTensorsFile f = read_safetensors((d / "model.safetensors").string(), SafetensorsRead::mapped);
        return f;
    }
    const std::string index_path = (d / kHfIndexFile).string();
    const HfIndex idx = parse_hf_index(hff_read_text(d / kHfIndexFile, kHfMaxIndexBytes), index_path);
    // every shard there before anything is read
    for (const auto& s : idx.shards)
        if (!fs::is_regular_file(d / s, ec))
            throw InputError(HR_MSG("hf_folder.missing_shard", "%1 names the shard %2, which is not in %3; download "
                                                               "the missing shard (every file the index names) and try "
                                                               "again"),
                             {index_path, s, dir});
    std::map<std::string, std::string> where(idx.weight_map.begin(), idx.weight_map.end());
    SafeTensorsFile out;
    std::set<std::string> loaded;
    for (std::size_t k = 0; k < idx.shards.size(); ++k) {
        const std::string& s = idx.shards[k];
        const std::string path = (d / s).string();
        if (on_file) on_file(k, idx.shards.size(), path);
        SafeTensorsFile f = read_safetensors(path, SafetensorsRead::mapped);
        for (auto& t : f.tensors) {
            const auto w = where.find(t.name);
            if (w == where.end() || w->second != s)
                throw InputError(HR_MSG("hf_folder.shard_tensor", "%1 holds tensor '%2', which %3 places %4; the shards "
                                                                  "and the index do not belong together: download them "
                                                                  "again"),
                                 {path, t.name, index_path, w == where.end() ? std::string("nowhere") : "in " + w->second});
            if (!loaded.insert(t.name).second)
                throw InputError(HR_MSG("hf_folder.shard_twice", "%1: tensor '%2' is in two shards; the folder is damaged"),
                                 {path, t.name});
            out.tensors.push_back(std::move(t));
        }
        for (auto& [k, v] : f.metadata) out.metadata.emplace(k, v);
    }
    for (const auto& [name, shard] : idx.weight_map)
        if (!loaded.count(name))
            throw InputError(HR_MSG("hf_folder.index_tensor", "%1 places tensor '%2' in %3, which does not hold it; the "
                                                              "shards and the index do not belong together: download them "
                                                              "again"),
                             {index_path, name, shard});
    return out;
}

std::vector<std::string> write_hf_weights(const std::string& dir, const SafeTensorsFile& file, std::uint64_t shard_bytes) {
    std::uint64_t total = 0;
    for (const auto& t : file.tensors) total += t.nbytes();
    const fs::path d(dir);
    if (total <= shard_bytes || file.tensors.size() <= 1) {
        write_safetensors((d / "model.safetensors").string(), file);
        return {"model.safetensors"};
    }
    // greedy: tensors in order, a new shard when the next would pass the limit
    std::vector<SafeTensorsFile> shards(1);
    std::uint64_t in_shard = 0;
    for (const auto& t : file.tensors) {
        if (in_shard > 0 && in_shard + t.nbytes() > shard_bytes) {
            shards.emplace_back();
            in_shard = 0;
        }
        shards.back().tensors.push_back(t);
        in_shard += t.nbytes();
    }
    const std::size_t n = shards.size();
    std::vector<std::string> names;
    nlohmann::ordered_json map = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < n; ++k) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", k + 1, n);
        names.emplace_back(buf);
        shards[k].metadata = file.metadata;
        shards[k].metadata["format"] = "pt";
        for (const auto& t : shards[k].tensors) map[t.name] = names.back();
    }
    for (std::size_t k = 0; k < n; ++k) write_safetensors((d / names[k]).string(), shards[k]);
    nlohmann::ordered_json index;
    index["metadata"] = {{"total_size", total}};
    index["weight_map"] = std::move(map);
    write_file_atomic((d / kHfIndexFile).string(), index.dump(2) + "\n");
    names.emplace_back(kHfIndexFile);
    return names;
}

// ---- peft ---------------------------------------------------------------------------------------------

std::string peft_name_of(const std::string& name) { return kPeftPrefix + name + ".weight"; }

std::string headroom_name_of_peft(const std::string& peft) {
    const std::string pre = kPeftPrefix;
    if (peft.rfind(pre, 0) != 0) return "";
    std::string s = peft.substr(pre.size());
    const std::string w = ".weight";
    if (s.size() > w.size() && s.compare(s.size() - w.size(), w.size(), w) == 0) s.resize(s.size() - w.size());
    // peft >= 0.7 also writes "X.lora_A.default.weight" inside a model (not in saved files): accept it
    const std::string def = ".default";
    if (s.size() > def.size() && s.compare(s.size() - def.size(), def.size(), def) == 0) s.resize(s.size() - def.size());
    const auto dot = s.rfind('.');
    const std::string last = dot == std::string::npos ? s : s.substr(dot + 1);
    return last == "lora_A" || last == "lora_B" ? s : std::string();
}

PeftAdapterConfig parse_peft_config(const std::string& text, const std::string& what) {
    const json j = parse_json_limited(text, what);
    auto bad = [&](const std::string& field, const std::string& want, const json& got) {
        return InputError(HR_MSG("peft.field", "%1: \"%2\" must be %3, got %4; the adapter_config.json is not a peft "
                                               "LoRA adapter's"),
                          {what, field, want, json_brief(got)});
    };
    if (!j.is_object()) throw bad("(top level)", "an object", j);
    const json pt = j.value("peft_type", json());
    if (!pt.is_string() || pt.get<std::string>() != "LORA")
        throw InputError(HR_MSG("peft.type", "%1: peft_type %2 is not LORA; Headroom reads LoRA adapters only"),
                         {what, json_brief(pt)});
    PeftAdapterConfig c;
    const json r = j.value("r", json());
    if (!r.is_number_integer() || r.get<std::int64_t>() < 1 || r.get<std::int64_t>() > 4096) throw bad("r", "an integer from 1 to 4096", r);
    c.r = r.get<int>();
    const json a = j.value("lora_alpha", json(c.r));
    if (!a.is_number() || !std::isfinite(a.get<double>()) || a.get<double>() < 0 || a.get<double>() > 1e6)
        throw bad("lora_alpha", "a number from 0 to 1000000", a);
    c.lora_alpha = a.get<double>();
    const json dr = j.value("lora_dropout", json(0.0));
    if (!dr.is_number() || !(dr.get<double>() >= 0 && dr.get<double>() < 1)) throw bad("lora_dropout", "a number in [0, 1)", dr);
    c.lora_dropout = dr.get<double>();
    const json tm = j.value("target_modules", json::array());
    if (tm.is_string()) {
        c.target_modules.push_back(tm.get<std::string>());
    } else if (tm.is_array()) {
        for (const auto& m : tm) {
            if (!m.is_string()) throw bad("target_modules", "a list of module names", tm);
            c.target_modules.push_back(m.get<std::string>());
        }
    } else if (!tm.is_null()) {
        throw bad("target_modules", "a list of module names", tm);
    }
    const json base = j.value("base_model_name_or_path", json(""));
    if (!base.is_string() && !base.is_null()) throw bad("base_model_name_or_path", "a folder or a name", base);
    if (base.is_string()) c.base_model_name_or_path = base.get<std::string>();
    return c;
}

json peft_config_json(const PeftAdapterConfig& c) {
    return {{"peft_type", "LORA"},
            {"task_type", "CAUSAL_LM"},
            {"r", c.r},
            {"lora_alpha", c.lora_alpha},
            {"lora_dropout", c.lora_dropout},
            {"target_modules", c.target_modules},
            {"base_model_name_or_path", c.base_model_name_or_path},
            {"bias", "none"},
            {"fan_in_fan_out", false},
            {"inference_mode", true},
            {"modules_to_save", nullptr},
            {"init_lora_weights", true}};
}

void write_peft_adapter(const std::string& dir, const PeftAdapterConfig& c, const SafeTensorsFile& adapters) {
    SafeTensorsFile f;
    f.metadata["format"] = "pt";
    for (const auto& t : adapters.tensors) {
        SafeTensor p = t;
        p.name = peft_name_of(t.name);
        f.tensors.push_back(std::move(p));
    }
    const fs::path d(dir);
    write_safetensors((d / "adapter_model.safetensors").string(), f);
    write_file_atomic((d / "adapter_config.json").string(), peft_config_json(c).dump(2) + "\n");
}

PeftAdapter read_peft_adapter(const std::string& dir) {
    const fs::path d(dir);
    const fs::path cfg = d / "adapter_config.json";
    PeftAdapter a;
    a.config = parse_peft_config(hff_read_text(cfg, 1u << 20), cfg.string());
    const std::string weights = (d / "adapter_model.safetensors").string();
    SafeTensorsFile f = read_safetensors(weights, SafetensorsRead::mapped);
    for (auto& t : f.tensors) {
        const std::string name = headroom_name_of_peft(t.name);
        if (name.empty())
            throw InputError(HR_MSG("peft.name", "%1: tensor '%2' is not a peft LoRA adapter's "
                                                 "(base_model.model.NAME.lora_A.weight or .lora_B.weight)"),
                             {weights, t.name});
        if (t.shape.size() != 2 || (name.back() == 'A' ? t.shape[0] : t.shape[1]) != a.config.r)
            throw InputError(HR_MSG("peft.shape", "%1: tensor '%2' has shape %3, which does not have rank r = %4 of "
                                                  "adapter_config.json; the adapter's files do not belong together"),
                             {weights, t.name, shape_str(t.shape), std::to_string(a.config.r)});
        t.name = name;
        a.tensors.tensors.push_back(std::move(t));
    }
    char scale[64];
    std::snprintf(scale, sizeof scale, "%.17g", a.config.lora_alpha / a.config.r);
    a.tensors.metadata["lora_scale"] = scale;
    const std::string& base = a.config.base_model_name_or_path;
    std::error_code ec;
    if (!base.empty()) a.base_dir = fs::path(base).is_absolute() ? base : (d / base).lexically_normal().string();
    if (!a.base_dir.empty() && !fs::is_directory(a.base_dir, ec) && !fs::path(base).is_absolute() && fs::is_directory(base, ec))
        a.base_dir = base;  // relative to where Headroom runs, as peft itself would take it
    return a;
}

}  // namespace hr
