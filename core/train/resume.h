#pragma once
// Run-folder checkpoints, resume and weights in (issue 13).
//
// A run folder DIR holds, from the start of the run:
//   DIR/config.json                    the run's TrainConfig (train_config_to_json), written first
//   DIR/checkpoint-STEP.safetensors    model state_dict ("model.<name>"), master copy ("master"),
//                                      optimizer state ("optimizer.exp_avg", ...)
//   DIR/checkpoint-STEP.json           step, epoch, position in the epoch, loss scale, counters, seed,
//                                      the epoch's running sums and the finished epochs; written after
//                                      its tensors, so a checkpoint is complete when its .json exists
// and, at the end, model.safetensors and run.json (run.json last: a folder without it is a run to
// resume). Every file is written atomically (base/atomic_file.h); the newest `keep` checkpoints stay.
// Randomness is counter-based (dropout keyed on the sample index, the data order on seed and epoch),
// so step, epoch and position in the epoch are the whole RNG and data-order state.
//
// Several ranks (docs/distributed.md "Checkpoints and resume"): a checkpoint is the same file one process
// writes (whole tensors; the master copy and optimizer state in one process's flat layout, see
// TrainingState::checkpoint_tensors), gathered from the ranks' shards; rank 0 alone writes it. Whether one
// is due is decided by rank 0 (its clock) for every rank. On resume rank 0 alone reads the run folder,
// checks the checkpoint against the run and broadcasts it; every rank then takes its part, so a run
// written on N ranks resumes on any number of ranks, one process included, and the reverse.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "nn/model.h"
#include "train/config.h"
#include "train/events.h"

namespace hr {

class TrainingState;
class Communicator;

// Where the trainer stands after an optimizer step.
struct RunCursor {
    std::int64_t step = 0;            // optimizer steps done
    int epoch = 1;                    // the epoch in progress (1-based)
    std::int64_t step_in_epoch = 0;   // its steps done
    std::int64_t total_steps = 0;     // the run's length when written
    double loss_sum = 0;              // the epoch's running sums (its epoch line is then the same)
    std::int64_t correct = 0, seen = 0;
    double epoch_train_seconds = 0;
    double train_seconds = 0;         // before this epoch
    std::int64_t samples_trained = 0;
    std::vector<EpochEvent> epochs;   // finished epochs
};

struct Checkpoint {
    RunCursor cursor;
    double loss_scale = 1.0;
    std::int64_t good_steps = 0, skipped_steps = 0, optimizer_steps = 0;
    std::uint64_t seed = 0;
    int world_size = 1;  // the ranks that wrote it (absent in older checkpoints: one process)
    SafeTensorsFile tensors;
    std::string path;  // the .json
};

std::string run_config_path(const std::string& dir);
void write_run_config(const std::string& dir, const TrainConfig& config);
// InputError when DIR has no config.json or it does not load.
TrainConfig read_run_config(const std::string& dir);
// Whether DIR holds a checkpoint (a complete one).
bool has_checkpoint(const std::string& dir);
// The newest complete checkpoint in DIR; InputError naming DIR when there is none or it is damaged.
Checkpoint read_latest_checkpoint(const std::string& dir);
// The same checkpoint's JSON part only (no tensors read: cheap, for showing where a run stands).
Checkpoint read_latest_checkpoint_json(const std::string& dir);
// The checkpoint's JSON part, checked (every field present, in range); InputError naming `where`.
Checkpoint parse_checkpoint_json(const std::string& text, const std::string& where);
// Checks a checkpoint against a freshly built TrainingState: every tensor's name, shape and dtype
// (InputError naming the tensor).
void check_checkpoint(const TrainingState& state, const Checkpoint& ck, const std::string& where);
// check_checkpoint, then puts the checkpoint into the state (this rank's part of it); nothing changed on
// error. No communication.
void restore_checkpoint(TrainingState& state, const Checkpoint& ck, const std::string& where);
// Several ranks: rank 0's checkpoint (read and checked) to every other rank, whose `ck` is filled in.
// Collective; nothing is done at world size 1.
void broadcast_checkpoint(TrainingState& state, Checkpoint& ck);
// Writes checkpoint-STEP.{safetensors,json} and removes all but the newest `keep`. Returns the .json path.
// Several ranks: collective (every rank calls it; TrainingState::gather_checkpoint); rank 0 writes and the
// others write nothing and return "" (their `dir` is not used).
std::string write_checkpoint(const std::string& dir, TrainingState& state, const RunCursor& cursor,
                             std::uint64_t seed, int keep = 2);

// --save-every: "N" steps, "Nm" minutes, "Ns" seconds; InputError otherwise.
void parse_save_every(const std::string& text, std::int64_t& steps, double& seconds);

// --- weights in (--init-from, headroom eval) -----------------------------------------------------------
struct WeightsMatch {
    bool stripped_module = false;  // DDP's "module." prefix removed
    bool by_order = false;         // names differed: matched by order and shape
    std::vector<std::pair<std::string, std::string>> table;  // by order: (file name, model name)
};
// Loads a safetensors file into the model: Headroom's/PyTorch's names, with DDP's "module." prefix
// stripped, or, when the names differ, each tensor by order (module names in natural order, within a
// module weight, bias, running_mean, running_var, num_batches_tracked) with identical shapes.
// f32/f64/bf16/f16 convert. InputError naming each tensor that does not fit; the model is unchanged then.
WeightsMatch load_weights_into(Model& model, const std::string& path);
// The same with the file already read (`path` names it in messages).
WeightsMatch load_weights_into(Model& model, SafeTensorsFile file, const std::string& path);
// The lines a person reads about a match (the prefix note, the by-order table).
std::vector<std::string> describe_weights_match(const WeightsMatch& m);

}  // namespace hr

namespace hr {

// The trainer's checkpoint hook, one per run: decides when a checkpoint is due and writes it.
class RunCheckpointer {
public:
    using Log = std::function<void(const std::string&)>;
    RunCheckpointer() = default;
    // dir "": off. Intervals from the config (save_every_steps, else save_every_seconds).
    // Several ranks: `ranks` is the run's communicator on every rank when rank 0 has a run folder; rank 0
    // gives the folder, the others "" (they take part in every checkpoint's gathering, writing nothing).
    // Every decision (is one due, by steps or rank 0's clock; on_stop) is taken alike on every rank.
    void configure(std::string dir, const TrainConfig& config, Log warn, Communicator* ranks = nullptr);
    bool enabled() const { return active_; }
    // Payload the checkpoints moved through the communicator, and the time spent waiting for it (kept
    // out of the run's per-step communication figures).
    double communication_bytes() const { return comm_bytes_; }
    double communication_seconds() const { return comm_seconds_; }
    // After each optimizer step (cursor.step steps done): writes a checkpoint every N steps, or when
    // the interval has passed, and always after the run's last step (cursor.total_steps). A failure to
    // write is warned about and the run goes on (the previous checkpoint stays).
    void after_step(TrainingState& state, RunCursor cursor);
    // Whether after_step at `step` would write (the step without host synchronisation asks first: it
    // brings the step's figures to the host, waiting for them, only then). Collective like after_step.
    bool due(std::int64_t step, std::int64_t total_steps);
    // The newest step's cursor without writing (on_stop writes it when it was not written).
    void note(RunCursor cursor);
    // After an epoch's line (its evaluation): when the newest checkpoint is of this very step, its JSON
    // gets the finished epochs too (so a run resumed from an epoch's end keeps that epoch's line).
    void after_epoch(const std::vector<EpochEvent>& epochs);
    // A stopped run: the last step's checkpoint when it was not written yet, with the finished epochs.
    void on_stop(TrainingState& state, const std::vector<EpochEvent>& epochs);
    const std::string& last_path() const { return last_path_; }

private:
    std::string dir_;
    bool active_ = false;
    Communicator* comm_ = nullptr;
    double comm_bytes_ = 0, comm_seconds_ = 0;
    bool rank0_says(bool mine);  // several ranks: rank 0's answer, on every rank
    std::int64_t every_steps_ = 0;
    double every_seconds_ = 600;
    std::uint64_t seed_ = 0;
    Log warn_;
    std::chrono::steady_clock::time_point last_time_ = std::chrono::steady_clock::now();
    std::int64_t last_step_ = -1;      // last written
    RunCursor pending_;                // the newest step's cursor (for on_stop)
    void write(TrainingState& state, const RunCursor& cursor);
    std::string last_path_;
};

}  // namespace hr
