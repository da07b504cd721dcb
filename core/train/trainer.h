#pragma once
// The trainer loop: data, model, optimizer and strategies of one run. Blocking run() on the caller's
// thread; request_stop()/set_paused() may be called from any thread and take effect between steps.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/message.h"
#include "memory/ledger.h"
#include "plan/planner.h"
#include "train/config.h"
#include "train/events.h"
#include "train/resume.h"

namespace hr {

struct TrainResult {
    std::string status = "finished";  // finished | stopped | failed
    std::string error;                // failed: the message
    std::vector<Message> error_messages;  // failed: the same as translatable sentences (empty: only error)
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
    double tokens_per_second = 0;     // language models: training throughput over the whole run
    std::vector<EvalEvent> evals;     // language models: every validation loss, the last at the end
    std::string tokenizer;            // language models: "byte", "char", "bpe:4000"
    std::int64_t vocab_size = 0;      // the tokenizer's
    std::int64_t seq = 0;             // tokens per sequence
    std::string device_name;          // "cpu (OpenBLAS ..., 2 threads)"
    std::int64_t param_count = 0;
    std::int64_t train_samples = 0;   // language models: training tokens
    std::int64_t test_samples = 0;    // language models: validation tokens
    std::string data_source;          // folder the dataset came from ("" for synthetic)
    std::string strategy;             // ResolvedStrategy::describe()
    std::int64_t skipped_steps = 0;   // fp16: steps skipped for inf/NaN gradients
    double final_loss_scale = 0;      // fp16: the loss scale at the end (else 0)
    LedgerSnapshot host_ledger;       // host memory of offloaded optimizer state (empty otherwise)
    bool out_of_memory = false;       // failed because the device (or --memory-limit) ran out
    std::string oom_category;         // the largest category when it happened
    std::size_t oom_limit = 0;
    std::int64_t resumed_from_step = -1;  // --resume: the checkpoint's step (-1: a fresh run)
    std::string checkpoint;           // the last checkpoint written (train/resume.h), "" : none
    std::vector<std::string> weights_notes;  // --init-from: how the file's tensors were matched
    // several ranks (docs/distributed.md); one process: world_size 1, shard "none"
    int world_size = 1;
    int rank = 0;                                // the rank this result comes from (metrics are all ranks')
    std::string shard = "none";                  // the sharding stage
    std::vector<std::int64_t> rank_batches;      // samples of each rank per step
    std::vector<std::size_t> rank_peak_bytes;    // measured device peak of each rank (the ledger's)
    // each rank's process at its peak as the OS counts it (VmHWM at the run's end, -1 unknown): the
    // ledger's host side, the runtime, the data and the libraries (docs/design.md decision 9)
    std::vector<std::int64_t> rank_resident_peak_bytes;
    double communication_bytes_per_step = 0;     // payload this rank handed its communicator per optimizer step
    double communication_seconds_per_step = 0;   // host time this rank waited for communication per step
};

// The message for an out-of-memory failure: what was asked, what is in use by category and the
// largest layers, and the strategies that cut the largest category; as translatable sentences, and
// as their English joined by spaces.
std::vector<Message> out_of_memory_messages(const OutOfMemory& e, const ModelSpec& spec, const std::string& device);
std::string describe_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device);

// `--checkpoint auto` without a budget: the planner's choice for the device's memory.
std::vector<int> choose_auto_checkpoint(const TrainConfig& config);
// The planner's request for a run's config (model, batch, optimizer, strategies, device, memory limit as
// the budget). Sample counts size the data loader's buffers: pass a finished run's counts, or 0 to use
// the config's train/test limits.
// With several ranks (launched by mpirun), the request is for this run's world size.
PlanRequest plan_request(const TrainConfig& config, std::int64_t train_samples = 0, std::int64_t test_samples = 0);

// Several ranks (docs/distributed.md). The world size of this process's run: mpirun's, else 1.
int world_size_of_run();
// The device of this rank: `cuda` (or `auto` on a GPU machine, when that GPU passes the self-test) is
// cuda:LOCAL_RANK, or cuda:0 when the launcher made one GPU visible to each rank; `cuda:0,2` this local
// rank's entry; one process: the flag as it is. InputError when a list is shorter than the local ranks or
// more ranks run here than there are GPUs. `visible_gpus` < 0: cuda_device_count().
struct RankEnvironment;
struct CommStats;
std::string rank_device(const std::string& device, const RankEnvironment& env, int visible_gpus = -1);
// Ends every rank of the run now (MPI_Abort), after this rank has said and recorded why: for the app,
// once a multi-rank run failed. Does nothing for one process. Never returns when it aborts.
void abort_ranks(const std::string& reason) noexcept;

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
    // The run folder at the start of run(): --init-from weights, or the resumed checkpoint; returns
    // where training starts (a fresh cursor for a new run).
    RunCursor begin_run_folder(TrainingState& state, std::int64_t total_steps, std::int64_t steps_per_epoch);
    std::string run_dir_;
    bool resume_ = false;
    RunCheckpointer checkpoints_;
    struct Impl;
    TrainResult run_text(const ResolvedStrategy& strategy);  // language models on text data
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
