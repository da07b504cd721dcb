// A run's progress and the one StepEvent (train/step_progress.h).
#include "train/step_progress.h"

#include <cmath>

namespace hr {

RunProgress::RunProgress(const RunCursor& start, const ProgressShape& s) : at(start), shape(s) {
    at.total_steps = s.total_steps;
    at.epochs.clear();  // the result keeps the finished epochs
}

void RunProgress::advance(std::int64_t rows) {
    ++at.step;
    ++at.step_in_epoch;
    at.samples_trained += rows;
}

void RunProgress::record(const StepOutcome& o, const std::function<void(const StepEvent&)>& on_step) {
    at.loss_sum += o.loss * static_cast<double>(o.rows) / static_cast<double>(shape.loss_rows);
    at.correct += o.correct;
    at.seen += o.rows * shape.units;
    const double sps = o.seconds > 0 ? static_cast<double>(o.rows) / o.seconds : 0;
    samples_per_second = samples_per_second == 0 ? sps : 0.9 * samples_per_second + 0.1 * sps;
    if (!on_step) return;
    StepEvent ev;
    ev.step = o.step;
    ev.total_steps = shape.total_steps;
    ev.epoch = o.epoch;
    ev.step_in_epoch = o.step_in_epoch;
    ev.steps_per_epoch = shape.steps_per_epoch;
    ev.loss = o.loss;
    ev.accuracy = o.rows ? static_cast<double>(o.correct) / static_cast<double>(o.rows * shape.units) : 0;
    ev.lr = o.lr;
    ev.step_seconds = o.seconds;
    ev.images_per_second = samples_per_second;
    ev.tokens_per_second = shape.counts_tokens ? samples_per_second * static_cast<double>(shape.units) : 0;
    ev.elapsed_seconds = seconds();
    // the pace so far (the steps issued, which for the device step run ahead of the figures)
    const double per_step = (at.train_seconds + at.epoch_train_seconds) / static_cast<double>(at.step);
    ev.eta_seconds = per_step * static_cast<double>(shape.total_steps - o.step);
    ev.loss_scale = shape.loss_scaling ? o.loss_scale : 0.0;
    ev.skipped = o.skipped;
    ev.grad_norm = o.grad_norm;
    on_step(ev);
}

double RunProgress::epoch_loss() const {
    const std::int64_t weight = at.seen / shape.units / shape.loss_rows;
    return weight > 0 ? at.loss_sum / static_cast<double>(weight) : NAN;
}

double RunProgress::epoch_accuracy() const {
    return at.seen ? static_cast<double>(at.correct) / static_cast<double>(at.seen) : NAN;
}

EpochEvent RunProgress::epoch_event() const {
    EpochEvent ee;
    ee.epoch = at.epoch;
    ee.step = at.step;
    ee.train_loss = epoch_loss();
    ee.train_accuracy = epoch_accuracy();
    ee.images_per_second =
        at.epoch_train_seconds > 0 ? static_cast<double>(at.seen / shape.units) / at.epoch_train_seconds : 0;
    ee.tokens_per_second = shape.counts_tokens ? ee.images_per_second * static_cast<double>(shape.units) : 0;
    ee.test_loss = NAN;
    ee.test_accuracy = NAN;
    return ee;
}

void RunProgress::next_epoch() {
    at.train_seconds += at.epoch_train_seconds;
    ++at.epoch;
    at.step_in_epoch = 0;
    at.loss_sum = 0;
    at.correct = at.seen = 0;
    at.epoch_train_seconds = 0;
}

RunCursor RunProgress::cursor(const std::vector<EpochEvent>& epochs) const {
    RunCursor c = at;
    c.epochs = epochs;
    return c;
}

}  // namespace hr
