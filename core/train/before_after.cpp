#include "train/before_after.h"

#include <filesystem>

#include "base/error.h"
#include "io/hf_folder.h"
#include "nn/layer.h"
#include "train/config.h"
#include "train/resume.h"

namespace hr {

namespace {

namespace fs = std::filesystem;

bool has_adapters(const SafeTensorsFile& f) {
    for (const SafeTensor& t : f.tensors)
        if (is_lora_adapter(t.name)) return true;
    return false;
}

// The starting tensors of a full-training run, by the names its model has (a checkpoint's "model." prefix
// taken off)
SafeTensorsFile start_tensors(const StartWeights& s) {
    std::error_code ec;
    if (s.kind == StartWeights::Kind::step0_checkpoint) {
        SafeTensorsFile ck = read_safetensors(s.path);
        SafeTensorsFile out;
        for (SafeTensor& t : ck.tensors)
            if (t.name.rfind("model.", 0) == 0) {
                t.name = t.name.substr(6);
                out.tensors.push_back(std::move(t));
            }
        return out;
    }
    if (fs::is_directory(s.path, ec)) {
        if (is_hf_model_folder(s.path)) return read_hf_weights(s.path);
        return read_safetensors(s.path + "/model.safetensors");  // an earlier run's folder
    }
    return read_safetensors(s.path);
}

}  // namespace

StartWeights run_start_weights(const std::string& run_dir) {
    const std::string weights = run_dir + "/model.safetensors";
    std::error_code ec;
    if (!fs::is_regular_file(weights, ec))
        throw InputError(HR_MSG("before.no_weights",
                                "%1 holds no model.safetensors; pass the folder of a finished run (headroom train --out DIR)"),
                         {run_dir});
    const SafeTensorsFile trained = read_safetensors(weights);
    if (has_adapters(trained) && trained.metadata.count("lora_scale")) return {StartWeights::Kind::adapters_off, weights};
    const TrainConfig config = read_run_config(run_dir);
    if (!config.init_from.empty()) {
        const std::string& from = config.init_from;
        const bool usable = fs::is_regular_file(from, ec) || is_hf_model_folder(from) ||
                            fs::is_regular_file(fs::path(from) / "model.safetensors", ec);
        if (usable && !is_peft_adapter_folder(from)) return {StartWeights::Kind::init_from, from};
        throw InputError(HR_MSG("before.init_from_gone",
                                "%1 started from %2, which is no longer there as a weights file, a model folder or a "
                                "run folder, so there is no 'before' to compare with; put it back at that path"),
                         {run_dir, from});
    }
    const std::string step0 = run_dir + "/checkpoint-0.safetensors";
    if (fs::is_regular_file(step0, ec)) return {StartWeights::Kind::step0_checkpoint, step0};
    throw InputError(HR_MSG("before.none",
                            "%1 trained from freshly initialised weights and kept no step-0 checkpoint, so there is no "
                            "'before' to compare with; compare a LoRA run or a run started with --init-from"),
                     {run_dir});
}

std::unique_ptr<Generator> start_generator(const std::string& run_dir, int threads) {
    const StartWeights s = run_start_weights(run_dir);
    if (s.kind == StartWeights::Kind::adapters_off) {
        std::unique_ptr<Generator> g = Generator::from_run(run_dir, threads);
        g->set_adapters_enabled(false);
        return g;
    }
    // the trained file's model spec and tokenizer, the starting tensors
    const SafeTensorsFile trained = read_safetensors(run_dir + "/model.safetensors");
    SafeTensorsFile start = start_tensors(s);
    start.metadata = trained.metadata;
    start.metadata.erase("lora_scale");
    std::shared_ptr<const Tokenizer> tok;
    if (auto it = trained.metadata.find("tokenizer"); it != trained.metadata.end()) tok = load_tokenizer(it->second, run_dir);
    return Generator::from_file(start, std::move(tok), s.path, threads);
}

}  // namespace hr
