#pragma once
// The trainer: one run's data, model, optimizer and strategies, and the one training loop every model
// goes through (a workload, train/workload.h, supplies what differs between images and text). Blocking
// run() on the caller's thread; request_stop()/set_paused() may be called from any thread and take effect
// between steps. The step is a step runner's (train/step_runner.h: host, pipeline, device with graph
// replay), the evaluation the Evaluator's (train/evaluator.h), a step's figures and its StepEvent
// RunProgress's (train/step_progress.h); the trainer orchestrates them. Rooms of its own: train/ranks.h
// (several ranks), train/out_of_memory.h (the report),
// train/run_folder.cpp (checkpoints, resume, --init-from), train/run_summary.h (the summed-up figures),
// plan/plan_request.h (the planner's request for a config).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/message.h"
#include "memory/ledger.h"
#include "plan/plan_request.h"
#include "train/config.h"
#include "train/events.h"
#include "train/out_of_memory.h"
#include "train/ranks.h"
#include "train/result.h"
#include "train/resume.h"

namespace hr {

struct CommStats;

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
    // Any thread: between the next two steps (or at the end) the trainer copies the weights to the host
    // and hands them to callbacks.on_snapshot; latest_snapshot() returns the newest copy taken. For a
    // Sample panel: generate from it on a thread of its own (train/generate.h).
    void request_snapshot();
    std::shared_ptr<const WeightsSnapshot> latest_snapshot() const;

    // After run(): write the trained weights (PyTorch state_dict names) to a safetensors file. Language
    // models also write their tokenizer file next to it and name it in the file's metadata.
    void save_weights(const std::string& path, const std::string& run_json_text = "") const;
    const TrainConfig& config() const { return config_; }
    // Run-folder checkpoints (train/resume.h); call before run(). The trainer writes DIR/config.json at
    // the start and checkpoints as the config's save_every says; with resume it continues from DIR's
    // newest checkpoint (the config must be the run's own, with its length, threads or device changed).
    void set_run_folder(const std::string& dir, bool resume = false);

private:
    // run()'s rooms (trainer.cpp): the loop's shared state, and what the loop does with it. The steps
    // themselves are the runners' (train/step_runner.h), a step's figures and event RunProgress's
    // (train/step_progress.h), the evaluation the Evaluator's (train/evaluator.h).
    struct Loop;
    using Clock = std::chrono::steady_clock;
    static void check_data_fits_model(const TrainConfig& c);
    void start_device(const ResolvedStrategy& strategy, const RankEnvironment& env, int world, const RunLog& log);
    void start_runners(Loop& L, bool device_step);
    void train_steps(Loop& L);
    void take_step(Loop& L, double lr, Clock::time_point t0);
    void settle(Loop& L);
    EvalEvent evaluate(Loop& L);
    void close_epoch(Loop& L);
    void emit_memory(Loop& L, bool force);
    void finish_result(Loop& L);
    // The run folder at the start of run(): --init-from weights, or the resumed checkpoint; returns
    // where training starts (a fresh cursor for a new run).
    RunCursor begin_run_folder(TrainingState& state, std::int64_t total_steps, std::int64_t steps_per_epoch);
    std::string run_dir_;
    bool resume_ = false;
    RunCheckpointer checkpoints_;
    struct Impl;
    std::vector<std::string> weights_notes_;  // --init-from: how the file's tensors were matched
    TrainResult setup_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device,
                                    const ResolvedStrategy& strategy);
    void finish_ranks(TrainResult& result, const CommStats& start);  // several ranks: see trainer.cpp
    void take_snapshot(std::int64_t step);
    TrainConfig config_;
    TrainCallbacks callbacks_;
    std::unique_ptr<Impl> impl_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> paused_{false};
    std::atomic<bool> snapshot_wanted_{false};
    mutable std::mutex snapshot_mutex_;
    std::mutex pause_mutex_;
    std::condition_variable pause_cv_;
    void wait_while_paused();
};

}  // namespace hr
