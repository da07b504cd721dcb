#include "memory/step_timeline.h"

#include "base/error.h"

#include <algorithm>
#include <cstdio>

namespace hr {

const char* step_phase_kind_name(StepPhaseKind k) {
    switch (k) {
        case StepPhaseKind::forward: return "forward";
        case StepPhaseKind::recompute: return "recompute";
        case StepPhaseKind::loss: return "loss";
        case StepPhaseKind::backward: return "backward";
        case StepPhaseKind::reduce: return "reduce";
        case StepPhaseKind::offload: return "offload";
        case StepPhaseKind::update: return "update";
        case StepPhaseKind::send: return "send";
        case StepPhaseKind::receive: return "receive";
        case StepPhaseKind::gather: return "gather";
    }
    return "?";
}

CategoryBytes StepTimeline::live_after_phase(int p) const {
    CategoryBytes live = base;
    for (const TimelineEvent& e : events) {
        if (e.phase > p) break;
        live = e.live;
    }
    return live;
}

StepRecorder::StepRecorder(const CategoryBytes& base, std::int64_t step, int rank) {
    t_.step = step;
    t_.rank = rank;
    t_.base = base;
    live_ = base;
    t_.peak_total = total(base);
    t_.at_peak = base;
}

void StepRecorder::phase(StepPhaseKind kind, int layer, int block, const std::string& label, int peer) {
    StepPhase p;
    p.peer = peer;
    p.kind = kind;
    p.layer = layer;
    p.block = block;
    p.micro = micro_;
    p.label = label;
    t_.phases.push_back(std::move(p));
}

void StepRecorder::use(MemCategory category, int layer, std::int64_t delta) {
    if (delta == 0) return;
    if (t_.phases.empty()) phase(StepPhaseKind::forward);
    std::size_t& c = at(live_, category);
    c = delta < 0 && static_cast<std::size_t>(-delta) > c ? 0 : static_cast<std::size_t>(static_cast<std::int64_t>(c) + delta);
    if (category == MemCategory::activations) {
        std::int64_t& l = layer_live_[layer];
        l += delta;
        if (l <= 0) layer_live_.erase(layer);
    }
    const std::size_t tot = total(live_);
    if (t_.events.size() >= StepTimeline::kMaxEvents) {
        t_.truncated = true;
    } else {
        TimelineEvent e;
        e.phase = static_cast<int>(t_.phases.size()) - 1;
        e.category = category;
        e.layer = layer;
        e.delta = delta;
        e.live = live_;
        e.live_total = tot;
        t_.events.push_back(e);
    }
    if (tot > t_.peak_total) {
        t_.peak_total = tot;
        t_.at_peak = live_;
        t_.peak_event = t_.truncated ? -1 : static_cast<int>(t_.events.size()) - 1;
        t_.peak_phase = static_cast<int>(t_.phases.size()) - 1;
        peak_first_ = layer_live_.empty() ? -1 : layer_live_.begin()->first;
        peak_last_ = layer_live_.empty() ? -1 : layer_live_.rbegin()->first;
    }
}

StepTimeline StepRecorder::finish() {
    // what is still live (a forward without its backward: a pipeline stage's last micro-batch) ends here
    if (!t_.phases.empty()) {
        std::vector<std::pair<int, std::int64_t>> left(layer_live_.begin(), layer_live_.end());
        for (auto [layer, bytes] : left) use(MemCategory::activations, layer, -bytes);
    }
    t_.peak_first_layer = peak_first_;
    t_.peak_last_layer = peak_last_;
    std::vector<std::size_t> per(t_.phases.size(), 0);
    for (const TimelineEvent& e : t_.events) ++per[static_cast<std::size_t>(e.phase)];
    t_.max_phase_events = per.empty() ? 0 : *std::max_element(per.begin(), per.end());
    return t_;
}

StepTimeline step_timeline_with_base(const StepTimeline& t, const CategoryBytes& base) {
    StepRecorder r(base, t.step, t.rank);
    std::size_t ev = 0;
    for (std::size_t p = 0; p < t.phases.size(); ++p) {
        const StepPhase& ph = t.phases[p];
        r.set_micro(ph.micro);
        r.phase(ph.kind, ph.layer, ph.block, ph.label, ph.peer);
        for (; ev < t.events.size() && t.events[ev].phase == static_cast<int>(p); ++ev)
            r.use(t.events[ev].category, t.events[ev].layer, t.events[ev].delta);
    }
    return r.finish();
}

std::string format_bytes_short(std::size_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
    else std::snprintf(buf, sizeof buf, "%zu B", bytes);
    return buf;
}

Message describe_phase(const StepPhase& p) {
    const std::string layer = std::to_string(p.layer);
    const std::string label = p.label.empty() ? std::string("?") : p.label;
    switch (p.kind) {
        case StepPhaseKind::forward:
            return Message(HR_MSG("timeline.phase_forward", "the forward of layer %1 (%2)"), {layer, label});
        case StepPhaseKind::backward:
            return Message(HR_MSG("timeline.phase_backward", "the backward of layer %1 (%2)"), {layer, label});
        case StepPhaseKind::recompute:
            return Message(HR_MSG("timeline.phase_recompute", "the recompute of checkpointed block %1"),
                           {std::to_string(p.block)});
        case StepPhaseKind::loss: return Message(HR_MSG("timeline.phase_loss", "the loss"));
        case StepPhaseKind::reduce:
            if (p.label == "head input gradient")
                return Message(HR_MSG("timeline.phase_head_reduce", "the all-reduce of the split head's input gradient"));
            return Message(HR_MSG("timeline.phase_reduce", "the gradient reduction"));
        case StepPhaseKind::offload: return Message(HR_MSG("timeline.phase_offload", "the offload transfers"));
        case StepPhaseKind::update: return Message(HR_MSG("timeline.phase_update", "the optimizer update"));
        case StepPhaseKind::send:
            if (p.label == "gradient")
                return Message(HR_MSG("timeline.phase_send_gradient",
                                      "the pipeline send of the input gradient to stage %1"),
                               {std::to_string(p.peer)});
            return Message(HR_MSG("timeline.phase_send_activations", "the pipeline send of activations to stage %1"),
                           {std::to_string(p.peer)});
        case StepPhaseKind::receive:
            if (p.label == "gradient")
                return Message(HR_MSG("timeline.phase_receive_gradient",
                                      "the pipeline receive of the output gradient from stage %1"),
                               {std::to_string(p.peer)});
            if (p.label == "activations")
                return Message(HR_MSG("timeline.phase_receive_activations",
                                      "the pipeline receive of activations from stage %1"),
                               {std::to_string(p.peer)});
            return Message(HR_MSG("timeline.phase_receive_input", "the copy of the input into the first stage"));
        case StepPhaseKind::gather:
            return Message(HR_MSG("timeline.phase_gather", "the gather of unit %1's parameters"),
                           {std::to_string(p.block)});
    }
    return Message::plain("?");
}

std::vector<PeakPart> peak_parts(const StepTimeline& t) {
    std::vector<PeakPart> all;
    for (MemCategory c : all_categories())
        if (at(t.at_peak, c) > 0) all.push_back({c, at(t.at_peak, c)});
    std::stable_sort(all.begin(), all.end(), [](const PeakPart& a, const PeakPart& b) { return a.bytes > b.bytes; });
    std::vector<PeakPart> out;
    PeakPart rest;
    rest.rest = true;
    for (PeakPart p : all) {
        if (out.size() >= 4 || p.bytes * 100 < t.peak_total) {
            rest.bytes += p.bytes;
            continue;
        }
        if (p.category == MemCategory::activations) {
            p.first_layer = t.peak_first_layer;
            p.last_layer = t.peak_last_layer;
        }
        out.push_back(p);
    }
    if (rest.bytes > 0) out.push_back(rest);
    return out;
}

Message peak_part_message(const PeakPart& p) {
    std::string name = category_name(p.category);
    std::replace(name.begin(), name.end(), '_', ' ');
    const std::string b = format_bytes_short(p.bytes);
    if (p.rest) return Message(HR_MSG("timeline.part_rest", "the rest (%1)"), {b});
    if (p.first_layer >= 0 && p.first_layer == p.last_layer)
        return Message(HR_MSG("timeline.part_layer", "%1 of layer %2 (%3)"), {name, std::to_string(p.first_layer), b});
    if (p.first_layer >= 0)
        return Message(HR_MSG("timeline.part_layers", "%1 of layers %2–%3 (%4)"),
                       {name, std::to_string(p.first_layer), std::to_string(p.last_layer), b});
    return Message(HR_MSG("timeline.part", "%1 (%2)"), {name, b});
}

Message explain_peak(const StepTimeline& t) {
    std::string comp;
    for (const PeakPart& p : peak_parts(t)) comp += (comp.empty() ? "" : ", ") + peak_part_message(p).english();
    if (t.peak_phase < 0) return Message(kPeakAtStart, {format_bytes_short(t.peak_total), comp});
    const Message where = describe_phase(t.phases[static_cast<std::size_t>(t.peak_phase)]);
    return Message(kPeakSentence, {format_bytes_short(t.peak_total), where.english(), comp});
}

namespace {
nlohmann::json timeline_categories_json(const CategoryBytes& b) {
    nlohmann::json o = nlohmann::json::object();
    for (MemCategory c : all_categories())
        if (at(b, c) > 0) o[category_name(c)] = at(b, c);
    return o;
}

nlohmann::json timeline_phase_json(const StepPhase& p) {
    nlohmann::json o{{"kind", step_phase_kind_name(p.kind)}, {"micro", p.micro}};
    if (p.layer >= 0) o["layer"] = p.layer;
    if (p.block >= 0) o["block"] = p.block;
    if (!p.label.empty()) o["label"] = p.label;
    if (p.peer >= 0) o["peer"] = p.peer;
    return o;
}
}  // namespace

nlohmann::json step_timeline_summary_json(const StepTimeline& t) {
    nlohmann::json j;
    j["step"] = t.step;
    j["rank"] = t.rank;
    j["peak_bytes"] = t.peak_total;
    j["peak"] = explain_peak(t).english();
    if (t.peak_phase >= 0) j["peak_phase"] = timeline_phase_json(t.phases[static_cast<std::size_t>(t.peak_phase)]);
    j["peak_composition"] = timeline_categories_json(t.at_peak);
    if (t.peak_first_layer >= 0) j["peak_layers"] = {t.peak_first_layer, t.peak_last_layer};
    j["base"] = timeline_categories_json(t.base);
    j["phase_count"] = t.phases.size();
    j["event_count"] = t.events.size();
    // live totals at the end of each phase, thinned evenly to at most kJsonPhases (the peak's phase kept)
    nlohmann::json phases = nlohmann::json::array();
    const std::size_t n = t.phases.size();
    const std::size_t stride = n > kJsonPhases ? (n + kJsonPhases - 1) / kJsonPhases : 1;
    std::size_t live = total(t.base);
    std::size_t ev = 0;
    for (std::size_t p = 0; p < n; ++p) {
        while (ev < t.events.size() && t.events[ev].phase <= static_cast<int>(p)) live = t.events[ev++].live_total;
        if (p % stride != 0 && static_cast<int>(p) != t.peak_phase) continue;
        nlohmann::json o = timeline_phase_json(t.phases[p]);
        o["live_bytes"] = live;
        phases.push_back(o);
    }
    j["phases"] = phases;
    return j;
}

StepTimeline step_timeline_peak_from_json(const nlohmann::json& j) {
    StepTimeline t;
    if (!j.is_object() || !j.contains("peak_bytes") || !j["peak_bytes"].is_number_unsigned()) return t;
    t.step = j.value("step", std::int64_t(-1));
    t.peak_total = j["peak_bytes"].get<std::size_t>();
    if (j.contains("peak_composition") && j["peak_composition"].is_object())
        for (MemCategory c : all_categories()) {
            const auto it = j["peak_composition"].find(category_name(c));
            if (it != j["peak_composition"].end() && it->is_number_unsigned()) at(t.at_peak, c) = it->get<std::size_t>();
        }
    if (j.contains("peak_layers") && j["peak_layers"].is_array() && j["peak_layers"].size() == 2 &&
        j["peak_layers"][0].is_number_integer() && j["peak_layers"][1].is_number_integer()) {
        t.peak_first_layer = j["peak_layers"][0].get<int>();
        t.peak_last_layer = j["peak_layers"][1].get<int>();
    }
    StepPhase p;
    if (j.contains("peak_phase") && j["peak_phase"].is_object()) {
        const nlohmann::json& ph = j["peak_phase"];
        const std::string kind = ph.value("kind", std::string());
        bool known = false;
        for (int k = 0; k <= static_cast<int>(kLastStepPhaseKind); ++k)
            if (kind == step_phase_kind_name(static_cast<StepPhaseKind>(k))) {
                p.kind = static_cast<StepPhaseKind>(k);
                known = true;
            }
        if (!known) return StepTimeline{};
        p.layer = ph.value("layer", -1);
        p.block = ph.value("block", -1);
        p.micro = ph.value("micro", 0);
        p.label = ph.value("label", std::string());
        p.peer = ph.value("peer", -1);
        t.phases.push_back(p);
        t.peak_phase = 0;
    } else {
        t.phases.push_back(p);  // the peak at the step's start: one phase so the timeline is not empty
        t.peak_phase = -1;
    }
    return t;
}

nlohmann::json step_timeline_trace_json(const StepTimeline& t, const std::string& name) {
    nlohmann::json events = nlohmann::json::array();
    const int pid = t.rank + 1;
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 1}, {"args", {{"name", name}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 1}, {"args", {{"name", "phases"}}}});
    auto counter = [&](double ts, const CategoryBytes& live) {
        nlohmann::json args = nlohmann::json::object();
        for (MemCategory c : all_categories()) args[category_name(c)] = at(live, c);
        events.push_back({{"name", "live bytes"}, {"ph", "C"}, {"ts", ts}, {"pid", pid}, {"args", args}});
    };
    counter(0.0, t.base);
    double ts = 0;
    std::size_t ev = 0;
    std::size_t live_total = total(t.base);
    for (std::size_t p = 0; p < t.phases.size(); ++p) {
        const double start = ts;
        std::size_t in_phase = 0;
        while (ev < t.events.size() && t.events[ev].phase == static_cast<int>(p)) {
            ts += 1.0;
            counter(ts, t.events[ev].live);
            live_total = t.events[ev].live_total;
            ++ev;
            ++in_phase;
        }
        if (in_phase == 0) ts += 1.0;
        const StepPhase& ph = t.phases[p];
        nlohmann::json args{{"micro", ph.micro}};
        if (ph.layer >= 0) args["layer"] = ph.layer;
        if (ph.block >= 0) args["block"] = ph.block;
        if (!ph.label.empty()) args["label"] = ph.label;
        if (ph.peer >= 0) args["peer"] = ph.peer;
        args["live_bytes"] = live_total;
        std::string pname = step_phase_kind_name(ph.kind);
        if (ph.layer >= 0) pname += " " + std::to_string(ph.layer);
        if (ph.block >= 0) pname += (ph.kind == StepPhaseKind::gather ? " unit " : " block ") + std::to_string(ph.block);
        if (ph.kind == StepPhaseKind::send || ph.kind == StepPhaseKind::receive) {
            pname += " " + ph.label;
            if (ph.peer >= 0) pname += (ph.kind == StepPhaseKind::send ? " to " : " from ") + std::to_string(ph.peer);
        }
        events.push_back({{"name", pname}, {"cat", step_phase_kind_name(ph.kind)}, {"ph", "X"}, {"ts", start},
                          {"dur", ts - start}, {"pid", pid}, {"tid", 1}, {"args", args}});
    }
    return nlohmann::json{{"traceEvents", events},
                          {"displayTimeUnit", "ms"},
                          {"otherData", {{"peak", explain_peak(t).english()}, {"peak_bytes", t.peak_total}}}};
}

void to_json(nlohmann::json& j, const StepTimeline& t) {
    if (t.empty()) {
        j = nullptr;
        return;
    }
    nlohmann::json phases = nlohmann::json::array(), events = nlohmann::json::array();
    for (const auto& p : t.phases)
        phases.push_back({static_cast<int>(p.kind), p.layer, p.block, p.micro, p.label, p.peer});
    for (const auto& e : t.events) events.push_back({e.phase, static_cast<int>(e.category), e.layer, e.delta});
    j = {{"step", t.step}, {"rank", t.rank}, {"base", t.base}, {"phases", phases}, {"events", events},
         {"truncated", t.truncated}, {"peak_event", t.peak_event}, {"peak_phase", t.peak_phase},
         {"peak_total", t.peak_total}, {"at_peak", t.at_peak}, {"peak_first_layer", t.peak_first_layer},
         {"peak_last_layer", t.peak_last_layer}, {"max_phase_events", t.max_phase_events}};
}

void from_json(const nlohmann::json& j, StepTimeline& t) {
    t = StepTimeline{};
    if (j.is_null()) return;
    try {
        t.step = j.at("step").get<std::int64_t>();
        t.rank = j.at("rank").get<int>();
        t.base = j.at("base").get<CategoryBytes>();
        for (const auto& p : j.at("phases")) {
            const int kind = p.at(0).get<int>();
            if (kind < 0 || kind > static_cast<int>(kLastStepPhaseKind)) throw std::out_of_range("phase kind");
            t.phases.push_back({static_cast<StepPhaseKind>(kind), p.at(1).get<int>(), p.at(2).get<int>(),
                                p.at(3).get<int>(), p.at(4).get<std::string>(), p.at(5).get<int>()});
        }
        if (j.at("events").size() > StepTimeline::kMaxEvents) throw std::out_of_range("events");
        CategoryBytes live = t.base;
        std::size_t total = 0;
        for (auto b : live) total += b;
        for (const auto& e : j.at("events")) {
            TimelineEvent ev;
            ev.phase = e.at(0).get<int>();
            const int cat = e.at(1).get<int>();
            if (ev.phase < 0 || static_cast<std::size_t>(ev.phase) >= t.phases.size() || cat < 0 ||
                cat >= static_cast<int>(kMemCategoryCount))
                throw std::out_of_range("event");
            ev.category = static_cast<MemCategory>(cat);
            ev.layer = e.at(2).get<int>();
            ev.delta = e.at(3).get<std::int64_t>();
            live[cat] = static_cast<std::size_t>(static_cast<std::int64_t>(live[cat]) + ev.delta);
            total = static_cast<std::size_t>(static_cast<std::int64_t>(total) + ev.delta);
            ev.live = live;
            ev.live_total = total;
            t.events.push_back(ev);
        }
        t.truncated = j.at("truncated").get<bool>();
        t.peak_event = j.at("peak_event").get<int>();
        t.peak_phase = j.at("peak_phase").get<int>();
        t.peak_total = j.at("peak_total").get<std::size_t>();
        t.at_peak = j.at("at_peak").get<CategoryBytes>();
        t.peak_first_layer = j.at("peak_first_layer").get<int>();
        t.peak_last_layer = j.at("peak_last_layer").get<int>();
        t.max_phase_events = j.at("max_phase_events").get<std::size_t>();
    } catch (const std::exception& e) {
        t = StepTimeline{};
        throw InputError(std::string("a step timeline record is malformed (") + e.what() +
                         "); it comes from a rank of another Headroom version: run the same version everywhere");
    }
}

}  // namespace hr
