#include "session/RunEvent.h"
#include "base/json_limits.h"

#include <cmath>

#include "base/error.h"

namespace hrapp {

using json = nlohmann::json;

namespace {


double real(const json& j, const char* key, double fallback = 0) {
    if (!j.contains(key)) return fallback;
    const json& v = j.at(key);
    if (v.is_null()) return std::nan("");
    if (!v.is_number()) throw hr::InputError(HR_MSG("event.field_type", "run event: \"%1\" must be a number"), {key});
    return v.get<double>();
}

template <typename T>
T integer(const json& j, const char* key, T fallback = 0) {
    if (!j.contains(key)) return fallback;
    const json& v = j.at(key);
    if (!v.is_number_integer()) throw hr::InputError(HR_MSG("event.field_type", "run event: \"%1\" must be a number"), {key});
    return v.get<T>();
}

std::string text(const json& j, const char* key) {
    if (!j.contains(key)) return {};
    const json& v = j.at(key);
    if (!v.is_string()) throw hr::InputError(HR_MSG("event.field_text", "run event: \"%1\" must be a string"), {key});
    return v.get<std::string>();
}

bool flag(const json& j, const char* key) { return j.contains(key) && j.at(key).is_boolean() && j.at(key).get<bool>(); }

json categories(const hr::CategoryBytes& b) {
    json o = json::object();
    for (hr::MemCategory c : hr::all_categories()) o[hr::category_name(c)] = hr::at(b, c);
    return o;
}

hr::CategoryBytes categoriesFrom(const json& j) {
    hr::CategoryBytes b{};
    if (!j.is_object()) return b;
    for (auto it = j.begin(); it != j.end(); ++it) hr::at(b, hr::category_from_name(it.key())) = it.value().get<std::size_t>();
    return b;
}

json messagesToJson(const std::vector<hr::Message>& ms) {
    json a = json::array();
    for (const hr::Message& m : ms) a.push_back({{"id", m.id}, {"text", m.text}, {"args", m.args}});
    return a;
}

// Messages from a relay: anything malformed is dropped (the English `error` stays).
std::vector<hr::Message> messagesFromJson(const json& j) {
    std::vector<hr::Message> out;
    if (!j.is_array()) return out;
    for (const json& e : j) {
        if (!e.is_object()) continue;
        hr::Message m;
        m.id = text(e, "id");
        m.text = text(e, "text");
        if (const auto it = e.find("args"); it != e.end() && it->is_array())
            for (const json& a : *it)
                if (a.is_string()) m.args.push_back(a.get<std::string>());
        out.push_back(std::move(m));
    }
    return out;
}

json stepToJson(const hr::StepEvent& e) {
    return {{"step", e.step},
            {"total_steps", e.total_steps},
            {"epoch", e.epoch},
            {"step_in_epoch", e.step_in_epoch},
            {"steps_per_epoch", e.steps_per_epoch},
            {"loss", hr::json_finite(e.loss)},
            {"accuracy", hr::json_finite(e.accuracy)},
            {"lr", hr::json_finite(e.lr)},
            {"step_seconds", hr::json_finite(e.step_seconds)},
            {"images_per_second", hr::json_finite(e.images_per_second)},
            {"elapsed_seconds", hr::json_finite(e.elapsed_seconds)},
            {"eta_seconds", hr::json_finite(e.eta_seconds)},
            {"loss_scale", hr::json_finite(e.loss_scale)},
            {"skipped", e.skipped},
            {"tokens_per_second", hr::json_finite(e.tokens_per_second)},
            {"grad_norm", hr::json_finite(e.grad_norm)}};
}

hr::StepEvent stepFromJson(const json& j) {
    hr::StepEvent e;
    e.step = integer<std::int64_t>(j, "step");
    e.total_steps = integer<std::int64_t>(j, "total_steps");
    e.epoch = integer<int>(j, "epoch");
    e.step_in_epoch = integer<std::int64_t>(j, "step_in_epoch");
    e.steps_per_epoch = integer<std::int64_t>(j, "steps_per_epoch");
    e.loss = real(j, "loss");
    e.accuracy = real(j, "accuracy");
    e.lr = real(j, "lr");
    e.step_seconds = real(j, "step_seconds");
    e.images_per_second = real(j, "images_per_second");
    e.elapsed_seconds = real(j, "elapsed_seconds");
    e.eta_seconds = real(j, "eta_seconds");
    e.loss_scale = real(j, "loss_scale");
    e.skipped = flag(j, "skipped");
    e.tokens_per_second = real(j, "tokens_per_second");
    e.grad_norm = real(j, "grad_norm");
    return e;
}

json epochToJson(const hr::EpochEvent& e) {
    return {{"epoch", e.epoch},
            {"train_loss", hr::json_finite(e.train_loss)},
            {"train_accuracy", hr::json_finite(e.train_accuracy)},
            {"test_loss", hr::json_finite(e.test_loss)},
            {"test_accuracy", hr::json_finite(e.test_accuracy)},
            {"seconds", hr::json_finite(e.seconds)},
            {"images_per_second", hr::json_finite(e.images_per_second)},
            {"step", e.step},
            {"tokens_per_second", hr::json_finite(e.tokens_per_second)}};
}

json evalToJson(const hr::EvalEvent& e) {
    return {{"step", e.step},          {"epoch", e.epoch},     {"test_loss", hr::json_finite(e.loss)},
            {"test_accuracy", hr::json_finite(e.accuracy)}, {"samples", e.samples}, {"tokens", e.tokens},
            {"seconds", hr::json_finite(e.seconds)}};
}

hr::EvalEvent evalFromJson(const json& j) {
    hr::EvalEvent e;
    e.step = integer<std::int64_t>(j, "step");
    e.epoch = integer<int>(j, "epoch");
    e.loss = real(j, "test_loss");
    e.accuracy = real(j, "test_accuracy");
    e.samples = integer<std::int64_t>(j, "samples");
    e.tokens = integer<std::int64_t>(j, "tokens");
    e.seconds = real(j, "seconds");
    return e;
}

hr::EpochEvent epochFromJson(const json& j) {
    hr::EpochEvent e;
    e.epoch = integer<int>(j, "epoch");
    e.train_loss = real(j, "train_loss");
    e.train_accuracy = real(j, "train_accuracy");
    e.test_loss = real(j, "test_loss");
    e.test_accuracy = real(j, "test_accuracy");
    e.seconds = real(j, "seconds");
    e.images_per_second = real(j, "images_per_second");
    e.step = integer<std::int64_t>(j, "step");
    e.tokens_per_second = real(j, "tokens_per_second");
    return e;
}

json predictedToJson(const PredictedMemory& p) {
    if (!p.valid) return {{"valid", false}, {"error", p.error}};
    return {{"valid", true},
            {"device", categories(p.device)},
            {"host", categories(p.host)},
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
    p.device = categoriesFrom(j.value("device", json::object()));
    p.host = categoriesFrom(j.value("host", json::object()));
    p.deviceTotal = integer<std::size_t>(j, "device_total");
    p.hostTotal = integer<std::size_t>(j, "host_total");
    if (const auto it = j.find("rank_device_totals"); it != j.end() && it->is_array())
        for (const json& b : *it)
            if (b.is_number_unsigned()) p.rankDeviceTotals.push_back(b.get<std::size_t>());
    return p;
}

}  // namespace

json ledgerSnapshotToJson(const hr::LedgerSnapshot& s) {
    json layers = json::array();
    for (const auto& [layer, b] : s.layers) layers.push_back({{"layer", layer}, {"live", b.live}, {"peak", b.peak}});
    json split = json::array();
    for (const auto& [layer, b] : s.layer_peak_split) split.push_back({{"layer", layer}, {"bytes", categories(b)}});
    return {{"live", categories(s.live)},
            {"peak", categories(s.peak)},
            {"at_peak", categories(s.at_peak)},
            {"live_total", s.live_total},
            {"peak_total", s.peak_total},
            {"reserved_free", s.reserved_free},
            {"peak_reserved", s.peak_reserved},
            {"peak_phase", s.peak_phase},
            {"peak_step", s.peak_step},
            {"layers", layers},
            {"layer_peak_split", split}};
}

hr::LedgerSnapshot ledgerSnapshotFromJson(const json& j) {
    hr::LedgerSnapshot s;
    if (!j.is_object()) return s;
    s.live = categoriesFrom(j.value("live", json::object()));
    s.peak = categoriesFrom(j.value("peak", json::object()));
    s.at_peak = categoriesFrom(j.value("at_peak", json::object()));
    s.live_total = integer<std::size_t>(j, "live_total");
    s.peak_total = integer<std::size_t>(j, "peak_total");
    s.reserved_free = integer<std::size_t>(j, "reserved_free");
    s.peak_reserved = integer<std::size_t>(j, "peak_reserved");
    s.peak_phase = text(j, "peak_phase");
    s.peak_step = integer<std::int64_t>(j, "peak_step", -1);
    for (const json& l : j.value("layers", json::array()))
        s.layers[integer<int>(l, "layer", -1)] = {integer<std::size_t>(l, "live"), integer<std::size_t>(l, "peak")};
    for (const json& l : j.value("layer_peak_split", json::array()))
        s.layer_peak_split[integer<int>(l, "layer", -1)] = categoriesFrom(l.value("bytes", json::object()));
    return s;
}

json trainResultToJson(const hr::TrainResult& r) {
    json epochs = json::array();
    for (const auto& e : r.epochs) epochs.push_back(epochToJson(e));
    return {{"status", r.status},
            {"error", r.error},
            {"error_messages", messagesToJson(r.error_messages)},
            {"bad_input", r.bad_input},
            {"test_accuracy", hr::json_finite(r.test_accuracy)},
            {"test_loss", hr::json_finite(r.test_loss)},
            {"train_loss", hr::json_finite(r.train_loss)},
            {"train_accuracy", hr::json_finite(r.train_accuracy)},
            {"steps", r.steps},
            {"epochs_completed", r.epochs_completed},
            {"seconds", hr::json_finite(r.seconds)},
            {"images_per_second", hr::json_finite(r.images_per_second)},
            {"epochs", epochs},
            {"ledger", ledgerSnapshotToJson(r.ledger)},
            {"device_name", r.device_name},
            {"param_count", r.param_count},
            {"train_samples", r.train_samples},
            {"test_samples", r.test_samples},
            {"data_source", r.data_source},
            {"strategy", r.strategy},
            {"skipped_steps", r.skipped_steps},
            {"final_loss_scale", hr::json_finite(r.final_loss_scale)},
            {"host_ledger", ledgerSnapshotToJson(r.host_ledger)},
            {"out_of_memory", r.out_of_memory},
            {"oom_category", r.oom_category},
            {"oom_limit", r.oom_limit},
            {"world_size", r.world_size},
            {"rank", r.rank},
            {"shard", r.shard},
            {"tp_head", r.tp_head},
            {"stage_layers", r.stage_layers},
            {"rank_batches", r.rank_batches},
            {"rank_peak_bytes", r.rank_peak_bytes},
            {"rank_resident_peak_bytes", r.rank_resident_peak_bytes},
            {"communication_bytes_per_step", hr::json_finite(r.communication_bytes_per_step)},
            {"offload_bytes_per_step", hr::json_finite(r.offload_bytes_per_step)},
            {"lora_rank", r.lora_rank},
            {"lora_alpha", hr::json_finite(r.lora_alpha)},
            {"lora_params", r.lora_params},
            {"frozen_params", r.frozen_params},
            {"lora_base_bits", r.lora_base_bits},
            {"quantized_params", r.quantized_params},
            {"lora_before_loss", hr::json_finite(r.lora_before_loss)},
            {"lora_before_accuracy", hr::json_finite(r.lora_before_accuracy)},
            {"communication_seconds_per_step", hr::json_finite(r.communication_seconds_per_step)},
            {"resumed_from_step", r.resumed_from_step},
            {"checkpoint", r.checkpoint}};
}

hr::TrainResult trainResultFromJson(const json& j) {
    hr::TrainResult r;
    r.status = text(j, "status");
    r.error = text(j, "error");
    r.error_messages = messagesFromJson(j.value("error_messages", json::array()));
    r.bad_input = flag(j, "bad_input");
    r.test_accuracy = real(j, "test_accuracy");
    r.test_loss = real(j, "test_loss");
    r.train_loss = real(j, "train_loss");
    r.train_accuracy = real(j, "train_accuracy");
    r.steps = integer<std::int64_t>(j, "steps");
    r.epochs_completed = integer<int>(j, "epochs_completed");
    r.seconds = real(j, "seconds");
    r.images_per_second = real(j, "images_per_second");
    for (const json& e : j.value("epochs", json::array())) r.epochs.push_back(epochFromJson(e));
    r.ledger = ledgerSnapshotFromJson(j.value("ledger", json::object()));
    r.device_name = text(j, "device_name");
    r.param_count = integer<std::int64_t>(j, "param_count");
    r.train_samples = integer<std::int64_t>(j, "train_samples");
    r.test_samples = integer<std::int64_t>(j, "test_samples");
    r.data_source = text(j, "data_source");
    r.strategy = text(j, "strategy");
    r.skipped_steps = integer<std::int64_t>(j, "skipped_steps");
    r.world_size = integer<int>(j, "world_size", 1);
    r.rank = integer<int>(j, "rank");
    if (j.contains("shard")) r.shard = text(j, "shard");
    r.tp_head = std::max(1, integer<int>(j, "tp_head", 1));
    if (const auto it = j.find("stage_layers"); it != j.end() && it->is_array())
        for (const json& b : *it)
            if (b.is_number_integer()) r.stage_layers.push_back(b.get<int>());
    if (const auto it = j.find("rank_batches"); it != j.end() && it->is_array())
        for (const json& b : *it)
            if (b.is_number_integer()) r.rank_batches.push_back(b.get<std::int64_t>());
    if (const auto it = j.find("rank_peak_bytes"); it != j.end() && it->is_array())
        for (const json& b : *it)
            if (b.is_number_unsigned()) r.rank_peak_bytes.push_back(b.get<std::size_t>());
    if (const auto it = j.find("rank_resident_peak_bytes"); it != j.end() && it->is_array())
        for (const json& b : *it)
            if (b.is_number_integer()) r.rank_resident_peak_bytes.push_back(b.get<std::int64_t>());
    r.communication_bytes_per_step = real(j, "communication_bytes_per_step");
    r.communication_seconds_per_step = real(j, "communication_seconds_per_step");
    r.offload_bytes_per_step = real(j, "offload_bytes_per_step");
    r.lora_rank = integer<int>(j, "lora_rank");
    r.lora_alpha = real(j, "lora_alpha");
    r.lora_params = integer<std::int64_t>(j, "lora_params");
    r.frozen_params = integer<std::int64_t>(j, "frozen_params");
    r.lora_base_bits = integer<int>(j, "lora_base_bits");
    r.quantized_params = integer<std::int64_t>(j, "quantized_params");
    r.lora_before_loss = real(j, "lora_before_loss", std::nan(""));
    r.lora_before_accuracy = real(j, "lora_before_accuracy", std::nan(""));
    r.final_loss_scale = real(j, "final_loss_scale");
    r.host_ledger = ledgerSnapshotFromJson(j.value("host_ledger", json::object()));
    r.out_of_memory = flag(j, "out_of_memory");
    r.oom_category = text(j, "oom_category");
    r.oom_limit = integer<std::size_t>(j, "oom_limit");
    r.resumed_from_step = integer<std::int64_t>(j, "resumed_from_step", -1);  // a multi-rank Continue training
    r.checkpoint = text(j, "checkpoint");
    return r;
}

namespace {

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

json runEventToJson(const RunEvent& event) {
    struct Visitor {
        json operator()(const hr::DeviceEvent& e) const {
            json j = {{"event", "device"}, {"device", e.device}, {"name", e.name}, {"note", e.note}};
            if (e.text.translatable()) j["text"] = messagesToJson({e.text});
            return j;
        }
        json operator()(const hr::StepEvent& e) const {
            json j = stepToJson(e);
            j["event"] = "step";
            return j;
        }
        json operator()(const hr::EpochEvent& e) const {
            json j = epochToJson(e);
            j["event"] = "epoch";
            return j;
        }
        json operator()(const hr::MemoryEvent& e) const {
            return {{"event", "memory"},
                    {"step", e.step},
                    {"elapsed_seconds", hr::json_finite(e.elapsed_seconds)},
                    {"device_capacity", e.device_capacity},
                    {"ledger", ledgerSnapshotToJson(e.ledger)},
                    {"rank", e.rank}};
        }
        json operator()(const hr::LogEvent& e) const {
            json j = {{"event", "log"}, {"level", hr::log_level_name(e.level)}, {"message", e.message}};
            if (e.text.translatable()) j["text"] = messagesToJson({e.text});  // the window translates it
            return j;
        }
        json operator()(const RunEnded& e) const {
            return {{"event", "end"},
                    {"result", trainResultToJson(e.result)},
                    {"refused", e.refused},
                    {"predicted", predictedToJson(e.predicted)},
                    {"out_dir", e.outDir},
                    {"written", e.written},
                    {"write_error", e.writeError}};
        }
        json operator()(const RankTelemetry& e) const { return telemetryToJson(e); }
        json operator()(const hr::EvalEvent& e) const {
            json j = evalToJson(e);
            j["event"] = "eval";
            return j;
        }
    };
    return std::visit(Visitor{}, event);
}

RunEvent runEventFromJson(const json& j) {
    if (!j.is_object() || !j.contains("event") || !j.at("event").is_string())
        throw hr::InputError(HR_MSG("event.no_kind", "run event: expected an object with an \"event\" name"));
    const std::string kind = j.at("event").get<std::string>();
    if (kind == "device") {
        hr::DeviceEvent e{text(j, "device"), text(j, "name"), text(j, "note"), {}};
        if (j.contains("text")) {
            const std::vector<hr::Message> t = messagesFromJson(j.at("text"));
            if (t.size() == 1) e.text = t.front();
        }
        if (e.text.text.empty()) e.text = hr::Message::plain(e.note);
        return e;
    }
    if (kind == "step") return stepFromJson(j);
    if (kind == "epoch") return epochFromJson(j);
    if (kind == "eval") return evalFromJson(j);
    if (kind == "memory") {
        hr::MemoryEvent e;
        e.step = integer<std::int64_t>(j, "step");
        e.elapsed_seconds = real(j, "elapsed_seconds");
        e.device_capacity = integer<std::size_t>(j, "device_capacity");
        e.ledger = ledgerSnapshotFromJson(j.value("ledger", json::object()));
        e.rank = integer<int>(j, "rank");
        return e;
    }
    if (kind == "log") {
        hr::LogEvent e;
        const std::string level = text(j, "level");
        e.level = level == "debug" ? hr::LogLevel::debug
                  : level == "warning" ? hr::LogLevel::warning
                  : level == "error" ? hr::LogLevel::error
                                     : hr::LogLevel::info;
        e.message = text(j, "message");
        if (j.contains("text")) {
            const std::vector<hr::Message> t = messagesFromJson(j.at("text"));
            if (t.size() == 1) e.text = t.front();
        }
        return e;
    }
    if (kind == "end") {
        RunEnded e;
        e.result = trainResultFromJson(j.value("result", json::object()));
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
