#pragma once
// run.json: the record of one run (schema in docs/run-json.md).
#include <string>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"  // write_file_atomic

#include "train/config.h"
#include "train/trainer.h"

namespace hr {

nlohmann::json ledger_to_json(const LedgerSnapshot& s);
nlohmann::json make_run_record(const TrainConfig& config, const TrainResult& result);

}  // namespace hr
