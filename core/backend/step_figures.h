#pragma once
// StepFigureRing: the per-step figures of a training step that runs without host synchronisation
// (backend.h, "the step without host synchronisation"), brought to the host a few steps later.
//
// After each step the trainer push()es the step's StepStats and StepControl tensors: the backend
// queues a copy of both into the next slot of a ring of host_buffer() memory (page-locked on a GPU) and
// returns at once. pop() hands back the oldest step whose copy has finished (or waits for it), so
// the host still gets one record per step, in order, just later. A full ring makes push() wait for
// the oldest slot, which bounds how far the host runs ahead of the device. Not thread-safe: one owner
// (the session thread).
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "backend/backend.h"

namespace hr {

struct StepFigures {
    std::int64_t step = 0;           // the caller's step number
    double loss = 0;                 // sum over micro-batches of share * mean loss
    std::int64_t correct = 0;        // rows whose argmax is the label
    std::int64_t bad_labels = 0;     // rows with a label outside [0, K): the step is not valid
    std::int64_t bad_label = 0;      // the first one, and its row within its micro-batch
    std::int64_t bad_row = 0;
    bool skipped = false;            // inf/NaN gradients (fp16): the optimizer did nothing
    double loss_scale = 1;           // after the step
    std::int64_t skipped_total = 0;  // steps skipped so far
    std::int64_t optimizer_steps = 0;
};

class StepFigureRing {
public:
    explicit StepFigureRing(Backend& backend, int slot_count = 16);
    // Queues this step's figures (stats: kStepStatsFields f64, control: kStepControlFields f64).
    // Returns figures that had to be taken out to make room (at most one), else nothing.
    std::vector<StepFigures> push(std::int64_t step, const Tensor& stats, const Tensor& control);
    // The oldest pending figures whose copy is done (wait: the oldest at all, waiting for it).
    bool pop(StepFigures& out, bool wait = false);
    // Everything still pending, waiting for it.
    std::vector<StepFigures> drain();
    std::size_t pending() const { return pending_.size(); }
    int slot_count() const { return slots_; }

private:
    struct Pending {
        int slot;
        std::int64_t step;
        std::shared_ptr<Backend::Fence> fence;
    };
    StepFigures read(const Pending& p) const;

    Backend& backend_;
    int slots_;
    std::shared_ptr<void> host_;  // slots x (stats + control) doubles
    int next_ = 0;
    std::deque<Pending> pending_;
};

}  // namespace hr
