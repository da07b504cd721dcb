#pragma once
// run.json: the record of one run (schema in docs/run-json.md).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"  // write_file_atomic

#include "train/config.h"
#include "train/trainer.h"

namespace hr {

struct MemoryPlan;

// run.json's object. Its records are written by their one serialiser each: the configuration
// (train_config_to_json), the epochs and evals (train/record_json.h), the ledgers (memory/ledger_json.h),
// "final" and "distributed" (train/run_summary.h). memory.predicted is null (write_run_record fills it).
nlohmann::json make_run_record(const TrainConfig& config, const TrainResult& result);

// Writes DIR/run.json atomically (a folder with run.json is complete), the one writer of the file: the
// record above with the planner's prediction for the run that ran (`predicted`, null when there is none)
// and each rank's predicted total beside the measured ones (`rank_predicted`, empty: none). Returns the
// file's path. Throws hr::Error when it cannot be written.
std::string write_run_record(const std::string& dir, const TrainConfig& config, const TrainResult& result,
                             const MemoryPlan* predicted, const std::vector<std::size_t>& rank_predicted);

}  // namespace hr
