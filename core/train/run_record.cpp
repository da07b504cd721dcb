#include "train/run_record.h"

#include "memory/step_timeline.h"
#include "base/json_limits.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "plan/device_description.h"
#include "train/device.h"
#include "plan/planner.h"
#include "train/record_json.h"
#include "train/run_summary.h"

namespace hr {

using json = nlohmann::json;


json make_run_record(const TrainConfig& c, const TrainResult& r) {
    json j;
    j["format"] = "headroom-run";
    j["version"] = 4;  // 4: a split head x data-parallel replicas (rank r: head part r / D); 3: pipeline stages x
                       // data-parallel replicas (rank r: stage r / D); 2: distributed.tp_head,
                       // .pipeline_layers, .rank_batch each rank's samples (docs/run-json.md)
    j["headroom_version"] = HEADROOM_VERSION;
    {
        std::time_t t = std::time(nullptr);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
        j["created"] = buf;
    }
    j["status"] = r.status;
    j["error"] = r.error;
    j["device"] = r.device_name;
    // the planner's description of the device the run asked for (capacity, GPU overheads, rates)
    try {
        const std::string dev = c.device == "auto" ? auto_device().device : resolve_device(c.device);
        j["device_info"] = device_description_json(describe_device(dev, c.threads));
    } catch (const std::exception&) {
        j["device_info"] = nullptr;
    }
    j["config"] = train_config_to_json(c);
    SpecReport rep = analyze_model_spec(c.model);
    json layers = json::array();
    for (const auto& l : rep.layers)
        layers.push_back({{"index", l.index},
                          {"path", l.path},
                          {"type", l.type},
                          {"label", l.label},
                          {"input_shape", l.input_shape},
                          {"output_shape", l.output_shape},
                          {"params", l.params},
                          {"activation_bytes_per_sample", l.activation_bytes_per_sample}});
    j["model"] = {{"name", c.model.name}, {"param_count", r.param_count}, {"layers", layers}};
    j["data"] = {{"spec", c.data},
                 {"train_samples", r.train_samples},
                 {"test_samples", r.test_samples},
                 {"source_dir", r.data_source}};
    j["epochs"] = r.epochs;  // train/record_json.h, as a rank sends them
    j["final"] = run_final_summary(r);  // train/run_summary.h: the same figures as the history's final_metrics
    if (r.seq > 0) {  // language models: the tokens
        j["data"]["tokenizer"] = r.tokenizer;
        j["data"]["vocab_size"] = r.vocab_size;
        j["data"]["seq"] = r.seq;
        if (!r.chat_template.empty()) {  // instruction data (jsonl:)
            j["data"]["chat_template"] = r.chat_template;
            j["data"]["sequences"] = r.sequences;
            j["data"]["trained_tokens"] = r.trained_tokens;
            j["data"]["truncated_rows"] = r.truncated_rows;
        }
    }
    // every evaluation: every eval_every steps, at the end of an epoch as evaluate_each_epoch says, at the end
    j["evals"] = r.evals;
    // run-folder checkpoints (train/resume.h)
    j["resume"] = {{"resumed_from_step", r.resumed_from_step >= 0 ? json(r.resumed_from_step) : json(nullptr)},
                   {"checkpoint", r.checkpoint.empty() ? json(nullptr)
                                                       : json(std::filesystem::path(r.checkpoint).filename().string())},
                   {"init_from", c.init_from.empty() ? json(nullptr) : json(c.init_from)},
                   {"weights_match", r.weights_notes}};
    j["memory"] = {{"measured", r.ledger},  // memory/ledger_json.h
                   {"measured_host", r.host_ledger},
                   {"offload_bytes_per_step", r.offload_bytes_per_step},
                   {"predicted", nullptr}};
    // the chosen step's timeline, summed up (memory/step_timeline.h; bounded: kJsonPhases phases at most)
    j["timeline"] = r.step_timeline.empty() ? json(nullptr) : step_timeline_summary_json(r.step_timeline);
    // how the run was spread over ranks (docs/distributed.md); one process: world_size 1, stage "none".
    // predicted_peak_bytes is filled next to memory.predicted, by whoever has the plan (null until then).
    j["distributed"] = run_distributed_summary(r, c.batch, {});
    return j;
}

std::string write_run_record(const std::string& dir, const TrainConfig& c, const TrainResult& r,
                             const MemoryPlan* predicted, const std::vector<std::size_t>& rank_predicted) {
    json record = make_run_record(c, r);
    if (predicted) record["memory"]["predicted"] = plan_to_json(*predicted);
    if (!rank_predicted.empty()) record["distributed"]["predicted_peak_bytes"] = rank_predicted;
    const std::string path = (std::filesystem::path(dir) / "run.json").string();
    write_file_atomic(path, record.dump(2) + "\n");
    return path;
}

}  // namespace hr
