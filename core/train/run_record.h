#pragma once
// run.json: the record of one run (schema in docs/run-json.md).
#include <string>

#include <nlohmann/json.hpp>

#include "train/config.h"
#include "train/trainer.h"

namespace hr {

nlohmann::json ledger_to_json(const LedgerSnapshot& s);
nlohmann::json make_run_record(const TrainConfig& config, const TrainResult& result);
// Writes text to path through a temporary file in the same folder and a rename (never half a file).
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace hr
