#pragma once
// The one JSON form of each of the trainer's records, written and read by one pair each (docs/design.md
// decision 11): the events (train/events.h), the result (train/result.h, over its result_fields list) and
// the messages they carry. run.json (train/run_record.h), a rank's lines to the window
// (app/session/RunEvent.cpp) and the history's final_metrics (train/run_summary.h) all go through these;
// the ledger's is memory/ledger_json.h, the configuration's train_config_to_json/_from_json (train/config.h).
//
// Conventions (base/json_fields.h): numbers in the trainer's units (seconds, bytes, samples per second);
// NaN (not measured) is null and null reads back as NaN; a missing field keeps the record's default, so
// an older writer's record still reads; a field of the wrong kind is an InputError naming it.
// from_json(to_json(x)) == x for every field. Each type's to_json/from_json is also found by nlohmann's
// `json j = x;` and `j.get<T>()`.
#include <nlohmann/json.hpp>

#include "base/message.h"
#include "memory/ledger_json.h"
#include "train/events.h"
#include "train/result.h"

namespace hr {

// {"id", "text", "args"}; a malformed one reads as an empty message.
void to_json(nlohmann::json& j, const Message& m);
void from_json(const nlohmann::json& j, Message& m);

// StepEvent's fields by their member names; EpochEvent's likewise; EvalEvent's loss and accuracy are
// "test_loss" and "test_accuracy" (run.json's evals).
void to_json(nlohmann::json& j, const StepEvent& e);
void from_json(const nlohmann::json& j, StepEvent& e);
void to_json(nlohmann::json& j, const EpochEvent& e);
void from_json(const nlohmann::json& j, EpochEvent& e);
void to_json(nlohmann::json& j, const EvalEvent& e);
void from_json(const nlohmann::json& j, EvalEvent& e);
void to_json(nlohmann::json& j, const MemoryEvent& e);  // the ledger as memory/ledger_json.h writes it
void from_json(const nlohmann::json& j, MemoryEvent& e);
// "text": the translatable sentence as an array of one message (absent for plain text)
void to_json(nlohmann::json& j, const DeviceEvent& e);
void from_json(const nlohmann::json& j, DeviceEvent& e);
void to_json(nlohmann::json& j, const LogEvent& e);  // "level": log_level_name
void from_json(const nlohmann::json& j, LogEvent& e);

// Every field of result_fields (train/result.h); what_if is not carried (run_summary.h writes its figures).
void to_json(nlohmann::json& j, const TrainResult& r);
void from_json(const nlohmann::json& j, TrainResult& r);

}  // namespace hr
