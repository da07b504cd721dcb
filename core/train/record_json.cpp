#include "train/record_json.h"

#include "base/json_fields.h"

namespace hr {

using json = nlohmann::json;

namespace {

// Each event's fields by their JSON names, once; the writer and the reader below walk the same list.
template <typename E, typename F>
void step_event_fields(E& e, F&& f) {
    f("step", e.step);
    f("total_steps", e.total_steps);
    f("epoch", e.epoch);
    f("step_in_epoch", e.step_in_epoch);
    f("steps_per_epoch", e.steps_per_epoch);
    f("loss", e.loss);
    f("accuracy", e.accuracy);
    f("lr", e.lr);
    f("step_seconds", e.step_seconds);
    f("images_per_second", e.images_per_second);
    f("elapsed_seconds", e.elapsed_seconds);
    f("eta_seconds", e.eta_seconds);
    f("loss_scale", e.loss_scale);
    f("skipped", e.skipped);
    f("tokens_per_second", e.tokens_per_second);
    f("grad_norm", e.grad_norm);
}

template <typename E, typename F>
void epoch_event_fields(E& e, F&& f) {
    f("epoch", e.epoch);
    f("train_loss", e.train_loss);
    f("train_accuracy", e.train_accuracy);
    f("test_loss", e.test_loss);
    f("test_accuracy", e.test_accuracy);
    f("seconds", e.seconds);
    f("images_per_second", e.images_per_second);
    f("step", e.step);
    f("tokens_per_second", e.tokens_per_second);
}

template <typename E, typename F>
void eval_event_fields(E& e, F&& f) {
    f("step", e.step);
    f("epoch", e.epoch);
    f("test_loss", e.loss);
    f("test_accuracy", e.accuracy);
    f("samples", e.samples);
    f("tokens", e.tokens);
    f("seconds", e.seconds);
}

template <typename E, typename F>
void memory_event_fields(E& e, F&& f) {
    f("step", e.step);
    f("elapsed_seconds", e.elapsed_seconds);
    f("device_capacity", e.device_capacity);
    f("ledger", e.ledger);
    f("rank", e.rank);
}

// The translatable sentence of a device or log event: an array of one message, absent for plain text.
void put_sentence(json& j, const Message& m) {
    if (m.translatable()) j["text"] = json::array({json(m)});
}
void take_sentence(const json& j, Message& m) {
    if (const auto it = j.find("text"); it != j.end() && it->is_array() && it->size() == 1) from_json(it->front(), m);
}

}  // namespace

void to_json(json& j, const Message& m) { j = {{"id", m.id}, {"text", m.text}, {"args", m.args}}; }

void from_json(const json& j, Message& m) {
    m = Message{};
    if (!j.is_object()) return;
    if (const auto it = j.find("id"); it != j.end() && it->is_string()) m.id = it->get<std::string>();
    if (const auto it = j.find("text"); it != j.end() && it->is_string()) m.text = it->get<std::string>();
    if (const auto it = j.find("args"); it != j.end() && it->is_array())
        for (const json& a : *it)
            if (a.is_string()) m.args.push_back(a.get<std::string>());
}

void to_json(json& j, const StepEvent& e) { j = json::object(); step_event_fields(e, json_field::Writer{j}); }
void from_json(const json& j, StepEvent& e) { e = {}; step_event_fields(e, json_field::Reader{j}); }
void to_json(json& j, const EpochEvent& e) { j = json::object(); epoch_event_fields(e, json_field::Writer{j}); }
void from_json(const json& j, EpochEvent& e) { e = {}; epoch_event_fields(e, json_field::Reader{j}); }
void to_json(json& j, const EvalEvent& e) { j = json::object(); eval_event_fields(e, json_field::Writer{j}); }
void from_json(const json& j, EvalEvent& e) { e = {}; eval_event_fields(e, json_field::Reader{j}); }
void to_json(json& j, const MemoryEvent& e) { j = json::object(); memory_event_fields(e, json_field::Writer{j}); }
void from_json(const json& j, MemoryEvent& e) { e = {}; memory_event_fields(e, json_field::Reader{j}); }

void to_json(json& j, const DeviceEvent& e) {
    j = {{"device", e.device}, {"name", e.name}, {"note", e.note}};
    put_sentence(j, e.text);
}

void from_json(const json& j, DeviceEvent& e) {
    e = {};
    json_field::read(j, "device", e.device);
    json_field::read(j, "name", e.name);
    json_field::read(j, "note", e.note);
    take_sentence(j, e.text);
    if (e.text.text.empty()) e.text = Message::plain(e.note);
}

void to_json(json& j, const LogEvent& e) {
    j = {{"level", log_level_name(e.level)}, {"message", e.message}};
    put_sentence(j, e.text);
}

void from_json(const json& j, LogEvent& e) {
    e = {};
    std::string level;
    json_field::read(j, "level", level);
    e.level = level == "debug" ? LogLevel::debug
              : level == "warning" ? LogLevel::warning
              : level == "error" ? LogLevel::error
                                 : LogLevel::info;
    json_field::read(j, "message", e.message);
    take_sentence(j, e.text);
}

void to_json(json& j, const TrainResult& r) {
    j = json::object();
    result_fields(r, [&](const char* key, const auto& v, bool) { j[key] = json_field::write(v); });
}

void from_json(const json& j, TrainResult& r) {
    r = TrainResult{};
    result_fields(r, [&](const char* key, auto& v, bool) { json_field::read(j, key, v); });
    r.tp_head = std::max(1, r.tp_head);
}

}  // namespace hr
