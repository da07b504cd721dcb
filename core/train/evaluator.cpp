// The evaluation (train/evaluator.h).
#include "train/evaluator.h"

#include <chrono>
#include <cmath>

#include "base/error.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "strategy/training_state.h"
#include "train/ranks.h"
#include "train/workload.h"

namespace hr {

Evaluator::Evaluator(Workload& work, TrainingState& st, Communicator* comm, MemoryLedger& ledger,
                     const std::atomic<bool>* stop)
    : work_(work), st_(st), comm_(comm), ledger_(ledger), stop_(stop) {}

EvalEvent Evaluator::evaluate(std::int64_t step, int epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    const CommStats comm_before = comm_ ? comm_->stats() : CommStats{};
    const ResolvedStrategy& strategy = st_.strategy();
    const std::int64_t units = work_.units_per_row();
    ledger_.set_phase("evaluate");
    double loss_sum = 0;
    std::int64_t correct = 0, rows_done = 0;
    // a rank whose part of a chunk is empty still runs one row (not counted), so every rank makes the
    // same forwards (zero3 gathers in them)
    const int data_world = strategy.data_world(), data_rank = strategy.data_rank();
    const std::int64_t chunk = strategy.eval_micro_batch * data_world;
    work_.start_eval();
    for (std::int64_t chunk_rows; (chunk_rows = work_.next_eval_chunk(chunk)) > 0;) {
        if (stop_ && *stop_ && !comm_) throw Cancelled();  // ranks decide stopping together, between steps
        auto [lo, n] = rank_share(chunk_rows, data_rank, data_world);
        const std::int64_t rows = n > 0 ? n : 1;
        if (n == 0) lo = 0;
        if (st_.pipelined()) {  // through the stages: the first reads the rows, the last scores them
            Tensor x;
            if (st_.first_stage()) x = work_.upload_eval(lo, rows).first;
            Tensor logits = st_.pipeline_eval_forward(x, rows);
            if (!st_.last_stage()) continue;
            auto [xl, yl] = work_.upload_eval(lo, rows);
            const LossResult r = work_.eval_loss(logits, yl, lo, rows);
            loss_sum += r.loss * static_cast<double>(n * units);
            correct += r.correct;
            rows_done += n;
            continue;
        }
        auto [x, y] = work_.upload_eval(lo, rows);
        Tensor logits = st_.model().forward(x, false);
        // the loss is read back on the host, after the collectives queued before it (zero3's gathers):
        // wait for those with the rank timeout first, so that a stalled peer ends the run instead of hanging it
        if (comm_) comm_->synchronize();
        const LossResult r = work_.eval_loss(logits, y, lo, rows);
        if (n == 0) continue;
        loss_sum += r.loss * static_cast<double>(n * units);
        correct += r.correct;
        rows_done += n;
    }
    {  // weighted by samples (tokens): sums over the ranks that count them (train/ranks.h)
        double correct_sum = static_cast<double>(correct), rows_sum = static_cast<double>(rows_done);
        agree_on_figures(comm_, st_, {&loss_sum, &correct_sum, &rows_sum});
        correct = static_cast<std::int64_t>(correct_sum);
        rows_done = static_cast<std::int64_t>(rows_sum);
    }
    if (comm_) {
        traffic_.bytes += comm_->stats().bytes - comm_before.bytes;
        traffic_.wait_seconds += comm_->stats().wait_seconds - comm_before.wait_seconds;
    }
    const std::int64_t counted = rows_done * units;
    EvalEvent ev;
    ev.step = step;
    ev.epoch = epoch;
    ev.loss = counted ? loss_sum / static_cast<double>(counted) : NAN;
    ev.accuracy = counted ? static_cast<double>(correct) / static_cast<double>(counted) : NAN;
    ev.samples = rows_done;
    ev.tokens = work_.counts_tokens() ? counted : 0;
    ev.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return ev;
}

}  // namespace hr
