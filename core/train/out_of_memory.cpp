#include "train/out_of_memory.h"

#include <algorithm>

#include "backend/backend.h"
#include "base/log.h"
#include "memory/allocator.h"
#include "plan/planner.h"
#include "train/config.h"
#include "train/device.h"
#include "train/result.h"

namespace hr {

std::vector<Message> out_of_memory_messages(const OutOfMemory& e, const ModelSpec& spec, const std::string& device) {
    SpecReport rep = analyze_model_spec(spec);
    auto layer_name = [&](int index) -> std::string {
        for (const auto& r : rep.layers)
            if (r.index == index) return r.path + " (" + r.label + ")";
        return std::to_string(index);
    };
    CategoryBytes live = e.snapshot.live;
    at(live, e.category) += e.requested;
    MemCategory largest = MemCategory::other;
    for (MemCategory cat : all_categories())
        if (at(live, cat) > at(live, largest)) largest = cat;
    std::vector<Message> out;
    if (e.layer >= 0)
        out.emplace_back(HR_MSG("oom.request_layer", "out of memory on %1 (limit %2): could not allocate %3 for %4 of "
                                                     "layer %5 with %6 already in use."),
                         std::vector<std::string>{device, format_bytes(e.limit), format_bytes(e.requested),
                                                  category_name(e.category), layer_name(e.layer),
                                                  format_bytes(e.snapshot.live_total)});
    else
        out.emplace_back(HR_MSG("oom.request", "out of memory on %1 (limit %2): could not allocate %3 for %4 with %5 "
                                               "already in use."),
                         std::vector<std::string>{device, format_bytes(e.limit), format_bytes(e.requested),
                                                  category_name(e.category), format_bytes(e.snapshot.live_total)});
    std::string in_use;
    for (MemCategory cat : all_categories()) {
        if (!at(e.snapshot.live, cat)) continue;
        in_use += std::string(in_use.empty() ? "" : ", ") + category_name(cat) + " " + format_bytes(at(e.snapshot.live, cat));
    }
    if (!in_use.empty()) out.emplace_back(HR_MSG("oom.in_use", "In use: %1."), std::vector<std::string>{in_use});
    // the largest layers
    std::vector<std::pair<std::size_t, int>> layers;
    for (const auto& [layer, b] : e.snapshot.layers)
        if (layer >= 0 && b.live > 0) layers.push_back({b.live, layer});
    std::sort(layers.rbegin(), layers.rend());
    if (!layers.empty()) {
        std::string list;
        for (std::size_t i = 0; i < std::min<std::size_t>(3, layers.size()); ++i)
            list += (i ? ", " : "") + layer_name(layers[i].second) + " " + format_bytes(layers[i].first);
        out.emplace_back(HR_MSG("oom.largest_layers", "Largest layers: %1."), std::vector<std::string>{list});
    }
    const std::string name = category_name(largest);
    switch (largest) {
        case MemCategory::activations:
            out.emplace_back(HR_MSG("oom.cut_activations", "The largest category is %1; to cut it: --checkpoint all, "
                                                           "--precision bf16, or a smaller --micro-batch with "
                                                           "accumulation."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::optimizer_state:
            out.emplace_back(HR_MSG("oom.cut_optimizer_state", "The largest category is %1; to cut it: "
                                                               "--offload-optimizer, or --optimizer sgd (no state "
                                                               "without momentum)."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::master_weights:
            out.emplace_back(HR_MSG("oom.cut_master_weights", "The largest category is %1; to cut it: --offload-optimizer."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::parameters:
        case MemCategory::gradients:
            out.emplace_back(HR_MSG("oom.cut_weights", "The largest category is %1; to cut it: --precision bf16."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::workspace:
            out.emplace_back(HR_MSG("oom.cut_workspace", "The largest category is %1; to cut it: a smaller --micro-batch."),
                             std::vector<std::string>{name});
            break;
        default:
            out.emplace_back(HR_MSG("oom.cut_batch", "The largest category is %1; to cut it: a smaller --batch."),
                             std::vector<std::string>{name});
            break;
    }
    std::string budget = format_bytes(e.limit);
    budget.erase(std::remove(budget.begin(), budget.end(), ' '), budget.end());
    out.emplace_back(HR_MSG("oom.plan_hint", "headroom plan --budget %1 lists the configurations that fit."),
                     std::vector<std::string>{budget});
    return out;
}

std::string describe_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device) {
    std::string msg;
    for (const Message& m : out_of_memory_messages(e, spec, device)) {
        if (!msg.empty()) msg += ' ';
        msg += m.english();
    }
    return msg;
}

std::size_t run_memory_limit(const TrainConfig& c, Backend& be) {
    if (c.memory_limit > 0) return c.memory_limit;
    return be.device().is_cpu() ? device_free_bytes("cpu") : 0;
}

void fill_out_of_memory(TrainResult& r, const OutOfMemory& e, const ModelSpec& spec, const std::string& device) {
    r.status = "failed";
    r.out_of_memory = true;
    r.oom_limit = e.limit;
    r.error_messages = out_of_memory_messages(e, spec, device);
    r.error = describe_out_of_memory(e, spec, device);
    CategoryBytes live = e.snapshot.live;
    at(live, e.category) += e.requested;
    MemCategory largest = MemCategory::other;
    for (MemCategory cat : all_categories())
        if (at(live, cat) > at(live, largest)) largest = cat;
    r.oom_category = category_name(largest);
    r.device_name = device;
    log(LogLevel::info, r.error);  // the result carries it: the front end says it once
}

}  // namespace hr
