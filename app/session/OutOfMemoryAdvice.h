#pragma once
// What to do after a run ran out of memory: the planner's fastest configuration that fits the memory
// the run had, at the same batch. One function for both front ends: `headroom train` prints
// summary() and the window's out-of-memory dialog shows summary(), changes() and the command line.
#include <QString>
#include <QStringList>

#include "plan/planner.h"
#include "train/config.h"
#include "train/trainer.h"

namespace hrapp {

struct OutOfMemoryAdvice {
    std::size_t limit = 0;        // the memory the run had (the device's, or the memory limit)
    std::int64_t batch = 0;
    hr::PlanSearch search;        // every candidate the planner looked at
    int best = -1;                // index into search.candidates; -1: nothing fits
    QString plannerError;         // the search itself failed (best is -1)

    bool found() const { return best >= 0; }
    const hr::PlanCandidate& bestCandidate() const { return search.candidates[static_cast<std::size_t>(best)]; }
    // The `headroom train` flags of the configuration that fits: "--batch 64 --precision bf16 ...".
    QString flags() const;
    // One line: "this fits in 3.00 MiB (predicted 2.86 MiB, 1.52x the step time): --batch 64 ..." or
    // why nothing does and what to do.
    QString summary() const;
    // The configuration in words: "precision BF16", "checkpointing 2 blocks", ... (empty: none found).
    QStringList changes() const;
};

// The planner's request for that search: `result`'s run with its sample counts (for a front end that
// runs the search elsewhere, e.g. off the GUI thread, and then calls adviceFromSearch()).
hr::PlanRequest outOfMemoryRequest(const hr::TrainConfig& config, const hr::TrainResult& result);
// The advice from a finished search (plannerError: the search failed).
OutOfMemoryAdvice adviceFromSearch(const hr::TrainConfig& config, std::size_t limit, hr::PlanSearch search,
                                   const QString& plannerError = QString());
// Searches the strategies for `result`'s run (the budget its oom_limit) and returns the advice. Never
// throws: a failing search comes back in plannerError.
OutOfMemoryAdvice adviseOutOfMemory(const hr::TrainConfig& config, const hr::TrainResult& result);

}  // namespace hrapp
