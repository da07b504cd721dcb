#pragma once
// The events of one run, as plain values. The session thread makes them from the trainer's callbacks;
// RunController records, notifies and forwards them; the CLI prints them and the window draws them.
// Each has a JSON form (one object per event, "event" naming the kind: core's records by their one
// serialiser, train/record_json.h and memory/ledger_json.h; the app's own below), so they can also come from
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
#include "dist/rank_progress.h"
#include "telemetry/telemetry.h"
#include "train/events.h"
#include "train/trainer.h"

namespace hrapp {

// The planner's prediction for the run that ran (with the dataset's real sample counts), by category.
struct PredictedMemory {
    bool valid = false;
    hr::CategoryBytes device{};
    hr::CategoryBytes host{};
    std::size_t deviceTotal = 0, hostTotal = 0;
    std::vector<std::size_t> rankDeviceTotals;  // each rank's device total (one entry for one process)
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

// What one rank of a multi-rank run sees of its machine (issue 10): the ranks may be on other machines
// than the window, whose own hardware monitor sees only its own. Every rank sends its process's resident
// memory and which GPU it trains on; one rank per machine (its lowest local rank) also sends the
// machine's CPU, RAM and every GPU NVML shows there. Sent every telemetry interval (docs/distributed.md).
struct RankTelemetry {
    int rank = 0;
    std::string host;      // the rank's machine, by its host name
    long long pid = 0;     // the rank's process on that machine
    std::string device;    // what the rank trains on: "cpu", "cuda:1" ("" before it has chosen)
    int gpu = -1;          // that device's NVML index on the rank's machine (-1: a CPU rank, or not known)
    bool machine = false;  // this rank reports its machine: sample.host's CPU and RAM, and sample.gpus
    // host.process_rss is the rank's own; gpus are the machine's (machine), else empty
    hr::TelemetrySample sample;
    // the heartbeat: where the rank's training stands (dist/rank_progress.h): its step, the collective it waits
    // for, how long since either changed; absent from a program that does not send it
    std::optional<hr::RankProgress> progress;
};

using RunEvent =
    std::variant<hr::DeviceEvent, hr::StepEvent, hr::EpochEvent, hr::MemoryEvent, hr::LogEvent, RunEnded, RankTelemetry,
                 hr::EvalEvent>;

nlohmann::json runEventToJson(const RunEvent& event);
// Throws hr::InputError naming what is wrong (unknown "event", a field of the wrong type).
RunEvent runEventFromJson(const nlohmann::json& json);

}  // namespace hrapp

Q_DECLARE_METATYPE(hr::DeviceEvent)
Q_DECLARE_METATYPE(hr::StepEvent)
Q_DECLARE_METATYPE(hr::EpochEvent)
Q_DECLARE_METATYPE(hr::EvalEvent)
Q_DECLARE_METATYPE(hr::MemoryEvent)
Q_DECLARE_METATYPE(hr::LogEvent)
Q_DECLARE_METATYPE(hr::TrainResult)
Q_DECLARE_METATYPE(hrapp::RunEnded)
Q_DECLARE_METATYPE(hrapp::RankTelemetry)
