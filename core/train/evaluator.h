#pragma once
// The evaluation of a run (the test set, a language model's validation split): the same chunks on every
// rank, each rank its share of a chunk (a split head's ranks all evaluate every row: they are one data
// rank; pipeline stages pass each chunk through, the last scores it). The figures are the whole run's on
// every rank. The trainer calls it every eval_every steps and at the end of an epoch; it also counts the
// evaluations' own traffic, which is not part of a step's.
#include <atomic>
#include <cstdint>

#include "dist/communicator.h"
#include "train/events.h"

namespace hr {

class MemoryLedger;
class TrainingState;
class Workload;

class Evaluator {
public:
    // `stop` (may be null): a request to stop, honoured between chunks in one process (ranks decide
    // stopping together, between steps).
    Evaluator(Workload& work, TrainingState& st, Communicator* comm, MemoryLedger& ledger,
              const std::atomic<bool>* stop = nullptr);
    // One evaluation at step `step` of epoch `epoch`; throws Cancelled on a stop request.
    EvalEvent evaluate(std::int64_t step, int epoch);
    // The evaluations' traffic and waits so far.
    const CommStats& traffic() const { return traffic_; }

private:
    Workload& work_;
    TrainingState& st_;
    Communicator* comm_;
    MemoryLedger& ledger_;
    const std::atomic<bool>* stop_;
    CommStats traffic_;
};

}  // namespace hr
