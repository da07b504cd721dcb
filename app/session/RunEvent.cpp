#include "session/RunEvent.h"
#include "base/json_limits.h"

#include <cmath>

#include "base/error.h"
#include "base/json_fields.h"
#include "train/record_json.h"

namespace hrapp {

using json = nlohmann::json;

// The app's own records (the prediction, a rank's telemetry) read with these; a value of the wrong kind is
// json_field's InputError, as for core's records.
namespace {

double real(const json& j, const char* key, double fallback = 0) {
    if (!j.contains(key)) return fallback;
    const json& v = j.at(key);
    if (v.is_null()) return std::nan("");
    if (!v.is_number()) hr::json_field::wrong_kind(key, false);
    return v.get<double>();
}

template <typename T>
T integer(const json& j, const char* key, T fallback = 0) {
    if (!j.contains(key)) return fallback;
    const json& v = j.at(key);
    if (!v.is_number_integer()) hr::json_field::wrong_kind(key, false);
    return v.get<T>();
}

std::string text(const json& j, const char* key) {
    if (!j.contains(key)) return {};
    const json& v = j.at(key);
    if (!v.is_string()) hr::json_field::wrong_kind(key, true);
    return v.get<std::string>();
}

bool flag(const json& j, const char* key) { return j.contains(key) && j.at(key).is_boolean() && j.at(key).get<bool>(); }

json predictedToJson(const PredictedMemory& p) {
    if (!p.valid) return {{"valid", false}, {"error", p.error}};
    return {{"valid", true},
            {"device", hr::category_bytes_to_json(p.device)},
            {"host", hr::category_bytes_to_json(p.host)},
            {"device_total", p.deviceTotal},
            {"host_total", p.hostTotal},
            {"rank_device_totals", p.rankDeviceTotals}};
}

PredictedMemory predictedFromJson(const json& j) {
    PredictedMemory p;
    if (!j.is_object()) return p;
    p.valid = flag(j, "valid");
    p.error = text(j, "error");
    if (!p.valid) return p;
    p.device = hr::category_bytes_from_json(j.value("device", json::object()));
    p.host = hr::category_bytes_from_json(j.value("host", json::object()));
    p.deviceTotal = integer<std::size_t>(j, "device_total");
    p.hostTotal = integer<std::size_t>(j, "host_total");
    if (const auto it = j.find("rank_device_totals"); it != j.end() && it->is_array())
        for (const json& b : *it)
            if (b.is_number_unsigned()) p.rankDeviceTotals.push_back(b.get<std::size_t>());
    return p;
}

json telemetryToJson(const RankTelemetry& e) {
    const hr::HostStats& h = e.sample.host;
    json gpus = json::array();
    for (const hr::GpuStats& g : e.sample.gpus)
        gpus.push_back({{"index", g.index},
                        {"name", g.name},
                        {"pci_bus_id", g.pci_bus_id},
                        {"memory_used", g.memory_used},
                        {"memory_total", g.memory_total},
                        {"power_watts", hr::json_finite(g.power_watts)},
                        {"power_limit_watts", hr::json_finite(g.power_limit_watts)},
                        {"gpu_utilization", hr::json_finite(g.gpu_utilization)},
                        {"memory_utilization", hr::json_finite(g.memory_utilization)},
                        {"temperature_c", hr::json_finite(g.temperature_c)},
                        {"sm_clock_mhz", hr::json_finite(g.sm_clock_mhz)},
                        {"energy_joules", hr::json_finite(g.energy_joules)}});
    json j = {{"event", "telemetry"},
            {"rank", e.rank},
            {"host", e.host},
            {"pid", e.pid},
            {"device", e.device},
            {"gpu", e.gpu},
            {"machine", e.machine},
            {"t_seconds", e.sample.t_seconds},
            {"step", e.sample.step},
            {"cpu_utilization", hr::json_finite(h.cpu_utilization)},
            {"cpu_count", h.cpu_count},
            {"ram_used", h.ram_used},
            {"ram_total", h.ram_total},
            {"process_rss", h.process_rss},
            {"gpus", gpus}};
    if (e.progress)
        j["progress"] = {{"step", e.progress->step}, {"waiting", e.progress->waiting},
                         {"still_seconds", hr::json_finite(e.progress->still_seconds)}};
    return j;
}

RankTelemetry telemetryFromJson(const json& j) {
    RankTelemetry e;
    e.rank = integer<int>(j, "rank");
    e.host = text(j, "host");
    e.pid = integer<long long>(j, "pid");
    e.device = text(j, "device");
    e.gpu = integer<int>(j, "gpu", -1);
    e.machine = flag(j, "machine");
    e.sample.t_seconds = real(j, "t_seconds");
    e.sample.step = integer<std::int64_t>(j, "step", -1);
    hr::HostStats& h = e.sample.host;
    h.cpu_utilization = real(j, "cpu_utilization", std::nan(""));
    h.cpu_count = integer<int>(j, "cpu_count");
    h.ram_used = integer<std::int64_t>(j, "ram_used", -1);
    h.ram_total = integer<std::int64_t>(j, "ram_total", -1);
    h.process_rss = integer<std::int64_t>(j, "process_rss", -1);
    if (const auto it = j.find("progress"); it != j.end() && it->is_object()) {
        hr::RankProgress p;
        p.step = integer<std::int64_t>(*it, "step");
        p.waiting = text(*it, "waiting");
        p.still_seconds = real(*it, "still_seconds", 0);
        e.progress = p;
    }
    if (const auto it = j.find("gpus"); it != j.end() && it->is_array())
        for (const json& g : *it) {
            if (!g.is_object()) continue;  // not a GPU's figures: dropped, as a relay's malformed messages are
            hr::GpuStats s;
            s.index = integer<int>(g, "index", -1);
            s.name = text(g, "name");
            s.pci_bus_id = text(g, "pci_bus_id");
            s.memory_used = integer<std::int64_t>(g, "memory_used", -1);
            s.memory_total = integer<std::int64_t>(g, "memory_total", -1);
            s.power_watts = real(g, "power_watts", std::nan(""));
            s.power_limit_watts = real(g, "power_limit_watts", std::nan(""));
            s.gpu_utilization = real(g, "gpu_utilization", std::nan(""));
            s.memory_utilization = real(g, "memory_utilization", std::nan(""));
            s.temperature_c = real(g, "temperature_c", std::nan(""));
            s.sm_clock_mhz = real(g, "sm_clock_mhz", std::nan(""));
            s.energy_joules = real(g, "energy_joules", std::nan(""));
            e.sample.gpus.push_back(std::move(s));
        }
    return e;
}

}  // namespace

namespace {
template <typename Record>
json withKind(const char* name, const Record& r) {
    json j = r;
    j["event"] = name;
    return j;
}
}  // namespace

json runEventToJson(const RunEvent& event) {
    struct Visitor {
        // core's records, each by its one serialiser (train/record_json.h), with the event's kind
        json operator()(const hr::DeviceEvent& e) const { return withKind("device", e); }
        json operator()(const hr::StepEvent& e) const { return withKind("step", e); }
        json operator()(const hr::EpochEvent& e) const { return withKind("epoch", e); }
        json operator()(const hr::MemoryEvent& e) const { return withKind("memory", e); }
        json operator()(const hr::LogEvent& e) const { return withKind("log", e); }
        json operator()(const RunEnded& e) const {
            return {{"event", "end"},
                    {"result", e.result},
                    {"refused", e.refused},
                    {"predicted", predictedToJson(e.predicted)},
                    {"out_dir", e.outDir},
                    {"written", e.written},
                    {"write_error", e.writeError}};
        }
        json operator()(const RankTelemetry& e) const { return telemetryToJson(e); }
        json operator()(const hr::EvalEvent& e) const { return withKind("eval", e); }
    };
    return std::visit(Visitor{}, event);
}

RunEvent runEventFromJson(const json& j) {
    if (!j.is_object() || !j.contains("event") || !j.at("event").is_string())
        throw hr::InputError(HR_MSG("event.no_kind", "run event: expected an object with an \"event\" name"));
    const std::string kind = j.at("event").get<std::string>();
    if (kind == "device") return j.get<hr::DeviceEvent>();
    if (kind == "step") return j.get<hr::StepEvent>();
    if (kind == "epoch") return j.get<hr::EpochEvent>();
    if (kind == "eval") return j.get<hr::EvalEvent>();
    if (kind == "memory") return j.get<hr::MemoryEvent>();
    if (kind == "log") return j.get<hr::LogEvent>();
    if (kind == "end") {
        RunEnded e;
        e.result = j.value("result", json::object()).get<hr::TrainResult>();
        e.refused = flag(j, "refused");
        e.predicted = predictedFromJson(j.value("predicted", json::object()));
        e.outDir = text(j, "out_dir");
        if (j.contains("written")) e.written = j.at("written").get<std::vector<std::string>>();
        e.writeError = text(j, "write_error");
        return e;
    }
    if (kind == "telemetry") return telemetryFromJson(j);
    throw hr::InputError(HR_MSG("event.unknown_kind", "run event: unknown event \"%1\""), {kind});
}

}  // namespace hrapp
