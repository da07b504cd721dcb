#include "plan/planner.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "memory/counting_allocator.h"
#include "strategy/training_state.h"
#ifdef HEADROOM_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace hr {

namespace {

int cuda_index_of(const std::string& device) {
    if (device == "cuda") return 0;
    try {
        return std::stoi(device.substr(5));
    } catch (...) {
        throw InputError("device '" + device + "': write cuda:N (see headroom devices)");
    }
}

// Forward FLOPs per sample of one layer (multiply-adds count 2).
double layer_flops(const LayerReport& r, const LayerSpec* spec) {
    const double out = static_cast<double>(shape_numel(r.output_shape));
    if (r.type == "conv2d" && spec) {
        const double k = layer_attr(*spec, "kernel_size");
        return 2.0 * out * layer_attr(*spec, "in_channels") * k * k;
    }
    if (r.type == "linear" && spec) return 2.0 * out * layer_attr(*spec, "in_features");
    if (r.type == "batchnorm2d") return 8.0 * out;
    if (r.type == "gelu" || r.type == "tanh" || r.type == "sigmoid") return 10.0 * out;
    if (r.type == "maxpool2d" || r.type == "avgpool2d") return out * 4.0;
    if (r.type == "flatten") return 0.0;
    return out;
}

const LayerSpec* find_spec(const std::vector<LayerSpec>& layers, const std::string& path) {
    // path "3" or "3.body.1" or "3.shortcut.0"
    std::stringstream ss(path);
    std::string part;
    const std::vector<LayerSpec>* cur = &layers;
    const LayerSpec* found = nullptr;
    while (std::getline(ss, part, '.')) {
        if (part == "body" && found) {
            cur = &found->body;
            continue;
        }
        if (part == "shortcut" && found) {
            cur = &found->shortcut;
            continue;
        }
        std::size_t i = std::stoul(part);
        if (i >= cur->size()) return nullptr;
        found = &(*cur)[i];
    }
    return found;
}

std::size_t loader_bytes(std::int64_t batch, std::int64_t samples, std::int64_t per_sample) {
    const std::int64_t steps = samples > 0 ? (samples + batch - 1) / batch : 1 << 20;
    const std::int64_t depth = std::max<std::int64_t>(1, std::min<std::int64_t>(3, steps));
    return static_cast<std::size_t>(depth * (batch * per_sample * 4 + batch * 8));
}

// Sustained rates for the rough absolute estimate (FLOP/s, bytes/s); the ranking uses ratios.
struct DeviceRates {
    double flops;
    double lowp_factor;  // time factor of bf16/fp16 compute relative to fp32
    double host_link;    // bytes/s between host and device memory
};
DeviceRates rates_for(const std::string& device) {
    if (device.rfind("cuda", 0) == 0) return {30e12, 0.5, 20e9};
    return {40e9, 1.15, 10e9};  // CPU: low precision is stored, then computed in f32 (conversions cost)
}

}  // namespace

MemoryPlan predict_memory(const PlanRequest& req) {
    MemoryPlan plan;
    plan.strategy = resolve_strategy(req.strategy, req.spec, req.batch);
    SpecReport rep = validate_model_spec(req.spec);
    if (req.strategy.checkpoint == "auto") {
        // auto: the cheapest set of blocks (by recompute FLOPs per byte saved) that fits the device
        PlanRequest fixed = req;
        fixed.strategy.checkpoint = "none";
        const std::size_t free = req.budget ? req.budget : device_free_bytes(req.device);
        MemoryPlan p = predict_memory(fixed);
        if (p.device_total > free) {
            for (int k : {4, 2, 1}) {
                fixed.strategy.checkpoint = k == 1 ? "all" : "every:" + std::to_string(k);
                p = predict_memory(fixed);
                if (p.device_total <= free) break;
            }
        }
        return p;
    }
    // Build the whole training state on counting allocators.
    auto device_ledger = std::make_shared<MemoryLedger>();
    auto host_ledger = std::make_shared<MemoryLedger>();
    CountingAllocator dev_alloc(Device::cpu(), device_ledger);
    CountingAllocator host_alloc(Device::cpu(), host_ledger);
    // conv workspace sizes come from the real backend of the device (cuDNN picks algorithms per shape)
    auto sizing_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> sizing;
    const bool gpu = req.device.rfind("cuda", 0) == 0;
#ifdef HEADROOM_WITH_CUDA
    if (gpu) sizing = make_cuda_backend(cuda_index_of(req.device), sizing_ledger);
#endif
    if (gpu && !sizing)
        throw InputError("device '" + req.device + "': this build has no CUDA backend; plan for --device cpu");
    if (!sizing) sizing = make_cpu_backend(req.threads, sizing_ledger);
    {
        TrainingState st(req.spec, req.optimizer, plan.strategy, 1, *sizing, dev_alloc, *sizing, host_alloc, true);
        plan.device = device_ledger->snapshot().live;
        // what the backend itself holds on the device (the cuBLAS workspace on a GPU)
        for (MemCategory cat : all_categories()) at(plan.device, cat) += sizing_ledger->live_bytes(cat);
        plan.recompute_arena = st.model().recompute_arena_bytes();
        plan.host = host_ledger->snapshot().live;
        auto snap = device_ledger->snapshot();
        // per-layer figures from the ledger (activations are tagged with their layer)
        for (const auto& r : rep.layers) {
            LayerPlan lp;
            lp.index = r.index;
            lp.path = r.path;
            lp.type = r.type;
            lp.label = r.label;
            auto it = snap.layers.find(r.index);
            if (it != snap.layers.end()) lp.activation_bytes = it->second.live;
            lp.parameter_bytes = static_cast<std::size_t>(r.params) * dtype_size(plan.strategy.compute_dtype);
            const LayerSpec* ls = find_spec(req.spec.layers, r.path);
            lp.forward_flops = layer_flops(r, ls) * static_cast<double>(plan.strategy.micro_batch);
            plan.layers.push_back(lp);
        }
    }
    // the data loaders (host memory: the device's for the CPU)
    const std::int64_t per = shape_numel(req.spec.input_shape);
    const std::size_t loaders = loader_bytes(req.batch, req.train_samples, per) +
                                loader_bytes(plan.strategy.micro_batch, req.test_samples, per);
    if (!gpu)
        at(plan.device, MemCategory::data) += loaders;
    else
        at(plan.host, MemCategory::data) += loaders;
    plan.device_total = total(plan.device);
    plan.host_total = total(plan.host);
    plan.peak_phase = "setup: every buffer is allocated before the first step, so the peak holds from step 1";

    // checkpoint blocks and the arena
    auto blocks = checkpoint_blocks(req.spec);
    std::vector<bool> ck(blocks.size(), false);
    for (int b : plan.strategy.checkpoint_blocks) ck[static_cast<std::size_t>(b)] = true;
    for (auto& lp : plan.layers) {
        int top = std::stoi(lp.path.substr(0, lp.path.find('.')));
        for (std::size_t b = 0; b < blocks.size(); ++b)
            if (top >= blocks[b].first && top <= blocks[b].last) {
                lp.block = static_cast<int>(b);
                lp.checkpointed = ck[b];
            }
    }
    // cost model
    double fwd = 0, bwd = 0, rec = 0;
    for (const auto& lp : plan.layers) {
        if (lp.type == "residual") continue;
        fwd += lp.forward_flops;
        bwd += (lp.type == "conv2d" || lp.type == "linear") ? 2 * lp.forward_flops : lp.forward_flops;
        if (lp.checkpointed) rec += lp.forward_flops;
    }
    const double mb = static_cast<double>(plan.strategy.accumulate);
    plan.forward_flops = fwd * mb;
    plan.backward_flops = bwd * mb;
    plan.recompute_flops = rec * mb;
    const std::int64_t P = rep.total_params;
    if (plan.strategy.offload_optimizer)
        plan.offload_bytes = static_cast<double>(P) * 2.0 * static_cast<double>(dtype_size(plan.strategy.compute_dtype));
    const DeviceRates rt = rates_for(req.device);
    const double prec = plan.strategy.compute_dtype == DType::f32 ? 1.0 : rt.lowp_factor;
    const double per_micro_overhead = 2e-5 * static_cast<double>(plan.layers.size());
    auto seconds = [&](double f, double r, double off, double accum, double pf) {
        return (f + r) * pf / rt.flops + off / rt.host_link + per_micro_overhead * accum;
    };
    plan.predicted_step_seconds = seconds(plan.forward_flops + plan.backward_flops, plan.recompute_flops,
                                          plan.offload_bytes, mb, prec);
    const double base = seconds(plan.forward_flops + plan.backward_flops, 0, 0, 1, 1.0);
    plan.relative_step_time = base > 0 ? plan.predicted_step_seconds / base : 1.0;
    return plan;
}

PlanSearch search_plans(const PlanRequest& base, std::size_t budget) {
    PlanSearch out;
    out.budget = budget;
    std::vector<std::string> precisions = {"fp32", "bf16"};
    std::vector<std::string> checkpoints = {"none", "every:2", "all"};
    std::vector<std::int64_t> micro;
    for (std::int64_t d : {1, 2, 4, 8})
        if (base.batch % d == 0 && base.batch / d >= 1) micro.push_back(base.batch / d);
    for (const auto& prec : precisions)
        for (const auto& ckpt : checkpoints)
            for (std::int64_t m : micro)
                for (bool off : {false, true}) {
                    PlanRequest r = base;
                    r.strategy.precision = prec;
                    r.strategy.checkpoint = ckpt;
                    r.strategy.micro_batch = m == base.batch ? 0 : m;
                    r.strategy.accumulate = 1;
                    r.strategy.offload_optimizer = off;
                    PlanCandidate c;
                    c.strategy = r.strategy;
                    c.plan = predict_memory(r);
                    c.fits = c.plan.device_total <= budget;
                    if (!c.fits)
                        c.reason = "needs " + format_bytes(c.plan.device_total) + " > budget " + format_bytes(budget);
                    out.candidates.push_back(std::move(c));
                }
    std::stable_sort(out.candidates.begin(), out.candidates.end(), [](const PlanCandidate& a, const PlanCandidate& b) {
        if (a.fits != b.fits) return a.fits;
        if (a.fits) {
            if (a.plan.predicted_step_seconds != b.plan.predicted_step_seconds)
                return a.plan.predicted_step_seconds < b.plan.predicted_step_seconds;
            return a.plan.device_total < b.plan.device_total;
        }
        return a.plan.device_total < b.plan.device_total;
    });
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
        auto& c = out.candidates[i];
        if (!c.fits) continue;
        if (out.best < 0) {
            out.best = static_cast<int>(i);
            c.reason = "fits with the best predicted step time";
        } else {
            const auto& best = out.candidates[static_cast<std::size_t>(out.best)];
            char buf[160];
            std::snprintf(buf, sizeof buf, "fits, but predicted %.0f%% slower than the best",
                          100.0 * (c.plan.predicted_step_seconds / best.plan.predicted_step_seconds - 1.0));
            c.reason = buf;
        }
    }
    return out;
}

nlohmann::json plan_to_json(const MemoryPlan& p) {
    nlohmann::json j;
    nlohmann::json dev = nlohmann::json::object(), host = nlohmann::json::object();
    for (MemCategory c : all_categories()) {
        dev[category_name(c)] = at(p.device, c);
        host[category_name(c)] = at(p.host, c);
    }
    j["strategy"] = p.strategy.describe();
    j["micro_batch"] = p.strategy.micro_batch;
    j["accumulate"] = p.strategy.accumulate;
    j["checkpoint_blocks"] = p.strategy.checkpoint_blocks;
    j["device"] = dev;
    j["device_total"] = p.device_total;
    j["host"] = host;
    j["host_total"] = p.host_total;
    j["recompute_arena"] = p.recompute_arena;
    j["peak_phase"] = p.peak_phase;
    j["predicted_step_seconds"] = p.predicted_step_seconds;
    j["relative_step_time"] = p.relative_step_time;
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : p.layers)
        layers.push_back({{"index", l.index},
                          {"path", l.path},
                          {"type", l.type},
                          {"label", l.label},
                          {"block", l.block},
                          {"checkpointed", l.checkpointed},
                          {"activation_bytes", l.activation_bytes},
                          {"parameter_bytes", l.parameter_bytes},
                          {"forward_flops", l.forward_flops}});
    j["layers"] = layers;
    return j;
}


static std::size_t meminfo(const char* key) {
    std::ifstream f("/proc/meminfo");
    std::string k;
    std::size_t v = 0;
    std::string unit;
    while (f >> k >> v >> unit)
        if (k == key) return v * 1024;
    return 0;
}

static std::size_t gpu_bytes(const std::string& device, bool free) {
#ifdef HEADROOM_WITH_CUDA
    const int index = cuda_index_of(device);
    for (const auto& d : cuda_devices())
        if (d.index == index) return free ? d.free_bytes : d.total_bytes;
    const std::string why = cuda_unavailable_reason();
    throw InputError("device '" + device + "' is not available" + (why.empty() ? std::string() : ": " + why) +
                     "; see headroom devices, or use --device cpu");
#else
    (void)free;
    throw InputError("device '" + device + "': this build has no CUDA backend; use --device cpu");
#endif
}

std::size_t device_free_bytes(const std::string& device) {
    if (device.rfind("cuda", 0) == 0) return gpu_bytes(device, true);
    std::size_t v = meminfo("MemAvailable:");
    return v ? v : device_total_bytes(device);
}

std::size_t device_total_bytes(const std::string& device) {
    if (device.rfind("cuda", 0) == 0) return gpu_bytes(device, false);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::size_t parse_bytes(const std::string& text) {
    // number: from_chars reads the C locale's digits whatever LC_NUMERIC says (std::stod does not)
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    while (begin < end && *begin == ' ') ++begin;
    double v = 0;
    const auto [after, ec] = std::from_chars(begin, end, v);
    std::string unit(ec == std::errc() ? after : begin, end);
    unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char ch) { return std::tolower(ch); });
    static const std::map<std::string, double> units = {
        {"", 1},       {"b", 1},         {"k", 1024},  {"kib", 1024},       {"kb", 1e3},  {"m", 1048576},
        {"mib", 1048576}, {"mb", 1e6},   {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
        {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12}};
    auto it = units.find(unit);
    if (ec != std::errc() || it == units.end() || !std::isfinite(v) || !(v > 0))
        throw InputError(HR_MSG("plan.size_unreadable",
                                "cannot read the size '%1'; write it like 4GiB, 512MiB, 1.5GB or 4096 (bytes)"),
                         {text});
    // 2^60 bytes (1 EiB) is far beyond any device and keeps sums of sizes inside 64 bits
    constexpr double kMax = 1152921504606846976.0;
    const double bytes = std::floor(v * it->second);
    if (bytes > kMax)
        throw InputError(HR_MSG("plan.size_too_large", "the size '%1' is larger than 1 EiB; write a size such as 4GiB"),
                         {text});
    if (bytes < 1)
        throw InputError(HR_MSG("plan.size_too_small", "the size '%1' is less than one byte; write a size such as 512MiB"),
                         {text});
    return static_cast<std::size_t>(bytes);
}

}  // namespace hr
