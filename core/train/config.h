#pragma once
// TrainConfig: everything a run needs (docs/design.md decision 5: strategies live here and compose).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/compression.h"
#include "nn/model_spec.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "strategy/strategy.h"

namespace hr {

struct TrainConfig {
    ModelSpec model;
    std::string model_source = "preset:seed-cnn";  // where the spec came from (for records)
    std::string data = "fashion-mnist";            // fashion-mnist | mnist | idx:DIR | synthetic | cifar10 | cifar10:DIR
                                                   // | csv:FILE | tsv:FILE | text:fortunes | text:FILE
    std::string target;                            // csv:/tsv: tables: the class column (--target; data/table.h)
    std::int64_t train_limit = 0;                  // 0: all samples
    std::int64_t test_limit = 0;
    int epochs = 1;
    std::int64_t steps = 0;                        // > 0: train this many steps instead of epochs
    std::int64_t batch = 64;
    OptimizerConfig optimizer;
    LrSchedule schedule;
    StrategyConfig strategy;
    std::uint64_t seed = 1;
    std::string device = "cpu";                    // auto | cpu | cuda:N
    int threads = 0;                               // 0: all cores
    bool evaluate_each_epoch = true;
    int memory_events_per_second = 10;             // ledger snapshots sent to the callbacks
    std::size_t memory_limit = 0;                  // cap on device bytes (0: the device's own), like a smaller card
    double rank_timeout = 300;                     // several ranks: seconds without progress before the run fails
    // language models (docs/transformers.md); text data only
    std::int64_t seq = 0;                          // tokens per training sequence (0: the model's "input" [T])
    std::string tokenizer = "byte";                // byte | char | bpe:N (SentencePiece BPE of N tokens) | a file
    std::string chat_template = "auto";            // jsonl data: auto | plain | llama3 | chatml | mistral
    std::string sequences = "pad";                 // jsonl data: pad (a row a window) | pack (rows joined)
    // the step whose memory timeline is recorded (memory/step_timeline.h; --timeline-step): 1-based; 0: the
    // first steady one (the second step, or the first of a one-step run); -1: none
    std::int64_t timeline_step = 0;
    std::int64_t eval_every = 0;                   // validation loss every N steps (0: at the end of each epoch)
    std::int64_t eval_tokens = 65536;              // validation tokens per evaluation (0: the whole split)
    // run-folder checkpoints (train/resume.h): every N steps when > 0, else every so many seconds; and at the end
    std::int64_t save_every_steps = 0;             // --save-every N
    double save_every_seconds = 600;               // --save-every 10m
    std::string init_from;                         // --init-from FILE.safetensors: the starting weights
    // --init-base DIR: a peft adapter's base model folder (init_from an adapter folder whose
    // base_model_name_or_path is a hub name or a path not here); "" = the adapter's own
    std::string init_base;
    // --prune S / --quantize int8|int4 (issue 23 item 4): when the run has finished, its weights are evaluated
    // on the test split as trained and again pruned/quantised (nn/compression.h); run.json "compression"
    CompressionOptions what_if;
};

// Bounds of validate_train_config (docs/run-json.md): they keep the trainer's epoch and step
// arithmetic far from overflow.
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;  // samples per step (16,777,216)
constexpr std::int64_t kMaxSteps = 1'000'000'000;          // --steps, schedule step sizes and warm-up
constexpr int kMaxEpochs = 100'000;

nlohmann::json train_config_to_json(const TrainConfig& c);
// InputError naming the field ("optimizer.lr") for a wrong JSON type or an integer that does not fit
// its field (never narrowed); unknown keys are ignored (run.json from a newer version still loads).
TrainConfig train_config_from_json(const nlohmann::json& j);
// Checks every field's range (batch, steps, epochs, label smoothing in [0, 1), finite reals, ...)
// and throws InputError naming the field and the flag that sets it. The last line of defence for the
// window and the CLI alike; the trainer calls it too.
void validate_train_config(const TrainConfig& c);

}  // namespace hr
