// The host step and the pipeline's (train/step_runner.h).
#include <algorithm>
#include <cmath>

#include "dist/communicator.h"
#include "memory/ledger.h"
#include "memory/step_timeline.h"
#include "nn/model.h"
#include "strategy/training_state.h"
#include "train/ranks.h"
#include "train/step_runner.h"
#include "train/workload.h"

namespace hr {

std::vector<std::pair<std::int64_t, std::int64_t>> micro_batches_of(const ResolvedStrategy& s, std::int64_t rows) {
    if (s.data_world() > 1 || rows == s.rank_batch) return s.micro_batches();
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (std::int64_t r0 = 0; r0 < rows; r0 += s.micro_batch) out.push_back({r0, std::min(s.micro_batch, rows - r0)});
    return out;
}

HostStepRunner::HostStepRunner(TrainingState& st, Communicator* comm, MemoryLedger* ledger)
    : st_(st), comm_(comm), ledger_(ledger) {}

void HostStepRunner::phase(const char* name) {
    if (ledger_) ledger_->set_phase(name);
}

HostStepResult HostStepRunner::step(StepRows& rows, std::int64_t step, double lr) {
    const ResolvedStrategy& s = st_.strategy();
    const bool ranked = comm_ != nullptr || s.shard != ShardStage::none;
    if (ranked) st_.begin_step();
    else st_.model().zero_grad();
    const std::int64_t batch_rows = rows.batch_rows();
    const std::int64_t global_rows = s.data_world() > 1 ? s.batch : batch_rows;  // the step's samples, all ranks
    HostStepResult r = micro_steps(rows, step, global_rows, micro_batches_of(s, batch_rows));
    r.rows = global_rows;
    if (!r.finite) return r;  // one process: it stopped at the micro-batch whose loss was not a number
    agree(r);
    if (!r.finite) return r;
    phase("optimizer");
    r.applied = st_.optimizer_step(lr);
    return r;
}

HostStepResult HostStepRunner::micro_steps(StepRows& rows, std::int64_t step, std::int64_t global_rows,
                                           const std::vector<std::pair<std::int64_t, std::int64_t>>& micro) {
    HostStepResult r;
    Model& model = st_.model();
    StepRecorder* rec = st_.step_recorder();
    int j = 0;
    for (auto [r0, n] : micro) {
        if (rec) rec->set_micro(j++);
        phase("forward");
        auto [x, y] = rows.upload(r0, n);
        Tensor logits = model.forward(x, true, st_.first_sample(step, r0));
        // in single precision, as the device step takes it (the host and device steps agree to the bit)
        const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(global_rows));
        if (comm_) comm_->synchronize();  // as in evaluation: a stalled peer ends the run within the timeout
        Tensor grad;
        if (rec) rec->phase(StepPhaseKind::loss);  // (a split head's loss buffer is in use in it)
        const LossResult l = rows.loss(logits, y, r0, n, static_cast<float>(share * st_.loss_scale()), grad);
        if (!comm_ && !std::isfinite(l.loss)) {  // ranks finish the step alike and decide together
            r.finite = false;
            r.loss = l.loss;
            return r;
        }
        r.loss += l.loss * share;
        r.correct += l.correct;
        phase("backward");
        model.backward(grad);
    }
    return r;
}

void HostStepRunner::agree(HostStepResult& r) {
    if (!comm_) return;
    // the global batch's mean loss and correct rows: every rank decides alike (train/ranks.h: which ranks'
    // figures count, pipeline stages' and a split head's included)
    double correct = static_cast<double>(r.correct);
    agree_on_figures(comm_, st_, {&r.loss, &correct});
    r.correct = static_cast<std::int64_t>(correct);
    r.finite = std::isfinite(r.loss);
}

HostStepResult PipelineStepRunner::micro_steps(StepRows& rows, std::int64_t step, std::int64_t global_rows,
                                               const std::vector<std::pair<std::int64_t, std::int64_t>>& micro) {
    HostStepResult r;
    phase("forward");
    st_.pipeline_step(
        step, micro,
        [&](int j) {
            const auto [r0, n] = micro[static_cast<std::size_t>(j)];
            return rows.upload(r0, n).first;
        },
        [&](int j, const Tensor& logits, Tensor& grad) {
            const auto [r0, n] = micro[static_cast<std::size_t>(j)];
            auto [x, y] = rows.upload(r0, n);
            const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(global_rows));
            const LossResult l = rows.loss(logits, y, r0, n, static_cast<float>(share * st_.loss_scale()), grad);
            r.loss += l.loss * share;
            r.correct += l.correct;
            return l;
        });
    return r;
}

std::unique_ptr<HostStepRunner> make_host_step_runner(TrainingState& st, Communicator* comm, MemoryLedger* ledger) {
    if (st.pipelined()) return std::make_unique<PipelineStepRunner>(st, comm, ledger);
    return std::make_unique<HostStepRunner>(st, comm, ledger);
}

}  // namespace hr
