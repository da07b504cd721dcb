#pragma once
// Where a run is and what its steps add up to: the checkpoint cursor's figures (train/resume.h RunCursor)
// as the run advances, and the one place a step's figures become the epoch's sums, the smoothed rate and
// the StepEvent, whichever runner (train/step_runner.h) took the step. Not thread-safe: the trainer's thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "train/events.h"
#include "train/resume.h"

namespace hr {

// One optimizer step's figures, as its runner measured them (the device step's arrive a few steps late).
struct StepOutcome {
    std::int64_t step = 0;           // 1-based, the step these figures are of
    int epoch = 0;
    std::int64_t step_in_epoch = 0;  // 1-based
    std::int64_t rows = 0;           // the step's samples over every rank
    double lr = 0;
    double seconds = 0;              // the step's time
    double loss = 0;                 // the batch's mean loss
    std::int64_t correct = 0;        // in units (samples or tokens)
    double loss_scale = 0;           // after the step (fp16), else as the state has it
    bool skipped = false;            // the optimizer skipped it (fp16: inf/NaN gradients)
    double grad_norm = 0;            // with --grad-clip (the host step's), else 0
};

// What the figures are counted in: the run's length and a row's units.
struct ProgressShape {
    std::int64_t total_steps = 0;
    std::int64_t steps_per_epoch = 0;
    std::int64_t units = 1;          // what accuracy counts per row: 1, or T tokens
    std::int64_t loss_rows = 1;      // rows per unit of weight in the epoch's loss sum (Workload)
    bool counts_tokens = false;      // a language model: tokens per second too
    bool loss_scaling = false;       // fp16: the events carry the loss scale
};

class RunProgress {
public:
    using Clock = std::chrono::steady_clock;
    RunProgress(const RunCursor& start, const ProgressShape& shape);

    RunCursor at;  // step, epoch, step_in_epoch, the epoch's sums, seconds, samples (its epochs: the result's)
    const ProgressShape shape;
    const Clock::time_point run_start = Clock::now();
    double samples_per_second = 0;  // smoothed over recent steps

    // A step was issued: its rows count as trained, the step and the step in the epoch move on.
    void advance(std::int64_t rows);
    // A step's figures: into the epoch's sums and the smoothed rate; the StepEvent to `on_step` (if any).
    void record(const StepOutcome& o, const std::function<void(const StepEvent&)>& on_step);
    // The epoch's mean training loss and accuracy so far (NaN before its first step).
    double epoch_loss() const;
    double epoch_accuracy() const;
    // The epoch's figures for its event (train loss, accuracy, rates; no test figures yet); then next_epoch()
    // moves the cursor to the next one.
    EpochEvent epoch_event() const;
    void next_epoch();
    double seconds() const { return std::chrono::duration<double>(Clock::now() - run_start).count(); }
    RunCursor cursor(const std::vector<EpochEvent>& epochs) const;
};

}  // namespace hr
