#pragma once
// The trainer loop: data, model, optimizer and strategies of one run. Blocking run() on the caller's
// thread; request_stop()/set_paused() may be called from any thread and take effect between steps.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/ledger.h"
#include "plan/planner.h"
#include "train/config.h"
#include "train/events.h"

namespace hr {

struct TrainResult {
    std::string status = "finished";  // finished | stopped | failed
    std::string error;                // failed: the message
    bool bad_input = false;           // failed because of the run's settings (e.g. the loss diverged)
    double test_accuracy = 0;
    double test_loss = 0;
    double train_loss = 0;            // last epoch's mean (or of the steps run)
    double train_accuracy = 0;
    std::int64_t steps = 0;
    int epochs_completed = 0;
    double seconds = 0;
    double images_per_second = 0;     // training throughput over the whole run
    std::vector<EpochEvent> epochs;
    LedgerSnapshot ledger;            // peaks of the run
    std::string device_name;          // "cpu (OpenBLAS ..., 2 threads)"
    std::int64_t param_count = 0;
    std::int64_t train_samples = 0;
    std::int64_t test_samples = 0;
    std::string data_source;          // folder the dataset came from ("" for synthetic)
    std::string strategy;             // ResolvedStrategy::describe()
    std::int64_t skipped_steps = 0;   // fp16: steps skipped for inf/NaN gradients
    double final_loss_scale = 0;      // fp16: the loss scale at the end (else 0)
    LedgerSnapshot host_ledger;       // host memory of offloaded optimizer state (empty otherwise)
    bool out_of_memory = false;       // failed because the device (or --memory-limit) ran out
    std::string oom_category;         // the largest category when it happened
    std::size_t oom_limit = 0;
};

// The message for an out-of-memory failure: what was asked, what is in use by category and the
// largest layers, and the strategies that cut the largest category.
std::string describe_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device);

// `--checkpoint auto` without a budget: the planner's choice for the device's memory.
std::vector<int> choose_auto_checkpoint(const TrainConfig& config);
// The planner's request for a run's config (model, batch, optimizer, strategies, device, memory limit as
// the budget). Sample counts size the data loader's buffers: pass a finished run's counts, or 0 to use
// the config's train/test limits.
PlanRequest plan_request(const TrainConfig& config, std::int64_t train_samples = 0, std::int64_t test_samples = 0);

class Trainer {
public:
    Trainer(TrainConfig config, TrainCallbacks callbacks = {});
    ~Trainer();

    // Loads data, builds the model and trains. Throws InputError for a bad config/data/spec before
    // any training; a NaN/inf loss or another failure during training ends the run with status
    // "failed" and the message in error (and throws nothing). Stop requests end it as "stopped".
    TrainResult run();

    void request_stop();
    void set_paused(bool paused);
    bool paused() const { return paused_.load(); }

    // After run(): write the trained weights (PyTorch state_dict names) to a safetensors file.
    void save_weights(const std::string& path, const std::string& run_json_text = "") const;
    const TrainConfig& config() const { return config_; }

private:
    struct Impl;
    TrainConfig config_;
    TrainCallbacks callbacks_;
    std::unique_ptr<Impl> impl_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> paused_{false};
    std::mutex pause_mutex_;
    std::condition_variable pause_cv_;
    void wait_while_paused();
};

}  // namespace hr
