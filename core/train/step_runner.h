#pragma once
// The step runners: one optimizer step of a TrainingState on a batch's rows (train/workload.h StepRows),
// one runner per way of stepping. The trainer (train/trainer.cpp) picks one and keeps the run's figures
// (train/step_progress.h); the benchmarks (bench/dist_bench.cpp, bench/headroom_gpu_bench.cpp) call the
// same runners on rows of their own, so they time the product's step.
// - HostStepRunner: micro-batches on the host's schedule (gradients accumulate, each scaled by its share
//   of the global batch, so the sum is the gradient of the batch's mean loss), the loss read back and
//   checked (several ranks: reduced and decided together), the optimizer.
// - PipelineStepRunner: the stages in the 1F1B order (strategy/pipeline.h): the first stage uploads each
//   micro-batch, the last scores it; the step's figures are the last stage's.
// - DeviceStepRunner: the step without host synchronisation (issue 20): uploads overlap the previous
//   step, the loss and the finite check stay on the device, the figures come back through a ring a few
//   steps later; a full step of one micro-batch is captured once as a CUDA graph and replayed.
// Dropout masks are keyed on the run-wide sample index (TrainingState::first_sample), so N ranks equal
// one process and every runner draws the same masks.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/step_figures.h"

namespace hr {

class Communicator;
class MemoryLedger;
class StepRows;
class TrainingState;
struct ResolvedStrategy;

// This rank's micro-batches of a batch of `rows` rows: the strategy's split of a full batch (ranks that split
// the batch always have one), or, for a shorter last batch of an epoch (one process, or ranks that all take
// the whole batch: a split head, pipeline stages), pieces of the micro-batch size, the same on every rank.
std::vector<std::pair<std::int64_t, std::int64_t>> micro_batches_of(const ResolvedStrategy& s, std::int64_t rows);

// A host step's figures (on several ranks: the global batch's, the same on every rank).
struct HostStepResult {
    double loss = 0;           // the batch's mean loss (not finite: the step stopped there, no update)
    std::int64_t correct = 0;  // in units (samples or tokens)
    std::int64_t rows = 0;     // the step's samples over every rank
    bool finite = true;        // false: the loss stopped being a number; the optimizer did not run
    bool applied = true;       // false: the optimizer skipped the step (fp16: inf/NaN gradients)
};

// The host step, and the base of the pipeline's. `ledger` (may be null) gets the step's phases.
class HostStepRunner {
public:
    HostStepRunner(TrainingState& st, Communicator* comm, MemoryLedger* ledger);
    virtual ~HostStepRunner() = default;
    // One optimizer step (0-based `step`, which keys dropout) at learning rate `lr` on `rows`' batch.
    HostStepResult step(StepRows& rows, std::int64_t step, double lr);

protected:
    // The micro-batches' forward and backward; the figures before the ranks agree on them.
    virtual HostStepResult micro_steps(StepRows& rows, std::int64_t step, std::int64_t global_rows,
                                       const std::vector<std::pair<std::int64_t, std::int64_t>>& micro);
    // The global batch's figures, the same on every rank (agree_on_figures, train/ranks.h).
    void agree(HostStepResult& r);
    void phase(const char* name);
    TrainingState& st_;
    Communicator* comm_;
    MemoryLedger* ledger_;
};

class PipelineStepRunner final : public HostStepRunner {
public:
    using HostStepRunner::HostStepRunner;

protected:
    HostStepResult micro_steps(StepRows& rows, std::int64_t step, std::int64_t global_rows,
                               const std::vector<std::pair<std::int64_t, std::int64_t>>& micro) override;
};

// The runner for a state's layout: pipeline stages or the host step.
std::unique_ptr<HostStepRunner> make_host_step_runner(TrainingState& st, Communicator* comm, MemoryLedger* ledger);

// A device step's figures as they come back, with what the step was issued with.
struct DeviceStepFigures {
    StepFigures figures;        // the device's (loss, correct, bad labels, loss scale, skipped)
    std::int64_t step = 0;      // 1-based
    std::int64_t step_in_epoch = 0;
    int epoch = 0;
    std::int64_t rows = 0;
    double lr = 0, seconds = 0;
};

class DeviceStepRunner {
public:
    using Clock = std::chrono::steady_clock;
    using Sink = std::function<void(const DeviceStepFigures&)>;
    // `graphs`: capture a full step of one micro-batch as a CUDA graph (never on the CPU). `ring_slots`:
    // 0 for the ring's own default. `ledger` (may be null) gets the step's phases.
    DeviceStepRunner(TrainingState& st, Backend& be, MemoryLedger* ledger, bool graphs = true, int ring_slots = 0);
    ~DeviceStepRunner();
    int ring_slots() const;
    // Whether full steps will be replayed as a graph.
    bool graphed() const { return graphs_; }
    // Issues step `step` (0-based: dropout's key) of `rows`' batch; `issued` says what it is (its 1-based
    // step, epoch, rows, lr). Figures that came back meanwhile go to `sink`, in order. Returns the step's
    // time on the host (with the ring full: the device's pace); then collect().
    double issue(StepRows& rows, std::int64_t step, const DeviceStepFigures& issued, Clock::time_point t0,
                 const Sink& sink);
    // The figures that are back, without waiting.
    void collect(const Sink& sink);
    // Every issued step's figures, waiting for the device; the state's control values back on the host.
    void drain(const Sink& sink);

private:
    void take(const StepFigures& f, const Sink& sink);
    TrainingState& st_;
    Backend& be_;
    MemoryLedger* ledger_;
    bool graphs_;
    std::unique_ptr<StepFigureRing> ring_;
    std::unique_ptr<Backend::CapturedWork> graph_;
    bool graph_tried_ = false;
    std::deque<DeviceStepFigures> issued_;  // steps whose figures have not come back yet, in order
};

}  // namespace hr
