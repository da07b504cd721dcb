#pragma once
// What the training loop (Trainer::run, train/trainer.cpp) trains on. The loop is one for every model:
// device, communicator, engine, the step (micro-batches, accumulation, ranks, stop and pause, the loss
// check, the optimizer), evaluation, events, checkpoints and the end of the run. A workload supplies what
// differs: its data and how it is checked, the batch buffers, how rows reach the device, the loss of a
// micro-batch and what an evaluation walks through.
//   image: samples of an image (or any tensor) data set with class labels, epochs of a shuffled loader,
//          cross-entropy or MSE on one-hot targets, accuracy per sample (train/image_workload.cpp);
//   token: a language model on text: a tokenizer, random windows of the training split keyed on the step,
//          cross-entropy per token, the validation split in windows (train/token_workload.cpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "backend/backend.h"
#include "base/log.h"
#include "nn/model_spec.h"
#include "train/events.h"

namespace hr {

struct TrainConfig;
struct TrainResult;
struct ResolvedStrategy;
class Communicator;
class MemoryLedger;
class Tokenizer;
class TrainingState;

using WorkloadLog = RunLog;  // train/events.h

// Host rows of a batch for the step without host synchronisation (TrainingState::upload_next).
struct HostRows {
    const float* inputs = nullptr;
    const std::int64_t* labels = nullptr;
    const float* targets = nullptr;  // MSE's one-hot rows, else null
};

// What a step runner (train/step_runner.h) reads of a step's batch: its rows, uploaded a micro-batch at a
// time, their loss, and where they are on the host (the device step). A workload is one; a benchmark that
// makes its own rows (bench/) implements these alone.
class StepRows {
public:
    virtual ~StepRows() = default;
    // This rank's rows of the batch.
    virtual std::int64_t batch_rows() const = 0;
    // Rows [r0, r0 + n) of the batch in the micro-batch buffers: (the model's input, the targets).
    virtual std::pair<Tensor, Tensor> upload(std::int64_t r0, std::int64_t n) = 0;
    // A micro-batch's loss (mean over its rows) and its gradient scaled by `grad_scale`, in `grad`.
    virtual LossResult loss(const Tensor& logits, const Tensor& targets, std::int64_t r0, std::int64_t n,
                            float grad_scale, Tensor& grad) = 0;
    // The step without host synchronisation (strategy/training_state.h): where the batch's rows [r0, + n)
    // are on the host, for TrainingState::upload_next (a source that has none throws).
    virtual HostRows host_rows(std::int64_t r0, std::int64_t n);
};

class Workload : public StepRows {
public:

    // The model as it trains (a language model's with the run's sequence length).
    virtual const ModelSpec& spec() const = 0;
    // Reads and checks the data, before the engine is built: InputError names what is wrong and what to do.
    // Several ranks: every rank loads the same data (`comm` checks that they agree where a workload can).
    virtual void load(Communicator* comm, const WorkloadLog& log) = 0;
    // The batch buffers, on the run's ledger, once the training state exists (OutOfMemory past a limit).
    virtual void make_batches(TrainingState& st, MemoryLedger& ledger, Backend& be) = 0;
    // Optimizer steps in one pass over the training data (at least 1).
    virtual std::int64_t steps_per_epoch() const = 0;
    // The data's figures in the result: samples (a language model's tokens), source, tokenizer.
    virtual void describe(TrainResult& r) const = 0;
    // The data and batch in the run's first log line ("60000 samples, batch 64").
    virtual std::string batch_text() const = 0;
    // Rank 0, once the run folder is set up: files of the workload's own (a language model's tokenizer).
    virtual void write_run_files(const std::string& /*dir*/) const {}
    // The tokenizer that goes with the weights and snapshots (null: none).
    virtual std::shared_ptr<const Tokenizer> tokenizer() const { return nullptr; }

    // What a row's accuracy counts: 1 (a sample) or T (the tokens of a sequence).
    virtual std::int64_t units_per_row() const { return 1; }
    // Whether figures are also given per token (a language model).
    virtual bool counts_tokens() const { return false; }
    // Rows per unit of weight in an epoch's running loss sum (the checkpoint cursor's loss_sum): 1 when it
    // sums loss x rows (images), the batch when it sums the steps' mean losses (language models).
    virtual std::int64_t rows_per_loss_weight() const { return 1; }

    // Training. Epoch `epoch` (1-based) begins; `batches_done` of its batches were trained before a resume.
    virtual void start_epoch(int epoch, std::int64_t batches_done) = 0;
    // The batch of step `step` (0-based, run-wide): false when the epoch has no more.
    virtual bool next_batch(std::int64_t step) = 0;
    // (and StepRows: the batch's rows, uploaded, and their loss)

    // Evaluation: chunks of at most `chunk_rows` rows (the same chunks on every rank), 0 at the end.
    virtual void start_eval() = 0;
    virtual std::int64_t next_eval_chunk(std::int64_t chunk_rows) = 0;
    // Rows [r0, r0 + n) of the chunk in the buffers, and their loss (no gradient).
    virtual std::pair<Tensor, Tensor> upload_eval(std::int64_t r0, std::int64_t n) = 0;
    virtual LossResult eval_loss(const Tensor& logits, const Tensor& targets, std::int64_t r0, std::int64_t n) = 0;

    // The step without host synchronisation (strategy/training_state.h): whether this workload's rows can
    // go through TrainingState::upload_next (StepRows::host_rows).
    virtual bool device_step_capable() const { return false; }
};

// The workloads of train/image_workload.cpp and train/token_workload.cpp. `config` must outlive the
// workload (the strategy is copied). A token workload checks the tokenizer flag at once; `resume` reads the run's own
// tokenizer from `run_dir`.
std::unique_ptr<Workload> make_image_workload(const TrainConfig& config, const ResolvedStrategy& strategy);
std::unique_ptr<Workload> make_token_workload(const TrainConfig& config, const ResolvedStrategy& strategy,
                                              bool resume, const std::string& run_dir);

}  // namespace hr
