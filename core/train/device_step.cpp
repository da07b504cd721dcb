// The step without host synchronisation, with CUDA-graph replay (train/step_runner.h).
#include <algorithm>
#include <string>

#include "base/error.h"
#include "memory/ledger.h"
#include "strategy/training_state.h"
#include "train/step_runner.h"
#include "train/workload.h"

namespace hr {

DeviceStepRunner::DeviceStepRunner(TrainingState& st, Backend& be, MemoryLedger* ledger, bool graphs, int ring_slots)
    : st_(st),
      be_(be),
      ledger_(ledger),
      graphs_(graphs && st.graph_capturable() && !be.device().is_cpu()),
      ring_(ring_slots > 0 ? std::make_unique<StepFigureRing>(be, ring_slots) : std::make_unique<StepFigureRing>(be)) {
    const ResolvedStrategy& s = st.strategy();
    graphs_ = graphs_ && s.micro_batch >= s.batch;
}

DeviceStepRunner::~DeviceStepRunner() = default;

int DeviceStepRunner::ring_slots() const { return ring_->slot_count(); }

double DeviceStepRunner::issue(StepRows& rows, std::int64_t step, const DeviceStepFigures& issued, Clock::time_point t0,
                               const Sink& sink) {
    const ResolvedStrategy& s = st_.strategy();
    const std::int64_t B = s.batch, M = s.micro_batch;
    if (ledger_) ledger_->set_phase("forward");
    const std::int64_t n_rows = issued.rows;
    // the batch's uploads first (each waits only for the step that last read its landing buffer), then the
    // step; a full step of one micro-batch replays the captured graph
    // (the step whose memory timeline is recorded runs op by op: a replay runs no host code to report it)
    const bool whole = n_rows == B && M >= B && !st_.step_recorder();
    st_.begin_device_step(issued.lr);
    for (std::int64_t r0 = 0; r0 < n_rows; r0 += M) {
        const std::int64_t n = std::min(M, n_rows - r0);
        const HostRows h = rows.host_rows(r0, n);
        st_.upload_next(h.inputs, h.labels, h.targets, n);
        st_.take_upload(n);
        if (whole && graph_) {
            graph_->replay();
        } else {
            const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(n_rows));
            st_.device_micro_step(n, share, st_.first_sample(step, r0));
        }
    }
    if (ledger_) ledger_->set_phase("optimizer");
    if (!(whole && graph_)) st_.device_optimizer_step();
    if (whole && !graph_ && !graph_tried_ && graphs_) {
        graph_tried_ = true;  // captured after one step ran for real (every buffer exists)
        graph_ = be_.capture([&] {
            st_.device_micro_step(B, 1.0f, 0);
            st_.device_optimizer_step();
        });
    }
    issued_.push_back(issued);
    for (const StepFigures& f : ring_->push(issued.step, st_.stats, st_.control)) take(f, sink);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();  // with the ring full, the device's pace
    if (!issued_.empty() && issued_.back().step == issued.step) issued_.back().seconds = dt;
    return dt;
}

void DeviceStepRunner::collect(const Sink& sink) {
    StepFigures f;
    while (ring_->pop(f)) take(f, sink);
}

void DeviceStepRunner::drain(const Sink& sink) {
    for (const StepFigures& f : ring_->drain()) take(f, sink);
    st_.sync_control_to_host();
}

void DeviceStepRunner::take(const StepFigures& f, const Sink& sink) {
    if (issued_.empty() || issued_.front().step != f.step)
        throw Error("internal: the step figures arrived out of order (step " + std::to_string(f.step) + ")");
    DeviceStepFigures d = issued_.front();
    issued_.pop_front();
    d.figures = f;
    if (sink) sink(d);
}

}  // namespace hr
