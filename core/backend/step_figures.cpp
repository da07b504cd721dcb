#include "backend/step_figures.h"

#include "base/error.h"

namespace hr {

namespace {
constexpr int kRecord = int(kStepStatsFields) + int(kStepControlFields);  // doubles per slot
}

StepFigureRing::StepFigureRing(Backend& backend, int slot_count) : backend_(backend), slots_(slot_count) {
    if (slots_ < 1) throw Error("internal: StepFigureRing needs at least one slot");
    host_ = backend_.host_buffer(static_cast<std::size_t>(slots_) * kRecord * sizeof(double));
}

std::vector<StepFigures> StepFigureRing::push(std::int64_t step, const Tensor& stats, const Tensor& control) {
    if (!stats.defined() || stats.dtype() != DType::f64 || stats.numel() < kStepStatsFields || !control.defined() ||
        control.dtype() != DType::f64 || control.numel() < kStepControlFields)
        throw Error("internal: StepFigureRing::push needs f64 stats and control tensors");
    std::vector<StepFigures> out;
    if (static_cast<int>(pending_.size()) == slots_) {  // full: the oldest slot is the one to reuse
        StepFigures f;
        pop(f, true);
        out.push_back(f);
    }
    const int slot = next_;
    next_ = (next_ + 1) % slots_;
    double* rec = static_cast<double*>(host_.get()) + static_cast<std::size_t>(slot) * kRecord;
    backend_.copy_to_host_async(stats.view(0, {kStepStatsFields}), rec);
    auto fence = backend_.copy_to_host_async(control.view(0, {kStepControlFields}), rec + kStepStatsFields);
    pending_.push_back({slot, step, std::move(fence)});
    return out;
}

StepFigures StepFigureRing::read(const Pending& p) const {
    const double* rec = static_cast<const double*>(host_.get()) + static_cast<std::size_t>(p.slot) * kRecord;
    const double* ctl = rec + kStepStatsFields;
    StepFigures f;
    f.step = p.step;
    f.loss = rec[kStatLoss];
    f.correct = static_cast<std::int64_t>(rec[kStatCorrect]);
    f.bad_labels = static_cast<std::int64_t>(rec[kStatBadLabels]);
    f.bad_label = static_cast<std::int64_t>(rec[kStatBadLabel]);
    f.bad_row = static_cast<std::int64_t>(rec[kStatBadRow]);
    f.skipped = ctl[kCtlFoundInf] != 0.0;
    f.loss_scale = ctl[kCtlLossScale];
    f.skipped_total = static_cast<std::int64_t>(ctl[kCtlSkipped]);
    f.optimizer_steps = static_cast<std::int64_t>(ctl[kCtlOptStep]);
    return f;
}

bool StepFigureRing::pop(StepFigures& out, bool wait) {
    if (pending_.empty()) return false;
    const Pending& p = pending_.front();
    if (!backend_.fence_done(p.fence.get())) {
        if (!wait) return false;
        backend_.fence_sync(p.fence.get());
    }
    out = read(p);
    pending_.pop_front();
    return true;
}

std::vector<StepFigures> StepFigureRing::drain() {
    std::vector<StepFigures> out;
    StepFigures f;
    while (pop(f, true)) out.push_back(f);
    return out;
}

}  // namespace hr
