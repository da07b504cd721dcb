#pragma once
// The events of one run, as plain values. The session thread makes them from the trainer's callbacks;
// RunController records, notifies and forwards them; the CLI prints them and the window draws them.
// Each has a JSON form (one object per event, "event" naming the kind), so they can also come from
// another process: a multi-rank run's rank 0 relays its ranks' events as JSON lines on a pipe, and the
// controller takes them through RunController::deliver() exactly as if its own session had sent them.
//
// Conventions: numbers are the trainer's units (seconds, bytes, images per second); NaN (not
// measured, e.g. test loss of an epoch without evaluation) is null in JSON and NaN again after
// parsing; category maps use hr::category_name keys. runEventFromJson(runEventToJson(e)) == e for every
// field listed here.
#include <QMetaType>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/category.h"
#include "train/events.h"
#include "train/trainer.h"

namespace hrapp {

// The planner's prediction for the run that ran (with the dataset's real sample counts), by category.
struct PredictedMemory {
    bool valid = false;
    hr::CategoryBytes device{};
    hr::CategoryBytes host{};
    std::size_t deviceTotal = 0, hostTotal = 0;
    std::string error;  // why there is none (valid false)
};

// The session's last event of a run: the trainer's result, the prediction, and what was written.
struct RunEnded {
    hr::TrainResult result;
    bool refused = false;             // the run's input was refused before training (hr::InputError)
    PredictedMemory predicted;
    std::string outDir;               // "" : nothing was to be written
    std::vector<std::string> written; // files written, in order (model.safetensors, then run.json)
    std::string writeError;           // writing failed: why (the run itself may have finished)
};

using RunEvent = std::variant<hr::DeviceEvent, hr::StepEvent, hr::EpochEvent, hr::MemoryEvent, hr::LogEvent, RunEnded>;

nlohmann::json runEventToJson(const RunEvent& event);
// Throws hr::InputError naming what is wrong (unknown "event", a field of the wrong type).
RunEvent runEventFromJson(const nlohmann::json& json);

// The pieces, for the run record and tests.
nlohmann::json ledgerSnapshotToJson(const hr::LedgerSnapshot& s);
hr::LedgerSnapshot ledgerSnapshotFromJson(const nlohmann::json& j);
nlohmann::json trainResultToJson(const hr::TrainResult& r);
hr::TrainResult trainResultFromJson(const nlohmann::json& j);

}  // namespace hrapp

Q_DECLARE_METATYPE(hr::DeviceEvent)
Q_DECLARE_METATYPE(hr::StepEvent)
Q_DECLARE_METATYPE(hr::EpochEvent)
Q_DECLARE_METATYPE(hr::MemoryEvent)
Q_DECLARE_METATYPE(hr::LogEvent)
Q_DECLARE_METATYPE(hr::TrainResult)
Q_DECLARE_METATYPE(hrapp::RunEnded)
